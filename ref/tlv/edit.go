package tlv

import "fmt"

// The view-tree edits of the graph model (§Structured TLV as abstraction,
// memory as rope). None moves a payload byte: the result's payload rope links
// views its operands already hold, and only its header is a new byte string.
// The result is a container originated by the editor, so its header is minimal
// and it carries no trailer (a check over the old content would be wrong);
// every child keeps its bytes, its own header form and its own trailer.
//
// The proof obligation: any sequence of edits followed by serialization gives the
// same bytes as building the edited container from scratch in a fresh buffer.

// Concat returns a container of n's type holding n's children, then m's. Both
// must be structured.
func (n *Node) Concat(m *Node) (*Node, error) {
	if err := editable(n); err != nil {
		return nil, err
	}
	if err := editable(m); err != nil {
		return nil, err
	}
	kids := make([]*Node, 0, len(n.children)+len(m.children))
	kids = append(append(kids, n.children...), m.children...)
	return edited(n.typ, Concat(n.payload, m.payload), kids), nil
}

// Split returns two containers of n's type: one holding children [0, k), the
// other children [k, len). n must be structured and 0 <= k <= len(children).
func (n *Node) Split(k int) (*Node, *Node, error) {
	if err := editable(n); err != nil {
		return nil, nil, err
	}
	if k < 0 || k > len(n.children) {
		return nil, nil, fmt.Errorf("tlv: split at %d of %d children", k, len(n.children))
	}
	off := childOffset(n, k)
	head := edited(n.typ, n.payload.Slice(0, off), append([]*Node(nil), n.children[:k]...))
	tail := edited(n.typ, n.payload.Slice(off, n.payload.Len()), append([]*Node(nil), n.children[k:]...))
	return head, tail, nil
}

// Insert returns a container of n's type holding children [0, k), then child,
// then children [k, len). n must be structured and 0 <= k <= len(children).
func (n *Node) Insert(k int, child *Node) (*Node, error) {
	if err := editable(n); err != nil {
		return nil, err
	}
	if k < 0 || k > len(n.children) {
		return nil, fmt.Errorf("tlv: insert at %d of %d children", k, len(n.children))
	}
	if child == nil {
		return nil, fmt.Errorf("tlv: insert of a nil child")
	}
	off := childOffset(n, k)
	payload := Concat(n.payload.Slice(0, off), child.Rope(), n.payload.Slice(off, n.payload.Len()))
	kids := make([]*Node, 0, len(n.children)+1)
	kids = append(append(append(kids, n.children[:k]...), child), n.children[k:]...)
	return edited(n.typ, payload, kids), nil
}

func editable(n *Node) error {
	if n == nil || !n.opt.PL() {
		return fmt.Errorf("tlv: only a structured TLV can be edited, got %v", n)
	}
	return nil
}

// childOffset returns where child k starts within n's payload.
func childOffset(n *Node, k int) int {
	off := 0
	for _, c := range n.children[:k] {
		off += c.Size()
	}
	return off
}

func edited(t Type, payload Rope, kids []*Node) *Node {
	return &Node{typ: t, opt: minimalLL(OptPL, payload.Len()), payload: payload, children: kids}
}
