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
	"syscall"
	"testing"
	"time"

	"github.com/conform-suite/conform/reports"
	"github.com/conform-suite/conform/sut/fault"
	"github.com/conform-suite/conform/sut/mutant"
)

// bin is the conform binary under test, built once by TestMain, so that these
// tests cross the same process boundaries a user's run does.
var bin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "conform-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bin = filepath.Join(dir, "conform")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building conform:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

type result struct {
	code           int
	stdout, stderr string
	rec            *reports.Record
}

// conform runs the binary with args, a deadline and extra environment, and
// reads the record when --json is among the args.
func conform(t *testing.T, deadline time.Duration, env []string, args ...string) result {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(deadline):
		cmd.Process.Kill()
		<-done
		t.Fatalf("conform %v did not finish within %v\nstdout:\n%s\nstderr:\n%s", args, deadline, out.String(), errb.String())
	}
	r := result{stdout: out.String(), stderr: errb.String()}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	for i, a := range args {
		if a == "--json" && i+1 < len(args) {
			b, err := os.ReadFile(args[i+1])
			if err != nil {
				t.Fatalf("record: %v\nstderr: %s", err, r.stderr)
			}
			r.rec = new(reports.Record)
			if err := json.Unmarshal(b, r.rec); err != nil {
				t.Fatal(err)
			}
			checkAgainstSchema(t, b)
		}
	}
	assertNoChildren(t)
	return r
}

// assertNoChildren fails when any process started from the test binary's
// conform is still running: a run must leave nothing behind.
func assertNoChildren(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for {
		left := survivors()
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes left behind: %v", left)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func survivors() []string {
	var left []string
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err != nil || !bytes.HasPrefix(b, []byte(bin+"\x00")) {
			continue
		}
		stat, _ := os.ReadFile(filepath.Join(filepath.Dir(p), "stat"))
		if f := strings.Fields(string(stat)); len(f) > 2 && f[2] == "Z" {
			continue // a zombie is already dead
		}
		left = append(left, strings.ReplaceAll(string(b), "\x00", " "))
	}
	return left
}

func count(r *reports.Record, o reports.Outcome) int { return r.Summary.Counts[o] }

