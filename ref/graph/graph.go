package graph

import (
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/conform-suite/conform/ref/tlv"
)

// A Caller is who performs an operation: the graph's in-process owner, a
// local principal, or a remote peer whose operation arrived over a link.
// Every caller but the owner is gated by the ACL; only a local caller's data
// write creates its target.
type Caller struct {
	Name   string // the ACL principal
	Link   string // the link a remote operation arrived over; an edge it admits is bound to it
	Remote bool   // the operation arrived in a FWD
	owner  bool
}

// Owner returns the graph's in-process owner: never gated by the ACL, and the
// one caller that reads and writes its ro and wo app fields.
func Owner() Caller { return Caller{Name: "owner", owner: true} }

// Local returns a local, caller-attributed principal: ACL-gated, and its data
// writes create their target (gated by CREATE).
func Local(name string) Caller { return Caller{Name: name} }

// Peer returns a remote caller named name whose operations arrive over link.
func Peer(name, link string) Caller { return Caller{Name: name, Link: link, Remote: true} }

// IsOwner reports whether c is the graph's owner.
func (c Caller) IsOwner() bool { return c.owner }

// A DeliveryMode governs whether an ancestor's sweep includes a vertex (graph
// model §Delivery mode). It never gates assign, and a direct propagate always
// delivers its argument whatever its mode.
type DeliveryMode uint8

const (
	// IfNewer includes the vertex only when it is pending: the default.
	IfNewer DeliveryMode = iota
	// Unconditional includes the vertex's current value on every covering sweep.
	Unconditional
	// Explicit never includes the vertex in an ancestor's sweep.
	Explicit
)

func (m DeliveryMode) String() string {
	switch m {
	case IfNewer:
		return "IF_NEWER"
	case Unconditional:
		return "UNCONDITIONAL"
	case Explicit:
		return "EXPLICIT"
	}
	return "DeliveryMode(" + string(rune('0'+m)) + ")"
}

// An Emission is how a propagate frames what its sweep selects (graph model
// §Wire mapping).
type Emission uint8

const (
	// EmitEach delivers one frame per selected vertex: the default.
	EmitEach Emission = iota
	// EmitFold delivers one branch-write frame for the swept subtree.
	EmitFold
)

// A Handler is the value seam of a vertex that retains nothing: a write hands
// its TLV to OnWrite, and a read is composed by OnRead. A nil OnRead makes
// reads answer not_found; a nil OnWrite discards writes.
type Handler struct {
	OnRead  func() *tlv.Node
	OnWrite func(*tlv.Node)
}

// Access is an app field's access for callers other than the owner.
type Access uint8

const (
	ReadOnly  Access = iota // ro: readable, not writable
	ReadWrite               // rw
	WriteOnly               // wo: writable, never read back
)

// An AppField is one entry of a vertex's field descriptor table (graph model
// §Owner-declared application fields): the name below settings.app., the access
// remote callers get, the descriptor bytes the schema serves, and an optional
// initial value.
type AppField struct {
	Name       string
	Access     Access
	Descriptor []byte
	Initial    *tlv.Node
}

// An Edge is one subscription edge in a vertex's :subscribers slot vector.
type Edge struct {
	Record *tlv.Node // the SUBSCRIBER as written
	Target string    // its target path
	Link   string    // the link it was admitted over; "" for a local edge
}

// A Delivery is one TLV sent along one subscription edge.
type Delivery struct {
	Vertex  string // path of the vertex holding the edge
	Slot    int    // the edge's slot in that vertex's :subscribers
	Target  string // the SUBSCRIBER's target path
	Link    string // the link the edge was admitted over; "" for a local edge
	Source  string // path of the vertex the delivered TLV was written or stored at
	TLV     []byte // the delivered TLV's bytes
	Latched bool   // sent by the durability_request latch when the edge joined
}

// Config configures a Graph.
type Config struct {
	// Now is the clock await deadlines are judged against. Nil means a clock
	// stopped at the zero time, so no deadline ever passes.
	Now func() time.Time
	// RootACL is the root's policy. Nil means every principal holds every right.
	RootACL *ACL
	// Policy replaces decisions of the graph model; its zero value is the
	// graph model.
	Policy Policy
}

