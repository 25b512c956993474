package wire_test

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/conform-suite/conform/corpus"
	messagepb "github.com/conform-suite/conform/proto/ranvier/message/v1"
	"github.com/conform-suite/conform/ref/wire"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/proto"
)

// receive feeds in to s in chunks of at most size bytes (all at once for
// size <= 0) and returns the actions emitted and the first error.
func receive(s *wire.Subscriber, in []byte, size int) (events []wire.Event, err error) {
	if size <= 0 {
		size = len(in) + 1
	}
	for len(in) > 0 {
		n := min(size, len(in))
		if e := s.Receive(in[:n], func(ev wire.Event) { events = append(events, ev) }); e != nil && err == nil {
			err = e
		}
		in = in[n:]
	}
	return events, err
}

func actions(events []wire.Event) []string {
	var out []string
	for _, ev := range events {
		out = append(out, ev.Action.String())
	}
	return out
}

var (
	emptyFrame       = h("00 00 00 00")
	undecodableFrame = cat(prefix(4), h("12 10 09 01")) // §7.5: ends mid-field
	unknownVariant   = cat(prefix(2), h("3a 00"))       // §7.3
	announceFrame    = cat(prefix(5), h("0a 03 0a 01 73"))
	tooLarge         = h("01 00 00 01")
)

// TestSubscriberTable pins the receive step of ranvier-wire §4.1, §6.2,
// §6.3 and §6.4, for the input whole and split at every size up to 7.
func TestSubscriberTable(t *testing.T) {
	tests := []struct {
		name       string
		in         []byte
		actions    []string
		tooLarge   bool
		unreadable uint64
		atEnd      error
	}{
		{name: "§4.1/delivers a sample", in: sampleFrame, actions: []string{"delivered"}},
		{name: "§4.2/delivers an announcement", in: announceFrame, actions: []string{"delivered"}},
		{name: "§6.3/skips an undecodable frame and keeps reading", in: cat(undecodableFrame, sampleFrame),
			actions: []string{"skipped_undecodable", "delivered"}, unreadable: 1},
		{name: "§6.4/skips the empty frame", in: cat(emptyFrame, sampleFrame),
			actions: []string{"skipped_no_variant", "delivered"}, unreadable: 1},
		{name: "§7.3/skips an unknown variant", in: cat(unknownVariant, sampleFrame, unknownVariant),
			actions: []string{"skipped_no_variant", "delivered", "skipped_no_variant"}, unreadable: 2},
		{name: "§6.2/closes on TooLarge", in: tooLarge, tooLarge: true},
		{name: "§6.2/delivers, then closes on TooLarge and ignores the rest", in: cat(sampleFrame, tooLarge, sampleFrame, sampleFrame),
			actions: []string{"delivered"}, tooLarge: true},
		{name: "§6.2/counted frames before the close stay counted", in: cat(emptyFrame, undecodableFrame, tooLarge, emptyFrame),
			actions: []string{"skipped_no_variant", "skipped_undecodable"}, tooLarge: true, unreadable: 2},
		{name: "§1.3/a truncated tail is dropped", in: cat(sampleFrame, sampleFrame[:9]),
			actions: []string{"delivered"}, atEnd: wire.ErrTruncated},
		{name: "§1.3/a bare prefix at the end is dropped", in: cat(sampleFrame, h("00 00 00 00 00 00")),
			actions: []string{"delivered", "skipped_no_variant"}, unreadable: 1, atEnd: wire.ErrTruncated},
		{name: "§4.7/end of stream at a boundary is clean", in: cat(sampleFrame, emptyFrame),
			actions: []string{"delivered", "skipped_no_variant"}, unreadable: 1},
	}
	for _, tt := range tests {
		for size := 0; size <= 7; size++ {
			name := fmt.Sprintf("%s/chunks of %d", tt.name, size)
			var s wire.Subscriber
			events, err := receive(&s, tt.in, size)
			if diff := cmp.Diff(tt.actions, actions(events)); diff != "" {
				t.Errorf("%s: actions (-want +got):\n%s", name, diff)
			}
			for i, ev := range events {
				if ev.Index != uint64(i) {
					t.Errorf("%s: event %d has Index %d", name, i, ev.Index)
				}
				if (ev.Action == wire.Delivered) != (ev.Frame != nil) || (ev.Frame != nil && ev.Frame.GetPayload() == nil) {
					t.Errorf("%s: event %d is %v with frame %v", name, i, ev.Action, ev.Frame)
				}
			}
			var tl *wire.TooLargeError
			if tt.tooLarge != errors.As(err, &tl) || (tt.tooLarge && tl.Claimed != 16777217) {
				t.Errorf("%s: Receive err %v, TooLarge wanted: %v", name, err, tt.tooLarge)
			}
			if !tt.tooLarge && err != nil {
				t.Errorf("%s: Receive err %v", name, err)
			}
			if s.Closed() != tt.tooLarge {
				t.Errorf("%s: Closed() = %v", name, s.Closed())
			}
			if s.Unreadable() != tt.unreadable {
				t.Errorf("%s: Unreadable() = %d, want %d", name, s.Unreadable(), tt.unreadable)
			}
			end := s.End()
			if tt.tooLarge {
				if end != nil {
					t.Errorf("%s: End() after close = %v, want nil: the connection is already closed", name, end)
				}
			} else if !errors.Is(end, tt.atEnd) || (tt.atEnd == nil && end != nil) {
				t.Errorf("%s: End() = %v, want %v", name, end, tt.atEnd)
			}
			// Nothing is delivered after the connection has closed or ended.
			more, err := receive(&s, cat(sampleFrame, sampleFrame), size)
			if len(more) != 0 || err != nil {
				t.Errorf("%s: after End, Receive emitted %v, %v", name, actions(more), err)
			}
			if err := s.End(); err != nil {
				t.Errorf("%s: second End() = %v", name, err)
			}
		}
	}
}

