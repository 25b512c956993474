package streams_test

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	fuzzstreams "github.com/conform-suite/conform/fuzz/streams"
	"github.com/conform-suite/conform/ref/streams"
)

// drawSeq draws a sequence number for pair k: mostly near the pair's
// high-water mark (where the window's edges are), sometimes anywhere small,
// sometimes at the top of the uint64 range, sometimes 0.
func drawSeq(t *rapid.T, highest uint64, tracked bool) uint64 {
	switch mode := rapid.IntRange(0, 9).Draw(t, "mode"); {
	case mode == 0:
		return 0
	case mode <= 2:
		return rapid.Uint64Range(1, 300).Draw(t, "small")
	case mode == 3:
		return math.MaxUint64 - rapid.Uint64Range(0, 300).Draw(t, "fromTop")
	case !tracked:
		return rapid.Uint64Range(1, 300).Draw(t, "small")
	default:
		d := rapid.Int64Range(-70, 70).Draw(t, "delta")
		switch {
		case d < 0 && uint64(-d) >= highest:
			return 1
		case d > 0 && highest > math.MaxUint64-uint64(d):
			return math.MaxUint64
		}
		return uint64(int64(highest) + d)
	}
}

// TestTrackerMatchesModel is a state machine: after every arrival the
// tracker and the full-history model agree on the outcome and on every
// counter, and the tracker holds exactly one record per tracked pair.
func TestTrackerMatchesModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		tr, m := streams.NewTracker(), fuzzstreams.NewModel()
		highest := map[arrival]uint64{} // keyed on (conn, ref), seq unused
		t.Repeat(map[string]func(*rapid.T){
			"arrive": func(t *rapid.T) {
				conn := streams.ConnID(rapid.IntRange(0, 2).Draw(t, "conn"))
				ref := uint32(rapid.IntRange(0, 3).Draw(t, "ref"))
				k := arrival{conn: conn, ref: ref}
				h, ok := highest[k]
				s := streams.Sample{StreamRef: ref, Sequence: drawSeq(t, h, ok), MonotonicNs: rapid.Uint64().Draw(t, "ns")}
				got, want := tr.Observe(conn, s), m.Observe(conn, s)
				if got != want {
					t.Fatalf("Observe(%d, ref %d, seq %d) = %v, model says %v", conn, ref, s.Sequence, got, want)
				}
				if ref != 0 && s.Sequence != 0 && (!ok || s.Sequence > h) {
					highest[k] = s.Sequence
				}
			},
			"": func(t *rapid.T) {
				if diff := cmp.Diff(m.Counters(), tr.Counters()); diff != "" {
					t.Fatalf("counters (-model +tracker):\n%s", diff)
				}
				if tr.Pairs() != m.Pairs() {
					t.Fatalf("tracker holds %d pairs, model %d", tr.Pairs(), m.Pairs())
				}
			},
		})
	})
}

// drawSentSequences draws one publisher's sequences as a subscriber
// receives them: ascending, starting anywhere, with losses.
func drawSentSequences(t *rapid.T, label string) []uint64 {
	start := rapid.Uint64Range(1, 1000).Draw(t, label+"Start")
	n := rapid.IntRange(1, 200).Draw(t, label+"N")
	lossy := rapid.IntRange(0, 4).Draw(t, label+"LossOneIn") // 0: no loss
	seqs := []uint64{start}
	for v := start + 1; len(seqs) < n; v++ {
		if lossy > 0 && rapid.IntRange(0, lossy).Draw(t, label+"Loss") == 0 {
			continue
		}
		seqs = append(seqs, v)
	}
	return seqs
}

// shuffleInsideWindow permutes seqs so that every sample still arrives less
// than ReorderWindow behind the high-water mark: values are grouped in
// blocks of ReorderWindow counted from the first, and shuffled only inside
// their block. The first sample stays first, so it sets the mark (§3.2).
func shuffleInsideWindow(t *rapid.T, seqs []uint64, label string) []uint64 {
	out := []uint64{seqs[0]}
	for i := 1; i < len(seqs); {
		block := (seqs[i] - seqs[0]) / streams.ReorderWindow
		j := i
		for j < len(seqs) && (seqs[j]-seqs[0])/streams.ReorderWindow == block {
			j++
		}
		out = append(out, rapid.Permutation(seqs[i:j]).Draw(t, label)...)
		i = j
	}
	return out
}

