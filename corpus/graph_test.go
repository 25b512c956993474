package corpus_test

import (
	"context"
	"testing"

	"github.com/conform-suite/conform/corpus"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/suites"
)

// TestReferenceReproducesGraphVectors runs every graph vector's script on the
// reference graph (through the conform.v1 op handler, as builtin:reference
// does) and requires every expectation to hold. The vectors were written from
// the graph model, so a disagreement is a bug in one or the other, never
// something to regenerate.
func TestReferenceReproducesGraphVectors(t *testing.T) {
	set, err := corpus.Graph()
	if err != nil {
		t.Fatal(err)
	}
	ref := suites.Default().Reference()
	for _, v := range set.All() {
		t.Run(v.ID, func(t *testing.T) {
			s, err := v.Script()
			if err != nil {
				t.Fatal(err)
			}
			resp := ref.Handle(context.Background(), &conformpb.Request{Op: &conformpb.Request_Graph{Graph: &conformpb.GraphOp{
				Op: &conformpb.GraphOp_Run{Run: &conformpb.GraphRun{Scripts: []*conformpb.GraphScript{s}}}}}})
			outs := resp.GetGraph().GetRun().GetOutputs()
			if len(outs) != 1 {
				t.Fatalf("response %v", resp)
			}
			for _, m := range v.Check(outs[0]) {
				t.Errorf("step %d: %s:\nwant %s\n got %s", m.Step, m.What, m.Expected, m.Got)
			}
		})
	}
}

// TestGraphVectorsCiteTheirSection: every vector cites the graph model.
func TestGraphVectorsCiteTheirSection(t *testing.T) {
	set, err := corpus.Graph()
	if err != nil {
		t.Fatal(err)
	}
	if len(set.All()) < 10 {
		t.Errorf("%d graph vectors, want at least 10", len(set.All()))
	}
	for _, v := range set.All() {
		if v.Title == "" || len(v.Spec) < len("libtracer-graph-model §x") || v.Spec[:len("libtracer-graph-model §")] != "libtracer-graph-model §" {
			t.Errorf("%s: spec %q, title %q", v.ID, v.Spec, v.Title)
		}
	}
}
