package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/conform-suite/conform/campaign"
	"github.com/conform-suite/conform/campaign/queue"
	"github.com/conform-suite/conform/internal/hang"
	"github.com/conform-suite/conform/natsserver"
	"github.com/conform-suite/conform/suites"
)

// syncBuffer is a bytes.Buffer a child process writes while the test reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func startConform(t *testing.T, out *syncBuffer, args ...string) *exec.Cmd {
	t.Helper()
	cmd := conformCmd(t, args...)
	cmd.Stderr = out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	return cmd
}

// queueGuard is the idle floor of each wait of the queue tests for a
// coordinator or a worker to get going (see hangGuard): a coordinator loads
// the whole seed pool before it coordinates.
const queueGuard = 2 * time.Minute

func waitFor(t *testing.T, what string, d time.Duration, cond func() bool) {
	t.Helper()
	d = hang.Guard(t, d)
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s did not happen within %v", what, d)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestFuzzQueueTwoWorkersOneKilled spreads a campaign over two worker
// processes through JetStream on an embedded server, kills one of them with
// SIGKILL in the middle of a unit, and checks that the unit is redelivered
// to the other, that the campaign completes and that the coordinator writes
// the findings.
func TestFuzzQueueTwoWorkersOneKilled(t *testing.T) {
	t.Parallel()
	srv, err := natsserver.Start(context.Background(), natsserver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	ep := srv.URL() + "/e2e"
	out := t.TempDir()
	sutSpec := "builtin:mutant/zero-length-is-end"

	var coordLog, aLog, bLog syncBuffer
	coord := startConform(t, &coordLog, "fuzz", "--queue", ep, "--target", "wire.read-frames,wire.receive",
		"--execs", "30000", "--unit-size", "15000", "--ack-wait", "2s", "--out", out)
	waitFor(t, "the coordinator publishing", queueGuard, func() bool { return strings.Contains(coordLog.String(), "coordinating") })

	a := startConform(t, &aLog, "fuzz", "worker", "--queue", ep, "--sut", sutSpec, "--name", "a")
	unitLine := regexp.MustCompile(`unit (\S+): `)
	var killed string
	waitFor(t, "worker a taking a unit", queueGuard, func() bool {
		m := unitLine.FindStringSubmatch(aLog.String())
		if m != nil {
			killed = m[1]
		}
		return m != nil
	})
	a.Process.Signal(syscall.SIGKILL)
	a.Wait()
	b := startConform(t, &bLog, "fuzz", "worker", "--queue", ep, "--sut", sutSpec, "--name", "b")

	done := make(chan error, 1)
	go func() { done <- coord.Wait() }()
	select {
	case <-done:
	case <-time.After(hang.Guard(t, 90*time.Second)):
		t.Fatalf("the campaign did not complete\ncoordinator:\n%s\nworker b:\n%s", coordLog.String(), bLog.String())
	}
	b.Process.Signal(syscall.SIGINT)
	b.Wait()
	if code := coord.ProcessState.ExitCode(); code != 1 {
		t.Errorf("coordinator exit %d, want 1 (findings)\n%s", code, coordLog.String())
	}
	if !strings.Contains(bLog.String(), "unit "+killed+":") {
		t.Errorf("unit %s, killed with worker a, was not redelivered to worker b\nworker a:\n%s\nworker b:\n%s", killed, aLog.String(), bLog.String())
	}
	files := findings(t, out)
	if len(files) == 0 {
		t.Fatalf("no finding written\ncoordinator:\n%s", coordLog.String())
	}
	for _, f := range files {
		if _, err := campaign.ReadFinding(f); err != nil {
			t.Error(err)
		}
	}
	if !strings.Contains(coordLog.String(), "4 of 4 units done") {
		t.Errorf("the coordinator does not report every unit done:\n%s", coordLog.String())
	}
	assertNoChildren(t)
}

// mainResult is the outcome of conform run in process.
type mainResult struct {
	code int
	log  string
}

// runQueue runs conform in process with args, its output in one log.
func runQueue(t *testing.T, ctx context.Context, args ...string) mainResult {
	t.Helper()
	code, stdout, stderr := runMainContext(t, ctx, args...)
	return mainResult{code, stdout + stderr}
}

// findingNames returns the base names of a campaign directory's findings.
func findingNames(t *testing.T, out string) []string {
	var names []string
	for _, f := range findings(t, out) {
		names = append(names, filepath.Base(f))
	}
	return names
}

// TestFuzzQueueIdentity is issue 14's distributed campaign that ran nothing
// and reported clean, in process: a campaign name reused with another seed,
// a larger --execs or another SUT is refused (exit 2) naming what differs;
// the same campaign into a new --out gets every stored finding; a worker
// whose SUT is not the campaign's is refused and the coordinator shows it;
// --replace starts the new campaign.
func TestFuzzQueueIdentity(t *testing.T) {
	t.Parallel()
	srv, err := natsserver.Start(context.Background(), natsserver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	ctx := context.Background()
	ep := srv.URL() + "/nightly"
	mut := "builtin:mutant/zero-length-is-end"
	coordinate := func(out string, args ...string) mainResult {
		return runQueue(t, ctx, append([]string{"fuzz", "--queue", ep, "--target", "wire.read-frames", "--unit-size", "400", "--out", out}, args...)...)
	}

	// A worker on the mutant serves every campaign of the name. The first
	// coordinator names no SUT: the worker's is pinned.
	wctx, wcancel := context.WithCancel(ctx)
	var wlog syncBuffer
	wdone := make(chan int, 1)
	go func() {
		wdone <- Main(wctx, suites.Default(), []string{"fuzz", "worker", "--queue", ep, "--sut", mut, "--name", "rig1"}, nil, io.Discard, &wlog)
	}()
	defer func() {
		wcancel()
		if code := <-wdone; code != 0 {
			t.Errorf("worker rig1: exit %d\n%s", code, wlog.String())
		}
	}()

	out1 := t.TempDir()
	r := coordinate(out1, "--seed", "1", "--execs", "800")
	first := findingNames(t, out1)
	if r.code != exitFindings || len(first) == 0 {
		t.Fatalf("the campaign: exit %d, %d findings\n%s\nworker:\n%s", r.code, len(first), r.log, wlog.String())
	}
	for _, want := range []string{"2 of 2 units done", "worker rig1 joined: SUT conform mutant zero-length-is-end", "worker rig1: 2 units, ", " inputs ("} {
		if !strings.Contains(r.log, want) {
			t.Errorf("the coordinator does not say %q:\n%s", want, r.log)
		}
	}

	// The same campaign into a new --out: nothing is rerun, and every
	// finding the campaign stored is written there.
	out2 := t.TempDir()
	r = coordinate(out2, "--seed", "1", "--execs", "800", "--sut", mut)
	if got := findingNames(t, out2); r.code != exitFindings || !slices.Equal(got, first) {
		t.Errorf("the same campaign into a new --out: exit %d, findings %v, want %v\n%s", r.code, got, first, r.log)
	}

	// Another campaign under the name is refused, naming the difference.
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--seed", "2", "--execs", "800"}, "seed: 2 here, 1 in the campaign"},
		{[]string{"--seed", "1", "--execs", "1600"}, "--execs: 1600 here, 800 in the campaign"},
		{[]string{"--seed", "1", "--execs", "800", "--sut", "builtin:reference"}, `SUT implementation: "conform reference" here, "conform mutant zero-length-is-end" in the campaign`},
	} {
		out := t.TempDir()
		r := coordinate(out, tc.args...)
		if r.code != exitUsage || !strings.Contains(r.log, tc.want) || !strings.Contains(r.log, "--replace") {
			t.Errorf("coordinator %v: exit %d, want %d naming %q\n%s", tc.args, r.code, exitUsage, tc.want, r.log)
		}
		if n := len(findings(t, out)); n != 0 {
			t.Errorf("coordinator %v, refused, wrote %d findings", tc.args, n)
		}
	}

	// A worker on the reference is refused, naming both SUTs.
	r = runQueue(t, ctx, "fuzz", "worker", "--queue", ep, "--sut", "builtin:reference", "--name", "rig2")
	if r.code != exitUsage || !strings.Contains(r.log, `SUT implementation: "conform reference" on this worker, "conform mutant zero-length-is-end" in the campaign`) {
		t.Errorf("a worker on the reference: exit %d\n%s", r.code, r.log)
	}

	// --replace deletes the old campaign and runs the new one; the
	// coordinator shows rig2's refusal no more (it was the old campaign's).
	out3 := t.TempDir()
	r = coordinate(out3, "--seed", "1", "--execs", "1200", "--replace", "--sut", mut)
	if r.code != exitFindings || !strings.Contains(r.log, "deleting campaign") || !strings.Contains(r.log, "3 of 3 units done") {
		t.Errorf("--replace: exit %d\n%s\nworker:\n%s", r.code, r.log, wlog.String())
	}
	if strings.Contains(r.log, "rig2") {
		t.Errorf("the new campaign shows the old one's worker:\n%s", r.log)
	}

	// conform fuzz campaigns lists it, and deletes it.
	r = runQueue(t, ctx, "fuzz", "campaigns", "--queue", srv.URL())
	if r.code != 0 || !strings.Contains(r.log, "nightly\t3 units ended, 0 queued") || !strings.Contains(r.log, "seed 1, 1200 inputs per target in units of 400") {
		t.Errorf("fuzz campaigns: exit %d\n%s", r.code, r.log)
	}
	if r = runQueue(t, ctx, "fuzz", "campaigns", "--queue", srv.URL(), "--delete", "nightly"); r.code != 0 {
		t.Errorf("fuzz campaigns --delete: exit %d\n%s", r.code, r.log)
	}
	if r = runQueue(t, ctx, "fuzz", "campaigns", "--queue", srv.URL()); r.code != 0 || strings.Contains(r.log, "nightly\t") {
		t.Errorf("fuzz campaigns after the delete: exit %d\n%s", r.code, r.log)
	}
}

// TestQueueWorkerRefusedShown: a coordinator naming a mutant shows a worker
// on the reference refusing the campaign, as it refuses.
func TestQueueWorkerRefusedShown(t *testing.T) {
	t.Parallel()
	srv, err := natsserver.Start(context.Background(), natsserver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	ep := srv.URL() + "/refused"
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var clog syncBuffer
	cdone := make(chan int, 1)
	go func() {
		cdone <- Main(ctx, suites.Default(), []string{"fuzz", "--queue", ep, "--target", "wire.read-frames", "--execs", "400",
			"--sut", "builtin:mutant/zero-length-is-end", "--out", t.TempDir()}, nil, io.Discard, &clog)
	}()
	waitFor(t, "the coordinator publishing", queueGuard, func() bool { return strings.Contains(clog.String(), "coordinating") })
	r := runQueue(t, ctx, "fuzz", "worker", "--queue", ep, "--sut", "builtin:reference", "--name", "wrong-rig")
	if r.code != exitUsage {
		t.Errorf("the worker on the reference: exit %d\n%s", r.code, r.log)
	}
	waitFor(t, "the coordinator showing the refusal", queueGuard, func() bool {
		return strings.Contains(clog.String(), `worker wrong-rig refused the campaign: this worker cannot run it: SUT implementation: "conform reference"`)
	})
	cancel()
	if code := <-cdone; code != 0 {
		t.Errorf("the interrupted coordinator, with no finding: exit %d\n%s", code, clog.String())
	}
}

// TestQueueProgressCurrent: the coordinator's log line says where the
// campaign stands when it is printed, not where it stood at the last change
// (it showed "0 of 31 units done" while 30 were done), and the last line is
// always printed.
func TestQueueProgressCurrent(t *testing.T) {
	var b bytes.Buffer
	p := &queueProgress{w: &b, every: 10 * time.Second, seen: map[string]string{}}
	t0 := time.Unix(1000, 0)
	st := func(done int) queue.Status {
		return queue.Status{Units: 31, Done: done, Inputs: uint64(done) * 20000, InputsThisRun: uint64(done) * 20000, Elapsed: 10 * time.Second}
	}
	p.update(st(0), 0, t0, false)
	p.update(st(30), 2, t0.Add(time.Second), false) // a change between two log lines
	p.update(st(30), 2, t0.Add(10*time.Second), false)
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], "0 of 31 units done") ||
		!strings.Contains(lines[1], "30 of 31 units done, 600000 inputs (60000/s), 2 findings") {
		t.Errorf("log lines:\n%s", b.String())
	}
	b.Reset()
	p.update(st(31), 2, t0.Add(11*time.Second), true)
	if !strings.Contains(b.String(), "31 of 31 units done") {
		t.Errorf("the final line was not printed: %q", b.String())
	}
	b.Reset()
	id, _ := json.Marshal(campaign.Identity{Format: campaign.IdentityFormat, SUT: &campaign.SUTIdentity{Implementation: "x", Version: "1"}})
	s := st(31)
	s.Workers = []queue.WorkerStatus{{Name: "a", Identity: id}, {Name: "b", Refused: "no"}}
	p.update(s, 2, t0.Add(12*time.Second), false)
	p.update(s, 2, t0.Add(13*time.Second), false)
	if got := b.String(); strings.Count(got, "worker a joined: SUT x 1") != 1 || strings.Count(got, "worker b refused the campaign: no") != 1 {
		t.Errorf("worker lines, each once:\n%s", got)
	}
}
