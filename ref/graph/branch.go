package graph

import (
	"strings"
	"unicode/utf8"

	"github.com/conform-suite/conform/ref/tlv"
)

// A bnode is one POINT node of a branch frame mapped onto the vertex it lands
// at: the node itself (a view into the frame), its VALUE when it carries one,
// and whether any value lies at or below it.
type bnode struct {
	key    string
	n      *tlv.Node
	value  *tlv.Node
	kids   []*bnode
	hasVal bool
}

// parseBranch checks frame against the POINT layout at every level and maps
// it onto the subtree rooted at key: the root node lands at key, and a child
// named s at its parent's key plus the segment s. Child names must be valid
// path segments (tr::path::invalid) and siblings distinct (tr::tlv::malformed).
// The result lists nodes in pre-order, root first.
func parseBranch(key string, frame *tlv.Node) ([]*bnode, error) {
	if _, err := tlv.DecodePoint(frame); err != nil {
		return nil, err
	}
	root := &bnode{key: key, n: frame}
	stack := []*bnode{root}
	for len(stack) > 0 {
		b := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		names := map[string]bool{}
		for _, c := range b.n.Children()[1:] {
			switch c.Type() {
			case tlv.TypeValue:
				b.value = c
			case tlv.TypePoint:
				name := string(c.Children()[0].Payload().Bytes())
				if !validSegment(name) {
					return nil, &Error{Op: "write", Addr: pathString(b.key), Status: tlv.StatusPathInvalid, Reason: "POINT name " + quote(name) + " is not a path segment"}
				}
				if names[name] {
					return nil, &Error{Op: "write", Addr: pathString(b.key), Status: tlv.StatusMalformed, Reason: "two sibling POINTs named " + quote(name)}
				}
				names[name] = true
				kid := &bnode{key: b.key + string([]byte{byte(len(name))}) + name, n: c}
				b.kids = append(b.kids, kid)
			}
		}
		for i := len(b.kids) - 1; i >= 0; i-- {
			stack = append(stack, b.kids[i])
		}
	}
	// Pre-order list and the at-or-below flags.
	var out []*bnode
	walk := []*bnode{root}
	for len(walk) > 0 {
		b := walk[len(walk)-1]
		walk = walk[:len(walk)-1]
		out = append(out, b)
		for i := len(b.kids) - 1; i >= 0; i-- {
			walk = append(walk, b.kids[i])
		}
	}
	for i := len(out) - 1; i >= 0; i-- {
		b := out[i]
		b.hasVal = b.value != nil
		for _, k := range b.kids {
			b.hasVal = b.hasVal || k.hasVal
		}
	}
	return out, nil
}

func quote(s string) string { return "\"" + s + "\"" }

// validSegment reports whether name is one canonical path segment that the
// graph can key a vertex on: no separator, no field selector.
func validSegment(name string) bool {
	if name == "" || strings.ContainsRune(name, fieldSep) || strings.ContainsRune(name, '/') || !utf8.ValidString(name) {
		return false
	}
	p, err := tlv.CanonicalPath(name)
	return err == nil && len(p) == 1+len(name)
}

// writeBranch is a data write of a POINT tree at a (graph model §Subtree
// subscriptions… "A branch write decomposes"), carried out by Policy.Branch:
// admission — shape and ACL, and for a remote caller that every node's vertex
// exists — is all-or-nothing. Then every missing vertex is created, each
// value-carrying node's VALUE is assigned at its vertex (a view into the frame,
// no copy), each covered subscription point is notified once with its slice,
// and the sweep at the target flushes whatever else in its subtree is pending.
// Without propagate the values land and nothing is notified.
func (g *Graph) writeBranch(c Caller, a Address, frame *tlv.Node, propagate bool) error {
	tree, err := parseBranch(string(a.Path), frame)
	if err != nil {
		return wrap("write", a.String(), err)
	}
	return g.policy.branch(&BranchWrite{g: g, c: c, a: a, frame: frame, tree: tree, propagate: propagate, touched: map[string]bool{}})
}

// A BranchWrite is a branch write whose frame parsed, for Policy.Branch to
// carry out: the nodes of its POINT tree, each mapped onto the vertex it lands
// at, and the three steps of the write.
type BranchWrite struct {
	g         *Graph
	c         Caller
	a         Address
	frame     *tlv.Node
	tree      []*bnode
	propagate bool
	touched   map[string]bool
}