// A Graph is the reference graph: vertices keyed on canonical PATH bytes, their
// subscription edges, values, write sequences, fields and lifecycle. It is a
// deterministic value: operations take effect in call order, deliveries are
// recorded rather than sent (TakeDeliveries), and time is read only from
// Config.Now. A Graph is not safe for concurrent use.
type Graph struct {
	now        func() time.Time
	vertices   map[string]*vertex // every vertex ever created, live or retired, by key
	root       *vertex
	pending    []string            // sorted keys of vertices whose sequence passed their sweep mark
	uncond     map[string]struct{} // keys of live Unconditional vertices
	deliveries []Delivery
	policy     Policy
}

type vertex struct {
	key      string
	name     string
	parent   *vertex
	children map[string]*vertex // by segment name, live or not
	live     bool

	handler *Handler // non-nil: the vertex retains nothing
	value   *tlv.Node
	seq     uint64 // write sequence: one per assign
	swept   uint64 // the sequence the last covering sweep recorded
	mode    DeliveryMode
	depth   int         // history depth; > 0 makes the vertex a STREAM
	since   []*tlv.Node // STREAM entries appended since the last flush
	lost    uint64      // STREAM entries shed before a flush

	slots    []*Edge // nil: an empty slot
	acl      *ACL
	appOrder []string
	appDecl  map[string]AppField
	appVal   map[string]*tlv.Node
	waiters  []*Waiter
}

// New returns a graph holding only its root, which is live and cannot be
// retired.
func New(cfg Config) *Graph {
	g := &Graph{
		now:      cfg.Now,
		vertices: make(map[string]*vertex),
		uncond:   make(map[string]struct{}),
		policy:   cfg.Policy,
	}
	if g.now == nil {
		g.now = func() time.Time { return time.Time{} }
	}
	g.root = &vertex{live: true, children: make(map[string]*vertex)}
	rootACL := ACL{Default: defaultRootRights}
	if cfg.RootACL != nil {
		rootACL = cfg.RootACL.clone()
	}
	g.root.acl = &rootACL
	g.vertices[""] = g.root
	return g
}

// TakeDeliveries returns every delivery recorded since the last call, in the
// order they were made, and forgets them.
func (g *Graph) TakeDeliveries() []Delivery {
	d := g.deliveries
	g.deliveries = nil
	return d
}

func (v *vertex) path() string { return pathString(v.key) }

func (v *vertex) isStream() bool { return v.depth > 0 }

// lookup returns the live vertex at key, or nil.
func (g *Graph) lookup(key string) *vertex {
	if v := g.vertices[key]; v != nil && v.live {
		return v
	}
	return nil
}

// nearestLive returns the live vertex at key or its nearest live ancestor; the
// root is always live.
func (g *Graph) nearestLive(key string) *vertex {
	for {
		if v := g.lookup(key); v != nil {
			return v
		}
		key = parentKey(key)
	}
}

// parentKey drops the last segment record of a canonical key.
func parentKey(key string) string {
	last := 0
	for i := 0; i < len(key); i += 1 + int(key[i]) {
		last = i
	}
	return key[:last]
}

// effectiveACL returns the ACL that governs v: its own, or its nearest
// ancestor's. Retired ancestors hold none, so a revived vertex takes its live
// ancestor's.
func effectiveACL(v *vertex) *ACL {
	for ; v != nil; v = v.parent {
		if v.acl != nil {
			return v.acl
		}
	}
	return nil
}

// allowed reports whether c holds, on v's effective ACL, the right act needs.
func (g *Graph) allowed(c Caller, v *vertex, act Act) bool {
	if c.owner {
		return true
	}
	need := g.policy.requires(act)
	a := effectiveACL(v)
	return need == 0 || a != nil && a.Rights(c.Name)&need == need
}

// denied is the refusal of an act c may not perform at addr.
func (g *Graph) denied(op, addr string, c Caller, act Act) *Error {
	return fail(op, addr, tlv.StatusAccessDenied, "%s may not %s: it lacks %s", c.Name, act, g.policy.requires(act))
}

