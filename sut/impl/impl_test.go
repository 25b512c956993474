package impl

import (
	"bytes"
	"context"
	"math"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"

	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// TestFillsAreBoundedPerRequest: fills are a few bytes each on the wire, so
// one request could describe terabytes; the request is refused as an Error
// once its fills together pass MaxExpansion, spread over inputs or not,
// before any of the bytes are made. Within the bound the same fills are
// expanded and answered.
func TestFillsAreBoundedPerRequest(t *testing.T) {
	fill := &conformpb.Blob{Fill: &conformpb.Fill{Length: MaxBlob, Pattern: []byte{0xff}}} // a TooLarge prefix: the reader holds nothing
	over := int(MaxExpansion/MaxBlob + 1)
	fills := func(n int) []*conformpb.Blob { return slices.Repeat([]*conformpb.Blob{fill}, n) }
	tests := []struct {
		name string
		op   Op
		over int                            // fills that pass MaxExpansion together
		req  func(n int) *conformpb.Request // a request of n fills
	}{
		{"read_frames, one input", Handler(ReadFrames), over, func(n int) *conformpb.Request {
			return &conformpb.Request{Op: &conformpb.Request_ReadFrames{ReadFrames: &conformpb.ReadFrames{
				Inputs: []*conformpb.ReadInput{{Chunks: fills(n)}}}}}
		}},
		{"receive, an input per fill", Handler(Receive), over, func(n int) *conformpb.Request {
			op := &conformpb.Receive{}
			for range n {
				op.Inputs = append(op.Inputs, &conformpb.ReadInput{Chunks: fills(1)})
			}
			return &conformpb.Request{Op: &conformpb.Request_Receive{Receive: op}}
		}},
		// 1 MiB payloads: a frame's payload is bounded.
		{"write_frames, an input per fill", Handler(WriteFrames), MaxExpansion>>20 + 1, func(n int) *conformpb.Request {
			op := &conformpb.WriteFrames{}
			for range n {
				op.Inputs = append(op.Inputs, &conformpb.WriteInput{Payload: &conformpb.Blob{Fill: &conformpb.Fill{Length: 1 << 20, Pattern: []byte{1}}}})
			}
			return &conformpb.Request{Op: &conformpb.Request_WriteFrames{WriteFrames: op}}
		}},
		{"receive_connections, a segment per fill", Handler(ReceiveConnections), over, func(n int) *conformpb.Request {
			in := &conformpb.ConnectionsInput{}
			for i := range n {
				in.Segments = append(in.Segments, &conformpb.ConnectionSegment{Connection: uint64(i), Bytes: fill})
			}
			return &conformpb.Request{Op: &conformpb.Request_ReceiveConnections{ReceiveConnections: &conformpb.ReceiveConnections{Inputs: []*conformpb.ConnectionsInput{in}}}}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := tt.req(tt.over)
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			resp := reference(tt.op).Handle(context.Background(), req)
			runtime.ReadMemStats(&after)
			if e := resp.GetError(); e == nil || !strings.Contains(e.GetMessage(), "expand beyond") {
				t.Fatalf("got %.300v, want an Error naming the expansion bound", resp)
			}
			if made := after.TotalAlloc - before.TotalAlloc; made > 16<<20 {
				t.Errorf("%d MiB allocated before the request was refused, want none of its fills made", made>>20)
			}
			// Within the bound, the same fills are expanded and answered.
			if resp := reference(tt.op).Handle(context.Background(), tt.req(2)); resp.GetError() != nil {
				t.Fatalf("two fills refused: %v", resp.GetError())
			}
		})
	}
}

// TestCheckFillsSums: the bound is on the sum of a request's fills, up to
// and including MaxExpansion, and a sum that wraps past 2^64 is refused
// rather than read as a few bytes.
func TestCheckFillsSums(t *testing.T) {
	for _, tt := range []struct {
		name    string
		lengths []uint64
		refused bool
	}{
		{"no fills", nil, false},
		{"exactly the bound", []uint64{MaxExpansion / 2, MaxExpansion / 2}, false},
		{"a byte over", []uint64{MaxExpansion / 2, MaxExpansion/2 + 1}, true},
		{"a sum that wraps", []uint64{2, math.MaxUint64}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var blobs []*conformpb.Blob
			for _, n := range tt.lengths {
				blobs = append(blobs, &conformpb.Blob{Fill: &conformpb.Fill{Length: n, Pattern: []byte{1}}})
			}
			if err := checkFills(slices.Values(blobs)); (err != nil) != tt.refused {
				t.Errorf("checkFills(%v) = %v, want refused %v", tt.lengths, err, tt.refused)
			}
		})
	}
}

