package runner

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/conform-suite/conform/cases"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/reports"
	"github.com/conform-suite/conform/sut"
)

// schedule runs one selection: it starts the cases in catalogue order, as
// many at once as Config.Parallel and the sessions allow, and records them in
// catalogue order, each as soon as every case before it is recorded.
//
// Everything that depends on the order of the cases — the lost-SUT breaker,
// an interruption, Progress — is decided when a case is recorded, on the one
// goroutine that runs the schedule, exactly as a run of one case after
// another decides it. A case that was started before the breaker tripped on
// a case before it is recorded as not run, as it would have been; its own
// result is dropped.
type schedule struct {
	cfg        Config
	hello      *conformpb.Hello
	rec        *reports.Record
	declared   map[string]bool
	undeclared map[string]bool

	strikes int // consecutive recorded cases whose ops the SUT did not answer
}

// slot is one case of the selection on its way to the record.
type slot struct {
	// started: the case was handed to a session (or to waiting for one).
	started bool
	// done: the case needs nothing more before it is recorded — it ran, or
	// it is judged without the SUT.
	done bool
	res  reports.CaseResult
	out  caseOutcome
}

// concurrent reports whether c may run beside other cases: a live case,
// which waits on real time far more than it computes.
func concurrent(c *cases.Case) bool { return slices.Contains(c.Tags, LiveTag) }

// needsSUT reports whether c is to be run against the SUT, as far as is known
// before the cases ahead of it are recorded.
func (s *schedule) needsSUT(c *cases.Case) bool {
	return s.rec.StartError == nil && s.declared[c.Profile] && s.rec.Lost == nil && s.cfg.SkipProfiles[c.Profile] == ""
}

func (s *schedule) run(ctx context.Context) {
	cfg := s.cfg
	parallel := cfg.Parallel
	if parallel < 1 || cfg.Open == nil || cfg.Client == nil {
		parallel = 1
	}
	// runCtx ends the cases still running when the SUT is presumed lost or
	// the run is interrupted.
	runCtx, stopRuns := context.WithCancel(ctx)
	defer stopRuns()
	open := cfg.Open
	if parallel == 1 {
		open = nil
	}
	pool := newSessions(cfg.Client, open, cfg.Notice)
	defer pool.wait()

	n := len(cfg.Cases)
	slots := make([]slot, n)
	ended := make(chan int, n)
	next, emit := 0, 0
	running := 0
	heavy := false   // a case that is not concurrent is running
	stopped := false // no more case will be started
	for {
		// Record, in order, every case that needs nothing more. The breaker
		// and an interruption are decided here, before any case after them
		// starts when one runs at a time.
		for emit < n && slots[emit].done {
			goOn := s.record(emit, &slots[emit])
			if s.rec.Lost != nil {
				stopRuns() // what still runs is recorded as not run
			}
			if !goOn {
				// Interrupted: nothing after this case is recorded.
				stopRuns()
				stopped, n = true, emit
				break
			}
			emit++
		}
		if emit >= n {
			break
		}
		// Start every case whose turn has come and for which there is room,
		// in catalogue order: a case that must wait keeps those after it
		// waiting too, so that cases start in the order they are recorded.
		for !stopped && next < n {
			c := &cfg.Cases[next]
			if ctx.Err() != nil {
				stopped = true
				break
			}
			if !s.needsSUT(c) {
				slots[next].started, slots[next].done = true, true
				next++
				continue
			}
			light := concurrent(c)
			if running >= parallel || (!light && heavy) {
				break
			}
			running++
			heavy = heavy || !light
			slots[next].started = true
			go func(i int, c cases.Case) {
				defer func() { ended <- i }()
				release, err := cfg.Limits.acquire(runCtx, light)
				if err != nil {
					slots[i].res = result(c, reports.Error, reports.KindInterrupted, "the run was interrupted")
					return
				}
				defer release()
				slots[i].res, slots[i].out = s.runOn(runCtx, pool, light, c)
			}(next, *c)
			next++
		}
		if slots[emit].done {
			continue
		}
		if !slots[emit].started && stopped {
			// The run was interrupted before this case started.
			s.rec.Interrupted = true
			stopRuns()
			break
		}
		i := <-ended
		running--
		slots[i].done = true
		if !concurrent(&cfg.Cases[i]) {
			heavy = false
		}
	}
	// Every case started ends before Run returns: each holds a session, and
	// its goroutine writes into slots.
	for ; running > 0; running-- {
		<-ended
	}
}

// HarnessRetries is how many times a live case that ended in a harness
// error is run again. A live case judges real time, and on a machine loaded
// by other work conform itself can fall behind what it must keep up with (a
// heartbeat it owes, a frame it must read in time); it then ends the case as
// a harness error rather than judge the SUT by it. Such an error says
// nothing of the SUT, so the case is run again, on a fresh session, and the
// record keeps why in the case's notes. A case that is not live computes its
// verdict: its harness error is a bug in conform, and running it again would
// only repeat it.
const HarnessRetries = 2

