package campaign

import (
	"slices"
	"strings"
	"testing"

	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"google.golang.org/protobuf/proto"
)

// goNotation is what must never reach a person reading a finding: Go type
// names and diff notation of the libraries conform is built with.
var goNotation = []string{"conformpb.", "protocmp", "Inverse(", "readView", "wire.", "struct {", "-:", "+:"}

// TestEvidenceInProtocolTerms: a finding's evidence shows the input and
// each differing field by its conform.v1 JSON path, with both values as
// conform.v1's JSON writes them, and nothing of Go.
func TestEvidenceInProtocolTerms(t *testing.T) {
	in := &conformpb.ReadFrames{Inputs: []*conformpb.ReadInput{{
		Chunks: []*conformpb.Blob{{Data: []byte{0, 0, 0, 1, 7}}}, EndOfStream: true}}}
	ref := &conformpb.ReadOutput{End: conformpb.ReadEnd_READ_END_IDLE,
		Yields: []*conformpb.ChunkYield{{Frames: []*conformpb.Data{{Length: 1, Bytes: []byte{7}}}}}}
	// buffered means nothing unless both readers ended WAITING or
	// TRUNCATED, and an empty trailing entry equals none (docs/fields.md):
	// the trailing entry here yields a frame.
	sut := &conformpb.ReadOutput{End: conformpb.ReadEnd_READ_END_TRUNCATED, Buffered: 5,
		Yields: []*conformpb.ChunkYield{{Frames: []*conformpb.Data{{Length: 1, Bytes: []byte{8}}}}, {Frames: []*conformpb.Data{{Length: 1, Bytes: []byte{9}}}}}}
	got := oracle{}.evidence([]proto.Message{in}, in.Inputs[0], sut, ref)
	for _, want := range []string{
		`input: {"inputs":[{"chunks":[{"data":"AAAAAQc="}],"endOfStream":true}]}`,
		`end: reference "READ_END_IDLE", SUT "READ_END_TRUNCATED" (MUST)`,
		`yields: 1 entry from the reference, 2 from the SUT (MUST)`,
		`yields[0].frames[0].bytes: reference "Bw==", SUT "CA==" (MUST)`,
	} {
		if !strings.Contains(got, want+"\n") {
			t.Errorf("evidence lacks %q:\n%s", want, got)
		}
	}
	for _, bad := range goNotation {
		if strings.Contains(got, bad) {
			t.Errorf("evidence shows %q:\n%s", bad, got)
		}
	}
	paths := diffPaths(ref.ProtoReflect(), sut.ProtoReflect())
	if want := []string{"buffered", "end", "yields.len", "yields[].frames[].bytes"}; !slices.Equal(paths, want) {
		t.Errorf("paths %v, want %v", paths, want)
	}
}

// TestEvidenceJSONNames: fields whose proto and JSON names differ are named
// by their JSON names, in paths and evidence alike, and a message set on
// one side only is shown as absent there.
func TestEvidenceJSONNames(t *testing.T) {
	delivered := conformpb.ReceiveAction_RECEIVE_ACTION_DELIVERED
	ref := &conformpb.ReceiveOutput{Events: []*conformpb.ReceiveEvent{{Action: delivered, FrameJson: `{"sample":{}}`}}}
	sut := &conformpb.ReceiveOutput{Events: []*conformpb.ReceiveEvent{{Action: delivered, FrameJson: `{"sample":{"sequence":"1"}}`}}}
	paths := diffPaths(ref.ProtoReflect(), sut.ProtoReflect())
	if !slices.Equal(paths, []string{"events[].frameJson"}) {
		t.Errorf("paths %v, want events[].frameJson", paths)
	}
	got := oracle{}.evidence(nil, nil, sut, ref)
	if !strings.Contains(got, `events[0].frameJson: reference "{\"sample\":{}}", SUT "{\"sample\":{\"sequence\":\"1\"}}" (MUST)`) {
		t.Errorf("evidence:\n%s", got)
	}
	tref := &conformpb.TlvDecodeOutput{Root: &conformpb.TlvNode{Type: 1}}
	tsut := &conformpb.TlvDecodeOutput{Refusal: &conformpb.TlvRefusal{Status: 81}}
	got = oracle{}.evidence(nil, nil, tsut, tref)
	for _, want := range []string{`root: reference {"type":1}, SUT absent`, `refusal: reference absent, SUT {"status":81}`} {
		if !strings.Contains(got, want) {
			t.Errorf("evidence lacks %q:\n%s", want, got)
		}
	}
}

