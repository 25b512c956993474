package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/conform-suite/conform/internal/hang"
	"github.com/conform-suite/conform/reports"
	"github.com/conform-suite/conform/suites"
)

// controlProfiles are the live control-plane profiles.
const controlProfiles = "ranvier-node,ranvier-runtime"

// runQuiet runs the binary like conform does, with mark and env in its
// environment, without the per-run check for leftover processes, so that
// runs can go at once; the caller checks once all of them have ended. It
// returns an error where conform would fail the test, so that it can run
// off the test's goroutine.
func runQuiet(deadline time.Duration, mark string, env []string, args ...string) (result, error) {
	cmd := exec.Command(bin, args...)
	cmd.Env = append(append(os.Environ(), mark), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		return result{}, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(deadline):
		cmd.Process.Kill()
		<-done
		return result{}, fmt.Errorf("conform %v did not finish within %v\nstdout:\n%s\nstderr:\n%s", args, deadline, out.String(), errb.String())
	}
	r := result{stdout: out.String(), stderr: errb.String()}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		r.code = ee.ExitCode()
	} else if err != nil {
		return r, err
	}
	for i, a := range args {
		if a == "--json" && i+1 < len(args) {
			b, err := os.ReadFile(args[i+1])
			if err != nil {
				return r, fmt.Errorf("record: %v\nstderr: %s", err, r.stderr)
			}
			r.raw = b
			r.rec = new(reports.Record)
			if err := json.Unmarshal(b, r.rec); err != nil {
				return r, err
			}
		}
	}
	return r, nil
}

// runsAtOnce bounds the runs runAll starts at once: enough for runs that
// mostly wait to overlap, few enough that a small machine holds them.
const runsAtOnce = 4

// runAll runs bin once with each argument list, up to runsAtOnce at once —
// runs that mostly wait on timeouts and sockets need not take turns,
// whatever -parallel says — and returns their results in order, each record
// checked against the schema. It fails t at once if a run could not be
// run, and checks that the runs left no process behind.
func runAll(t *testing.T, deadline time.Duration, env []string, argss ...[]string) []result {
	t.Helper()
	mark := testMark(t)
	guard := hang.Guard(t, deadline)
	res := make([]result, len(argss))
	errs := make([]error, len(argss))
	sem := make(chan struct{}, runsAtOnce)
	var wg sync.WaitGroup
	for i, args := range argss {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			res[i], errs[i] = runQuiet(guard, mark, env, args...)
		}()
	}
	wg.Wait()
	for i := range argss {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		if res[i].raw != nil {
			checkAgainstSchema(t, res[i].raw)
		}
	}
	assertNoChildren(t)
	return res
}

// TestLiveControl: the reference passes every control-plane case as node and
// as runtime, in process and as a separate conform.v1 process; a node run by
// --node-cmd alone (observation, no shim) passes the node cases; control
// mutants run through the CLI — a node mutant's node is conform itself,
// started as "reference node --mutant NAME" — exit 1 with a MUST case
// failed; no node process outlives its run. The runs sleep far more than
// they compute, so they go several at once (runAll), whatever -parallel
// says.
//
// That every control mutant is caught is the mutation table's to prove
// (suites' TestMutationTable, with the same node processes); here three
// stand for the CLI's part: the first node mutant and the first runtime
// mutant, and the node mutant that only a second connection shows.
func TestLiveControl(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	type run struct {
		name     string
		args     []string
		mutant   bool
		minPass  int
		res      result
		recorded string
	}
	var runs []*run
	add := func(name string, mut bool, minPass int, args ...string) {
		rec := filepath.Join(dir, fmt.Sprintf("run%d.json", len(runs)))
		runs = append(runs, &run{name: name, mutant: mut, minPass: minPass, recorded: rec, args: append(append([]string{"run"}, args...), "--json", rec)})
	}
	add("builtin:reference", false, 20, "--sut", "builtin:reference", "--profile", controlProfiles)
	add("exec:conform reference", false, 20, "--sut", "exec:"+bin+" reference", "--profile", controlProfiles)
	add("node-cmd", false, 12, "--profile", "ranvier-node", "--node-cmd", bin+" reference node")
	nodeMutants := 0
	sampled := map[string]bool{}
	for _, m := range suites.Default().Mutants() {
		if profile := m.Profile; profile == "ranvier-node" || profile == "ranvier-runtime" {
			if profile == "ranvier-node" {
				nodeMutants++
			}
			if !sampled[profile] || m.Name == "node-registers-first-connection-only" {
				sampled[profile] = true
				add(m.Name, true, 0, "--sut", "builtin:mutant/"+m.Name, "--profile", profile)
			}
		}
	}
	if !sampled["ranvier-node"] || !sampled["ranvier-runtime"] {
		t.Errorf("control mutants sampled: %v, want a node and a runtime mutant", sampled)
	}
	if nodeMutants < 2 {
		t.Errorf("%d node mutants, want the two of issue 7", nodeMutants)
	}
	argss := make([][]string, len(runs))
	for i, r := range runs {
		argss[i] = r.args
	}
	for i, res := range runAll(t, time.Minute, nil, argss...) {
		runs[i].res = res
	}
	for _, r := range runs {
		t.Run(r.name, func(t *testing.T) {
			if r.mutant {
				checkCaught(t, r.res)
			} else {
				checkPassing(t, r.res, r.minPass)
			}
			if r.name == "node-cmd" && !strings.HasPrefix(r.res.rec.SUT.Spec, "node-cmd ") {
				t.Errorf("record names the SUT %q, want the observed node command", r.res.rec.SUT.Spec)
			}
		})
	}
}

func checkPassing(t *testing.T, r result, minPass int) {
	t.Helper()
	if r.code != 0 {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if n := count(r.rec, reports.Pass); n < minPass {
		t.Errorf("%d cases pass, want at least %d\n%s", n, minPass, r.stdout)
	}
	for _, o := range []reports.Outcome{reports.Fail, reports.Error, reports.Warn, reports.Skip} {
		if n := count(r.rec, o); n != 0 {
			t.Errorf("%d cases %s\n%s", n, o, r.stdout)
		}
	}
}

func checkCaught(t *testing.T, r result) {
	t.Helper()
	if r.code != 1 {
		t.Fatalf("exit %d, want 1\n%s", r.code, r.stdout)
	}
	var caught []string
	for _, c := range r.rec.Cases {
		if c.Level == reports.MUST && c.Outcome == reports.Fail {
			caught = append(caught, c.ID)
		}
		if c.Outcome == reports.Error {
			t.Errorf("%s: error outcome: %s", c.ID, c.Message)
		}
	}
	if len(caught) == 0 {
		t.Fatalf("caught by no MUST case\n%s", r.stdout)
	}
	t.Logf("caught by %v", caught)
}
