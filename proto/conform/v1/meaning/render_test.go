package meaning

import (
	"encoding/binary"
	"math"
	"runtime/metrics"
	"strings"
	"testing"

	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	messagepb "github.com/conform-suite/conform/proto/ranvier/message/v1"
	dp "github.com/conform-suite/conform/ref/doppler"
)

// TestDifferenceInProtocolTerms: a difference shows bytes in hex with the
// offset of their first difference, a field set on one side and not the
// other by name, and a list of another length with the entries it lacks.
func TestDifferenceInProtocolTerms(t *testing.T) {
	in := &conformpb.ReadInput{Chunks: []*conformpb.Blob{{Data: []byte{0, 0, 0, 2, 1, 2}}}}
	want := &conformpb.ReadOutput{Yields: []*conformpb.ChunkYield{{Frames: []*conformpb.Data{{Length: 2, Bytes: []byte{1, 2}}}}}, End: conformpb.ReadEnd_READ_END_IDLE}
	for _, tc := range []struct {
		name string
		got  *conformpb.ReadOutput
		diff string
	}{
		{"other bytes", &conformpb.ReadOutput{Yields: []*conformpb.ChunkYield{{Frames: []*conformpb.Data{{Length: 2, Bytes: []byte{1, 9}}}}}, End: conformpb.ReadEnd_READ_END_IDLE},
			"yields[0].frames[0].bytes: want 01 02, got 01 09, first difference at byte 1 (MUST)"},
		{"a shim that omits Data.length", &conformpb.ReadOutput{Yields: []*conformpb.ChunkYield{{Frames: []*conformpb.Data{{Bytes: []byte{1, 2}}}}}, End: conformpb.ReadEnd_READ_END_IDLE},
			"yields[0].frames[0].length: want 2, got 0 (MUST)"},
		{"a frame too many", &conformpb.ReadOutput{Yields: []*conformpb.ChunkYield{{Frames: []*conformpb.Data{{Length: 2, Bytes: []byte{1, 2}}, {Length: 1, Bytes: []byte{7}}}}}, End: conformpb.ReadEnd_READ_END_IDLE},
			`yields[0].frames: want 1 entry, got 2 entries: [1] {"length":1,"bytes":"07"} (MUST)`},
		{"an enum by name", &conformpb.ReadOutput{Yields: want.Yields, End: conformpb.ReadEnd_READ_END_CLOSED},
			"end: want READ_END_IDLE, got READ_END_CLOSED (MUST)"},
	} {
		ds := Diff(in, want, tc.got, Options{})
		if len(ds) != 1 || ds[0].String() != tc.diff {
			t.Errorf("%s: %v\nwant %s", tc.name, ds, tc.diff)
		}
	}
}

// TestRender: conform.v1's JSON names and enum names, bytes in hex, numbers
// bare; a huge value stops the rendering at MaxRender.
func TestRender(t *testing.T) {
	m := &conformpb.ReadOutput{Yields: []*conformpb.ChunkYield{{Frames: []*conformpb.Data{{Length: 2, Bytes: []byte{0xab, 1}}}}}, End: conformpb.ReadEnd_READ_END_TOO_LARGE, Claimed: 1 << 40}
	if got, want := Render(m), `{"yields":[{"frames":[{"length":2,"bytes":"ab 01"}]}],"end":"READ_END_TOO_LARGE","claimed":1099511627776}`; got != want {
		t.Errorf("Render = %s\nwant %s", got, want)
	}
	if got := Render((*conformpb.Data)(nil)); got != "absent" {
		t.Errorf("a nil message renders as %q", got)
	}
	huge := &conformpb.Data{Bytes: make([]byte, 16<<20)}
	if got := Render(huge); len(got) > MaxRender+256 || !strings.Contains(got, "rendering stopped") {
		t.Errorf("16 MiB of bytes render as %d bytes, ending %q", len(got), got[max(0, len(got)-80):])
	}
	text := &conformpb.Error{Message: strings.Repeat("é", 1<<20)}
	if got := Render(text); len(got) > MaxRender+256 || !strings.Contains(got, "rendering stopped") {
		t.Errorf("a 2 MiB string renders as %d bytes", len(got))
	}
	nan := &conformpb.DopplerHeader{SampleRateHz: math.NaN()}
	if got := Render(nan); got != `{"sampleRateHz":"NaN"}` {
		t.Errorf("NaN renders as %s", got)
	}
}

