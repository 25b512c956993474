package campaign

import (
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/ref/wire"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// A finding must be a bug, never a difference of wording. These fields say
// why in the implementation's own words, or name what differs between any
// only whether they are set is compared. (A live report's worded and
// run-dependent fields are cleared by normalizeReport.)
var wordedFields = map[protoreflect.FullName]bool{
	"conform.v1.DecodeOutput.error":             true,
	"conform.v1.EncodeOutput.error":             true,
	"conform.v1.QueueOutput.refusal":            true,
	"conform.v1.PublishEvent.refusal":           true,
	"conform.v1.ReadAnnouncementOutput.refusal": true,
	"conform.v1.TlvRefusal.reason":              true,
	"conform.v1.DopplerRefusal.detail":          true,
	"conform.v1.GraphScriptOutput.error":        true,
}

// worded is what every non-empty worded field becomes before comparison.
const worded = "(set)"

// canonicalPair returns copies of two answers to in with what conforming
// implementations may say differently made equal: worded fields reduced to
// set or not, canonical JSON parsed and re-rendered (protojson leaves
// whitespace, key order and 64-bit number quoting to the writer), and
// encodings parsed and re-marshalled deterministically (protobuf fixes no
// field order). A field that does not parse is left as it is, so a SUT's
// unparsable answer still differs.
func canonicalPair(in, got, want proto.Message) (proto.Message, proto.Message) {
	got, want = proto.Clone(got), proto.Clone(want)
	for _, m := range []proto.Message{got, want} {
		canonicalize(in, m.ProtoReflect())
	}
	return got, want
}

func canonicalize(in proto.Message, m protoreflect.Message) {
	eachMessage(m, func(m protoreflect.Message) {
		for _, fd := range wordedIn(m) {
			m.Set(fd, protoreflect.ValueOfString(worded))
		}
		switch out := m.Interface().(type) {
		case *conformpb.DecodeOutput:
			if in, ok := in.(*conformpb.DecodeInput); ok {
				out.Json = rejson(in.GetMessageType(), out.Json)
			}
		case *conformpb.EncodeOutput:
			if in, ok := in.(*conformpb.EncodeInput); ok {
				out.Payload = remarshal(in.GetMessageType(), out.Payload)
			}
		case *conformpb.ReceiveEvent:
			out.FrameJson = rejson("ranvier.message.v1.Frame", out.FrameJson)
		}
	})
}

// wordedIn returns the worded fields set in m. They are set after Range,
// which leaves changes made while it runs unspecified.
func wordedIn(m protoreflect.Message) []protoreflect.FieldDescriptor {
	var set []protoreflect.FieldDescriptor
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if wordedFields[fd.FullName()] {
			set = append(set, fd)
		}
		return true
	})
	return set
}

// eachMessage calls f with m and with every message nested in m, parents
// before their children.
func eachMessage(m protoreflect.Message, f func(protoreflect.Message)) {
	f(m)
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsList() && fd.Kind() == protoreflect.MessageKind:
			for i := range v.List().Len() {
				eachMessage(v.List().Get(i).Message(), f)
			}
		case !fd.IsList() && !fd.IsMap() && fd.Kind() == protoreflect.MessageKind:
			eachMessage(v.Message(), f)
		}
		return true
	})
}

// rejson re-renders canonical JSON of the Ranvier message type name in this
// process, so that two renderings of one message compare equal.
func rejson(name, s string) string {
	mt, err := wire.MessageType(name)
	if s == "" || err != nil {
		return s
	}
	m := mt.New().Interface()
	if protojson.Unmarshal([]byte(s), m) != nil {
		return s
	}
	b, err := protojson.Marshal(m)
	if err != nil {
		return s
	}
	return string(b)
}

// remarshal re-encodes b, a Ranvier message of type name, as the reference
// encodes it.
func remarshal(name string, b []byte) []byte {
	if len(b) == 0 {
		return b
	}
	m, err := wire.Decode(name, b)
	if err != nil {
		return b
	}
	out, err := wire.Encode(m)
	if err != nil {
		return b
	}
	return out
}
