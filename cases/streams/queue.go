package streams

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/conform-suite/conform/cases"
	"github.com/conform-suite/conform/corpus"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/proto/conform/v1/meaning"
	"github.com/conform-suite/conform/ref/streams"
)

// qfields selects what a queue case judges.
type qfields uint8

const (
	qRead qfields = 1 << iota
	qDelivered
	qDropped
	qReadable
	qMissing
	qBreaks
)

// queueView is what a queue case expects of a subscription's report.
type queueView struct {
	Read                         []uint64
	Delivered, Dropped, Readable uint64
	Missing, Breaks              uint64
}

// paths are the JSON paths of a QueueOutput the fields f select. The
// depth in effect and the refusal are always judged: what the queue did is
// fixed only at the depth the input gave (the declaration of meaning
// compares it only where both answers report the same depth).
func (f qfields) paths() []string {
	ps := []string{"refused", "depth"}
	for _, c := range []struct {
		bit  qfields
		path string
	}{{qRead, "read"}, {qDelivered, "delivered"}, {qDropped, "dropped"}, {qReadable, "readable"},
		{qMissing, "gaps.missing"}, {qBreaks, "gaps.breaks"}} {
		if f&c.bit != 0 {
			ps = append(ps, c.path)
		}
	}
	return ps
}

// queueAnswer is the QueueOutput a conforming subscription gives to in
// when it does what v says: the samples read are the ones pushed, as
// pushed (push stamps each with its sequence, on connection 1, stream 1).
func queueAnswer(in *conformpb.QueueInput, v queueView) *conformpb.QueueOutput {
	policy := in.GetPolicy()
	if policy == conformpb.QueuePolicy_QUEUE_POLICY_DEFAULT {
		policy = conformpb.QueuePolicy_QUEUE_POLICY_DROP_OLDEST // §5.2: the default
	}
	out := &conformpb.QueueOutput{Depth: in.GetDepth(), Policy: policy, Delivered: v.Delivered, Dropped: v.Dropped,
		Readable: v.Readable, Gaps: &conformpb.GapCounters{Missing: v.Missing, Breaks: v.Breaks}}
	for _, seq := range v.Read {
		out.Read = append(out.Read, arrival(1, 1, seq, seq))
	}
	return out
}

// policyNames are the policies a vector's script names; a script that
// names none subscribes with QUEUE_POLICY_DEFAULT, the subscriber choosing
// nothing.
var policyNames = map[string]conformpb.QueuePolicy{
	"":            conformpb.QueuePolicy_QUEUE_POLICY_DEFAULT,
	"drop-oldest": conformpb.QueuePolicy_QUEUE_POLICY_DROP_OLDEST,
	"drop-newest": conformpb.QueuePolicy_QUEUE_POLICY_DROP_NEWEST,
}

// queueInput builds the subscription script of a vector.
func queueInput(v *corpus.StreamsVector) *conformpb.QueueInput {
	depth := v.Queue.Depth
	in := &conformpb.QueueInput{Name: v.Name, Depth: &depth, Policy: policyNames[v.Queue.Policy]}
	for _, st := range v.Queue.Steps {
		for _, seq := range st.Push {
			in.Steps = append(in.Steps, push(1, 1, seq))
		}
		if st.Pop > 0 {
			in.Steps = append(in.Steps, pop(st.Pop))
		}
	}
	return in
}

func push(conn uint64, ref uint32, seq uint64) *conformpb.QueueStep {
	return &conformpb.QueueStep{Step: &conformpb.QueueStep_Push{Push: arrival(conn, ref, seq, seq)}}
}

func pop(n uint32) *conformpb.QueueStep {
	return &conformpb.QueueStep{Step: &conformpb.QueueStep_Pop{Pop: n}}
}

// describeQueue prints a script: depth, policy, and the steps with runs of
// pushes collapsed.
func describeQueue(in *conformpb.QueueInput) string {
	depth := "default depth"
	if in.Depth != nil {
		depth = fmt.Sprintf("depth %d", in.GetDepth())
	}
	var parts []string
	var run []string
	flush := func() {
		if len(run) > 0 {
			parts = append(parts, "push "+strings.Join(run, ","))
			run = nil
		}
	}
	for _, st := range in.Steps {
		if p := st.GetPush(); p != nil {
			run = append(run, fmt.Sprint(p.Sequence))
			continue
		}
		flush()
		parts = append(parts, fmt.Sprintf("pop %d", st.GetPop()))
	}
	flush()
	return fmt.Sprintf("%s, %s; %s", depth, policyLabel(in.Policy), strings.Join(parts, "; "))
}

