package fuzzstreams

import (
	"testing"

	"github.com/conform-suite/conform/ref/streams"
)

// TestModelWorkedExamples checks the model itself against ranvier-streams
// §3.8, so that agreeing with it means agreeing with the specification and
// not merely with another implementation's mistake.
func TestModelWorkedExamples(t *testing.T) {
	tests := []struct {
		seqs                                   []uint64
		missing, breaks, duplicated, reordered uint64
	}{
		{[]uint64{1, 2, 3, 4, 5}, 0, 0, 0, 0},
		{[]uint64{1, 2, 4}, 1, 1, 0, 0},
		{[]uint64{1, 500}, 498, 1, 0, 0},
		{[]uint64{1, 3, 5, 7}, 3, 3, 0, 0},
		{[]uint64{5000, 5001, 5002}, 0, 0, 0, 0},
		{[]uint64{1, 2, 4, 3}, 0, 1, 0, 1},
		{[]uint64{1, 2, 3, 2}, 0, 0, 1, 0},
		{[]uint64{1, 200, 2}, 198, 1, 0, 1},
	}
	for _, tt := range tests {
		m := NewModel()
		for _, s := range tt.seqs {
			m.Observe(1, streams.Sample{StreamRef: 1, Sequence: s, MonotonicNs: s})
		}
		c := m.Counters()
		if c.Missing != tt.missing || c.Breaks != tt.breaks || c.Duplicated != tt.duplicated || c.Reordered != tt.reordered {
			t.Errorf("%v: model says missing %d breaks %d duplicated %d reordered %d; §3.8 says %d %d %d %d",
				tt.seqs, c.Missing, c.Breaks, c.Duplicated, c.Reordered, tt.missing, tt.breaks, tt.duplicated, tt.reordered)
		}
	}
}
