package tlv_test

import (
	"context"
	"testing"

	tlvcases "github.com/conform-suite/conform/cases/tlv"
	"github.com/conform-suite/conform/corpus"
	"github.com/conform-suite/conform/reports"
	"github.com/conform-suite/conform/runner"
	"github.com/conform-suite/conform/sut/builtin"
	"github.com/conform-suite/conform/sut/impl"
)

// TestReferencePasses: the reference passes the tlv catalogue on its own, a
// quick check while working on one suite. That every mutant is caught and
// every MUST case catches one is cases/catalog's TestMutationTable.
func TestReferencePasses(t *testing.T) {
	set, err := corpus.TLV()
	if err != nil {
		t.Fatal(err)
	}
	cs := tlvcases.Catalogue(set)
	ref := runner.Run(context.Background(), runner.Config{Spec: "builtin:reference", Client: builtin.New("builtin:reference", impl.Reference()), Cases: cs, Seed: 1})
	passed := 0
	for _, c := range ref.Cases {
		if c.Outcome != reports.Pass {
			t.Errorf("reference: %s is %s: %s %v", c.ID, c.Outcome, c.Message, c.Evidence)
		} else {
			passed++
		}
	}
	if passed < 40 {
		t.Errorf("the reference passes %d tlv cases, want at least 40", passed)
	}
}
