package graph

import (
	"strconv"

	"github.com/conform-suite/conform/ref/tlv"
)

// A Policy holds the graph's extension points: each field is one decision the
// graph model makes, named for that decision. A nil field is the graph
// model's decision, which the Model function of the same name states and
// documents with its section; a non-nil field replaces that one decision and
// leaves every other rule of the graph as it is. The reference never sets one.
// A replacement that wants the model's answer for most inputs calls the Model
// function itself. A decision is consulted while the graph is mid-operation:
// it must not call back into the graph (Branch and Retire act only through
// the handle they are given), and Flush must not modify the values it is
// handed.
//
// Where a decision is visible in what the graph answers or delivers, a caller
// changes it by wrapping the Graph's operations instead; a Policy is for the
// decisions made inside one operation.
type Policy struct {
	// Requires is the right a caller other than the owner needs for an act,
	// judged on the vertex's effective ACL. Zero rights admit every caller.
	Requires func(Act) Rights

	// Plan decides how a data write is carried out: whether it decomposes as
	// a branch write and whether its propagate half runs.
	Plan func(DataWrite) WritePlan

	// Includes is the delivery-mode rule: whether a vertex's mode lets an
	// assign store, or a sweep include the vertex as its root or as a
	// descendant. Setting it makes every sweep consider every vertex of its
	// subtree, not only the pending and UNCONDITIONAL ones.
	Includes func(ModeQuery) bool

	// Flush is what a sweep delivers for a vertex the mode rule includes; a
	// vertex with nothing to deliver is not selected. Setting it makes every
	// vertex, not only a STREAM, keep the values assigned since its last
	// flush, for Flush to choose from.
	Flush func(FlushQuery) Flushed

	// Wakes is what an event at a vertex does to the awaits outstanding on
	// it. It is consulted only when there are some.
	Wakes func(Event) Wake

	// Append places an appended edge in a vertex's slot vector and returns
	// the vector and the slot the edge took.
	Append func(slots []*Edge, e *Edge) ([]*Edge, int)

	// Branch carries out a branch write whose frame parsed as a POINT tree
	// rooted at the target: its admission, the landing of its values and the
	// notification of its covered points.
	Branch func(*BranchWrite) error

	// Retire carries out a retirement that passed its checks.
	Retire func(*Retirement)
}

// An Act is what a caller other than the owner asks to do: the graph judges
// the right it needs (Policy.Requires) on the effective ACL of the vertex it
// acts on.
type Act uint8

const (
	// ActRead reads a vertex or one of its fields, or awaits the vertex; a
	// composed branch read leaves out the subtrees whose root denies it.
	ActRead Act = iota
	// ActWrite is a data write, or the write of an app field.
	ActWrite
	// ActCreate creates a missing vertex by a data write; it is judged on the
	// nearest live ancestor.
	ActCreate
	// ActAppendEdge appends an edge to :subscribers[].
	ActAppendEdge
	// ActReplaceEdge writes a SUBSCRIBER to :subscribers[N].
	ActReplaceEdge
	// ActSlotWrite writes anything else to :subscribers[N]: the empty STATUS
	// clears the slot, any other value is refused after the right is judged.
	ActSlotWrite
	// ActAdminister writes :acl.
	ActAdminister
	// ActRetire retires a vertex and its subtree.
	ActRetire
)

var actNames = [...]string{"read", "write", "create", "append an edge", "replace an edge", "write a slot", "administer", "retire"}

func (a Act) String() string {
	if int(a) < len(actNames) {
		return actNames[a]
	}
	return "Act(" + strconv.Itoa(int(a)) + ")"
}

// ModelRequires is the right each act needs (graph model §Subtree
// subscriptions… for READ, WRITE and CREATE; §The payload-discriminating
// :subscribers[N] write: a replace passes the SUBSCRIBE gate, "the same door
// as an append"; §Retirement notification for DELETE). Every :subscribers
// write needs SUBSCRIBE and an :acl write needs ADMIN (reconstructed.go).
func ModelRequires(a Act) Rights {
	switch a {
	case ActRead:
		return RightRead
	case ActWrite:
		return RightWrite
	case ActCreate:
		return RightCreate
	case ActAppendEdge, ActReplaceEdge, ActSlotWrite:
		return RightSubscribe
	case ActAdminister:
		return RightAdmin
	case ActRetire:
		return RightDelete
	}
	return AllRights
}