// ensure makes the vertex at key live, creating or reviving it and every
// missing ancestor (mkdir -p). A revived vertex is fresh: it holds nothing of
// its retired self, and so takes its live ancestor's ACL.
func (g *Graph) ensure(key string) *vertex {
	if v := g.lookup(key); v != nil {
		return v
	}
	parent := g.ensure(parentKey(key))
	v := g.vertices[key]
	if v == nil {
		name := key[len(parent.key)+1:]
		v = &vertex{key: key, name: name, parent: parent, children: make(map[string]*vertex)}
		g.vertices[key] = v
		parent.children[name] = v
	}
	v.live = true
	return v
}

// liveChildren returns v's live children in canonical key order.
func liveChildren(v *vertex) []*vertex {
	var out []*vertex
	for _, c := range v.children {
		if c.live {
			out = append(out, c)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].key < out[j].key })
	return out
}

// subtree returns v and its live descendants in canonical key order.
func subtree(v *vertex) []*vertex {
	out := []*vertex{v}
	for i := 0; i < len(out); i++ {
		out = append(out, liveChildren(out[i])...)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].key < out[j].key })
	return out
}

// markPending adds v to the ordered pending set.
func (g *Graph) markPending(v *vertex) {
	i, found := slices.BinarySearch(g.pending, v.key)
	if !found {
		g.pending = slices.Insert(g.pending, i, v.key)
	}
}

// clearPending records a covering sweep at v: its mark catches up with its
// sequence, its drain empties, and it leaves the pending set.
func (g *Graph) clearPending(v *vertex) {
	v.swept = v.seq
	v.since = nil
	if i, found := slices.BinarySearch(g.pending, v.key); found {
		g.pending = slices.Delete(g.pending, i, i+1)
	}
}

// pendingIn returns the pending keys in the subtree rooted at key: a
// contiguous prefix range of the ordered set.
func (g *Graph) pendingIn(key string) []string {
	i, _ := slices.BinarySearch(g.pending, key)
	j := i
	for j < len(g.pending) && strings.HasPrefix(g.pending[j], key) {
		j++
	}
	return g.pending[i:j]
}

// Register makes path a live vertex, creating its missing ancestors (graph
// model §Vertex lifecycle). With a non-nil h the vertex is a handler vertex
// that retains nothing; with nil it stores its value. Registering a retired
// path revives it, fresh; registering a live one sets its role and keeps the
// rest. Registration is the owner's and is not ACL-gated.
func (g *Graph) Register(path string, h *Handler) error {
	key, err := g.vertexKey("register", path)
	if err != nil {
		return err
	}
	v := g.ensure(key)
	v.handler = h
	if h != nil {
		v.value, v.since, v.depth = nil, nil, 0
		g.clearPending(v)
	}
	return nil
}

// vertexKey parses a path that must not carry a field selector.
func (g *Graph) vertexKey(op, path string) (string, error) {
	a, err := ParseAddress(path)
	if err != nil {
		return "", err
	}
	if a.HasField {
		return "", fail(op, path, tlv.StatusPathInvalid, "%s takes a vertex, not a field", op)
	}
	return string(a.Path), nil
}

// ownerVertex resolves a live vertex for an owner-side declaration.
func (g *Graph) ownerVertex(op, path string) (*vertex, error) {
	key, err := g.vertexKey(op, path)
	if err != nil {
		return nil, err
	}
	v := g.lookup(key)
	if v == nil {
		return nil, fail(op, path, tlv.StatusPathNotFound, "no live vertex")
	}
	return v, nil
}

// Exists reports whether path names a live vertex.
func (g *Graph) Exists(path string) bool {
	key, err := g.vertexKey("exists", path)
	return err == nil && g.lookup(key) != nil
}

// A VertexInfo is what the owner can see host-side of one vertex.
type VertexInfo struct {
	Live         bool      // false: retired, a placeholder holding nothing
	Handler      bool      // a handler vertex, which retains nothing
	Branch       bool      // it has a live child, so a plain read is composed
	Value        *tlv.Node // what a read of it alone serves (an await's answer): its last-known value, or its handler's OnRead; nil when none
	Mode         DeliveryMode
	HistoryDepth int // > 0: a STREAM
}

