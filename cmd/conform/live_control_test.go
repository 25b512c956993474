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

	"github.com/conform-suite/conform/reports"
	"github.com/conform-suite/conform/sut/mutant"
)

// controlProfiles are the live control-plane profiles.
const controlProfiles = "ranvier-node,ranvier-runtime"

// runQuiet runs the binary like conform does, without the per-run check for
// leftover processes, so that runs can go at once; the caller checks once
// all of them have ended. It returns an error where conform would fail the
// test, so that it can run off the test's goroutine.
func runQuiet(deadline time.Duration, args ...string) (result, error) {
	cmd := exec.Command(bin, args...)
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
			r.rec = new(reports.Record)
			if err := json.Unmarshal(b, r.rec); err != nil {
				return r, err
			}
		}
	}
	return r, nil
}

// TestLiveControl: the reference passes every control-plane case as node and
// as runtime, in process and as a separate conform.v1 process; a node run by
// --node-cmd alone (observation, no shim) passes the node cases; every
// control mutant exits 1 with a MUST case failed; no node process outlives
// its run. The runs sleep far more than they compute, so they all go at
// once, whatever -parallel says.
func TestLiveControl(t *testing.T) {
	dir := t.TempDir()
	type run struct {
		name     string
		args     []string
		mutant   bool
		minPass  int
		res      result
		err      error
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
	for _, m := range mutant.All() {
		if profile := m.Profile; profile == "ranvier-node" || profile == "ranvier-runtime" {
			if profile == "ranvier-node" {
				nodeMutants++
			}
			add(m.Name, true, 0, "--sut", "builtin:mutant/"+m.Name, "--profile", profile)
		}
	}
	if nodeMutants < 2 {
		t.Errorf("%d node mutants, want the two of issue 7", nodeMutants)
	}
	var wg sync.WaitGroup
	for _, r := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.res, r.err = runQuiet(time.Minute, r.args...)
		}()
	}
	wg.Wait()
	assertNoChildren(t)
	for _, r := range runs {
		t.Run(r.name, func(t *testing.T) {
			if r.err != nil {
				t.Fatal(r.err)
			}
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
