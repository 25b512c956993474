package campaign

import (
	"context"
	"maps"
	"slices"
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
// process (a coordinator, each worker) does before its first input: of
// every target, and of one target of each suite, as a campaign of that
// target alone does.
func BenchmarkLoadSeeds(b *testing.B) {
	reg := testRegistry()
	all := Targets(reg)
	sets := map[string][]*Target{"all": all}
	for _, t := range all {
		if _, ok := sets[t.Suite]; !ok {
			sets[t.Suite] = []*Target{t}
		}
	}
	names := slices.Sorted(maps.Keys(sets))
	for _, name := range names {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := LoadSeeds(context.Background(), reg, sets[name], nil, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
