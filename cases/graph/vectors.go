package graph

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/conform-suite/conform/cases"
	"github.com/conform-suite/conform/corpus"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/reports"
	"github.com/conform-suite/conform/reports/evidence"
)

// vectors are the cases the corpus's graph vectors drive, each a MUST whose
// expectations are the vector's, written from the document's words and the
// pins it names.
func vectors(k *cases.Kit, vecs *cases.Vectors[*corpus.GraphVector]) []cases.Case {
	return []cases.Case{
		k.Must(func() cases.Case {
			v := vecs.Get("write-bubbles-up")
			return vectorCase(v, "graph/subtree-subscriptions-branch-writes-and-write-creates/write-bubbles-up",
				"libtracer-graph-model§subtree-subscriptions-branch-writes-and-write-creates#1",
				"libtracer-graph-model§subtree-subscriptions-branch-writes-and-write-creates#2",
				"libtracer-graph-model§subtree-subscriptions-branch-writes-and-write-creates#3",
				"libtracer-graph-model§limits-the-protocol-does-not-impose#2")
		}),
		k.Must(func() cases.Case {
			v := vecs.Get("remote-write-creates-nothing")
			return vectorCase(v, "graph/subtree-subscriptions-branch-writes-and-write-creates/remote-write-creates-nothing",
				"libtracer-graph-model§subtree-subscriptions-branch-writes-and-write-creates#12",
				"libtracer-graph-model§vertex-lifecycle-write-creates-retirement-revival#2",
				"reconstructed§tlv-status#2")
		}),
		k.Must(func() cases.Case {
			v := vecs.Get("local-write-creates")
			return vectorCase(v, "graph/vertex-lifecycle-write-creates-retirement-revival/local-write-creates",
				"libtracer-graph-model§vertex-lifecycle-write-creates-retirement-revival#1",
				"libtracer-graph-model§subtree-subscriptions-branch-writes-and-write-creates#10",
				"libtracer-graph-model§subtree-subscriptions-branch-writes-and-write-creates#17",
				"libtracer-graph-model§observing-structural-change#1",
				"reconstructed§tlv-records#5")
		}),
		k.Must(func() cases.Case {
			v := vecs.Get("coalescing-k-assigns")
			return vectorCase(v, "graph/the-write-sequence-and-pending-vertices/coalescing-k-assigns",
				"libtracer-graph-model§assign-propagate-and-the-coalescing-sweep#2",
				"libtracer-graph-model§the-write-sequence-and-pending-vertices#2",
				"libtracer-graph-model§the-write-sequence-and-pending-vertices#5")
		}),
		k.Must(func() cases.Case {
			v := vecs.Get("sweep-reaches-above-root")
			return vectorCase(v, "graph/the-write-sequence-and-pending-vertices/sweep-reaches-above-root",
				"libtracer-graph-model§the-write-sequence-and-pending-vertices#3",
				"libtracer-graph-model§the-write-sequence-and-pending-vertices#4",
				"libtracer-graph-model§subtree-subscriptions-branch-writes-and-write-creates#20")
		}),
		k.Must(func() cases.Case {
			v := vecs.Get("explicit-skipped-by-ancestor-sweep")
			return vectorCase(v, "graph/delivery-mode/explicit-skipped-by-ancestor-sweep",
				"libtracer-graph-model§delivery-mode#1",
				"libtracer-graph-model§delivery-mode#4",
				"libtracer-graph-model§delivery-mode#5")
		}),
		k.Must(func() cases.Case {
			v := vecs.Get("field-write-wakes-no-await")
			return vectorCase(v, "graph/owner-declared-application-fields/field-write-wakes-no-await",
				"libtracer-graph-model§owner-declared-application-fields#16",
				"libtracer-graph-model§owner-declared-application-fields#18")
		}),
		k.Must(func() cases.Case {
			v := vecs.Get("removed-and-unimplemented-fields")
			return vectorCase(v, "graph/core-writable-fields/removed-and-unimplemented-fields",
				"libtracer-graph-model§core-writable-fields#4",
				"libtracer-graph-model§core-writable-fields#9",
				"libtracer-graph-model§core-writable-fields#10",
				"reconstructed§graph-statuses#7",
				"reconstructed§tlv-records#1")
		}),
		k.Must(func() cases.Case {
			v := vecs.Get("retire-is-silent")
			return vectorCase(v, "graph/retirement-notification/retire-is-silent",
				"libtracer-graph-model§retirement-notification#1",
				"libtracer-graph-model§vertex-lifecycle-write-creates-retirement-revival#4")
		}),
		k.Must(func() cases.Case {
			v := vecs.Get("schema-no-table")
			return vectorCase(v, "graph/definitions/schema-no-table",
				"libtracer-graph-model§definitions#3",
				"libtracer-graph-model§definitions#4",
				"reconstructed§tlv-records#1",
				"reconstructed§tlv-records#5",
				"reconstructed§tlv-type-codes#1")
		}),
		k.Must(func() cases.Case {
			v := vecs.Get("subscribers-discriminating-write")
			return vectorCase(v, "graph/the-payload-discriminating-subscribers-write/subscribers-discriminating-write",
				"libtracer-graph-model§the-payload-discriminating-subscribers-write#1",
				"libtracer-graph-model§the-payload-discriminating-subscribers-write#2",
				"libtracer-graph-model§the-payload-discriminating-subscribers-write#5",
				"libtracer-graph-model§the-payload-discriminating-subscribers-write#6",
				"libtracer-graph-model§an-indexed-subscribers-write-treated-as-an-unconditional-clear#1",
				"libtracer-graph-model§core-writable-fields#1",
				"reconstructed§tlv-records#4",
				"reconstructed§tlv-status#1",
				"reconstructed§tlv-status#2",
				"reconstructed§tlv-type-codes#1")
		}),
		k.Must(func() cases.Case {
			v := vecs.Get("two-spellings-one-vertex")
			return vectorCase(v, "graph/dispatch-keyed-on-canonical-path-tlv-bytes/two-spellings-one-vertex",
				"libtracer-graph-model§dispatch-keyed-on-canonical-path-tlv-bytes#1",
				"libtracer-graph-model§dispatch-keyed-on-canonical-path-tlv-bytes#3",
				"libtracer-graph-model§dispatch-keyed-on-canonical-path-tlv-bytes#5",
				"reconstructed§tlv-path#2")
		}),
		k.Must(func() cases.Case {
			v := vecs.Get("wildcard-write-invalid")
			return vectorCase(v, "graph/an-indexed-subscribers-write-treated-as-an-unconditional-clear/wildcard-write-invalid",
				"libtracer-graph-model§an-indexed-subscribers-write-treated-as-an-unconditional-clear#2",
				"libtracer-graph-model§the-payload-discriminating-subscribers-write#7",
				"reconstructed§tlv-status#2")
		}),
	}
}

