package streams_test

import (
	"testing"

	"github.com/conform-suite/conform/ref/streams"
)

// TestLatencyAbsentBeforeDelivery: §4.5. No delivery means no latency, which
// is not a latency of zero.
func TestLatencyAbsentBeforeDelivery(t *testing.T) {
	var l streams.Latency
	if p, ok := l.Percentiles(); ok {
		t.Errorf("Percentiles before any delivery = %+v, true; want absent", p)
	}
	l.Observe(100, 100)
	if p, ok := l.Percentiles(); !ok || p != (streams.Percentiles{}) {
		t.Errorf("after one zero-age delivery = %+v, %v; want zeros, present", p, ok)
	}
}

// TestLatencyNearestRank: §4.5's method, index = round((n-1) × fraction),
// over the last LatencyWindow deliveries, with the age saturating at zero.
func TestLatencyNearestRank(t *testing.T) {
	tests := []struct {
		name string
		ages []uint64 // delivered in this order, as now - 0
		want streams.Percentiles
	}{
		{"one", []uint64{7}, streams.Percentiles{P50: 7, P99: 7, Max: 7}},
		{"two: round(0.5) is 1, round(0.99) is 1", []uint64{10, 20}, streams.Percentiles{P50: 20, P99: 20, Max: 20}},
		{"three", []uint64{30, 10, 20}, streams.Percentiles{P50: 20, P99: 30, Max: 30}},
		{"1..100: indices 50 and 98", seq(1, 100), streams.Percentiles{P50: 51, P99: 99, Max: 100}},
		{"1..51: round(25) and round(49.5)=50", seq(1, 51), streams.Percentiles{P50: 26, P99: 51, Max: 51}},
		{"window keeps the last 256 of 1..300", seq(1, 300), streams.Percentiles{P50: 173, P99: 297, Max: 300}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var l streams.Latency
			for _, a := range tt.ages {
				l.Observe(a+1000, 1000)
			}
			p, ok := l.Percentiles()
			if !ok || p != tt.want {
				t.Errorf("Percentiles() = %+v, %v; want %+v", p, ok, tt.want)
			}
		})
	}
}

// TestLatencySaturates: a publish stamp later than the consumer's clock
// gives age 0, not a wrapped huge number (§4.5).
func TestLatencySaturates(t *testing.T) {
	var l streams.Latency
	l.Observe(5, 50)
	if p, _ := l.Percentiles(); p.Max != 0 {
		t.Errorf("max = %d, want 0", p.Max)
	}
}

func seq(from, to uint64) []uint64 {
	var out []uint64
	for i := from; i <= to; i++ {
		out = append(out, i)
	}
	return out
}
