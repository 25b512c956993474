package wire

// A FrameReader turns the bytes of a connection into frames. *Reader is the
// reference implementation; the interface exists so that the subscriber's
// receive step can be composed with another reader, such as a binding's or a
// deliberately broken one.
type FrameReader interface {
	// Write appends bytes that arrived on the connection. It never fails.
	Write(p []byte) (int, error)
	// Next returns the payload of the next complete frame, or ok == false
	// when more bytes are needed. The payload aliases the reader's buffer
	// and is valid only until the next call to Write.
	Next() (payload []byte, ok bool, err error)
	// End is called once, when the stream has ended. It returns nil with
	// nothing buffered and ErrTruncated with part of a frame buffered. A
	// conforming reader yields no frame from Next after End.
	End() error
	// Buffered returns the number of bytes held and not yet yielded.
	Buffered() int
}

// Reader is an incremental Ranvier frame reader (ranvier-wire §1.3).
//
// It accumulates bytes and yields a frame only when the whole frame has
// arrived, so it produces the same frames however the bytes are chunked. Its
// memory is bounded by what has arrived, never by what a prefix claims: after
// every frame has been taken with Next, it holds at most one incomplete
// frame. The zero value is ready to use.
type Reader struct {
	// Framing is how the stream is cut into frames; the zero Framing is
	// ranvier-wire's.
	Framing Framing

	buf []byte // buf[off:] is unconsumed
	off int
	err error // sticky: a TooLarge prefix poisons the stream
}

// Write appends p to the reader's buffer. Consumed bytes are dropped first,
// so that a long-lived connection reuses one buffer rather than growing it.
// After a TooLarge prefix nothing more will be read, so nothing more is held.
func (r *Reader) Write(p []byte) (int, error) {
	if r.err != nil {
		return len(p), nil
	}
	if r.off > 0 {
		n := copy(r.buf, r.buf[r.off:])
		r.buf = r.buf[:n]
		r.off = 0
	}
	r.buf = append(r.buf, p...)
	return len(p), nil
}

// Next returns the next complete frame's payload. It returns ok == false,
// with a nil error, when fewer than four bytes are buffered or the frame's
// payload has not fully arrived: "not yet" is not "wrong" (§6.1). A prefix
// claiming more than the ceiling, MaxPayload, yields a *TooLargeError,
// without allocating.
func (r *Reader) Next() (payload []byte, ok bool, err error) {
	if r.err != nil {
		return nil, false, r.err
	}
	rest := r.buf[r.off:]
	if len(rest) < PrefixLen {
		return nil, false, nil
	}
	n := r.Framing.prefix(rest)
	if n > r.Framing.ceiling() {
		// The stream is lost (§6.2): release what it holds.
		r.err = &TooLargeError{Claimed: n, Ceiling: r.Framing.Ceiling}
		r.buf, r.off = nil, 0
		return nil, false, r.err
	}
	if uint64(len(rest)-PrefixLen) < n {
		return nil, false, nil
	}
	end := PrefixLen + int(n)
	r.off += end
	return rest[PrefixLen:end:end], true, nil
}

// End reports whether the stream may end now. Bytes left buffered are a
// truncated frame, and End reports ErrTruncated rather than delivering them.
func (r *Reader) End() error {
	if r.err != nil {
		return r.err
	}
	if r.Buffered() > 0 {
		return ErrTruncated
	}
	return nil
}

// Buffered returns the number of bytes held and not yet yielded as frames;
// after a TooLarge prefix, none are.
func (r *Reader) Buffered() int { return len(r.buf) - r.off }
