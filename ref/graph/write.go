package graph

import (
	"maps"
	"slices"
	"strings"

	"github.com/conform-suite/conform/ref/tlv"
)

// Write writes value at addr as caller c (graph model §Subtree subscriptions,
// branch writes, and write-creates; §Assign, propagate, and the coalescing
// sweep).
//
// A data write (addr without a field) is assign then propagate at its target:
// the value is stored as given and delivered, as-is, once to each subscriber of
// the target and of every ancestor, and the sweep flushes the target's pending
// descendants. A local caller's write to a missing or retired path creates it
// and its missing ancestors, gated by CREATE on the nearest live ancestor's
// effective ACL; a remote caller's answers tr::path::not_found and creates
// nothing. A POINT value is a branch write: it decomposes (see writeBranch).
// At a handler vertex the value goes to its OnWrite seam and is delivered
// eagerly.
//
// A field write (addr with a selector) changes the property plane only: it
// wakes no await, advances no sequence and propagates nothing.
func (g *Graph) Write(c Caller, addr string, value *tlv.Node) error {
	a, err := ParseAddress(addr)
	if err != nil {
		return err
	}
	return g.WriteAddr(c, a, value)
}

// WriteAddr is Write for a parsed address.
func (g *Graph) WriteAddr(c Caller, a Address, value *tlv.Node) error {
	if value == nil {
		return fail("write", a.String(), tlv.StatusMalformed, "no value")
	}
	if a.HasField {
		err := g.writeField(c, a, value)
		if v := g.lookup(string(a.Path)); err == nil && v != nil {
			g.event(v, EventFieldWrite)
		}
		return err
	}
	key := string(a.Path)
	v := g.lookup(key)
	w := DataWrite{Path: a.String(), Value: value, Remote: c.Remote, Creates: v == nil}
	if v != nil {
		w.Handler, w.Mode = v.handler != nil, v.mode
	}
	plan := g.policy.plan(w)
	if v == nil {
		if c.Remote {
			return fail("write", a.String(), tlv.StatusPathNotFound, "a remote write does not create its target")
		}
		if anc := g.nearestLive(key); !g.allowed(c, anc, ActCreate) {
			return g.denied("write", a.String(), c, ActCreate)
		}
	}
	if plan.Branch {
		return g.writeBranch(c, a, value, plan.Propagate)
	}
	gate := v
	if gate == nil {
		gate = g.nearestLive(key)
	}
	if !g.allowed(c, gate, ActWrite) {
		return g.denied("write", a.String(), c, ActWrite)
	}
	v = g.ensure(key)
	if v.handler != nil {
		g.handlerWrite(v, value)
		if plan.Propagate {
			g.deliverUp(v, v, value)
			g.sweep(v, false, nil)
		}
		return nil
	}
	g.assign(v, value)
	if plan.Propagate {
		g.propagate(v)
	}
	return nil
}

// handlerWrite dispatches value to v's seam and wakes v's awaits.
func (g *Graph) handlerWrite(v *vertex, value *tlv.Node) {
	if v.handler.OnWrite != nil {
		v.handler.OnWrite(value)
	}
	v.seq++
	v.swept = v.seq
	g.event(v, EventHandlerWrite)
}

// Assign replaces the value of the vertex at path, advances its write
// sequence, appends to its history if it is a STREAM, wakes its awaits and
// marks it pending (graph model §Assign, propagate). It sends nothing, is never
// gated by the delivery mode, and does not create the vertex. At a vertex that
// retains nothing it answers tr::schema::not_found.
func (g *Graph) Assign(path string, value *tlv.Node) error {
	v, err := g.ownerVertex("assign", path)
	if err != nil {
		return err
	}
	if value == nil {
		return fail("assign", path, tlv.StatusMalformed, "no value")
	}
	if v.handler != nil {
		return fail("assign", path, tlv.StatusSchemaNotFound, "a handler vertex retains nothing")
	}
	g.assign(v, value)
	return nil
}

