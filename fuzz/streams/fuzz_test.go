package fuzzstreams

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/conform-suite/conform/ref/streams"
)

// arrivalLen is how many input bytes make one arrival: connection,
// reference, a mode, a signed delta and eight raw bytes.
const arrivalLen = 12

// decoded is one arrival decoded from fuzz input.
type decoded struct {
	conn streams.ConnID
	smp  streams.Sample
}

// decodeArrivals turns arbitrary bytes into arrivals that reach the
// tracker's edges often: few connections and references, so pairs repeat;
// sequences near the previous one on the same pair (the window's edges),
// near zero, near 2^64-1, or raw.
func decodeArrivals(data []byte) []decoded {
	type key struct {
		conn streams.ConnID
		ref  uint32
	}
	last := map[key]uint64{}
	var out []decoded
	for ; len(data) >= arrivalLen; data = data[arrivalLen:] {
		conn := streams.ConnID(data[0] % 4)
		ref := uint32(data[1] % 4) // 0 is "no stream"
		delta := int64(int8(data[3]))
		raw := binary.LittleEndian.Uint64(data[4:])
		var seq uint64
		switch data[2] % 4 {
		case 0: // near the previous sequence on this pair
			prev := last[key{conn, ref}]
			switch {
			case delta < 0 && uint64(-delta) > prev:
				seq = 0
			case delta > 0 && prev > math.MaxUint64-uint64(delta):
				seq = math.MaxUint64
			default:
				seq = uint64(int64(prev) + delta)
			}
		case 1: // near zero
			seq = uint64(uint8(delta))
		case 2: // near the top
			seq = math.MaxUint64 - uint64(uint8(delta))
		case 3:
			seq = raw
		}
		last[key{conn, ref}] = seq
		out = append(out, decoded{conn, streams.Sample{StreamRef: ref, Sequence: seq, MonotonicNs: raw}})
	}
	return out
}

// arrivalBytes encodes seeds: (conn, ref, mode, delta, raw) per arrival.
func arrivalBytes(as ...[5]uint64) []byte {
	var b []byte
	for _, a := range as {
		b = append(b, byte(a[0]), byte(a[1]), byte(a[2]), byte(a[3]))
		b = binary.LittleEndian.AppendUint64(b, a[4])
	}
	return b
}

// raw is a seed arrival with an exact sequence.
func raw(conn, ref, seq uint64) [5]uint64 { return [5]uint64{conn, ref, 3, 0, seq} }

func addSeeds(f *testing.F) {
	// §3.8's rows on one pair, and the uint64 edges.
	for _, seqs := range [][]uint64{
		{1, 2, 3, 4, 5}, {1, 2, 4}, {1, 500}, {1, 3, 5, 7}, {5000, 5001, 5002},
		{1, 2, 4, 3}, {1, 2, 3, 2}, {1, 200, 2}, {1, 65, 2}, {1, 66, 2},
		{math.MaxUint64 - 1, math.MaxUint64, 1}, {1, math.MaxUint64},
	} {
		var as [][5]uint64
		for _, s := range seqs {
			as = append(as, raw(1, 1, s))
		}
		f.Add(arrivalBytes(as...))
	}
	// §2.4: two publishers, one name, both ways; §3.6: nothing tracked.
	f.Add(arrivalBytes(raw(1, 1, 1), raw(1, 2, 1), raw(1, 1, 2), raw(1, 2, 2)))
	f.Add(arrivalBytes(raw(1, 1, 1), raw(2, 1, 1), raw(1, 1, 2), raw(2, 1, 2)))
	f.Add(arrivalBytes(raw(1, 0, 5), raw(1, 3, 0)))
	// Relative steps walking the window's edge.
	f.Add(arrivalBytes([5]uint64{1, 1, 1, 1, 0}, [5]uint64{1, 1, 0, 64, 0}, [5]uint64{1, 1, 0, 0xC1, 0}, [5]uint64{1, 1, 0, 0xC0, 0}))
}

// FuzzTrackerMatchesModel feeds arbitrary arrivals to the reference tracker
// and to the full-history model: they must agree on every outcome and every
// counter, and the tracker must hold one record per tracked pair and no
// more.
func FuzzTrackerMatchesModel(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, m := streams.NewTracker(), NewModel()
		for i, a := range decodeArrivals(data) {
			got, want := tr.Observe(a.conn, a.smp), m.Observe(a.conn, a.smp)
			if got != want {
				t.Fatalf("arrival %d (conn %d, ref %d, seq %d): tracker %v, model %v",
					i, a.conn, a.smp.StreamRef, a.smp.Sequence, got, want)
			}
		}
		if diff := cmp.Diff(m.Counters(), tr.Counters()); diff != "" {
			t.Fatalf("counters (-model +tracker):\n%s", diff)
		}
		// Bounded state: one record per tracked pair, and there are at most
		// 4 connections × 3 non-zero references here.
		if tr.Pairs() != m.Pairs() || tr.Pairs() > 12 {
			t.Fatalf("tracker holds %d pairs, model tracks %d", tr.Pairs(), m.Pairs())
		}
		if c := tr.Counters(); uint64(tr.Pairs()) != c.Streams {
			t.Fatalf("pairs %d, streams counter %d", tr.Pairs(), c.Streams)
		}
	})
}

// FuzzSubscription pushes arbitrary arrivals through a subscription with a
// fuzzed depth, policy and reading pattern. The queue must never change
// what the tracker reports (§3.1, §3.5), never exceed its depth, and count
// every offered sample as placed or dropped exactly once (§5.4).
func FuzzSubscription(f *testing.F) {
	f.Add(byte(4), byte(0), arrivalBytes(raw(1, 1, 1), raw(1, 1, 2), raw(1, 1, 3), raw(1, 1, 4), raw(1, 1, 5)))
	f.Add(byte(4), byte(1), arrivalBytes(raw(1, 1, 1), raw(1, 1, 2), raw(1, 1, 3), raw(1, 1, 4), raw(1, 1, 5)))
	f.Fuzz(func(t *testing.T, depth, flags byte, data []byte) {
		opts := streams.Options{Depth: int(depth%16) + 1, Policy: streams.Policy(flags & 1)}
		sub, err := streams.NewSubscription(opts)
		if err != nil {
			t.Fatal(err)
		}
		m := NewModel()
		var popped uint64
		arrivals := decodeArrivals(data)
		for i, a := range arrivals {
			sub.Push(a.conn, a.smp)
			m.Observe(a.conn, a.smp)
			// The mode byte's high bits decide how many to read after it.
			for range data[i*arrivalLen+2] >> 6 {
				if _, ok := sub.Pop(); ok {
					popped++
				}
			}
		}
		if diff := cmp.Diff(m.Counters(), sub.Gaps()); diff != "" {
			t.Fatalf("gaps (-model +subscription):\n%s", diff)
		}
		q, n := sub.Queue(), uint64(len(arrivals))
		if q.Readable > opts.Depth || q.Peak > opts.Depth {
			t.Fatalf("readable %d, peak %d, depth %d", q.Readable, q.Peak, opts.Depth)
		}
		placed := q.Delivered
		if opts.Policy == streams.DropOldest {
			placed -= q.Dropped
			if q.Delivered != n {
				t.Fatalf("drop-oldest delivered %d of %d", q.Delivered, n)
			}
		} else if q.Delivered+q.Dropped != n {
			t.Fatalf("drop-newest delivered %d + dropped %d of %d", q.Delivered, q.Dropped, n)
		}
		if placed != popped+uint64(q.Readable) {
			t.Fatalf("placed %d, popped %d, readable %d", placed, popped, q.Readable)
		}
	})
}
