package runner

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/conform-suite/conform/cases"
	"github.com/conform-suite/conform/internal/hang"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/reports"
	"github.com/conform-suite/conform/sut"
)

// hangGuard bounds a wait that only a broken scheduler makes long, on an
// idle machine; hang.Guard stretches it on a loaded one. It is never what a
// test measures.
const hangGuard = 30 * time.Second

// sessionClient is one session of a SUT that may be started more than once:
// it counts the ops in flight on it, which must never exceed one, since a
// conform.v1 session carries one request at a time.
type sessionClient struct {
	id       int
	profiles []string
	inFlight atomic.Int32
	overlap  *atomic.Bool // set when two ops overlapped on one session
	closed   atomic.Bool
	ops      atomic.Int32
	err      error
	noWait   bool // answer at once, for benchmarks
}

func (c *sessionClient) Hello() *conformpb.Hello { return &conformpb.Hello{Profiles: c.profiles} }
func (c *sessionClient) Carrier() string         { return "fake" }
func (c *sessionClient) Close() error            { c.closed.Store(true); return nil }
func (c *sessionClient) Do(ctx context.Context, req *conformpb.Request) (*conformpb.Response, error) {
	if c.inFlight.Add(1) > 1 {
		c.overlap.Store(true)
	}
	defer c.inFlight.Add(-1)
	c.ops.Add(1)
	if c.closed.Load() {
		return nil, errors.New("op on a closed session")
	}
	if !c.noWait {
		time.Sleep(time.Millisecond) // room for another op to overlap, were the runner to allow it
	}
	if c.err != nil {
		return nil, c.err
	}
	return okResp, nil
}

// fleet opens sessions of one SUT and remembers them.
type fleet struct {
	mu       sync.Mutex
	profiles []string
	sessions []*sessionClient
	overlap  atomic.Bool
	refuse   error // Open fails with it
	err      error // every op fails with it
	noWait   bool  // sessions answer at once
}

func newFleet(profiles ...string) *fleet { return &fleet{profiles: profiles} }

func (f *fleet) open(context.Context) (sut.Client, error) {
	if f.refuse != nil {
		return nil, f.refuse
	}
	return f.add(), nil
}

func (f *fleet) add() *sessionClient {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := &sessionClient{id: len(f.sessions), profiles: f.profiles, overlap: &f.overlap, err: f.err, noWait: f.noWait}
	f.sessions = append(f.sessions, c)
	return c
}

// barrier lets a case wait until n cases are inside it at once, or until the
// hang guard: only cases that really run side by side all get through.
type barrier struct {
	n       int
	mu      sync.Mutex
	in      int
	all     chan struct{}
	maxSeen int
}

func newBarrier(n int) *barrier { return &barrier{n: n, all: make(chan struct{})} }

func (b *barrier) wait(ctx context.Context) bool {
	b.mu.Lock()
	b.in++
	b.maxSeen = max(b.maxSeen, b.in)
	if b.in == b.n {
		close(b.all)
	}
	b.mu.Unlock()
	defer func() { b.mu.Lock(); b.in--; b.mu.Unlock() }()
	select {
	case <-b.all:
		return true
	case <-ctx.Done():
		return false
	case <-time.After(hangGuard):
		return false
	}
}

// liveCase is a live case that sends one op and then runs body.
func liveCase(id string, body func(t *cases.T)) cases.Case {
	return cases.Case{ID: id, Title: id, Spec: "test", Level: reports.MUST, Profile: "wire", Tags: []string{LiveTag}, Run: func(t *cases.T) {
		t.Do(&conformpb.Request{})
		if body != nil {
			body(t)
		}
	}}
}

