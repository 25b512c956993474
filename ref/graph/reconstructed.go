package graph

import "github.com/conform-suite/conform/ref/tlv"

// This file is the one place where the graph reference states a constant or a
// choice that the graph model does not pin and ref/tlv's reconstructed.go does
// not already hold. Each says whether the graph model states it (pinned, with
// its section) or the suite chose it (reconstructed, consistently with every
// sentence the sources do state, the TLV pins (docs/requirements.md)). No other file of the
// package spells one of these, so a change of reconstruction is a change here.

// Rights is an access mask: the rights a principal holds on a vertex.
type Rights uint8

// The access-mask bits. The graph model names the READ right, the WRITE right,
// the SUBSCRIBE gate, the CREATE access bit and the DELETE access-mask bit
// (§Subtree subscriptions…, §Owner-declared application fields, §Retirement
// notification) and says :acl is writable "with permission" without naming the
// permission; the bit positions, and RightAdmin as that permission, are
// reconstructed.
const (
	RightRead      Rights = 1 << 0 // pinned name, reconstructed bit
	RightWrite     Rights = 1 << 1 // pinned name, reconstructed bit
	RightSubscribe Rights = 1 << 2 // pinned name, reconstructed bit
	RightCreate    Rights = 1 << 3 // pinned name, reconstructed bit
	RightDelete    Rights = 1 << 4 // pinned name, reconstructed bit
	RightAdmin     Rights = 1 << 5 // reconstructed: the permission an :acl write needs

	// AllRights is every right.
	AllRights = RightRead | RightWrite | RightSubscribe | RightCreate | RightDelete | RightAdmin
)

// defaultRootRights is what every principal holds at the root when the owner
// installs no ACL anywhere (reconstructed: the sources never state the policy
// of an unconfigured graph; an open graph keeps every ACL-free case about the
// data plane alone).
const defaultRootRights = AllRights

// The ACL record (reconstructed: type 0x05 is itself reconstructed in
// the TLV pins (docs/requirements.md) and its layout is in the absent 05-protocol-tlvs.md). An ACL
// is a structured TLV of pairs, NAME principal then VALUE holding the rights as
// one byte; the principal "*" is the default for every principal not named.
const (
	aclDefaultPrincipal = "*"
	aclRightsSize       = 1
)

// Field selectors (graph model §Core writable fields; the implemented set is
// pinned as {children, acl, identity, schema, settings, subscribers}). The
// spelling of an address is reconstructed after the absent 03-addressing.md:
// the selector starts at the address's first ':' and may not contain '/'; in a
// FWD dst, the selector rides in the last segment record, from its first ':'.
// A path segment therefore cannot contain ':'.
const (
	fieldSep          = ':'
	fieldSubscribers  = "subscribers"
	fieldSettings     = "settings"
	fieldApp          = "app" // pinned: graph model §Module-namespaced extension fields, RFC-0010 §A.1
	fieldSchema       = "schema"
	fieldACL          = "acl"
	fieldChildren     = "children"
	fieldIdentity     = "identity"
	selectorAppend    = "[]"
	selectorStepSep   = '.'
	selectorIndexOpen = '['
)

// The seven flat :settings knobs RFC-0022 removed (reliability, priority,
// durability, deadline_ns, queue_max_bytes, history_keep_last,
// store_ref_min_bytes) and the ⚠️ rows (:liveness.heartbeat_hz,
// :liveness.last_seen_ns, :liveness.missed_deadlines, :description) answer
// tr::schema::not_found on read and write, caller-independently (pinned:
// graph model §Core writable fields; the TLV pins (docs/requirements.md)). No table names them:
// the selector parser resolves exactly the spellings above and answers every
// other selector — these, any :settings.<module>.x — with that status.

// listType is the container of a list read (:subscribers[] and :children[])
// (reconstructed: the sources give the lists but no container; BATCH is the
// format's list record, graph model §The FOLD emission mode). A :subscribers[]
// entry is the slot's SUBSCRIBER, or the empty STATUS for an empty slot, so an
// entry's position is its N; a :children[] entry is the child's NAME.
const listType = tlv.TypeBatch

// Statuses the graph model leaves open (reconstructed).
const (
	// statusRetireRoot answers an attempt to retire the root, which "cannot be
	// retired" (graph model §Vertex lifecycle) with no status given.
	statusRetireRoot = tlv.StatusAccessDenied
	// statusReadOnlyField answers a write of a read-only core field (:schema,
	// :children[], :identity, the :settings containers): the ENOTTY answer the
	// graph model gives a ro app field written by a remote caller.
	statusReadOnlyField = tlv.StatusSchemaNotFound
	// statusUnwritten answers a read of a vertex or a declared app field that
	// holds no value: "NOT_FOUND" (graph model §Owner-declared application
	// fields), read as tr::path::not_found, the code §Retirement notification
	// gives "exists but was never written".
	statusUnwritten = tlv.StatusPathNotFound
)

// Order. Wherever the graph lists vertices — :children[], the composed branch
// read, a fold, a sweep's deliveries — it goes in canonical key order, the
// byte order of canonical PATH payloads (reconstructed: the sources give the
// pending set "an ordered set of canonical PATH keys" and no other order). A
// record's length byte comes first, so a shorter name sorts before a longer
// one: /b/z before /b/empty. Along one write, a vertex's own edges are
// delivered before its ancestors', each vertex's slots in slot order.

// Behaviour the sources leave open, chosen by this reference (reconstructed);
// each is implemented where the comment says and asserted by a test:
//
//   - A data write that creates needs CREATE on the nearest live ancestor and
//     WRITE on the effective ACL the new vertex inherits (write.go).
//   - A remote branch write whose POINT tree reaches a missing vertex is
//     refused whole with tr::path::not_found, like a remote leaf write to a
//     missing path: §Subtree subscriptions says a branch write creates missing
//     vertices, RFC-0005 §D amendment 1 says a remote write creates nothing
//     (branch.go).
//   - A branch write delivers the frame to the target and its ancestors and
//     each lower covered point its smallest subview, then sweeps whatever
//     else is pending below the target; the touched leaves are not delivered a
//     second time (branch.go). The smallest subview of a point whose only value
//     is its own VALUE is that VALUE (a sibling TIME is not carried).
//   - The root POINT's NAME of a branch write is not checked against the
//     target's name (branch.go).
//   - Every :subscribers write — append, replace and clear — needs SUBSCRIBE;
//     the gate is judged before the slot index and the payload (fields.go).
//   - An append reuses the lowest empty slot; a cleared slot reads, and is
//     listed as, the empty STATUS (fields.go).
//   - Bare :subscribers and :children, without brackets, name nothing
//     (address.go); :subscribers[*] reads as the list.
//   - :identity reads the vertex's PATH TLV (fields.go).
//   - Assign and Propagate are the owner's and never create (write.go).
//   - A direct propagate of a STREAM with an empty drain delivers nothing; an
//     UNCONDITIONAL STREAM in an ancestor's sweep delivers its drain, or its
//     latest value when the drain is empty (policy.go, ModelFlush). A vertex
//     that becomes a STREAM starts with an empty drain, so one made a STREAM
//     while pending drains its latest value once (graph.go).
//   - An await outstanding on a vertex being retired completes with
//     tr::path::not_found (policy.go, ModelWakes).
