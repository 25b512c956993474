package streams_test

import (
	"errors"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/conform-suite/conform/ref/streams"
)

// fakeClock is a host clock that advances by 10 ns a reading.
type fakeClock struct {
	mu  sync.Mutex
	now uint64
}

func (c *fakeClock) read() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now += 10
	return c.now
}

func collect(dst *[]streams.Sample) func(streams.Sample) {
	return func(s streams.Sample) { *dst = append(*dst, s) }
}

// TestSequenceAssignment: §2.1 and §2.2. Sequences start at 1, step by
// exactly 1, and each stream counts on its own, even under one name.
func TestSequenceAssignment(t *testing.T) {
	rt := streams.NewRuntime((&fakeClock{}).read)
	a, err := rt.Open("trial.events", "")
	if err != nil {
		t.Fatal(err)
	}
	b, err := rt.Open("trial.events", "")
	if err != nil {
		t.Fatal(err)
	}
	var got []streams.Sample
	for range 3 {
		a.Publish(0, nil, collect(&got))
		b.Publish(0, nil, collect(&got))
	}
	type id struct {
		Ref uint32
		Seq uint64
	}
	var ids []id
	for _, s := range got {
		ids = append(ids, id{s.StreamRef, s.Sequence})
	}
	want := []id{{1, 1}, {2, 1}, {1, 2}, {2, 2}, {1, 3}, {2, 3}}
	if diff := cmp.Diff(want, ids); diff != "" {
		t.Errorf("(ref, sequence) (-want +got):\n%s", diff)
	}
	// §4.1: the runtime stamps the publish time, increasing.
	for i := 1; i < len(got); i++ {
		if got[i].MonotonicNs <= got[i-1].MonotonicNs {
			t.Errorf("sample %d stamped %d after %d", i, got[i].MonotonicNs, got[i-1].MonotonicNs)
		}
	}
	if a.Sent() != 3 || a.LastSequence() != 3 {
		t.Errorf("produced stream: sent %d, last %d; want 3, 3 (§2.5: they coincide)", a.Sent(), a.LastSequence())
	}

	// §2.4 end to end: a subscriber keyed on the pair sees both clean.
	tr := streams.NewTracker()
	for _, s := range got {
		tr.Observe(a.Conn(), s)
	}
	if c := tr.Counters(); c.Streams != 2 || figures(c) != (gapFigures{}) {
		t.Errorf("subscriber counters %+v, want two clean streams", c)
	}
}

// TestPublishIsOrderedUnderConcurrency: §2.3. Numbering and delivery are
// one step, so concurrent publishers on one stream deliver in sequence
// order, and a tracker downstream sees no gap and no reordering.
func TestPublishIsOrderedUnderConcurrency(t *testing.T) {
	rt := streams.NewRuntime((&fakeClock{}).read)
	s, _ := rt.Open("x", "")
	var mu sync.Mutex
	tr := streams.NewTracker()
	deliver := func(smp streams.Sample) {
		mu.Lock()
		defer mu.Unlock()
		tr.Observe(s.Conn(), smp)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 500 {
				s.Publish(0, nil, deliver)
			}
		})
	}
	wg.Wait()
	c := tr.Counters()
	if c.Arrived != 4000 || figures(c) != (gapFigures{}) {
		t.Errorf("counters %+v, want 4000 arrivals in order", c)
	}
}

// TestSourceTimestampGate: §4.2. A stream that named no clock domain says
// so, and a source timestamp given to it is replaced with 0, not refused.
func TestSourceTimestampGate(t *testing.T) {
	rt := streams.NewRuntime((&fakeClock{}).read)
	bare, _ := rt.Open("a", "")
	dev, _ := rt.Open("b", "device.42")
	if bare.CarriesSourceTimestamp() || !dev.CarriesSourceTimestamp() {
		t.Fatalf("CarriesSourceTimestamp: bare %v, device %v", bare.CarriesSourceTimestamp(), dev.CarriesSourceTimestamp())
	}
	var got []streams.Sample
	bare.Publish(777, []byte{1}, collect(&got))
	dev.Publish(777, []byte{2}, collect(&got))
	if got[0].SourceNs != 0 || got[1].SourceNs != 777 {
		t.Errorf("source timestamps %d, %d; want 0, 777", got[0].SourceNs, got[1].SourceNs)
	}
}