// TestLiveCasesOverlap: with Parallel and a way to open sessions, live cases
// run side by side — each is inside a barrier that only opens when all of
// them are — each over a session of its own; with Parallel 1, or with no
// way to open a session, they run one after another and none opens.
func TestLiveCasesOverlap(t *testing.T) {
	const n = 4
	for _, tc := range []struct {
		name     string
		parallel int
		open     bool
		together bool
	}{
		{"parallel", n, true, true},
		{"parallel-1", 1, true, false},
		{"no-open", n, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFleet("wire")
			b := newBarrier(n)
			var cs []cases.Case
			for i := range n {
				cs = append(cs, liveCase(fmt.Sprintf("wire/1/l%d", i), func(ct *cases.T) {
					if !tc.together {
						return
					}
					if !b.wait(ct.Context()) {
						ct.Failf("the %d live cases did not run at once", n)
					}
				}))
			}
			cfg := Config{Spec: "fake", Client: f.add(), Cases: cs, Parallel: tc.parallel}
			if tc.open {
				cfg.Open = f.open
			}
			rec := Run(context.Background(), cfg)
			for _, c := range rec.Cases {
				if c.Outcome != reports.Pass {
					t.Errorf("%s: %s %s", c.ID, c.Outcome, c.Message)
				}
			}
			if f.overlap.Load() {
				t.Error("two ops overlapped on one session")
			}
			opened := len(f.sessions) - 1
			switch {
			case tc.together && opened != n:
				t.Errorf("%d sessions opened, want one for each of the %d live cases", opened, n)
			case !tc.together && opened != 0:
				t.Errorf("%d sessions opened for cases that run one at a time", opened)
			}
			for _, s := range f.sessions[1:] {
				if !s.closed.Load() {
					t.Errorf("session %d was left open", s.id)
				}
			}
			if f.sessions[0].closed.Load() {
				t.Error("the runner closed Client, which its caller owns")
			}
		})
	}
}

// TestRecordInCatalogueOrder: cases that end out of order are recorded,
// and reported to Progress, in the order of the selection, each as soon as
// the cases before it are done.
func TestRecordInCatalogueOrder(t *testing.T) {
	f := newFleet("wire")
	release := make(chan struct{})
	var progress []string
	var seenWhenFirstEnded []string
	cs := []cases.Case{
		liveCase("wire/1/a", func(ct *cases.T) {
			// The first case ends only after the last has ended.
			select {
			case <-release:
			case <-time.After(hang.Guard(t, hangGuard)):
				ct.Failf("the last case never ran while the first waited")
			}
			seenWhenFirstEnded = slices.Clone(progress)
		}),
		mk("wire/1/b", reports.MUST, false),
		liveCase("wire/1/c", func(*cases.T) { close(release) }),
	}
	rec := Run(context.Background(), Config{Spec: "fake", Client: f.add(), Open: f.open, Parallel: 4, Cases: cs,
		Progress: func(r reports.CaseResult) { progress = append(progress, r.ID) }})
	var ids []string
	for _, c := range rec.Cases {
		ids = append(ids, c.ID)
		if c.Outcome != reports.Pass {
			t.Errorf("%s: %s %s", c.ID, c.Outcome, c.Message)
		}
	}
	want := []string{"wire/1/a", "wire/1/b", "wire/1/c"}
	if !slices.Equal(ids, want) || !slices.Equal(progress, want) {
		t.Errorf("record %v, progress %v, want both %v", ids, progress, want)
	}
	if len(seenWhenFirstEnded) != 0 {
		t.Errorf("progress reported %v before the first case ended", seenWhenFirstEnded)
	}
}

