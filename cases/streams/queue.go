package streams

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/conform-suite/conform/cases"
	"github.com/conform-suite/conform/corpus"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/ref/streams"
	"github.com/conform-suite/conform/reports"
	"github.com/google/go-cmp/cmp"
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

// queueView is a subscription's report rendered for comparison; the fields
// a case does not judge are left zero on both sides.
type queueView struct {
	Read                         []uint64
	Delivered, Dropped, Readable uint64
	Missing, Breaks              uint64
}

func (v queueView) only(f qfields) queueView {
	keep := func(bit qfields, x uint64) uint64 {
		if f&bit != 0 {
			return x
		}
		return 0
	}
	out := queueView{Delivered: keep(qDelivered, v.Delivered), Dropped: keep(qDropped, v.Dropped),
		Readable: keep(qReadable, v.Readable), Missing: keep(qMissing, v.Missing), Breaks: keep(qBreaks, v.Breaks)}
	if f&qRead != 0 {
		out.Read = v.Read
	}
	return out
}

func viewQueueOut(o *conformpb.QueueOutput) queueView {
	v := queueView{Delivered: o.Delivered, Dropped: o.Dropped, Readable: o.Readable,
		Missing: o.GetGaps().GetMissing(), Breaks: o.GetGaps().GetBreaks()}
	for _, a := range o.Read {
		v.Read = append(v.Read, a.Sequence)
	}
	return v
}

