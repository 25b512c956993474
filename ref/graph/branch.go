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
// subscriptions… "A branch write decomposes"). Admission — shape and ACL, and
// for a remote caller that every node's vertex exists — is all-or-nothing.
// Then every missing vertex is created, each value-carrying node's VALUE is
// assigned at its vertex (a view into the frame, no copy), each covered
// subscription point is notified once with its slice, and the sweep at the
// target flushes whatever else in its subtree is pending.
func (g *Graph) writeBranch(c Caller, a Address, frame *tlv.Node) error {
	key := string(a.Path)
	tree, err := parseBranch(key, frame)
	if err != nil {
		return wrap("write", a.String(), err)
	}
	for i, b := range tree {
		if err := g.admitBranchNode(c, a, b, i == 0); err != nil {
			if g.dev.BranchAdmissionPerLeaf {
				for _, p := range tree[:i] {
					if p.value != nil {
						g.assign(g.ensure(p.key), p.value)
					}
				}
			}
			return err
		}
	}
	touched := map[string]bool{}
	for _, b := range tree {
		v := g.ensure(b.key)
		if b.value == nil {
			continue
		}
		touched[b.key] = true
		if v.handler != nil {
			g.handlerWrite(v, b.value)
			continue
		}
		g.assign(v, b.value)
	}
	w := g.lookup(key)
	g.deliverBranch(w, frame, tree)
	for k := range touched {
		if v := g.lookup(k); v.handler == nil {
			g.clearPending(v)
		}
	}
	touched[key] = true
	g.sweep(w, false, touched)
	return nil
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
		if c.Remote && !g.dev.RemoteWriteCreates {
			return fail("write", a.String(), tlv.StatusPathNotFound, "%s does not exist and a remote write does not create", pathString(b.key))
		}
		if anc := g.nearestLive(b.key); !allowed(c, anc, RightCreate) {
			return fail("write", a.String(), tlv.StatusAccessDenied, "%s lacks CREATE on %s", c.Name, anc.path())
		}
	}
	if b.value != nil || isRoot {
		gate := v
		if gate == nil {
			gate = g.nearestLive(b.key)
		}
		if !allowed(c, gate, RightWrite) {
			return fail("write", a.String(), tlv.StatusAccessDenied, "%s lacks WRITE on %s", c.Name, pathString(b.key))
		}
	}
	return nil
}
