package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/conform-suite/conform/internal/hang"
	"github.com/conform-suite/conform/internal/waittest"
	"github.com/conform-suite/conform/reports"
	"github.com/conform-suite/conform/suites"
	"github.com/conform-suite/conform/sut/fault"
)

// bin is the conform binary under test, this test binary under the name
// conform (see TestMain), so that these tests cross the same process
// boundaries a user's run does.
var bin string

func TestMain(m *testing.M) {
	// This test binary is conform as well: a process started from it with
	// envAsCLI set — every process these tests start, and each one they
	// start in turn — is the CLI and nothing else. The tests cross the same
	// process boundaries without building conform a second time, which
	// cost every run of this package 5 CPU-seconds.
	if os.Getenv(envAsCLI) == "1" {
		os.Exit(run(os.Args[1:]))
	}
	if err := os.Setenv(envAsCLI, "1"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// Most of these tests wait on child processes and on real time far more
	// than they compute: on a 2-core machine the package takes about 68 s
	// with more of them at once, instead of 95 s, for the same CPU time.
	waittest.Widen()
	dir, err := os.MkdirTemp("", "conform-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bin = filepath.Join(dir, "conform")
	if err := linkSelf(bin); err != nil {
		fmt.Fprintln(os.Stderr, "making the test binary conform:", err)
		os.Exit(1)
	}
	code := m.Run()
	// Each test checks that its own runs leave nothing behind; this catches
	// whatever was started as bin some other way and outlived every test.
	if left := survivorsWithin(markWait); len(left) > 0 {
		fmt.Fprintf(os.Stderr, "processes started as %s outlived the tests: %v\n", bin, left)
		code = max(code, 1)
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

// envAsCLI makes this test binary run as conform; see TestMain.
const envAsCLI = "CONFORM_TEST_BINARY_IS_CLI"

// linkSelf makes name run this test binary, by a hard link where the file
// system allows one and a copy where it does not.
func linkSelf(name string) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	if os.Link(self, name) == nil {
		return nil
	}
	b, err := os.ReadFile(self)
	if err != nil {
		return err
	}
	return os.WriteFile(name, b, 0o755)
}

// conformCmd returns the command that runs bin with args, carrying t's mark
// (testMark) in its environment, as every process it starts will.
func conformCmd(t *testing.T, args ...string) *exec.Cmd {
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), testMark(t))
	return cmd
}

// marks holds each test's mark, made on first use.
var marks sync.Map // *testing.T → string

// testMark returns the environment entry that marks the processes t starts
// through conformCmd and conform, and every process they start in turn, so
// that a test can look for what its own runs left behind while other tests
// run beside it.
func testMark(t *testing.T) string {
	if m, ok := marks.Load(t); ok {
		return m.(string)
	}
	m, _ := marks.LoadOrStore(t, processMark(t))
	t.Cleanup(func() { marks.Delete(t) })
	return m.(string)
}

type result struct {
	code           int
	stdout, stderr string
	rec            *reports.Record
	raw            []byte // the record as written
}

// conform runs the binary with args, a deadline and extra environment, and
// reads the record when --json is among the args.
func conform(t *testing.T, deadline time.Duration, env []string, args ...string) result {
	t.Helper()
	deadline = hang.Guard(t, deadline)
	cmd := conformCmd(t, args...)
	cmd.Env = append(cmd.Env, env...)
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

// assertNoChildren fails when any process t's runs started is still
// running: a run must leave nothing behind. It looks for t's mark, which
// every process they started inherits, whatever its name.
func assertNoChildren(t *testing.T) {
	t.Helper()
	if left := marked(t, testMark(t), 0); len(left) > 0 {
		t.Fatalf("processes left behind: %v", left)
	}
}

// survivorsWithin returns the processes started as bin that are still
// running once d has passed, or at once when there are none.
func survivorsWithin(d time.Duration) []string {
	deadline := time.Now().Add(d)
	for {
		left := survivors()
		if len(left) == 0 || time.Now().After(deadline) {
			return left
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
	t.Parallel()
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
	t.Parallel()
	dir := t.TempDir()
	seen := map[string]bool{}
	var names []string
	var argss [][]string
	for _, m := range suites.Default().Mutants() {
		if seen[m.Suite] {
			continue
		}
		seen[m.Suite] = true
		profile := m.Suite
		if m.Profile != "" {
			profile = m.Profile
		}
		names = append(names, m.Name)
		argss = append(argss, []string{"run", "--sut", "builtin:mutant/" + m.Name, "--profile", profile, "--json", filepath.Join(dir, m.Name+".json")})
	}
	if len(seen) < 6 {
		t.Errorf("mutants of %d suites, want wire, streams, tlv, doppler, live and graph", len(seen))
	}
	for i, r := range runAll(t, 2*time.Minute, nil, argss...) {
		t.Run(names[i], func(t *testing.T) {
			if r.code != 1 {
				t.Fatalf("exit %d, want 1", r.code)
			}
			if r.rec.Summary.ByLevel[reports.MUST][reports.Fail] == 0 {
				t.Errorf("no MUST case failed")
			}
			if !strings.Contains(r.stdout, "reproduce: conform run --sut builtin:mutant/"+names[i]+" --case ") {
				t.Errorf("no reproduce line in the output:\n%s", r.stdout)
			}
		})
	}
}

// TestFaultSUTs: every fault SUT yields error outcomes with evidence, never a
// pass where it misbehaved, never stops the run, and finishes in bounded
// time with no process left behind. The runs mostly wait out timeouts, so
// they go at once.
func TestFaultSUTs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// --timeout is also the time a SUT has to say Hello, at the start and
	// at each restart: 5 s, so that a loaded machine starting every fault
	// at once does not make a fault that answers look like one that never
	// starts (at 2 s, flood once did, beside a second go test). slow waits
	// three times as long before each answer, so that it still times out.
	const timeout = "5s"
	env := []string{fault.EnvAfter + "=3", fault.EnvDelay + "=15s"}
	faults := fault.All()
	argss := make([][]string, len(faults))
	// Every fault misbehaves alike whatever the op, and every op crosses
	// the same session code, so the 14 cases of the wire document's §1
	// see all a fault does at the level this test asks about: the exit
	// code, a run that goes on past every error, and errors that say what
	// happened. More cases would only add restarts (each a process start)
	// and timeouts. sut/fault's matrix runs each fault over every carrier,
	// and runner's TestHugeErrorsBounded runs huge-error over the whole
	// wire suite for its memory bound.
	const section1 = "wire/1.*/**"
	const minCases = 14
	for i, f := range faults {
		argss[i] = []string{"run", "--sut", "builtin:fault/" + f.Name, "--case", section1, "--timeout", timeout, "--json", filepath.Join(dir, f.Name+".json")}
	}
	for i, r := range runAll(t, 90*time.Second, env, argss...) {
		f := faults[i]
		t.Run(f.Name, func(t *testing.T) {
			want := 1
			if f.NoHello {
				want = 3
			}
			if r.code != want {
				t.Fatalf("exit %d, want %d\n%s%s", r.code, want, r.stdout, r.stderr)
			}
			errs := count(r.rec, reports.Error)
			if errs == 0 {
				t.Fatal("no error outcome")
			}
			if len(r.rec.Cases) < minCases {
				t.Errorf("only %d cases recorded: the run must go on", len(r.rec.Cases))
			}
			passes := count(r.rec, reports.Pass) + count(r.rec, reports.Info)
			switch f.Name {
			case "crash":
				// Each restart answers two ops before crashing again, so
				// passes and errors alternate; every crash is recorded.
				if passes == 0 || errs < 3 {
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

// TestInterruptWritesRecord: SIGINT during a case ends the run with its
// record written, marked interrupted, exit 1. The interrupt is meant to land
// while the hanging SUT holds a case; on a loaded machine it can land before
// the SUT has said Hello — a run interrupted while starting, recorded as
// such (kind interrupted, exit 1, never "the SUT did not start") — and then
// the test waits longer and tries again.
func TestInterruptWritesRecord(t *testing.T) {
	for _, wait := range []time.Duration{700 * time.Millisecond, 3 * time.Second, 10 * time.Second} {
		r := interruptAfter(t, wait)
		if r == nil {
			t.Logf("interrupted after %v, before conform had started handling signals", wait)
			continue
		}
		if !r.Interrupted {
			t.Fatalf("the record is not marked interrupted (exit %d)", r.ExitCode)
		}
		if r.StartError != nil {
			if r.StartError.Kind != reports.KindInterrupted || r.ExitCode != 1 {
				t.Errorf("interrupted while the SUT started: exit %d, start error %+v; want exit 1, kind interrupted", r.ExitCode, r.StartError)
			}
			t.Logf("interrupted after %v, before the SUT said Hello", wait)
			continue
		}
		if r.ExitCode != 1 {
			t.Errorf("interrupted during a case: exit %d, want 1", r.ExitCode)
		}
		return
	}
	t.Fatal("the SUT never said Hello in time to be interrupted during a case")
}

// interruptAfter starts a run against a SUT that hangs on every request,
// interrupts it after wait, and returns the record it wrote; nil when the
// interrupt came before conform handled signals (a process still starting
// on a loaded machine), which SIGINT's default action then ended.
func interruptAfter(t *testing.T, wait time.Duration) *reports.Record {
	t.Helper()
	rec := filepath.Join(t.TempDir(), "rec.json")
	cmd := conformCmd(t, "run", "--sut", "builtin:fault/hang", "--timeout", "1m", "--json", rec)
	var out bytes.Buffer
	cmd.Stdout = &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(wait)
	cmd.Process.Signal(syscall.SIGINT)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(hang.Guard(t, 20*time.Second)):
		cmd.Process.Kill()
		t.Fatal("conform did not stop after SIGINT")
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGINT {
		return nil
	}
	b, err := os.ReadFile(rec)
	if err != nil {
		t.Fatalf("no record after interrupt: %v", err)
	}
	var r reports.Record
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	assertNoChildren(t)
	return &r
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
		if c.Outcome != reports.Error || c.ErrorKind != reports.KindStart {
			t.Errorf("%s: %s/%s, want error/start", c.ID, c.Outcome, c.ErrorKind)
		}
	}
	// Why, once: in the record and in the text report, with the exit
	// status and the SUT's standard error.
	if f := r.rec.StartError; f == nil || !strings.Contains(f.Stderr, "giving up before Hello") || f.Exit != "exit status 1" {
		t.Errorf("the record does not say why: %+v", f)
	}
	if strings.Count(r.stdout, "giving up before Hello") != 1 || !strings.Contains(r.stdout, "exit: exit status 1") {
		t.Errorf("the text report does not say why once:\n%s", r.stdout)
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
	// The requirements it judges with their summaries, and what the vector
	// expects as well as what it sends.
	for _, want := range []string{"MUST", "ranvier-wire §4.5", "wire/v1/frame-sample", "00 00 00 12 12 10 09 01",
		"judges:", "ranvier-wire§4.5#", `expected: {"at_eos":"closed"`,
		// The mutants it catches, found by running it against each: the
		// one that reads fixed64 fields in the prefix's byte order fails it.
		"caught mutants: ", "\n  one-byte-order  reads and writes fixed64 fields big-endian"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("conform explain lacks %q:\n%s", want, r.stdout)
		}
	}
	if r := conform(t, 30*time.Second, nil, "explain", "--mutants=false", "wire/4.5/frame-sample-decodes"); r.code != 0 || strings.Contains(r.stdout, "caught mutants") {
		t.Errorf("conform explain --mutants=false: exit %d\n%s", r.code, r.stdout)
	}
	if r := conform(t, 30*time.Second, nil, "explain", "doppler/10/live-pull-before-push"); r.code != 0 || !strings.Contains(r.stdout, "caught mutants: none by design") {
		t.Errorf("conform explain of an INFO case: exit %d\n%s", r.code, r.stdout)
	}
	r = conform(t, 30*time.Second, nil, "version")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "conform ") {
		t.Errorf("conform version: %d %q", r.code, r.stdout)
	}
}

// TestSelftest runs the mutation table through the CLI for two suites; the
// whole table is suites' TestMutationTable, in process, which runs the same
// mutation package over every suite. The two suites are the quickest ones
// (streams, graph): what this test adds is the command — --suite narrowing
// the mutants and the cases, the table printed, the exit code — and that is
// the same for every suite.
func TestSelftest(t *testing.T) {
	t.Parallel()
	only := []string{"streams", "graph"}
	r := conform(t, 3*time.Minute, nil, "selftest", "--suite", strings.Join(only, ","))
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stdout)
	}
	ran := 0
	for _, m := range suites.Default().Mutants() {
		if !slices.Contains(only, m.Suite) {
			if strings.Contains(r.stdout, "\n"+m.Name+" ") {
				t.Errorf("--suite %s ran %s of suite %s", strings.Join(only, ","), m.Name, m.Suite)
			}
			continue
		}
		ran++
		if !strings.Contains(r.stdout, "\n"+m.Name+" ") {
			t.Errorf("mutation table lacks %s", m.Name)
		}
	}
	if ran < 10 {
		t.Errorf("%d mutants of %v, want the suites' many", ran, only)
	}
	if strings.Contains(r.stdout, "NOT CAUGHT") {
		t.Errorf("a mutant escaped:\n%s", r.stdout)
	}
}