// reference returns the reference answering ops, the ops a test sends; the
// suites' descriptors give the full set (package suites).
func reference(ops ...Op) *Impl {
	im := Reference()
	im.Ops = map[protoreflect.FullName]OpHandler{}
	for _, op := range ops {
		im.Ops[op.Message] = op.Handle
	}
	return im
}

// TestHandleDispatch: Handle answers each op through Ops, in the Response
// field of the op's name; an op with no handler, a request with no op and an
// extension whose type is unknown are Unimplemented; an extension op is
// unpacked, answered and packed again; a handler answering the wrong message
// is a conform bug, reported as Error.
func TestHandleDispatch(t *testing.T) {
	wrong := Op{Message: "conform.v1.Decode", Handle: func(context.Context, *Impl, proto.Message) (proto.Message, error) {
		return &conformpb.EncodeResult{}, nil
	}}
	echo := Op{Message: "google.protobuf.StringValue", Handle: func(_ context.Context, _ *Impl, op proto.Message) (proto.Message, error) {
		return wrapperspb.String("echo " + op.(*wrapperspb.StringValue).GetValue()), nil
	}}
	im := reference(Handler(ReadFrames), wrong, echo)
	ctx := context.Background()

	if r := im.Handle(ctx, &conformpb.Request{Op: &conformpb.Request_ReadFrames{ReadFrames: &conformpb.ReadFrames{}}}); r.GetReadFrames() == nil {
		t.Errorf("readFrames answered %v", r)
	}
	if r := im.Handle(ctx, &conformpb.Request{Op: &conformpb.Request_Track{Track: &conformpb.Track{}}}); r.GetUnimplemented() == nil {
		t.Errorf("an op with no handler answered %v", r)
	}
	if r := im.Handle(ctx, &conformpb.Request{}); r.GetUnimplemented() == nil {
		t.Errorf("a request with no op answered %v", r)
	}
	if r := im.Handle(ctx, &conformpb.Request{Op: &conformpb.Request_Decode{Decode: &conformpb.Decode{}}}); r.GetError() == nil {
		t.Errorf("a handler answering another op's result gave %v", r)
	}
	packed, _ := anypb.New(wrapperspb.String("x"))
	r := im.Handle(ctx, &conformpb.Request{Op: &conformpb.Request_Extension{Extension: packed}})
	var got wrapperspb.StringValue
	if r.GetExtension() == nil || r.GetExtension().UnmarshalTo(&got) != nil || got.GetValue() != "echo x" {
		t.Errorf("the extension op answered %v", r)
	}
	unknown := &anypb.Any{TypeUrl: "type.googleapis.com/no.such.Op"}
	if r := im.Handle(ctx, &conformpb.Request{Op: &conformpb.Request_Extension{Extension: unknown}}); r.GetUnimplemented() == nil {
		t.Errorf("an extension of an unknown type answered %v", r)
	}
}

// TestVersionNamesTheBuild: the version always traces a record to its code
// or its binary — a module version, a commit, or the executable's digest —
// never a bare "devel" that names nothing.
func TestVersionNamesTheBuild(t *testing.T) {
	v := Version()
	if !regexp.MustCompile(`^(v\d+\.\d+\.\d+\S*|devel\+[0-9a-f]{12}(-dirty)?|devel\+sha256:[0-9a-f]{12}|devel\+build:[0-9A-Za-z_-]{12})$`).MatchString(v) {
		t.Errorf("Version() = %q, names no module version, commit or digest", v)
	}
	if again := Version(); again != v {
		t.Errorf("Version() changed between calls: %q, %q", v, again)
	}
}