func (g *Graph) assign(v *vertex, value *tlv.Node) {
	if !g.policy.includes(ModeQuery{Mode: v.mode, At: AtAssign}) {
		return
	}
	v.value = value
	v.seq++
	if v.isStream() || g.policy.Flush != nil {
		v.since = append(v.since, value)
	}
	if v.isStream() && len(v.since) > v.depth {
		v.lost += uint64(len(v.since) - v.depth)
		v.since = v.since[len(v.since)-v.depth:]
	}
	g.markPending(v)
	g.event(v, EventAssign)
}

// Propagate sweeps the subtree rooted at the vertex at path (graph model
// §The write sequence and pending vertices): it selects the root itself (a
// direct propagate always delivers its argument) and each live descendant its
// mode admits — IfNewer when pending, Unconditional always, Explicit never —
// delivers each selected vertex to every subscriber observing it, including
// those of ancestors above the root, and clears its pending mark. A STREAM
// delivers its drain: the entries appended since its last flush, in order.
//
// With EmitFold the selection is delivered as one branch-write frame; the fold
// refuses with tr::schema::type_mismatch, consuming nothing, when a selected
// vertex's value is not one trailer-less opaque VALUE or the vertex is a
// STREAM. At a vertex that retains nothing Propagate answers
// tr::schema::not_found.
func (g *Graph) Propagate(path string, e Emission) error {
	v, err := g.ownerVertex("propagate", path)
	if err != nil {
		return err
	}
	if v.handler != nil {
		return fail("propagate", path, tlv.StatusSchemaNotFound, "a handler vertex retains nothing")
	}
	g.event(v, EventPropagate)
	switch e {
	case EmitEach:
		g.propagate(v)
		return nil
	case EmitFold:
		return g.propagateFold(v)
	}
	return fail("propagate", path, tlv.StatusSchemaTypeMismatch, "unknown emission %d", e)
}

func (g *Graph) propagate(v *vertex) { g.sweep(v, true, nil) }

// A pick is a vertex a sweep selected and what it delivers for it.
type pick struct {
	v *vertex
	Flushed
}

// selection returns what a sweep rooted at root selects, in canonical key
// order; the root itself only when withRoot. Vertices in skip are left out.
// A vertex is selected when its mode admits it (§Delivery mode) and it has
// something to deliver. Under the model's mode rule only pending and
// UNCONDITIONAL vertices can be selected below the root, so the sweep costs
// O(pending + unconditional in the subtree), never a walk of it.
func (g *Graph) selection(root *vertex, withRoot bool, skip map[string]bool, fold bool) []pick {
	keys := map[string]bool{}
	if g.policy.Includes != nil {
		for _, u := range subtree(root) {
			keys[u.key] = true
		}
	}
	for _, k := range g.pendingIn(root.key) {
		keys[k] = true
	}
	for k := range g.uncond {
		if strings.HasPrefix(k, root.key) {
			keys[k] = true
		}
	}
	if withRoot {
		keys[root.key] = true
	}
	out := make([]pick, 0, len(keys))
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		u := g.vertices[k]
		isRoot := k == root.key
		if skip[k] || (isRoot && !withRoot) || u.handler != nil || !u.live {
			continue
		}
		q := ModeQuery{Mode: u.mode, At: AtDescendant, Pending: u.seq > u.swept}
		if isRoot {
			q.At = AtRoot
		}
		if !g.policy.includes(q) {
			continue
		}
		f := g.flush(u, q, fold)
		if len(f.Values) == 0 {
			continue
		}
		out = append(out, pick{v: u, Flushed: f})
	}
	return out
}

// flush asks what a sweep delivers for u, which the mode rule included as q
// says.
func (g *Graph) flush(u *vertex, q ModeQuery, fold bool) Flushed {
	f := FlushQuery{Stream: u.isStream(), Root: q.At == AtRoot, Mode: u.mode, Pending: q.Pending, Value: u.value, Since: u.since, Fold: fold}
	if g.policy.Flush != nil {
		f.Path = u.path()
		return g.policy.Flush(f)
	}
	return ModelFlush(f)
}