// TestOtherCasesOneAtATime: cases that are not live never run beside each
// other, and all of them run over Client, in order; live cases run beside
// them. No more than Parallel cases run at once.
func TestOtherCasesOneAtATime(t *testing.T) {
	f := newFleet("wire")
	first := f.add()
	var (
		mu                  sync.Mutex
		others, lives, all  int
		maxOthers, maxAll   int
		order               []string
		otherBesideALive    bool
		othersDone          = make(chan struct{})
		remainingOtherCases atomic.Int32
	)
	enter := func(other bool) {
		mu.Lock()
		defer mu.Unlock()
		all++
		maxAll = max(maxAll, all)
		if other {
			others++
			maxOthers = max(maxOthers, others)
			otherBesideALive = otherBesideALive || lives > 0
		} else {
			lives++
		}
	}
	leave := func(other bool) {
		mu.Lock()
		defer mu.Unlock()
		all--
		if other {
			others--
		} else {
			lives--
		}
	}
	var cs []cases.Case
	const nOther, nLive, parallel = 12, 12, 3
	remainingOtherCases.Store(nOther)
	for i := range nOther {
		id := fmt.Sprintf("wire/1/o%02d", i)
		cs = append(cs, cases.Case{ID: id, Title: id, Spec: "t", Level: reports.MUST, Profile: "wire", Run: func(ct *cases.T) {
			enter(true)
			defer leave(true)
			ct.Do(&conformpb.Request{})
			mu.Lock()
			order = append(order, id)
			mu.Unlock()
			time.Sleep(2 * time.Millisecond)
			if remainingOtherCases.Add(-1) == 0 {
				close(othersDone)
			}
		}})
	}
	for i := range nLive {
		// Live cases come first in the selection and wait for every other
		// case: they can only pass if the others run beside them.
		cs = slices.Insert(cs, i, liveCase(fmt.Sprintf("wire/0/l%02d", i), func(ct *cases.T) {
			enter(false)
			defer leave(false)
			if i < parallel-1 {
				select {
				case <-othersDone:
				case <-time.After(hang.Guard(t, hangGuard)):
					ct.Failf("the other cases did not run beside the live ones")
				}
			}
		}))
	}
	rec := Run(context.Background(), Config{Spec: "fake", Client: first, Open: f.open, Parallel: parallel, Cases: cs})
	for _, c := range rec.Cases {
		if c.Outcome != reports.Pass {
			t.Errorf("%s: %s %s", c.ID, c.Outcome, c.Message)
		}
	}
	if maxOthers != 1 {
		t.Errorf("%d cases that are not live ran at once, want 1", maxOthers)
	}
	if maxAll > parallel {
		t.Errorf("%d cases ran at once, above Parallel %d", maxAll, parallel)
	}
	if !otherBesideALive {
		t.Error("no case that is not live ran beside a live one")
	}
	if got := first.ops.Load(); got != nOther {
		t.Errorf("Client served %d ops, want the %d of the cases that are not live", got, nOther)
	}
	if !slices.IsSorted(order) {
		t.Errorf("the cases that are not live ran out of order: %v", order)
	}
	if f.overlap.Load() {
		t.Error("two ops overlapped on one session")
	}
}

// TestParallelRecordLikeSerial: the record of a run with Parallel — the
// seeds each case saw, the outcomes, the order — is the record of the
// same run one case at a time, except for times.
func TestParallelRecordLikeSerial(t *testing.T) {
	var cs []cases.Case
	for i := range 20 {
		id := fmt.Sprintf("wire/1/c%02d", i)
		fail := i%3 == 0
		c := cases.Case{ID: id, Title: id, Spec: "t", Level: reports.MUST, Profile: "wire", Run: func(ct *cases.T) {
			ct.Do(&conformpb.Request{})
			ct.Note("drew %d", ct.Rand().Uint64())
			if fail {
				ct.Failf("broken")
			}
		}}
		if i%2 == 0 {
			c.Tags = []string{LiveTag}
		}
		cs = append(cs, c)
	}
	run := func(parallel int) *reports.Record {
		f := newFleet("wire")
		rec := Run(context.Background(), Config{Spec: "fake", Client: f.add(), Open: f.open, Parallel: parallel, Cases: cs, Seed: 42})
		for i := range rec.Cases {
			rec.Cases[i].DurationSec = 0
		}
		return rec
	}
	serial, parallel := run(1), run(8)
	if !slices.EqualFunc(serial.Cases, parallel.Cases, func(a, b reports.CaseResult) bool {
		return a.ID == b.ID && a.Outcome == b.Outcome && a.Message == b.Message && slices.Equal(a.Notes, b.Notes) && a.Reproduce == b.Reproduce
	}) {
		t.Errorf("records differ:\nserial   %+v\nparallel %+v", serial.Cases, parallel.Cases)
	}
	if serial.ExitCode != parallel.ExitCode || serial.Summary.Counts[reports.Fail] != parallel.Summary.Counts[reports.Fail] {
		t.Errorf("exit %d/%d", serial.ExitCode, parallel.ExitCode)
	}
}

