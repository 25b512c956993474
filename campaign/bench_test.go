package campaign

import (
	"context"
	"testing"
	"time"

	"github.com/conform-suite/conform/suites"
	"github.com/conform-suite/conform/sut"
	"github.com/conform-suite/conform/sut/builtin"
)

// BenchmarkReadFramesBuiltin measures a differential campaign on the
// frame-reading target against the in-process reference: inputs per
// second, generation, both answers and the comparison included. The same
// over exec, a second process, is BenchmarkFuzzExecReadFrames in
// cmd/conform.
func BenchmarkReadFramesBuiltin(b *testing.B) {
	benchReadFrames(b, builtin.New("builtin:reference", suites.Default().Reference()), "builtin:reference")
}

func benchReadFrames(b *testing.B, c sut.Client, spec string) {
	pool := testSeeds(b)
	tg, _ := Lookup(testTargets(), "wire.read-frames")
	e := NewEngine(c, testRegistry(), spec, pool, 5, time.Minute, nil)
	start := uint64(len(pool.For(tg))) // generated inputs only
	b.ResetTimer()
	if err := e.RunRange(context.Background(), tg, start, start+uint64(b.N), func(f *Finding) error {
		b.Fatalf("finding against the reference: %s", f.Signature)
		return nil
	}, nil); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "inputs/s")
}

// BenchmarkLoadSeeds measures building the seed pool, which every fuzz
// process (a coordinator, each worker) does before its first input.
func BenchmarkLoadSeeds(b *testing.B) {
	reg := testRegistry()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := LoadSeeds(context.Background(), reg, nil, nil); err != nil {
			b.Fatal(err)
		}
	}
}
