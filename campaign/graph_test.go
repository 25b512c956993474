package campaign

import (
	"context"
	"sync"
	"testing"
	"time"

	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/suites"
	"github.com/conform-suite/conform/sut/builtin"
	"google.golang.org/protobuf/proto"
)

// TestGraphGeneratorAlone fuzzes every graph mutant with generated and
// mutated scripts only — no seed from the catalogue, which TestMutantsFound
// already shows finds all of them — so that what it counts is what the
// script generator reaches by itself. At the time of writing it finds 72 of
// the 96 in 1024 inputs each (78 in 2048, 84 in 4096: each doubling costs
// the test more than all it did before, for six more mutants); the floor
// below leaves room for a generator change that trades a few mutants for
// others, not for a generator that stops reaching the graph.
func TestGraphGeneratorAlone(t *testing.T) {
	t.Parallel()
	const budget, floor = 1024, 65
	tg, ok := Lookup(testTargets(), "graph.run")
	if !ok {
		t.Fatal("no graph.run target")
	}
	var mu sync.Mutex
	var found, missed []string
	var wg sync.WaitGroup
	sem := make(chan struct{}, 2)
	for _, m := range testRegistry().Mutants() {
		if m.Suite != "graph" {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			spec := "builtin:mutant/" + m.Name
			e := NewEngine(builtin.New(spec, m.Apply(testRegistry().Reference())), testRegistry(), spec, &Seeds{}, 1, time.Minute, nil)
			hit := false
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			e.RunRange(ctx, tg, 0, budget, func(f *Finding) error { hit = true; cancel(); return nil }, nil)
			mu.Lock()
			defer mu.Unlock()
			if hit {
				found = append(found, m.Name)
			} else {
				missed = append(missed, m.Name)
			}
		}()
	}
	wg.Wait()
	t.Logf("graph mutants found by generated scripts alone: %d of %d; missed: %v", len(found), len(found)+len(missed), missed)
	if len(found) < floor {
		t.Errorf("found %d graph mutants, want at least %d", len(found), floor)
	}
}

// TestGraphScriptsReachTheGraph checks that generated scripts are mostly
// steps the reference carries out, not refusals at the door: a generator
// whose steps all answer "denied" or "invalid path" would fuzz only the
// ACL and the address parser.
func TestGraphScriptsReachTheGraph(t *testing.T) {
	t.Parallel()
	tg, _ := Lookup(testTargets(), "graph.run")
	e := &Engine{Seed: 3, Seeds: &Seeds{}}
	ref := suites.Default().Reference()
	var steps, ok, deliveries int
	for i := range uint64(200) {
		in := e.Input(tg, i)
		outs, ans, msg := tg.outputs(ref.Handle(context.Background(), tg.request([]proto.Message{in})))
		if ans != answerOK {
			t.Fatalf("input %d: the reference answered %v: %s", i, ans, msg)
		}
		for _, r := range outs[0].(*conformpb.GraphScriptOutput).GetReplies() {
			steps++
			if r.GetStatus() == 0 {
				ok++
			}
			deliveries += len(r.GetDeliveries())
		}
	}
	t.Logf("%d steps, %d succeeded, %d deliveries", steps, ok, deliveries)
	if ok*3 < steps || deliveries == 0 {
		t.Errorf("%d of %d steps succeeded, %d deliveries: the generator no longer reaches the graph", ok, steps, deliveries)
	}
}