// TestEvidenceDeep: two answers nested 66 messages deep are compared and
// rendered in time linear in their size, naming the differing paths; long
// values are cut, saying how much was dropped.
func TestEvidenceDeep(t *testing.T) {
	nest := func(n int, leaf uint32) *conformpb.TlvDecodeOutput {
		node := &conformpb.TlvNode{Type: leaf}
		for range n {
			node = &conformpb.TlvNode{Type: 1, Children: []*conformpb.TlvNode{node, {Type: 2}}}
		}
		return &conformpb.TlvDecodeOutput{Root: node}
	}
	got := oracle{}.evidence(nil, nil, nest(64, 8), nest(64, 7))
	if !strings.Contains(got, "root.children[0].children[0].") || !strings.Contains(got, `.type: reference 7, SUT 8`) {
		t.Errorf("deep evidence:\n%s", got)
	}
	long := &conformpb.DecodeOutput{Json: strings.Repeat("x", 10_000)}
	got = oracle{}.evidence(nil, nil, long, &conformpb.DecodeOutput{})
	if !strings.Contains(got, "bytes dropped]") || len(got) > 1000 {
		t.Errorf("a 10,000-byte value rendered as %d bytes:\n%.300s", len(got), got)
	}
}

// TestEvidenceLevels: each differing field of a finding's evidence carries
// the level at which the declaration judges it, where the SUT's answer
// stands: SHOULD for the bytes a reader holds when both wait, and for a
// TLV header written longer than it need be whose length is right; MUST
// for a length that is wrong.
func TestEvidenceLevels(t *testing.T) {
	waiting := &conformpb.ReadInput{Chunks: []*conformpb.Blob{{Data: []byte{0, 0, 0, 5, 1}}}}
	read := func(buffered uint64) *conformpb.ReadOutput {
		return &conformpb.ReadOutput{Yields: []*conformpb.ChunkYield{{}}, End: conformpb.ReadEnd_READ_END_WAITING, Buffered: buffered}
	}
	enc := &conformpb.TlvEncodeInput{Tree: &conformpb.TlvNode{Type: 1, Payload: []byte{7, 8}}}
	frame := func(b ...byte) *conformpb.TlvEncodeOutput { return &conformpb.TlvEncodeOutput{Frame: b} }
	for _, tc := range []struct {
		name      string
		in        proto.Message
		sut, ref  proto.Message
		want, not string
	}{
		{"buffered while waiting", waiting, read(9), read(5), `buffered: reference "5", SUT "9" (SHOULD)`, ""},
		{"a header longer than it need be", enc, frame(1, 2, 2, 0, 0, 0, 7, 8), frame(1, 0, 2, 0, 7, 8), "(SHOULD)", "(MUST)"},
		{"a wrong length", enc, frame(1, 0, 3, 0, 7, 8), frame(1, 0, 2, 0, 7, 8), "(MUST)", "(SHOULD)"},
	} {
		got := oracle{}.evidence(nil, tc.in, tc.sut, tc.ref)
		if !strings.Contains(got, tc.want) || tc.not != "" && strings.Contains(got, tc.not) {
			t.Errorf("%s: evidence does not say %q (nor, if set, not %q):\n%s", tc.name, tc.want, tc.not, got)
		}
	}
}
