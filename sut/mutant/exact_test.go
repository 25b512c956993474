package mutant

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"
	"pgregory.net/rapid"

	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	messagepb "github.com/conform-suite/conform/proto/ranvier/message/v1"
	"github.com/conform-suite/conform/ref/doppler"
	"github.com/conform-suite/conform/ref/streams"
	"github.com/conform-suite/conform/ref/tlv"
	"github.com/conform-suite/conform/ref/wire"
	"github.com/conform-suite/conform/sut/impl"
)

// The tests below make "a mutant differs from the reference in exactly its
// named behaviour" checkable for the mutants whose bug lives inside a part:
// each draws inputs, says for each mutant when its bug can show, and
// requires the mutant to answer as the reference everywhere else.

// mustLookup returns the implementation of the mutant called name.
func mustLookup(t interface{ Fatalf(string, ...any) }, name string) *impl.Impl {
	var m Mutant
	ok := false
	for _, list := range [][]Mutant{Wire(), Streams(), TLV(), Doppler(), Live(), Graph()} {
		for _, c := range list {
			if c.Name == name {
				m, ok = c, true
			}
		}
	}
	if !ok {
		t.Fatalf("no mutant %q", name)
	}
	return m.Apply(impl.Reference())
}

// stream is a drawn byte stream of frames, its cuts into reads, and where
// its bug triggers lie.
type stream struct {
	b      []byte
	cuts   []int // ascending read boundaries inside b
	ended  bool  // the stream ends after b
	starts []int // where each frame's prefix starts, the last maybe cut short

	zeroLength, oversize, ceilingClaim bool
	incomplete                         bool // a frame left unfinished at the end
}

// drawStream draws a few frames, sometimes one of zero length, sometimes a
// claim near or above the ceiling, sometimes a truncated tail.
func drawStream(t *rapid.T) stream {
	var s stream
	for i := range rapid.IntRange(0, 5).Draw(t, "frames") {
		s.starts = append(s.starts, len(s.b))
		var claim uint64
		switch rapid.IntRange(0, 9).Draw(t, fmt.Sprint("kind", i)) {
		case 0:
			s.zeroLength = true
		case 1:
			claim = wire.MaxPayload - 1 + rapid.Uint64Range(0, 3).Draw(t, "near")
			s.ceilingClaim = true
			s.oversize = s.oversize || claim > wire.MaxPayload
			s.incomplete = true // what follows is its payload
			s.b = binary.BigEndian.AppendUint32(s.b, uint32(claim))
			s.b = append(s.b, rapid.SliceOfN(rapid.Byte(), 0, 12).Draw(t, "after")...)
			continue
		default:
			claim = uint64(rapid.IntRange(1, 12).Draw(t, "len"))
		}
		s.b = binary.BigEndian.AppendUint32(s.b, uint32(claim))
		s.b = append(s.b, bytes.Repeat([]byte{byte(i + 1)}, int(claim))...)
	}
	if rapid.Bool().Draw(t, "tail") {
		s.starts = append(s.starts, len(s.b))
		tail := binary.BigEndian.AppendUint32(nil, 9)
		tail = append(tail, bytes.Repeat([]byte{0xEE}, 9)...)
		s.b = append(s.b, tail[:rapid.IntRange(1, len(tail)-1).Draw(t, "cut")]...)
		s.incomplete = true
	}
	for _, c := range rapid.SliceOfN(rapid.IntRange(1, max(1, len(s.b))), 0, 6).Draw(t, "cuts") {
		if c < len(s.b) && !slices.Contains(s.cuts, c) {
			s.cuts = append(s.cuts, c)
		}
	}
	slices.Sort(s.cuts)
	s.ended = rapid.Bool().Draw(t, "ended")
	return s
}

// prefixCut reports whether a read ends one to three bytes into a frame's
// prefix: the only place a reader that pads a short prefix can show.
func (s stream) prefixCut() bool {
	for _, c := range append(slices.Clone(s.cuts), len(s.b)) {
		for _, st := range s.starts {
			if c-st >= 1 && c-st < wire.PrefixLen {
				return true
			}
		}
	}
	return false
}