// TestRepublish: §2.5 and §4.1. Sequence and both timestamps pass through;
// stream_ref is the one field overwritten; samples sent is not the last
// sequence; the adopted stream has its own connection.
func TestRepublish(t *testing.T) {
	rt := streams.NewRuntime((&fakeClock{}).read)
	live, _ := rt.Open("replay", "")
	ad, err := rt.Adopt("replay")
	if err != nil {
		t.Fatal(err)
	}
	if ad.Conn() == live.Conn() {
		t.Errorf("adopted stream shares connection %d with local publishing", ad.Conn())
	}
	if ad2, _ := rt.Adopt("replay"); ad2.Conn() == ad.Conn() || ad2.Ref() == ad.Ref() {
		t.Errorf("two adopted streams share a connection or a reference")
	}

	recorded := []streams.Sample{
		{StreamRef: 9, Sequence: 1, MonotonicNs: 100, SourceNs: 1000, Values: []byte("a")},
		{StreamRef: 9, Sequence: 2, MonotonicNs: 200, SourceNs: 2000, Values: []byte("b")},
		{StreamRef: 9, Sequence: 3, MonotonicNs: 300, SourceNs: 3000, Values: []byte("c")},
		{StreamRef: 9, Sequence: 7, MonotonicNs: 700, SourceNs: 7000, Values: []byte("d")},
	}
	var got []streams.Sample
	for _, s := range recorded {
		ad.Republish(s, collect(&got))
	}
	want := make([]streams.Sample, len(recorded))
	for i, s := range recorded {
		s.StreamRef = ad.Ref()
		want[i] = s
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("republished (-want +got):\n%s", diff)
	}
	if ad.Sent() != 4 || ad.LastSequence() != 7 {
		t.Errorf("sent %d, last sequence %d; want 4, 7", ad.Sent(), ad.LastSequence())
	}
	// The three lost before recording survive to the subscriber.
	tr := streams.NewTracker()
	for _, s := range got {
		tr.Observe(ad.Conn(), s)
	}
	if c := tr.Counters(); c.Missing != 3 || c.Breaks != 1 {
		t.Errorf("subscriber missing %d, breaks %d; want 3, 1", c.Missing, c.Breaks)
	}
}

// TestReferences: §2.6. References start at 1, are shared by produced and
// adopted streams, and are never reused, including after a stream is
// dropped. An empty name is refused (§6.1).
func TestReferences(t *testing.T) {
	rt := streams.NewRuntime((&fakeClock{}).read)
	var refs []uint32
	for i := range 6 {
		var ref uint32
		if i%3 == 2 {
			a, err := rt.Adopt("n")
			if err != nil {
				t.Fatal(err)
			}
			ref = a.Ref()
		} else {
			s, err := rt.Open("n", "")
			if err != nil {
				t.Fatal(err)
			}
			// The stream is dropped at once; that frees no reference.
			ref = s.Ref()
		}
		refs = append(refs, ref)
	}
	if diff := cmp.Diff([]uint32{1, 2, 3, 4, 5, 6}, refs); diff != "" {
		t.Errorf("references (-want +got):\n%s", diff)
	}
	if _, err := rt.Open("", ""); !errors.Is(err, streams.ErrEmptyName) {
		t.Errorf("Open with empty name: %v, want ErrEmptyName", err)
	}
	if _, err := rt.Adopt(""); !errors.Is(err, streams.ErrEmptyName) {
		t.Errorf("Adopt with empty name: %v, want ErrEmptyName", err)
	}
	if s, _ := rt.Open("n", ""); s.Ref() != 7 || s.Name() != "n" {
		t.Errorf("after refused opens: ref %d, want 7 (a refusal allocates nothing)", s.Ref())
	}
}