// interleave merges per-stream arrival lists in a random order, keeping
// each stream's own order.
func interleave(t *rapid.T, lists [][]arrival) []arrival {
	var out []arrival
	pos := make([]int, len(lists))
	for {
		var open []int
		for i, l := range lists {
			if pos[i] < len(l) {
				open = append(open, i)
			}
		}
		if len(open) == 0 {
			return out
		}
		i := rapid.SampledFrom(open).Draw(t, "next")
		out = append(out, lists[i][pos[i]])
		pos[i]++
	}
}

func asArrivals(conn streams.ConnID, ref uint32, seqs []uint64) []arrival {
	out := make([]arrival, len(seqs))
	for i, s := range seqs {
		out[i] = arrival{conn, ref, s}
	}
	return out
}

// TestPermutingInsideWindowKeepsMissing: once everything sent has arrived,
// missing is the same whatever the order inside the window, because every
// late sample is credited back (§3.4) — and it equals the samples never
// sent.
func TestPermutingInsideWindowKeepsMissing(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		nStreams := rapid.IntRange(1, 3).Draw(t, "streams")
		var ordered, shuffled [][]arrival
		var holes uint64
		for i := range nStreams {
			seqs := drawSentSequences(t, "s")
			holes += seqs[len(seqs)-1] - seqs[0] + 1 - uint64(len(seqs))
			conn, ref := streams.ConnID(i%2), uint32(1+i/2)
			ordered = append(ordered, asArrivals(conn, ref, seqs))
			shuffled = append(shuffled, asArrivals(conn, ref, shuffleInsideWindow(t, seqs, "perm")))
		}
		inOrder, permuted := streams.NewTracker(), streams.NewTracker()
		feed(inOrder, interleave(t, ordered))
		feed(permuted, interleave(t, shuffled))
		a, b := inOrder.Counters(), permuted.Counters()
		if a.Missing != holes || b.Missing != holes {
			t.Fatalf("missing in order %d, permuted %d; want %d", a.Missing, b.Missing, holes)
		}
		if b.Duplicated != 0 {
			t.Fatalf("permuted duplicated = %d, want 0", b.Duplicated)
		}
	})
}

// TestTwoPublishersNeverInterfere: two streams under one name — two
// processes that both use reference 1, or one process with two references —
// are tracked as if each were alone, whatever the interleaving (§2.2, §2.4).
// Every arrival gets the outcome it gets alone, and the figures that belong
// to a pair add up. Missing adds up for publisher-shaped input; for
// arbitrary input it need not, because §3.4 credits one subscription-wide
// figure (see TestMissingIsPerTracker).
func TestTwoPublishersNeverInterfere(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		sameRef := rapid.Bool().Draw(t, "sameRef")
		ka, kb := arrival{conn: 1, ref: 1}, arrival{conn: 1, ref: 2}
		if sameRef {
			kb = arrival{conn: 2, ref: 1}
		}
		var a, b []uint64
		if rapid.Bool().Draw(t, "publisherShaped") {
			a, b = drawSentSequences(t, "a"), drawSentSequences(t, "b")
		} else {
			gen := rapid.SliceOfN(rapid.Uint64Range(0, 140), 1, 150)
			a, b = gen.Draw(t, "a"), gen.Draw(t, "b")
		}
		la, lb := asArrivals(ka.conn, ka.ref, a), asArrivals(kb.conn, kb.ref, b)

		aloneA, aloneB := streams.NewTracker(), streams.NewTracker()
		outA, outB := feed(aloneA, la), feed(aloneB, lb)

		both := streams.NewTracker()
		var gotA, gotB []streams.Outcome
		for _, x := range interleave(t, [][]arrival{la, lb}) {
			o := both.Observe(x.conn, x.sample())
			if x.conn == ka.conn && x.ref == ka.ref {
				gotA = append(gotA, o)
			} else {
				gotB = append(gotB, o)
			}
		}
		if diff := cmp.Diff(outA, gotA); diff != "" {
			t.Fatalf("stream A outcomes (-alone +together):\n%s", diff)
		}
		if diff := cmp.Diff(outB, gotB); diff != "" {
			t.Fatalf("stream B outcomes (-alone +together):\n%s", diff)
		}
		ca, cb, c := aloneA.Counters(), aloneB.Counters(), both.Counters()
		sum := gapFigures{ca.Missing + cb.Missing, ca.Breaks + cb.Breaks, ca.Duplicated + cb.Duplicated, ca.Reordered + cb.Reordered}
		got := figures(c)
		if !isAscending(a) || !isAscending(b) {
			sum.Missing, got.Missing = 0, 0 // not additive; see above
		}
		if diff := cmp.Diff(sum, got); diff != "" {
			t.Fatalf("figures (-sum alone +together):\n%s", diff)
		}
		if c.Streams != ca.Streams+cb.Streams {
			t.Fatalf("streams %d, want %d", c.Streams, ca.Streams+cb.Streams)
		}
	})
}