// TestContentIDIsTheGoBuildID: on Linux the version of an unstamped build
// comes from the Go build ID the go command wrote, as "go tool buildid"
// reads it.
func TestContentIDIsTheGoBuildID(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the build ID is read from the ELF note")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("go", "tool", "buildid", exe).Output()
	if err != nil {
		t.Skipf("go tool buildid: %v", err)
	}
	id := strings.TrimSpace(string(out))
	want := id[strings.LastIndexByte(id, '/')+1:]
	if got := contentID(); got != want {
		t.Errorf("contentID() = %q, want %q (of build ID %q)", got, want, id)
	}
}

// TestExpand: a fill is its pattern repeated and cut at its length, which
// need not be a whole number of patterns; data is given back as it is; a
// fill past MaxBlob or with no pattern is refused.
func TestExpand(t *testing.T) {
	tests := []struct {
		name    string
		blob    *conformpb.Blob
		want    []byte
		wantErr string
	}{
		{"data", &conformpb.Blob{Data: []byte{1, 2, 3}}, []byte{1, 2, 3}, ""},
		{"one-byte pattern", &conformpb.Blob{Fill: &conformpb.Fill{Length: 5, Pattern: []byte{0xa5}}}, []byte{0xa5, 0xa5, 0xa5, 0xa5, 0xa5}, ""},
		{"cut inside a pattern", &conformpb.Blob{Fill: &conformpb.Fill{Length: 7, Pattern: []byte{1, 2, 3}}}, []byte{1, 2, 3, 1, 2, 3, 1}, ""},
		{"shorter than its pattern", &conformpb.Blob{Fill: &conformpb.Fill{Length: 2, Pattern: []byte{1, 2, 3}}}, []byte{1, 2}, ""},
		{"empty", &conformpb.Blob{Fill: &conformpb.Fill{Length: 0}}, []byte{}, ""},
		{"no pattern", &conformpb.Blob{Fill: &conformpb.Fill{Length: 4}}, nil, "empty pattern"},
		{"past the limit", &conformpb.Blob{Fill: &conformpb.Fill{Length: MaxBlob + 1, Pattern: []byte{0}}}, nil, "exceeds"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Expand(tt.blob)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Expand = %x, %v; want an error saying %q", got, err, tt.wantErr)
				}
				return
			}
			if err != nil || !bytes.Equal(got, tt.want) {
				t.Fatalf("Expand = %x, %v; want %x", got, err, tt.want)
			}
		})
	}
	// A whole MaxBlob of one byte, the size the catalogue's largest inputs
	// describe.
	big, err := Expand(&conformpb.Blob{Fill: &conformpb.Fill{Length: MaxBlob, Pattern: []byte{0xff, 0}}})
	if err != nil || len(big) != MaxBlob || big[MaxBlob-1] != 0 || big[MaxBlob-2] != 0xff {
		t.Fatalf("a MaxBlob fill: %d bytes ending %x, %v", len(big), big[max(0, len(big)-2):], err)
	}
}

// BenchmarkExpand makes the catalogue's largest fill: MaxBlob bytes of a
// one-byte pattern.
func BenchmarkExpand(b *testing.B) {
	blob := &conformpb.Blob{Fill: &conformpb.Fill{Length: MaxBlob, Pattern: []byte{0xa5}}}
	b.SetBytes(MaxBlob)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Expand(blob); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCheckFills measures the expansion check on a read_frames
// request of 10 inputs of 20 small chunks, beside the op it guards.
func BenchmarkCheckFills(b *testing.B) {
	op := &conformpb.ReadFrames{}
	for range 10 {
		in := &conformpb.ReadInput{}
		for range 20 {
			in.Chunks = append(in.Chunks, &conformpb.Blob{Data: []byte{0, 0, 0, 1, 7}})
		}
		op.Inputs = append(op.Inputs, in)
	}
	b.Run("check", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := checkFills(chunks(op.Inputs)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("read_frames", func(b *testing.B) {
		b.ReportAllocs()
		im := Reference()
		for b.Loop() {
			if _, err := ReadFrames(context.Background(), im, op); err != nil {
				b.Fatal(err)
			}
		}
	})
}