// A DataWrite is a data write about to be judged: its target, its value, and
// what the graph knows of the target before the write.
type DataWrite struct {
	Path    string    // the target's path
	Value   *tlv.Node // the value written
	Remote  bool      // the caller is remote
	Creates bool      // the target is not live: the write would create it
	Handler bool      // the target is a live handler vertex
	Mode    DeliveryMode
}

// A WritePlan is how a data write is carried out once admitted.
type WritePlan struct {
	// Branch decomposes the value, a POINT tree, onto the target's subtree
	// (see BranchWrite); otherwise the value lands whole at the target.
	Branch bool
	// Propagate runs the write's propagate half: the target's sweep, or at a
	// handler vertex the eager delivery of the value and the sweep of its
	// descendants; a branch write's notification of its covered points.
	// Without it the write is an assign alone.
	Propagate bool
}

// ModelPlan is how the graph model carries out a data write: a write is
// assign then propagate, whatever the caller, the target's mode or the value
// (§Assign, propagate…; §Wire mapping: "a directed write always lands"); a
// POINT written at a vertex that retains its value is a branch write (§Subtree
// subscriptions…, "A branch write decomposes"); at a handler vertex the value
// goes to the handler whole.
func ModelPlan(w DataWrite) WritePlan {
	return WritePlan{Branch: w.Value.Type() == tlv.TypePoint && !w.Handler, Propagate: true}
}

// Where a delivery mode is consulted.
type ModeStage uint8

const (
	// AtAssign is an assign at the vertex.
	AtAssign ModeStage = iota
	// AtRoot is a sweep whose root, its argument, is the vertex.
	AtRoot
	// AtDescendant is a sweep rooted at an ancestor of the vertex.
	AtDescendant
)

// A ModeQuery asks whether a vertex's delivery mode admits it at a stage.
type ModeQuery struct {
	Mode    DeliveryMode
	At      ModeStage
	Pending bool // the vertex's write sequence passed its last sweep's mark
}

// ModelIncludes is the delivery-mode rule (graph model §Delivery mode): assign
// is never gated; a direct propagate always delivers its argument; an
// ancestor's sweep includes an IF_NEWER vertex when it is pending, an
// UNCONDITIONAL one always, an EXPLICIT one never.
func ModelIncludes(q ModeQuery) bool {
	switch q.At {
	case AtAssign, AtRoot:
		return true
	}
	switch q.Mode {
	case IfNewer:
		return q.Pending
	case Unconditional:
		return true
	}
	return false
}

// A FlushQuery asks what a sweep delivers for one vertex its mode rule
// includes.
type FlushQuery struct {
	Path    string // set only when Policy.Flush is
	Stream  bool   // the vertex is a STREAM
	Root    bool   // the vertex is the sweep's root
	Mode    DeliveryMode
	Pending bool
	Value   *tlv.Node   // its last-known value; nil when never written
	Since   []*tlv.Node // what was assigned since its last flush, oldest first
	Fold    bool        // the sweep is a FOLD propagate
}

// Flushed is what a sweep delivers for one vertex: one frame per value, in
// order (EmitEach), or one node of the folded frame (EmitFold). Queue marks a
// queue's drain, which has no seat on a folded node.
type Flushed struct {
	Values []*tlv.Node
	Queue  bool
}

// ModelFlush is what the graph model's sweep delivers for a vertex (graph
// model §The write sequence…, "Coalescing is free"; §Stream drain semantics):
// a stored-value vertex its latest value, once; a STREAM its drain, every
// entry appended since its last flush, in order — or its value when it was
// assigned before it became a STREAM, or when it is an UNCONDITIONAL
// descendant with an empty drain (reconstructed.go).
func ModelFlush(q FlushQuery) Flushed {
	if q.Value == nil {
		return Flushed{}
	}
	if !q.Stream {
		return Flushed{Values: []*tlv.Node{q.Value}}
	}
	switch {
	case len(q.Since) > 0:
		return Flushed{Values: q.Since, Queue: true}
	case q.Pending || (!q.Root && q.Mode == Unconditional):
		return Flushed{Values: []*tlv.Node{q.Value}, Queue: true}
	}
	return Flushed{Queue: true}
}

