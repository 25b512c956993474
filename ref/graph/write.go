package graph

import (
	"maps"
	"slices"

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
	a, err := g.parse(addr)
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
		if v := g.lookup(string(a.Path)); err == nil && v != nil && g.dev.FieldWriteWakesAwait {
			g.wake(v)
		}
		return err
	}
	key := string(a.Path)
	v := g.lookup(key)
	created := v == nil
	if v == nil {
		if c.Remote && !g.dev.RemoteWriteCreates {
			return fail("write", a.String(), tlv.StatusPathNotFound, "a remote write does not create its target")
		}
		if old := g.vertices[key]; old != nil && g.dev.LocalWriteNoRevive {
			return fail("write", a.String(), tlv.StatusPathNotFound, "the path was retired")
		}
		if anc := g.nearestLive(key); !allowed(c, anc, RightCreate) && !g.dev.CreateGateIgnored {
			return fail("write", a.String(), tlv.StatusAccessDenied, "%s lacks CREATE on %s", c.Name, anc.path())
		}
	}
	gate := v
	if gate == nil {
		gate = g.nearestLive(key)
	}
	if value.Type() == tlv.TypePoint && (v == nil || v.handler == nil) && !g.dev.BranchStoredWhole {
		return g.writeBranch(c, a, value)
	}
	if !allowed(c, gate, RightWrite) {
		return fail("write", a.String(), tlv.StatusAccessDenied, "%s lacks WRITE", c.Name)
	}
	v = g.ensure(key)
	if v.handler != nil {
		g.handlerWrite(v, value)
		if !g.dev.HandlerWriteSilent {
			g.deliverUp(v, v, value)
		}
		g.sweep(v, false, nil)
		return nil
	}
	g.assign(v, value)
	// Only a mutant's deviations skip the propagate half of the write.
	switch {
	case created && g.dev.AppearanceSilent,
		c.Remote && g.dev.RemoteWriteNotPropagated,
		v.mode == Explicit && g.dev.DirectedWriteHonoursMode,
		value.Type() == tlv.TypeStatus && g.dev.StatusNotDelivered:
		return nil
	}
	g.propagate(v)
	return nil
}

// handlerWrite dispatches value to v's seam and wakes v's awaits.
func (g *Graph) handlerWrite(v *vertex, value *tlv.Node) {
	if v.handler.OnWrite != nil {
		v.handler.OnWrite(value)
	}
	v.seq++
	v.swept = v.seq
	g.wake(v)
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
		if g.dev.HandlerAssignAccepted {
			return nil
		}
		return fail("assign", path, tlv.StatusSchemaNotFound, "a handler vertex retains nothing")
	}
	g.assign(v, value)
	if g.dev.AssignDelivers {
		g.deliverUp(v, v, value)
	}
	return nil
}

func (g *Graph) assign(v *vertex, value *tlv.Node) {
	if g.dev.ExplicitAssignGated && v.mode == Explicit {
		return
	}
	v.value = value
	v.seq++
	if g.dev.DeliverEveryAssign && !v.isStream() {
		v.since = append(v.since, value)
	}
	if v.isStream() {
		v.since = append(v.since, value)
		if len(v.since) > v.depth {
			v.lost += uint64(len(v.since) - v.depth)
			v.since = v.since[len(v.since)-v.depth:]
		}
	}
	g.markPending(v)
	g.wake(v)
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
		if g.dev.HandlerAssignAccepted {
			return nil
		}
		return fail("propagate", path, tlv.StatusSchemaNotFound, "a handler vertex retains nothing")
	}
	if g.dev.PropagateWakesAwait {
		g.wake(v)
	}
	switch {
	case e == EmitEach, e == EmitFold && g.dev.FoldEmitsEach:
		g.propagate(v)
		return nil
	case e == EmitFold:
		return g.propagateFold(v)
	}
	return fail("propagate", path, tlv.StatusSchemaTypeMismatch, "unknown emission %d", e)
}

func (g *Graph) propagate(v *vertex) { g.sweep(v, true, nil) }

// selected reports whether a sweep includes u, and is the mode rule of §Delivery
// mode. isRoot marks the sweep's own argument.
func (g *Graph) selected(u *vertex, isRoot bool) bool {
	if u.handler != nil || !u.live {
		return false
	}
	pending := u.seq > u.swept
	if u.isStream() {
		// A STREAM's drain holds the entries since its last flush; it is
		// pending exactly when that drain is not empty, or when it was
		// assigned before it became a STREAM (then its value is the drain).
		if isRoot {
			return pending
		}
		switch u.mode {
		case IfNewer:
			return pending
		case Unconditional:
			return u.value != nil
		}
		return false
	}
	if u.value == nil {
		return false
	}
	if isRoot {
		return pending || !g.dev.DirectPropagateOnlyPending
	}
	switch u.mode {
	case IfNewer:
		return pending || g.dev.SweepWholeSubtree
	case Unconditional:
		return pending || !g.dev.UnconditionalOnlyPending
	case Explicit:
		return g.dev.ExplicitInAncestorSweep && pending
	}
	return false
}

