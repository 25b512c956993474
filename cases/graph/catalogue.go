// Package graph is the catalogue of the graph suite: what a libtracer graph
// does with TLVs (spec/libtracer-graph-model.md, its L4) — vertices keyed on
// canonical PATH bytes, subtree subscriptions, write-creates, write = assign +
// propagate and the coalescing sweep, delivery modes, branch writes and the
// composed branch read, the FOLD emission, stream drains, the field
// discipline (:subscribers, :settings, :schema, app fields, the ⚠️ rows and
// the removed knobs), and the vertex lifecycle (retirement, revival,
// link-edge eviction).
//
// The graph model's headings are not numbered, so a case ID's section is the
// slug of the heading whose rule it enforces, and its Spec cites that slug as
// "libtracer-graph-model §<slug>". Every case drives the SUT through the one
// conform.v1 graph op (graph.proto), which runs scripts on fresh graphs; the
// expectations are written here and in corpus/graph/v1 from the document's
// words and RECONSTRUCTED §2's layouts, never from what ref/graph does. Where
// a verdict rests on RECONSTRUCTED (a status code the document names but does
// not number, the ACL bits, a container layout) the case carries the tag
// "reconstructed"; where the document contradicts itself, the case is INFO.
package graph

import (
	"github.com/conform-suite/conform/cases"
	"github.com/conform-suite/conform/corpus"
	"github.com/conform-suite/conform/reports"
)

// Profile is the profile of every graph case.
const Profile = "graph"

// The graph-model headings the cases cite, as slugs.
const (
	secDefinitions   = "definitions"
	secDispatch      = "dispatch-keyed-on-canonical-path-tlv-bytes"
	secSubtree       = "subtree-subscriptions-branch-writes-and-write-creates"
	secAssign        = "assign-propagate-and-the-coalescing-sweep"
	secSequence      = "the-write-sequence-and-pending-vertices"
	secMode          = "delivery-mode"
	secWireMapping   = "wire-mapping"
	secStream        = "stream-drain-semantics"
	secCoreFields    = "core-writable-fields"
	secSubsWrite     = "the-payload-discriminating-subscribers-write"
	secPolicy        = "subscriber-delivery-policy"
	secApp           = "owner-declared-application-fields"
	secStale         = "stale-and-invalid-values"
	secStructural    = "observing-structural-change"
	secLifecycle     = "vertex-lifecycle-write-creates-retirement-revival"
	secRetirement    = "retirement-notification"
	secModule        = "module-namespaced-extension-fields"
	secShedding      = "the-shedding-rule-mandatory"
	secIndexedClear  = "an-indexed-subscribers-write-treated-as-an-unconditional-clear"
	secMultiSelector = "a-multi-step-selector-under-subscribers"
)

// spec cites a graph-model heading by its slug, and the other sources given.
func spec(section string, also ...string) string {
	s := "libtracer-graph-model §" + section
	for _, a := range also {
		s += "; " + a
	}
	return s
}

// Catalogue returns the graph cases, sorted by ID. The vectors come from set.
func Catalogue(set *corpus.Set[*corpus.GraphVector]) []cases.Case {
	s := &suite{set: set}
	var all []cases.Case
	for _, group := range [][]cases.Case{s.vectors(), s.vertices(), s.branches(), s.sweeps(), s.modes(), s.subscribers(), s.fields(), s.apps(), s.lifecycle()} {
		all = append(all, group...)
	}
	for i := range all {
		all[i].Profile = Profile
		all[i].Run = guard(all[i].Run)
	}
	return cases.Sorted(all)
}

type suite struct {
	set *corpus.Set[*corpus.GraphVector]
}

// guard lets a case end early with what it recorded (see stop).
func guard(f func(*cases.T)) func(*cases.T) {
	return func(t *cases.T) {
		defer func() {
			if p := recover(); p != nil {
				if _, ok := p.(stop); !ok {
					panic(p)
				}
			}
		}()
		f(t)
	}
}

// The levels, as the specification's RFC 2119 words give them.
func must(c cases.Case) cases.Case { c.Level = reports.MUST; return c }
func info(c cases.Case) cases.Case { c.Level = reports.INFO; return c }

// reconstructed tags a case whose verdict rests on spec/RECONSTRUCTED.md.
func reconstructed(c cases.Case) cases.Case {
	c.Tags = append(c.Tags, "reconstructed")
	return c
}