// TestSubscriberDeliversTheFrame: the delivered Frame is the decoded
// message and owns its bytes, so it survives later Receives that reuse the
// reader's buffer.
func TestSubscriberDeliversTheFrame(t *testing.T) {
	var s wire.Subscriber
	var got []*messagepb.Frame
	emit := func(ev wire.Event) { got = append(got, ev.Frame) }
	s.Receive(sampleFrame, emit)
	other := cat(prefix(5), h("12 03 1a 01 42"))
	for i := 0; i < 10; i++ {
		s.Receive(other, emit)
	}
	want := &messagepb.Frame{Payload: &messagepb.Frame_Sample{Sample: wantSample}}
	if !proto.Equal(got[0], want) {
		t.Errorf("first frame now %v, want %v", got[0], want)
	}
	if v := got[10].GetSample().GetValues(); !bytes.Equal(v, []byte("B")) {
		t.Errorf("last frame values %q", v)
	}
}

// TestSubscriberComposes: the receive step runs over any FrameReader and
// decoder, such as a binding's.
func TestSubscriberComposes(t *testing.T) {
	var calls [][]byte
	s := wire.Subscriber{
		Reader: new(wire.Reader),
		Decode: func(p []byte) (*messagepb.Frame, error) {
			calls = append(calls, bytes.Clone(p))
			if len(p) == 0 {
				return nil, errors.New("refusing empty")
			}
			return wire.DecodeFrame(p)
		},
	}
	events, err := receive(&s, cat(emptyFrame, sampleFrame), 1)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"skipped_undecodable", "delivered"}, actions(events)); diff != "" {
		t.Errorf("actions (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([][]byte{{}, samplePayload}, calls, bytesEqual); diff != "" {
		t.Errorf("decoder saw (-want +got):\n%s", diff)
	}
}

// TestSubscriberEndBeforeAnyBytes: a connection that ends before a byte
// arrived ended cleanly.
func TestSubscriberEndBeforeAnyBytes(t *testing.T) {
	var s wire.Subscriber
	if err := s.End(); err != nil || s.Closed() || s.Unreadable() != 0 {
		t.Errorf("End() = %v, closed %v", err, s.Closed())
	}
}

// TestSubscriberCorpusChunked replays every golden vector's receive step
// byte by byte: the verdicts must not depend on how the bytes arrive (§1.3).
func TestSubscriberCorpusChunked(t *testing.T) {
	for _, v := range corpus.MustWire().All() {
		if v.Receive == nil {
			continue
		}
		for _, size := range []int{1, 2, 3} {
			var s wire.Subscriber
			events, _ := receive(&s, v.Input, size)
			s.End()
			want := v.Receive.Actions
			if len(want) == 0 {
				want = nil
			}
			if diff := cmp.Diff(want, actions(events)); diff != "" {
				t.Errorf("%s, chunks of %d: actions (-want +got):\n%s", v.ID, size, diff)
			}
			if s.Closed() != v.Receive.Closed || s.Unreadable() != v.Receive.Unreadable {
				t.Errorf("%s, chunks of %d: closed %v unreadable %d, want %v and %d",
					v.ID, size, s.Closed(), s.Unreadable(), v.Receive.Closed, v.Receive.Unreadable)
			}
		}
	}
}

// TestActionString: the names the conform record uses.
func TestActionString(t *testing.T) {
	for a, want := range map[wire.Action]string{
		wire.Delivered:          "delivered",
		wire.SkippedUndecodable: "skipped_undecodable",
		wire.SkippedNoVariant:   "skipped_no_variant",
		0:                       "unknown",
		99:                      "unknown",
	} {
		if got := a.String(); got != want {
			t.Errorf("Action(%d).String() = %q, want %q", int(a), got, want)
		}
	}
}

// TestSubscriberNothingAfterEnd: §1.3, §4.7 — once the connection has
// reached end of stream, nothing more is received, whether or not any byte
// arrived before End. (Subscriber.End returns early when no Reader has been
// created yet, without recording that the stream ended, so a Receive after
// an End on a connection that carried nothing still delivers frames.)
func TestSubscriberNothingAfterEnd(t *testing.T) {
	for _, before := range [][]byte{nil, sampleFrame} {
		var s wire.Subscriber
		if len(before) > 0 {
			receive(&s, before, 0)
		}
		if err := s.End(); err != nil {
			t.Fatalf("End() = %v", err)
		}
		events, err := receive(&s, sampleFrame, 0)
		if len(events) != 0 || err != nil {
			t.Errorf("after %d bytes and End, Receive emitted %v, %v; want nothing", len(before), actions(events), err)
		}
	}
}
