package tlv

import (
	"encoding/binary"
	"fmt"
	"slices"
)

// A Decoder turns the bytes of one frame into a tree of nodes that view those
// bytes. It walks the rope link by link, so a header, a length or a record may
// straddle any segment boundary, and every rope over the same bytes decodes to
// the same tree. Structured payloads are walked with an explicit stack, never Go
// recursion, bounded by MaxDepth.
//
// A Decoder holds only configuration; one value may be used by many goroutines.
// Besides the depth bound, each field names one decision the TLV pins (docs/requirements.md)
// makes for the decoder, so that a decoder that decides it otherwise can be
// built from this one and compared with it; the zero value of each is the
// specified decision.
type Decoder struct {
	// MaxDepth is the deepest nesting accepted, counting the frame's root as
	// depth 1; a deeper TLV refuses the frame with StatusNestingTooDeep. Zero
	// means DefaultMaxDepth.
	MaxDepth int
	// Checks are the checks each header passes once its type and opt bytes
	// are read, in order; the first refusal wins. Nil means HeaderChecks().
	Checks []HeaderCheck
	// Header is the header format. Nil means StandardHeader.
	Header HeaderFormat
	// Verify verifies a trailer's check. Nil means VerifyCheck.
	Verify func(TrailerCheck) error
	// Walk reports whether a TLV's payload is read as its children. Nil
	// means when its opt has PL, whatever its type (the TLV pins (docs/requirements.md) "Type
	// codes"). A structured TLV that is not walked has no children; its
	// payload is bytes.
	Walk func(t Type, opt Opt) bool
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
	if err := d.readHeader(&c, r.Len(), root); err != nil {
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
	if d.walks(root) {
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
		if err := d.readHeader(&c, top.end, child); err != nil {
			return nil, Trailer{}, err
		}
		kids = append(kids, child)
		if d.walks(child) {
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

// walks reports whether n's payload is read as its children.
func (d *Decoder) walks(n *Node) bool {
	if d.Walk == nil {
		return n.opt.PL()
	}
	return d.Walk(n.typ, n.opt)
}

// readHeader reads the header at the cursor into n, whose payload becomes a
// view of the bytes that follow it, leaving the cursor at the payload's first
// byte. limit is where the enclosing span ends: the rope for a root, the
// parent's payload for a child. A check in the trailer is verified here, before
// anything inside the node is interpreted.
func (d *Decoder) readHeader(c *cursor, limit int, n *Node) error {
	start := *c
	avail := limit - c.pos
	if avail < headerSize {
		return malformed(int64(c.pos), "a header needs %d bytes, %d present", headerSize, avail)
	}
	var h [headerSizeLL]byte
	c.read(h[:headerSize])
	t, opt := Type(h[0]), Opt(h[1])
	checks := d.Checks
	if checks == nil {
		checks = headerChecks[:]
	}
	for _, check := range checks {
		if err := check(HeaderAt{Offset: int64(start.pos), Type: t, Opt: opt}); err != nil {
			return err
		}
	}
	// The standard format is called directly, so that h stays on the stack.
	var format HeaderFormat = StandardHeader{}
	if d.Header != nil {
		format = d.Header
	}
	hs := format.Size(opt)
	switch {
	case hs < headerSize || hs > headerSizeLL:
		return malformed(int64(start.pos), "a header format gave a %d-byte header", hs)
	case hs > avail:
		return malformed(int64(start.pos), "an LL header needs %d bytes, %d present", hs, avail)
	}
	c.read(h[headerSize:hs])
	var length uint64
	if d.Header == nil {
		length, _ = StandardHeader{}.Length(h[:hs], avail-hs)
	} else {
		var err error
		if length, err = d.Header.Length(slices.Clone(h[:hs]), avail-hs); err != nil {
			return err
		}
	}
	need := uint64(hs) + length + uint64(opt.TrailerSize())
	if need > uint64(avail) {
		return malformed(int64(start.pos), "%s claims %d payload bytes and a %d-byte trailer; %d bytes present after the header",
			t, length, opt.TrailerSize(), avail-hs)
	}
	*n = Node{typ: t, opt: opt, payload: c.view(int(length))}
	if kind := opt.CRC(); kind != CRCNone {
		w := crcWidths[kind]
		tc := TrailerCheck{Kind: kind, Covered: start.view(int(need) - w), HeaderSize: hs, PayloadLen: int(length)}
		check := start
		check.skip(int(need) - w)
		tc.At = int64(check.pos)
		tc.Check = readLE(&check, w)
		verify := d.Verify
		if verify == nil {
			verify = VerifyCheck
		}
		if err := verify(tc); err != nil {
			return err
		}
	}
	return nil
}

// readLE reads a w-byte little-endian integer (w <= 8) and advances.
func readLE(c *cursor, w int) uint64 {
	var b [8]byte
	c.read(b[:w])
	return binary.LittleEndian.Uint64(b[:])
}