// read returns what a fresh reader of im makes of s: each read's frames,
// the error that stopped it, and how it ends.
func (s stream) read(im *impl.Impl) []string {
	r := im.NewReader()
	var log []string
	drain := func() bool {
		for {
			p, ok, err := r.Next()
			switch {
			case err != nil:
				log = append(log, "error "+err.Error())
				return false
			case !ok:
				log = append(log, fmt.Sprintf("waiting with %d", r.Buffered()))
				return true
			}
			log = append(log, fmt.Sprintf("frame %x", p))
		}
	}
	prev := 0
	for _, c := range append(slices.Clone(s.cuts), len(s.b)) {
		r.Write(s.b[prev:c])
		prev = c
		if !drain() {
			return log
		}
	}
	if s.ended {
		if err := r.End(); err != nil {
			log = append(log, "end "+err.Error())
		}
		drain()
	}
	return log
}

// TestReaderMutantsExact: each frame-reader mutant reads every stream as the
// reference does unless the stream holds what its bug is about.
func TestReaderMutantsExact(t *testing.T) {
	triggers := map[string]func(stream) bool{
		"zero-length-is-end":       func(s stream) bool { return s.zeroLength },
		"resync-after-too-large":   func(s stream) bool { return s.oversize },
		"truncated-tail-delivered": func(s stream) bool { return s.incomplete && s.ended },
		"short-prefix-zero-padded": stream.prefixCut,
		"no-ceiling":               func(s stream) bool { return s.oversize },
		"ceiling-off-by-one":       func(s stream) bool { return s.ceilingClaim },
	}
	ref := impl.Reference()
	for name, triggered := range triggers {
		im := mustLookup(t, name)
		t.Run(name, func(t *testing.T) {
			rapid.Check(t, func(t *rapid.T) {
				s := drawStream(t)
				if triggered(s) {
					t.Skip("the bug's input")
				}
				if diff := cmp.Diff(s.read(ref), s.read(im)); diff != "" {
					t.Fatalf("% x cut at %v, ended %v (-reference +mutant):\n%s", s.b, s.cuts, s.ended, diff)
				}
			})
		})
	}
}

// drawTree draws a TLV tree of known types with small payloads, up to
// depth levels deep.
func drawTree(t *rapid.T, depth int) *impl.Tree {
	types := []uint8{0x01, 0x02, 0x06, 0x07, 0x0B, 0x0F}
	tr := &impl.Tree{Type: rapid.SampledFrom(types).Draw(t, "type")}
	if depth > 0 && rapid.Bool().Draw(t, "pl") {
		tr.Opt = uint8(tlv.OptPL)
		for range rapid.IntRange(0, 3).Draw(t, "kids") {
			tr.Children = append(tr.Children, drawTree(t, depth-1))
		}
		return tr
	}
	tr.Payload = rapid.SliceOfN(rapid.Byte(), 0, 16).Draw(t, "payload")
	return tr
}

