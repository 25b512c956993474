package builtin_test

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/conform-suite/conform/cases"
	"github.com/conform-suite/conform/reports"
	"github.com/conform-suite/conform/runner"
	"github.com/conform-suite/conform/suites"
	"github.com/conform-suite/conform/sut"
	"github.com/conform-suite/conform/sut/builtin"
)

// codecCases returns the catalogue's cases of the given profiles.
func codecCases(t *testing.T, profiles ...string) []cases.Case {
	t.Helper()
	cat, err := suites.Default().Catalogue()
	if err != nil {
		t.Fatal(err)
	}
	return cat.Select(func(c cases.Case) bool { return slices.Contains(profiles, c.Profile) })
}

// TestSharedClientConcurrent: one builtin Client, and so one reference,
// answers runs going side by side — the race detector sees every op of
// every suite's codec cases handled at once — and each run's record is
// the record of the same run alone.
func TestSharedClientConcurrent(t *testing.T) {
	cs := codecCases(t, "wire", "streams", "tlv", "doppler", "graph")
	reg := suites.Default()
	client := builtin.New("builtin:reference", reg.Reference())
	alone := runner.Run(context.Background(), runner.Config{Spec: "builtin:reference", Client: client, Cases: cs, Seed: 1})
	if alone.ExitCode != 0 {
		t.Fatalf("the reference alone: exit %d", alone.ExitCode)
	}
	const runs = 4
	recs := make([]*reports.Record, runs)
	var wg sync.WaitGroup
	for i := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			recs[i] = runner.Run(context.Background(), runner.Config{Spec: "builtin:reference", Client: client, Cases: cs, Seed: 1})
		}()
	}
	wg.Wait()
	for i, rec := range recs {
		for j, c := range rec.Cases {
			if a := alone.Cases[j]; c.ID != a.ID || c.Outcome != a.Outcome || c.Message != a.Message {
				t.Errorf("run %d: %s is %s %q, alone %s %q", i, c.ID, c.Outcome, c.Message, a.Outcome, a.Message)
			}
		}
	}
}

// TestSessionsOfOneRegistry: sessions opened as conform run opens them — a
// fresh reference each, from one registry — run live cases side by side
// and pass, as they do one at a time.
func TestSessionsOfOneRegistry(t *testing.T) {
	cs := codecCases(t, "ranvier-subscriber", "ranvier-publisher")
	reg := suites.Default()
	open := func(context.Context) (sut.Client, error) {
		return builtin.New("builtin:reference", reg.Reference()), nil
	}
	first, _ := open(context.Background())
	rec := runner.Run(context.Background(), runner.Config{Spec: "builtin:reference", Client: first, Open: open, Parallel: 8, Cases: cs, Seed: 1})
	for _, c := range rec.Cases {
		if c.Outcome != reports.Pass && c.Outcome != reports.Info {
			t.Errorf("%s: %s %s", c.ID, c.Outcome, c.Message)
		}
	}
	if rec.ExitCode != 0 {
		t.Errorf("exit %d", rec.ExitCode)
	}
}
