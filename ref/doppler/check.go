package doppler

import (
	"math/bits"
	"strconv"
)

// Verdict is the outcome of the receiver's header check: Accepted, or which
// of doppler §3's five checks refused the message and why. Every refusal
// maps to DP_ERR_INVALID; the verdict is the detail a conformance case
// compares.
type Verdict uint8

// String returns the verdict's slug, as the corpus and the record spell it.
func (v Verdict) String() string {
	if name := verdictName(v); name != "" {
		return name
	}
	return "Verdict(" + strconv.Itoa(int(v)) + ")"
}

// Code returns OK for Accepted and ErrInvalid for every refusal.
func (v Verdict) Code() Code {
	if v == Accepted {
		return OK
	}
	return ErrInvalid
}

// Check runs the receiver's checks on one whole message as the transport
// delivered it, reading in the receiver's byte order o, and returns the
// verdict. It reads only the header, never outside msg, and never allocates;
// [DecodeHeader] gives the fields of a message it accepted.
func Check(msg []byte, o Order) Verdict {
	return CheckLength(msg, uint64(len(msg)), o)
}

// CheckLength is Check for a message the caller holds only the start of:
// prefix is the message's leading bytes and msgLen is the length the
// transport reports. Only the header is read, so prefix need not reach past
// byte 64; a prefix shorter than the header is judged ShortMessage, as is a
// message shorter than one.
//
// The checks run in doppler §3's order and the first refusal wins:
//
//  1. magic, in o: a byte-swapped match is CrossEndian, anything else
//     NotDoppler;
//  2. version_major == 2, else OtherMajor (any minor is accepted);
//  3. no flag outside FlagKnown, else UnknownFlags;
//  4. payload_bytes == msgLen − 64 − (24 if CHUNKED), else PayloadMismatch,
//     or ShortChunkBlock when a CHUNKED message cannot hold the chunk block;
//  5. a known kind (UnknownKind) and a format that kind allows
//     (UnknownFormat), and num_samples × element size == payload_bytes
//     computed in 128 bits, so a product beyond 64 bits is CountMismatch
//     rather than a wrapped match.
//
// Each field is read only when its check is reached, so a refusal costs
// less than an acceptance.
func CheckLength(prefix []byte, msgLen uint64, o Order) Verdict {
	if msgLen < HeaderSize || len(prefix) < HeaderSize {
		return ShortMessage
	}
	b := prefix[:HeaderSize]
	switch o.u64(b[offMagic:]) {
	case Magic:
	case magicSwapped:
		return CrossEndian
	default:
		return NotDoppler
	}
	if o.u16(b[offVersionMajor:]) != VersionMajor {
		return OtherMajor
	}
	flags := o.u32(b[offFlags:])
	if flags&^FlagKnown != 0 {
		return UnknownFlags
	}
	overhead := uint64(HeaderSize)
	if flags&FlagChunked != 0 {
		overhead += ChunkBlockSize
		if msgLen < overhead {
			return ShortChunkBlock
		}
	}
	payload := o.u64(b[offPayloadBytes:])
	if payload != msgLen-overhead {
		return PayloadMismatch
	}
	kind := Kind(o.u16(b[offKind:]))
	if kind != KindIQ && kind != KindTLM {
		return UnknownKind
	}
	elem := elemSize(kind, Format(o.u16(b[offFormat:])))
	if elem == 0 {
		return UnknownFormat
	}
	if hi, lo := bits.Mul64(o.u64(b[offNumSamples:]), elem); hi != 0 || lo != payload {
		return CountMismatch
	}
	return Accepted
}