// TestTLVDecoderMutantsExact: each decoder mutant built from the reference
// decoder decodes every frame of well-formed TLVs, with or without a
// trailer, in one segment, as the reference does unless the frame holds
// what its bug is about.
func TestTLVDecoderMutantsExact(t *testing.T) {
	type frame struct {
		b       []byte
		ts, crc bool
		kind    tlv.CRC
	}
	triggers := map[string]func(frame) bool{
		"header-assumed-contiguous":     func(frame) bool { return false }, // one segment
		"ll-ignored":                    func(frame) bool { return false }, // short payloads, minimal headers
		"crc-not-checked":               func(frame) bool { return false }, // every check is right
		"crc-over-payload-only":         func(f frame) bool { return f.crc },
		"crc32c-computed-as-crc32":      func(f frame) bool { return f.kind == tlv.CRC32C },
		"crc64xz-computed-as-crc64-iso": func(f frame) bool { return f.kind == tlv.CRC64XZ },
		"reserved-opt-bits-ignored":     func(frame) bool { return false },
		"type-zero-accepted":            func(frame) bool { return false },
		"crc-code-3-accepted":           func(frame) bool { return false },
		"short-payload-clamped":         func(frame) bool { return false },
		"unknown-types-opaque":          func(frame) bool { return false }, // known types only
		"trailer-attached-at-rest":      func(f frame) bool { return f.ts || f.crc },
		"timestamp-big-endian":          func(f frame) bool { return f.ts },
		"no-depth-bound":                func(frame) bool { return false }, // shallow trees
		"depth-bound-off-by-one":        func(frame) bool { return false },
	}
	ref := impl.Reference()
	for name, triggered := range triggers {
		im := mustLookup(t, name)
		t.Run(name, func(t *testing.T) {
			rapid.Check(t, func(t *rapid.T) {
				tree := drawTree(t, 3)
				n, err := impl.NodeOf(tree)
				if err != nil {
					t.Fatal(err)
				}
				var f frame
				e := tlv.Egress{TSWidth: rapid.SampledFrom([]int{0, 0, 4, 8}).Draw(t, "ts"), CRC: tlv.CRC(rapid.IntRange(0, 2).Draw(t, "crc"))}
				if e.TSWidth > 0 {
					e.Clock = func() time.Time { return time.Unix(0, 0x1122334455667788) }
				}
				f.ts, f.crc, f.kind = e.TSWidth > 0, e.CRC != tlv.CRCNone, e.CRC
				if f.b, err = e.AppendTo(nil, n); err != nil {
					t.Fatal(err)
				}
				if triggered(f) {
					t.Skip("the bug's input")
				}
				type decoded struct {
					Tree    *impl.Tree
					Trailer tlv.Trailer
					Err     string
				}
				decode := func(im *impl.Impl) decoded {
					tr, trailer, err := im.TLV.Decode(tlv.NewRope(f.b), im.TLV.MaxDepth)
					d := decoded{Tree: tr, Trailer: trailer}
					if err != nil {
						d.Err = err.Error()
					}
					return d
				}
				if diff := cmp.Diff(decode(ref), decode(im)); diff != "" {
					t.Fatalf("%s (-reference +mutant):\n%s", n, diff)
				}
			})
		})
	}
}

// TestTrackerMutantsExact: each tracker mutant built with TrackerOptions
// counts as the reference does until a sample is what its bug is about.
func TestTrackerMutantsExact(t *testing.T) {
	type arrival struct {
		conn streams.ConnID
		s    streams.Sample
	}
	// step is how far an arrival moves its pair's high-water mark forward,
	// late how far behind the mark it arrives.
	triggers := map[string]func(step, late uint64, a arrival) bool{
		"window-256":              func(_, late uint64, _ arrival) bool { return late >= 63 },
		"window-63":               func(_, late uint64, _ arrival) bool { return late >= 63 },
		"sequence-zero-tracked":   func(_, _ uint64, a arrival) bool { return a.s.Sequence == 0 && a.s.StreamRef != 0 },
		"stream-ref-zero-tracked": func(_, _ uint64, a arrival) bool { return a.s.StreamRef == 0 && a.s.Sequence != 0 },
		"history-kept-past-64":    func(step, _ uint64, _ arrival) bool { return step >= 64 },
	}
	ref := impl.Reference()
	for name, triggered := range triggers {
		im := mustLookup(t, name)
		t.Run(name, func(t *testing.T) {
			rapid.Check(t, func(t *rapid.T) {
				want, got := ref.NewTracker("s"), im.NewTracker("s")
				highest := map[[2]uint64]uint64{}
				for i := range rapid.IntRange(1, 200).Draw(t, "n") {
					a := arrival{conn: streams.ConnID(rapid.IntRange(0, 1).Draw(t, "conn")),
						s: streams.Sample{StreamRef: uint32(rapid.IntRange(0, 2).Draw(t, "ref")), MonotonicNs: uint64(i)}}
					k := [2]uint64{uint64(a.conn), uint64(a.s.StreamRef)}
					h := highest[k]
					ahead := uint64(rapid.IntRange(0, 3).Draw(t, "ahead"))
					if rapid.IntRange(0, 7).Draw(t, "leap") == 0 {
						ahead = uint64(rapid.IntRange(60, 70).Draw(t, "far"))
					}
					a.s.Sequence = h + ahead
					var late uint64
					if h > 0 && rapid.IntRange(0, 3).Draw(t, "late") == 0 {
						late = rapid.Uint64Range(0, min(h-1, 70)).Draw(t, "behind")
						a.s.Sequence = h - late
					}
					if rapid.IntRange(0, 9).Draw(t, "zero") == 0 {
						a.s.Sequence = 0
					}
					var step uint64
					if h > 0 && a.s.Sequence > h {
						step = a.s.Sequence - h
					}
					if triggered(step, late, a) {
						break // the bug's input: from here on the two may differ
					}
					if o, w := got.Observe(a.conn, a.s), want.Observe(a.conn, a.s); o != w {
						t.Fatalf("arrival %d %+v: %v, reference %v", i, a, o, w)
					}
					if a.s.Sequence > h {
						highest[k] = a.s.Sequence
					}
				}
				if diff := cmp.Diff(want.Counters(), got.Counters()); diff != "" {
					t.Fatalf("counters (-reference +mutant):\n%s", diff)
				}
			})
		})
	}
}

