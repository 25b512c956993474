package main

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/conform-suite/conform/campaign"
	"github.com/conform-suite/conform/suites"
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
	rf, _ := campaign.Lookup(campaign.Targets(suites.Default()), "wire.read-frames")
	pool, err := loadSeeds(ctx, suites.Default(), []*campaign.Target{rf}, nil, io.Discard)
	if err != nil {
		b.Fatal(err)
	}
	e := campaign.NewEngine(client, suites.Default(), "exec:conform reference", pool, 5, time.Minute, nil)
	tg, _ := e.Lookup("wire.read-frames")
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