func TestRunReference(t *testing.T) {
	dir := t.TempDir()
	for _, spec := range []string{"builtin:reference", "exec:" + bin + " reference", "exec:" + bin + " reference --json"} {
		t.Run(spec, func(t *testing.T) {
			rec := filepath.Join(dir, "rec.json")
			r := conform(t, 2*time.Minute, nil, "run", "--sut", spec, "--profile", "wire", "--json", rec)
			if r.code != 0 {
				t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			if n := count(r.rec, reports.Pass); n < 40 {
				t.Errorf("%d wire cases pass, want at least 40", n)
			}
			for _, o := range []reports.Outcome{reports.Fail, reports.Error, reports.Warn, reports.Skip} {
				if n := count(r.rec, o); n != 0 {
					t.Errorf("%d cases %s\n%s", n, o, r.stdout)
				}
			}
			if r.rec.SUT.Spec != spec || r.rec.Interrupted || r.rec.ExitCode != 0 {
				t.Errorf("record sut %q interrupted %v exit %d", r.rec.SUT.Spec, r.rec.Interrupted, r.rec.ExitCode)
			}
		})
	}
}

// TestMutantsExit1 runs one mutant of each suite through the real CLI: it
// exits 1 and prints a reproduce line. That every mutant is caught is the
// mutation table's job (cases/catalog's TestMutationTable and TestSelftest
// below), which would take minutes one process at a time.
func TestMutantsExit1(t *testing.T) {
	dir := t.TempDir()
	seen := map[string]bool{}
	for _, m := range mutant.All() {
		if seen[m.Suite] {
			continue
		}
		seen[m.Suite] = true
		t.Run(m.Name, func(t *testing.T) {
			rec := filepath.Join(dir, m.Name+".json")
			profile := m.Suite
			if m.Profile != "" {
				profile = m.Profile
			}
			r := conform(t, 2*time.Minute, nil, "run", "--sut", "builtin:mutant/"+m.Name, "--profile", profile, "--json", rec)
			if r.code != 1 {
				t.Fatalf("exit %d, want 1", r.code)
			}
			if r.rec.Summary.ByLevel[reports.MUST][reports.Fail] == 0 {
				t.Errorf("no MUST case failed")
			}
			if !strings.Contains(r.stdout, "reproduce: conform run --sut builtin:mutant/"+m.Name+" --case ") {
				t.Errorf("no reproduce line in the output:\n%s", r.stdout)
			}
		})
	}
	if len(seen) < 6 {
		t.Errorf("mutants of %d suites, want wire, streams, tlv, doppler, live and graph", len(seen))
	}
}

// TestFaultSUTs: every fault SUT yields error outcomes with evidence, never a
// pass where it misbehaved, never stops the run, and finishes in bounded
// time with no process left behind.
func TestFaultSUTs(t *testing.T) {
	dir := t.TempDir()
	env := []string{fault.EnvAfter + "=3", fault.EnvDelay + "=2s"}
	for _, f := range fault.All() {
		t.Run(f.Name, func(t *testing.T) {
			rec := filepath.Join(dir, f.Name+".json")
			// The codec suites are enough to see every fault handled; the
			// live suites would only add their timeouts.
			r := conform(t, 90*time.Second, env, "run", "--sut", "builtin:fault/"+f.Name, "--profile", "wire,streams,tlv", "--timeout", "300ms", "--json", rec)
			want := 1
			if f.Name == "early-exit" {
				want = 3
			}
			if r.code != want {
				t.Fatalf("exit %d, want %d\n%s%s", r.code, want, r.stdout, r.stderr)
			}
			errs := count(r.rec, reports.Error)
			if errs == 0 {
				t.Fatal("no error outcome")
			}
			if len(r.rec.Cases) < 100 {
				t.Errorf("only %d cases recorded: the run must go on", len(r.rec.Cases))
			}
			passes := count(r.rec, reports.Pass) + count(r.rec, reports.Info)
			switch f.Name {
			case "crash":
				// Each restart answers two ops before crashing again, so
				// passes and errors alternate; every crash is recorded.
				if passes == 0 || errs < 5 {
					t.Errorf("%d passes, %d errors", passes, errs)
				}
			default:
				if passes != 0 {
					t.Errorf("%d cases passed against a SUT that never answers correctly", passes)
				}
			}
			for _, c := range r.rec.Cases {
				if c.Outcome == reports.Error && (c.ErrorKind == "" || c.Message == "") {
					t.Errorf("%s: error without kind or message", c.ID)
				}
			}
		})
	}
}

func TestInterruptWritesRecord(t *testing.T) {
	rec := filepath.Join(t.TempDir(), "rec.json")
	cmd := exec.Command(bin, "run", "--sut", "builtin:fault/hang", "--timeout", "1m", "--json", rec)
	var out bytes.Buffer
	cmd.Stdout = &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(700 * time.Millisecond)
	cmd.Process.Signal(syscall.SIGINT)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Fatal("conform did not stop after SIGINT")
	}
	b, err := os.ReadFile(rec)
	if err != nil {
		t.Fatalf("no record after interrupt: %v", err)
	}
	var r reports.Record
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	if !r.Interrupted || r.ExitCode != 1 {
		t.Errorf("interrupted %v exit %d", r.Interrupted, r.ExitCode)
	}
	assertNoChildren(t)
}

