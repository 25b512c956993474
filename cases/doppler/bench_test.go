package doppler_test

import (
	"context"
	"testing"

	"github.com/conform-suite/conform/cases"
	"github.com/conform-suite/conform/cases/doppler"
	"github.com/conform-suite/conform/corpus"
	"github.com/conform-suite/conform/reports"
	"github.com/conform-suite/conform/runner"
	"github.com/conform-suite/conform/suites"
	"github.com/conform-suite/conform/sut/builtin"
)

// BenchmarkCostliestCases runs, against the reference on an embedded broker
// of natsserver's default 64 MiB max_payload, the doppler cases that
// allocate the most: B/op is what one run of the case costs conform and
// the in-process SUT together (the broker's own share included). The
// chunking case's frame is sized by the max_payload the SUT's connection
// reports, which a proxy advertises as 4 KiB: without it the frame was one
// sample over the broker's 64 MiB, and the doppler run peaked at 366 MB.
//
//	go test ./cases/doppler -run '^$' -bench CostliestCases -benchmem -benchtime 3x
func BenchmarkCostliestCases(b *testing.B) {
	set, err := corpus.Doppler()
	if err != nil {
		b.Fatal(err)
	}
	byID := map[string]cases.Case{}
	for _, c := range doppler.Catalogue(set) {
		byID[c.ID] = c
	}
	env := broker(b, 0)
	for _, id := range []string{
		"doppler/4/live-pub-chunks-at-max-payload",
		"doppler/6b/live-flush-round-trip",
		"doppler/4/live-repeat-at-index-64",
		"doppler/4/repeats-at-every-index",
		"doppler/4/reassembly-whatever-the-arrival",
	} {
		c, ok := byID[id]
		if !ok {
			b.Fatalf("no case %s", id)
		}
		b.Run(id, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				rec := runner.Run(context.Background(), runner.Config{Spec: "builtin:reference",
					Client: builtin.New("builtin:reference", suites.Default().Reference()),
					Cases:  []cases.Case{c}, Seed: 1, Env: env})
				if o := rec.Cases[0].Outcome; o != reports.Pass {
					b.Fatalf("%s: %s %s", id, o, rec.Cases[0].Message)
				}
			}
		})
	}
}
