// Package doppler is the catalogue of the doppler suite: doppler's streaming
// contract (doppler-streaming), with what the document leaves out pinned by
// this project — the 64-byte header's layout, the check order and verdicts,
// the 24-byte chunk block, the error codes and the subjects (the
// requirements index's reconstructed§doppler-* entries). Its codec cases
// (profile doppler) judge the receiver's five header checks, the header a
// sender writes, chunking and reassembly, PUSH's size refusal and the
// per-socket sequence; its live cases (profile doppler-nats) have the SUT
// join subjects on a real NATS server while conform publishes, subscribes,
// reads the JetStream work queue and, where a rule only shows when the broker
// is not a microsecond away, puts a delaying, throttling proxy on the SUT's
// path (live/netem).
//
// A case names in Requirements every index entry it judges; one that rests
// on a pin names the pin's reconstructed§ ID, which tags it reconstructed.
// Cases compare a SUT with the corpus (corpus/doppler/v1), whose expectations
// were written from the document's words and the pins, never computed by the
// reference; where a case generates its inputs from the seeded randomness of
// T, it computes the expectation from the same rules, and ref/doppler serves
// only to build inputs and to read what a SUT answered.
package doppler

import (
	"github.com/conform-suite/conform/cases"
	"github.com/conform-suite/conform/corpus"
)

// Profile is the profile of every codec case of the suite; the live cases
// have LiveProfile.
const Profile = "doppler"

// vectors is the doppler corpus as case definitions fetch from it.
type vectors = cases.Vectors[*corpus.DopplerVector]

// Catalogue returns the doppler cases, sorted by ID: the codec cases of
// profile doppler and the live cases of profile doppler-nats. The vectors
// come from set.
func Catalogue(set *corpus.Set[*corpus.DopplerVector]) []cases.Case {
	k := cases.NewKit(Profile)
	vs := cases.UseVectors(k, set)
	var all []cases.Case
	for _, group := range []func(*cases.Kit, *vectors) []cases.Case{
		header, encoding, chunking, reassembly, sequences, open,
		liveReceive, liveChunking, liveRoles, liveDelay, liveTime, liveOpen,
	} {
		all = append(all, group(k, vs)...)
	}
	return cases.Sorted(all)
}
