package tlv_test

import (
	"context"
	"sort"
	"strings"
	"testing"

	tlvcases "github.com/conform-suite/conform/cases/tlv"
	"github.com/conform-suite/conform/corpus"
	"github.com/conform-suite/conform/reports"
	"github.com/conform-suite/conform/runner"
	"github.com/conform-suite/conform/sut/builtin"
	"github.com/conform-suite/conform/sut/impl"
	"github.com/conform-suite/conform/sut/mutant"
)

// TestEveryMustCaseCatchesAMutant runs the tlv catalogue against the
// reference, which must pass every case, and against every tlv mutant, each
// of which must fail at least one MUST case; and it requires every MUST case
// to catch at least one mutant, since a case that passes against every
// mutant proves nothing.
func TestEveryMustCaseCatchesAMutant(t *testing.T) {
	set, err := corpus.TLV()
	if err != nil {
		t.Fatal(err)
	}
	cs := tlvcases.Catalogue(set)
	run := func(spec string, im *impl.Impl) *reports.Record {
		return runner.Run(context.Background(), runner.Config{Spec: spec, Client: builtin.New(spec, im), Cases: cs, Seed: 1})
	}
	ref := run("builtin:reference", impl.Reference())
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
	caught := map[string][]string{}
	for _, m := range mutant.All() {
		if m.Suite != "tlv" {
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
		t.Logf("%-28s caught by %d: %s", m.Name, len(by), strings.Join(short(by), " "))
	}
	for _, c := range cs {
		if c.Level == reports.MUST && len(caught[c.ID]) == 0 {
			t.Errorf("MUST case %s catches no mutant", c.ID)
		}
	}
}

func short(ids []string) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = id[strings.LastIndex(id, "/")+1:]
	}
	sort.Strings(out)
	return out
}
