package tlv

import (
	"encoding/binary"
	"fmt"
	"unicode/utf8"
)

// The record layouts of the TLV pins (docs/requirements.md): which children a structured TLV of a
// given type holds, in order. Each record has a Go type, a Node method that
// builds it, and a Decode function that checks a node against the layout.
//
// A layout fault is a *DecodeError with StatusMalformed (StatusPathInvalid for
// a PATH child that is not a valid PATH payload) whose Offset is the byte offset,
// within the record's payload, of the child at fault.

// layoutError reports a fault in child i of record n.
func layoutError(n *Node, i int, format string, args ...any) *DecodeError {
	off := 0
	for _, c := range n.children[:min(i, len(n.children))] {
		off += c.Size()
	}
	return malformed(int64(off), "%s: %s", n.typ, fmt.Sprintf(format, args...))
}

// expectStruct checks that n is a structured TLV of type t.
func expectStruct(n *Node, t Type) error {
	if n == nil {
		return malformed(0, "%s: missing", t)
	}
	if n.typ != t || !n.opt.PL() {
		return malformed(0, "want a structured %s, got %s with opt %s", t, n.typ, n.opt)
	}
	return nil
}

// expectLeaf checks that child i of record n exists and is an opaque TLV of type t.
func expectLeaf(n *Node, i int, t Type) (*Node, error) {
	if i >= len(n.children) {
		return nil, layoutError(n, i, "child %d (%s) is missing", i, t)
	}
	c := n.children[i]
	if c.typ != t || c.opt.PL() {
		return nil, layoutError(n, i, "child %d: want an opaque %s, got %s with opt %s", i, t, c.typ, c.opt)
	}
	return c, nil
}

// expectPath checks that child i of record n is a PATH with a valid payload.
func expectPath(n *Node, i int) (Rope, error) {
	c, err := expectLeaf(n, i, TypePath)
	if err != nil {
		return Rope{}, err
	}
	if err := ValidatePath(c.payload); err != nil {
		de := err.(*DecodeError)
		le := layoutError(n, i, "child %d: %s", i, de.Reason)
		le.Status = StatusPathInvalid
		le.Offset += int64(c.opt.HeaderSize()) + de.Offset
		return Rope{}, le
	}
	return c.payload, nil
}

// NameNode returns a NAME TLV holding s.
func NameNode(s string) *Node { return NewLeaf(TypeName, []byte(s)) }

// decodeName returns the text of child i of n, which must be a NAME.
func decodeName(n *Node, i int) (string, error) {
	c, err := expectLeaf(n, i, TypeName)
	if err != nil {
		return "", err
	}
	s := string(c.payload.Bytes())
	if !utf8.ValidString(s) {
		return "", layoutError(n, i, "child %d: NAME is not valid UTF-8", i)
	}
	return s, nil
}

// A Setting is one pair of a SETTINGS record: a NAME key, then a value TLV.
type Setting struct {
	Key   string
	Value *Node
}

// SettingsNode returns the SETTINGS record holding the given pairs in order.
func SettingsNode(settings ...Setting) *Node {
	kids := make([]*Node, 0, 2*len(settings))
	for _, s := range settings {
		kids = append(kids, NameNode(s.Key), s.Value)
	}
	return NewStruct(TypeSettings, kids...)
}

// DecodeSettings checks n against the SETTINGS layout and returns its pairs.
func DecodeSettings(n *Node) ([]Setting, error) {
	if err := expectStruct(n, TypeSettings); err != nil {
		return nil, err
	}
	if len(n.children)%2 != 0 {
		return nil, layoutError(n, len(n.children)-1, "a key without a value")
	}
	var out []Setting
	for i := 0; i < len(n.children); i += 2 {
		key, err := decodeName(n, i)
		if err != nil {
			return nil, err
		}
		out = append(out, Setting{Key: key, Value: n.children[i+1]})
	}
	return out, nil
}

// A Subscriber is a SUBSCRIBER record: the target PATH, then an optional
// SETTINGS (where delivery_policy lives).
type Subscriber struct {
	Target      Rope      // the target's canonical PATH payload
	HasSettings bool      // whether the SETTINGS child is present
	Settings    []Setting // its pairs, when present
}

// Node returns the SUBSCRIBER record.
func (s Subscriber) Node() *Node {
	kids := []*Node{NewLeafRope(TypePath, s.Target)}
	if s.HasSettings {
		kids = append(kids, SettingsNode(s.Settings...))
	}
	return NewStruct(TypeSubscriber, kids...)
}

// DecodeSubscriber checks n against the SUBSCRIBER layout and returns it.
func DecodeSubscriber(n *Node) (Subscriber, error) {
	var s Subscriber
	if err := expectStruct(n, TypeSubscriber); err != nil {
		return s, err
	}
	target, err := expectPath(n, 0)
	if err != nil {
		return s, err
	}
	s.Target = target
	switch len(n.children) {
	case 1:
	case 2:
		if s.Settings, err = DecodeSettings(n.children[1]); err != nil {
			return s, layoutError(n, 1, "child 1: %v", err)
		}
		s.HasSettings = true
	default:
		return s, layoutError(n, 2, "%d children, at most 2 expected", len(n.children))
	}
	return s, nil
}

