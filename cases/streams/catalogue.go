// Package streams is the catalogue of the streams suite: the Ranvier streams
// contract (the document ranvier-streams) — how samples are numbered, how a
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
)

// Profile is the profile of every streams case.
const Profile = "streams"

// vectors are the streams corpus as the case definitions fetch from it.
type vectors = cases.Vectors[*corpus.StreamsVector]

// Catalogue returns the streams cases, sorted by ID. The vectors come from
// set.
func Catalogue(set *corpus.Set[*corpus.StreamsVector]) []cases.Case {
	k := cases.NewKit(Profile)
	vecs := cases.UseVectors(k, set)
	var all []cases.Case
	for _, group := range []func(*cases.Kit, *vectors) []cases.Case{gaps, queues, frames, publishers, announcements, latencies, open} {
		all = append(all, group(k, vecs)...)
	}
	return cases.Sorted(all)
}
