package waittest

import (
	"flag"
	"runtime"
	"strconv"
	"sync"
	"testing"
)

func TestParallel(t *testing.T) {
	for _, procs := range []int{1, 2, 3, 8} {
		prev := runtime.GOMAXPROCS(procs)
		got := Parallel()
		runtime.GOMAXPROCS(prev)
		if want := max(4, 2*procs); got != want {
			t.Errorf("GOMAXPROCS %d: Parallel() = %d, want %d", procs, got, want)
		}
	}
}

// TestWiden: the bound is widened unless the command line set it, which
// then stands.
func TestWiden(t *testing.T) {
	f := flag.Lookup("test.parallel")
	before := f.Value.String()
	t.Cleanup(func() { _ = f.Value.Set(before) })
	explicit := false
	flag.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "test.parallel" })
	Widen()
	want := strconv.Itoa(Parallel())
	if explicit {
		want = before
	}
	if got := f.Value.String(); got != want {
		t.Errorf("-test.parallel %s after Widen (given on the command line: %v), want %s", got, explicit, want)
	}
}

// TestGroupRunsAtOnce: every subtest of a Group is under way before any
// ends. Each waits at a barrier until all have reached it, so subtests
// that ran one after another, or n at a time, would never end; the test
// is then cut by go test's -timeout.
func TestGroupRunsAtOnce(t *testing.T) {
	const n = 8
	var arrived sync.WaitGroup
	arrived.Add(n)
	var g Group
	for i := range n {
		g.Run(t, strconv.Itoa(i), func(t *testing.T) {
			arrived.Done()
			arrived.Wait()
		})
	}
	g.Wait()
}
