package streams

import (
	"math"
	"slices"
)

// Percentiles are delivery latencies in nanoseconds (ranvier-streams §4.5).
type Percentiles struct {
	P50, P99, Max uint64
}

// Latency measures the age of samples when their subscriber takes them: the
// host clock read on the consumer's thread at hand-over, minus the sample's
// MonotonicNs, saturating at zero (ranvier-streams §4.5). It includes queue
// wait, on purpose. A figure taken on the publisher's thread or against the
// source timestamp is a different quantity and must not be reported as this.
//
// The figure has no meaning for a republished stream, whose timestamps are
// on another machine's clock (§4.5, §10); Latency computes it anyway, as
// Rust does, and a caller should not report it for one.
//
// The zero value is ready to use and allocates nothing. A Latency is not
// safe for concurrent use.
type Latency struct {
	ages    [LatencyWindow]uint64 // ring of the most recent ages
	n       int                   // how many of ages are filled
	next    int                   // where the next age goes
	scratch [LatencyWindow]uint64 // sorted copy, kept here so reading does not allocate
}

// Observe records one hand-over: nowNs is the consumer's host clock and
// monotonicNs the sample's publish timestamp.
func (l *Latency) Observe(nowNs, monotonicNs uint64) {
	var age uint64
	if nowNs > monotonicNs {
		age = nowNs - monotonicNs
	}
	l.ages[l.next] = age
	l.next = (l.next + 1) % LatencyWindow
	if l.n < LatencyWindow {
		l.n++
	}
}

// Percentiles returns p50, p99 and the maximum over the last LatencyWindow
// hand-overs, by nearest rank with index round((n-1) × fraction), as Rust
// computes them (§4.5; method and window are §10's open question, pinned
// here to Rust's). It reports false until something has been delivered: no
// latency is not a latency of zero.
func (l *Latency) Percentiles() (Percentiles, bool) {
	if l.n == 0 {
		return Percentiles{}, false
	}
	s := l.scratch[:l.n]
	copy(s, l.ages[:l.n])
	slices.Sort(s)
	return Percentiles{
		P50: s[nearestRank(l.n, LatencyP50)],
		P99: s[nearestRank(l.n, LatencyP99)],
		Max: s[l.n-1],
	}, true
}

// nearestRank is round((n-1) × fraction), rounding halves away from zero
// like Rust's f64::round.
func nearestRank(n int, fraction float64) int {
	return int(math.Round(float64(n-1) * fraction))
}
