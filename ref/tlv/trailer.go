package tlv

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"hash/crc64"
	"slices"
	"time"
)

// checksum computes the check of the given kind over the rope's bytes.
func checksum(kind CRC, r Rope) uint64 {
	switch kind {
	case CRC32C:
		var sum uint32
		for v := range r.Views() {
			sum = crc32.Update(sum, crc32cTable, v)
		}
		return uint64(sum)
	case CRC64XZ:
		var sum uint64
		for v := range r.Views() {
			sum = crc64.Update(sum, crc64xzTable, v)
		}
		return sum
	}
	return 0
}

// Checksum returns the check of the given kind (CRC32C or CRC64XZ) over b, as
// a trailer carries it. It returns 0 for any other kind.
func Checksum(kind CRC, b []byte) uint64 { return checksum(kind, NewRope(b)) }

// Egress describes the trailer a transport attaches when a frame leaves a node.
// The zero Egress attaches none.
type Egress struct {
	// TSWidth is the timestamp width in bytes: 0 (none), 4, 6 or 8.
	TSWidth int
	// CRC is the check to append: CRCNone, CRC32C or CRC64XZ.
	CRC CRC
	// Clock gives the wall clock at egress. It is required when TSWidth is
	// not 0; the codec never reads the system clock itself, so that a frame's
	// bytes are a function of its inputs.
	Clock func() time.Time
}

// opt returns the TS and CRC bits for e, or an error naming what is unusable.
func (e Egress) opt() (Opt, error) {
	code := slices.Index(tsWidths[:], e.TSWidth)
	switch {
	case code < 0:
		return 0, fmt.Errorf("tlv: egress timestamp width %d is none of %v", e.TSWidth, tsWidths)
	case code > 0 && e.Clock == nil:
		return 0, fmt.Errorf("tlv: egress with a %d-byte timestamp needs a Clock", e.TSWidth)
	}
	ts := Opt(code) << optTSShift
	switch e.CRC {
	case CRCNone, CRC32C, CRC64XZ:
	default:
		return 0, fmt.Errorf("tlv: egress check %s cannot be written", e.CRC)
	}
	return ts | Opt(e.CRC)<<optCRCShift, nil
}

// Rope returns n's wire form with a fresh trailer as a rope: a new header, the
// payload's own views, and a new trailer. A trailer n already carried is
// replaced; the payload is never touched. The header keeps n's LL as it is, so
// a non-minimal header a forwarder received is re-emitted as received.
func (e Egress) Rope(n *Node) (Rope, error) {
	bits, err := e.opt()
	if err != nil {
		return Rope{}, err
	}
	opt := n.opt&^(OptTS|OptCRC) | bits
	head := appendHeader(nil, n.typ, opt, n.payload.Len())
	var tail []byte
	if w := opt.TSWidth(); w != 0 {
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], uint64(e.Clock().UnixNano()))
		tail = append(tail, b[:w]...) // truncated to its width: the low bytes
	}
	if kind := opt.CRC(); kind != CRCNone {
		sum := checksum(kind, Concat(NewRope(head), n.payload, NewRope(tail)))
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], sum)
		tail = append(tail, b[:crcWidths[kind]]...)
	}
	return Concat(NewRope(head), n.payload, NewRope(tail)), nil
}

// AppendTo appends n's wire form with a fresh trailer to dst, as Rope does.
func (e Egress) AppendTo(dst []byte, n *Node) ([]byte, error) {
	r, err := e.Rope(n)
	if err != nil {
		return dst, err
	}
	return r.AppendTo(dst), nil
}

// A TrailerCheck is a TLV whose trailer carries a check, as the decoder
// verifies it.
type TrailerCheck struct {
	Kind CRC
	// Covered is what the check covers: the TLV's header, payload and
	// timestamp (the TLV pins (docs/requirements.md) "Trailer").
	Covered Rope
	// HeaderSize and PayloadLen say where the payload lies in Covered.
	HeaderSize, PayloadLen int
	// Check is the check as received, read little-endian.
	Check uint64
	// At is the offset of the check's first byte in the frame.
	At int64
}

// Payload returns the TLV's payload, a part of Covered.
func (c TrailerCheck) Payload() Rope { return c.Covered.Slice(c.HeaderSize, c.HeaderSize+c.PayloadLen) }

// VerifyCheck refuses, with a *DecodeError of StatusCRCMismatch, a check
// that is not the check of the bytes it covers.
func VerifyCheck(c TrailerCheck) error {
	w := crcWidths[c.Kind]
	if want := checksum(c.Kind, c.Covered); c.Check != want {
		return &DecodeError{Status: StatusCRCMismatch, Offset: c.At,
			Reason: fmt.Sprintf("%s is 0x%0*x, the bytes give 0x%0*x", c.Kind, 2*w, c.Check, 2*w, want)}
	}
	return nil
}
