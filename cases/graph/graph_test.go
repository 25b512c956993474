package graph_test

import (
	"context"
	"sort"
	"strings"
	"testing"

	graphcases "github.com/conform-suite/conform/cases/graph"
	"github.com/conform-suite/conform/corpus"
	"github.com/conform-suite/conform/reports"
	"github.com/conform-suite/conform/runner"
	"github.com/conform-suite/conform/sut/builtin"
	"github.com/conform-suite/conform/sut/impl"
	"github.com/conform-suite/conform/sut/mutant"
)

// TestEveryMustCaseCatchesAMutant runs the graph catalogue against the
// reference, which must pass every case (INFO cases are recorded as info),
// and against every graph mutant, each of which must fail at least one MUST
// case; and it requires every MUST case to catch at least one mutant, since a
// case that passes against every mutant proves nothing.
func TestEveryMustCaseCatchesAMutant(t *testing.T) {
	set, err := corpus.Graph()
	if err != nil {
		t.Fatal(err)
	}
	cs := graphcases.Catalogue(set)
	run := func(spec string, im *impl.Impl) *reports.Record {
		return runner.Run(context.Background(), runner.Config{Spec: spec, Client: builtin.New(spec, im), Cases: cs, Seed: 1})
	}
	ref := run("builtin:reference", impl.Reference())
	passed := 0
	for _, c := range ref.Cases {
		switch c.Outcome {
		case reports.Pass:
			passed++
		case reports.Info:
		default:
			t.Errorf("reference: %s is %s: %s %v", c.ID, c.Outcome, c.Message, c.Evidence)
		}
	}
	if passed < 45 {
		t.Errorf("the reference passes %d graph cases, want at least 45", passed)
	}
	caught := map[string][]string{}
	for _, m := range mutant.All() {
		if m.Suite != "graph" {
			continue
		}
		rec := run("builtin:mutant/"+m.Name, m.Impl())
		var by []string
		for _, c := range rec.Cases {
			if c.Outcome == reports.Error {
				t.Errorf("mutant %s: %s is an error: %s", m.Name, c.ID, c.Message)
			}
			if c.Level == reports.MUST && c.Outcome == reports.Fail {
				by = append(by, c.ID)
				caught[c.ID] = append(caught[c.ID], m.Name)
			}
		}
		if len(by) == 0 {
			t.Errorf("mutant %s (%s) is caught by no MUST case", m.Name, m.Bug)
		}
		t.Logf("%-40s caught by %d: %s", m.Name, len(by), strings.Join(short(by), " "))
	}
	for _, c := range cs {
		if c.Level == reports.MUST && len(caught[c.ID]) == 0 {
			t.Errorf("MUST case %s catches no mutant", c.ID)
		}
	}
	t.Logf("%d of %d graph cases pass against the reference", passed, len(cs))
}

func short(ids []string) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = id[strings.LastIndex(id, "/")+1:]
	}
	sort.Strings(out)
	return out
}