func TestNoHelloRecordsAttemptedCases(t *testing.T) {
	rec := filepath.Join(t.TempDir(), "rec.json")
	r := conform(t, 30*time.Second, nil, "run", "--sut", "builtin:fault/early-exit", "--case", "wire/1.2/*", "--json", rec)
	if r.code != 3 {
		t.Fatalf("exit %d, want 3", r.code)
	}
	if len(r.rec.Cases) == 0 {
		t.Fatal("no attempted case recorded")
	}
	for _, c := range r.rec.Cases {
		if c.Outcome != reports.Error || c.ErrorKind != "start" {
			t.Errorf("%s: %s/%s, want error/start", c.ID, c.Outcome, c.ErrorKind)
		}
	}
	if !strings.Contains(r.stderr, "giving up before Hello") {
		t.Errorf("stderr does not carry the SUT's stderr: %q", r.stderr)
	}
}

func TestUsage(t *testing.T) {
	tests := []struct {
		args []string
		code int
		out  string
	}{
		{[]string{}, 2, "usage: conform"},
		{[]string{"frobnicate"}, 2, "unknown command"},
		{[]string{"run"}, 2, "--sut is required"},
		{[]string{"run", "--sut", "builtin:mutant/nope"}, 2, "no such mutant"},
		{[]string{"run", "--sut", "builtin:reference", "--case", "nothing/*"}, 2, "no case matches"},
		{[]string{"run", "--sut", "gopher://x"}, 2, "unknown carrier"},
		{[]string{"explain", "wire/9/none"}, 2, "no case"},
		{[]string{"run", "--bogus"}, 2, "flag provided but not defined"},
	}
	for _, tt := range tests {
		r := conform(t, 30*time.Second, nil, tt.args...)
		if r.code != tt.code || !strings.Contains(r.stderr, tt.out) {
			t.Errorf("conform %v: exit %d, stderr %q; want exit %d mentioning %q", tt.args, r.code, r.stderr, tt.code, tt.out)
		}
	}
}

func TestListingCommands(t *testing.T) {
	// conform mutants and conform faults: one line per entry, no header,
	// three tab-separated fields (DESIGN.md).
	for _, cmd := range []string{"mutants", "faults"} {
		r := conform(t, 30*time.Second, nil, cmd)
		lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
		if r.code != 0 || len(lines) < 8 {
			t.Fatalf("conform %s: exit %d, %d lines", cmd, r.code, len(lines))
		}
		for _, l := range lines {
			if f := strings.Split(l, "\t"); len(f) != 3 || f[0] == "" || f[1] == "" || f[2] == "" {
				t.Errorf("conform %s: line %q is not name<TAB>suite<TAB>bug", cmd, l)
			}
		}
	}
	r := conform(t, 30*time.Second, nil, "list", "--profile", "wire")
	if n := strings.Count(r.stdout, "\n"); r.code != 0 || n < 40 {
		t.Errorf("conform list: exit %d, %d lines", r.code, n)
	}
	r = conform(t, 30*time.Second, nil, "explain", "wire/4.5/frame-sample-decodes")
	for _, want := range []string{"MUST", "ranvier-wire §4.5", "wire/v1/frame-sample", "00 00 00 12 12 10 09 01"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("conform explain lacks %q:\n%s", want, r.stdout)
		}
	}
	r = conform(t, 30*time.Second, nil, "version")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "conform ") {
		t.Errorf("conform version: %d %q", r.code, r.stdout)
	}
}

// TestSelftest runs the mutation table through the CLI for two suites; the
// whole table is cases/catalog's TestMutationTable, in process.
func TestSelftest(t *testing.T) {
	r := conform(t, 3*time.Minute, nil, "selftest", "--suite", "wire,tlv")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stdout)
	}
	for _, m := range mutant.All() {
		if m.Suite != "wire" && m.Suite != "tlv" {
			if strings.Contains(r.stdout, "\n"+m.Name+" ") {
				t.Errorf("--suite wire,tlv ran %s of suite %s", m.Name, m.Suite)
			}
			continue
		}
		if !strings.Contains(r.stdout, m.Name) {
			t.Errorf("mutation table lacks %s", m.Name)
		}
	}
	if strings.Contains(r.stdout, "NOT CAUGHT") {
		t.Errorf("a mutant escaped:\n%s", r.stdout)
	}
}
