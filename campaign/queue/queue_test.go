package queue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/conform-suite/conform/natsserver"
)

// Environment of a helper worker process: the test binary re-executed with
// helperEnv set runs helperMain instead of the tests.
const (
	helperEnv        = "CONFORM_QUEUE_TEST_HELPER"
	helperEndpoint   = "CONFORM_QUEUE_TEST_ENDPOINT"
	helperDir        = "CONFORM_QUEUE_TEST_DIR"
	helperStallAfter = "CONFORM_QUEUE_TEST_STALL_AFTER"
)

func TestMain(m *testing.M) {
	if name := os.Getenv(helperEnv); name != "" {
		os.Exit(helperMain(name))
	}
	os.Exit(m.Run())
}

// helperMain is a worker process. It runs units as fakeRun does, except that
// with a stall count n ≥ 0 it completes n units and then, on the next, reports
// that unit's findings, writes <dir>/<name>.stalled holding the unit's ID and
// blocks: the test kills it there, mid-unit. It stops on SIGTERM, or when its
// stdin (a pipe from the test) closes because the test is gone.
func helperMain(name string) int {
	ep, err := ParseEndpoint(os.Getenv(helperEndpoint))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	stallAfter, err := strconv.Atoi(os.Getenv(helperStallAfter))
	if err != nil {
		fmt.Fprintln(os.Stderr, "stall count:", err)
		return 2
	}
	dir := os.Getenv(helperDir)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		cancel()
	}()
	completed := 0
	run := func(ctx context.Context, u Unit, report func(Finding) error) (Result, error) {
		if completed == stallAfter {
			for _, f := range findingsFor(u, name) {
				if err := report(f); err != nil {
					return Result{}, err
				}
			}
			if err := writeFileAtomic(filepath.Join(dir, name+".stalled"), []byte(u.ID)); err != nil {
				return Result{}, err
			}
			<-ctx.Done()
			return Result{}, ctx.Err()
		}
		res, err := fakeRun(ctx, u, report, name, 20*time.Millisecond)
		if err != nil {
			return res, err
		}
		completed++
		return res, nil
	}
	err = RunWorker(ctx, ep, Options{Worker: name}, run)
	if !errors.Is(err, context.Canceled) {
		fmt.Fprintln(os.Stderr, "RunWorker:", err)
		return 1
	}
	return 0
}