// vectorCase is the case of vector v: its title and section, and the
// requirements it judges.
func vectorCase(v *corpus.GraphVector, id string, reqs ...string) cases.Case {
	return cases.Case{
		ID:           id,
		Title:        v.Title,
		Spec:         v.Spec,
		Requirements: reqs,
		Run:          func(t *cases.T) { runVector(t, v) },
	}
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
		t.Fail(reports.Evidence{Message: msg, Input: describe(v), Expected: m.Expected, Got: m.Got, Diff: evidence.Format(mismatchDiff(m))})
	}
}

// mismatchDiff names the field of the script's output a mismatch is in:
// replies[N].status, .value (its bytes in hex, with the offset of the first
// difference), .count, .deliveries or .wakes; the output's replies or error
// for the script as a whole. Lists (deliveries, awaits) compare line by
// line, each sorted, as Check compares them in any order.
func mismatchDiff(m corpus.GraphMismatch) []evidence.Difference {
	if m.Step < 0 {
		field := "replies"
		if m.What == "the script could not be run" {
			field = "error"
		}
		return evidence.DiffAt(field, m.Expected, m.Got)
	}
	field, _, _ := strings.Cut(m.What, " ")
	if field == "awaits" {
		field = "wakes"
	}
	path := fmt.Sprintf("replies[%d].%s", m.Step, field)
	switch field {
	case "value":
		var w, g corpus.Hex
		if json.Unmarshal([]byte(strconv.Quote(m.Expected)), &w) == nil && json.Unmarshal([]byte(strconv.Quote(m.Got)), &g) == nil {
			return evidence.DiffAt(path, []byte(w), []byte(g))
		}
	case "deliveries", "wakes":
		return evidence.DiffAt(path, lines(m.Expected), lines(m.Got))
	}
	return evidence.DiffAt(path, m.Expected, m.Got)
}

// lines splits text into its lines; none for empty text.
func lines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// describe renders a vector's script, one step a line, for the evidence.
func describe(v *corpus.GraphVector) string {
	lines := []string{v.ID}
	for _, c := range v.Callers {
		lines = append(lines, fmt.Sprintf("caller %s (%s %s)", c.Name, c.Kind, c.Link))
	}
	for i, st := range v.Steps {
		lines = append(lines, fmt.Sprintf("%d: %s", i, st.Describe()))
	}
	return strings.Join(lines, "\n")
}
