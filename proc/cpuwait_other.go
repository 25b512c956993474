//go:build !linux

package proc

import "time"

// CPUWaits is unknown off Linux: no portable interface says how long a
// process waited for a CPU, and nothing is excused for it.
func CPUWaits(int) map[int]time.Duration { return nil }
