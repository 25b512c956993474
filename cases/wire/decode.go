package wire

import (
	"bytes"
	"fmt"

	"github.com/conform-suite/conform/cases"
	"github.com/conform-suite/conform/corpus"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	messagepb "github.com/conform-suite/conform/proto/ranvier/message/v1"
	"github.com/conform-suite/conform/ref/wire"
	"github.com/conform-suite/conform/reports"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"
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

// checkDecoded compares the JSON a SUT produced with want, as messages: the
// SUT's JSON is parsed, never compared as text.
func checkDecoded(t *cases.T, what string, payload []byte, typ, gotJSON string, want proto.Message) {
	got, err := parseJSON(typ, []byte(gotJSON))
	if err != nil {
		t.Fail(reports.Evidence{Message: what + ": the SUT's JSON does not parse as " + typ, Input: corpus.FormatHex(payload), Got: gotJSON, Expected: protojson.Format(want)})
		return
	}
	if !proto.Equal(got, want) {
		t.Fail(reports.Evidence{
			Message:  what + ": decoded to the wrong value",
			Input:    corpus.FormatHex(payload),
			Expected: protojson.Format(want),
			Got:      gotJSON,
			Diff:     cmp.Diff(want, got, protocmp.Transform()),
		})
	}
}

// decodeVectors asks the SUT to decode each vector's payload and checks the
// result: the expected value, or a decode failure.
func (s *suite) decodeVectors(t *cases.T, names ...string) {
	var ins []*conformpb.DecodeInput
	var vs []*corpus.Vector
	for _, n := range names {
		v := s.vec(n)
		ins = append(ins, &conformpb.DecodeInput{MessageType: v.Message.Type, Payload: v.Frames[0]})
		vs = append(vs, v)
	}
	for i, out := range decodeMessages(t, ins) {
		v := vs[i]
		what := fmt.Sprintf("%s (%s)", v.ID, v.Title)
		switch {
		case v.Message.Undecodable && !out.Failed:
			t.Fail(reports.Evidence{Message: what + ": decoded, but the payload is malformed", Input: corpus.FormatHex(v.Frames[0]), Expected: "a decode failure", Got: out.Json})
		case v.Message.Undecodable:
		case out.Failed:
			t.Fail(reports.Evidence{Message: what + ": failed to decode", Input: corpus.FormatHex(v.Frames[0]), Expected: string(v.Message.JSON), Got: "error: " + out.Error})
		default:
			checkDecoded(t, what, v.Frames[0], v.Message.Type, out.Json, wantMessage(v))
		}
	}
}

// encodeVectors asks the SUT to encode each vector's message and checks the
// bytes: equal to the vector's where exactly one encoding exists, else by
// decoding them with the reference and comparing the messages (§4.6).
func (s *suite) encodeVectors(t *cases.T, names ...string) {
	var ins []*conformpb.EncodeInput
	var vs []*corpus.Vector
	for _, n := range names {
		v := s.vec(n)
		ins = append(ins, &conformpb.EncodeInput{MessageType: v.Message.Type, Json: string(v.Message.JSON)})
		vs = append(vs, v)
	}
	for i, out := range encodeMessages(t, ins) {
		v := vs[i]
		what := fmt.Sprintf("encoding %s (%s)", v.ID, v.Title)
		if out.Failed {
			t.Fail(reports.Evidence{Message: what + ": the encoder failed", Input: string(v.Message.JSON), Got: out.Error})
			continue
		}
		if v.Message.Encoding == "exact" {
			if !bytes.Equal(out.Payload, v.Frames[0]) {
				t.Fail(reports.Evidence{Message: what + ": wrong bytes", Input: string(v.Message.JSON), Expected: corpus.FormatHex(v.Frames[0]), Got: corpus.FormatHex(out.Payload)})
			}
			continue
		}
		got, err := wire.Decode(v.Message.Type, out.Payload)
		if err != nil {
			t.Fail(reports.Evidence{Message: what + ": the bytes do not decode", Input: string(v.Message.JSON), Got: corpus.FormatHex(out.Payload) + " (" + err.Error() + ")"})
			continue
		}
		if want := wantMessage(v); !proto.Equal(got, want) {
			t.Fail(reports.Evidence{Message: what + ": the bytes decode to another value", Input: string(v.Message.JSON), Got: corpus.FormatHex(out.Payload), Diff: cmp.Diff(want, got, protocmp.Transform())})
		}
	}
}

// receiveVectors plays each vector to the SUT's subscriber and checks what it
// delivered, skipped and counted, and whether it closed.
func (s *suite) receiveVectors(t *cases.T, names ...string) {
	var ins []*conformpb.ReadInput
	var vs []*corpus.Vector
	for _, n := range names {
		v := s.vec(n)
		ins = append(ins, input(true, v.Input))
		vs = append(vs, v)
	}
	for i, out := range receiveFrames(t, ins) {
		checkReceived(t, vs[i].ID, ins[i], out, vs[i].Receive, vs[i])
	}
}

// checkReceived compares a subscriber's report with want. Delivered frames
// are compared with the vector's frames decoded by the reference.
func checkReceived(t *cases.T, what string, in *conformpb.ReadInput, out *conformpb.ReceiveOutput, want *corpus.Receive, v *corpus.Vector) {
	var gotActions []string
	for _, e := range out.Events {
		gotActions = append(gotActions, actionName(e.Action))
	}
	type view struct {
		Actions    []string
		Closed     bool
		Unreadable uint64
	}
	w := view{Actions: want.Actions, Closed: want.Closed, Unreadable: want.Unreadable}
	g := view{Actions: gotActions, Closed: out.Closed, Unreadable: out.Unreadable}
	if len(w.Actions) == 0 {
		w.Actions = nil
	}
	if d := cmp.Diff(w, g); d != "" {
		t.Fail(reports.Evidence{Message: what + ": the subscriber's report is wrong", Input: describe(in), Expected: fmt.Sprintf("%+v", w), Got: fmt.Sprintf("%+v", g), Diff: d})
		return
	}
	for i, e := range out.Events {
		if e.Action != conformpb.ReceiveAction_RECEIVE_ACTION_DELIVERED || v == nil || int(e.Frame) >= len(v.Frames) {
			continue
		}
		payload := v.Frames[e.Frame]
		// Canonical JSON cannot carry unknown fields, so the reference's
		// decoding is compared with them discarded.
		want := new(messagepb.Frame)
		if err := (proto.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(payload, want); err != nil {
			continue
		}
		checkDecoded(t, fmt.Sprintf("%s: delivered frame %d (event %d)", what, e.Frame, i), payload, "ranvier.message.v1.Frame", e.FrameJson, want)
	}
}

func actionName(a conformpb.ReceiveAction) string {
	switch a {
	case conformpb.ReceiveAction_RECEIVE_ACTION_DELIVERED:
		return "delivered"
	case conformpb.ReceiveAction_RECEIVE_ACTION_SKIPPED_UNDECODABLE:
		return "skipped_undecodable"
	case conformpb.ReceiveAction_RECEIVE_ACTION_SKIPPED_NO_VARIANT:
		return "skipped_no_variant"
	}
	return a.String()
}
