package wire

import (
	"fmt"
	"sort"

	controlpb "github.com/conform-suite/conform/proto/ranvier/control/v1"
	messagepb "github.com/conform-suite/conform/proto/ranvier/message/v1"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
)

// messageTypes are the Ranvier messages a wire case may name, keyed by their
// fully-qualified protobuf names.
var messageTypes = func() map[protoreflect.FullName]protoreflect.MessageType {
	m := make(map[protoreflect.FullName]protoreflect.MessageType)
	for _, file := range []protoreflect.FileDescriptor{
		messagepb.File_ranvier_message_v1_message_proto,
		controlpb.File_ranvier_control_v1_control_proto,
	} {
		msgs := file.Messages()
		for i := 0; i < msgs.Len(); i++ {
			mt, err := protoregistry.GlobalTypes.FindMessageByName(msgs.Get(i).FullName())
			if err == nil {
				m[mt.Descriptor().FullName()] = mt
			}
		}
	}
	return m
}()

// MessageType returns the Ranvier message type with the fully-qualified name
// name, such as "ranvier.message.v1.Frame".
func MessageType(name string) (protoreflect.MessageType, error) {
	mt, ok := messageTypes[protoreflect.FullName(name)]
	if !ok {
		return nil, fmt.Errorf("ranvier: no message type %q", name)
	}
	return mt, nil
}

// MessageTypeNames returns the names MessageType accepts, sorted.
func MessageTypeNames() []string {
	names := make([]string, 0, len(messageTypes))
	for n := range messageTypes {
		names = append(names, string(n))
	}
	sort.Strings(names)
	return names
}

// Decode decodes payload as the named Ranvier message by the rules of
// ranvier-wire §7: fields it does not know are skipped and kept in the
// message's unknown set while the known ones decode (§7.2); an unknown oneof
// variant leaves no variant set (§7.3); an undeclared enum value is kept as
// its integer (§7.4); fields may come in any order (§4.6). A payload that
// ends mid-field fails to decode, which is not a framing error (§7.5).
func Decode(name string, payload []byte) (proto.Message, error) {
	mt, err := MessageType(name)
	if err != nil {
		return nil, err
	}
	m := mt.New().Interface()
	if err := proto.Unmarshal(payload, m); err != nil {
		return nil, fmt.Errorf("decoding %s: %w", name, err)
	}
	return m, nil
}

// Encode encodes m in the protobuf binary encoding. Field order is the
// encoder's choice (§4.6); this one writes ascending field numbers.
func Encode(m proto.Message) ([]byte, error) {
	return proto.MarshalOptions{Deterministic: true}.Marshal(m)
}

// DecodeFrame decodes a data-plane payload as a Frame, by the rules of Decode.
func DecodeFrame(payload []byte) (*messagepb.Frame, error) {
	f := new(messagepb.Frame)
	if err := proto.Unmarshal(payload, f); err != nil {
		return nil, fmt.Errorf("decoding ranvier.message.v1.Frame: %w", err)
	}
	return f, nil
}
