package waittest

import (
	"flag"
	"runtime"
	"strconv"
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
