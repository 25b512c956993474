package streams_test

import (
	"testing"

	"pgregory.net/rapid"

	"github.com/conform-suite/conform/ref/streams"
)

// windowModel judges late arrivals against every sequence ever seen,
// consulting the history only inside a window of the given width: what
// TrackerOptions.Window asks for, written for clarity.
type windowModel struct {
	width   uint64
	highest map[uint32]uint64
	seen    map[uint32]map[uint64]bool
}

func (m *windowModel) observe(ref uint32, seq uint64) streams.Outcome {
	h, ok := m.highest[ref]
	switch {
	case !ok:
		m.highest[ref], m.seen[ref] = seq, map[uint64]bool{seq: true}
		return streams.First
	case seq > h:
		m.highest[ref] = seq
		m.seen[ref][seq] = true
		if seq > h+1 {
			return streams.Gap
		}
		return streams.InOrder
	case h-seq >= m.width:
		return streams.Beyond
	case m.seen[ref][seq]:
		return streams.Duplicate
	}
	m.seen[ref][seq] = true
	return streams.Reordered
}

// TestTrackerWindow: a tracker built with a window of any width, across
// the one-word boundary and several words wide, judges late arrivals as a
// full history consulted only inside that width does; the zero option is
// the width §3.4 fixes.
func TestTrackerWindow(t *testing.T) {
	for _, width := range []int{0, 1, 63, 64, 65, 127, 128, 200, 256} {
		rapid.Check(t, func(t *rapid.T) {
			want := uint64(width)
			if width == 0 {
				want = streams.ReorderWindow
			}
			tr := streams.NewTrackerWith(streams.TrackerOptions{Window: width})
			m := &windowModel{width: want, highest: map[uint32]uint64{}, seen: map[uint32]map[uint64]bool{}}
			for i := range rapid.IntRange(1, 400).Draw(t, "n") {
				ref := uint32(rapid.IntRange(1, 2).Draw(t, "ref"))
				base := m.highest[ref]
				seq := max(1, base+uint64(rapid.IntRange(0, 300).Draw(t, "ahead")))
				if rapid.Bool().Draw(t, "late") {
					seq = max(1, base-min(base, uint64(rapid.IntRange(0, 300).Draw(t, "behind"))))
				}
				got := tr.Observe(1, streams.Sample{StreamRef: ref, Sequence: seq})
				if w := m.observe(ref, seq); got != w {
					t.Fatalf("window %d, arrival %d (ref %d, seq %d after %d): %v, want %v", width, i, ref, seq, base, got, w)
				}
			}
		})
	}
}

// TestTrackerTracked: the Tracked option decides which samples are
// attributed to a stream; nil untracks stream_ref 0 and sequence 0 (§3.6).
func TestTrackerTracked(t *testing.T) {
	samples := []streams.Sample{{StreamRef: 1, Sequence: 0}, {StreamRef: 0, Sequence: 1}, {StreamRef: 1, Sequence: 1}}
	for _, tc := range []struct {
		name    string
		tracked func(streams.Sample) bool
		want    []streams.Outcome
	}{
		{"nil", nil, []streams.Outcome{streams.Untracked, streams.Untracked, streams.First}},
		{"every sample", func(streams.Sample) bool { return true },
			[]streams.Outcome{streams.First, streams.First, streams.InOrder}},
		{"none", func(streams.Sample) bool { return false },
			[]streams.Outcome{streams.Untracked, streams.Untracked, streams.Untracked}},
	} {
		tr := streams.NewTrackerWith(streams.TrackerOptions{Tracked: tc.tracked})
		for i, s := range samples {
			if got := tr.Observe(1, s); got != tc.want[i] {
				t.Errorf("%s: sample %+v: %v, want %v", tc.name, s, got, tc.want[i])
			}
		}
	}
}

// TestTrackerShift: the Shift option moves the history when the mark
// advances; nil is the shift §3.4 requires, which a step of 64 or more
// empties, and a shift taking its count modulo 64 keeps a stale history
// that reads a late, unseen sample as a duplicate.
func TestTrackerShift(t *testing.T) {
	masked := func(h, step uint64) uint64 { return h << (step % 64) }
	for _, tc := range []struct {
		name  string
		shift func(h, step uint64) uint64
		seqs  []uint64
		want  streams.Outcome // of the last arrival
	}{
		{"nil, step 64", nil, []uint64{1, 2, 3, 67, 66}, streams.Reordered},
		{"nil, step 66", nil, []uint64{1, 2, 3, 69, 67}, streams.Reordered},
		{"nil, step 200", nil, []uint64{1, 2, 3, 203, 195}, streams.Reordered},
		{"modulo 64, step 64", masked, []uint64{1, 2, 3, 67, 66}, streams.Duplicate},
		{"modulo 64, step 66", masked, []uint64{1, 2, 3, 69, 67}, streams.Duplicate},
		{"modulo 64, step 200", masked, []uint64{1, 2, 3, 203, 195}, streams.Duplicate},
		{"modulo 64, step 63", masked, []uint64{1, 2, 3, 66, 65}, streams.Reordered},
	} {
		tr := streams.NewTrackerWith(streams.TrackerOptions{Shift: tc.shift})
		var got streams.Outcome
		for _, seq := range tc.seqs {
			got = tr.Observe(1, streams.Sample{StreamRef: 1, Sequence: seq})
		}
		if got != tc.want {
			t.Errorf("%s: %v: the last arrival is %v, want %v", tc.name, tc.seqs, got, tc.want)
		}
	}
	// A shift that empties the word for a long step, written out, is the
	// nil shift.
	t.Run("nil is the written-out shift", rapid.MakeCheck(func(t *rapid.T) {
		explicit := streams.NewTrackerWith(streams.TrackerOptions{Shift: func(h, step uint64) uint64 {
			if step >= 64 {
				return 0
			}
			return h << step
		}})
		ref := streams.NewTracker()
		high := uint64(1)
		for i := range rapid.IntRange(1, 200).Draw(t, "n") {
			seq := high + uint64(rapid.IntRange(0, 150).Draw(t, "ahead"))
			if rapid.Bool().Draw(t, "late") {
				seq = max(1, high-min(high, uint64(rapid.IntRange(0, 80).Draw(t, "behind"))))
			}
			high = max(high, seq)
			s := streams.Sample{StreamRef: 1, Sequence: seq}
			if a, b := explicit.Observe(1, s), ref.Observe(1, s); a != b {
				t.Fatalf("arrival %d (seq %d): %v, nil shift %v", i, seq, a, b)
			}
		}
	}))
}
