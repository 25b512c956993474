package wire

import (
	"encoding/binary"
	"math"
)

// Framing is how a byte stream is cut into frames: the byte order of the
// length prefix and the largest payload a frame may carry. ranvier-wire
// fixes both, big-endian (§1.2) and MaxPayload (§2); the zero Framing is
// that, and it is what every function of this package that takes no Framing
// uses. Another Framing describes an implementation that decided
// otherwise, so that it can be built from this one and compared with it.
type Framing struct {
	// Order is the byte order of the length prefix. Nil means big-endian.
	Order binary.ByteOrder
	// Ceiling is the largest payload read or written. Zero means
	// MaxPayload; math.MaxUint32 or more refuses nothing a prefix can
	// claim.
	Ceiling uint64
}

// ceiling returns the effective ceiling.
func (f Framing) ceiling() uint64 {
	if f.Ceiling == 0 {
		return MaxPayload
	}
	return f.Ceiling
}

// prefix reads a length prefix.
func (f Framing) prefix(b []byte) uint64 {
	if f.Order == nil {
		return uint64(binary.BigEndian.Uint32(b))
	}
	return uint64(f.Order.Uint32(b))
}

// AppendFrame appends the frame carrying payload — a length prefix, then
// the payload — to dst and returns the extended slice. A payload above the
// ceiling is refused with a *PayloadTooLargeError and dst is returned
// unchanged: a writer that refuses writes nothing (ranvier-wire §2).
func (f Framing) AppendFrame(dst, payload []byte) ([]byte, error) {
	if n := uint64(len(payload)); n > f.ceiling() || n > math.MaxUint32 {
		return dst, &PayloadTooLargeError{Size: n, Ceiling: f.Ceiling}
	}
	var prefix [PrefixLen]byte
	if f.Order == nil {
		binary.BigEndian.PutUint32(prefix[:], uint32(len(payload)))
	} else {
		f.Order.PutUint32(prefix[:], uint32(len(payload)))
	}
	return append(append(dst, prefix[:]...), payload...), nil
}
