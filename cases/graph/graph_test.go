package graph_test

import (
	"context"
	"testing"

	graphcases "github.com/conform-suite/conform/cases/graph"
	"github.com/conform-suite/conform/corpus"
	"github.com/conform-suite/conform/reports"
	"github.com/conform-suite/conform/runner"
	"github.com/conform-suite/conform/suites"
	"github.com/conform-suite/conform/sut/builtin"
)

// TestReferencePasses: the reference passes the graph catalogue on its own, a
// quick check while working on one suite. That every mutant is caught and
// every MUST case catches one is cases/catalog's TestMutationTable.
func TestReferencePasses(t *testing.T) {
	set, err := corpus.Graph()
	if err != nil {
		t.Fatal(err)
	}
	cs := graphcases.Catalogue(set)
	ref := runner.Run(context.Background(), runner.Config{Spec: "builtin:reference", Client: builtin.New("builtin:reference", suites.Default().Reference()), Cases: cs, Seed: 1})
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
	if passed < 110 {
		t.Errorf("the reference passes %d graph cases, want at least 110", passed)
	}
}