// TestChunkerMutantsExact: each chunker mutant built with a doppler.Chunker
// cuts every frame as the reference does unless the frame is what its bug
// is about, and its sockets' senders cut with it.
func TestChunkerMutantsExact(t *testing.T) {
	triggers := map[string]func(payload, maxPayload, elem int) bool{
		"chunks-split-mid-element": func(payload, maxPayload, elem int) bool {
			room := maxPayload - doppler.HeaderSize - doppler.ChunkBlockSize
			return doppler.HeaderSize+payload > maxPayload && room >= elem && room%elem != 0
		},
		"chunks-at-max-payload": func(payload, maxPayload, _ int) bool { return doppler.HeaderSize+payload == maxPayload },
	}
	ref := impl.Reference()
	for name, triggered := range triggers {
		im := mustLookup(t, name)
		t.Run(name, func(t *testing.T) {
			rapid.Check(t, func(t *rapid.T) {
				typ := rapid.SampledFrom(doppler.Types()).Draw(t, "type")
				n := rapid.IntRange(0, 40).Draw(t, "elements")
				maxPayload := rapid.IntRange(doppler.HeaderSize, doppler.HeaderSize+doppler.ChunkBlockSize+200).Draw(t, "maxPayload")
				f, err := doppler.NewFrame(typ, doppler.LittleEndian, make([]byte, n*typ.ElemSize()))
				if err != nil {
					t.Fatal(err)
				}
				if triggered(len(f.Payload), maxPayload, typ.ElemSize()) {
					t.Skip("the bug's input")
				}
				want, werr := ref.Doppler.Chunk(f, maxPayload, doppler.LittleEndian)
				got, gerr := im.Doppler.Chunk(f, maxPayload, doppler.LittleEndian)
				if fmt.Sprint(werr) != fmt.Sprint(gerr) || !slices.EqualFunc(want, got, bytes.Equal) {
					t.Fatalf("%v × %d at %d: %d messages, %v; reference %d, %v", typ, n, maxPayload, len(got), gerr, len(want), werr)
				}
				sent, serr := im.Doppler.NewSender(doppler.LittleEndian, maxPayload).Publish(f)
				if fmt.Sprint(serr) != fmt.Sprint(gerr) || !slices.EqualFunc(sent, got, bytes.Equal) {
					t.Fatalf("the sender cut %d messages, %v; its Chunk %d, %v", len(sent), serr, len(got), gerr)
				}
			})
		})
	}
}

