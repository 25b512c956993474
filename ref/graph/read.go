package graph

import (
	"github.com/conform-suite/conform/ref/tlv"
)

// Read reads addr as caller c. A data read (no field) of a leaf answers its
// last-known value, or tr::path::not_found when it was never written; a read
// of a branch — a vertex with a live child — answers the composed branch read
// (graph model §Subtree subscriptions…, RFC-0016): the folded POINT tree of
// its live subtree, each node's stored TLV verbatim, subtrees the caller may
// not READ pruned. A handler vertex answers what its OnRead composes. A
// missing or retired path is tr::path::not_found. A field read answers the
// field (see the field rules in fields.go).
func (g *Graph) Read(c Caller, addr string) (*tlv.Node, error) {
	a, err := ParseAddress(addr)
	if err != nil {
		return nil, err
	}
	return g.ReadAddr(c, a)
}

// ReadAddr is Read for a parsed address.
func (g *Graph) ReadAddr(c Caller, a Address) (*tlv.Node, error) {
	v := g.lookup(string(a.Path))
	if v == nil {
		return nil, fail("read", a.String(), tlv.StatusPathNotFound, "no live vertex")
	}
	if a.HasField {
		return g.readField(c, v, a)
	}
	if !g.allowed(c, v, ActRead) {
		return nil, g.denied("read", a.String(), c, ActRead)
	}
	if len(liveChildren(v)) > 0 {
		return g.composed(c, v), nil
	}
	if val := ownValue(v); val != nil {
		return val, nil
	}
	return nil, fail("read", a.String(), statusUnwritten, "never written")
}

// ownValue is what a read of v alone serves: its last-known value, or its
// handler's composed value; nil when there is none.
func ownValue(v *vertex) *tlv.Node {
	if v.handler != nil {
		if v.handler.OnRead == nil {
			return nil
		}
		return v.handler.OnRead()
	}
	return v.value
}

// composed builds the composed branch read of v for c.
func (g *Graph) composed(c Caller, v *vertex) *tlv.Node {
	type item struct {
		v      *vertex
		parent int
		p      tlv.Point
		kids   []int
	}
	items := []item{{v: v, parent: -1}}
	for i := 0; i < len(items); i++ {
		for _, ch := range liveChildren(items[i].v) {
			if !g.allowed(c, ch, ActRead) {
				continue
			}
			items = append(items, item{v: ch, parent: i})
			items[i].kids = append(items[i].kids, len(items)-1)
		}
	}
	for i := len(items) - 1; i >= 0; i-- {
		it := &items[i]
		it.p.Name = it.v.name
		it.p.Value = ownValue(it.v)
		for _, k := range it.kids {
			it.p.Children = append(it.p.Children, items[k].p)
		}
	}
	return items[0].p.Node()
}
