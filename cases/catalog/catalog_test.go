package catalog_test

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/conform-suite/conform/cases"
	"github.com/conform-suite/conform/cases/catalog"
	"github.com/conform-suite/conform/natsserver"
	"github.com/conform-suite/conform/reports"
	"github.com/conform-suite/conform/runner"
	"github.com/conform-suite/conform/sut/builtin"
	"github.com/conform-suite/conform/sut/impl"
	"github.com/conform-suite/conform/sut/mutant"
)

func load(t *testing.T) *catalog.Catalogue {
	t.Helper()
	cat, err := catalog.Load()
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
// catalog.Retired, and a retired ID is never reused. A new case's ID is
// appended to one of the files, so that it is held from then on.
func TestCaseIDsAreStable(t *testing.T) {
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
		if _, retired := catalog.Retired[c.ID]; retired {
			t.Errorf("case %s reuses a retired ID", c.ID)
		}
	}
	for id := range shipped {
		if _, retired := catalog.Retired[id]; !current[id] && !retired {
			t.Errorf("shipped case %s disappeared without being listed in catalog.Retired", id)
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
		err := mutant.RunNode(ctx, name, os.Getenv)
		stop()
		if err != nil {
			fmt.Fprintln(os.Stderr, "reference node:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestMutationTable proves the suite's power over the in-process carrier:
// the reference passes every case, and each mutant fails at least one MUST
// case of its own suite. A mutant swaps parts of its own suite only, so it is
// run against that suite's cases (narrowed to its profile when it names one);
// the reference's full run shows the other suites unaffected by construction.
func TestMutationTable(t *testing.T) {
	cat := load(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	broker := natsserver.NewLazy(natsserver.Options{MaxPayload: 1 << 20}) // NATS's own default keeps doppler's live chunking case small
	t.Cleanup(broker.Shutdown)
	env := &cases.Env{Broker: broker.URL}
	casesOf := func(m mutant.Mutant) []cases.Case {
		var out []cases.Case
		for _, c := range cat.Cases {
			if c.Suite() == m.Suite && (m.Profile == "" || c.Profile == m.Profile) {
				out = append(out, c)
			}
		}
		return out
	}
	type run struct {
		m   mutant.Mutant
		rec *reports.Record
	}
	runs := []*run{{m: mutant.Mutant{Name: "reference"}}}
	for _, m := range mutant.All() {
		runs = append(runs, &run{m: m})
	}
	// The live cases sleep far more than they compute, so the runs go
	// several at a time whatever -parallel says.
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	for _, r := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			spec, im, cs := "builtin:reference", impl.Reference(), cat.Cases
			im.SetNodeCommand(mutant.NodeCommand([]string{exe}, ""))
			if r.m.Name != "reference" {
				spec, im, cs = "builtin:mutant/"+r.m.Name, r.m.Impl(), casesOf(r.m)
				im.SetNodeCommand(mutant.NodeCommand([]string{exe}, r.m.Name))
			}
			r.rec = runner.Run(context.Background(), runner.Config{Spec: spec, Client: builtin.New(spec, im), Cases: cs, Seed: 1, Env: env})
		}()
	}
	wg.Wait()

	ref := runs[0].rec
	for _, c := range ref.Cases {
		if c.Outcome != reports.Pass && c.Outcome != reports.Info {
			t.Errorf("reference: %s is %s: %s %v", c.ID, c.Outcome, c.Message, c.Evidence)
		}
	}
	if ref.ExitCode != 0 {
		t.Errorf("reference exit code %d", ref.ExitCode)
	}
	for _, r := range runs[1:] {
		m, rec := r.m, r.rec
		t.Run(m.Name, func(t *testing.T) {
			var caught []string
			for _, c := range rec.Cases {
				if c.Level == reports.MUST && c.Outcome == reports.Fail && reports.SuiteOf(c.ID) == m.Suite {
					caught = append(caught, c.ID)
				}
				if c.Outcome == reports.Error {
					t.Errorf("%s: error outcome from an in-process mutant: %s", c.ID, c.Message)
				}
			}
			if len(caught) == 0 {
				t.Fatalf("mutant %s (%s) is caught by no MUST case", m.Name, m.Bug)
			}
			if rec.ExitCode != 1 {
				t.Errorf("exit code %d, want 1", rec.ExitCode)
			}
			t.Logf("caught by %d MUST cases, first %s", len(caught), caught[0])
		})
	}
	if n := len(mutant.All()); n < 9 {
		t.Errorf("only %d mutants", n)
	}
	if !slices.ContainsFunc(mutant.All(), func(m mutant.Mutant) bool { return m.Name == "one-byte-order" }) {
		t.Error("mutant one-byte-order missing")
	}
}
