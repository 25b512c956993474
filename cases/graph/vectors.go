package graph

import (
	"fmt"
	"strings"

	"github.com/conform-suite/conform/cases"
	"github.com/conform-suite/conform/corpus"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/reports"
)

// vectors are the cases the corpus drives: one per vector of corpus/graph/v1,
// its ID graph/<the heading the vector cites>/<the vector's name>, a MUST
// because each vector's expectations are the document's own words.
func (s *suite) vectors() []cases.Case {
	var out []cases.Case
	for _, v := range s.set.All() {
		sec, _, _ := strings.Cut(strings.TrimPrefix(v.Spec, "libtracer-graph-model §"), ";")
		c := must(cases.Case{
			ID:      "graph/" + sec + "/" + strings.TrimPrefix(v.ID, corpus.GraphVersion+"/"),
			Title:   v.Title,
			Spec:    v.Spec,
			Vectors: []string{v.ID},
			Run:     func(t *cases.T) { runVector(t, v) },
		})
		for _, tag := range v.Tags {
			if tag == "reconstructed" {
				c = reconstructed(c)
			}
		}
		out = append(out, c)
	}
	return out
}

// runVector runs a vector's script and records every mismatch.
func runVector(t *cases.T, v *corpus.GraphVector) {
	s, err := v.Script()
	if err != nil {
		panic(fmt.Sprintf("conform bug: vector %s: %v", v.ID, err))
	}
	outs := cases.Batched(t, "graph run", []*conformpb.GraphScript{s}, func(b []*conformpb.GraphScript) ([]*conformpb.GraphScriptOutput, bool) {
		r := t.Do(&conformpb.Request{Op: &conformpb.Request_Graph{Graph: &conformpb.GraphOp{Op: &conformpb.GraphOp_Run{Run: &conformpb.GraphRun{Scripts: b}}}}}).GetGraph().GetRun()
		return r.GetOutputs(), r != nil
	})
	for _, m := range v.Check(outs[0]) {
		msg := m.What
		if m.Step >= 0 {
			st := v.Steps[m.Step]
			msg = fmt.Sprintf("step %d (%s %s): %s", m.Step, st.Op, st.Path, m.What)
		}
		t.Fail(reports.Evidence{Message: msg, Input: describe(v), Expected: m.Expected, Got: m.Got})
	}
}

// describe renders a vector's script, one step a line, for the evidence.
func describe(v *corpus.GraphVector) string {
	lines := []string{v.ID}
	for _, c := range v.Callers {
		lines = append(lines, fmt.Sprintf("caller %s (%s %s)", c.Name, c.Kind, c.Link))
	}
	for i, st := range v.Steps {
		l := fmt.Sprintf("%d: %s %s %s", i, who(st.Caller), st.Op, st.Path)
		if st.Target != "" {
			l += " -> " + st.Target
		}
		if st.Mode != "" {
			l += " " + st.Mode
		}
		if st.Value != nil {
			l += " = " + render(st.Value)
		}
		lines = append(lines, l)
	}
	return strings.Join(lines, "\n")
}
