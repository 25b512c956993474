package streams_test

import (
	"testing"

	"github.com/conform-suite/conform/ref/streams"
)

// reorderedOffsets is one block of 100 arrivals in which one sample arrives
// one place late: 1% reordering.
var reorderedOffsets = func() [100]uint64 {
	var o [100]uint64
	for i := range o {
		o[i] = uint64(i)
	}
	o[50], o[51] = o[51], o[50]
	return o
}()

func BenchmarkTrackerInOrder(b *testing.B) {
	tr := streams.NewTracker()
	s := streams.Sample{StreamRef: 1}
	b.ReportAllocs()
	for b.Loop() {
		s.Sequence++
		s.MonotonicNs = s.Sequence
		tr.Observe(1, s)
	}
}

func BenchmarkTrackerReordered1Percent(b *testing.B) {
	tr := streams.NewTracker()
	s := streams.Sample{StreamRef: 1}
	var i uint64
	b.ReportAllocs()
	for b.Loop() {
		s.Sequence = i/100*100 + reorderedOffsets[i%100] + 1
		s.MonotonicNs = s.Sequence
		tr.Observe(1, s)
		i++
	}
	if c := tr.Counters(); c.Missing != 0 || c.Duplicated != 0 {
		b.Fatalf("counters %+v", c)
	}
}

// BenchmarkTrackerInterleaved16 is sixteen pairs arriving round-robin, so
// every arrival misses the one-pair cache and pays a map lookup.
func BenchmarkTrackerInterleaved16(b *testing.B) {
	tr := streams.NewTracker()
	var i uint64
	b.ReportAllocs()
	for b.Loop() {
		k := i % 16
		tr.Observe(streams.ConnID(k%4), streams.Sample{StreamRef: uint32(k/4 + 1), Sequence: i/16 + 1})
		i++
	}
}

func BenchmarkQueuePushPop(b *testing.B) {
	sub, err := streams.NewSubscription(streams.DefaultOptions())
	if err != nil {
		b.Fatal(err)
	}
	s := streams.Sample{StreamRef: 1, Values: make([]byte, 16)}
	b.ReportAllocs()
	for b.Loop() {
		s.Sequence++
		sub.Push(1, s)
		sub.Pop()
	}
}

// BenchmarkQueueFullDropOldest pushes into a full queue, so every push
// evicts.
func BenchmarkQueueFullDropOldest(b *testing.B) {
	sub, err := streams.NewSubscription(streams.Options{Depth: 64, Policy: streams.DropOldest})
	if err != nil {
		b.Fatal(err)
	}
	s := streams.Sample{StreamRef: 1}
	b.ReportAllocs()
	for b.Loop() {
		s.Sequence++
		sub.Push(1, s)
	}
}

func BenchmarkLatencyObserve(b *testing.B) {
	var l streams.Latency
	var now uint64
	b.ReportAllocs()
	for b.Loop() {
		now += 1000
		l.Observe(now, now-300)
	}
}

func BenchmarkLatencyPercentiles(b *testing.B) {
	var l streams.Latency
	for i := range uint64(streams.LatencyWindow) {
		l.Observe(i*7919%1000, 0)
	}
	b.ReportAllocs()
	for b.Loop() {
		l.Percentiles()
	}
}

// TestSteadyStateAllocs: once its pairs exist, the tracker allocates
// nothing per arrival, and neither does the queue per push and pop. This
// counts allocations; it times nothing.
func TestSteadyStateAllocs(t *testing.T) {
	tr := streams.NewTracker()
	var seq uint64
	for ref := uint32(1); ref <= 4; ref++ {
		tr.Observe(1, streams.Sample{StreamRef: ref, Sequence: 1})
	}
	if n := testing.AllocsPerRun(1000, func() {
		seq++
		for ref := uint32(1); ref <= 4; ref++ {
			tr.Observe(1, streams.Sample{StreamRef: ref, Sequence: seq + uint64(reorderedOffsets[seq%100])})
		}
	}); n != 0 {
		t.Errorf("tracker: %v allocations per arrival, want 0", n)
	}

	sub, _ := streams.NewSubscription(streams.Options{Depth: 8, Policy: streams.DropOldest})
	s := streams.Sample{StreamRef: 1, Values: []byte{1}}
	if n := testing.AllocsPerRun(1000, func() {
		s.Sequence++
		sub.Push(2, s)
		sub.Push(2, s) // a duplicate, and later a full queue
		sub.Pop()
	}); n != 0 {
		t.Errorf("queue: %v allocations per push and pop, want 0", n)
	}

	var l streams.Latency
	if n := testing.AllocsPerRun(1000, func() {
		l.Observe(10, 5)
		l.Percentiles()
	}); n != 0 {
		t.Errorf("latency: %v allocations, want 0", n)
	}
}
