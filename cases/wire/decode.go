package wire

import (
	"fmt"

	"github.com/conform-suite/conform/cases"
	"github.com/conform-suite/conform/corpus"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/proto/conform/v1/meaning"
	messagepb "github.com/conform-suite/conform/proto/ranvier/message/v1"
	"github.com/conform-suite/conform/ref/wire"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// parseJSON parses canonical JSON as the named message type.
func parseJSON(typ string, js []byte) (proto.Message, error) {
	mt, err := wire.MessageType(typ)
	if err != nil {
		return nil, err
	}
	m := mt.New().Interface()
	if err := protojson.Unmarshal(js, m); err != nil {
		return nil, fmt.Errorf("parsing %s JSON: %w", typ, err)
	}
	return m, nil
}

// want returns the message a vector's payload must decode to.
func wantMessage(v *corpus.Vector) proto.Message {
	m, err := parseJSON(v.Message.Type, v.Message.JSON)
	if err != nil {
		panic(fmt.Sprintf("vector %s: %v", v.ID, err))
	}
	return m
}

// decodedAnswer is the DecodeOutput a conforming decoder gives for a
// payload that decodes to want: want as canonical JSON.
func decodedAnswer(want proto.Message) *conformpb.DecodeOutput {
	js, err := protojson.Marshal(want)
	if err != nil {
		panic(fmt.Sprintf("conform bug: an expected %s does not render as JSON: %v", want.ProtoReflect().Descriptor().FullName(), err))
	}
	return &conformpb.DecodeOutput{Json: string(js)}
}

// decodeVectors asks the SUT to decode each vector's payload and checks the
// result: the expected value, or a decode failure. The JSON is compared as
// the declaration of meaning says, as the message it parses to.
func decodeVectors(t *cases.T, vs ...*corpus.Vector) {
	var ins []*conformpb.DecodeInput
	for _, v := range vs {
		ins = append(ins, &conformpb.DecodeInput{MessageType: v.Message.Type, Payload: v.Frames[0]})
	}
	for i, out := range decodeMessages(t, ins) {
		v := vs[i]
		what := fmt.Sprintf("%s (%s)", v.ID, v.Title)
		want, fields := &conformpb.DecodeOutput{Failed: true}, []string{"failed"}
		if !v.Message.Undecodable {
			want, fields = decodedAnswer(wantMessage(v)), []string{"failed", "json"}
		}
		ds := t.Judge(ins[i], want, out, meaning.MUST, fields...)
		if len(ds) == 0 {
			continue
		}
		switch {
		case v.Message.Undecodable:
			what += ": decoded, but the payload is malformed"
		case out.Failed:
			what += ": failed to decode"
		default:
			if _, err := parseJSON(v.Message.Type, []byte(out.Json)); err != nil {
				what += ": the SUT's JSON does not parse as " + v.Message.Type + " (" + err.Error() + ")"
			} else {
				what += ": decoded to the wrong value"
			}
		}
		t.FailAnswer(what, corpus.FormatHex(v.Frames[0]), want, out, ds)
	}
}

// encodeVectors asks the SUT to encode each vector's message and checks the
// bytes as the declaration of meaning compares an encoding: decoded and
// re-encoded by the reference, since protobuf fixes no field order and the
// corpus checks an encoding by round trip, not byte equality (§4.6).
func encodeVectors(t *cases.T, vs ...*corpus.Vector) {
	var ins []*conformpb.EncodeInput
	for _, v := range vs {
		ins = append(ins, &conformpb.EncodeInput{MessageType: v.Message.Type, Json: string(v.Message.JSON)})
	}
	for i, out := range encodeMessages(t, ins) {
		v := vs[i]
		what := fmt.Sprintf("encoding %s (%s)", v.ID, v.Title)
		want := &conformpb.EncodeOutput{Payload: v.Frames[0]}
		ds := t.Judge(ins[i], want, out, meaning.MUST, "failed", "payload")
		if len(ds) == 0 {
			continue
		}
		switch _, err := wire.Decode(v.Message.Type, out.Payload); {
		case out.Failed:
			what += ": the encoder failed"
		case err != nil:
			what += ": the bytes do not decode (" + err.Error() + ")"
		default:
			what += ": the bytes decode to another value"
		}
		t.FailAnswer(what, string(v.Message.JSON), want, out, ds)
	}
}

// receiveVectors plays each vector to the SUT's subscriber and checks what it
// delivered, skipped and counted, and whether it closed.
func receiveVectors(t *cases.T, vs ...*corpus.Vector) {
	var ins []*conformpb.ReadInput
	for _, v := range vs {
		ins = append(ins, input(true, v.Input))
	}
	for i, out := range receiveFrames(t, ins) {
		checkReceived(t, vs[i].ID, ins[i], out, vs[i].Receive, vs[i])
	}
}

// checkReceived compares a subscriber's report with want: an event per
// whole frame with its action, the close and the count of unreadable
// frames; then what each delivered frame decoded to, against the
// reference's decoding of the vector's frame.
func checkReceived(t *cases.T, what string, in *conformpb.ReadInput, out *conformpb.ReceiveOutput, want *corpus.Receive, v *corpus.Vector) {
	w := &conformpb.ReceiveOutput{Closed: want.Closed, Unreadable: want.Unreadable}
	for i, a := range want.Actions {
		w.Events = append(w.Events, &conformpb.ReceiveEvent{Frame: uint64(i), Action: actionOf(a)})
	}
	if !t.CheckAnswer(what+": the subscriber's report is wrong", describe(in), in, w, out, meaning.MUST,
		"events", "-events.frameJson", "closed", "unreadable") {
		return
	}
	// The report is right: each delivered event now expects the frame as
	// the reference decodes it. Canonical JSON cannot carry unknown fields,
	// so the reference's decoding discards them.
	for i, e := range w.Events {
		if e.Action != conformpb.ReceiveAction_RECEIVE_ACTION_DELIVERED || v == nil || int(e.Frame) >= len(v.Frames) {
			continue
		}
		frame := new(messagepb.Frame)
		if err := (proto.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(v.Frames[e.Frame], frame); err != nil {
			e.FrameJson = out.Events[i].GetFrameJson()
			continue
		}
		e.FrameJson = decodedAnswer(frame).Json
	}
	t.CheckAnswer(what+": a delivered frame decoded to the wrong value", describe(in), in, w, out, meaning.MUST, "events.frameJson")
}

// actionOf is the ReceiveAction a corpus vector's action names.
func actionOf(a string) conformpb.ReceiveAction {
	switch a {
	case "delivered":
		return conformpb.ReceiveAction_RECEIVE_ACTION_DELIVERED
	case "skipped_undecodable":
		return conformpb.ReceiveAction_RECEIVE_ACTION_SKIPPED_UNDECODABLE
	case "skipped_no_variant":
		return conformpb.ReceiveAction_RECEIVE_ACTION_SKIPPED_NO_VARIANT
	}
	panic("conform bug: a corpus vector names the receive action " + a)
}
