// Package tlv is the catalogue of the tlv suite: libtracer's TLV substrate
// (spec/libtracer-graph-model.md, with the byte layout RECONSTRUCTED §2 pins)
// — ropes and the decoder that link-walks them, headers, nesting and its
// bound, trailers at ingress and egress, PATH canonicalization, the view-tree
// edits and their proof obligation, the stateless forward hop, and the
// delivery policy.
//
// A case ID's section is the slug of the graph-model heading whose rule the
// case enforces; where RECONSTRUCTED.md decides the bytes, the case says so in
// its Spec and carries the tag "reconstructed". Cases compare a SUT with the
// corpus (corpus/tlv/v1), whose expectations were written from the
// specification; where a case generates inputs (splits, truncations, nesting
// to the declared bound, edit sequences) the expectation is built by the case
// from the same rules, and ref/tlv serves only to parse what a SUT answered.
package tlv

import (
	"github.com/conform-suite/conform/cases"
	"github.com/conform-suite/conform/corpus"
	"github.com/conform-suite/conform/reports"
)

// Profile is the profile of every tlv case.
const Profile = "tlv"

// The graph-model headings the cases cite, as slugs.
const (
	secCompositions = "the-two-compositions-storage-and-meaning"
	secNested       = "nested-tlv-structure"
	secRope         = "structured-tlv-as-abstraction-memory-as-rope"
	secProof        = "spec-level-proof-obligation"
	secDispatch     = "dispatch-keyed-on-canonical-path-tlv-bytes"
	secInvariance   = "payload-invariance-across-boundaries"
	secShedding     = "the-shedding-rule-mandatory"
	secEnvelope     = "graph-data-vs-in-flight-messages-the-fwd-envelope"
	secPolicy       = "subscriber-delivery-policy"
)

// spec cites a graph-model heading by its slug, and the other sources given.
func spec(section string, also ...string) string {
	s := "libtracer-graph-model §" + section
	for _, a := range also {
		s += "; " + a
	}
	return s
}

// Catalogue returns the tlv cases, sorted by ID. The vectors come from set.
func Catalogue(set *corpus.Set[*corpus.TLVVector]) []cases.Case {
	s := &suite{set: set}
	var all []cases.Case
	for _, group := range [][]cases.Case{s.ropes(), s.headers(), s.nesting(), s.encoding(), s.edits(), s.paths(), s.trailers(), s.hops(), s.policies()} {
		all = append(all, group...)
	}
	for i := range all {
		all[i].Profile = Profile
	}
	return cases.Sorted(all)
}

type suite struct {
	set *corpus.Set[*corpus.TLVVector]
}

// vec returns the vector named by its short name.
func (s *suite) vec(name string) *corpus.TLVVector {
	return s.set.Get(corpus.TLVVersion + "/" + name)
}

// vecs returns the vectors named by their short names.
func (s *suite) vecs(names ...string) []*corpus.TLVVector {
	out := make([]*corpus.TLVVector, len(names))
	for i, n := range names {
		out[i] = s.vec(n)
	}
	return out
}

// kind returns every vector of a kind, sorted by ID, that pass keeps.
func (s *suite) kind(kind string, keep func(*corpus.TLVVector) bool) []*corpus.TLVVector {
	var out []*corpus.TLVVector
	for _, v := range s.set.All() {
		if v.Kind == kind && (keep == nil || keep(v)) {
			out = append(out, v)
		}
	}
	return out
}

// decodable are the frame vectors that decode; refused those that do not.
func (s *suite) decodable() []*corpus.TLVVector {
	return s.kind(corpus.TLVFrame, func(v *corpus.TLVVector) bool { return v.Tree != nil })
}

func (s *suite) refused() []*corpus.TLVVector {
	return s.kind(corpus.TLVFrame, func(v *corpus.TLVVector) bool { return v.Refusal != 0 })
}

// ids returns the full IDs of short vector names.
func ids(names ...string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = corpus.TLVVersion + "/" + n
	}
	return out
}

// idsOf returns the IDs of vectors.
func idsOf(vs []*corpus.TLVVector) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = v.ID
	}
	return out
}

// The levels, as the specification's RFC 2119 words give them.
func must(c cases.Case) cases.Case   { c.Level = reports.MUST; return c }
func should(c cases.Case) cases.Case { c.Level = reports.SHOULD; return c }

// reconstructed tags a case whose verdict rests on spec/RECONSTRUCTED.md.
func reconstructed(c cases.Case) cases.Case {
	c.Tags = append(c.Tags, "reconstructed")
	return c
}
