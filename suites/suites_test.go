package suites_test

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strings"
	"syscall"
	"testing"

	"github.com/conform-suite/conform/cases"
	"github.com/conform-suite/conform/mutation"
	"github.com/conform-suite/conform/natsserver"
	"github.com/conform-suite/conform/reports"
	"github.com/conform-suite/conform/suite"
	"github.com/conform-suite/conform/suites"
)

func load(t *testing.T) *suite.Catalogue {
	t.Helper()
	cat, err := suites.Default().Catalogue()
	if err != nil {
		t.Fatal(err)
	}
	return cat
}

// TestEveryVectorIsUsed: a vector no case uses checks nothing, and a case
// naming a vector that does not exist cites nothing.
func TestEveryVectorIsUsed(t *testing.T) {
	cat := load(t)
	used := map[string]bool{}
	for _, c := range cat.Cases {
		for _, id := range c.Vectors {
			if _, ok := cat.Vectors[id]; !ok {
				t.Errorf("case %s names vector %s, which does not exist", c.ID, id)
			}
			used[id] = true
		}
	}
	for id := range cat.Vectors {
		if !used[id] {
			t.Errorf("vector %s is used by no case", id)
		}
	}
}

// TestCaseIDsAreStable holds every case ID ever shipped (testdata/
// shipped-ids*.txt, a file per suite or piece of work so that parallel work
// never edits one file). An ID may leave the catalogue only by being listed in
// its suite's Retired, and a retired ID is never reused. A new case's ID is
// appended to one of the files, so that it is held from then on.
func TestCaseIDsAreStable(t *testing.T) {
	reg := suites.Default()
	cat := load(t)
	files, err := filepath.Glob("testdata/shipped-ids*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata/shipped-ids*.txt: %v", err)
	}
	shipped := map[string]bool{}
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			if id := strings.TrimSpace(line); id != "" && !strings.HasPrefix(id, "#") {
				shipped[id] = true
			}
		}
	}
	current := map[string]bool{}
	for _, c := range cat.Cases {
		current[c.ID] = true
		if !shipped[c.ID] {
			t.Errorf("case %s is not in testdata/shipped-ids*.txt: append it, so that its ID is held from now on", c.ID)
		}
		if _, retired := reg.Retired(c.ID); retired {
			t.Errorf("case %s reuses a retired ID", c.ID)
		}
	}
	for id := range shipped {
		if _, retired := reg.Retired(id); !current[id] && !retired {
			t.Errorf("shipped case %s disappeared without being listed in its suite's Retired", id)
		}
	}
}

// TestLevelsAndSections: every case cites a section and its ID names the
// section it cites.
func TestLevelsAndSections(t *testing.T) {
	for _, c := range load(t).Cases {
		section := strings.Split(c.ID, "/")[1]
		if !strings.Contains(c.Spec, "§"+section) {
			t.Errorf("case %s: ID section %s is not cited in %q", c.ID, section, c.Spec)
		}
	}
}

// TestMain lets this test binary be the node the ranvier-node cases launch:
// run as "<test binary> reference node [--mutant NAME]" it is what
// "conform reference node" is, so the mutation table needs no conform binary.
func TestMain(m *testing.M) {
	if len(os.Args) > 2 && os.Args[1] == "reference" && os.Args[2] == "node" {
		name := ""
		if len(os.Args) == 5 && os.Args[3] == "--mutant" {
			name = os.Args[4]
		}
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		err := suites.RunNode(ctx, suites.Default(), name, os.Getenv)
		stop()
		if err != nil {
			fmt.Fprintln(os.Stderr, "reference node:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	// The mutation table allocates fast beside a live heap of 65 MB (95 MB
	// at the 90th percentile): with the collector's default target it ran
	// 262 collections, a fifth of the package's CPU time. Twice the target
	// costs about 250 MB more at the peak (570-600 MB) and saves 6-8 of
	// the table's 46-52 user CPU-seconds. GOGC, when set, wins.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(200)
	}
	os.Exit(m.Run())
}

// TestMutationTable proves the suite's power over the in-process carrier:
// the reference passes every case, each mutant fails at least one MUST case
// of its own suite, and every MUST case fails against at least one mutant.
func TestMutationTable(t *testing.T) {
	cat := load(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	broker := natsserver.NewLazy(natsserver.Options{MaxPayload: 1 << 20}) // NATS's own default keeps doppler's live chunking case small
	t.Cleanup(broker.Shutdown)
	table := mutation.Run(context.Background(), mutation.Config{
		Suites: suites.Default(), Cases: cat.Cases, Seed: 1, Env: &cases.Env{Broker: broker.URL, CredentialBroker: natsserver.CredentialBroker}, Self: []string{exe},
	})
	for _, c := range mutation.ReferenceFailures(table.Reference) {
		t.Errorf("reference: %s is %s: %s %v", c.ID, c.Outcome, c.Message, c.Evidence)
	}
	if table.Reference.ExitCode != 0 {
		t.Errorf("reference exit code %d", table.Reference.ExitCode)
	}
	for _, r := range table.Rows {
		t.Run(r.Mutant.Name, func(t *testing.T) {
			for _, c := range r.Record.Cases {
				if c.Outcome == reports.Error {
					t.Errorf("%s: error outcome from an in-process mutant: %s", c.ID, c.Message)
				}
			}
			if len(r.Caught) == 0 {
				// Say what its cases did instead, so that a run on a
				// loaded machine shows whether conform could not judge.
				for _, c := range r.Record.Cases {
					if c.Level == reports.MUST && c.Outcome != reports.Pass {
						t.Logf("%s: %s %s %s %s", c.ID, c.Outcome, c.ErrorKind, c.Message, strings.Join(c.Notes, "; "))
					}
				}
				t.Fatalf("mutant %s (%s) is caught by no MUST case", r.Mutant.Name, r.Mutant.Bug)
			}
			if r.Record.ExitCode != 1 {
				t.Errorf("exit code %d, want 1", r.Record.ExitCode)
			}
			t.Logf("caught by %d MUST cases, first %s", len(r.Caught), r.Caught[0])
		})
	}
	// A MUST case no mutant fails passes against every bug conform can
	// make: until a mutant shows it can fail, it proves nothing.
	for _, id := range table.Idle(cat.Cases) {
		t.Errorf("MUST case %s catches no mutant", id)
	}
	if n := len(table.Rows); n < 9 {
		t.Errorf("only %d mutants", n)
	}
	if _, ok := suites.Default().Mutant("one-byte-order"); !ok {
		t.Error("mutant one-byte-order missing")
	}
}
