package streams_test

import (
	"fmt"

	"github.com/conform-suite/conform/ref/streams"
)

// A subscriber that saw 1, 2, 4 and then a late 3 has lost nothing, but the
// break it saw stays counted (ranvier-streams §3.4).
func ExampleTracker() {
	tr := streams.NewTracker()
	for _, seq := range []uint64{1, 2, 4, 3} {
		out := tr.Observe(1, streams.Sample{StreamRef: 1, Sequence: seq, MonotonicNs: seq * 100})
		fmt.Println(seq, out)
	}
	c := tr.Counters()
	fmt.Printf("missing %d breaks %d duplicated %d reordered %d\n", c.Missing, c.Breaks, c.Duplicated, c.Reordered)
	fmt.Printf("last break: after %d before %d, between %d ns and %d ns\n",
		c.LastBreak.After, c.LastBreak.Before, c.LastBreak.AfterNs, c.LastBreak.BeforeNs)
	// Output:
	// 1 first
	// 2 in-order
	// 4 gap
	// 3 reordered
	// missing 0 breaks 1 duplicated 0 reordered 1
	// last break: after 2 before 4, between 200 ns and 400 ns
}

// A queue of depth 4 that nobody reads drops six of ten samples, and the
// tracker, which saw all ten before the policy ran, reports nothing missing
// (ranvier-streams §3.5, §3.8).
func ExampleSubscription() {
	sub, err := streams.NewSubscription(streams.Options{Depth: 4, Policy: streams.DropOldest})
	if err != nil {
		fmt.Println(err)
		return
	}
	for seq := uint64(1); seq <= 10; seq++ {
		sub.Push(1, streams.Sample{StreamRef: 1, Sequence: seq})
	}
	q, g := sub.Queue(), sub.Gaps()
	fmt.Printf("delivered %d dropped %d readable %d missing %d\n", q.Delivered, q.Dropped, q.Readable, g.Missing)

	_, err = streams.NewSubscription(streams.Options{Depth: 4, Policy: streams.Block})
	fmt.Println(err)
	// Output:
	// delivered 10 dropped 6 readable 4 missing 0
	// streams: subscribe with policy block: loss policy not implemented
}
