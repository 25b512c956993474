package doppler

import "fmt"

// CheckPush decides whether PUSH may send a frame of payloadBytes on a
// connection whose max_payload is maxPayload. PUSH never chunks, because the
// chunks of one frame could reach different workers of a work queue, so a
// frame that does not fit in one message is refused with DP_ERR_TOO_LARGE
// rather than split (doppler §4).
func CheckPush(payloadBytes uint64, maxPayload int) error {
	if !NeedsChunking(payloadBytes, maxPayload) {
		return nil
	}
	return &Error{Code: ErrTooLarge, Op: "push",
		Detail: fmt.Sprintf("%d header and payload bytes exceed max_payload %d, and PUSH does not chunk",
			uint64(HeaderSize)+payloadBytes, maxPayload)}
}

// Sender frames outgoing frames for one socket: it owns the socket's
// sequence counter, which starts at 0 and advances once per logical frame
// however many chunks the frame takes (doppler §7), and it knows the
// connection's max_payload.
//
// A Sender is not safe for concurrent use; a socket has one.
type Sender struct {
	// Chunk cuts the frames Publish sends. Nil means [Chunk]; a sender
	// built from other parts sets it before the first send.
	Chunk func(f Frame, maxPayload int, o Order) ([][]byte, error)
	// CheckPush decides whether Send may send a frame. Nil means
	// [CheckPush].
	CheckPush func(payloadBytes uint64, maxPayload int) error

	order      Order
	maxPayload int
	next       uint64
}

// NewSender returns a Sender writing in byte order o for a connection whose
// max_payload is maxPayload; zero or less means the server reported none and
// DefaultMaxPayload applies (doppler §8).
func NewSender(o Order, maxPayload int) *Sender {
	if maxPayload <= 0 {
		maxPayload = DefaultMaxPayload
	}
	return &Sender{order: o, maxPayload: maxPayload}
}

// MaxPayload returns the max_payload the Sender chunks and refuses at.
func (s *Sender) MaxPayload() int { return s.maxPayload }

// NextSequence returns the sequence the next frame sent will carry.
func (s *Sender) NextSequence() uint64 { return s.next }

// Publish stamps f with the next sequence and returns the PUB messages that
// carry it: one when it fits, its chunks when it does not (see [Chunk]).
// A frame that cannot be sent consumes no sequence number.
func (s *Sender) Publish(f Frame) ([][]byte, error) {
	f.Header.Sequence = s.next
	chunk := s.Chunk
	if chunk == nil {
		chunk = Chunk
	}
	msgs, err := chunk(f, s.maxPayload, s.order)
	if err != nil {
		return nil, err
	}
	s.next++
	return msgs, nil
}

// Send stamps f with the next sequence and returns the one message that
// carries it, for the roles that never chunk: PUSH (doppler §4) and REQ/REP.
// A frame that does not fit is refused with DP_ERR_TOO_LARGE and consumes
// no sequence number.
func (s *Sender) Send(f Frame) ([]byte, error) {
	f.Header.Sequence = s.next
	if _, err := f.validate("send"); err != nil {
		return nil, err
	}
	check := s.CheckPush
	if check == nil {
		check = CheckPush
	}
	if err := check(f.Header.PayloadBytes, s.maxPayload); err != nil {
		return nil, withSequence(err, f.Header.Sequence)
	}
	s.next++
	return f.AppendMessage(make([]byte, 0, HeaderSize+len(f.Payload)), s.order), nil
}
