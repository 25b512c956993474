package doppler

import "fmt"

// Frame is one logical frame: a header and its payload. A frame the
// Reassembler delivers is never chunked; its header carries the totals.
type Frame struct {
	Header  Header
	Payload []byte
}

// NewFrame returns a frame of type t carrying payload, with the header a
// conforming sender of byte order o writes (see [NewHeader]) and the counts
// set from the payload. The payload is not copied. It fails when the payload
// is not a whole number of elements.
func NewFrame(t Type, o Order, payload []byte) (Frame, error) {
	if !t.Valid() {
		return Frame{}, &Error{Code: ErrInvalid, Op: "new frame", Detail: fmt.Sprintf("unknown type %v", t)}
	}
	elem := t.ElemSize()
	if len(payload)%elem != 0 {
		return Frame{}, &Error{Code: ErrInvalid, Op: "new frame",
			Detail: fmt.Sprintf("%d payload bytes is not a whole number of %d-byte %v elements", len(payload), elem, t)}
	}
	h := NewHeader(t, o)
	h.NumSamples = uint64(len(payload) / elem)
	h.PayloadBytes = uint64(len(payload))
	return Frame{Header: h, Payload: payload}, nil
}

// AppendMessage appends f as one unchunked message — the header in byte
// order o, then the payload — to dst. The header is written as given, so a
// test can encode a frame a receiver must refuse.
func (f Frame) AppendMessage(dst []byte, o Order) []byte {
	dst = AppendHeader(dst, o, f.Header)
	return append(dst, f.Payload...)
}

// validate reports whether f is a frame a conforming sender may put on the
// wire: a known kind and format, no flags (CHUNKED is the sender's to set),
// and counts that describe the payload. It returns the element size.
func (f Frame) validate(op string) (int, error) {
	h := &f.Header
	elem := elemSize(h.Kind, h.Format)
	var detail string
	switch {
	case elem == 0:
		detail = fmt.Sprintf("kind %v with format %v is not a doppler frame type", h.Kind, h.Format)
	case h.Flags != 0:
		detail = fmt.Sprintf("flags %#x set on a logical frame", h.Flags)
	case h.PayloadBytes != uint64(len(f.Payload)):
		detail = fmt.Sprintf("payload_bytes %d but %d payload bytes", h.PayloadBytes, len(f.Payload))
	case h.NumSamples != h.PayloadBytes/elem || h.PayloadBytes%elem != 0:
		detail = fmt.Sprintf("num_samples %d of %d-byte elements does not make payload_bytes %d", h.NumSamples, elem, h.PayloadBytes)
	default:
		return int(elem), nil
	}
	return 0, &Error{Code: ErrInvalid, Op: op, Sequence: h.Sequence, HasSequence: true, Detail: detail}
}