// Policy returns the subscription's delivery policy: the delivery_policy setting
// unpacked, or the zero policy when it is absent (absent means all zero).
func (s Subscriber) Policy() (DeliveryPolicy, error) {
	for _, set := range s.Settings {
		if set.Key != KeyDeliveryPolicy {
			continue
		}
		v := set.Value
		if v == nil || v.typ != TypeValue || v.opt.PL() || v.payload.Len() != policyValueSize {
			return DeliveryPolicy{}, malformed(0, "%s must be a VALUE of %d bytes, got %v", KeyDeliveryPolicy, policyValueSize, v)
		}
		var b [policyValueSize]byte
		c := v.payload.cursor()
		c.read(b[:])
		return UnpackDeliveryPolicy(binary.LittleEndian.Uint16(b[:])), nil
	}
	return DeliveryPolicy{}, nil
}

// A Point is a POINT record: the node's NAME, then optionally one VALUE,
// optionally a TIME, then child POINTs.
type Point struct {
	Name     string
	Value    *Node  // the VALUE TLV, nil when absent
	HasTime  bool   // whether a TIME child is present
	Time     uint64 // its nanoseconds, when present
	Children []Point
}

// Node returns the POINT record. Like the decoder it builds deep trees without
// recursion.
func (p *Point) Node() *Node {
	// Visit in pre-order, then build in reverse so every child's node exists
	// before its parent's.
	type item struct {
		p      *Point
		parent int
		kids   []*Node // built children, in reverse order
	}
	items := []item{{p: p, parent: -1}}
	for i := 0; i < len(items); i++ {
		for k := range items[i].p.Children {
			items = append(items, item{p: &items[i].p.Children[k], parent: i})
		}
	}
	var root *Node
	for i := len(items) - 1; i >= 0; i-- {
		it := &items[i]
		kids := []*Node{NameNode(it.p.Name)}
		if it.p.Value != nil {
			kids = append(kids, it.p.Value)
		}
		if it.p.HasTime {
			kids = append(kids, NewLeaf(TypeTime, binary.LittleEndian.AppendUint64(nil, it.p.Time)))
		}
		for k := len(it.kids) - 1; k >= 0; k-- {
			kids = append(kids, it.kids[k])
		}
		n := NewStruct(TypePoint, kids...)
		if it.parent < 0 {
			root = n
		} else {
			items[it.parent].kids = append(items[it.parent].kids, n)
		}
	}
	return root
}

// DecodePoint checks n against the POINT layout, at every level, and returns it.
func DecodePoint(n *Node) (Point, error) {
	var root Point
	type job struct {
		n *Node
		p *Point
	}
	stack := []job{{n, &root}}
	for len(stack) > 0 {
		j := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if err := expectStruct(j.n, TypePoint); err != nil {
			return Point{}, err
		}
		name, err := decodeName(j.n, 0)
		if err != nil {
			return Point{}, err
		}
		j.p.Name = name
		i := 1
		if i < len(j.n.children) && j.n.children[i].typ == TypeValue {
			if j.p.Value, err = expectLeaf(j.n, i, TypeValue); err != nil {
				return Point{}, err
			}
			i++
		}
		if i < len(j.n.children) && j.n.children[i].typ == TypeTime {
			t, err := expectLeaf(j.n, i, TypeTime)
			if err != nil {
				return Point{}, err
			}
			if t.payload.Len() != timeValueSize {
				return Point{}, layoutError(j.n, i, "TIME holds %d bytes, want %d", t.payload.Len(), timeValueSize)
			}
			j.p.HasTime, j.p.Time = true, leU64(t.payload)
			i++
		}
		if rest := j.n.children[i:]; len(rest) > 0 {
			j.p.Children = make([]Point, len(rest))
			for k, c := range rest {
				if c.typ != TypePoint {
					return Point{}, layoutError(j.n, i+k, "child %d: want a POINT, got %s", i+k, c.typ)
				}
				stack = append(stack, job{c, &j.p.Children[k]})
			}
		}
	}
	return root, nil
}

// leU64 reads a little-endian integer of up to 8 bytes from r.
func leU64(r Rope) uint64 {
	c := r.cursor()
	return readLE(&c, r.Len())
}

// A Fwd is a FWD record, the remote-operation envelope: OP, PATH dst, PATH src,
// then the payload TLV.
type Fwd struct {
	Op      Op
	Dst     Rope // canonical PATH payload of the route to the target
	Src     Rope // canonical PATH payload of the way back
	Payload *Node
}