func isAscending(s []uint64) bool {
	for i := 1; i < len(s); i++ {
		if s[i] <= s[i-1] {
			return false
		}
	}
	return true
}

// TestQueueDropsNeverRaiseMissing: whatever the depth, policy and reading
// pattern, a subscription's gap counters are exactly those of a tracker fed
// the same arrivals with no queue at all (§3.1, §3.5), and every offered
// sample is either placed or dropped, once (§5.4).
func TestQueueDropsNeverRaiseMissing(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		opts := streams.Options{
			Depth:  rapid.IntRange(1, 8).Draw(t, "depth"),
			Policy: rapid.SampledFrom([]streams.Policy{streams.DropOldest, streams.DropNewest}).Draw(t, "policy"),
		}
		sub, err := streams.NewSubscription(opts)
		if err != nil {
			t.Fatal(err)
		}
		bare := streams.NewTracker()
		n := rapid.IntRange(0, 300).Draw(t, "n")
		var popped uint64
		for i := range n {
			a := arrival{
				conn: streams.ConnID(rapid.IntRange(0, 1).Draw(t, "conn")),
				ref:  uint32(rapid.IntRange(0, 2).Draw(t, "ref")),
				seq:  uint64(i/2 + 1), // ascending for every pair
			}
			if rapid.IntRange(0, 9).Draw(t, "jumble") == 0 {
				a.seq = rapid.Uint64Range(0, 200).Draw(t, "seq")
			}
			sub.Push(a.conn, a.sample())
			bare.Observe(a.conn, a.sample())
			for range rapid.IntRange(0, 2).Draw(t, "pops") {
				if _, ok := sub.Pop(); ok {
					popped++
				}
			}
		}
		if diff := cmp.Diff(bare.Counters(), sub.Gaps()); diff != "" {
			t.Fatalf("gaps (-no queue +queue):\n%s", diff)
		}
		q := sub.Queue()
		placed := q.Delivered
		if opts.Policy == streams.DropOldest {
			placed -= q.Dropped
			if q.Delivered != uint64(n) {
				t.Fatalf("drop-oldest delivered %d of %d", q.Delivered, n)
			}
		} else if q.Delivered+q.Dropped != uint64(n) {
			t.Fatalf("drop-newest delivered %d + dropped %d != %d", q.Delivered, q.Dropped, n)
		}
		if placed != popped+uint64(q.Readable) {
			t.Fatalf("placed %d != popped %d + readable %d", placed, popped, q.Readable)
		}
		if q.Peak > opts.Depth || q.Readable > opts.Depth {
			t.Fatalf("peak %d, readable %d above depth %d", q.Peak, q.Readable, opts.Depth)
		}
	})
}
