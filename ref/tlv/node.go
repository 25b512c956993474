package tlv

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strings"
)

// PL reports whether the payload is a sequence of child TLVs.
func (o Opt) PL() bool { return o&OptPL != 0 }

// LL reports whether the header is the 6-byte form with a u32 length.
func (o Opt) LL() bool { return o&OptLL != 0 }

// TSWidth returns the width in bytes of the trailer timestamp: 0, 4, 6 or 8.
func (o Opt) TSWidth() int { return tsWidths[(o&OptTS)>>optTSShift] }

// CRC returns the trailer check kind.
func (o Opt) CRC() CRC { return CRC((o & OptCRC) >> optCRCShift) }

// HeaderSize returns the size of the header this opt selects: 4 or 6 bytes.
func (o Opt) HeaderSize() int {
	if o.LL() {
		return headerSizeLL
	}
	return headerSize
}

// TrailerSize returns the size of the trailer this opt announces.
func (o Opt) TrailerSize() int { return o.TSWidth() + crcWidths[o.CRC()] }

// String renders the set flags, such as "PL|LL|TS6|CRC64XZ", or "0".
func (o Opt) String() string {
	var parts []string
	if o.PL() {
		parts = append(parts, "PL")
	}
	if o.LL() {
		parts = append(parts, "LL")
	}
	if w := o.TSWidth(); w != 0 {
		parts = append(parts, fmt.Sprintf("TS%d", w))
	}
	if c := o.CRC(); c != CRCNone {
		parts = append(parts, c.String())
	}
	if r := o & OptReserved; r != 0 {
		parts = append(parts, fmt.Sprintf("reserved(0x%02x)", uint8(r)))
	}
	if len(parts) == 0 {
		return "0"
	}
	return strings.Join(parts, "|")
}

// String names the check kind.
func (c CRC) String() string {
	switch c {
	case CRCNone:
		return "none"
	case CRC32C:
		return "CRC32C"
	case CRC64XZ:
		return "CRC64XZ"
	}
	return fmt.Sprintf("CRC(%d)", uint8(c))
}

// A Node is one TLV: the meaning axis of the graph model. A node holds views,
// never copies: its payload is a rope over the bytes it was decoded from or built
// with. When the node is structured (opt.PL), its children are nodes over the
// same bytes, and the payload rope is always exactly their wire forms end to
// end — the constructors and edits keep that invariant, which is why nodes are
// immutable once built.
//
// A node at rest carries no trailer of its own (the decoder strips the frame's
// trailer at ingress). A child may still carry one inside its parent's payload;
// it is kept verbatim, because it is payload bytes of the parent.
type Node struct {
	typ      Type
	opt      Opt
	payload  Rope
	trailer  Rope
	children []*Node
}

// NewLeaf returns an opaque TLV (PL clear) of type t over payload. The header
// is minimal: LL is set only when the payload is longer than 0xFFFF bytes
// (the TLV pins (docs/requirements.md): a node originating a frame uses LL = 0 when it can).
// payload is shared, not copied. NewLeaf panics if payload exceeds the 32-bit
// length the format can carry.
func NewLeaf(t Type, payload []byte) *Node {
	return NewLeafRope(t, NewRope(payload))
}

// NewLeafRope is NewLeaf over a payload that is already a rope.
func NewLeafRope(t Type, payload Rope) *Node {
	return &Node{typ: t, opt: minimalLL(0, payload.Len()), payload: payload}
}

// NewStruct returns a structured TLV (PL set) of type t whose children are the
// given nodes, with a minimal header. The payload rope links the children's
// wire forms; only their headers are new bytes.
func NewStruct(t Type, children ...*Node) *Node {
	return newStruct(t, OptPL, children)
}

func newStruct(t Type, opt Opt, children []*Node) *Node {
	ropes := make([]Rope, len(children))
	for i, c := range children {
		ropes[i] = c.Rope()
	}
	payload := Concat(ropes...)
	return &Node{
		typ:      t,
		opt:      minimalLL(opt|OptPL, payload.Len()),
		payload:  payload,
		children: append([]*Node(nil), children...),
	}
}

// minimalLL sets or clears LL in opt for a payload of n bytes, as an originator
// does. It panics when n does not fit the format's 32-bit length, because a
// frame that large cannot be written at all.
func minimalLL(opt Opt, n int) Opt {
	if uint64(n) > maxLongLength {
		panic(fmt.Sprintf("tlv: payload of %d bytes exceeds the 32-bit length", n))
	}
	if n > maxShortLength {
		return opt | OptLL
	}
	return opt &^ OptLL
}

// keepLL is minimalLL for a re-emitter: a non-minimal LL it received stays set,
// and LL is set only when the new length no longer fits 16 bits.
func keepLL(opt Opt, n int) Opt {
	if opt.LL() {
		minimalLL(opt, n) // for the 32-bit check
		return opt
	}
	return minimalLL(opt, n)
}