// Vertex returns what the graph holds at path, and false when no vertex was
// ever created there (or path is not a vertex address).
func (g *Graph) Vertex(path string) (VertexInfo, bool) {
	key, err := g.vertexKey("vertex", path)
	if err != nil {
		return VertexInfo{}, false
	}
	v := g.vertices[key]
	if v == nil {
		return VertexInfo{}, false
	}
	return VertexInfo{
		Live: v.live, Handler: v.handler != nil, Branch: len(liveChildren(v)) > 0,
		Value: ownValue(v), Mode: v.mode, HistoryDepth: v.depth,
	}, true
}

// Paths returns the path of every live vertex, the root first, in canonical
// key order.
func (g *Graph) Paths() []string {
	var out []string
	for _, v := range subtree(g.root) {
		out = append(out, v.path())
	}
	return out
}

// Len returns the number of vertex objects the graph holds, live or retired
// (a retired vertex is not freed: graph model §Vertex lifecycle).
func (g *Graph) Len() int { return len(g.vertices) }

// Seq returns the write sequence of the vertex at path and whether it is live.
func (g *Graph) Seq(path string) (uint64, bool) {
	key, err := g.vertexKey("seq", path)
	if err != nil {
		return 0, false
	}
	v := g.lookup(key)
	if v == nil {
		return 0, false
	}
	return v.seq, true
}

// Pending returns the paths of the pending vertices, in canonical key order.
func (g *Graph) Pending() []string {
	out := make([]string, len(g.pending))
	for i, k := range g.pending {
		out[i] = pathString(k)
	}
	return out
}

// SetDeliveryMode sets the delivery mode of the vertex at path (host state,
// graph model §Delivery mode).
func (g *Graph) SetDeliveryMode(path string, m DeliveryMode) error {
	v, err := g.ownerVertex("set_delivery_mode", path)
	if err != nil {
		return err
	}
	if m > Explicit {
		return fail("set_delivery_mode", path, tlv.StatusSchemaTypeMismatch, "unknown mode %d", m)
	}
	v.mode = m
	if m == Unconditional {
		g.uncond[v.key] = struct{}{}
	} else {
		delete(g.uncond, v.key)
	}
	return nil
}

// SetHistoryDepth makes the vertex at path a STREAM keeping keep entries, or a
// stored-value vertex again when keep is 0 (graph model §Storage is declared
// owner-side). Entries appended beyond keep before a flush shed the oldest. A
// vertex that becomes a STREAM starts with an empty drain: when it is pending,
// its value is the drain (reconstructed.go).
func (g *Graph) SetHistoryDepth(path string, keep int) error {
	v, err := g.ownerVertex("set_history_depth", path)
	if err != nil {
		return err
	}
	if keep < 0 {
		return fail("set_history_depth", path, tlv.StatusSchemaTypeMismatch, "negative depth %d", keep)
	}
	if v.handler != nil {
		return fail("set_history_depth", path, tlv.StatusSchemaNotFound, "a handler vertex retains nothing")
	}
	if keep == 0 || v.depth == 0 {
		// What a stored-value vertex kept since its last flush (only for
		// Policy.Flush) is not a drain, nor is a drain a stored value.
		v.since = nil
	}
	v.depth = keep
	if len(v.since) > keep {
		v.lost += uint64(len(v.since) - keep)
		v.since = v.since[len(v.since)-keep:]
	}
	return nil
}

// StreamLost returns how many entries the STREAM at path shed before a flush.
func (g *Graph) StreamLost(path string) uint64 {
	key, err := g.vertexKey("stream_lost", path)
	if err != nil {
		return 0
	}
	if v := g.lookup(key); v != nil {
		return v.lost
	}
	return 0
}

// SetACL installs the ACL of the vertex at path; nil removes it, so the vertex
// takes its nearest ancestor's. The root's cannot be removed.
func (g *Graph) SetACL(path string, a *ACL) error {
	v, err := g.ownerVertex("set_acl", path)
	if err != nil {
		return err
	}
	if a == nil {
		if v == g.root {
			return fail("set_acl", path, tlv.StatusAccessDenied, "the root's ACL cannot be removed")
		}
		v.acl = nil
		return nil
	}
	c := a.clone()
	v.acl = &c
	return nil
}

