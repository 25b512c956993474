package campaign

import (
	"testing"

	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/proto/conform/v1/meaning"
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
		got, want := canonicalPair(tc.in, tc.got, tc.want, meaning.Options{})
		if eq := proto.Equal(got, want); eq != tc.equal {
			t.Errorf("%s: equal = %v, want %v (%v vs %v)", tc.name, eq, tc.equal, got, want)
		}
	}
}