func writeFileAtomic(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// findingBody is what the test workers put in a finding's body.
type findingBody struct {
	Unit   string `json:"unit"`
	Worker string `json:"worker"`
}

// findingsFor returns what a test worker reports for u: a finding of its own
// for every third unit and one shared signature for every fourth, so that
// several units and workers report the same signature.
func findingsFor(u Unit, worker string) []Finding {
	body, _ := json.Marshal(findingBody{Unit: u.ID, Worker: worker})
	var fs []Finding
	if u.Seed%3 == 1 {
		fs = append(fs, Finding{Signature: "own/" + u.ID, Body: body})
	}
	if u.Seed%4 == 1 {
		fs = append(fs, Finding{Signature: "shared", Body: body})
	}
	return fs
}

// wantSignatures returns the signatures findingsFor produces over units.
func wantSignatures(units []Unit) []string {
	set := map[string]bool{}
	for _, u := range units {
		for _, f := range findingsFor(u, "") {
			set[f.Signature] = true
		}
	}
	var sigs []string
	for s := range set {
		sigs = append(sigs, s)
	}
	slices.Sort(sigs)
	return sigs
}

// fakeRun reports u's findings and takes d over the unit, as if it ran
// every input of its range.
func fakeRun(ctx context.Context, u Unit, report func(Finding) error, worker string, d time.Duration) (Result, error) {
	for _, f := range findingsFor(u, worker) {
		if err := report(f); err != nil {
			return Result{}, err
		}
	}
	if err := sleep(ctx, d); err != nil {
		return Result{}, err
	}
	return Result{Inputs: u.End - u.Start}, nil
}

// runFunc is what a worker runs a unit with.
type runFunc = func(ctx context.Context, u Unit, report func(Finding) error) (Result, error)

func makeUnits(n int) []Unit {
	units := make([]Unit, n)
	for i := range units {
		units[i] = Unit{ID: fmt.Sprintf("test.target/%06d", i), Target: "test.target", Seed: int64(i),
			Start: uint64(i) * 100, End: uint64(i+1) * 100, Corpus: []string{"seed-" + strconv.Itoa(i%2)}}
	}
	return units
}

func startServer(t testing.TB) *natsserver.Server {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	srv, err := natsserver.Start(ctx, natsserver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	return srv
}

func endpoint(t testing.TB, srv *natsserver.Server, campaign string) Endpoint {
	t.Helper()
	ep, err := ParseEndpoint(srv.URL() + "/" + campaign)
	if err != nil {
		t.Fatal(err)
	}
	return ep
}

func newCoordinator(t testing.TB, ctx context.Context, ep Endpoint, o Options) *Coordinator {
	t.Helper()
	c, err := NewCoordinator(ctx, ep, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// startWorkers runs n in-process workers until the test ends, and checks
// that each then stops with context.Canceled.
func startWorkers(t testing.TB, ep Endpoint, o Options, n int, run runFunc) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wo := o
		wo.Worker = fmt.Sprintf("w%d", i)
		wg.Go(func() { errs[i] = RunWorker(ctx, ep, wo, run) })
	}
	t.Cleanup(func() {
		cancel()
		wg.Wait()
		for i, err := range errs {
			if !errors.Is(err, context.Canceled) {
				t.Errorf("worker %d: RunWorker returned %v, want context.Canceled", i, err)
			}
		}
	})
}

// collector is an onFinding that counts each signature it is handed.
type collector struct {
	mu     sync.Mutex
	counts map[string]int
	bodies map[string]findingBody
}

func newCollector() *collector {
	return &collector{counts: map[string]int{}, bodies: map[string]findingBody{}}
}

func (c *collector) onFinding(f Finding) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.counts[f.Signature]++
	var b findingBody
	if err := json.Unmarshal(f.Body, &b); err != nil {
		return fmt.Errorf("finding %q: body %q: %w", f.Signature, f.Body, err)
	}
	c.bodies[f.Signature] = b
	return nil
}

// check fails t unless every signature in want was handed over exactly once,
// and nothing else was.
func (c *collector) check(t *testing.T, want []string) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range want {
		if n := c.counts[s]; n != 1 {
			t.Errorf("finding %q handed over %d times, want once", s, n)
		}
		if b := c.bodies[s]; strings.HasPrefix(s, "own/") && b.Unit != strings.TrimPrefix(s, "own/") {
			t.Errorf("finding %q has the body of unit %q", s, b.Unit)
		}
	}
	for s := range c.counts {
		if !slices.Contains(want, s) {
			t.Errorf("unexpected finding %q", s)
		}
	}
}

// runCounter counts how often each unit ran.
type runCounter struct {
	mu sync.Mutex
	n  map[string]int
}

func (r *runCounter) add(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.n == nil {
		r.n = map[string]int{}
	}
	r.n[id]++
}

func (r *runCounter) count(id string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.n[id]
}

// checkOnce fails t unless every unit ran exactly once.
func (r *runCounter) checkOnce(t *testing.T, units []Unit) {
	t.Helper()
	for _, u := range units {
		if n := r.count(u.ID); n != 1 {
			t.Errorf("unit %s ran %d times, want once", u.ID, n)
		}
	}
}

// lastStatus keeps the last status Run reported.
type lastStatus struct {
	mu sync.Mutex
	s  Status
}

func (l *lastStatus) set(s Status) { l.mu.Lock(); l.s = s; l.mu.Unlock() }
func (l *lastStatus) get() Status  { l.mu.Lock(); defer l.mu.Unlock(); return l.s }

// counts are the unit and finding counts of a status, which tests compare.
type counts struct{ Units, Done, Failed, Findings int }

func countsOf(s Status) counts { return counts{s.Units, s.Done, s.Failed, s.Findings} }