// DeclareAppFields installs the field descriptor table of the vertex at path,
// replacing any earlier one (graph model §Owner-declared application fields).
// Initial values are stored verbatim.
func (g *Graph) DeclareAppFields(path string, fields []AppField) error {
	v, err := g.ownerVertex("declare_app_fields", path)
	if err != nil {
		return err
	}
	decl := make(map[string]AppField, len(fields))
	order := make([]string, 0, len(fields))
	for _, f := range fields {
		if f.Name == "" || f.Access > WriteOnly {
			return fail("declare_app_fields", path, tlv.StatusSchemaTypeMismatch, "field %q: empty name or unknown access", f.Name)
		}
		if _, dup := decl[f.Name]; dup {
			return fail("declare_app_fields", path, tlv.StatusSchemaTypeMismatch, "field %q declared twice", f.Name)
		}
		decl[f.Name] = f
		order = append(order, f.Name)
	}
	v.appDecl, v.appOrder, v.appVal = decl, order, make(map[string]*tlv.Node)
	for _, f := range fields {
		if f.Initial != nil {
			v.appVal[f.Name] = f.Initial
		}
	}
	return nil
}

// Retire retires the vertex at path and its subtree (graph model §Vertex
// lifecycle): each reverts to an unregistered placeholder holding nothing —
// value, edges, ACL, fields, mode, depth — and its path reads not_found. Nothing
// is delivered along any edge. The root cannot be retired; retiring a retired
// or unregistered path is a no-op. A caller other than the owner needs DELETE.
// An await outstanding on a retired vertex completes with not_found.
func (g *Graph) Retire(c Caller, path string) error {
	key, err := g.vertexKey("retire", path)
	if err != nil {
		return err
	}
	if key == "" {
		return fail("retire", path, statusRetireRoot, "the root cannot be retired")
	}
	v := g.lookup(key)
	if v == nil {
		return nil
	}
	if !g.allowed(c, v, ActRetire) {
		return g.denied("retire", path, c, ActRetire)
	}
	g.policy.retire(&Retirement{g: g, vertices: subtree(v)})
	return nil
}

// A Retirement is a retirement that passed its checks, for Policy.Retire to
// carry out: the live subtree of the vertex retired, and the two steps that
// retire one of its vertices.
type Retirement struct {
	g        *Graph
	vertices []*vertex
}

// Len returns how many vertices the subtree holds.
func (r *Retirement) Len() int { return len(r.vertices) }

// Path returns the path of the subtree's i-th vertex, in canonical key order:
// the vertex retired first.
func (r *Retirement) Path(i int) string { return r.vertices[i].path() }

// Take takes the i-th vertex out of the graph: it is no longer live, so its
// path reads not_found and no sweep selects it; it leaves the pending set, and
// the awaits outstanding on it see the retirement (Policy.Wakes; under the
// model they complete with tr::path::not_found). Taking a vertex twice does
// nothing.
func (r *Retirement) Take(i int) {
	u := r.vertices[i]
	if !u.live {
		return
	}
	u.live = false
	r.g.clearPending(u)
	r.g.event(u, EventRetire)
}

// Free drops what the i-th vertex, once taken, holds: its value, edges, ACL,
// fields, mode, depth and role, so that a revival starts fresh. It keeps the
// write sequence, which only ever advances. Freeing a live vertex does
// nothing.
func (r *Retirement) Free(i int) {
	u := r.vertices[i]
	if u.live {
		return
	}
	delete(r.g.uncond, u.key)
	*u = vertex{key: u.key, name: u.name, parent: u.parent, children: u.children, seq: u.seq, swept: u.seq}
}

// EvictLinkEdges clears every subscriber edge bound to link — admitted over it
// — on every vertex, and returns how many it cleared (graph model §Vertex
// lifecycle). The vertices live on and the slots are free for reuse. Local
// edges (link "") are never evicted.
func (g *Graph) EvictLinkEdges(link string) int {
	if link == "" {
		return 0
	}
	n := 0
	for _, v := range g.vertices {
		for i, e := range v.slots {
			if e != nil && e.Link == link {
				v.slots[i] = nil
				n++
			}
		}
	}
	return n
}