// An EventKind is something that happens at a vertex and may complete the
// awaits outstanding on it.
type EventKind uint8

const (
	// EventAssign is an assign at a vertex that retains its value: a data
	// write, a branch write landing there, or Assign.
	EventAssign EventKind = iota
	// EventHandlerWrite is a write handed to a handler vertex's OnWrite.
	EventHandlerWrite
	// EventFieldWrite is a field write at the vertex.
	EventFieldWrite
	// EventPropagate is the owner's Propagate at the vertex.
	EventPropagate
	// EventRetire is the vertex's retirement, as it is taken out of the
	// graph: awaits it does not complete stay outstanding and are dropped
	// with the vertex.
	EventRetire
)

// An Event is something that happens at a vertex with awaits outstanding.
type Event struct {
	Kind    EventKind
	Path    string
	Handler bool // the vertex is a handler vertex
}

// A Wake is what an event does to the awaits outstanding on its vertex.
type Wake struct {
	// Complete completes every one of them.
	Complete bool
	// Serve completes them with what a read of the vertex alone serves at
	// that instant; without it, or when that is nothing, they complete with
	// tr::path::not_found.
	Serve bool
}

// ModelWakes is what the graph model's events do to awaits (§Assign,
// propagate…: "await observes assigns at its own vertex and is independent of
// propagation", and RFC-0008 Amendment 2: an await serves the read contract, so
// at a handler vertex the value its OnRead composes; §Owner-declared
// application fields: a field write wakes no await). A retirement completes
// every await on the vertex with tr::path::not_found, what a read of its path
// then answers (reconstructed.go).
func ModelWakes(e Event) Wake {
	switch e.Kind {
	case EventAssign, EventHandlerWrite:
		return Wake{Complete: true, Serve: true}
	case EventRetire:
		return Wake{Complete: true}
	}
	return Wake{}
}

// ModelAppend places an appended edge in the lowest empty slot, or in a new
// slot at the end when none is empty (reconstructed.go): slots never move, so
// a slot's N stays its N.
func ModelAppend(slots []*Edge, e *Edge) ([]*Edge, int) {
	for i, old := range slots {
		if old == nil {
			slots[i] = e
			return slots, i
		}
	}
	return append(slots, e), len(slots)
}

// ModelBranch carries out a branch write as the graph model does (§Subtree
// subscriptions…, "admission (shape + ACL) is all-or-nothing, application is
// per-leaf"): it admits every node or none, then lands every node, then
// notifies the covered points.
func ModelBranch(b *BranchWrite) error {
	for i := 0; i < b.Len(); i++ {
		if err := b.Admit(i); err != nil {
			return err
		}
	}
	for i := 0; i < b.Len(); i++ {
		b.Land(i)
	}
	b.Notify()
	return nil
}

// ModelRetire carries out a retirement as the graph model does (§Vertex
// lifecycle): the vertex and its whole subtree are taken out of the graph and
// each reverts to a placeholder holding nothing.
func ModelRetire(r *Retirement) {
	for i := 0; i < r.Len(); i++ {
		r.Take(i)
		r.Free(i)
	}
}

// The decisions as the graph consults them: the policy's, or the model's.

func (p *Policy) requires(a Act) Rights {
	if p.Requires != nil {
		return p.Requires(a)
	}
	return ModelRequires(a)
}

func (p *Policy) plan(w DataWrite) WritePlan {
	if p.Plan != nil {
		return p.Plan(w)
	}
	return ModelPlan(w)
}

func (p *Policy) includes(q ModeQuery) bool {
	if p.Includes != nil {
		return p.Includes(q)
	}
	return ModelIncludes(q)
}

func (p *Policy) wakes(e Event) Wake {
	if p.Wakes != nil {
		return p.Wakes(e)
	}
	return ModelWakes(e)
}

func (p *Policy) append(slots []*Edge, e *Edge) ([]*Edge, int) {
	if p.Append != nil {
		return p.Append(slots, e)
	}
	return ModelAppend(slots, e)
}

func (p *Policy) branch(b *BranchWrite) error {
	if p.Branch != nil {
		return p.Branch(b)
	}
	return ModelBranch(b)
}

func (p *Policy) retire(r *Retirement) {
	if p.Retire != nil {
		p.Retire(r)
		return
	}
	ModelRetire(r)
}
