package evidence

import (
	"math"
	"strings"
	"testing"

	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/proto/conform/v1/meaning"
	"github.com/conform-suite/conform/reports"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// readView is what a case may compare when it does not compare messages:
// a Go struct whose type name must never reach the evidence.
type readView struct {
	Frames  []string
	End     string
	Claimed uint64 `json:"claimed"`
	Ignored string `json:"-"`
	secret  int
}

func ptr[T any](v T) *T { return &v }

func TestDiff(t *testing.T) {
	data := func(b ...byte) *conformpb.Data { return &conformpb.Data{Length: uint64(len(b)), Bytes: b} }
	tests := []struct {
		name      string
		want, got any
		diffs     []string // Difference.String of each
	}{
		{
			name:  "a field a shim omits is named although it renders alike elsewhere",
			want:  data(1, 2),
			got:   &conformpb.Data{Bytes: []byte{1, 2}},
			diffs: []string{"length: expected 2, got (absent)"},
		},
		{
			name:  "enums by value name, repeated messages by index, JSON names",
			want:  &conformpb.ReadOutput{End: conformpb.ReadEnd_READ_END_TRUNCATED},
			got:   &conformpb.ReadOutput{End: conformpb.ReadEnd_READ_END_CLOSED, Yields: []*conformpb.ChunkYield{{Frames: []*conformpb.Data{data(1, 2)}}}},
			diffs: []string{`yields: expected (absent), got [{"frames":[{"length":2,"bytes":"01 02"}]}]`, "end: expected READ_END_TRUNCATED, got READ_END_CLOSED"},
		},
		{
			name:  "nested lists",
			want:  &conformpb.ReadOutput{Yields: []*conformpb.ChunkYield{{}, {Frames: []*conformpb.Data{data(1)}}}},
			got:   &conformpb.ReadOutput{Yields: []*conformpb.ChunkYield{{}, {Frames: []*conformpb.Data{data(1), data(9)}}}},
			diffs: []string{`yields[1].frames[1]: expected (absent), got {"length":1,"bytes":"09"}`},
		},
		{
			name:  "bytes in a message, with the first differing offset",
			want:  data(0, 0, 0, 5, 1),
			got:   &conformpb.Data{Length: 5, Bytes: []byte{0, 0, 0, 4, 1}},
			diffs: []string{"bytes: expected 00 00 00 05 01, got 00 00 00 04 01 (first difference at byte 3)"},
		},
		{
			name:  "an optional field present and zero differs from absent",
			want:  &conformpb.QueueInput{Name: "q", Depth: ptr(uint32(0))},
			got:   &conformpb.QueueInput{Name: "q"},
			diffs: []string{"depth: expected 0, got (absent)"},
		},
		{
			name:  "strings quoted as JSON",
			want:  &conformpb.AnnouncementRead{Name: ptr("gaze")},
			got:   &conformpb.AnnouncementRead{Name: ptr("gaze\n")},
			diffs: []string{`name: expected "gaze", got "gaze\n"`},
		},
		{
			name:  "Go structs by lower-cased field names, never their type",
			want:  readView{End: "truncated", secret: 1, Ignored: "a"},
			got:   readView{Frames: []string{"01 02"}, End: "closed", Claimed: 7, Ignored: "b"},
			diffs: []string{`frames[0]: expected (absent), got "01 02"`, `end: expected "truncated", got "closed"`, "claimed: expected 0, got 7"},
		},
		{
			name:  "raw bytes",
			want:  []byte{0, 0, 0, 5},
			got:   []byte{0, 0, 0, 5, 1},
			diffs: []string{"value: expected 00 00 00 05, got 00 00 00 05 01 (first difference at byte 4)"},
		},
		{
			name:  "maps by key",
			want:  map[string]int{"a": 1, "b": 2},
			got:   map[string]int{"b": 3, "c": 4},
			diffs: []string{"[a]: expected 1, got (absent)", "[b]: expected 2, got 3", "[c]: expected (absent), got 4"},
		},
		{
			name:  "messages inside Go values",
			want:  []*conformpb.Data{data(1)},
			got:   []*conformpb.Data{data(2)},
			diffs: []string{"[0].bytes: expected 01, got 02 (first difference at byte 0)"},
		},
		{
			name:  "different types differ as wholes",
			want:  "5",
			got:   5,
			diffs: []string{`value: expected "5", got 5`},
		},
		{name: "equal messages", want: data(1, 2), got: data(1, 2)},
		{name: "an empty slice equals none", want: readView{}, got: readView{Frames: []string{}}},
		{name: "NaN equals NaN", want: math.NaN(), got: math.NaN()},
		{name: "nil equals nil", want: nil, got: nil},
		{name: "a nil message equals an empty one", want: (*conformpb.Data)(nil), got: &conformpb.Data{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ds := Diff(tt.want, tt.got)
			var got []string
			for _, d := range ds {
				got = append(got, d.String())
			}
			if strings.Join(got, "\n") != strings.Join(tt.diffs, "\n") {
				t.Errorf("differences:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.diffs, "\n"))
			}
			if Equal(tt.want, tt.got) != (len(tt.diffs) == 0) {
				t.Errorf("Equal disagrees with Diff")
			}
		})
	}
}

func TestCompare(t *testing.T) {
	want := &conformpb.ReadOutput{End: conformpb.ReadEnd_READ_END_TRUNCATED}
	got := &conformpb.ReadOutput{End: conformpb.ReadEnd_READ_END_CLOSED}
	e, differ := Compare("a vector one byte per read", want, got)
	if !differ {
		t.Fatal("no difference")
	}
	for field, want := range map[string]string{
		"message":  "a vector one byte per read",
		"expected": `{"end":"READ_END_TRUNCATED"}`,
		"got":      `{"end":"READ_END_CLOSED"}`,
		"diff":     "- end: READ_END_TRUNCATED\n+ end: READ_END_CLOSED\n",
	} {
		v := map[string]string{"message": e.Message, "expected": e.Expected, "got": e.Got, "diff": e.Diff}[field]
		if v != want {
			t.Errorf("%s = %q, want %q", field, v, want)
		}
	}
	if _, differ := Compare("x", want, proto.Clone(want)); differ {
		t.Error("equal messages differ")
	}
	// A Go struct renders with the names the diff uses, no Go type.
	e, _ = Compare("view", readView{End: "a"}, readView{End: "b"})
	for _, s := range []string{e.Expected, e.Got, e.Diff} {
		if strings.Contains(s, "readView") || strings.Contains(s, "evidence.") || strings.Contains(s, "secret") {
			t.Errorf("Go terms in %q", s)
		}
	}
	if want := `{"frames":[],"end":"a","claimed":0}`; e.Expected != want {
		t.Errorf("expected renders as %s, want %s", e.Expected, want)
	}
}

func TestBytesWindow(t *testing.T) {
	w := make([]byte, 4096)
	g := append([]byte(nil), w...)
	g[3000] = 0xff
	ds := Diff(w, g)
	if len(ds) != 1 || ds[0].Offset != 3000 {
		t.Fatalf("%+v", ds)
	}
	if !strings.Contains(ds[0].Got, "ff") || !strings.Contains(ds[0].Got, "of 4096") || len(ds[0].Got) > 200 {
		t.Errorf("the window around the difference: %q", ds[0].Got)
	}
}

func TestDifferencesBounded(t *testing.T) {
	var w, g []int
	for i := range 1000 {
		w = append(w, i)
		g = append(g, -i-1)
	}
	ds := Diff(w, g)
	if len(ds) != MaxDifferences+1 || ds[MaxDifferences].Path != "…" || !strings.Contains(ds[MaxDifferences].Want, "968 more") {
		t.Fatalf("%d differences, last %+v", len(ds), ds[len(ds)-1])
	}
	if !strings.Contains(Format(ds), "… 968 more difference(s)") {
		t.Error("Format does not say how many more")
	}
}

func TestUnknownFields(t *testing.T) {
	w := &conformpb.Data{Length: 1}
	g := &conformpb.Data{Length: 1}
	g.ProtoReflect().SetUnknown(protowire.AppendVarint(protowire.AppendTag(nil, 99, protowire.VarintType), 1))
	ds := Diff(w, g)
	if len(ds) != 1 || ds[0].Path != "(unknown fields)" {
		t.Errorf("%+v", ds)
	}
}

func TestLowerFirst(t *testing.T) {
	for in, want := range map[string]string{"End": "end", "URLPath": "urlPath", "ID": "id", "x": "x", "StreamRef": "streamRef"} {
		if got := lowerFirst(in); got != want {
			t.Errorf("lowerFirst(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestJudged: the evidence of a check made through the declaration shows
// both answers as JSON with bytes in hex, and names every difference
// meaning.Diff found, even where both answers render alike elsewhere.
func TestJudged(t *testing.T) {
	in := &conformpb.ReadInput{Chunks: []*conformpb.Blob{{Data: []byte{0, 0, 0, 2, 1, 2}}}}
	want := &conformpb.ReadOutput{Yields: []*conformpb.ChunkYield{{Frames: []*conformpb.Data{{Length: 2, Bytes: []byte{1, 2}}}}}, End: conformpb.ReadEnd_READ_END_IDLE}
	got := &conformpb.ReadOutput{Yields: []*conformpb.ChunkYield{{Frames: []*conformpb.Data{{Bytes: []byte{1, 2}}}}}, End: conformpb.ReadEnd_READ_END_IDLE}
	e := Judged("a frame", want, got, meaning.Diff(in, want, got, meaning.Options{}))
	if e.Expected != `{"yields":[{"frames":[{"length":2,"bytes":"01 02"}]}],"end":"READ_END_IDLE"}` {
		t.Errorf("expected: %s", e.Expected)
	}
	if e.Diff != "- yields[0].frames[0].length: 2\n+ yields[0].frames[0].length: 0\n" {
		t.Errorf("diff: %q", e.Diff)
	}
}

// TestDiffAt: the differences of one field of a larger answer are named
// from the answer's root, bytes with the offset of their first difference.
func TestDiffAt(t *testing.T) {
	ds := DiffAt("replies[3].value", []byte{1, 2, 3}, []byte{1, 2, 4})
	if len(ds) != 1 || ds[0].String() != "replies[3].value: expected 01 02 03, got 01 02 04 (first difference at byte 2)" {
		t.Errorf("%v", ds)
	}
	ds = DiffAt("replies[3].deliveries", []string{"a", "b"}, []string{"a"})
	if len(ds) != 1 || ds[0].Path != "replies[3].deliveries[1]" {
		t.Errorf("%v", ds)
	}
	type sent struct {
		Sent []uint64 `json:"sent"`
	}
	ds = DiffAt("", sent{[]uint64{0, 1}}, sent{[]uint64{0, 2}})
	if len(ds) != 1 || ds[0].Path != "sent[1]" {
		t.Errorf("%v", ds)
	}
}

// TestRenderOmitsEmpty: a field tagged omitempty is left out at zero, as
// encoding/json leaves it out.
func TestRenderOmitsEmpty(t *testing.T) {
	type view struct {
		Refusal string `json:"refusal,omitempty"`
		Link    string `json:"link"`
	}
	if got := Render(view{Link: "a"}); got != `{"link":"a"}` {
		t.Errorf("Render = %s", got)
	}
}

// TestCompactPath: a step repeated along a deep path is written once with
// its count, so a difference at the leaf of a deep tree stays readable.
func TestCompactPath(t *testing.T) {
	p := "root" + strings.Repeat(".children[0]", 4095) + ".payload"
	out := Format([]Difference{{Path: p, Want: "01", Got: "02", Offset: -1}})
	if want := "- root.children[0]{×4095}.payload: 01\n"; !strings.HasPrefix(out, want) {
		t.Errorf("Format = %.120q", out)
	}
	if got := compactPath("a.b.b.c"); got != "a.b.b.c" {
		t.Errorf("a short run is kept: %s", got)
	}
}

// TestRenderBounded: a huge value renders as a bounded string.
func TestRenderBounded(t *testing.T) {
	type frames struct {
		Frames [][]byte `json:"frames"`
	}
	big := frames{[][]byte{make([]byte, 8<<20), make([]byte, 8<<20)}}
	if got := Render(big); len(got) > meaning.MaxRender+128 {
		t.Errorf("two 8 MiB frames render as %d bytes", len(got))
	}
	if got := Render(make([]byte, 16<<20)); len(got) > 512 {
		t.Errorf("16 MiB of bytes render as %d bytes", len(got))
	}
}

// TestCheck: what a user must never read in evidence is caught, and
// evidence in protocol terms passes.
func TestCheck(t *testing.T) {
	for _, e := range []reports.Evidence{
		{Message: "m", Diff: "  wire.readView{\n- \tEnd: \"truncated\","},
		{Message: "m", Expected: "{Frames:[] End:truncated Claimed:0}", Got: "x", Diff: "d"},
		{Message: "m", Diff: "cmp.Diff output, protocmp.Transform()"},
		{Message: "m", Got: "&{1 2}"},
		{Message: "m", Expected: "a", Got: "b"},
	} {
		if Check(e) == nil {
			t.Errorf("Check passes %+v", e)
		}
	}
	good, _ := Compare("m", &conformpb.ReadOutput{End: conformpb.ReadEnd_READ_END_TRUNCATED}, &conformpb.ReadOutput{End: conformpb.ReadEnd_READ_END_CLOSED})
	if err := Check(good); err != nil {
		t.Errorf("Check refuses %+v: %v", good, err)
	}
}