// sweep delivers the selection one frame per value (a STREAM: one per drained
// entry) and clears each selected vertex's mark.
func (g *Graph) sweep(root *vertex, withRoot bool, skip map[string]bool) {
	for _, p := range g.selection(root, withRoot, skip, false) {
		for _, e := range p.Values {
			g.deliverUp(p.v, p.v, e)
		}
		g.clearPending(p.v)
	}
}

// deliverUp delivers value, stored or written at source, once along every edge
// of from and of each of its ancestors: from's edges first, then upward, each
// vertex's slots in order. The TLV is carried as-is, never re-encoded (graph
// model §Subtree subscriptions…).
func (g *Graph) deliverUp(from, source *vertex, value *tlv.Node) {
	b := value.Bytes()
	for w := from; w != nil; w = w.parent {
		g.deliverAt(w, source, b)
	}
}

func (g *Graph) deliverAt(w, source *vertex, b []byte) {
	for i, e := range w.slots {
		if e == nil {
			continue
		}
		g.deliveries = append(g.deliveries, Delivery{
			Vertex: w.path(), Slot: i, Target: e.Target, Link: e.Link,
			Source: source.path(), TLV: b,
		})
	}
}

// propagateFold is Propagate with EmitFold.
func (g *Graph) propagateFold(v *vertex) error {
	sel := g.selection(v, true, nil, true)
	if len(sel) == 0 {
		return nil
	}
	for _, p := range sel {
		if p.Queue {
			return fail("propagate", v.path(), tlv.StatusSchemaTypeMismatch, "%s is a STREAM: its drain has no seat on a POINT node", p.v.path())
		}
		if len(p.Values) != 1 {
			return fail("propagate", v.path(), tlv.StatusSchemaTypeMismatch, "%s delivers %d values, and a POINT node seats one", p.v.path(), len(p.Values))
		}
		val := p.Values[0]
		if val.Type() != tlv.TypeValue || val.Opt().PL() || val.Opt().TrailerSize() != 0 || val.Trailer().Len() != 0 {
			return fail("propagate", v.path(), tlv.StatusSchemaTypeMismatch, "%s holds %s, not one trailer-less VALUE", p.v.path(), val.Type())
		}
	}
	// The folded POINT tree: the root carries its own NAME, and each selected
	// vertex's VALUE sits on its node; nodes between carry names only.
	root := &tlv.Point{Name: v.name}
	nodes := map[string]*foldNode{v.key: {p: root}}
	var order []string
	for _, p := range sel {
		u := p.v
		var chain []*vertex
		for w := u; w.key != v.key; w = w.parent {
			chain = append(chain, w)
		}
		for i := len(chain) - 1; i >= 0; i-- {
			w := chain[i]
			if nodes[w.key] == nil {
				nodes[w.key] = &foldNode{p: &tlv.Point{Name: w.name}, parent: w.parent.key}
				order = append(order, w.key)
			}
		}
		nodes[u.key].p.Value = p.Values[0]
	}
	// Attach children bottom-up: order is parents before children, so build
	// from the end, copying each finished child into its parent.
	for i := len(order) - 1; i >= 0; i-- {
		n := nodes[order[i]]
		parent := nodes[n.parent]
		parent.kids = append(parent.kids, order[i])
	}
	for i := len(order) - 1; i >= -1; i-- {
		k := v.key
		if i >= 0 {
			k = order[i]
		}
		n := nodes[k]
		slices.Sort(n.kids)
		for _, ck := range n.kids {
			n.p.Children = append(n.p.Children, *nodes[ck].p)
		}
	}
	frame := root.Node()
	tree, err := parseBranch(v.key, frame)
	if err != nil {
		return wrap("propagate", v.path(), err)
	}
	g.deliverBranch(v, frame, tree)
	for _, p := range sel {
		g.clearPending(p.v)
	}
	return nil
}

type foldNode struct {
	p      *tlv.Point
	parent string
	kids   []string
}