// selection returns what a sweep rooted at root selects, in canonical key
// order; the root itself only when withRoot. Vertices in skip are left out.
// It costs O(pending + unconditional in the subtree), never a walk of it.
func (g *Graph) selection(root *vertex, withRoot bool, skip map[string]bool) []*vertex {
	keys := map[string]bool{}
	for _, k := range g.pendingIn(root.key) {
		keys[k] = true
	}
	for k := range g.uncond {
		if len(k) >= len(root.key) && k[:len(root.key)] == root.key {
			keys[k] = true
		}
	}
	if withRoot {
		keys[root.key] = true
	}
	if g.dev.SweepWholeSubtree {
		for _, u := range subtree(root) {
			keys[u.key] = true
		}
	}
	var out []*vertex
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		u := g.vertices[k]
		if skip[k] || (k == root.key && !withRoot) {
			continue
		}
		if g.selected(u, k == root.key) {
			out = append(out, u)
		}
	}
	return out
}

// sweep delivers the selection one frame per vertex (a STREAM: one per drained
// entry) and clears each selected vertex's mark.
func (g *Graph) sweep(root *vertex, withRoot bool, skip map[string]bool) {
	for _, u := range g.selection(root, withRoot, skip) {
		values := []*tlv.Node{u.value}
		if (u.isStream() || g.dev.DeliverEveryAssign) && len(u.since) > 0 && !g.dev.StreamLatestOnly {
			values = u.since
		}
		for _, e := range values {
			if g.dev.SweepCappedAtRoot && u != root {
				g.deliverUpTo(u, u, e, root)
				continue
			}
			g.deliverUp(u, u, e)
		}
		g.clearPending(u)
		if g.dev.ReadStale {
			u.flushed = u.value
		}
	}
}

// deliverUpTo is deliverUp stopping at stop: the SweepCappedAtRoot deviation.
func (g *Graph) deliverUpTo(from, source *vertex, value *tlv.Node, stop *vertex) {
	b := value.Bytes()
	for w := from; w != nil; w = w.parent {
		g.deliverAt(w, source, b)
		if w == stop {
			return
		}
	}
}

// deliverUp delivers value, stored or written at source, once along every edge
// of from and of each of its ancestors: from's edges first, then upward, each
// vertex's slots in order.
func (g *Graph) deliverUp(from, source *vertex, value *tlv.Node) {
	b := value.Bytes()
	if g.dev.DeliveryReencoded {
		b = reencode(value).Bytes()
	}
	if g.dev.DoubleDeliverySelf {
		g.deliverAt(from, source, b)
	}
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
			Vertex: w.path(), Slot: i, Target: e.target, Link: e.link,
			Source: source.path(), TLV: b,
		})
	}
}

// propagateFold is Propagate with EmitFold.
func (g *Graph) propagateFold(v *vertex) error {
	sel := g.selection(v, true, nil)
	if len(sel) == 0 {
		return nil
	}
	for _, u := range sel {
		if u.isStream() && !g.dev.FoldAcceptsStream {
			return fail("propagate", v.path(), tlv.StatusSchemaTypeMismatch, "%s is a STREAM: its drain has no seat on a POINT node", u.path())
		}
		val := u.value
		if val.Type() != tlv.TypeValue || val.Opt().PL() || val.Opt().TrailerSize() != 0 || val.Trailer().Len() != 0 {
			return fail("propagate", v.path(), tlv.StatusSchemaTypeMismatch, "%s holds %s, not one trailer-less VALUE", u.path(), val.Type())
		}
	}
	// The folded POINT tree: the root carries its own NAME, and each selected
	// vertex's VALUE sits on its node; nodes between carry names only.
	root := &tlv.Point{Name: v.name}
	nodes := map[string]*foldNode{v.key: {p: root}}
	var order []string
	for _, u := range sel {
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
		nodes[u.key].p.Value = u.value
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
	for _, u := range sel {
		g.clearPending(u)
	}
	return nil
}

type foldNode struct {
	p      *tlv.Point
	parent string
	kids   []string
}

// reencode rebuilds n with minimal headers: the DeliveryReencoded deviation.
func reencode(n *tlv.Node) *tlv.Node {
	if !n.Opt().PL() {
		return tlv.NewLeaf(n.Type(), n.Payload().Bytes())
	}
	var kids []*tlv.Node
	for _, c := range n.Children() {
		kids = append(kids, reencode(c))
	}
	return tlv.NewStruct(n.Type(), kids...)
}
