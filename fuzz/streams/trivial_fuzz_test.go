package fuzzstreams

import "testing"

// FuzzTrivial does nothing with its input. It is the yardstick this
// package's targets are measured against (docs/fuzzing.md, Measurements):
// it pays what every target here pays per execution (the fuzzing engine,
// the coverage counters of the packages this test binary links) and
// nothing else, so a target's execs/s over FuzzTrivial's, run on the same
// machine at the same time, is the share of its cost that is its own.
func FuzzTrivial(f *testing.F) {
	f.Add([]byte{0})
	f.Fuzz(func(t *testing.T, b []byte) { _ = len(b) })
}
