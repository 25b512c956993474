package tlv

import (
	"encoding/binary"
	"fmt"
)

// A Decoder turns the bytes of one frame into a tree of nodes that view those
// bytes. It walks the rope link by link, so a header, a length or a record may
// straddle any segment boundary, and every rope over the same bytes decodes to
// the same tree. Structured payloads are walked with an explicit stack, never Go
// recursion, bounded by MaxDepth.
//
// A Decoder holds only configuration; one value may be used by many goroutines.
type Decoder struct {
	// MaxDepth is the deepest nesting accepted, counting the frame's root as
	// depth 1; a deeper TLV refuses the frame with StatusNestingTooDeep. Zero
	// means DefaultMaxDepth.
	MaxDepth int
}

// A Trailer is what a frame carried after its payload, as read at ingress.
type Trailer struct {
	TSWidth   int    // timestamp width in bytes: 0, 4, 6 or 8
	Timestamp uint64 // the timestamp's bytes, little-endian, as received
	CRC       CRC    // the check kind
	Check     uint64 // the check's bytes, little-endian, as received
}

// Decode decodes one frame with the default Decoder. See Decoder.Decode.
func Decode(r Rope) (*Node, error) {
	var d Decoder
	return d.Decode(r)
}

// Decode decodes r, which must hold exactly one frame: header, payload and
// trailer. The trailer is validated and stripped (the returned root has TS and
// CRC clear in its opt), as at ingress; the payload is never touched. Trailers of
// children are validated too, and kept, because they are the parent's payload.
//
// Decode refuses, with a *DecodeError, a frame that is truncated or has bytes
// after it, a header of type 0x00, a reserved opt bit, CRC code 3, a child that
// overruns its parent, a check that does not match, and nesting deeper than
// MaxDepth. A claimed length beyond the bytes present is refused before anything
// is allocated for it.
func (d *Decoder) Decode(r Rope) (*Node, error) {
	n, _, err := d.DecodeFrame(r)
	return n, err
}

// DecodeFrame is Decode, and also returns the trailer it stripped.
func (d *Decoder) DecodeFrame(r Rope) (*Node, Trailer, error) {
	maxDepth := d.MaxDepth
	if maxDepth <= 0 {
		maxDepth = DefaultMaxDepth
	}
	var a arena
	c := r.cursor()
	root := a.node()
	if err := readHeader(&c, r.Len(), root); err != nil {
		return nil, Trailer{}, err
	}
	if end := c.pos + root.payload.Len() + root.opt.TrailerSize(); end != r.Len() {
		return nil, Trailer{}, malformed(int64(end), "%d bytes follow the frame", r.Len()-end)
	}

	// An open structured node: its children are read until the cursor reaches
	// end, the end of its payload, and collected on kids from first on.
	type open struct {
		n          *Node
		end, first int
	}
	var stack []open
	var kids []*Node
	if root.opt.PL() {
		stack = append(stack, open{root, c.pos + root.payload.Len(), 0})
	} else {
		c.skip(root.payload.Len())
	}
	for len(stack) > 0 {
		top := &stack[len(stack)-1]
		if c.pos == top.end {
			top.n.children = a.children(kids[top.first:])
			kids = kids[:top.first]
			if top.n != root {
				top.n.trailer = c.view(top.n.opt.TrailerSize())
				c.skip(top.n.trailer.Len())
			}
			stack = stack[:len(stack)-1]
			continue
		}
		if len(stack)+1 > maxDepth {
			return nil, Trailer{}, &DecodeError{Status: StatusNestingTooDeep, Offset: int64(c.pos),
				Reason: fmt.Sprintf("a TLV at depth %d exceeds the bound of %d", len(stack)+1, maxDepth)}
		}
		child := a.node()
		if err := readHeader(&c, top.end, child); err != nil {
			return nil, Trailer{}, err
		}
		kids = append(kids, child)
		if child.opt.PL() {
			stack = append(stack, open{child, c.pos + child.payload.Len(), len(kids)})
			continue
		}
		c.skip(child.payload.Len())
		child.trailer = c.view(child.opt.TrailerSize())
		c.skip(child.trailer.Len())
	}

	// Ingress: the root's trailer is read for the caller and stripped.
	var tr Trailer
	tr.TSWidth, tr.CRC = root.opt.TSWidth(), root.opt.CRC()
	tr.Timestamp = readLE(&c, tr.TSWidth)
	tr.Check = readLE(&c, crcWidths[tr.CRC])
	root.opt &^= OptTS | OptCRC
	return root, tr, nil
}

