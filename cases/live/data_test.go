package live_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/conform-suite/conform/cases"
	"github.com/conform-suite/conform/cases/live"
	"github.com/conform-suite/conform/reports"
	"github.com/conform-suite/conform/runner"
	"github.com/conform-suite/conform/suites"
	"github.com/conform-suite/conform/sut/builtin"
)

// TestReferencePassesConcurrently: the reference passes every live case,
// data plane and control plane (its node launched as a child process), on
// real sockets, with every case running at once against one reference: the
// cases share no state, so a runner may run them concurrently. A MAY or INFO
// case says in a note what it saw. No node process outlives its case.
func TestReferencePassesConcurrently(t *testing.T) {
	im := withNode(t, suites.Default().Reference(), "")
	all := registered(t)
	recs := make([]*reports.Record, len(all))
	var wg sync.WaitGroup
	for i, c := range all {
		wg.Add(1)
		go func() {
			defer wg.Done()
			recs[i] = runner.Run(context.Background(), runner.Config{
				Spec: "builtin:reference", Client: builtin.New("builtin:reference", im), Cases: []cases.Case{c}, Seed: 1, Env: &cases.Env{},
			})
		}()
	}
	wg.Wait()
	if left := leftNodes(t); len(left) > 0 {
		t.Errorf("node processes outlived their cases: %v", left)
	}
	for _, rec := range recs {
		for _, c := range rec.Cases {
			switch {
			case c.Outcome != reports.Pass && c.Outcome != reports.Info:
				t.Errorf("%s: %s: %s %v %v", c.ID, c.Outcome, c.Message, c.Evidence, c.Notes)
			case (c.Level == reports.MAY || c.Level == reports.INFO) && len(c.Notes) == 0:
				t.Errorf("%s (%s) says nothing of what it saw", c.ID, c.Level)
			}
		}
	}
	if n := len(all); n < 70 {
		t.Errorf("%d live cases, want at least 70", n)
	}
}

// registered returns the live suite's cases as the suite registry gives
// them, tagged live: the runner runs such a case again when it ends in a
// harness error, as conform run does.
func registered(t *testing.T) []cases.Case {
	t.Helper()
	cat, err := suites.Default().Catalogue()
	if err != nil {
		t.Fatal(err)
	}
	return cat.Select(func(c cases.Case) bool { return c.Suite() == "live" })
}

// TestDataCaseIDs: every data-plane case is in the live suite, in one of the
// two data-plane profiles, and cites the section its ID names.
func TestDataCaseIDs(t *testing.T) {
	if err := cases.Check(live.DataCases()); err != nil {
		t.Fatal(err)
	}
	for _, c := range live.DataCases() {
		parts := strings.Split(c.ID, "/")
		if parts[0] != "live" {
			t.Errorf("%s: not in suite live", c.ID)
		}
		if !strings.Contains(c.Spec, "§"+parts[1]) {
			t.Errorf("%s: section %s not cited in %q", c.ID, parts[1], c.Spec)
		}
		if c.Profile != live.ProfileSubscriber && c.Profile != live.ProfilePublisher {
			t.Errorf("%s: profile %q", c.ID, c.Profile)
		}
	}
}
