// Package fuzzstreams holds the native fuzz targets for conform's streams
// reference (ref/streams), and Model, the obviously correct tracker they and
// the reference's property tests compare it with.
package fuzzstreams

import (
	"math"

	"github.com/conform-suite/conform/ref/streams"
)

// Model is a sequence tracker written for clarity rather than speed. It
// keeps every sequence it has ever seen for every pair, and applies the
// rules of ranvier-streams §3.2–§3.6 to that full history, consulting it
// only inside the 64-wide window (§3.4). streams.Tracker must agree with it
// on every input. Its memory grows with its input; use it only in tests.
type Model struct {
	pairs map[modelKey]*modelStream
	c     streams.Counters
	last  *streams.Break
}

type modelKey struct {
	conn streams.ConnID
	ref  uint32
}

type modelStream struct {
	highest   uint64
	highestNs uint64
	seen      map[uint64]bool
}

// NewModel returns a Model that has seen nothing.
func NewModel() *Model {
	return &Model{pairs: make(map[modelKey]*modelStream)}
}

// Observe applies one arrival and says which rule applied.
func (m *Model) Observe(conn streams.ConnID, s streams.Sample) streams.Outcome {
	m.c.Arrived++
	if s.StreamRef == 0 || s.Sequence == 0 { // §3.6
		m.c.Untracked++
		return streams.Untracked
	}
	k := modelKey{conn, s.StreamRef} // §2.2
	st, ok := m.pairs[k]
	if !ok { // §3.2
		m.pairs[k] = &modelStream{
			highest:   s.Sequence,
			highestNs: s.MonotonicNs,
			seen:      map[uint64]bool{s.Sequence: true},
		}
		m.c.Streams++
		return streams.First
	}
	if s.Sequence > st.highest { // §3.3
		missing := s.Sequence - st.highest - 1
		out := streams.InOrder
		if missing > 0 {
			if m.c.Missing > math.MaxUint64-missing {
				m.c.Missing = math.MaxUint64
			} else {
				m.c.Missing += missing
			}
			m.c.Breaks++
			m.last = &streams.Break{
				Conn: conn, StreamRef: s.StreamRef,
				After: st.highest, Before: s.Sequence, Missing: missing,
				AfterNs: st.highestNs, BeforeNs: s.MonotonicNs,
			}
			out = streams.Gap
		}
		st.highest, st.highestNs = s.Sequence, s.MonotonicNs
		st.seen[s.Sequence] = true
		return out
	}
	// §3.4. The width is written out rather than read from
	// streams.ReorderWindow so that a change to the reference's constant
	// shows up as a disagreement instead of moving the model with it.
	distance := st.highest - s.Sequence
	if distance >= 64 {
		m.c.Reordered++
		return streams.Beyond
	}
	if st.seen[s.Sequence] {
		m.c.Duplicated++
		return streams.Duplicate
	}
	st.seen[s.Sequence] = true
	m.c.Reordered++
	if m.c.Missing > 0 {
		m.c.Missing--
	}
	return streams.Reordered
}

// Counters returns the model's counters, shaped like the tracker's.
func (m *Model) Counters() streams.Counters {
	c := m.c
	if m.last != nil {
		b := *m.last
		c.LastBreak = &b
	}
	return c
}

// Pairs returns how many (connection, stream_ref) pairs the model tracks.
func (m *Model) Pairs() int { return len(m.pairs) }
