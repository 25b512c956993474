package requirements_test

import (
	"testing"

	"github.com/conform-suite/conform/reports"
	"github.com/conform-suite/conform/requirements"
	"github.com/conform-suite/conform/suites"
)

// shipped measures the index conform ships against its catalogue, as
// conform requirements does. Measure fails on any requirement a case names
// that the index does not hold, and on a waived requirement that a case
// judges.
func shipped(t *testing.T) (*requirements.Index, *requirements.Coverage) {
	t.Helper()
	cat, err := suites.Default().Catalogue()
	if err != nil {
		t.Fatal(err)
	}
	x, cov, err := requirements.Measure(cat.Cases, func(id string) bool { _, ok := cat.Vectors[id]; return ok })
	if err != nil {
		t.Fatal(err)
	}
	return x, cov
}

// TestShippedIndex proves that the shipped index loads and validates, that
// every source document and the reconstructed pins are indexed, and that
// every requirement a case names resolves.
func TestShippedIndex(t *testing.T) {
	x, _ := shipped(t)
	for _, name := range append(requirements.SourceDocuments(), requirements.Reconstructed) {
		d, ok := x.Document(name)
		if !ok || len(d.Requirements) < 100 {
			t.Errorf("%s: indexed %v", name, ok)
		}
	}
}

// TestEveryMustTraced keeps conform requirements --untraced at zero: every
// MUST and MUST NOT of the documents and of the pins is judged by a case or
// waived with its reason. A new requirement comes with its case or its
// waiver.
func TestEveryMustTraced(t *testing.T) {
	_, cov := shipped(t)
	for _, st := range cov.Untraced(reports.MUST) {
		t.Errorf("untraced: %s %s", st.ID, st.Summary)
	}
}