// Node returns the FWD record.
func (f Fwd) Node() *Node {
	return NewStruct(TypeFwd,
		NewLeaf(TypeOp, []byte{byte(f.Op)}),
		NewLeafRope(TypePath, f.Dst),
		NewLeafRope(TypePath, f.Src),
		f.Payload)
}

// DecodeFwd checks n against the FWD layout, including that the op is known and
// both routes are valid PATH payloads, and returns it.
func DecodeFwd(n *Node) (Fwd, error) {
	var f Fwd
	if err := checkFwdShape(n); err != nil {
		return f, err
	}
	op := n.children[0]
	if op.payload.Len() != opValueSize {
		return f, layoutError(n, 0, "OP holds %d bytes, want %d", op.payload.Len(), opValueSize)
	}
	f.Op = Op(leU64(op.payload))
	if f.Op < OpWrite || f.Op > OpReply {
		return f, layoutError(n, 0, "unknown op code %d", f.Op)
	}
	var err error
	if f.Dst, err = expectPath(n, 1); err != nil {
		return f, err
	}
	if f.Src, err = expectPath(n, 2); err != nil {
		return f, err
	}
	f.Payload = n.children[3]
	return f, nil
}

// checkFwdShape checks the FWD layout's types and count, not the values: the
// forward hop needs no more, because it never interprets what it re-emits.
func checkFwdShape(n *Node) error {
	if err := expectStruct(n, TypeFwd); err != nil {
		return err
	}
	if len(n.children) != fwdChildren {
		return layoutError(n, min(len(n.children), fwdChildren), "%d children, want %d (OP, dst, src, payload)", len(n.children), fwdChildren)
	}
	for i, t := range []Type{TypeOp, TypePath, TypePath} {
		if _, err := expectLeaf(n, i, t); err != nil {
			return err
		}
	}
	return nil
}

// StatusNode returns a STATUS TLV: empty for StatusOK (the OK / unsubscribe
// sentinel), else the code as a u16 LE.
func StatusNode(s Status) *Node {
	if s == StatusOK {
		return NewLeaf(TypeStatus, nil)
	}
	return NewLeaf(TypeStatus, binary.LittleEndian.AppendUint16(nil, uint16(s)))
}

// DecodeStatus returns the code a STATUS TLV carries, StatusOK when it is empty.
func DecodeStatus(n *Node) (Status, error) {
	if n == nil || n.typ != TypeStatus || n.opt.PL() {
		return 0, malformed(0, "want an opaque STATUS, got %v", n)
	}
	switch n.payload.Len() {
	case 0:
		return StatusOK, nil
	case statusCodeSize:
		return Status(leU64(n.payload)), nil
	}
	return 0, malformed(int64(n.opt.HeaderSize()), "STATUS holds %d bytes, want 0 or %d", n.payload.Len(), statusCodeSize)
}

// A Reply is the payload of a FWD{REPLY}: a RESULT holding the answer TLV
// (none for a write), or a STATUS carrying an error code.
type Reply struct {
	Status Status // StatusOK for a RESULT
	Answer *Node  // the answer a RESULT holds; nil for an empty RESULT
}

// Node returns the reply payload: a RESULT when r.Status is StatusOK, else a
// STATUS carrying the code (and Answer is ignored).
func (r Reply) Node() *Node {
	if r.Status != StatusOK {
		return StatusNode(r.Status)
	}
	if r.Answer == nil {
		return NewStruct(TypeResult)
	}
	return NewStruct(TypeResult, r.Answer)
}

// DecodeReply checks a reply payload and returns it. A RESULT is structured
// with at most one child; an empty opaque RESULT is accepted as the empty
// answer too, since it holds the same nothing.
func DecodeReply(n *Node) (Reply, error) {
	if n == nil {
		return Reply{}, malformed(0, "reply payload missing")
	}
	switch n.typ {
	case TypeStatus:
		s, err := DecodeStatus(n)
		return Reply{Status: s}, err
	case TypeResult:
		switch {
		case !n.opt.PL() && n.payload.Len() == 0:
			return Reply{}, nil
		case !n.opt.PL():
			return Reply{}, malformed(0, "an opaque RESULT must be empty")
		case len(n.children) > 1:
			return Reply{}, layoutError(n, 1, "RESULT holds %d answers, at most 1", len(n.children))
		case len(n.children) == 1:
			return Reply{Answer: n.children[0]}, nil
		}
		return Reply{}, nil
	}
	return Reply{}, malformed(0, "a reply holds a RESULT or a STATUS, got %s", n.typ)
}

// ReplyTo returns the FWD{REPLY} a terminus sends for request: its dst is the
// request's accumulated src, so it retraces the route, and its src starts empty
// (the root) and grows hop by hop on the way back.
func ReplyTo(request Fwd, r Reply) *Node {
	return Fwd{Op: OpReply, Dst: request.Src, Payload: r.Node()}.Node()
}