// TestLostWithParallel: a SUT whose every session times out is presumed
// lost after MaxTimeouts cases in catalogue order, exactly as one case at a
// time; cases after that are recorded as not run even if they had started.
func TestLostWithParallel(t *testing.T) {
	var cs []cases.Case
	for i := range 12 {
		cs = append(cs, liveCase(fmt.Sprintf("wire/1/c%02d", i), nil))
	}
	for _, parallel := range []int{1, 4} {
		f := newFleet("wire")
		f.err = &sut.Error{Kind: reports.KindTimeout, Detail: "slow"}
		rec := Run(context.Background(), Config{Spec: "fake", Client: f.add(), Open: f.open, Parallel: parallel, Cases: cs, MaxTimeouts: 3})
		var kinds []reports.ErrorKind
		for _, c := range rec.Cases {
			kinds = append(kinds, c.ErrorKind)
		}
		want := []reports.ErrorKind{reports.KindTimeout, reports.KindTimeout, reports.KindTimeout}
		for range 9 {
			want = append(want, reports.KindLost)
		}
		if !slices.Equal(kinds, want) {
			t.Errorf("parallel %d: kinds %v, want %v", parallel, kinds, want)
		}
		if rec.Lost == nil || rec.Lost.After != "wire/1/c02" || rec.Lost.NotRun != 9 {
			t.Errorf("parallel %d: lost %+v", parallel, rec.Lost)
		}
		ops := 0
		for _, s := range f.sessions {
			ops += int(s.ops.Load())
		}
		if parallel == 1 && ops != 3 {
			t.Errorf("parallel 1: %d ops sent, want 3", ops)
		}
	}
}

// TestInterruptedWithParallel: an interrupted run records a prefix of the
// selection, in order, ending with the interrupted case, and every case
// running stops.
func TestInterruptedWithParallel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var cs []cases.Case
	started := make(chan struct{}, 64)
	for i := range 30 {
		cs = append(cs, liveCase(fmt.Sprintf("wire/1/c%02d", i), func(ct *cases.T) {
			started <- struct{}{}
			<-ct.Context().Done()
			ct.Do(&conformpb.Request{}) // raises the interruption
		}))
	}
	go func() {
		for range 3 {
			<-started
		}
		cancel()
	}()
	f := newFleet("wire")
	done := make(chan *reports.Record)
	go func() { done <- Run(ctx, Config{Spec: "fake", Client: f.add(), Open: f.open, Parallel: 4, Cases: cs}) }()
	var rec *reports.Record
	select {
	case rec = <-done:
	case <-time.After(hang.Guard(t, hangGuard)):
		t.Fatal("the run did not end after it was interrupted")
	}
	if !rec.Interrupted || rec.ExitCode != ExitFailures {
		t.Errorf("interrupted %v, exit %d", rec.Interrupted, rec.ExitCode)
	}
	if len(rec.Cases) == 0 || len(rec.Cases) > 4 {
		t.Fatalf("%d cases recorded", len(rec.Cases))
	}
	for i, c := range rec.Cases {
		if c.ID != cs[i].ID {
			t.Errorf("case %d is %s, want %s", i, c.ID, cs[i].ID)
		}
	}
	if last := rec.Cases[len(rec.Cases)-1]; last.ErrorKind != reports.KindInterrupted {
		t.Errorf("the last case recorded is %s/%s, want the interrupted one", last.Outcome, last.ErrorKind)
	}
}

// TestOpenRefusedGoesOnOverClient: a SUT that cannot be started a second
// time is not an error of any case: the cases run one at a time over
// Client, and Notice says why.
func TestOpenRefusedGoesOnOverClient(t *testing.T) {
	f := newFleet("wire")
	f.refuse = errors.New("address already in use")
	var notices []string
	var cs []cases.Case
	for i := range 6 {
		cs = append(cs, liveCase(fmt.Sprintf("wire/1/c%d", i), nil))
	}
	rec := Run(context.Background(), Config{Spec: "fake", Client: f.add(), Open: f.open, Parallel: 4, Cases: cs,
		Notice: func(m string) { notices = append(notices, m) }})
	if rec.ExitCode != ExitOK || rec.Summary.Counts[reports.Pass] != 6 {
		t.Errorf("exit %d, counts %v", rec.ExitCode, rec.Summary.Counts)
	}
	if len(notices) != 1 || !strings.Contains(notices[0], "address already in use") {
		t.Errorf("notices %q, want one naming why", notices)
	}
	if f.overlap.Load() {
		t.Error("two ops overlapped on Client")
	}
}

