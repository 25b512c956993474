package proc

import (
	"os"
	"runtime"
	"testing"
	"time"
)

// TestMostWaited: the excuse is the most one thread waited, new threads
// counted from 0.
func TestMostWaited(t *testing.T) {
	before := map[int]time.Duration{1: time.Second, 2: 5 * time.Second}
	after := map[int]time.Duration{1: 1300 * time.Millisecond, 2: 5100 * time.Millisecond, 3: 200 * time.Millisecond}
	if got := MostWaited(before, after); got != 300*time.Millisecond {
		t.Errorf("MostWaited = %v, want 300ms", got)
	}
	if got := MostWaited(before, nil); got != 0 {
		t.Errorf("MostWaited with nothing after = %v, want 0", got)
	}
}

// TestCPUWaitsOfThisProcess: on Linux a process's threads and their waits
// for a CPU are read.
func TestCPUWaitsOfThisProcess(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("CPU waits are read on Linux only")
	}
	w := CPUWaits(os.Getpid())
	if len(w) < 2 {
		t.Errorf("CPUWaits(self) = %v, want every thread of this Go process", w)
	}
}
