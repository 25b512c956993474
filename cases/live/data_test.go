package live

import (
	"context"
	"strings"
	"testing"

	"github.com/conform-suite/conform/cases"
	"github.com/conform-suite/conform/reports"
	"github.com/conform-suite/conform/runner"
	"github.com/conform-suite/conform/sut/builtin"
	"github.com/conform-suite/conform/sut/impl"
)

func runData(t *testing.T, spec string, im *impl.Impl, env *cases.Env) *reports.Record {
	t.Helper()
	return runner.Run(context.Background(), runner.Config{Spec: spec, Client: builtin.New(spec, im), Cases: dataCases(), Seed: 1, Env: env})
}

// TestReferencePassesDataCases: the reference subscriber and publisher pass
// every data-plane case on real sockets.
func TestReferencePassesDataCases(t *testing.T) {
	rec := runData(t, "builtin:reference", impl.Reference(), nil)
	for _, c := range rec.Cases {
		if c.Outcome != reports.Pass {
			t.Errorf("%s: %s: %s %v %v", c.ID, c.Outcome, c.Message, c.Evidence, c.Notes)
		}
	}
	if n := len(rec.Cases); n < 20 {
		t.Errorf("%d data-plane cases, want at least 20", n)
	}
}

// TestDataCaseIDs: every data-plane case is in the live suite, in one of the
// two data-plane profiles, and cites the section its ID names.
func TestDataCaseIDs(t *testing.T) {
	if err := cases.Check(dataCases()); err != nil {
		t.Fatal(err)
	}
	for _, c := range dataCases() {
		parts := strings.Split(c.ID, "/")
		if parts[0] != "live" {
			t.Errorf("%s: not in suite live", c.ID)
		}
		if !strings.Contains(c.Spec, "§"+parts[1]) {
			t.Errorf("%s: section %s not cited in %q", c.ID, parts[1], c.Spec)
		}
		if c.Profile != ProfileSubscriber && c.Profile != ProfilePublisher {
			t.Errorf("%s: profile %q", c.ID, c.Profile)
		}
	}
}
