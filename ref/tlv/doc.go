// Package tlv is the reference implementation of libtracer's TLV substrate, the
// oracle conform's tlv cases and fuzzers compare an implementation against.
//
// The specification is libtracer-graph-model; the byte layout its missing
// companions would give is pinned in the TLV pins (docs/requirements.md), and §4 decides
// where the sources contradict themselves. Every byte-level constant lives in
// reconstructed.go, marked pinned or reconstructed.
//
// The package follows the graph model's two compositions. A Rope is storage: a
// chain of views over segments, blind to TLV structure. A Node is meaning: one
// TLV, whose payload is a rope viewing the bytes it came from, and whose
// children, when opt.PL is set, are nodes over those same bytes. The Decoder
// builds a tree of nodes from a rope by walking it link by link, so a frame
// decodes to the same tree however its bytes are split; encoding is the walk
// back to flat bytes (Node.AppendTo, Rope.AppendTo) or to a rope (Node.Rope).
//
// A frame on a transport is header, payload and trailer. Decode validates and
// strips the trailer (ingress); Egress attaches a fresh one. The payload bytes
// are the same in every state.
//
// On top of the substrate: PATH canonicalization and validation (path.go), the
// record layouts SETTINGS, SUBSCRIBER, POINT, FWD and REPLY (records.go), the
// delivery policy (policy.go), the view-tree edits concat, split and insert
// (edit.go), and the stateless forward hop (hop.go).
package tlv
