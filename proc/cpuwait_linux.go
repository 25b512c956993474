package proc

import (
	"bytes"
	"os"
	"strconv"
	"time"
)

// CPUWaits returns, for every thread of process pid and of its
// descendants, how long it has been runnable but waiting for a CPU since it
// started (the run_delay of /proc/PID/task/TID/schedstat), keyed by thread
// ID; nil when the system does not say. A machine busy with other work keeps
// a child waiting exactly so, and what judges the child's timing excuses it
// that much.
func CPUWaits(pid int) map[int]time.Duration {
	out := map[int]time.Duration{}
	seen := map[int]bool{}
	var walk func(pid int, depth int)
	walk = func(pid int, depth int) {
		if seen[pid] || depth > 8 {
			return
		}
		seen[pid] = true
		dir := "/proc/" + strconv.Itoa(pid) + "/task/"
		tasks, err := os.ReadDir(dir)
		if err != nil {
			return
		}
		for _, task := range tasks {
			tid, err := strconv.Atoi(task.Name())
			if err != nil {
				continue
			}
			if b, err := os.ReadFile(dir + task.Name() + "/schedstat"); err == nil {
				if f := bytes.Fields(b); len(f) >= 2 {
					if ns, err := strconv.ParseInt(string(f[1]), 10, 64); err == nil {
						out[tid] = time.Duration(ns)
					}
				}
			}
			if b, err := os.ReadFile(dir + task.Name() + "/children"); err == nil {
				for _, c := range bytes.Fields(b) {
					if child, err := strconv.Atoi(string(c)); err == nil {
						walk(child, depth+1)
					}
				}
			}
		}
	}
	walk(pid, 0)
	if len(out) == 0 {
		return nil
	}
	return out
}
