package wire

import (
	messagepb "github.com/conform-suite/conform/proto/ranvier/message/v1"
)

// Action is what a data-plane subscriber did with one frame.
type Action int

const (
	// Delivered: the frame decoded as a Frame with a variant set.
	Delivered Action = iota + 1
	// SkippedUndecodable: the payload did not decode; the stream is still
	// aligned, so the frame is skipped and the connection kept (§6.3).
	SkippedUndecodable
	// SkippedNoVariant: a well-formed Frame with no known variant, such as
	// the empty frame 00 00 00 00 or a variant from a later version (§6.4,
	// §7.3).
	SkippedNoVariant
)

// String returns the action's name as the conform record spells it.
func (a Action) String() string {
	switch a {
	case Delivered:
		return "delivered"
	case SkippedUndecodable:
		return "skipped_undecodable"
	case SkippedNoVariant:
		return "skipped_no_variant"
	}
	return "unknown"
}

// An Event is the subscriber's verdict on one frame of its connection.
type Event struct {
	// Index counts the frames of the connection from 0.
	Index  uint64
	Action Action
	// Frame is the decoded frame, set when Action is Delivered.
	Frame *messagepb.Frame
}

// Subscriber is the receive step of a data-plane subscriber, after its
// Request has been sent (ranvier-wire §4.1). Every frame is delivered,
// skipped, or — on a framing error — the connection is closed; the stream is
// never resynchronised (§6.2).
//
// Skipped frames are counted per connection as unreadable, as
// ranvier-streams §3.6a requires and reconstructed§contradictions decides.
type Subscriber struct {
	// Reader splits the connection into frames. Nil means a fresh *Reader.
	Reader FrameReader
	// Decode decodes one payload as a Frame. Nil means DecodeFrame.
	Decode func(payload []byte) (*messagepb.Frame, error)

	next       uint64
	unreadable uint64
	closed     bool // by a framing error
	ended      bool // by end of stream
}

// Receive feeds bytes that arrived on the connection and calls emit for each
// frame they complete, in order. After a framing error Receive closes the
// connection and returns the error; later calls do nothing.
func (s *Subscriber) Receive(p []byte, emit func(Event)) error {
	if s.closed || s.ended {
		return nil
	}
	if s.Reader == nil {
		s.Reader = new(Reader)
	}
	s.Reader.Write(p)
	for {
		payload, ok, err := s.Reader.Next()
		if err != nil {
			s.closed = true
			return err
		}
		if !ok {
			return nil
		}
		emit(s.classify(payload))
	}
}

func (s *Subscriber) classify(payload []byte) Event {
	ev := Event{Index: s.next}
	s.next++
	decode := s.Decode
	if decode == nil {
		decode = DecodeFrame
	}
	switch f, err := decode(payload); {
	case err != nil:
		ev.Action = SkippedUndecodable
		s.unreadable++
	case f.GetPayload() == nil:
		ev.Action = SkippedNoVariant
		s.unreadable++
	default:
		ev.Action = Delivered
		ev.Frame = f
	}
	return ev
}

// End is called when the connection reaches end of stream. End of stream is
// the connection ending, not an error (ranvier-wire §4.7); a truncated tail
// is dropped undelivered (§1.3). End reports the truncation for the record.
func (s *Subscriber) End() error {
	if s.closed || s.ended {
		return nil
	}
	s.ended = true
	if s.Reader == nil {
		return nil
	}
	return s.Reader.End()
}

// Closed reports whether the subscriber closed the connection because of a
// framing error.
func (s *Subscriber) Closed() bool { return s.closed }

// Unreadable returns the number of frames skipped on this connection.
func (s *Subscriber) Unreadable() uint64 { return s.unreadable }
