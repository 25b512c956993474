// Package graph is the reference implementation of libtracer's graph model at
// L4 — what a graph does with TLVs — over the TLV substrate of ref/tlv. It is
// the oracle conform's graph cases, properties and fuzzers compare an
// implementation against.
//
// The specification is libtracer's graph model document (cited below as
// "graph model" with its section); the TLV pins (docs/requirements.md) pins the byte layouts and
// statuses, and every choice this package had to make
// where the sources are silent lives in reconstructed.go, marked.
//
// A Graph keys its vertices on canonical PATH payload bytes, so two spellings
// of one path reach one vertex. A vertex enters by registration (Register) or
// by a local data write that creates it and its missing ancestors, gated by
// CREATE on the nearest live ancestor; a remote write to a missing or retired
// path answers tr::path::not_found and creates nothing. Every subscription is
// a subtree subscription: a write at W delivers the written TLV, as-is, once to
// each subscriber of W and of every ancestor.
//
// A write is assign then propagate. Assign stores the value, advances the
// vertex's write sequence and marks it pending; propagate sweeps a subtree,
// delivering the root and each descendant its delivery mode admits to every
// observer — including ancestors above the sweep root — and clears what it
// delivered, so k assigns between sweeps flush once with the latest value and
// overlapping sweeps neither double-send nor miss. A POINT written at W is a
// branch write: it decomposes onto W's subtree and each covered subscription
// point is notified once with its slice. The field discipline (:subscribers,
// :settings, :schema, :acl, :children[], :identity, app fields), awaits,
// STREAM drains, retirement, revival and link-edge eviction follow the
// document's rules, each cited where it is implemented.
//
// Config.Policy names the decisions made inside one operation — the right an
// act needs, how a write is carried out, the delivery-mode rule, what a sweep
// delivers, what wakes an await, where an appended edge lands, how a branch
// write and a retirement are carried out — as extension points whose zero value
// is the graph model; each states the model's decision as a Model function. A
// caller that wants a graph differing in one behaviour replaces one decision,
// or wraps the operations (Terminus applies a FWD through any Endpoint).
//
// Nothing is sent: a Graph records each delivery as a value (TakeDeliveries),
// completes awaits through Waiter values, and reads time only from the clock
// it is given, so a test can replay any script deterministically.
package graph
