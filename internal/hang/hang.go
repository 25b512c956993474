// Package hang gives the project's tests their hang guards: how long a test
// waits for something bound to happen — a process to end, a frame to
// arrive, a coordinator to start — before it calls that a hang.
//
// A hang guard is not a bound of the behaviour tested. On a machine loaded
// by other work (CI's shared 2-core machines, two test runs side by side) a
// wait of two seconds idle can take minutes, and a fixed guard turns that
// into a failure. So a guard lasts until shortly before the test binary's
// own deadline (go test -timeout): a real hang still ends with the test's
// own message and output rather than go test's stack dump, and a slow
// machine never fails a test. A test that judges how long something takes
// says so with a bound of its own, never with a hang guard.
package hang

import (
	"context"
	"testing"
	"time"
)

// Margin is how long before the test binary's deadline a guard ends: time
// for the test to kill what it started and print what it saw.
const Margin = 30 * time.Second

// Guard returns how long tb waits before calling a wait a hang: until
// Margin before the test binary's deadline, and never less than idle, about
// what the wait takes on an idle machine many times over. Without a deadline
// (-timeout 0, or a benchmark) it is idle.
func Guard(tb testing.TB, idle time.Duration) time.Duration {
	t, ok := tb.(interface{ Deadline() (time.Time, bool) })
	if !ok {
		return idle
	}
	dl, ok := t.Deadline()
	if !ok {
		return idle
	}
	return max(idle, time.Until(dl)-Margin)
}

// Context returns a context that ends when Guard(tb, idle) has passed or
// tb ends, whichever comes first.
func Context(tb testing.TB, idle time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), Guard(tb, idle))
	tb.Cleanup(cancel)
	return ctx
}
