package live_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/conform-suite/conform/cases"
	"github.com/conform-suite/conform/cases/live"
	"github.com/conform-suite/conform/suites"
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
		err := suites.RunNode(ctx, suites.Default(), name, os.Getenv)
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

// TestControlCases: the control-plane catalogue's shape holds, and the
// mutants the suite is known by exist. That the reference passes is
// TestReferencePassesConcurrently; that each control mutant is caught is
// the suites package's TestMutationTable.
func TestControlCases(t *testing.T) {
	cs := live.ControlCases()
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
		if c.Profile != live.ProfileNode && c.Profile != live.ProfileRuntime {
			t.Errorf("%s: profile %q", c.ID, c.Profile)
		}
	}
	for _, want := range []string{"node-reads-ranvier-bindings", "node-registers-first-connection-only", "subscriber-counts-truncated-tail"} {
		if _, ok := suites.Default().Mutant(want); !ok {
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
