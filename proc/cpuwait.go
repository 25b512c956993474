package proc

import "time"

// CPUWaits returns what the package-level CPUWaits says of p and its
// descendants.
func (p *Process) CPUWaits() map[int]time.Duration { return CPUWaits(p.pid) }

// MostWaited returns the most any one thread waited for a CPU between two
// CPUWaits snapshots; a thread that appeared meanwhile counts from 0. One
// thread is what fires a timer or carries an answer, and the most any one
// waited is the most the machine may have held it up.
func MostWaited(before, after map[int]time.Duration) time.Duration {
	var most time.Duration
	for tid, d := range after {
		most = max(most, d-before[tid])
	}
	return most
}
