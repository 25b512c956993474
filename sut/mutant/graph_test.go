package mutant

import (
	"context"
	"testing"

	graphcases "github.com/conform-suite/conform/cases/graph"
	"github.com/conform-suite/conform/corpus"
	"github.com/conform-suite/conform/ref/graph"
	"github.com/conform-suite/conform/reports"
	"github.com/conform-suite/conform/runner"
	"github.com/conform-suite/conform/sut/builtin"
	"github.com/conform-suite/conform/sut/impl"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// runGraph runs the graph catalogue against im in-process.
func runGraph(t *testing.T, name string, im *impl.Impl) *reports.Record {
	t.Helper()
	set, err := corpus.Graph()
	if err != nil {
		t.Fatal(err)
	}
	spec := "builtin:" + name
	return runner.Run(context.Background(), runner.Config{Spec: spec, Client: builtin.New(spec, im), Cases: graphcases.Catalogue(set), Seed: 1})
}

// graphReference returns the reference answering the graph op, the one op
// these tests send (the suites' registry gives every op; it sits above this
// package).
func graphReference() *impl.Impl {
	im := impl.Reference()
	op := impl.Handler(impl.Graph)
	im.Ops = map[protoreflect.FullName]impl.OpHandler{op.Message: op.Handle}
	return im
}

// TestGraphWrapIsTransparent: a graphWrap with no hook is the reference —
// every operation reaches it through the wrapper's plumbing (address parsing,
// the FWD terminus, the per-operation delivery collection) and the graph
// catalogue cannot tell the two apart.
func TestGraphWrapIsTransparent(t *testing.T) {
	im := graphReference()
	wraps := 0
	im.Graph.New = func() impl.GraphModel {
		wraps++
		return &graphWrap{Graph: graph.New(graph.Config{})}
	}
	rec := runGraph(t, "graph-wrap", im)
	for _, c := range rec.Cases {
		if c.Outcome != reports.Pass && c.Outcome != reports.Info {
			t.Errorf("%s is %s through an empty wrapper: %s %v", c.ID, c.Outcome, c.Message, c.Evidence)
		}
	}
	if wraps == 0 {
		t.Fatal("no script ran on the wrapper")
	}
}

// TestGraphMutantsAreCaught: every graph mutant fails at least one MUST case
// of the graph suite and never errs, and every MUST graph case fails against
// at least one of them (the suites package's TestMutationTable proves the
// same for every suite over the whole catalogue; this is the quick check
// while working on the graph suite).
func TestGraphMutantsAreCaught(t *testing.T) {
	n := 0
	catches := map[string]int{}
	for _, m := range Graph() {
		n++
		rec := runGraph(t, "mutant/"+m.Name, m.Apply(graphReference()))
		caught := 0
		for _, c := range rec.Cases {
			if c.Level == reports.MUST {
				catches[c.ID] += 0
			}
			switch {
			case c.Outcome == reports.Error:
				t.Errorf("%s: %s errs: %s", m.Name, c.ID, c.Message)
			case c.Outcome == reports.Fail && c.Level == reports.MUST:
				caught++
				catches[c.ID]++
			}
		}
		if caught == 0 {
			t.Errorf("%s (%s) is caught by no MUST graph case", m.Name, m.Bug)
		}
	}
	for id, k := range catches {
		if k == 0 {
			t.Errorf("MUST case %s catches no graph mutant", id)
		}
	}
	if n != graphMutantCount {
		t.Errorf("%d graph mutants, want the %d the mutation table lists", n, graphMutantCount)
	}
}

// graphMutantCount is how many graph mutants there are: a mutant removed by
// accident shows here.
const graphMutantCount = 96
