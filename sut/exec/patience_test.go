package exec

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/conform-suite/conform/proc"
)

// TestPatientStretchesForCPUWaitsOnly: an op's deadline moves by what the
// SUT waited for a CPU after the first look, never past MaxStretch times
// the op's time, and not at all for a SUT that waited for nothing. The
// waits are given, so the claims hold however busy the machine running the
// test is; only lower bounds on time are asserted, since a busy machine
// can only make a timer late.
func TestPatientStretchesForCPUWaitsOnly(t *testing.T) {
	t.Parallel() // only lower bounds on time are asserted
	const budget = 200 * time.Millisecond
	for _, tc := range []struct {
		name string
		// waited is the SUT's wait for a CPU, given the time since the op
		// began.
		waited func(since time.Duration) time.Duration
		// past is how long after the deadline the op ends at the soonest,
		// given the op's time as patient measured it.
		past      func(opTime time.Duration) time.Duration
		wantWait  bool // a wait is reported
		wantCause error
	}{
		{"no wait: ends at the deadline", func(time.Duration) time.Duration { return 0 },
			func(time.Duration) time.Duration { return 0 }, false, errOpTimeout},
		{"one stall of 300ms: moved by it", func(since time.Duration) time.Duration {
			if since > budget/2 {
				return 300 * time.Millisecond
			}
			return 0
		}, func(time.Duration) time.Duration { return 300 * time.Millisecond }, true, errOpTimeout},
		{"waiting for ever: bounded", func(since time.Duration) time.Duration { return 10 * since },
			func(opTime time.Duration) time.Duration { return MaxStretch * opTime }, true, errOpTimeout},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			parent, cancel := context.WithTimeout(context.Background(), budget)
			defer cancel()
			// The op began budget before its deadline; a clock read after
			// WithTimeout would be late by however long the machine took.
			deadline, _ := parent.Deadline()
			start := deadline.Add(-budget)
			ctx, s, release := patient(parent, func() map[int]time.Duration {
				return map[int]time.Duration{1: tc.waited(time.Since(start))}
			})
			defer release()
			if _, ok := ctx.Deadline(); ok {
				t.Fatal("the patient context carries a deadline a reader would apply as it stands")
			}
			select {
			case <-ctx.Done():
			case <-time.After(30 * time.Second): // far beyond any stretch of 200ms
				t.Fatal("the op never ended")
			}
			late := time.Since(deadline)
			if _, opTime := s.Waited(); late < tc.past(opTime) {
				t.Errorf("the op ended %v after its deadline, want no sooner than %v after", late, tc.past(opTime))
			}
			if cause := context.Cause(ctx); !errors.Is(cause, tc.wantCause) {
				t.Errorf("cause %v, want %v", cause, tc.wantCause)
			}
			if w, b := s.Waited(); (w > 0) != tc.wantWait || b <= 0 || b > budget {
				t.Errorf("Waited() = %v of %v, want a wait: %v", w, b, tc.wantWait)
			}
		})
	}
}

// TestPatientEndsAtOnce: an interrupt ends the op at once, whatever the
// waits; an op answered before the first look reads no waits at all.
func TestPatientEndsAtOnce(t *testing.T) {
	var looks atomic.Int32
	waits := func() map[int]time.Duration {
		looks.Add(1)
		return map[int]time.Duration{1: time.Hour}
	}
	parent, cancel := context.WithTimeout(context.Background(), time.Minute)
	ctx, _, release := patient(parent, waits)
	cancel()
	select {
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("an interrupt did not end the op")
	}
	if cause := context.Cause(ctx); !errors.Is(cause, context.Canceled) {
		t.Errorf("cause %v, want the interrupt's", cause)
	}
	release()

	parent, cancel = context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ctx, _, release = patient(parent, waits)
	release()
	if ctx.Err() == nil {
		t.Error("release left the op's context running")
	}
	if n := looks.Load(); n != 0 {
		t.Errorf("%d looks at the SUT's waits for ops that ended before the first look", n)
	}
}

// SlowHello is how long the "slow-hello" SUT of exec_test.go sleeps before
// its Hello.
const SlowHello = 1500 * time.Millisecond

// TestHelloIsPatient: the wait for a program's Hello is stretched by what
// the program waited for a CPU, as an op's is. The waits are given, so the
// claim holds however busy the machine is: a program said to have waited
// for a CPU all along is excused its late Hello, and one that waited for
// nothing times out on time and says so.
func TestHelloIsPatient(t *testing.T) {
	t.Parallel()
	// The Hello comes after SlowHello, later than helloTimeout and well
	// within 1+MaxStretch times it, which leaves a loaded machine seconds
	// to start the program.
	const helloTimeout = time.Second
	for _, tc := range []struct {
		name   string
		waited bool // the program's threads are said to wait for a CPU all along
	}{
		{"waited for a CPU", true},
		{"waited for nothing", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var base time.Time
			c := &Client{argv: []string{os.Args[0]}, opts: Options{Env: []string{"CONFORM_TEST_SUT=slow-hello"}}, helloTimeout: helloTimeout,
				cpuWaits: func(*proc.Process) map[int]time.Duration {
					if base.IsZero() || !tc.waited {
						base = time.Now()
						return map[int]time.Duration{1: 0}
					}
					return map[int]time.Duration{1: time.Since(base)}
				}}
			defer c.Close()
			began := time.Now()
			err := c.start(context.Background())
			took := time.Since(began)
			switch {
			case tc.waited && err != nil:
				t.Errorf("a program that waited for a CPU all along was not excused its late Hello: %v", err)
			case !tc.waited && err == nil:
				t.Errorf("a program that waited for nothing said Hello after %v and was not timed out at %v", took, helloTimeout)
			case !tc.waited && !strings.Contains(err.Error(), "did not say Hello within 1s"):
				t.Errorf("error %q, want it to say the Hello's time ran out", err)
			}
		})
	}
}

// TestExcusedSaysWhatWasAdded: a timeout's error names the op's own time
// and the CPU wait that moved its deadline, and adds nothing when the SUT
// was not seen waiting.
func TestExcusedSaysWhatWasAdded(t *testing.T) {
	if got := (&stretch{budget: time.Second}).excused(); got != "" {
		t.Errorf("no wait: %q, want nothing added", got)
	}
	got := (&stretch{budget: time.Second, waited: 1329 * time.Millisecond}).excused()
	if !strings.Contains(got, "1s of its own") || !strings.Contains(got, "1.329s the machine kept it waiting for a CPU") {
		t.Errorf("%q, want the op's time and the wait named", got)
	}
}