// TestDeepDiffLinear: comparing two trees nested tens of thousands deep (a
// TLV at the depth bound a SUT's Hello declares) allocates in proportion to
// the depth, not its square: the path of each level is written out only
// for a difference.
func TestDeepDiffLinear(t *testing.T) {
	const depth = 20000
	chain := func(leaf byte) *conformpb.TlvNode {
		n := &conformpb.TlvNode{Type: 1, Payload: []byte{leaf}}
		for range depth - 1 {
			n = &conformpb.TlvNode{Type: 0x0b, Opt: 1, Children: []*conformpb.TlvNode{n}}
		}
		return n
	}
	want, got := &conformpb.TlvDecodeOutput{Root: chain(1)}, &conformpb.TlvDecodeOutput{Root: chain(2)}
	before := allocated()
	ds := Diff(nil, want, got, Options{})
	n := allocated() - before
	if len(ds) != 1 || !strings.HasSuffix(ds[0].Path, ".children[0].payload") || ds[0].Offset != 0 {
		t.Fatalf("differences %d, first %.80s…", len(ds), ds)
	}
	// The old walk built each level's path by concatenation: 14 bytes a
	// level times depth²/2 is 2.8 GB here.
	if n > 256<<20 {
		t.Errorf("Diff of two %d-deep trees allocated %d MiB", depth, n>>20)
	}
}

func allocated() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// TestCheckDefined: a header given alone with its transport length is
// defined when it sets no CHUNKED (doppler.proto: at least the header);
// one that sets CHUNKED lacks the chunk block it announces.
func TestCheckDefined(t *testing.T) {
	f, err := dp.NewFrame(dp.TypeCF32, dp.LittleEndian, make([]byte, 4000))
	if err != nil {
		t.Fatal(err)
	}
	msg := f.AppendMessage(nil, dp.LittleEndian)
	whole := uint64(len(msg))
	header := msg[:dp.HeaderSize]
	chunked := append([]byte(nil), header...)
	chunked[12] |= byte(dp.FlagChunked)
	for _, tc := range []struct {
		name string
		in   *conformpb.DopplerCheckInput
		want bool
	}{
		{"the whole message", &conformpb.DopplerCheckInput{Message: msg}, true},
		{"the header alone, CHUNKED clear", &conformpb.DopplerCheckInput{Message: header, TransportLength: &whole}, true},
		{"the header alone, CHUNKED set", &conformpb.DopplerCheckInput{Message: chunked, TransportLength: &whole}, false},
		{"part of a header", &conformpb.DopplerCheckInput{Message: header[:40], TransportLength: &whole}, false},
		{"more than the transport carried", &conformpb.DopplerCheckInput{Message: msg, TransportLength: new(uint64)}, false},
	} {
		if got := CheckDefined(tc.in); got != tc.want {
			t.Errorf("%s: CheckDefined = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestUndeclaredEnumOpen: ranvier-wire §7.4 lets a decoder surface an
// undeclared enum value as its raw integer or read it as unspecified; the
// declaration compares the two alike, and a declared neighbour still
// differs.
func TestUndeclaredEnumOpen(t *testing.T) {
	// ToNode{refuse: Refuse{reason: 99}}.
	in := &conformpb.DecodeInput{MessageType: "ranvier.control.v1.ToNode", Payload: []byte{0x12, 0x02, 0x08, 0x63}}
	raw := &conformpb.DecodeOutput{Json: `{"refuse":{"reason":99}}`}
	for _, tc := range []struct {
		json  string
		equal bool
	}{
		{`{"refuse":{}}`, true},
		{`{"refuse": {"reason": 99}}`, true},
		{`{"refuse":{"reason":"REFUSE_REASON_ALREADY_REGISTERED"}}`, false},
	} {
		got := &conformpb.DecodeOutput{Json: tc.json}
		if eq := Equal(in, raw, got, Options{}); eq != tc.equal {
			t.Errorf("%s: Equal = %v, want %v (%v)", tc.json, eq, tc.equal, Diff(in, raw, got, Options{}))
		}
	}
}

// TestUndeclaredEnumInDeliveredFrame: the same holds for a Frame a
// subscriber delivered.
func TestUndeclaredEnumInDeliveredFrame(t *testing.T) {
	frame := marshal(&messagepb.Frame{Payload: &messagepb.Frame_Announce{Announce: &messagepb.StreamInfo{Name: "g", StreamRef: 1, Origin: 9}}})
	in := &conformpb.ReadInput{Chunks: []*conformpb.Blob{{Data: append(binary.BigEndian.AppendUint32(nil, uint32(len(frame))), frame...)}}, EndOfStream: true}
	out := func(js string) *conformpb.ReceiveOutput {
		return &conformpb.ReceiveOutput{Events: []*conformpb.ReceiveEvent{{Action: conformpb.ReceiveAction_RECEIVE_ACTION_DELIVERED, FrameJson: js}}}
	}
	if ds := Diff(in, out(`{"announce":{"name":"g","streamRef":1,"origin":9}}`), out(`{"announce":{"name":"g","streamRef":1}}`), Options{}); len(ds) > 0 {
		t.Errorf("origin 9 read as 0 differs: %v", ds)
	}
	if ds := Diff(in, out(`{"announce":{"name":"g","streamRef":1,"origin":9}}`), out(`{"announce":{"name":"g","streamRef":1,"origin":"ORIGIN_EPHEMERAL"}}`), Options{}); len(ds) != 1 {
		t.Errorf("origin 9 read as a declared neighbour: %v", ds)
	}
}