func policyLabel(p conformpb.QueuePolicy) string {
	return strings.ReplaceAll(strings.ToLower(strings.TrimPrefix(p.String(), "QUEUE_POLICY_")), "_", "-")
}

// queueDiffs returns where a subscription's answer to in differs from
// what want says in the fields f selects.
func queueDiffs(t *cases.T, in *conformpb.QueueInput, out *conformpb.QueueOutput, want queueView, f qfields) meaning.Differences {
	return t.Judge(in, queueAnswer(in, want), out, meaning.MUST, f.paths()...)
}

// checkQueue records a failure when a subscription's report differs from
// want in the fields f selects.
func checkQueue(t *cases.T, what string, in *conformpb.QueueInput, out *conformpb.QueueOutput, want queueView, f qfields) bool {
	ds := queueDiffs(t, in, out, want, f)
	if len(ds) == 0 {
		return true
	}
	if out.Refused {
		what += ": the subscription was refused"
	}
	t.FailAnswer(what, describeQueue(in), queueAnswer(in, want), out, ds)
	return false
}

// queueVectors runs every vector's script on a fresh subscription of the
// SUT's and judges the fields f against the vector's expectation.
func queueVectors(t *cases.T, what string, f qfields, vs ...*corpus.StreamsVector) {
	var ins []*conformpb.QueueInput
	for _, v := range vs {
		ins = append(ins, queueInput(v))
	}
	for i, out := range driveQueue(t, ins) {
		e := vs[i].ExpectQueue
		want := queueView{Read: e.Read, Delivered: e.Delivered, Dropped: e.Dropped, Readable: e.Readable, Missing: e.Missing, Breaks: e.Breaks}
		checkQueue(t, what+": "+vs[i].Title, ins[i], out, want, f)
	}
}

var depthTable = []string{"depth4-drop-oldest", "depth4-drop-newest", "depth4-upstream-loss"}