// Type returns the node's type code.
func (n *Node) Type() Type { return n.typ }

// Opt returns the node's opt byte as it is (or would be) written in its header.
func (n *Node) Opt() Opt { return n.opt }

// Payload returns the node's payload, the bytes its length counts.
func (n *Node) Payload() Rope { return n.payload }

// Trailer returns the trailer bytes the node carries inside its parent, empty for
// a node at rest.
func (n *Node) Trailer() Rope { return n.trailer }

// Children returns the node's children, nil for an opaque TLV. The slice belongs
// to the node and must not be modified.
func (n *Node) Children() []*Node { return n.children }

// Size returns the node's wire size: header, payload and trailer.
func (n *Node) Size() int {
	return n.opt.HeaderSize() + n.payload.Len() + n.trailer.Len()
}

// Header returns the node's header bytes.
func (n *Node) Header() []byte {
	return appendHeader(nil, n.typ, n.opt, n.payload.Len())
}

func appendHeader(dst []byte, t Type, opt Opt, length int) []byte {
	dst = append(dst, byte(t), byte(opt))
	if opt.LL() {
		return binary.LittleEndian.AppendUint32(dst, uint32(length))
	}
	return binary.LittleEndian.AppendUint16(dst, uint16(length))
}

// Rope returns the node's wire form as a rope: a fresh header segment linked to
// the payload's and trailer's views. No payload byte is copied.
func (n *Node) Rope() Rope {
	return Concat(NewRope(n.Header()), n.payload, n.trailer)
}

// AppendTo appends the node's wire form to dst and returns the extended slice.
func (n *Node) AppendTo(dst []byte) []byte {
	dst = appendHeader(dst, n.typ, n.opt, n.payload.Len())
	dst = n.payload.AppendTo(dst)
	return n.trailer.AppendTo(dst)
}

// Bytes returns the node's wire form as one new flat slice.
func (n *Node) Bytes() []byte {
	return n.AppendTo(make([]byte, 0, n.Size()))
}

// Equal reports whether two trees are the same: the same type and opt at every
// node, the same shape, and the same leaf payload and trailer bytes, however
// either tree's bytes are split in memory. It walks without recursion, so a
// tree of any depth is safe to compare.
func (n *Node) Equal(m *Node) bool {
	type pair struct{ a, b *Node }
	stack := []pair{{n, m}}
	for len(stack) > 0 {
		p := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		a, b := p.a, p.b
		if a == nil || b == nil {
			if a != b {
				return false
			}
			continue
		}
		if a.typ != b.typ || a.opt != b.opt || len(a.children) != len(b.children) ||
			a.payload.Len() != b.payload.Len() || !a.trailer.Equal(b.trailer) {
			return false
		}
		if !a.opt.PL() && !a.payload.Equal(b.payload) {
			return false
		}
		for i := range a.children {
			stack = append(stack, pair{a.children[i], b.children[i]})
		}
	}
	return true
}

// stringPayloadLimit bounds the payload bytes String prints per leaf, so that a
// diagnostic of a large frame stays readable.
const stringPayloadLimit = 64

// String renders the tree for diagnostics, for example
// `FWD<PL>{OP[01] PATH[03657370…] PATH[…] VALUE[2a]}`. Leaf payloads are printed
// in hex, cut after 64 bytes.
func (n *Node) String() string {
	if n == nil {
		return "<nil>"
	}
	var b strings.Builder
	type frame struct {
		n    *Node
		next int
	}
	stack := []frame{{n: n}}
	for len(stack) > 0 {
		f := &stack[len(stack)-1]
		if f.next == 0 {
			if len(stack) > 1 && stack[len(stack)-2].next > 1 {
				b.WriteByte(' ')
			}
			b.WriteString(f.n.typ.String())
			if f.n.opt != 0 {
				fmt.Fprintf(&b, "<%s>", f.n.opt)
			}
			if !f.n.opt.PL() {
				b.WriteByte('[')
				writeHex(&b, f.n.payload)
				b.WriteByte(']')
			} else {
				b.WriteByte('{')
			}
		}
		if f.n.opt.PL() && f.next < len(f.n.children) {
			f.next++
			stack = append(stack, frame{n: f.n.children[f.next-1]})
			continue
		}
		if f.n.opt.PL() {
			b.WriteByte('}')
		}
		if f.n.trailer.Len() > 0 {
			b.WriteString("+trailer[")
			writeHex(&b, f.n.trailer)
			b.WriteByte(']')
		}
		stack = stack[:len(stack)-1]
	}
	return b.String()
}

func writeHex(b *strings.Builder, r Rope) {
	left := stringPayloadLimit
	for v := range r.Views() {
		if len(v) > left {
			v = v[:left]
		}
		b.WriteString(hex.EncodeToString(v))
		left -= len(v)
		if left == 0 {
			break
		}
	}
	if r.Len() > stringPayloadLimit {
		fmt.Fprintf(b, "…(%d bytes)", r.Len())
	}
}
