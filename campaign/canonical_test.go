package campaign

import (
	"strings"
	"testing"

	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	messagepb "github.com/conform-suite/conform/proto/ranvier/message/v1"
	"google.golang.org/protobuf/proto"
)

// TestCanonicalPair: two conforming answers that differ only in wording or
// rendering compare equal; answers that differ in what the spec fixes do not.
func TestCanonicalPair(t *testing.T) {
	req, _ := proto.Marshal(&messagepb.Request{StreamName: "gaze"})
	decIn := &conformpb.DecodeInput{MessageType: "ranvier.message.v1.Request"}
	encIn := &conformpb.EncodeInput{MessageType: "ranvier.message.v1.Request"}
	for _, tc := range []struct {
		name      string
		in        proto.Message
		got, want proto.Message
		equal     bool
	}{
		{"refusal worded differently", nil,
			&conformpb.TlvDecodeOutput{Refusal: &conformpb.TlvRefusal{Status: 81, Reason: "short header"}},
			&conformpb.TlvDecodeOutput{Refusal: &conformpb.TlvRefusal{Status: 81, Reason: "a header needs 4 bytes, 0 present"}}, true},
		{"refusal with another status", nil,
			&conformpb.TlvDecodeOutput{Refusal: &conformpb.TlvRefusal{Status: 80, Reason: "x"}},
			&conformpb.TlvDecodeOutput{Refusal: &conformpb.TlvRefusal{Status: 81, Reason: "x"}}, false},
		{"an error where the reference decoded", decIn,
			&conformpb.DecodeOutput{Error: "bad"},
			&conformpb.DecodeOutput{Json: `{"streamName":"gaze"}`}, false},
		{"JSON spaced and quoted differently", decIn,
			&conformpb.DecodeOutput{Json: `{ "streamName" : "gaze" }`},
			&conformpb.DecodeOutput{Json: `{"streamName":"gaze"}`}, true},
		{"JSON of another value", decIn,
			&conformpb.DecodeOutput{Json: `{"streamName":"gazf"}`},
			&conformpb.DecodeOutput{Json: `{"streamName":"gaze"}`}, false},
		{"JSON that does not parse", decIn,
			&conformpb.DecodeOutput{Json: `{"streamName":`},
			&conformpb.DecodeOutput{Json: `{"streamName":"gaze"}`}, false},
		{"an encoding with an unknown field ahead", encIn,
			&conformpb.EncodeOutput{Payload: append([]byte{0x58, 0x01}, req...)},
			&conformpb.EncodeOutput{Payload: req}, false},
		{"the same encoding", encIn,
			&conformpb.EncodeOutput{Payload: req},
			&conformpb.EncodeOutput{Payload: append([]byte(nil), req...)}, true},
	} {
		got, want := canonicalPair(tc.in, tc.got, tc.want)
		if eq := proto.Equal(got, want); eq != tc.equal {
			t.Errorf("%s: equal = %v, want %v (%v vs %v)", tc.name, eq, tc.equal, got, want)
		}
	}
}

// TestTextDiffDeep: the evidence of two deeply nested answers is the paths
// where they differ, not go-cmp's alignment of every level (exponential in
// the depth); shallow answers keep go-cmp's diff.
func TestTextDiffDeep(t *testing.T) {
	nest := func(n int, leaf uint32) *conformpb.TlvDecodeOutput {
		node := &conformpb.TlvNode{Type: leaf}
		for range n {
			node = &conformpb.TlvNode{Type: 1, Children: []*conformpb.TlvNode{node, {Type: 2}}}
		}
		return &conformpb.TlvDecodeOutput{Root: node}
	}
	deep := textDiff(nest(64, 7), nest(64, 8))
	if !strings.Contains(deep, "root.children[].") || !strings.Contains(deep, "nested 66") {
		t.Errorf("deep diff = %q, want the differing paths and the depth", deep)
	}
	shallow := textDiff(nest(2, 7), nest(2, 8))
	if !strings.Contains(shallow, "-") || !strings.Contains(shallow, "+") || strings.Contains(shallow, "nested") {
		t.Errorf("shallow diff = %q, want go-cmp's diff", shallow)
	}
}
