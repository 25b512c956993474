package streams

import (
	"fmt"

	"github.com/conform-suite/conform/cases"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/proto/conform/v1/meaning"
	"github.com/conform-suite/conform/ref/streams"
)

func handovers(pairs ...[2]uint64) *conformpb.LatencyInput {
	in := new(conformpb.LatencyInput)
	for _, p := range pairs {
		in.Handovers = append(in.Handovers, &conformpb.Handover{NowNs: p[0], MonotonicTimestampNs: p[1]})
	}
	return in
}

func showLatency(o *conformpb.LatencyOutput) string {
	if !o.Present {
		return "absent"
	}
	return fmt.Sprintf("p50 %d ns, p99 %d ns, max %d ns", o.P50Ns, o.P99Ns, o.MaxNs)
}

func describeHandovers(in *conformpb.LatencyInput) string {
	if len(in.Handovers) == 0 {
		return "nothing handed over"
	}
	h := in.Handovers[0]
	s := fmt.Sprintf("%d hand-overs, the first at consumer clock %d of a sample stamped %d", len(in.Handovers), h.NowNs, h.MonotonicTimestampNs)
	return s
}

// latencies is ranvier-streams §4.5: delivery latency, which an implementation
// MAY report; when it does, the subtraction and the absence are fixed.
func latencies(k *cases.Kit, _ *vectors) []cases.Case {
	return []cases.Case{
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "streams/4.5/absent-before-delivery",
				Title:        "Latency percentiles are absent, not zero, until something has been handed over",
				Spec:         "ranvier-streams §4.5",
				Requirements: []string{"ranvier-streams§4.5#5"},
				Run: func(t *cases.T) {
					in := handovers()
					out := latency(t, []*conformpb.LatencyInput{in})[0]
					t.CheckAnswer("latency of a subscriber that received nothing", describeHandovers(in), in,
						&conformpb.LatencyOutput{}, out, meaning.MUST, "present")
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "streams/4.5/age-is-consumer-clock-minus-publish-stamp",
				Title:        "Latency is the consumer's host clock at hand-over minus the sample's monotonic_timestamp_ns",
				Spec:         "ranvier-streams §4.5",
				Requirements: []string{"ranvier-streams§4.5#2", "ranvier-streams§4.5#4"},
				Run: func(t *cases.T) {
					// Every sample the same age, so that every percentile method
					// and window gives that age.
					var ins []*conformpb.LatencyInput
					var ages []uint64
					for _, n := range []int{1, 10, 300} {
						age := uint64(1000 + t.Rand().IntN(200_000_000))
						in := new(conformpb.LatencyInput)
						now := uint64(5_000_000_000)
						for range n {
							now += uint64(1 + t.Rand().IntN(1_000_000))
							in.Handovers = append(in.Handovers, &conformpb.Handover{NowNs: now, MonotonicTimestampNs: now - age})
						}
						ins = append(ins, in)
						ages = append(ages, age)
					}
					for i, out := range latency(t, ins) {
						want := &conformpb.LatencyOutput{Present: true, P50Ns: ages[i], P99Ns: ages[i], MaxNs: ages[i]}
						t.CheckAnswer(fmt.Sprintf("%d samples, each handed over %d ns after it was stamped", len(ins[i].Handovers), ages[i]),
							describeHandovers(ins[i]), ins[i], want, out, meaning.MUST)
					}
				},
			}
		}),
	}
}

// open is ranvier-streams §8 and §10: what the runtime does not enforce and
// what is not yet specified. These cases record what the SUT does and never
// fail.
func open(k *cases.Kit, _ *vectors) []cases.Case {
	return []cases.Case{
		k.Info(func() cases.Case {
			return cases.Case{
				ID:           "streams/8/latency-of-a-future-stamp",
				Title:        "The latency reported for a sample stamped after the consumer's clock (Rust saturates the age to zero)",
				Spec:         "ranvier-streams §8, §4.5",
				Requirements: []string{"ranvier-streams§8#4"},
				Run: func(t *cases.T) {
					in := handovers([2]uint64{1_000, 5_000})
					out := latency(t, []*conformpb.LatencyInput{in})[0]
					t.Note("a sample stamped 4000 ns after the consumer's clock: %s (Rust: p50 0 ns, p99 0 ns, max 0 ns)", showLatency(out))
				},
			}
		}),
		k.Info(func() cases.Case {
			return cases.Case{
				ID:           "streams/10/percentile-method-and-window",
				Title:        "The percentile method and window (Rust: nearest rank, index round((n - 1) × fraction), over the last 256 deliveries)",
				Spec:         "ranvier-streams §10, §4.5",
				Requirements: []string{"ranvier-streams§10#5", "ranvier-streams§4.5#3"},
				Run: func(t *cases.T) {
					var l streams.Latency
					in := new(conformpb.LatencyInput)
					for i := range 300 {
						now := uint64(1_000_000 + i*1000)
						age := uint64(1 + t.Rand().IntN(100_000))
						if i < 44 {
							age += 1_000_000 // only a window longer than 256 sees these
						}
						in.Handovers = append(in.Handovers, &conformpb.Handover{NowNs: now + age, MonotonicTimestampNs: now})
						l.Observe(now+age, now)
					}
					out := latency(t, []*conformpb.LatencyInput{in})[0]
					p, _ := l.Percentiles()
					rust := &conformpb.LatencyOutput{Present: true, P50Ns: p.P50, P99Ns: p.P99, MaxNs: p.Max}
					same := "the same as"
					if showLatency(out) != showLatency(rust) {
						same = "different from"
					}
					t.Note("300 deliveries: %s, %s Rust's method (%s)", showLatency(out), same, showLatency(rust))
				},
			}
		}),
	}
}
