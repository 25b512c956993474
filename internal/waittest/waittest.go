// Package waittest lets a test package whose parallel tests mostly wait —
// on child processes, brokers, sockets and real time — run more of them at
// once than go test's default.
//
// go test runs at most -test.parallel tests of a package at once, and that
// defaults to GOMAXPROCS: two on the shared CI machines this project's
// tests must pass on. A test that spends ten seconds waiting for a mutant
// to stay silent then holds half the package's room while the machine
// idles. Widening the bound changes how much waiting overlaps, not what
// any test checks.
package waittest

import (
	"flag"
	"runtime"
	"strconv"
	"sync"
	"testing"
)

// Parallel returns how many parallel tests a waiting package runs at once
// unless told otherwise: twice the CPUs Go uses, and at least four.
func Parallel() int { return max(4, 2*runtime.GOMAXPROCS(0)) }

// Widen sets -test.parallel to Parallel, unless the command line set it.
// Call it from TestMain; it parses the command line if that has not been
// done.
func Widen() {
	if !flag.Parsed() {
		flag.Parse()
	}
	explicit := false
	flag.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "test.parallel" })
	if !explicit {
		_ = flag.Set("test.parallel", strconv.Itoa(Parallel()))
	}
}

// A Group runs subtests that mostly wait all at once, in the place their
// parent holds among the package's parallel tests. As parallel subtests
// each would wait for a place of its own, queued behind every parallel
// test that asked before it, computing tests included, and a test that
// spends half a minute waiting on a silent socket would begin only once
// those had run.
//
// The zero Group is ready to use.
type Group struct{ wg sync.WaitGroup }

// Run starts f as the subtest name of t and returns at once.
func (g *Group) Run(t *testing.T, name string, f func(*testing.T)) {
	g.wg.Go(func() { t.Run(name, f) })
}

// Wait returns when every subtest Run started has ended. The parent must
// call it (or defer it) before it returns: testing refuses a subtest
// started after its parent ended.
func (g *Group) Wait() { g.wg.Wait() }