// runOn runs c on a session from pool: once, or, for a live case that ends
// in a harness error, up to HarnessRetries more times.
func (s *schedule) runOn(ctx context.Context, pool *sessions, live bool, c cases.Case) (reports.CaseResult, caseOutcome) {
	var earlier []string
	for try := 0; ; try++ {
		client, put, err := pool.get(ctx, live)
		if err != nil {
			return result(c, reports.Error, reports.KindInterrupted, "the run was interrupted"), caseOutcome{}
		}
		res, out := runCase(ctx, s.cfg, client, s.hello, c)
		put()
		if !live || res.ErrorKind != reports.KindHarness || try == HarnessRetries || ctx.Err() != nil {
			res.Notes = append(earlier, res.Notes...)
			return res, out
		}
		earlier = append(earlier, fmt.Sprintf("attempt %d of %d ended in a harness error, so the case was run again: %s",
			try+1, HarnessRetries+1, reports.Clip(res.Message, reports.MaxMessage)))
	}
}

// record adds the case at index i to the record, as a run of one case after
// another would at its turn, and reports whether the run goes on.
func (s *schedule) record(i int, sl *slot) bool {
	cfg, rec := s.cfg, s.rec
	c := cfg.Cases[i]
	var res reports.CaseResult
	goOn := true
	switch {
	case rec.StartError != nil:
		res = result(c, reports.Error, reports.KindStart, "not run: "+rec.StartError.Message)
	case !s.declared[c.Profile]:
		s.undeclared[c.Profile] = true
		res = result(c, reports.Skip, "", fmt.Sprintf("profile %s is not declared in the SUT's Hello", c.Profile))
	case rec.Lost != nil:
		res = result(c, reports.Error, reports.KindLost, "not run: the SUT was presumed lost after "+rec.Lost.After)
		rec.Lost.NotRun++
	case cfg.SkipProfiles[c.Profile] != "":
		res = result(c, reports.Skip, "", cfg.SkipProfiles[c.Profile])
	default:
		res = sl.res
		out := sl.out
		switch {
		case out.unanswered != nil:
			s.strikes++
		case res.ErrorKind != reports.KindInterrupted:
			s.strikes = 0
		}
		if s.strikes >= cfg.MaxTimeouts {
			rec.Lost = &reports.Lost{
				Reason: fmt.Sprintf("%d consecutive ops unanswered (timeouts, or restarts that failed or never reached Hello)", s.strikes),
				After:  c.ID,
				Last:   out.unanswered,
			}
		}
		if res.ErrorKind == reports.KindInterrupted {
			rec.Interrupted = true
			goOn = false
		}
		if out.unimplemented {
			rec.Unimplemented = append(rec.Unimplemented, c.ID)
		}
	}
	if res.Outcome != reports.Pass {
		res.Reproduce = reproduce(cfg, c.ID)
	}
	res.Bound()
	rec.Cases = append(rec.Cases, res)
	if cfg.Progress != nil {
		cfg.Progress(res)
	}
	return goOn
}

// sessions are the SUT's sessions a run uses. Client, the first, serves
// every case that is not live, one after another in catalogue order, as a
// run of one case at a time serves them all. A live case running beside
// others gets a session opened for it alone, and closed after it: it sees a
// SUT in the state its reproduce command (--case ID) gives it, whichever
// cases ran before, so that a run's verdicts do not depend on which cases
// happened to share a session. When no session can be opened, every case
// takes turns on Client.
type sessions struct {
	first  chan sut.Client // holds Client while no case uses it
	open   func(context.Context) (sut.Client, error)
	notice func(string)

	mu      sync.Mutex
	refused bool // opening a session failed once: every case uses Client
	closing sync.WaitGroup
}

func newSessions(first sut.Client, open func(context.Context) (sut.Client, error), notice func(string)) *sessions {
	s := &sessions{first: make(chan sut.Client, 1), open: open, notice: notice}
	s.first <- first
	return s
}

// get returns a session for a case and the function that gives it back:
// a session of its own for a live case that may run beside others, else
// Client once no other case uses it.
func (s *sessions) get(ctx context.Context, own bool) (sut.Client, func(), error) {
	s.mu.Lock()
	own = own && s.open != nil && !s.refused
	s.mu.Unlock()
	if own {
		c, err := s.open(ctx)
		if err == nil {
			return c, func() { s.closeLater(c) }, nil
		}
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		s.mu.Lock()
		if !s.refused && s.notice != nil {
			s.notice(fmt.Sprintf("could not open another session with the SUT, so its cases go on one at a time: %s", reports.Clip(err.Error(), 1<<10)))
		}
		s.refused = true
		s.mu.Unlock()
	}
	select {
	case c := <-s.first:
		return c, func() { s.first <- c }, nil
	case <-ctx.Done():
		return nil, nil, ctx.Err()
	}
}

// closeLater closes a session a case opened, without keeping the case's
// turn waiting on it: closing a process waits for it to exit.
func (s *sessions) closeLater(c sut.Client) {
	s.closing.Add(1)
	go func() {
		defer s.closing.Done()
		c.Close()
	}()
}

// wait waits until every session the run opened is closed.
func (s *sessions) wait() { s.closing.Wait() }
