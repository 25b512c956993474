package main

import (
	"context"
	"testing"
	"time"

	"github.com/conform-suite/conform/campaign"
	"github.com/conform-suite/conform/sut/dial"
)

// BenchmarkFuzzExecReadFrames is the differential campaign of issue 9's
// performance goal: the frame-reading target against `exec:conform
// reference`, batched, generation, both answers and the comparison
// included. It reports inputs per second.
func BenchmarkFuzzExecReadFrames(b *testing.B) {
	ctx := context.Background()
	client, err := dial.Open(ctx, "exec:"+bin+" reference", dial.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer client.Close()
	pool, err := campaign.LoadSeeds(ctx, nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	tg, _ := campaign.Lookup("wire.read-frames")
	e := campaign.NewEngine(client, "exec:conform reference", pool, 5, time.Minute, nil)
	start := uint64(len(pool.For(tg))) // generated and mutated inputs only
	b.ResetTimer()
	err = e.RunRange(ctx, tg, start, start+uint64(b.N), func(f *campaign.Finding) error {
		b.Fatalf("finding against the reference: %s", f.Signature)
		return nil
	}, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "inputs/s")
}