// A BranchNode is one node of a branch write: the path of the vertex it lands
// at, and its VALUE when it carries one.
type BranchNode struct {
	Path  string
	Value *tlv.Node
}

// Len returns how many nodes the POINT tree holds.
func (b *BranchWrite) Len() int { return len(b.tree) }

// Node returns the i-th node in pre-order: node 0 is the root, which lands at
// the target.
func (b *BranchWrite) Node(i int) BranchNode {
	return BranchNode{Path: pathString(b.tree[i].key), Value: b.tree[i].value}
}

// Admit judges the i-th node against the graph as it is: for a remote caller
// its vertex must exist (tr::path::not_found); a missing vertex needs CREATE on
// its nearest live ancestor; the root and every value-carrying node need WRITE
// (tr::access::denied).
func (b *BranchWrite) Admit(i int) error {
	return b.g.admitBranchNode(b.c, b.a, b.tree[i], i == 0)
}

// Land creates the i-th node's vertex and its missing ancestors and lands the
// node's value there: assigned at a vertex that retains it, handed to the
// handler of one that does not.
func (b *BranchWrite) Land(i int) {
	n := b.tree[i]
	v := b.g.ensure(n.key)
	if n.value == nil {
		return
	}
	b.touched[n.key] = true
	if v.handler != nil {
		b.g.handlerWrite(v, n.value)
		return
	}
	b.g.assign(v, n.value)
}

// Notify delivers the write, unless its plan does not propagate: the frame to
// the target's and its ancestors' edges and each lower covered point its
// slice; the landed values leave the pending set without being delivered a
// second time, and the sweep at the target flushes whatever else in its
// subtree is pending. It does nothing before the root has landed.
func (b *BranchWrite) Notify() {
	g := b.g
	w := g.lookup(string(b.a.Path))
	if !b.propagate || w == nil {
		return
	}
	g.deliverBranch(w, b.frame, b.tree)
	skip := map[string]bool{w.key: true}
	for k := range b.touched {
		skip[k] = true
		if v := g.lookup(k); v != nil && v.handler == nil {
			g.clearPending(v)
		}
	}
	g.sweep(w, false, skip)
}

// deliverBranch notifies each covered subscription point of a branch frame
// landed at w, once: w and every ancestor get the frame as-is; a vertex below w
// with a value at or below it gets the smallest subview of the frame covering
// every such value — the VALUE itself when that is one node's only value.
func (g *Graph) deliverBranch(w *vertex, frame *tlv.Node, tree []*bnode) {
	g.deliverUp(w, w, frame)
	for _, b := range tree[1:] {
		v := g.lookup(b.key)
		if v == nil || !b.hasVal || !hasEdges(v) {
			continue
		}
		cur := b
		for cur.value == nil {
			var only *bnode
			n := 0
			for _, k := range cur.kids {
				if k.hasVal {
					only = k
					n++
				}
			}
			if n != 1 {
				break
			}
			cur = only
		}
		slice := cur.n
		if cur.value != nil {
			below := false
			for _, k := range cur.kids {
				below = below || k.hasVal
			}
			if !below {
				slice = cur.value
			}
		}
		g.deliverAt(v, g.vertices[cur.key], slice.Bytes())
	}
}

func hasEdges(v *vertex) bool {
	for _, e := range v.slots {
		if e != nil {
			return true
		}
	}
	return false
}

// admitBranchNode judges one node of a branch write: for a remote caller its
// vertex must exist; a missing vertex needs CREATE on its nearest live
// ancestor; the root and every value-carrying node need WRITE.
func (g *Graph) admitBranchNode(c Caller, a Address, b *bnode, isRoot bool) error {
	v := g.lookup(b.key)
	if v == nil {
		if c.Remote {
			return fail("write", a.String(), tlv.StatusPathNotFound, "%s does not exist and a remote write does not create", pathString(b.key))
		}
		if anc := g.nearestLive(b.key); !g.allowed(c, anc, ActCreate) {
			return g.denied("write", pathString(b.key), c, ActCreate)
		}
	}
	if b.value != nil || isRoot {
		gate := v
		if gate == nil {
			gate = g.nearestLive(b.key)
		}
		if !g.allowed(c, gate, ActWrite) {
			return g.denied("write", pathString(b.key), c, ActWrite)
		}
	}
	return nil
}