func TestTwoWorkers(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	ep := endpoint(t, srv, "two-workers")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	units := makeUnits(20)
	var runs runCounter
	// A worker runs one unit at a time, so two units in flight are both
	// workers at work. Until then a unit waits: on a loaded machine one
	// worker could otherwise run all twenty before the other started, and
	// the split this test checks would not happen.
	var (
		inFlight atomic.Int32
		both     = make(chan struct{})
		bothOnce sync.Once
	)
	// The workers start before the coordinator has created the campaign,
	// and wait for it. Every unit also reports "everyone", so both workers
	// report that signature.
	startWorkers(t, ep, Options{}, 2, func(ctx context.Context, u Unit, report func(Finding) error) (Result, error) {
		runs.add(u.ID)
		if inFlight.Add(1) >= 2 {
			bothOnce.Do(func() { close(both) })
		}
		defer inFlight.Add(-1)
		select {
		case <-both:
		case <-ctx.Done():
			return Result{}, ctx.Err()
		}
		body, _ := json.Marshal(findingBody{Unit: u.ID})
		if err := report(Finding{Signature: "everyone", Body: body}); err != nil {
			return Result{}, err
		}
		return fakeRun(ctx, u, report, "", 5*time.Millisecond)
	})
	c := newCoordinator(t, ctx, ep, Options{})
	col := newCollector()
	var st lastStatus
	if err := c.Run(ctx, units, col.onFinding, st.set); err != nil {
		t.Fatalf("Run: %v", err)
	}
	want := append(wantSignatures(units), "everyone")
	col.check(t, want)
	runs.checkOnce(t, units)
	final := st.get()
	if got, wantSt := countsOf(final), (counts{Units: 20, Done: 20, Findings: len(want)}); got != wantSt {
		t.Errorf("final status %+v, want %+v", got, wantSt)
	}
	// Each unit ran 100 inputs; the totals are split between the workers
	// that ran them.
	if final.Inputs != 2000 || final.InputsThisRun != 2000 || final.Rate() <= 0 {
		t.Errorf("inputs %d (%d this run, %.0f/s), want 2000", final.Inputs, final.InputsThisRun, final.Rate())
	}
	var ran int
	var inputs uint64
	for _, w := range final.Workers {
		ran += w.Units
		inputs += w.Inputs
		if w.Units > 0 && (w.Busy <= 0 || w.Rate() <= 0) {
			t.Errorf("worker %s: %d units in %v", w.Name, w.Units, w.Busy)
		}
		if !strings.HasPrefix(w.Name, "w") || w.Refused != "" {
			t.Errorf("worker %+v, want w0 or w1, joined", w)
		}
	}
	if len(final.Workers) != 2 || ran != 20 || inputs != 2000 {
		t.Errorf("workers %+v: want two, with 20 units and 2000 inputs between them", final.Workers)
	}
}

// TestWorkerProcessKilled is the acceptance test: two worker
// processes, one killed with SIGKILL in the middle of a unit; every unit
// still completes and every finding arrives once.
func TestWorkerProcessKilled(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	ep := endpoint(t, srv, "killed")
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Second)
	defer cancel()
	dir := t.TempDir()

	const ackWait = time.Second
	c := newCoordinator(t, ctx, ep, Options{AckWait: ackWait})
	units := makeUnits(12)
	col := newCollector()
	var done atomic.Int64
	runErr := make(chan error, 1)
	go func() {
		runErr <- c.Run(ctx, units, col.onFinding, func(s Status) { done.Store(int64(s.Done)) })
	}()

	// The victim completes one unit and stalls in its second, after
	// reporting that unit's findings; the survivor starts once the victim
	// is stalled, so the kill is certainly mid-unit.
	victim := startHelper(t, ep, "victim", dir, 1)
	stalled := waitFile(t, ctx, filepath.Join(dir, "victim.stalled"))
	survivor := startHelper(t, ep, "survivor", dir, -1)
	for done.Load() < 2 { // the victim's unit and one of the survivor's
		if sleep(ctx, 10*time.Millisecond) != nil {
			t.Fatalf("the survivor completed no unit: %v", ctx.Err())
		}
	}
	if err := victim.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if err := victim.wait(5 * time.Second); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("victim: %v, want killed", err)
	}

	if err := <-runErr; err != nil {
		t.Fatalf("Run: %v", err)
	}
	col.check(t, wantSignatures(units))

	// The stalled unit was redelivered to the survivor after the ack wait.
	js, err := jetstream.New(c.nc)
	if err != nil {
		t.Fatal(err)
	}
	doneStream, err := js.Stream(ctx, ep.DoneStream())
	if err != nil {
		t.Fatal(err)
	}
	raw, err := doneStream.GetLastMsgForSubject(ctx, ep.subject("done", token(stalled)))
	if err != nil {
		t.Fatalf("outcome of the stalled unit %s: %v", stalled, err)
	}
	o, err := decodeOutcome(raw.Data)
	if err != nil {
		t.Fatal(err)
	}
	if o.Worker != "survivor" || o.Failed || o.Deliveries != 2 {
		t.Errorf("outcome of the stalled unit: %+v, want done by the survivor on its second delivery", o)
	}

	if err := survivor.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := survivor.wait(10 * time.Second); err != nil {
		t.Errorf("survivor: %v, want a clean exit on SIGTERM", err)
	}
}

