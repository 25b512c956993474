package corpus_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/conform-suite/conform/corpus"
	"github.com/conform-suite/conform/ref/wire"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"
)

// TestReferenceReproducesWireVectors proves that conform's oracle agrees with
// every golden vector: the frames and verdict of its reader, the decoding
// and encoding of each payload, and its subscriber's receive step.
func TestReferenceReproducesWireVectors(t *testing.T) {
	set, err := corpus.Wire()
	if err != nil {
		t.Fatal(err)
	}
	if len(set.All()) < 30 {
		t.Fatalf("only %d wire vectors", len(set.All()))
	}
	for _, v := range set.All() {
		t.Run(v.ID, func(t *testing.T) {
			checkReader(t, v, false)
			checkReader(t, v, true)
			if v.Message != nil {
				checkMessage(t, v)
			}
			if v.Receive != nil {
				checkReceive(t, v)
			}
		})
	}
}

func checkReader(t *testing.T, v *corpus.Vector, eos bool) {
	var r wire.Reader
	r.Write(v.Input)
	var got [][]byte
	var err error
	for {
		p, ok, e := r.Next()
		if e != nil {
			err = e
			break
		}
		if !ok {
			break
		}
		got = append(got, bytes.Clone(p))
	}
	var want [][]byte
	for _, f := range v.Frames {
		want = append(want, f)
	}
	if diff := cmp.Diff(want, got, cmp.Comparer(bytes.Equal)); diff != "" {
		t.Errorf("frames (-want +got):\n%s", diff)
	}
	var tooLarge *wire.TooLargeError
	switch v.End {
	case "too_large":
		if !errors.As(err, &tooLarge) || tooLarge.Claimed != v.Claimed {
			t.Errorf("end: got %v, want TooLarge claiming %d", err, v.Claimed)
		}
		return
	case "waiting":
		if err != nil || r.Buffered() == 0 {
			t.Errorf("end: got err %v with %d buffered, want waiting", err, r.Buffered())
		}
	case "idle":
		if err != nil || r.Buffered() != 0 {
			t.Errorf("end: got err %v with %d buffered, want idle", err, r.Buffered())
		}
	default:
		t.Fatalf("vector end %q unknown", v.End)
	}
	if v.Buffered != nil && uint64(r.Buffered()) != *v.Buffered {
		t.Errorf("buffered: got %d, want %d", r.Buffered(), *v.Buffered)
	}
	if !eos {
		return
	}
	end := r.End()
	switch v.AtEOS {
	case "closed":
		if end != nil {
			t.Errorf("at end of stream: got %v, want a clean close", end)
		}
	case "truncated":
		if !errors.Is(end, wire.ErrTruncated) {
			t.Errorf("at end of stream: got %v, want ErrTruncated", end)
		}
	default:
		t.Errorf("vector at_eos %q unknown", v.AtEOS)
	}
}

func checkMessage(t *testing.T, v *corpus.Vector) {
	mt, err := wire.MessageType(v.Message.Type)
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Frames) == 0 {
		t.Fatal("a message vector needs a frame")
	}
	got, err := wire.Decode(v.Message.Type, v.Frames[0])
	switch {
	case v.Message.Open:
		return
	case v.Message.Undecodable:
		if err == nil {
			t.Errorf("decoded a malformed payload as %v", got)
		}
		return
	case err != nil:
		t.Fatalf("decode: %v", err)
	}
	want := mt.New().Interface()
	if err := protojson.Unmarshal(v.Message.JSON, want); err != nil {
		t.Fatalf("vector JSON: %v", err)
	}
	known := mt.New().Interface()
	if err := (proto.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(v.Frames[0], known); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, known, protocmp.Transform()); diff != "" {
		t.Errorf("decoded (-want +got):\n%s", diff)
	}
	enc, err := wire.Encode(want)
	if err != nil {
		t.Fatal(err)
	}
	switch v.Message.Encoding {
	case "exact":
		if !bytes.Equal(enc, v.Frames[0]) {
			t.Errorf("encoded % x, want % x", enc, []byte(v.Frames[0]))
		}
	case "roundtrip":
		back, err := wire.Decode(v.Message.Type, enc)
		if err != nil || !proto.Equal(back, want) {
			t.Errorf("round trip: %v, %v", back, err)
		}
	case "none", "":
	default:
		t.Errorf("encoding %q unknown", v.Message.Encoding)
	}
}

func checkReceive(t *testing.T, v *corpus.Vector) {
	var s wire.Subscriber
	var actions []string
	s.Receive(v.Input, func(ev wire.Event) { actions = append(actions, ev.Action.String()) })
	s.End()
	want := v.Receive.Actions
	if len(want) == 0 {
		want = nil
	}
	if diff := cmp.Diff(want, actions); diff != "" {
		t.Errorf("actions (-want +got):\n%s", diff)
	}
	if s.Closed() != v.Receive.Closed || s.Unreadable() != v.Receive.Unreadable {
		t.Errorf("closed %v unreadable %d, want %v and %d", s.Closed(), s.Unreadable(), v.Receive.Closed, v.Receive.Unreadable)
	}
}
