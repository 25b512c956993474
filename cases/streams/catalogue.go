// Package streams is the catalogue of the streams suite: the Ranvier streams
// contract (spec/ranvier-streams.md) — how samples are numbered, how a
// subscriber counts what it lost and where, how a queue accounts for its
// own drops, and how a subscriber reads and matches what a connection
// announces.
//
// Cases compare a SUT with the expectations written into the corpus from
// the specification's tables, or, where a case generates its inputs from
// the seeded randomness of T, with the reference ref/streams.
package streams

import (
	"github.com/conform-suite/conform/cases"
	"github.com/conform-suite/conform/corpus"
	"github.com/conform-suite/conform/reports"
)

// Profile is the profile of every streams case.
const Profile = "streams"

// Catalogue returns the streams cases, sorted by ID. The vectors come from
// set.
func Catalogue(set *corpus.Set[*corpus.StreamsVector]) []cases.Case {
	s := &suite{set: set}
	var all []cases.Case
	for _, group := range [][]cases.Case{s.gaps(), s.queues(), s.frames(), s.publishers(), s.announcements(), s.latency(), s.open()} {
		all = append(all, group...)
	}
	for i := range all {
		all[i].Profile = Profile
	}
	return cases.Sorted(all)
}

type suite struct {
	set *corpus.Set[*corpus.StreamsVector]
}

// vec returns the vector named by its short name.
func (s *suite) vec(name string) *corpus.StreamsVector {
	return s.set.Get(corpus.StreamsVersion + "/" + name)
}

// vecs returns the vectors named by their short names.
func (s *suite) vecs(names ...string) []*corpus.StreamsVector {
	out := make([]*corpus.StreamsVector, len(names))
	for i, n := range names {
		out[i] = s.vec(n)
	}
	return out
}

// ids returns the full IDs of short vector names.
func ids(names ...string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = corpus.StreamsVersion + "/" + n
	}
	return out
}

// The levels, as the specification's RFC 2119 words give them.
func must(c cases.Case) cases.Case   { c.Level = reports.MUST; return c }
func should(c cases.Case) cases.Case { c.Level = reports.SHOULD; return c }
func may(c cases.Case) cases.Case    { c.Level = reports.MAY; return c }
func info(c cases.Case) cases.Case   { c.Level = reports.INFO; return c }

// reconstructed tags a case whose verdict rests on spec/RECONSTRUCTED.md.
func reconstructed(c cases.Case) cases.Case {
	c.Tags = append(c.Tags, "reconstructed")
	return c
}