// queues is ranvier-streams §3.1, §3.5, §3.8's depth-4 table and §5: the
// subscription queue and what it counts.
func queues(k *cases.Kit, vecs *vectors) []cases.Case {
	return []cases.Case{
		k.Must(func() cases.Case {
			vs := vecs.List("drop-oldest-after-a-read", "drop-newest-after-a-read")
			return cases.Case{
				ID:           "streams/3.1/tracked-before-the-policy",
				Title:        "Sequence numbers are read on arrival, before the loss policy runs: a subscriber that falls behind counts none of its own drops as missing",
				Spec:         "ranvier-streams §3.1, §3.5",
				Requirements: []string{"ranvier-streams§3.1#1", "ranvier-streams§3.5#3"},
				Run: func(t *cases.T) {
					queueVectors(t, "a subscriber that fell behind", qRead|qDropped|qMissing|qBreaks, vs...)
				},
			}
		}),
		k.Must(func() cases.Case {
			vs := vecs.List("depth4-drop-oldest", "depth4-drop-newest", "drop-oldest-after-a-read", "drop-newest-after-a-read")
			return cases.Case{
				ID:           "streams/3.5/queue-drops-are-not-missing",
				Title:        "A sample discarded by the subscriber's own queue raises dropped and never missing",
				Spec:         "ranvier-streams §3.5",
				Requirements: []string{"ranvier-streams§3.1#1", "ranvier-streams§3.5#1", "ranvier-streams§3.5#3"},
				Run: func(t *cases.T) {
					queueVectors(t, "a full queue", qDropped|qMissing|qBreaks, vs...)
				},
			}
		}),
		k.Must(func() cases.Case {
			v := vecs.Get("depth4-upstream-loss")
			return cases.Case{
				ID:           "streams/3.5/upstream-loss-is-missing",
				Title:        "A loss before the queue is missing, in a break, with nothing dropped",
				Spec:         "ranvier-streams §3.5, §3.8",
				Requirements: []string{"ranvier-streams§3.5#2", "ranvier-streams§3.5#5", "ranvier-streams§3.8#13"},
				Run: func(t *cases.T) {
					queueVectors(t, "six samples lost upstream", qDropped|qMissing|qBreaks, v)
				},
			}
		}),
		k.Must(func() cases.Case {
			vs := vecs.List(depthTable...)
			return cases.Case{
				ID:    "streams/3.8/depth-4-table",
				Title: "Every row of the depth-4 table: what the subscriber reads, delivered, dropped, missing and breaks",
				Spec:  "ranvier-streams §3.8",
				Requirements: []string{"ranvier-streams§3.5#1", "ranvier-streams§3.5#2", "ranvier-streams§3.5#5",
					"ranvier-streams§3.8#11", "ranvier-streams§3.8#12", "ranvier-streams§3.8#13", "ranvier-streams§5.1#4",
					"ranvier-streams§5.4#1"},
				Run: func(t *cases.T) {
					queueVectors(t, "a row of the depth-4 table", qRead|qDelivered|qDropped|qMissing|qBreaks, vs...)
				},
			}
		}),
		k.Must(func() cases.Case {
			vs := vecs.List("depth4-drop-oldest", "drop-oldest-after-a-read", "depth4-drop-newest")
			return cases.Case{
				ID:           "streams/3.8/delivered-counts-placed-samples",
				Title:        "delivered counts samples placed in the queue, not samples the subscriber read: under drop-oldest an evicted sample stays delivered",
				Spec:         "ranvier-streams §3.8",
				Requirements: []string{"ranvier-streams§3.8#14", "ranvier-streams§3.8#15"},
				Run: func(t *cases.T) {
					queueVectors(t, "delivered after evictions", qDelivered|qDropped, vs...)
					// Nothing read at all: delivered is still every placed sample.
					d := uint32(3)
					in := &conformpb.QueueInput{Name: "trial.events", Depth: &d, Policy: conformpb.QueuePolicy_QUEUE_POLICY_DROP_OLDEST}
					for seq := uint64(1); seq <= 8; seq++ {
						in.Steps = append(in.Steps, push(1, 1, seq))
					}
					out := driveQueue(t, []*conformpb.QueueInput{in})[0]
					checkQueue(t, "a queue nobody read", in, out, queueView{Delivered: 8, Dropped: 5, Readable: 3}, qDelivered|qDropped|qReadable)
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "streams/5.2/unimplemented-policy-refused",
				Title:        "Subscribing with block or halt, which nothing implements, is refused rather than given another policy",
				Spec:         "ranvier-streams §5.2, §10",
				Requirements: []string{"ranvier-streams§5.2#4"},
				Run: func(t *cases.T) {
					d := uint32(4)
					var ins []*conformpb.QueueInput
					for _, p := range []conformpb.QueuePolicy{conformpb.QueuePolicy_QUEUE_POLICY_BLOCK, conformpb.QueuePolicy_QUEUE_POLICY_HALT} {
						ins = append(ins, &conformpb.QueueInput{Name: "trial.events", Depth: &d, Policy: p,
							Steps: []*conformpb.QueueStep{push(1, 1, 1), push(1, 1, 2), push(1, 1, 3), push(1, 1, 4), push(1, 1, 5), pop(5)}})
					}
					for i, out := range driveQueue(t, ins) {
						t.CheckAnswer("a policy nobody implements was accepted", describeQueue(ins[i]), ins[i],
							&conformpb.QueueOutput{Refused: true}, out, meaning.MUST, "refused")
					}
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "streams/5.2/zero-depth-refused",
				Title:        "A queue depth of 0 is refused: nothing could ever be delivered",
				Spec:         "ranvier-streams §5.2",
				Requirements: []string{"ranvier-streams§5.2#5"},
				Run: func(t *cases.T) {
					d := uint32(0)
					var ins []*conformpb.QueueInput
					for _, p := range []conformpb.QueuePolicy{conformpb.QueuePolicy_QUEUE_POLICY_DROP_OLDEST, conformpb.QueuePolicy_QUEUE_POLICY_DROP_NEWEST} {
						ins = append(ins, &conformpb.QueueInput{Name: "trial.events", Depth: &d, Policy: p, Steps: []*conformpb.QueueStep{push(1, 1, 1), pop(1)}})
					}
					for i, out := range driveQueue(t, ins) {
						t.CheckAnswer("a depth of 0 was accepted", describeQueue(ins[i]), ins[i],
							&conformpb.QueueOutput{Refused: true}, out, meaning.MUST, "refused")
					}
				},
			}
		}),
		k.Must(func() cases.Case {
			vs := vecs.List("depth4-drop-oldest", "drop-oldest-after-a-read")
			return cases.Case{
				ID:           "streams/5.2/drop-oldest-overwrites-the-oldest",
				Title:        "Under drop-oldest a full queue overwrites its oldest unread sample",
				Spec:         "ranvier-streams §5.2, §3.8",
				Requirements: []string{"ranvier-streams§3.8#11", "ranvier-streams§5.2#1"},
				Run: func(t *cases.T) {
					queueVectors(t, "what a drop-oldest subscriber reads", qRead, vs...)
				},
			}
		}),
		k.Must(func() cases.Case {
			v := vecs.Get("depth4-default-policy")
			return cases.Case{
				ID:           "streams/5.2/default-policy-is-drop-oldest",
				Title:        "A subscription that names no policy gets drop-oldest: at depth 4, of ten samples, 7, 8, 9 and 10 are read and 6 dropped",
				Spec:         "ranvier-streams §5.2, §3.5",
				Requirements: []string{"ranvier-streams§5.2#2"},
				Run: func(t *cases.T) {
					queueVectors(t, "what a subscriber that chose no policy reads", qRead|qDropped, v)
				},
			}
		}),
		k.Must(func() cases.Case {
			vs := vecs.List("depth4-drop-newest", "drop-newest-after-a-read")
			return cases.Case{
				ID:           "streams/5.2/drop-newest-discards-the-arrival",
				Title:        "Under drop-newest a full queue discards the arriving sample and keeps what is queued",
				Spec:         "ranvier-streams §5.2, §3.5",
				Requirements: []string{"ranvier-streams§3.8#12", "ranvier-streams§5.2#3"},
				Run: func(t *cases.T) {
					queueVectors(t, "what a drop-newest subscriber reads", qRead, vs...)
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "streams/5.4/every-discard-counted-once",
				Title:        "Every discarded sample increments dropped exactly once, whatever the policy, depth and reading pattern",
				Spec:         "ranvier-streams §5.4, §5.2",
				Requirements: []string{"ranvier-streams§5.1#4", "ranvier-streams§5.4#1"},
				Run: func(t *cases.T) {
					var ins []*conformpb.QueueInput
					for range 60 {
						ins = append(ins, randomScript(t.Rand()))
					}
					const limit = 3
					failed := 0
					for i, out := range driveQueue(t, ins) {
						want := refQueue(ins[i])
						f := qRead | qDelivered | qDropped | qReadable
						if len(queueDiffs(t, ins[i], out, want, f)) == 0 {
							continue
						}
						if failed++; failed <= limit {
							checkQueue(t, "a random script (expected: the reference ref/streams)", ins[i], out, want, f)
						}
					}
					if failed > limit {
						t.Failf("%d more of %d random scripts disagreed with the reference", failed-limit, len(ins))
					}
				},
			}
		}),
		k.Should(func() cases.Case {
			return cases.Case{
				ID:           "streams/5.4/peak-depth-reported",
				Title:        "A subscription reports the deepest its queue has been, which outlives the burst that caused it",
				Spec:         "ranvier-streams §5.4",
				Requirements: []string{"ranvier-streams§5.4#2"},
				Run: func(t *cases.T) {
					d := uint32(8)
					in := &conformpb.QueueInput{Name: "trial.events", Depth: &d, Policy: conformpb.QueuePolicy_QUEUE_POLICY_DROP_OLDEST}
					for seq := uint64(1); seq <= 5; seq++ {
						in.Steps = append(in.Steps, push(1, 1, seq))
					}
					in.Steps = append(in.Steps, pop(5), push(1, 1, 6), pop(1))
					out := driveQueue(t, []*conformpb.QueueInput{in})[0]
					want := queueAnswer(in, queueView{Read: []uint64{1, 2, 3, 4, 5, 6}, Delivered: 6})
					want.Peak = 5
					// The peak is judged where it is reported; a subscription
					// that reports none (0) breaks this SHOULD itself.
					ds := append(t.Judge(in, want, out, meaning.MUST, "refused", "depth"), t.Judge(in, want, out, meaning.SHOULD, "peak")...)
					if out.GetPeak() == 0 && !out.GetRefused() {
						ds = append(ds, meaning.Difference{Path: "peak", Field: "conform.v1.QueueOutput.peak", Level: meaning.SHOULD, Want: "5", Got: "0 (not reported)", Offset: -1})
					}
					if len(ds) > 0 {
						t.FailAnswer("the peak after a burst of five, drained", describeQueue(in), want, out, ds)
					}
				},
			}
		}),
		k.May(func() cases.Case {
			return cases.Case{
				ID:           "streams/5.3/default-options",
				Title:        "The default queue depth (Rust: 1024, recorded as arbitrary; an implementation may choose another)",
				Spec:         "ranvier-streams §5.3",
				Requirements: []string{"ranvier-streams§5.3#1"},
				Run: func(t *cases.T) {
					// The default policy is a MUST, judged by
					// streams/5.2/default-policy-is-drop-oldest; only the depth
					// is free.
					in := &conformpb.QueueInput{Name: "trial.events"}
					for seq := uint64(1); seq <= 1100; seq++ {
						in.Steps = append(in.Steps, push(1, 1, seq))
					}
					in.Steps = append(in.Steps, pop(1))
					out := driveQueue(t, []*conformpb.QueueInput{in})[0]
					switch {
					case out.Refused:
						t.Note("subscribing with the defaults was refused: %s", out.Refusal)
					case out.Depth == streams.DefaultDepth:
						t.Note("default depth %d, Rust's; after 1100 samples: delivered %d, dropped %d", out.Depth, out.Delivered, out.Dropped)
					default:
						t.Note("default depth %d, not Rust's %d, which §5.3 allows; after 1100 samples: delivered %d, dropped %d",
							out.Depth, streams.DefaultDepth, out.Delivered, out.Dropped)
					}
				},
			}
		}),
	}
}

// randomScript generates a subscription script: a small depth, either
// policy, and bursts of arrivals (with the odd upstream loss) between reads.
func randomScript(r *rand.Rand) *conformpb.QueueInput {
	d := uint32(1 + r.IntN(6))
	p := conformpb.QueuePolicy_QUEUE_POLICY_DROP_OLDEST
	if r.IntN(2) == 0 {
		p = conformpb.QueuePolicy_QUEUE_POLICY_DROP_NEWEST
	}
	in := &conformpb.QueueInput{Name: "trial.events", Depth: &d, Policy: p}
	seq := uint64(1)
	for range 2 + r.IntN(10) {
		for range r.IntN(12) {
			if r.IntN(10) == 0 {
				seq += uint64(1 + r.IntN(3))
			}
			in.Steps = append(in.Steps, push(1, 1, seq))
			seq++
		}
		in.Steps = append(in.Steps, pop(uint32(r.IntN(8))))
	}
	return in
}

// refQueue runs a script on the reference subscription.
func refQueue(in *conformpb.QueueInput) queueView {
	opts := streams.Options{Depth: int(in.GetDepth()), Policy: streams.DropOldest}
	if in.Policy == conformpb.QueuePolicy_QUEUE_POLICY_DROP_NEWEST {
		opts.Policy = streams.DropNewest
	}
	sub, err := streams.NewSubscription(opts)
	if err != nil {
		panic(err) // randomScript makes only valid options
	}
	var v queueView
	for _, st := range in.Steps {
		if a := st.GetPush(); a != nil {
			sub.Push(streams.ConnID(a.Connection), streams.Sample{StreamRef: a.StreamRef, Sequence: a.Sequence, MonotonicNs: a.MonotonicTimestampNs})
			continue
		}
		for range st.GetPop() {
			smp, ok := sub.Pop()
			if !ok {
				break
			}
			v.Read = append(v.Read, smp.Sequence)
		}
	}
	q, g := sub.Queue(), sub.Gaps()
	v.Delivered, v.Dropped, v.Readable, v.Missing, v.Breaks = q.Delivered, q.Dropped, uint64(q.Readable), g.Missing, g.Breaks
	return v
}
