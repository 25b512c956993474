//go:build !linux

package live

import "time"

// cpuWaits is unknown off Linux: no portable interface says how long a
// process waited for a CPU. The cases then excuse only conform's own
// lateness.
func cpuWaits(int) map[int]time.Duration { return nil }
