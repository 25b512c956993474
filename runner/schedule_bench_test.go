package runner

import (
	"context"
	"fmt"
	"testing"

	"github.com/conform-suite/conform/cases"
)

// BenchmarkSchedule is the runner's own cost per case — starting it,
// recording it in order, a session for each live case — over 512 cases
// that send one op each, half of them live: one at a time, and up to 8 at
// once. (What overlapping live cases saves is BenchmarkGateRun's, in
// cmd/conform: here no case waits.)
func BenchmarkSchedule(b *testing.B) {
	var cs []cases.Case
	for i := range 512 {
		c := mk(fmt.Sprintf("wire/1/c%03d", i), "MUST", false)
		if i%2 == 0 {
			c.Tags = []string{LiveTag}
		}
		cs = append(cs, c)
	}
	for _, parallel := range []int{1, 8} {
		b.Run(fmt.Sprintf("parallel=%d", parallel), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				f := newFleet("wire")
				f.noWait = true
				rec := Run(context.Background(), Config{Spec: "fake", Client: f.add(), Open: f.open, Parallel: parallel, Cases: cs})
				if rec.ExitCode != ExitOK {
					b.Fatalf("exit %d", rec.ExitCode)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(cs)), "ns/case")
		})
	}
}
