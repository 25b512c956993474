package exec

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/conform-suite/conform/proc"
)

// MaxStretch bounds how far an op's deadline moves, in multiples of the
// op's time. An op's time is the SUT's own: on a machine busy with other
// work (CI's shared runners) a SUT that is runnable but waiting for a CPU
// cannot answer, through no fault of its own, and conform, which started
// it, can read how long it waited. So the op's deadline is stretched by
// what the SUT waited for a CPU while the op ran, up to MaxStretch times
// the op's time. A SUT hung idle waits for nothing and times out on time;
// one spinning in a loop on a busy machine times out at the latest after
// MaxStretch+1 times the op's time.
const MaxStretch = 3

// waitLook is the share of an op's time (1/waitLook) after which the SUT's
// waits are first read: an op answered before then, as nearly all are,
// costs no reading of /proc (a fuzz campaign makes thousands of ops a
// second), and a wait before then is not excused.
const waitLook = 10

// minStretch is the least a deadline is moved: a smaller excuse times out.
const minStretch = 10 * time.Millisecond

// errOpTimeout is the cause of a patient context that ran out.
var errOpTimeout = errors.New("the op's time ran out")

// A stretch says how far an op's deadline moved for the SUT's waits for a
// CPU.
type stretch struct {
	mu     sync.Mutex
	waited time.Duration // the SUT's wait for a CPU counted so far
	budget time.Duration // the op's own time
}

// Waited returns how long the SUT was seen waiting for a CPU, and the op's
// own time.
func (s *stretch) Waited() (waited, budget time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.waited, s.budget
}

// excused says, for a timeout's error, what the deadline was moved by:
// nothing when the SUT was not seen waiting for a CPU.
func (s *stretch) excused() string {
	waited, budget := s.Waited()
	if waited == 0 {
		return ""
	}
	return fmt.Sprintf(": %v of its own, and the %v the machine kept it waiting for a CPU (excused up to %d times that time)",
		budget.Round(time.Millisecond), waited.Round(time.Millisecond), MaxStretch)
}

func (s *stretch) set(w time.Duration) {
	s.mu.Lock()
	s.waited = w
	s.mu.Unlock()
}

// patient returns a context for one op that ends as parent does, except
// that parent's deadline is pushed back by what waits (the SUT's
// proc.CPUWaits) says the SUT waited for a CPU since the first look. Its
// context carries no deadline of its own: it is cancelled, with cause
// errOpTimeout, when the stretched deadline passes. release ends it.
func patient(parent context.Context, waits func() map[int]time.Duration) (_ context.Context, _ *stretch, release func()) {
	deadline, ok := parent.Deadline()
	if !ok {
		return parent, &stretch{}, func() {}
	}
	s := &stretch{budget: time.Until(deadline)}
	ctx, cancel := context.WithCancelCause(context.WithoutCancel(parent))
	// An interrupt ends the op at once; the deadline is this context's to
	// keep.
	stopParent := context.AfterFunc(parent, func() {
		if !errors.Is(parent.Err(), context.DeadlineExceeded) {
			cancel(context.Cause(parent))
		}
	})
	done := make(chan struct{})
	go func() {
		defer close(done)
		tm := time.NewTimer(s.budget / waitLook)
		defer tm.Stop()
		wait := func() bool {
			select {
			case <-ctx.Done():
				return false
			case <-tm.C:
				return true
			}
		}
		if !wait() {
			return
		}
		base := waits()
		end := deadline
		tm.Reset(time.Until(end))
		for wait() {
			w := proc.MostWaited(base, waits())
			s.set(w)
			next := deadline.Add(min(w, MaxStretch*s.budget))
			if next.Sub(end) < minStretch {
				cancel(errOpTimeout)
				return
			}
			end = next
			tm.Reset(time.Until(end))
		}
	}()
	return ctx, s, func() {
		stopParent()
		cancel(context.Canceled)
		<-done
	}
}
