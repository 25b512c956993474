// Package graph is the catalogue of the graph suite: what a libtracer graph
// does with TLVs (the libtracer-graph-model document, its L4) — vertices
// keyed on canonical PATH bytes, subtree subscriptions, write-creates, write =
// assign + propagate and the coalescing sweep, delivery modes, branch writes
// and the composed branch read, the FOLD emission, stream drains, the field
// discipline (:subscribers, :settings, :schema, :acl, :identity, app fields,
// the ⚠️ rows and the removed knobs), access control, the FWD terminus, and
// the vertex lifecycle (retirement, revival, link-edge eviction).
//
// The graph model's headings are not numbered, so a case ID's section is the
// slug of the heading whose rule it enforces, and its Spec cites that slug as
// "libtracer-graph-model §<slug>". Every case drives the SUT through the one
// conform.v1 graph op, which runs scripts on fresh graphs; the expectations
// are written here and in the corpus's graph vectors from the document's
// words and the project's pins (the requirements index's reconstructed§…
// entries: the record layouts, status codes, ACL rights and list containers),
// never from what the reference does. A case names the pins its verdict rests
// on in its Requirements; where the document leaves a behaviour open, the
// case is INFO or MAY and says in a note what it saw.
//
// A TLV the SUT synthesizes (a :schema, a :settings container, a list, an
// :acl or :identity read, a FWD{REPLY}) is compared as a TLV tree, whatever
// length form its headers take: the 4-byte header is a SHOULD
// (reconstructed§tlv-header#3), judged on its own by a SHOULD case. A TLV the
// SUT stores and serves as written (a value, a SUBSCRIBER record, an app
// field) is compared byte for byte.
package graph

import (
	"github.com/conform-suite/conform/cases"
	"github.com/conform-suite/conform/corpus"
)

// Profile is the profile of every graph case.
const Profile = "graph"

// Catalogue returns the graph cases, sorted by ID. The vectors come from set.
func Catalogue(set *corpus.Set[*corpus.GraphVector]) []cases.Case {
	k := cases.NewKit(Profile)
	vecs := cases.UseVectors(k, set)
	var all []cases.Case
	for _, group := range [][]cases.Case{
		vectors(k, vecs), vertices(k), branches(k), sweeps(k), modes(k), subscribers(k),
		fields(k), apps(k), lifecycle(k), access(k, vecs), terminus(k, vecs), pins(k, vecs),
		branchShapes(k), streams(k), slots(k), headers(k),
	} {
		all = append(all, group...)
	}
	return cases.Sorted(all)
}