// An arena hands out the nodes and child lists of one decoded tree from a few
// chunks rather than one allocation each. Chunks grow with the tree, so what a
// decode allocates follows the number of TLVs the input holds (at most one per
// 4 bytes), never a length it claims.
type arena struct {
	nodes []Node
	ptrs  []*Node
}

const arenaMaxChunk = 256

func (a *arena) node() *Node {
	if len(a.nodes) == cap(a.nodes) {
		a.nodes = make([]Node, 0, min(max(8, 2*cap(a.nodes)), arenaMaxChunk))
	}
	a.nodes = a.nodes[:len(a.nodes)+1]
	return &a.nodes[len(a.nodes)-1]
}

// children returns a copy of kids with its own backing, nil when empty. The
// copy's capacity is its length, so an append by a caller cannot reach a
// neighbour's list.
func (a *arena) children(kids []*Node) []*Node {
	n := len(kids)
	if n == 0 {
		return nil
	}
	if cap(a.ptrs)-len(a.ptrs) < n {
		a.ptrs = make([]*Node, 0, max(n, min(max(16, 2*cap(a.ptrs)), arenaMaxChunk)))
	}
	l := len(a.ptrs)
	a.ptrs = append(a.ptrs, kids...)
	return a.ptrs[l : l+n : l+n]
}

// readHeader reads the header at the cursor into n, whose payload becomes a
// view of the bytes that follow it, leaving the cursor at the payload's first
// byte. limit is where the enclosing span ends: the rope for a root, the
// parent's payload for a child. A check in the trailer is verified here, before
// anything inside the node is interpreted.
func readHeader(c *cursor, limit int, n *Node) error {
	start := *c
	avail := limit - c.pos
	if avail < headerSize {
		return malformed(int64(c.pos), "a header needs %d bytes, %d present", headerSize, avail)
	}
	var h [headerSizeLL]byte
	c.read(h[:headerSize])
	t, opt := Type(h[0]), Opt(h[1])
	switch {
	case t == TypeInvalid:
		return malformed(int64(start.pos), "type 0x00 is invalid")
	case opt&OptReserved != 0:
		return malformed(int64(start.pos+1), "reserved opt bits set (opt 0x%02x)", uint8(opt))
	case opt.CRC() == CRCReserved:
		return malformed(int64(start.pos+1), "CRC code 3 is reserved (opt 0x%02x)", uint8(opt))
	}
	var length uint64
	if opt.LL() {
		if avail < headerSizeLL {
			return malformed(int64(start.pos), "an LL header needs %d bytes, %d present", headerSizeLL, avail)
		}
		c.read(h[headerSize:headerSizeLL])
		length = uint64(binary.LittleEndian.Uint32(h[headerLengthAt:]))
	} else {
		length = uint64(binary.LittleEndian.Uint16(h[headerLengthAt:]))
	}
	need := uint64(opt.HeaderSize()) + length + uint64(opt.TrailerSize())
	if need > uint64(avail) {
		return malformed(int64(start.pos), "%s claims %d payload bytes and a %d-byte trailer; %d bytes present after the header",
			t, length, opt.TrailerSize(), avail-opt.HeaderSize())
	}
	*n = Node{typ: t, opt: opt, payload: c.view(int(length))}
	if opt.CRC() != CRCNone {
		if err := verifyCRC(start, int(need), opt.CRC()); err != nil {
			return err
		}
	}
	return nil
}

// verifyCRC checks the frame of size bytes at c, whose trailer ends in a check
// of the given kind covering every byte before it.
func verifyCRC(c cursor, size int, kind CRC) error {
	w := crcWidths[kind]
	covered := c.view(size - w)
	want := checksum(kind, covered)
	c.skip(size - w)
	got := readLE(&c, w)
	if got != want {
		return &DecodeError{Status: StatusCRCMismatch, Offset: int64(c.pos - w),
			Reason: fmt.Sprintf("%s is 0x%0*x, the bytes give 0x%0*x", kind, 2*w, got, 2*w, want)}
	}
	return nil
}

// readLE reads a w-byte little-endian integer (w <= 8) and advances.
func readLE(c *cursor, w int) uint64 {
	var b [8]byte
	c.read(b[:w])
	return binary.LittleEndian.Uint64(b[:])
}