var policyNames = map[string]conformpb.QueuePolicy{
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

// checkQueue records a failure when a subscription's report differs from
// want in the fields f selects.
func checkQueue(t *cases.T, what string, in *conformpb.QueueInput, out *conformpb.QueueOutput, want queueView, f qfields) bool {
	if out.Refused {
		t.Fail(reports.Evidence{Message: what + ": the subscription was refused", Input: describeQueue(in),
			Expected: "a subscription", Got: "refused: " + out.Refusal})
		return false
	}
	w, g := want.only(f), viewQueueOut(out).only(f)
	if cmp.Equal(w, g) {
		return true
	}
	t.Fail(reports.Evidence{Message: what, Input: describeQueue(in), Expected: fmt.Sprintf("%+v", w), Got: fmt.Sprintf("%+v", g), Diff: cmp.Diff(w, g)})
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
func (s *suite) queues() []cases.Case {
	return []cases.Case{
		must(cases.Case{
			ID:      "streams/3.1/tracked-before-the-policy",
			Title:   "Sequence numbers are read on arrival, before the loss policy runs: a subscriber that falls behind counts none of its own drops as missing",
			Spec:    "ranvier-streams §3.1, §3.5",
			Vectors: ids("drop-oldest-after-a-read", "drop-newest-after-a-read"),
			Run: func(t *cases.T) {
				queueVectors(t, "a subscriber that fell behind", qRead|qDropped|qMissing|qBreaks, s.vecs("drop-oldest-after-a-read", "drop-newest-after-a-read")...)
			},
		}),
		must(cases.Case{
			ID:      "streams/3.5/queue-drops-are-not-missing",
			Title:   "A sample discarded by the subscriber's own queue raises dropped and never missing",
			Spec:    "ranvier-streams §3.5",
			Vectors: ids("depth4-drop-oldest", "depth4-drop-newest", "drop-oldest-after-a-read", "drop-newest-after-a-read"),
			Run: func(t *cases.T) {
				queueVectors(t, "a full queue", qDropped|qMissing|qBreaks, s.vecs("depth4-drop-oldest", "depth4-drop-newest", "drop-oldest-after-a-read", "drop-newest-after-a-read")...)
			},
		}),
		must(cases.Case{
			ID:      "streams/3.5/upstream-loss-is-missing",
			Title:   "A loss before the queue is missing, in a break, with nothing dropped",
			Spec:    "ranvier-streams §3.5, §3.8",
			Vectors: ids("depth4-upstream-loss"),
			Run: func(t *cases.T) {
				queueVectors(t, "six samples lost upstream", qDropped|qMissing|qBreaks, s.vec("depth4-upstream-loss"))
			},
		}),
		must(cases.Case{
			ID:      "streams/3.8/depth-4-table",
			Title:   "Every row of the depth-4 table: what the subscriber reads, delivered, dropped, missing and breaks",
			Spec:    "ranvier-streams §3.8",
			Vectors: ids(depthTable...),
			Run: func(t *cases.T) {
				queueVectors(t, "a row of the depth-4 table", qRead|qDelivered|qDropped|qMissing|qBreaks, s.vecs(depthTable...)...)
			},
		}),
		must(cases.Case{
			ID:      "streams/3.8/delivered-counts-placed-samples",
			Title:   "delivered counts samples placed in the queue, not samples the subscriber read: under drop-oldest an evicted sample stays delivered",
			Spec:    "ranvier-streams §3.8",
			Vectors: ids("depth4-drop-oldest", "drop-oldest-after-a-read", "depth4-drop-newest"),
			Run: func(t *cases.T) {
				queueVectors(t, "delivered after evictions", qDelivered|qDropped, s.vecs("depth4-drop-oldest", "drop-oldest-after-a-read", "depth4-drop-newest")...)
				// Nothing read at all: delivered is still every placed sample.
				d := uint32(3)
				in := &conformpb.QueueInput{Name: "trial.events", Depth: &d, Policy: conformpb.QueuePolicy_QUEUE_POLICY_DROP_OLDEST}
				for seq := uint64(1); seq <= 8; seq++ {
					in.Steps = append(in.Steps, push(1, 1, seq))
				}
				out := driveQueue(t, []*conformpb.QueueInput{in})[0]
				checkQueue(t, "a queue nobody read", in, out, queueView{Delivered: 8, Dropped: 5, Readable: 3}, qDelivered|qDropped|qReadable)
			},
		}),
		must(cases.Case{
			ID:    "streams/5.2/unimplemented-policy-refused",
			Title: "Subscribing with block or halt, which nothing implements, is refused rather than given another policy",
			Spec:  "ranvier-streams §5.2, §10",
			Run: func(t *cases.T) {
				d := uint32(4)
				var ins []*conformpb.QueueInput
				for _, p := range []conformpb.QueuePolicy{conformpb.QueuePolicy_QUEUE_POLICY_BLOCK, conformpb.QueuePolicy_QUEUE_POLICY_HALT} {
					ins = append(ins, &conformpb.QueueInput{Name: "trial.events", Depth: &d, Policy: p,
						Steps: []*conformpb.QueueStep{push(1, 1, 1), push(1, 1, 2), push(1, 1, 3), push(1, 1, 4), push(1, 1, 5), pop(5)}})
				}
				for i, out := range driveQueue(t, ins) {
					if !out.Refused {
						t.Fail(reports.Evidence{Message: "a policy nobody implements was accepted", Input: describeQueue(ins[i]),
							Expected: "refused", Got: fmt.Sprintf("accepted as %s: %+v", policyLabel(out.Policy), viewQueueOut(out))})
					}
				}
			},
		}),
		must(cases.Case{
			ID:    "streams/5.2/zero-depth-refused",
			Title: "A queue depth of 0 is refused: nothing could ever be delivered",
			Spec:  "ranvier-streams §5.2",
			Run: func(t *cases.T) {
				d := uint32(0)
				var ins []*conformpb.QueueInput
				for _, p := range []conformpb.QueuePolicy{conformpb.QueuePolicy_QUEUE_POLICY_DROP_OLDEST, conformpb.QueuePolicy_QUEUE_POLICY_DROP_NEWEST} {
					ins = append(ins, &conformpb.QueueInput{Name: "trial.events", Depth: &d, Policy: p, Steps: []*conformpb.QueueStep{push(1, 1, 1), pop(1)}})
				}
				for i, out := range driveQueue(t, ins) {
					if !out.Refused {
						t.Fail(reports.Evidence{Message: "a depth of 0 was accepted", Input: describeQueue(ins[i]),
							Expected: "refused", Got: fmt.Sprintf("accepted with depth %d: %+v", out.Depth, viewQueueOut(out))})
					}
				}
			},
		}),
		must(cases.Case{
			ID:      "streams/5.2/drop-oldest-overwrites-the-oldest",
			Title:   "Under drop-oldest a full queue overwrites its oldest unread sample",
			Spec:    "ranvier-streams §5.2, §3.8",
			Vectors: ids("depth4-drop-oldest", "drop-oldest-after-a-read"),
			Run: func(t *cases.T) {
				queueVectors(t, "what a drop-oldest subscriber reads", qRead, s.vecs("depth4-drop-oldest", "drop-oldest-after-a-read")...)
			},
		}),
		must(cases.Case{
			ID:      "streams/5.2/drop-newest-discards-the-arrival",
			Title:   "Under drop-newest a full queue discards the arriving sample and keeps what is queued",
			Spec:    "ranvier-streams §5.2, §3.5",
			Vectors: ids("depth4-drop-newest", "drop-newest-after-a-read"),
			Run: func(t *cases.T) {
				queueVectors(t, "what a drop-newest subscriber reads", qRead, s.vecs("depth4-drop-newest", "drop-newest-after-a-read")...)
			},
		}),
		must(cases.Case{
			ID:    "streams/5.4/every-discard-counted-once",
			Title: "Every discarded sample increments dropped exactly once, whatever the policy, depth and reading pattern",
			Spec:  "ranvier-streams §5.4, §5.2",
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
					if !out.Refused && cmp.Equal(want.only(f), viewQueueOut(out).only(f)) {
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
		}),
		should(cases.Case{
			ID:    "streams/5.4/peak-depth-reported",
			Title: "A subscription reports the deepest its queue has been, which outlives the burst that caused it",
			Spec:  "ranvier-streams §5.4",
			Run: func(t *cases.T) {
				d := uint32(8)
				in := &conformpb.QueueInput{Name: "trial.events", Depth: &d, Policy: conformpb.QueuePolicy_QUEUE_POLICY_DROP_OLDEST}
				for seq := uint64(1); seq <= 5; seq++ {
					in.Steps = append(in.Steps, push(1, 1, seq))
				}
				in.Steps = append(in.Steps, pop(5), push(1, 1, 6), pop(1))
				out := driveQueue(t, []*conformpb.QueueInput{in})[0]
				if out.Refused || out.Peak != 5 || out.Depth != 8 {
					t.Fail(reports.Evidence{Message: "the peak after a burst of five, drained", Input: describeQueue(in),
						Expected: "peak 5 against depth 8", Got: fmt.Sprintf("peak %d against depth %d (refused %v)", out.Peak, out.Depth, out.Refused)})
				}
			},
		}),
		may(cases.Case{
			ID:    "streams/5.3/default-options",
			Title: "The default depth and policy (Rust: 1024, drop-oldest; an implementation may choose another depth)",
			Spec:  "ranvier-streams §5.3, §5.2, §3.5",
			Run: func(t *cases.T) {
				in := &conformpb.QueueInput{Name: "trial.events"}
				for seq := uint64(1); seq <= 1100; seq++ {
					in.Steps = append(in.Steps, push(1, 1, seq))
				}
				in.Steps = append(in.Steps, pop(1))
				out := driveQueue(t, []*conformpb.QueueInput{in})[0]
				if out.Refused {
					t.Note("subscribing with the defaults was refused: %s", out.Refusal)
					return
				}
				first := uint64(0)
				if len(out.Read) > 0 {
					first = out.Read[0].Sequence
				}
				t.Note("default depth %d, policy %s; after 1100 samples: delivered %d, dropped %d, first read %d",
					out.Depth, policyLabel(out.Policy), out.Delivered, out.Dropped, first)
				if out.Depth != streams.DefaultDepth || out.Policy != conformpb.QueuePolicy_QUEUE_POLICY_DROP_OLDEST {
					t.Note("the defaults differ from Rust's (depth %d, drop-oldest), which §5.3 allows", streams.DefaultDepth)
				}
			},
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