// TestLimitsShared: Limits bound the live cases, and the others, running at
// once across runs that share them.
func TestLimitsShared(t *testing.T) {
	limits := NewLimits(3, 1)
	var live, other, maxLive, maxOther atomic.Int32
	track := func(n, peak *atomic.Int32) func() {
		v := n.Add(1)
		for {
			p := peak.Load()
			if v <= p || peak.CompareAndSwap(p, v) {
				break
			}
		}
		return func() { n.Add(-1) }
	}
	mkRun := func(r int) []cases.Case {
		var cs []cases.Case
		for i := range 6 {
			cs = append(cs, liveCase(fmt.Sprintf("wire/%d/l%d", r, i), func(*cases.T) {
				defer track(&live, &maxLive)()
				time.Sleep(2 * time.Millisecond)
			}))
			id := fmt.Sprintf("wire/%d/o%d", r, i)
			cs = append(cs, cases.Case{ID: id, Title: id, Spec: "t", Level: reports.MUST, Profile: "wire", Run: func(*cases.T) {
				defer track(&other, &maxOther)()
				time.Sleep(2 * time.Millisecond)
			}})
		}
		return cs
	}
	var wg sync.WaitGroup
	for r := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f := newFleet("wire")
			rec := Run(context.Background(), Config{Spec: "fake", Client: f.add(), Open: f.open, Parallel: 8, Cases: mkRun(r), Limits: limits})
			if rec.ExitCode != ExitOK {
				t.Errorf("run %d: exit %d", r, rec.ExitCode)
			}
		}()
	}
	wg.Wait()
	if maxLive.Load() > 3 || maxOther.Load() > 1 {
		t.Errorf("at most %d live and %d other cases ran at once, above the limits 3 and 1", maxLive.Load(), maxOther.Load())
	}
}

// TestHarnessErrorRunAgain: a live case that ends in a harness error —
// conform fell behind — is run again on a fresh session, and its verdict is
// the first attempt's that judged the SUT, with the earlier attempts in its
// notes; one that never gets past the harness stays an error after
// HarnessRetries more attempts; a case that is not live is never run again.
func TestHarnessErrorRunAgain(t *testing.T) {
	for _, tc := range []struct {
		name      string
		live      bool
		failFirst int // attempts that end in a harness error
		want      reports.Outcome
		attempts  int
	}{
		{"live, behind once", true, 1, reports.Pass, 2},
		{"live, behind twice", true, 2, reports.Pass, 3},
		{"live, always behind", true, 100, reports.Error, HarnessRetries + 1},
		{"live, never behind", true, 0, reports.Pass, 1},
		{"not live", false, 1, reports.Error, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFleet("wire")
			var attempts atomic.Int32
			body := func(ct *cases.T) {
				if int(attempts.Add(1)) <= tc.failFirst {
					ct.Harnessf("conform fell behind")
				}
			}
			c := liveCase("wire/1/c", body)
			if !tc.live {
				c.Tags = nil
			}
			rec := Run(context.Background(), Config{Spec: "fake", Client: f.add(), Cases: []cases.Case{c}, Parallel: 4, Open: f.open})
			got := rec.Cases[0]
			if got.Outcome != tc.want || int(attempts.Load()) != tc.attempts {
				t.Fatalf("%s after %d attempts (%s), want %s after %d", got.Outcome, attempts.Load(), got.Message, tc.want, tc.attempts)
			}
			retried := min(tc.attempts, tc.failFirst)
			if tc.want == reports.Error {
				retried = tc.attempts - 1
			}
			if len(got.Notes) != retried {
				t.Errorf("notes %q, want one for each of the %d attempts run again", got.Notes, retried)
			}
			for _, n := range got.Notes {
				if !strings.Contains(n, "harness error") || !strings.Contains(n, "conform fell behind") {
					t.Errorf("note %q does not say why the case was run again", n)
				}
			}
		})
	}
}