// TestExplicitEmptyMutantExact: explicit-empty-string-present reads every
// announcement a proto3 marshaller writes, which never carries an empty
// string, as the reference does, and differs on one that writes an empty
// string explicitly.
func TestExplicitEmptyMutantExact(t *testing.T) {
	const name = "explicit-empty-string-present"
	im := mustLookup(t, name)
	op := impl.Handler(impl.ReadAnnouncements)
	read := func(im *impl.Impl, b []byte) *conformpb.ReadAnnouncementsResult {
		in := &conformpb.ReadAnnouncements{Inputs: []*conformpb.ReadAnnouncementInput{{StreamInfo: b}}}
		h := op.Handle
		if im.Ops[op.Message] != nil {
			h = im.Ops[op.Message]
		}
		res, err := h(context.Background(), im, in)
		if err != nil {
			t.Fatal(err)
		}
		return res.(*conformpb.ReadAnnouncementsResult)
	}
	ref := impl.Reference()
	rapid.Check(t, func(rt *rapid.T) {
		s := func(label string) string { return rapid.SampledFrom([]string{"", "a", "gaze"}).Draw(rt, label) }
		m := &messagepb.StreamInfo{Name: s("name"), Node: s("node"), SourceClockDomain: s("domain"),
			HostId: s("host"), BootId: s("boot"), StreamRef: uint32(rapid.IntRange(0, 3).Draw(rt, "ref"))}
		if rapid.Bool().Draw(rt, "schema") {
			m.Schema = &messagepb.SchemaInfo{SchemaId: s("schema_id")}
		}
		if rapid.Bool().Draw(rt, "authorisation") {
			m.Authorisation = &messagepb.Authorisation{Authority: s("authority"), Reference: s("reference")}
		}
		b, err := proto.Marshal(m)
		if err != nil {
			rt.Fatal(err)
		}
		if diff := cmp.Diff(read(ref, b), read(im, b), protocmp.Transform()); diff != "" {
			rt.Fatalf("%v (-reference +mutant):\n%s", m, diff)
		}
	})
	explicit := []byte{0x0a, 0x04, 'g', 'a', 'z', 'e', 0x12, 0x00, 0x50, 0x03}
	if cmp.Equal(read(ref, explicit), read(im, explicit), protocmp.Transform()) {
		t.Errorf("%s reads an explicit empty node as the reference does", name)
	}
}

// TestDefaultPolicyMutantExact: default-policy-drop-newest runs every
// script that names its policy as the reference does, and differs on one
// that names none.
func TestDefaultPolicyMutantExact(t *testing.T) {
	const name = "default-policy-drop-newest"
	im := mustLookup(t, name)
	op := impl.Handler(impl.DriveQueue)
	drive := func(im *impl.Impl, p conformpb.QueuePolicy) *conformpb.DriveQueueResult {
		d := uint32(3)
		in := &conformpb.QueueInput{Name: "s", Depth: &d, Policy: p}
		for seq := uint64(1); seq <= 6; seq++ {
			in.Steps = append(in.Steps, &conformpb.QueueStep{Step: &conformpb.QueueStep_Push{Push: &conformpb.Arrival{Connection: 1, StreamRef: 1, Sequence: seq}}})
		}
		in.Steps = append(in.Steps, &conformpb.QueueStep{Step: &conformpb.QueueStep_Pop{Pop: 6}})
		h := op.Handle
		if im.Ops[op.Message] != nil {
			h = im.Ops[op.Message]
		}
		res, err := h(context.Background(), im, &conformpb.DriveQueue{Inputs: []*conformpb.QueueInput{in}})
		if err != nil {
			t.Fatal(err)
		}
		return res.(*conformpb.DriveQueueResult)
	}
	ref := impl.Reference()
	for p := range conformpb.QueuePolicy_name {
		p := conformpb.QueuePolicy(p)
		same := cmp.Equal(drive(ref, p), drive(im, p), protocmp.Transform())
		if want := p != conformpb.QueuePolicy_QUEUE_POLICY_DEFAULT; same != want {
			t.Errorf("%s, policy %v: answers as the reference: %v, want %v", name, p, same, want)
		}
	}
}