// helper is a worker process started by startHelper.
type helper struct {
	cmd    *exec.Cmd
	stdin  *os.File // the test's end of the helper's stdin
	exited chan error
}

// startHelper starts a worker process named name (see helperMain), killed
// and reaped when the test ends if it is still running.
func startHelper(t *testing.T, ep Endpoint, name, dir string, stallAfter int) *helper {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+name, helperEndpoint+"="+ep.String(), helperDir+"="+dir,
		helperStallAfter+"="+strconv.Itoa(stallAfter))
	cmd.Stdin = r
	cmd.Stderr = &testWriter{t: t, prefix: name + ": "}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	_ = r.Close()
	h := &helper{cmd: cmd, stdin: w, exited: make(chan error, 1)}
	go func() { h.exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = h.stdin.Close()
		if h.wait(5*time.Second) == errStillRunning {
			_ = cmd.Process.Kill()
			<-h.exited
		}
	})
	return h
}

var errStillRunning = errors.New("still running")

// wait waits up to d for the helper to exit and returns its exit error. It
// can be called again after the helper exited.
func (h *helper) wait(d time.Duration) error {
	select {
	case err := <-h.exited:
		h.exited <- err
		return err
	case <-time.After(d):
		return errStillRunning
	}
}

// testWriter passes a helper's stderr to the test log.
type testWriter struct {
	t      *testing.T
	prefix string
}

