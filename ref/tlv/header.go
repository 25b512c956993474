package tlv

import (
	"encoding/binary"
	"fmt"
	"slices"
)

// HeaderAt is a header as the decoder has read it so far: its type and opt
// bytes, at Offset in the frame.
type HeaderAt struct {
	Offset int64
	Type   Type
	Opt    Opt
}

// A HeaderCheck refuses a header, with a *DecodeError, or returns nil. The
// decoder runs its checks on each header once the type and opt bytes are
// read, before the length.
type HeaderCheck func(h HeaderAt) error

// The header checks of the TLV pins (docs/requirements.md), in the order the decoder applies
// them. Read-only.
var headerChecks = [...]HeaderCheck{CheckType, CheckReservedBits, CheckCRCCode}

// HeaderChecks returns the checks the TLV pins (docs/requirements.md) requires of every header,
// in the order a Decoder with nil Checks applies them: CheckType,
// CheckReservedBits, CheckCRCCode.
func HeaderChecks() []HeaderCheck { return slices.Clone(headerChecks[:]) }

// CheckType refuses type 0x00, which is invalid.
func CheckType(h HeaderAt) error {
	if h.Type == TypeInvalid {
		return malformed(h.Offset, "type 0x00 is invalid")
	}
	return nil
}

// CheckReservedBits refuses an opt byte with a reserved bit set.
func CheckReservedBits(h HeaderAt) error {
	if h.Opt&OptReserved != 0 {
		return malformed(h.Offset+1, "reserved opt bits set (opt 0x%02x)", uint8(h.Opt))
	}
	return nil
}

// CheckCRCCode refuses CRC code 3, which is reserved.
func CheckCRCCode(h HeaderAt) error {
	if h.Opt.CRC() == CRCReserved {
		return malformed(h.Offset+1, "CRC code 3 is reserved (opt 0x%02x)", uint8(h.Opt))
	}
	return nil
}

// A HeaderFormat lays out TLV headers: how long a header is and what its
// length field says. the TLV pins (docs/requirements.md) "Header" reconstructs the format;
// StandardHeader is that reconstruction, the one a Decoder and an Encoder
// use when given none.
type HeaderFormat interface {
	// Size returns the size of a header whose opt byte is opt: 4 to 6.
	Size(opt Opt) int
	// Length returns the payload length that h, a header of Size bytes,
	// claims. room is how many bytes follow the header in the enclosing
	// span; the decoder refuses a length that, with the trailer, exceeds
	// it.
	Length(h []byte, room int) (uint64, error)
	// Append appends the header of a TLV of type t, opt byte opt and a
	// payload of length bytes, Size(opt) bytes long.
	Append(dst []byte, t Type, opt Opt, length int) []byte
}

// StandardHeader is the header of the TLV pins (docs/requirements.md): type, opt, and a u16 LE
// length, or with LL a u32 LE length. The length counts the payload alone.
type StandardHeader struct{}

// Size returns 4, or 6 when opt has LL.
func (StandardHeader) Size(opt Opt) int { return opt.HeaderSize() }

// Length returns the length field of h.
func (StandardHeader) Length(h []byte, _ int) (uint64, error) {
	if Opt(h[1]).LL() {
		return uint64(binary.LittleEndian.Uint32(h[headerLengthAt:])), nil
	}
	return uint64(binary.LittleEndian.Uint16(h[headerLengthAt:])), nil
}

// Append appends the header.
func (StandardHeader) Append(dst []byte, t Type, opt Opt, length int) []byte {
	return appendHeader(dst, t, opt, length)
}

// An Encoder writes a tree's wire form with a header format of its
// choosing. The zero Encoder writes as Node.AppendTo does.
type Encoder struct {
	// Header is the format of every header written. Nil means
	// StandardHeader.
	Header HeaderFormat
}

// AppendTo appends n's wire form to dst, every header — n's and its
// descendants' — written by e.Header from the TLV's type, opt and the
// length of what is written as its payload. Payloads and trailers are
// written as n holds them. The tree is walked without recursion.
func (e Encoder) AppendTo(dst []byte, n *Node) []byte {
	if e.Header == nil {
		return n.AppendTo(dst)
	}
	type open struct {
		n    *Node
		at   int // where its header starts in dst
		next int // its next child
	}
	start := func(n *Node) open {
		o := open{n: n, at: len(dst)}
		dst = append(dst, make([]byte, e.Header.Size(n.opt))...)
		if len(n.children) == 0 {
			dst = n.payload.AppendTo(dst)
		}
		return o
	}
	stack := []open{start(n)}
	for len(stack) > 0 {
		top := &stack[len(stack)-1]
		if top.next < len(top.n.children) {
			top.next++
			stack = append(stack, start(top.n.children[top.next-1]))
			continue
		}
		hs := e.Header.Size(top.n.opt)
		head := e.Header.Append(nil, top.n.typ, top.n.opt, len(dst)-top.at-hs)
		if len(head) != hs {
			panic(fmt.Sprintf("tlv: header format wrote %d bytes of a %d-byte header", len(head), hs))
		}
		copy(dst[top.at:], head)
		dst = top.n.trailer.AppendTo(dst)
		stack = stack[:len(stack)-1]
	}
	return dst
}
