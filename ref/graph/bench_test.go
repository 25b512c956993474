package graph_test

import (
	"fmt"
	"testing"

	"github.com/conform-suite/conform/ref/graph"
)

// BenchmarkSweepQuietSubtree shows the cost claim of graph model §The write
// sequence and pending vertices: a sweep over a large, mostly quiet subtree
// with three pending leaves costs O(pending), not O(subtree size), so the
// time per op stays flat as the subtree grows.
func BenchmarkSweepQuietSubtree(b *testing.B) {
	for _, size := range []int{100, 10_000, 100_000} {
		b.Run(fmt.Sprintf("leaves=%d", size), func(b *testing.B) {
			g := graph.New(graph.Config{})
			for i := range size {
				must(b, g.Write(graph.Owner(), fmt.Sprintf("/big/%d/leaf", i), val("0")))
			}
			subscribe(b, g, "/big", "/obs")
			touched := []string{"/big/1/leaf", "/big/7/leaf", fmt.Sprintf("/big/%d/leaf", size-1)}
			v := val("1")
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				for _, p := range touched {
					if err := g.Assign(p, v); err != nil {
						b.Fatal(err)
					}
				}
				if err := g.Propagate("/big", graph.EmitEach); err != nil {
					b.Fatal(err)
				}
				if n := len(g.TakeDeliveries()); n != len(touched) {
					b.Fatalf("%d deliveries, want %d", n, len(touched))
				}
			}
		})
	}
}
