package streams

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestQueueGrowsInOrder: a ring that grows on demand behaves exactly as one
// allocated at its depth would — the same samples, in the same order, the
// same drops — across growth at every head position.
func TestQueueGrowsInOrder(t *testing.T) {
	for _, policy := range []Policy{DropOldest, DropNewest} {
		for _, depth := range []int{1, 3, initialRing, initialRing + 1, 5*initialRing + 7} {
			r := rand.New(rand.NewPCG(uint64(depth), 7))
			q, err := NewSubscription(Options{Depth: depth, Policy: policy})
			if err != nil {
				t.Fatal(err)
			}
			var model []uint64 // the queue as a plain slice
			var dropped uint64
			for seq := uint64(1); seq <= 20*uint64(depth)+200; seq++ {
				if r.IntN(3) == 0 {
					got, ok := q.Pop()
					if ok != (len(model) > 0) || ok && got.Sequence != model[0] {
						t.Fatalf("%v depth %d: pop = %d, %v; model %v", policy, depth, got.Sequence, ok, model[:min(len(model), 3)])
					}
					if ok {
						model = model[1:]
					}
					continue
				}
				q.Push(1, Sample{StreamRef: 1, Sequence: seq})
				switch {
				case len(model) < depth:
					model = append(model, seq)
				case policy == DropOldest:
					model, dropped = append(model[1:], seq), dropped+1
				default:
					dropped++
				}
			}
			var rest []uint64
			for s, ok := q.Pop(); ok; s, ok = q.Pop() {
				rest = append(rest, s.Sequence)
			}
			if !slices.Equal(rest, model) || q.Queue().Dropped != dropped {
				t.Errorf("%v depth %d: drained %d samples, dropped %d; model %d, %d", policy, depth, len(rest), q.Queue().Dropped, len(model), dropped)
			}
		}
	}
}

// TestQueueDepthIsABoundNotAnAllocation: whoever chooses the depth (a
// conform.v1 request, a fuzz input), a subscription costs what it holds.
func TestQueueDepthIsABoundNotAnAllocation(t *testing.T) {
	q, err := NewSubscription(Options{Depth: math.MaxUint32, Policy: DropOldest})
	if err != nil {
		t.Fatal(err)
	}
	for i := range uint64(10) {
		q.Push(1, Sample{StreamRef: 1, Sequence: i + 1})
	}
	if cap(q.buf) > initialRing || q.Len() != 10 {
		t.Errorf("ring of %d for 10 samples under depth %d", cap(q.buf), q.Options().Depth)
	}
}