func (w *testWriter) Write(p []byte) (int, error) {
	w.t.Log(w.prefix + strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// waitFile waits for path to exist and returns its content.
func waitFile(t *testing.T, ctx context.Context, path string) string {
	t.Helper()
	for {
		b, err := os.ReadFile(path)
		if err == nil {
			return string(b)
		}
		if sleep(ctx, 10*time.Millisecond) != nil {
			t.Fatalf("%s never appeared: %v", path, ctx.Err())
		}
	}
}

// unitsPublished returns how many messages the units stream has ever stored.
func unitsPublished(t *testing.T, ctx context.Context, c *Coordinator) uint64 {
	t.Helper()
	info, err := c.units.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return info.State.LastSeq
}

func TestCoordinatorRestart(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	ep := endpoint(t, srv, "restart")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	units := makeUnits(16)
	col := newCollector()

	// The units stream's duplicate window is made as short as JetStream
	// allows, and each coordinator starts after it has passed: what keeps a
	// restarted coordinator from publishing twice must then be its look at
	// the queue and the outcomes, as it would be hours into a campaign.
	const dupWindow = 100 * time.Millisecond
	pre := newCoordinator(t, ctx, ep, Options{})
	ucfg, _, _ := StreamConfigs(ep)
	ucfg.Duplicates = dupWindow
	if _, err := pre.js.UpdateStream(ctx, ucfg); err != nil {
		t.Fatal(err)
	}
	if err := pre.Close(); err != nil {
		t.Fatal(err)
	}

	// A coordinator publishes everything and stops before any worker runs.
	first := newCoordinator(t, ctx, ep, Options{})
	stop, stopped := context.WithCancel(ctx)
	if err := first.Run(stop, units, col.onFinding, func(Status) { stopped() }); !errors.Is(err, context.Canceled) {
		t.Fatalf("first Run: %v, want context.Canceled", err)
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}

	// Its successor finds every unit still queued and publishes none; it
	// stops once half the units are done.
	time.Sleep(2 * dupWindow)
	second := newCoordinator(t, ctx, ep, Options{})
	if n := unitsPublished(t, ctx, second); n != uint64(len(units)) {
		t.Fatalf("units stored after the first Run: %d, want %d", n, len(units))
	}
	var runs runCounter
	startWorkers(t, ep, Options{}, 2, func(ctx context.Context, u Unit, report func(Finding) error) (Result, error) {
		runs.add(u.ID)
		return fakeRun(ctx, u, report, "", 10*time.Millisecond)
	})
	stop, stopped = context.WithCancel(ctx)
	err := second.Run(stop, units, col.onFinding, func(s Status) {
		if s.Done >= len(units)/2 {
			stopped()
		}
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("second Run: %v, want context.Canceled", err)
	}
	if err := second.Close(); err != nil {
		t.Fatal(err)
	}

	// A third runs the campaign to its end, and a fourth finds it over.
	// Each hands over every finding the campaign stored, those its
	// predecessors handed over too, once.
	for _, name := range []string{"third", "fourth"} {
		time.Sleep(2 * dupWindow)
		c := newCoordinator(t, ctx, ep, Options{})
		var st lastStatus
		col := newCollector()
		if err := c.Run(ctx, units, col.onFinding, st.set); err != nil {
			t.Fatalf("%s Run: %v", name, err)
		}
		if n := unitsPublished(t, ctx, c); n != uint64(len(units)) {
			t.Errorf("units stored after the %s Run: %d, want %d", name, n, len(units))
		}
		want := counts{Units: len(units), Done: len(units), Findings: len(wantSignatures(units))}
		if got := countsOf(st.get()); got != want {
			t.Errorf("%s Run's final status %+v, want %+v", name, got, want)
		}
		col.check(t, wantSignatures(units))
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
	}
	runs.checkOnce(t, units)
}

func TestFailingUnit(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	ep := endpoint(t, srv, "failing")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	units := makeUnits(6)
	bad := units[2].ID
	var runs runCounter
	startWorkers(t, ep, Options{}, 2, func(ctx context.Context, u Unit, report func(Finding) error) (Result, error) {
		runs.add(u.ID)
		if u.ID == bad {
			return Result{}, errors.New("the SUT fell over")
		}
		return fakeRun(ctx, u, report, "", time.Millisecond)
	})
	c := newCoordinator(t, ctx, ep, Options{MaxAttempts: 3})
	var st lastStatus
	err := c.Run(ctx, units, newCollector().onFinding, st.set)
	var failed *UnitsFailedError
	if !errors.As(err, &failed) {
		t.Fatalf("Run: %v, want a *UnitsFailedError", err)
	}
	if len(failed.Units) != 1 || failed.Units[0].ID != bad || failed.Units[0].Deliveries != 3 ||
		!strings.Contains(failed.Units[0].Err, "the SUT fell over") {
		t.Errorf("failed units %+v, want %s after 3 deliveries with its error", failed.Units, bad)
	}
	if n := runs.count(bad); n != 3 {
		t.Errorf("the failing unit ran %d times, want 3", n)
	}
	if got, want := countsOf(st.get()), (counts{Units: 6, Done: 5, Failed: 1, Findings: len(wantSignatures(units))}); got != want {
		t.Errorf("final status %+v, want %+v", got, want)
	}
}

// TestAbandonedUnit covers a unit whose workers all die: the test takes it
// from the queue twice as a worker would and never acknowledges it; the
// worker that receives its third delivery records it as failed without
// running it.
func TestAbandonedUnit(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	ep := endpoint(t, srv, "abandoned")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	const ackWait = 200 * time.Millisecond
	c := newCoordinator(t, ctx, ep, Options{AckWait: ackWait, MaxAttempts: 2})
	units := makeUnits(1)
	runErr := make(chan error, 1)
	go func() { runErr <- c.Run(ctx, units, nil, nil) }()

	js, err := jetstream.New(c.nc)
	if err != nil {
		t.Fatal(err)
	}
	cons, err := js.Consumer(ctx, ep.UnitsStream(), workersConsumer)
	if err != nil {
		t.Fatal(err)
	}
	for want := uint64(1); want <= 2; want++ {
		m, err := cons.Next(jetstream.FetchMaxWait(5 * time.Second))
		if err != nil {
			t.Fatalf("delivery %d: %v", want, err)
		}
		if md, err := m.Metadata(); err != nil || md.NumDelivered != want {
			t.Fatalf("delivery %d: metadata %+v, %v", want, md, err)
		}
	}
	startWorkers(t, ep, Options{}, 1, func(context.Context, Unit, func(Finding) error) (Result, error) {
		t.Error("a unit delivered more often than MaxAttempts was run")
		return Result{}, nil
	})
	err = <-runErr
	var failed *UnitsFailedError
	if !errors.As(err, &failed) || len(failed.Units) != 1 || failed.Units[0].Deliveries != 3 ||
		!strings.Contains(failed.Units[0].Err, "more than the 2 attempts") {
		t.Fatalf("Run: %v, want unit %s failed on its third delivery", err, units[0].ID)
	}
}

// TestLongUnitKeptAlive checks that a unit running for several ack waits is
// kept alive by its worker and not handed to the idle second worker, and
// that Run keeps reporting its status while nothing changes, so that its
// rate and elapsed time stay current.
func TestLongUnitKeptAlive(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	ep := endpoint(t, srv, "long-unit")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	const ackWait = 200 * time.Millisecond
	c := newCoordinator(t, ctx, ep, Options{AckWait: ackWait})
	units := makeUnits(1)
	var runs runCounter
	startWorkers(t, ep, Options{}, 2, func(ctx context.Context, u Unit, report func(Finding) error) (Result, error) {
		runs.add(u.ID)
		return fakeRun(ctx, u, report, "", 8*ackWait)
	})
	// Reports of a status in which nothing changes: the unit running, both
	// workers known.
	var unchanged atomic.Int64
	if err := c.Run(ctx, units, nil, func(s Status) {
		if s.Done == 0 && len(s.Workers) == 2 {
			unchanged.Add(1)
		}
	}); err != nil {
		t.Fatalf("Run: %v", err)
	}
	runs.checkOnce(t, units)
	if n := unchanged.Load(); n < 3 {
		t.Errorf("%d status reports while the unit ran for %v, want one every %v", n, 8*ackWait, recheckEvery)
	}
}

// TestDeathBetweenSteps covers a worker that dies after reporting a
// finding but before recording the outcome (unit 0: rerun, its finding
// handed over once) and one that dies after recording the outcome but before
// acknowledging the unit (unit 1: not rerun). The test plays the dying
// worker with the package's own steps and then walks away from the units.
func TestDeathBetweenSteps(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	ep := endpoint(t, srv, "deaths")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c := newCoordinator(t, ctx, ep, Options{AckWait: 200 * time.Millisecond})
	units := makeUnits(2)
	units[0].Seed, units[1].Seed = 1, 2 // unit 0 has findings, unit 1 none
	col := newCollector()
	runErr := make(chan error, 1)
	go func() { runErr <- c.Run(ctx, units, col.onFinding, nil) }()

	js, err := jetstream.New(c.nc)
	if err != nil {
		t.Fatal(err)
	}
	dying, err := bind(ctx, js, ep, Options{Worker: "dying"}.withDefaults(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for range units {
		m, err := dying.cons.Next(jetstream.FetchMaxWait(5 * time.Second))
		if err != nil {
			t.Fatal(err)
		}
		u, err := dying.decode(m)
		if err != nil {
			t.Fatal(err)
		}
		switch u.ID {
		case units[0].ID:
			for _, f := range findingsFor(u, "dying") {
				if err := dying.report(ctx, u, f); err != nil {
					t.Fatal(err)
				}
			}
		case units[1].ID:
			rec, _ := json.Marshal(outcome{ID: u.ID, Worker: "dying", Deliveries: 1})
			if _, err := js.Publish(ctx, ep.subject("done", token(u.ID)), rec); err != nil {
				t.Fatal(err)
			}
		}
	}

	var runs runCounter
	startWorkers(t, ep, Options{}, 1, func(ctx context.Context, u Unit, report func(Finding) error) (Result, error) {
		runs.add(u.ID)
		return fakeRun(ctx, u, report, "", time.Millisecond)
	})
	if err := <-runErr; err != nil {
		t.Fatalf("Run: %v", err)
	}
	// Run ends on the outcomes; the redelivered units leave the queue
	// once the live worker has dealt with them.
	for {
		info, err := c.units.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if info.State.Msgs == 0 {
			break
		}
		if sleep(ctx, 10*time.Millisecond) != nil {
			t.Fatalf("%d units still queued: %v", info.State.Msgs, ctx.Err())
		}
	}
	col.check(t, wantSignatures(units))
	if n := runs.count(units[0].ID); n != 1 {
		t.Errorf("unit 0, whose worker died before recording it, was rerun %d times, want once", n)
	}
	if n := runs.count(units[1].ID); n != 0 {
		t.Errorf("unit 1, whose worker died after recording it, was rerun %d times, want never", n)
	}
}

func TestDeleteCampaign(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	ep := endpoint(t, srv, "delete")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var runs runCounter
	startWorkers(t, ep, Options{}, 1, func(ctx context.Context, u Unit, report func(Finding) error) (Result, error) {
		runs.add(u.ID)
		return fakeRun(ctx, u, report, "", time.Millisecond)
	})
	// The same worker serves both campaigns: it waits for the second.
	units := makeUnits(3)
	for round := 1; round <= 2; round++ {
		c := newCoordinator(t, ctx, ep, Options{})
		col := newCollector()
		if err := c.Run(ctx, units, col.onFinding, nil); err != nil {
			t.Fatalf("round %d: Run: %v", round, err)
		}
		col.check(t, wantSignatures(units))
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		if err := DeleteCampaign(ctx, ep); err != nil {
			t.Fatalf("round %d: DeleteCampaign: %v", round, err)
		}
	}
	for _, u := range units {
		if n := runs.count(u.ID); n != 2 {
			t.Errorf("unit %s ran %d times over two campaigns of the same name, want twice", u.ID, n)
		}
	}
	if err := DeleteCampaign(ctx, ep); err != nil {
		t.Errorf("deleting a deleted campaign: %v", err)
	}
}

func TestRunRefusesBadUnits(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	ep := endpoint(t, srv, "bad-units")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c := newCoordinator(t, ctx, ep, Options{})
	for name, units := range map[string][]Unit{
		"empty ID":       {{ID: ""}},
		"repeated ID":    {{ID: "a"}, {ID: "a"}},
		"control in ID":  {{ID: "a\nb"}},
		"reversed range": {{ID: "a", Start: 2, End: 1}},
	} {
		if err := c.Run(ctx, units, nil, nil); err == nil {
			t.Errorf("%s: Run accepted %+v", name, units)
		}
	}
	if n := unitsPublished(t, ctx, c); n != 0 {
		t.Errorf("%d units published from bad lists", n)
	}
}

// BenchmarkUnits measures units per second through the queue: a campaign of
// b.N units with trivial work, run by two in-process workers.
func BenchmarkUnits(b *testing.B) {
	srv := startServer(b)
	ctx := context.Background()
	ep := endpoint(b, srv, fmt.Sprintf("bench-%d", b.N))
	c := newCoordinator(b, ctx, ep, Options{})
	startWorkers(b, ep, Options{}, 2, func(context.Context, Unit, func(Finding) error) (Result, error) { return Result{}, nil })
	units := makeUnits(b.N)
	b.ResetTimer()
	start := time.Now()
	if err := c.Run(ctx, units, nil, nil); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "units/s")
}
