// Package doppler is the catalogue of the doppler suite's cases:
// doppler's streaming contract (spec/doppler-streaming.md, with the 64-byte
// header, the chunk block and the error codes pinned in
// spec/RECONSTRUCTED.md §3) — the receiver's five header checks, the header
// a sender writes, chunking and reassembly, PUSH's size refusal and the
// per-socket sequence — and its live cases (profile doppler-nats), where the
// SUT joins subjects on a real NATS server and conform publishes, subscribes
// and reads the JetStream work queue on the other side.
//
// Cases compare a SUT with expectations written into the corpus from the
// specification's words and RECONSTRUCTED's tables, or, where a case
// generates its inputs from the seeded randomness of T, with the rules of
// RECONSTRUCTED §3 computed in the case (and, for a whole reassembled frame,
// with the frame the case generated).
package doppler

import (
	"github.com/conform-suite/conform/cases"
	"github.com/conform-suite/conform/corpus"
	"github.com/conform-suite/conform/reports"
)

// Profile is the profile of every codec case of the suite; the live cases
// have LiveProfile.
const Profile = "doppler"

// Catalogue returns the doppler cases, sorted by ID: the codec cases of
// profile doppler, whose vectors come from set, and the live cases of
// profile doppler-nats.
func Catalogue(set *corpus.Set[*corpus.DopplerVector]) []cases.Case {
	s := &suite{set: set}
	var all []cases.Case
	for _, group := range [][]cases.Case{s.header(), s.encoding(), s.chunking(), s.reassembly(), s.sequence(), s.open()} {
		all = append(all, group...)
	}
	for i := range all {
		all[i].Profile = Profile
	}
	for _, group := range [][]cases.Case{s.liveReceive(), s.liveChunking(), s.liveRoles(), s.liveOpen()} {
		for _, c := range group {
			c.Profile = LiveProfile
			all = append(all, c)
		}
	}
	return cases.Sorted(all)
}

type suite struct {
	set *corpus.Set[*corpus.DopplerVector]
}

// vec returns the vector named by its short name.
func (s *suite) vec(name string) *corpus.DopplerVector {
	return s.set.Get(corpus.DopplerVersion + "/" + name)
}

// vecs returns the vectors named by their short names.
func (s *suite) vecs(names ...string) []*corpus.DopplerVector {
	out := make([]*corpus.DopplerVector, len(names))
	for i, n := range names {
		out[i] = s.vec(n)
	}
	return out
}

// ids returns the full IDs of short vector names.
func ids(names ...string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = corpus.DopplerVersion + "/" + n
	}
	return out
}

// The levels, as the specification's RFC 2119 words give them.
func must(c cases.Case) cases.Case   { c.Level = reports.MUST; return c }
func should(c cases.Case) cases.Case { c.Level = reports.SHOULD; return c }
func info(c cases.Case) cases.Case   { c.Level = reports.INFO; return c }

// reconstructed tags a case whose verdict rests on spec/RECONSTRUCTED.md.
func reconstructed(c cases.Case) cases.Case {
	c.Tags = append(c.Tags, "reconstructed")
	return c
}
