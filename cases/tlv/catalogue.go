// Package tlv is the catalogue of the tlv suite: libtracer's TLV substrate
// (libtracer-graph-model, with the byte layout this project pins where the
// document's companions are missing: the requirements index's
// reconstructed§tlv-* entries) — ropes and the decoder that link-walks them,
// headers, nesting and its bound, trailers at ingress and egress, PATH
// canonicalization, the view-tree edits and their proof obligation, the
// stateless forward hop, and the delivery policy.
//
// A case ID's section is the slug of the graph-model heading whose rule the
// case enforces, and a case names in Requirements every index entry it
// judges; one that rests on a pin names the pin's reconstructed§ ID. Cases
// compare a SUT with the corpus (corpus/tlv/v1), whose expectations were
// written from the documents' words; where a case generates inputs (splits,
// truncations, nesting to the declared bound, edit sequences) the expectation
// is built by the case from the same rules, and ref/tlv serves only to parse
// what a SUT answered.
//
// Where the documents leave a writer a choice, a MUST case accepts every
// choice and a case of the choice's own level judges it: a header the SUT
// writes or rebuilds may take either form at MUST, and the minimal form (or,
// for a forwarder, the form the header arrived in) is judged at SHOULD.
package tlv

import (
	"github.com/conform-suite/conform/cases"
	"github.com/conform-suite/conform/corpus"
)

// Profile is the profile of every tlv case.
const Profile = "tlv"

// vectors is the tlv corpus as case definitions fetch from it.
type vectors = cases.Vectors[*corpus.TLVVector]

// Catalogue returns the tlv cases, sorted by ID. The vectors come from set.
func Catalogue(set *corpus.Set[*corpus.TLVVector]) []cases.Case {
	k := cases.NewKit(Profile)
	vs := cases.UseVectors(k, set)
	var all []cases.Case
	for _, group := range []func(*cases.Kit, *vectors) []cases.Case{ropes, headers, nesting, encoding, edits, paths, trailers, hops, policies} {
		all = append(all, group(k, vs)...)
	}
	return cases.Sorted(all)
}

// ofKind returns every vector of a kind that keep accepts (nil keeps them
// all), sorted by ID, and records their use.
func ofKind(vs *vectors, kind string, keep func(*corpus.TLVVector) bool) []*corpus.TLVVector {
	return vs.Where(func(v *corpus.TLVVector) bool { return v.Kind == kind && (keep == nil || keep(v)) })
}

// decodable are the frame vectors that decode; refused those that do not.
func decodable(vs *vectors) []*corpus.TLVVector {
	return ofKind(vs, corpus.TLVFrame, func(v *corpus.TLVVector) bool { return v.Tree != nil })
}

func refused(vs *vectors) []*corpus.TLVVector {
	return ofKind(vs, corpus.TLVFrame, func(v *corpus.TLVVector) bool { return v.Refusal != 0 })
}
