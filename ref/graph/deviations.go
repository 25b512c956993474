package graph

// Deviations are departures from the graph model, each one a failure mode the
// document names (most of them under §Pitfalls). They exist so that conform's
// mutants (sut/mutant) can break exactly one behaviour of the reference
// without copying the package, and so that the suite can prove each case is
// able to fail. The zero value is the document; nothing but a mutant sets a
// field, and the mutation tests (cases/graph, cases/catalog) prove each one
// observable by at least one MUST case.
type Deviations struct {
	// ClearSlotAnyPayload clears :subscribers[N] whatever the payload, instead
	// of discriminating by it (§An indexed :subscribers[N] write treated as an
	// unconditional clear).
	ClearSlotAnyPayload bool
	// WildcardWriteAsIndex0 takes :subscribers[*] on a write as index 0
	// instead of answering tr::path::invalid (same section, "A second route").
	WildcardWriteAsIndex0 bool
	// ReplaceThroughWriteGate admits a :subscribers[N] replace through the
	// WRITE gate instead of SUBSCRIBE (same section, "A third").
	ReplaceThroughWriteGate bool
	// SubscriberMemberAsIndex lets :subscribers[N].<anything> fall into the
	// indexed arm instead of naming nothing (§A multi-step selector under
	// :subscribers).
	SubscriberMemberAsIndex bool
	// RemovedKnobsAccepted stores and serves the seven removed flat
	// :settings knobs instead of answering tr::schema::not_found (§Core
	// writable fields, RFC-0022).
	RemovedKnobsAccepted bool
	// AppNameBeforeACL resolves an app field's name before the WRITE right,
	// so a denied caller can probe which names exist (§Owner-declared
	// application fields, RFC-0010 erratum).
	AppNameBeforeACL bool
	// FieldWriteWakesAwait wakes the vertex's awaits on a field write
	// (§Owner-declared application fields, change notification).
	FieldWriteWakesAwait bool
	// RemoteWriteCreates lets a remote data write create its missing target
	// (§Subtree subscriptions…, RFC-0005 §D amendment 1).
	RemoteWriteCreates bool
	// RetiredChildListed keeps a retired child in its parent's :children[]
	// (§Retirement notification).
	RetiredChildListed bool
	// TombstoneOnRetire delivers a STATUS{not_found} tombstone along the
	// retired vertex's and its ancestors' edges (§Retirement notification).
	TombstoneOnRetire bool
	// SweepCappedAtRoot delivers a swept descendant only to edges at or below
	// the sweep's root (§The write sequence and pending vertices).
	SweepCappedAtRoot bool
	// DeliverEveryAssign sends every assign made between two sweeps instead
	// of the latest value once (§The write sequence…, "Coalescing is free").
	DeliverEveryAssign bool
	// ExplicitInAncestorSweep includes an EXPLICIT vertex in an ancestor's
	// sweep when it is pending (§Delivery mode).
	ExplicitInAncestorSweep bool
	// The further failure modes below give every MUST case of the graph suite
	// a bug to catch; each names the rule it breaks.

	// StringKeys keys a vertex on the string form of its path when that is not
	// canonically spelled, so two spellings reach two vertices (§Dispatch
	// keyed on canonical PATH TLV bytes).
	StringKeys bool
	// DoubleDeliverySelf delivers a write twice along the written vertex's own
	// edges (§Subtree subscriptions…, "once per subscriber").
	DoubleDeliverySelf bool
	// DeliveryReencoded re-encodes a delivered TLV with minimal headers
	// instead of carrying it as-is (§Subtree subscriptions…).
	DeliveryReencoded bool
	// CreateGateIgnored lets a write-create through on WRITE alone, without
	// CREATE on the nearest live ancestor (§Subtree subscriptions…).
	CreateGateIgnored bool
	// AppearanceSilent does not deliver the write that creates a vertex
	// (§Observing structural change: appearance is the first write).
	AppearanceSilent bool
	// RemoteWriteNotPropagated makes a remote data write an assign alone
	// (§Wire mapping: assign, then propagate).
	RemoteWriteNotPropagated bool
	// DirectedWriteHonoursMode skips the propagate of a write whose target is
	// EXPLICIT (§Wire mapping: a directed write always lands).
	DirectedWriteHonoursMode bool
	// StatusNotDelivered stores a written STATUS without delivering it (§Stale
	// and invalid values: a fault is an ordinary write).
	StatusNotDelivered bool
	// ReadStale serves the last value a sweep delivered instead of the latest
	// stored one (§Subtree subscriptions…, the one-store-per-vertex read).
	ReadStale bool
	// BranchStoredWhole stores a POINT written at a vertex whole, without
	// decomposing it (§Subtree subscriptions…, "A branch write decomposes").
	BranchStoredWhole bool
	// BranchAdmissionPerLeaf lands the leaves admitted before a refused one
	// (§Subtree subscriptions…: admission is all-or-nothing).
	BranchAdmissionPerLeaf bool
	// ComposedReadLeafOnly answers a branch's read with its own value instead
	// of the composed branch read (RFC-0016).
	ComposedReadLeafOnly bool
	// ComposedReadUnpruned keeps READ-denied subtrees in the composed read.
	ComposedReadUnpruned bool
	// AssignDelivers delivers on assign (§Assign, propagate: assign sends
	// nothing).
	AssignDelivers bool
	// PropagateWakesAwait wakes awaits on a propagate (§Assign, propagate:
	// await is independent of propagation).
	PropagateWakesAwait bool
	// HandlerAssignAccepted accepts assign and propagate at a handler vertex
	// silently instead of answering SCHEMA_NOT_FOUND (RFC-0008 Amendment 2).
	HandlerAssignAccepted bool
	// HandlerWriteSilent delivers nothing for a write at a handler vertex.
	HandlerWriteSilent bool
	// HandlerAwaitNotFound answers an await at a handler vertex NOT_FOUND
	// after the write (the behaviour Amendment 2 replaced).
	HandlerAwaitNotFound bool
	// SweepWholeSubtree includes every valued IF_NEWER descendant in a sweep,
	// pending or not (§The write sequence and pending vertices).
	SweepWholeSubtree bool
	// ExplicitAssignGated lets the EXPLICIT mode gate assign (§Delivery mode:
	// assign is never gated).
	ExplicitAssignGated bool
	// DirectPropagateOnlyPending delivers a propagate's own argument only
	// when it is pending (§Delivery mode).
	DirectPropagateOnlyPending bool
	// UnconditionalOnlyPending treats UNCONDITIONAL as IF_NEWER.
	UnconditionalOnlyPending bool
	// FoldEmitsEach ignores the FOLD emission and emits one frame per vertex
	// (§Wire mapping).
	FoldEmitsEach bool
	// FoldAcceptsStream folds a STREAM's latest value instead of refusing it.
	FoldAcceptsStream bool
	// StreamLatestOnly flushes a STREAM's latest entry instead of draining
	// every entry since the last flush (§Stream drain semantics).
	StreamLatestOnly bool
	// EnvelopeStored applies a FWD{WRITE} with its envelope instead of its
	// bare payload (§The shedding rule: shed the envelope at the terminus).
	EnvelopeStored bool
	// SettingsAbsentWhenEmpty answers the bare :settings read of a vertex
	// with no app fields SCHEMA_NOT_FOUND instead of SETTINGS{} (§Core
	// writable fields).
	SettingsAbsentWhenEmpty bool
	// UnimplementedRowsServed serves and accepts the ⚠️ liveness and
	// description rows (§Core writable fields).
	UnimplementedRowsServed bool
	// ModuleFieldsAccepted serves and accepts :settings.<module>.<field>
	// (§Module-namespaced extension fields).
	ModuleFieldsAccepted bool
	// SchemaOmitsEmptySettings leaves the empty SETTINGS out of :schema
	// (§Definitions: emitted, not omitted).
	SchemaOmitsEmptySettings bool
	// SchemaWritable accepts and serves a write of :schema (§Definitions:
	// read-only).
	SchemaWritable bool
	// ChildrenValuedOnly leaves a child that holds no value (registered, or a
	// branch) out of :children[] (§Observing structural change).
	ChildrenValuedOnly bool
	// AwaitFieldAccepted takes an await with a :field selector as an await of
	// the vertex (§Owner-declared application fields, #585).
	AwaitFieldAccepted bool
	// UnwrittenAppFieldSchemaNotFound answers a declared, never-written app
	// field SCHEMA_NOT_FOUND instead of NOT_FOUND.
	UnwrittenAppFieldSchemaNotFound bool
	// FieldWriteCreates lets a field write create its missing vertex.
	FieldWriteCreates bool
	// ReadOnlyAppWritable lets callers write ro app fields.
	ReadOnlyAppWritable bool
	// AppValueValidated refuses an app field value that is not a VALUE (the
	// runtime performs no dtype validation).
	AppValueValidated bool
	// WriteOnlyReadable serves wo app fields back to callers.
	WriteOnlyReadable bool
	// DurabilityIgnored never sends the latched value on join (§Subscriber
	// delivery policy).
	DurabilityIgnored bool
	// ReservedPolicyRejected refuses a delivery policy with bits 8-15 set.
	ReservedPolicyRejected bool
	// IndexGrows grows the slot vector to reach a wire-supplied index (§The
	// payload-discriminating :subscribers[N] write).
	IndexGrows bool
	// AppendAtFront inserts an appended edge at slot 0, renumbering the rest.
	AppendAtFront bool
	// AppendThroughWriteGate admits a :subscribers[] append through WRITE.
	AppendThroughWriteGate bool
	// EvictAllLinks evicts every edge, local ones too, whatever the link
	// (§Vertex lifecycle: only the dead link's edges go).
	EvictAllLinks bool
	// RetireShallow retires the vertex alone, leaving its subtree live.
	RetireShallow bool
	// RetireTwiceFails answers a retirement of a retired or unregistered path
	// tr::path::not_found instead of doing nothing.
	RetireTwiceFails bool
	// RootRetirable retires everything below the root when asked to retire
	// the root.
	RootRetirable bool
	// RevivalKeepsState revives a vertex with its retired self's value,
	// edges, ACL and fields.
	RevivalKeepsState bool
	// LocalWriteNoRevive answers a local write to a retired path
	// tr::path::not_found instead of reviving it.
	LocalWriteNoRevive bool
}

// removedKnobs are the seven flat :settings names RFC-0022 removed (pinned:
// graph model §Core writable fields). The reference never consults them — it
// answers every unspelled selector with tr::schema::not_found — only the
// RemovedKnobsAccepted deviation does.
var removedKnobs = map[string]bool{
	"reliability": true, "priority": true, "durability": true, "deadline_ns": true,
	"queue_max_bytes": true, "history_keep_last": true, "store_ref_min_bytes": true,
}
