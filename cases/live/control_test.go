package live

import (
	"bytes"
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
	"github.com/conform-suite/conform/reports"
	"github.com/conform-suite/conform/runner"
	"github.com/conform-suite/conform/sut/builtin"
	"github.com/conform-suite/conform/sut/impl"
	"github.com/conform-suite/conform/sut/mutant"
)

// TestMain lets this test binary be the node the node cases launch: run as
// "<test binary> reference node [--mutant NAME]" it is what
// "conform reference node" is, so the node cases run in process without a
// conform binary.
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

// withNode gives im the node command that runs this test binary as its node.
func withNode(t *testing.T, im *impl.Impl, mutantName string) *impl.Impl {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	im.SetNodeCommand(mutant.NodeCommand([]string{exe}, mutantName))
	return im
}

// TestControlCases: the reference passes every control-plane case, as node
// (launched as a child process) and as runtime (over control ops); each
// control mutant fails at least one MUST case; and the catalogue's shape
// holds.
func TestControlCases(t *testing.T) {
	cs := controlCases()
	if err := cases.Check(cs); err != nil {
		t.Fatal(err)
	}
	if len(cs) < 12 {
		t.Errorf("%d control cases, want at least 12", len(cs))
	}
	for _, c := range cs {
		section := strings.Split(c.ID, "/")[1]
		if !strings.HasPrefix(c.ID, "live/") || !strings.Contains(c.Spec, "§"+section) {
			t.Errorf("%s: not live/<section>/<slug> citing §%s in %q", c.ID, section, c.Spec)
		}
		if c.Profile != ProfileNode && c.Profile != ProfileRuntime {
			t.Errorf("%s: profile %q", c.ID, c.Profile)
		}
	}
	// The runs sleep far more than they compute, so all of them go at once,
	// whatever -parallel says; each mutant runs the cases of the profile it
	// breaks.
	type run struct {
		name string
		im   *impl.Impl
		cs   []cases.Case
		rec  *reports.Record
	}
	byProfile := func(p string) []cases.Case {
		var out []cases.Case
		for _, c := range cs {
			if c.Profile == p {
				out = append(out, c)
			}
		}
		return out
	}
	runs := []*run{{name: "reference", im: withNode(t, impl.Reference(), ""), cs: cs}}
	var names []string
	for _, m := range mutant.All() {
		profile, ok := mutant.ControlProfile(m.Name)
		if !ok {
			continue
		}
		names = append(names, m.Name)
		runs = append(runs, &run{name: m.Name, im: withNode(t, m.Impl(), m.Name), cs: byProfile(profile)})
	}
	var wg sync.WaitGroup
	for _, r := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			spec := "builtin:mutant/" + r.name
			if r.name == "reference" {
				spec = "builtin:reference"
			}
			r.rec = runner.Run(context.Background(), runner.Config{Spec: spec, Client: builtin.New(spec, r.im), Cases: r.cs, Seed: 1, Env: &cases.Env{}})
		}()
	}
	wg.Wait()
	if left := leftNodes(t); len(left) > 0 {
		t.Errorf("node processes outlived their cases: %v", left)
	}
	for _, r := range runs {
		t.Run(r.name, func(t *testing.T) {
			if r.name == "reference" {
				for _, c := range r.rec.Cases {
					if c.Outcome != reports.Pass && c.Outcome != reports.Info {
						t.Errorf("%s: %s: %s %v %v", c.ID, c.Outcome, c.Message, c.Evidence, c.Notes)
					}
				}
				return
			}
			var caught []string
			for _, c := range r.rec.Cases {
				if c.Level == reports.MUST && c.Outcome == reports.Fail {
					caught = append(caught, c.ID)
				}
				if c.Outcome == reports.Error {
					t.Errorf("%s: error: %s", c.ID, c.Message)
				}
			}
			if len(caught) == 0 {
				t.Fatalf("mutant %s is caught by no MUST control case", r.name)
			}
			t.Logf("caught by %v", caught)
		})
	}
	for _, want := range []string{"node-redials-after-refusal", "node-reads-ranvier-bindings"} {
		if !slices.Contains(names, want) {
			t.Errorf("mutant %s missing", want)
		}
	}
}

// leftNodes lists the live node processes this test binary started, on
// systems with /proc.
func leftNodes(t *testing.T) []string {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	prefix := []byte(exe + "\x00reference\x00node")
	var left []string
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err != nil || !bytes.HasPrefix(b, prefix) {
			continue
		}
		stat, _ := os.ReadFile(filepath.Join(filepath.Dir(p), "stat"))
		if f := strings.Fields(string(stat)); len(f) > 2 && f[2] == "Z" {
			continue // dead, awaiting its parent
		}
		left = append(left, strings.ReplaceAll(string(b), "\x00", " "))
	}
	return left
}
