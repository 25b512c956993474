package mutant

import (
	"context"
	"math"
	"slices"

	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/ref/wire"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/conform-suite/conform/ref/streams"
	"github.com/conform-suite/conform/sut/impl"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// streamsMutants are every streams mutant: the ones issue 3 lists, then the
// further failure modes that give each remaining MUST case a bug to catch.
var streamsMutants = append(append([]Mutant(nil), streamsListed...), streamsFurther...)

// streamsListed are the failure modes ranvier-streams names (§2.2,
// §3.1-§3.8) and issue 3 lists, each one a working program that reports the
// wrong numbers.
var streamsListed = []Mutant{
	trackerWith("window-256", "keeps a reorder window of 256 instead of 64 (ranvier-streams §3.4)",
		streams.TrackerOptions{Window: 256}),
	trackerWith("window-63", "keeps a reorder window of 63 instead of 64 (ranvier-streams §3.4)",
		streams.TrackerOptions{Window: 63}),
	trackerMutant("keyed-on-stream-ref", "keys sequence tracking on stream_ref alone, not (connection, stream_ref) (ranvier-streams §2.2)",
		func(t impl.Tracker) impl.Tracker {
			return &rekeyed{Tracker: t, key: func(_ streams.ConnID, ref uint32) (streams.ConnID, uint32) { return 0, ref }}
		}),
	trackerMutant("keyed-on-name", "keys sequence tracking on the subscribed name, one series per name (ranvier-streams §2.2, §2.4)",
		func(t impl.Tracker) impl.Tracker {
			// A tracker serves one subscription, so one key is one name.
			return &rekeyed{Tracker: t, key: func(streams.ConnID, uint32) (streams.ConnID, uint32) { return 0, 1 }}
		}),
	trackerMutant("breaks-credited-back", "decrements breaks as well as missing when a late sample fills a gap (ranvier-streams §3.4)",
		func(t impl.Tracker) impl.Tracker { return &breaksCredited{Tracker: t} }),
	trackerMutant("missing-not-credited", "never credits missing back when a late sample fills a gap (ranvier-streams §3.4, §3.7)",
		func(t impl.Tracker) impl.Tracker { return &missingUncredited{Tracker: t} }),
	trackerMutant("missing-wraps-below-zero", "decrements missing below zero without saturating, wrapping to 2^64-1 (ranvier-streams §3.4)",
		func(t impl.Tracker) impl.Tracker { return &missingWraps{Tracker: t} }),
	trackerMutant("first-sample-gap-from-1", "counts a stream's first sample as a gap from sequence 1 (ranvier-streams §3.2)",
		func(t impl.Tracker) impl.Tracker { return &extraMissing{Tracker: t, firstGap: true} }),
	trackerWith("history-kept-past-64", "shifts the reorder history by the step modulo 64, as C's << does on x86, so a forward step of 64 or more keeps a stale history (ranvier-streams §3.4)",
		streams.TrackerOptions{Shift: func(history, step uint64) uint64 { return history << (step % 64) }}),
	trackerWith("sequence-zero-tracked", "tracks a sample carrying sequence 0 like any other (ranvier-streams §2.1, §3.6)",
		streams.TrackerOptions{Tracked: func(s streams.Sample) bool { return s.StreamRef != 0 }}),
	trackerMutant("duplicate-beyond-window", "keeps every sequence and calls a seen sample 64 or more behind a duplicate (ranvier-streams §3.4)",
		func(t impl.Tracker) impl.Tracker {
			return &duplicateBeyond{Tracker: t, seen: map[pair]map[uint64]bool{}}
		}),
	queueMutant("tracked-after-queue", "reads sequence numbers when the subscriber takes a sample, after the loss policy, so its own drops count as missing (ranvier-streams §3.1, §3.5)",
		func(q impl.Queue) impl.Queue {
			return &trackedOnPop{queueOf: queueOf{q}, tracker: streams.NewTracker()}
		}),
	queueMutant("delivered-as-read", "reports as delivered what the subscriber read or can still read, not what was placed in the queue (ranvier-streams §3.8)",
		func(q impl.Queue) impl.Queue { return &deliveredAsRead{queueOf: queueOf{q}} }),
}

// trackerWith is the mutant whose trackers are the reference built with
// opts: the trackers of the track op and the tracker each subscription's
// queue reports the gap counters of, since a binding has one tracker.
func trackerWith(name, bug string, opts streams.TrackerOptions) Mutant {
	return Mutant{Name: name, Suite: "streams", Bug: bug, apply: func(im *impl.Impl) {
		im.NewTracker = func(string) impl.Tracker { return streams.NewTrackerWith(opts) }
		next := im.NewQueue
		im.NewQueue = func(sub string, o streams.Options) (impl.Queue, error) {
			q, err := next(sub, o)
			if err != nil {
				return nil, err
			}
			return &trackedWith{queueOf: queueOf{q}, tracker: streams.NewTrackerWith(opts)}, nil
		}
	}}
}

// trackedWith is a subscription whose gap counters come from a tracker of
// its own that sees every arrival, before the policy, as the reference
// queue's tracker does.
type trackedWith struct {
	queueOf
	tracker *streams.Tracker
}

func (q *trackedWith) Push(conn streams.ConnID, s streams.Sample) {
	q.tracker.Observe(conn, s)
	q.in.Push(conn, s)
}

func (q *trackedWith) Gaps() streams.Counters { return q.tracker.Counters() }

// trackerMutant is the mutant whose trackers are the reference's wrapped by
// wrap.
func trackerMutant(name, bug string, wrap func(impl.Tracker) impl.Tracker) Mutant {
	return Mutant{Name: name, Suite: "streams", Bug: bug, apply: func(im *impl.Impl) {
		next := im.NewTracker
		im.NewTracker = func(sub string) impl.Tracker { return wrap(next(sub)) }
	}}
}

// pair is a (connection, stream_ref) pair, what the reference keys on.
type pair struct {
	conn streams.ConnID
	ref  uint32
}

// rekeyed hands the reference tracker each sample under the key key
// chooses, so that it tracks one series per key instead of per pair. The
// break it reports still names the arrival that revealed it.
type rekeyed struct {
	impl.Tracker
	key func(streams.ConnID, uint32) (streams.ConnID, uint32)
	gap pair // the arrival that revealed the last break
}

func (t *rekeyed) Observe(conn streams.ConnID, s streams.Sample) streams.Outcome {
	ref := s.StreamRef
	k := conn
	if ref != 0 { // stream_ref 0 stays untracked
		k, s.StreamRef = t.key(conn, ref)
	}
	out := t.Tracker.Observe(k, s)
	if out == streams.Gap {
		t.gap = pair{conn, ref}
	}
	return out
}

func (t *rekeyed) Counters() streams.Counters {
	c := t.Tracker.Counters()
	if c.LastBreak != nil {
		b := *c.LastBreak
		b.Conn, b.StreamRef = t.gap.conn, t.gap.ref
		c.LastBreak = &b
	}
	return c
}

// breaksCredited takes one break back, down to zero, for every late sample
// the reference credits.
type breaksCredited struct {
	impl.Tracker
	credited uint64
}

func (t *breaksCredited) Observe(conn streams.ConnID, s streams.Sample) streams.Outcome {
	out := t.Tracker.Observe(conn, s)
	if out == streams.Reordered && t.Tracker.Counters().Breaks > t.credited {
		t.credited++
	}
	return out
}

func (t *breaksCredited) Counters() streams.Counters {
	c := t.Tracker.Counters()
	c.Breaks -= t.credited
	return c
}

// missingUncredited adds back every credit the reference makes to missing.
type missingUncredited struct {
	impl.Tracker
	credits uint64
}

func (t *missingUncredited) Observe(conn streams.ConnID, s streams.Sample) streams.Outcome {
	before := t.Tracker.Counters().Missing
	out := t.Tracker.Observe(conn, s)
	if t.Tracker.Counters().Missing < before {
		t.credits++
	}
	return out
}

func (t *missingUncredited) Counters() streams.Counters {
	c := t.Tracker.Counters()
	c.Missing = addSaturating(c.Missing, t.credits)
	return c
}

// missingWraps takes one from missing for every late sample the reference
// credits, zero included: below zero it wraps.
type missingWraps struct {
	impl.Tracker
	below uint64 // credits the reference saturated away
}

func (t *missingWraps) Observe(conn streams.ConnID, s streams.Sample) streams.Outcome {
	before := t.Tracker.Counters().Missing
	out := t.Tracker.Observe(conn, s)
	if out == streams.Reordered && before == 0 {
		t.below++
	}
	return out
}

func (t *missingWraps) Counters() streams.Counters {
	c := t.Tracker.Counters()
	c.Missing -= t.below
	return c
}

// extraMissing counts more missing than the reference: with firstGap, a
// stream's first sample opens a gap from sequence 0, as if sample 0 had
// been seen; with stepGap, every gap adds one more. Late samples credit the
// extra back once the reference's own count is spent, as one count would.
type extraMissing struct {
	impl.Tracker
	firstGap, stepGap bool

	missing, breaks uint64
	first           *streams.Break // the last break, when it was a first sample's
}

func (t *extraMissing) Observe(conn streams.ConnID, s streams.Sample) streams.Outcome {
	before := t.Tracker.Counters().Missing
	out := t.Tracker.Observe(conn, s)
	switch out {
	case streams.First:
		if t.firstGap && s.Sequence > 1 {
			n := s.Sequence - 1
			t.missing = addSaturating(t.missing, n)
			t.breaks++
			t.first = &streams.Break{Conn: conn, StreamRef: s.StreamRef, Before: s.Sequence, Missing: n, BeforeNs: s.MonotonicNs}
			out = streams.Gap
		}
	case streams.Gap:
		t.first = nil
		if t.stepGap {
			t.missing = addSaturating(t.missing, 1)
		}
	case streams.Reordered:
		if before == 0 && t.missing > 0 {
			t.missing--
		}
	}
	return out
}

func (t *extraMissing) Counters() streams.Counters {
	c := t.Tracker.Counters()
	c.Missing = addSaturating(c.Missing, t.missing)
	c.Breaks += t.breaks
	if t.first != nil {
		b := *t.first
		c.LastBreak = &b
	}
	return c
}

// duplicateBeyond remembers every sequence the reference tracked, and
// calls a late sample beyond the window that it has seen a duplicate.
type duplicateBeyond struct {
	impl.Tracker
	seen  map[pair]map[uint64]bool
	moved uint64 // beyond-window arrivals called duplicates
}

func (t *duplicateBeyond) Observe(conn streams.ConnID, s streams.Sample) streams.Outcome {
	out := t.Tracker.Observe(conn, s)
	k := pair{conn, s.StreamRef}
	switch out {
	case streams.Untracked, streams.Duplicate:
	case streams.Beyond:
		if t.seen[k][s.Sequence] {
			t.moved++
			return streams.Duplicate
		}
	default:
		if t.seen[k] == nil {
			t.seen[k] = map[uint64]bool{}
		}
		t.seen[k][s.Sequence] = true
	}
	return out
}

func (t *duplicateBeyond) Counters() streams.Counters {
	c := t.Tracker.Counters()
	c.Reordered -= t.moved
	c.Duplicated += t.moved
	return c
}

// lastBreakKept reports the first break the reference saw as the last.
type lastBreakKept struct {
	impl.Tracker
	first *streams.Break
}

func (t *lastBreakKept) Observe(conn streams.ConnID, s streams.Sample) streams.Outcome {
	out := t.Tracker.Observe(conn, s)
	if out == streams.Gap && t.first == nil {
		t.first = t.Tracker.Counters().LastBreak
	}
	return out
}

func (t *lastBreakKept) Counters() streams.Counters {
	c := t.Tracker.Counters()
	if t.first != nil {
		b := *t.first
		c.LastBreak = &b
	}
	return c
}

// breakPerSample counts one break per missing sample of each gap the
// reference opens, not one per gap.
type breakPerSample struct {
	impl.Tracker
	extra uint64
}

func (t *breakPerSample) Observe(conn streams.ConnID, s streams.Sample) streams.Outcome {
	out := t.Tracker.Observe(conn, s)
	if out == streams.Gap {
		t.extra += t.Tracker.Counters().LastBreak.Missing - 1
	}
	return out
}

func (t *breakPerSample) Counters() streams.Counters {
	c := t.Tracker.Counters()
	c.Breaks += t.extra
	return c
}

// addSaturating adds without wrapping, as the reference's counts do.
func addSaturating(a, b uint64) uint64 {
	if a > math.MaxUint64-b {
		return math.MaxUint64
	}
	return a + b
}

// queueMutant is the mutant whose subscriptions are the reference's
// wrapped by wrap.
func queueMutant(name, bug string, wrap func(impl.Queue) impl.Queue) Mutant {
	return queueOptionsMutant(name, bug, nil, wrap)
}

// queueOptionsMutant is the mutant whose subscriptions are the reference's
// made with the options opts rewrites, wrapped by wrap; either may be nil.
func queueOptionsMutant(name, bug string, opts func(streams.Options) streams.Options, wrap func(impl.Queue) impl.Queue) Mutant {
	return Mutant{Name: name, Suite: "streams", Bug: bug, apply: func(im *impl.Impl) {
		next := im.NewQueue
		im.NewQueue = func(sub string, o streams.Options) (impl.Queue, error) {
			if opts != nil {
				o = opts(o)
			}
			q, err := next(sub, o)
			if err != nil || wrap == nil {
				return q, err
			}
			return wrap(q), nil
		}
	}}
}

// queueOf forwards every method to the queue it holds; the queue mutants
// embed it and replace one. (impl.Queue has a method named Queue, so it
// cannot be embedded itself.)
type queueOf struct{ in impl.Queue }

func (q queueOf) Push(conn streams.ConnID, s streams.Sample) { q.in.Push(conn, s) }
func (q queueOf) Pop() (streams.Sample, bool)                { return q.in.Pop() }
func (q queueOf) Options() streams.Options                   { return q.in.Options() }
func (q queueOf) Queue() streams.QueueCounters               { return q.in.Queue() }
func (q queueOf) Gaps() streams.Counters                     { return q.in.Gaps() }

// trackedOnPop tracks what the subscriber takes, not what arrives: the
// reference queue's own tracker, which saw every arrival, goes unread.
type trackedOnPop struct {
	queueOf
	tracker *streams.Tracker
	conns   []streams.ConnID // the connection of each queued sample, oldest first
}

func (q *trackedOnPop) Push(conn streams.ConnID, s streams.Sample) {
	before := q.in.Queue()
	q.in.Push(conn, s)
	after := q.in.Queue()
	if after.Delivered == before.Delivered {
		return // discarded on arrival
	}
	if after.Dropped > before.Dropped {
		q.conns = q.conns[1:] // the oldest made room
	}
	q.conns = append(q.conns, conn)
}

func (q *trackedOnPop) Pop() (streams.Sample, bool) {
	s, ok := q.in.Pop()
	if ok {
		q.tracker.Observe(q.conns[0], s)
		q.conns = q.conns[1:]
	}
	return s, ok
}

func (q *trackedOnPop) Gaps() streams.Counters { return q.tracker.Counters() }

// deliveredAsRead reports as delivered the samples taken and those still
// queued.
type deliveredAsRead struct {
	queueOf
	read uint64
}

func (q *deliveredAsRead) Pop() (streams.Sample, bool) {
	s, ok := q.in.Pop()
	if ok {
		q.read++
	}
	return s, ok
}

func (q *deliveredAsRead) Queue() streams.QueueCounters {
	c := q.in.Queue()
	c.Delivered = q.read + uint64(c.Readable)
	return c
}

// lossAsDropped reports what the tracker counts missing as dropped by the
// queue, and nothing as missing.
type lossAsDropped struct{ queueOf }

func (q lossAsDropped) Queue() streams.QueueCounters {
	c := q.in.Queue()
	c.Dropped += q.in.Gaps().Missing
	return c
}

func (q lossAsDropped) Gaps() streams.Counters {
	c := q.in.Gaps()
	c.Missing, c.Breaks, c.LastBreak = 0, 0, nil
	return c
}

// policySwapped runs drop-newest where drop-oldest was asked for and back,
// and reports the policy asked for.
type policySwapped struct {
	queueOf
	asked streams.Policy
}

func (q policySwapped) Options() streams.Options {
	o := q.in.Options()
	o.Policy = q.asked
	return o
}

func swapPolicies(p streams.Policy) streams.Policy {
	switch p {
	case streams.DropOldest:
		return streams.DropNewest
	case streams.DropNewest:
		return streams.DropOldest
	}
	return p
}

// streamsFurther are failure modes beyond issue 3's list, one or more for
// each MUST case the listed ones leave uncaught, so that every such case
// is shown to be able to fail.
var streamsFurther = []Mutant{
	trackerMutant("missing-counts-step", "adds the whole step to missing, not step - 1 (ranvier-streams §3.3)",
		func(t impl.Tracker) impl.Tracker { return &extraMissing{Tracker: t, stepGap: true} }),
	trackerMutant("break-per-missing-sample", "adds one break per missing sample, not one per gap (ranvier-streams §3.3)",
		func(t impl.Tracker) impl.Tracker { return &breakPerSample{Tracker: t} }),
	trackerMutant("first-break-kept", "retains the first break instead of the most recent (ranvier-streams §3.3)",
		func(t impl.Tracker) impl.Tracker { return &lastBreakKept{Tracker: t} }),
	trackerWith("stream-ref-zero-tracked", "tracks a sample with stream_ref 0 as a stream of its own (ranvier-streams §3.6)",
		streams.TrackerOptions{Tracked: func(s streams.Sample) bool { return s.Sequence != 0 }}),
	queueMutant("upstream-loss-as-dropped", "reports a loss before the queue as dropped and never as missing (ranvier-streams §3.5)",
		func(q impl.Queue) impl.Queue { return lossAsDropped{queueOf{q}} }),
	{
		Name: "policies-swapped", Suite: "streams",
		Bug: "drops the arriving sample under drop-oldest and the oldest under drop-newest (ranvier-streams §5.2)",
		apply: func(im *impl.Impl) {
			next := im.NewQueue
			im.NewQueue = func(sub string, o streams.Options) (impl.Queue, error) {
				asked := o.Policy
				o.Policy = swapPolicies(o.Policy)
				q, err := next(sub, o)
				if err != nil {
					return nil, err
				}
				return policySwapped{queueOf: queueOf{q}, asked: asked}, nil
			}
		},
	},
	queueOptionsMutant("block-substituted", "accepts block and halt and runs drop-oldest instead (ranvier-streams §5.2)",
		func(o streams.Options) streams.Options {
			if o.Policy == streams.Block || o.Policy == streams.Halt {
				o.Policy = streams.DropOldest
			}
			return o
		}, nil),
	{
		Name: "default-policy-drop-newest", Suite: "streams",
		Bug: "gives a subscription that names no policy drop-newest instead of drop-oldest (ranvier-streams §5.2)",
		apply: func(im *impl.Impl) {
			wrapOp(im, impl.Handler(impl.DriveQueue), func(next impl.OpHandler) impl.OpHandler {
				return func(ctx context.Context, im *impl.Impl, op proto.Message) (proto.Message, error) {
					dq := proto.Clone(op).(*conformpb.DriveQueue)
					for _, in := range dq.Inputs {
						if in.Policy == conformpb.QueuePolicy_QUEUE_POLICY_DEFAULT {
							in.Policy = conformpb.QueuePolicy_QUEUE_POLICY_DROP_NEWEST
						}
					}
					return next(ctx, im, dq)
				}
			})
		},
	},
	queueOptionsMutant("zero-depth-accepted", "accepts a depth of 0 and uses the default depth (ranvier-streams §5.2)",
		func(o streams.Options) streams.Options {
			if o.Depth == 0 {
				o.Depth = streams.DefaultDepth
			}
			return o
		}, nil),
	{
		Name: "unreadable-not-counted", Suite: "streams",
		Bug: "skips undecodable and empty frames without counting them (ranvier-streams §3.6a)",
		apply: func(im *impl.Impl) {
			im.NewFrameCounter = func() impl.FrameCounter { return &bugCounter{inner: new(streams.FrameCounter), drop: true} }
		},
	},
	{
		Name: "unreadable-per-subscription", Suite: "streams",
		Bug: "keeps one unreadable count for every connection of the subscription (ranvier-streams §3.6a)",
		apply: func(im *impl.Impl) {
			im.NewFrameCounter = func() impl.FrameCounter { return &bugCounter{inner: new(streams.FrameCounter), shared: true} }
		},
	},
	{
		Name: "unreadable-closes", Suite: "streams",
		Bug: "closes the connection at a frame that carries nothing readable (ranvier-streams §3.6a)",
		apply: func(im *impl.Impl) {
			next := im.NewSubscriber
			im.NewSubscriber = func(r wire.FrameReader) impl.Subscriber {
				return &bugSubscriber{Subscriber: next(r), closeOnSkip: true}
			}
		},
	},
	{
		Name: "misaligned-counted", Suite: "streams",
		Bug: "counts a frame that misaligned the byte stream as unreadable (ranvier-streams §3.6a)",
		apply: func(im *impl.Impl) {
			next := im.NewSubscriber
			im.NewSubscriber = func(r wire.FrameReader) impl.Subscriber {
				return &bugSubscriber{Subscriber: next(r), countFailure: true}
			}
		},
	},
	runtimeMutant("sequence-from-zero", "numbers a stream's samples from 0 (ranvier-streams §2.1)",
		hookRuntime{sample: func(_ *runtimeState, _ string, _ uint64, x *streams.Sample) { x.Sequence-- }}),
	runtimeMutant("counter-per-name", "keeps one sequence counter per name, shared by every stream under it (ranvier-streams §2.2)",
		hookRuntime{sample: func(st *runtimeState, name string, _ uint64, x *streams.Sample) {
			st.counters[name]++
			x.Sequence = st.counters[name]
		}}),
	runtimeMutant("stamped-with-node-time", "stamps monotonic_timestamp_ns with the timestamp the node supplied (ranvier-streams §4.1)",
		hookRuntime{sample: func(_ *runtimeState, _ string, supplied uint64, x *streams.Sample) { x.MonotonicNs = supplied }}),
	runtimeMutant("source-not-gated", "carries a source timestamp on a stream that named no clock domain (ranvier-streams §4.2)",
		hookRuntime{ungated: true}),
	runtimeMutant("source-rebased", "replaces a source timestamp with the host clock's reading (ranvier-streams §4.2)",
		hookRuntime{sample: func(_ *runtimeState, _ string, _ uint64, x *streams.Sample) {
			if x.SourceNs != 0 {
				x.SourceNs = x.MonotonicNs
			}
		}}),
	runtimeMutant("publish-stalls-when-unread", "stops delivering once 1024 samples have been published with nobody reading (ranvier-streams §5.1)",
		hookRuntime{stallAfter: 1024}),
	runtimeMutant("refs-from-zero", "allocates stream references from 0 (ranvier-streams §2.6)",
		hookRuntime{refShift: 1}),
	runtimeMutant("refs-reused", "hands a dropped stream's reference to the next stream opened (ranvier-streams §2.6)",
		hookRuntime{reuse: true}),
	runtimeMutant("empty-name-accepted", "opens and adopts a stream whose name is empty (ranvier-streams §6.1, ranvier-wire §4.4)",
		hookRuntime{unnamed: "unnamed"}),
	runtimeMutant("republish-renumbers", "renumbers republished samples 1, 2, 3, … (ranvier-streams §2.5)",
		hookRuntime{renumber: true}),
	runtimeMutant("republish-keeps-recorded-ref", "republishes samples under the stream_ref they were recorded with (ranvier-streams §2.5)",
		hookRuntime{keepRef: true}),
	runtimeMutant("adopted-on-local-connection", "delivers adopted streams on the connection of local publishing (ranvier-streams §2.5)",
		hookRuntime{localConn: true}),
	{
		Name: "empty-string-present", Suite: "streams",
		Bug: "reads an empty string in an announcement as an empty value rather than absent (ranvier-streams §6.6, §4.3)",
		apply: func(im *impl.Impl) {
			next := im.ShowAnnouncement
			im.ShowAnnouncement = func(a streams.Announcement) *conformpb.AnnouncementRead {
				r := next(a)
				empty := func(p **string) {
					if *p == nil {
						*p = proto.String("")
					}
				}
				empty(&r.Name)
				empty(&r.Node)
				empty(&r.SourceClockDomain)
				if r.Schema != nil {
					empty(&r.Schema.SchemaId)
				}
				if r.Authorisation != nil {
					empty(&r.Authorisation.Authority)
					empty(&r.Authorisation.Reference)
				}
				if r.Operator != nil {
					empty(&r.Operator.Name)
				}
				return r
			}
		},
	},
	{
		Name: "explicit-empty-string-present", Suite: "streams",
		Bug: "reads a string the wire carries as an explicit empty value (12 00) as present and empty, as a decoder with field presence does (ranvier-streams §6.6)",
		apply: func(im *impl.Impl) {
			wrapOp(im, impl.Handler(impl.ReadAnnouncements), func(next impl.OpHandler) impl.OpHandler {
				return func(ctx context.Context, im *impl.Impl, op proto.Message) (proto.Message, error) {
					res, err := next(ctx, im, op)
					if err != nil {
						return res, err
					}
					ins := op.(*conformpb.ReadAnnouncements).GetInputs()
					for i, out := range res.(*conformpb.ReadAnnouncementsResult).GetOutputs() {
						if a := out.GetAnnouncement(); a != nil && i < len(ins) {
							presentIfWritten(ins[i].GetStreamInfo(), a)
						}
					}
					return res, nil
				}
			})
		},
	},
	readMutant("empty-schema-kept", "reads a schema with neither identity nor descriptor as a schema (ranvier-streams §6.6)",
		func(info streams.StreamInfo, a *streams.Announcement) {
			if info.Schema != nil && a.Schema == nil {
				a.Schema = &streams.Schema{}
			}
		}),
	readMutant("host-without-boot", "names a host clock from host_id alone (ranvier-streams §6.6, §4.1)",
		func(info streams.StreamInfo, a *streams.Announcement) {
			if info.HostID != "" {
				a.Clock = &streams.HostClock{HostID: info.HostID, BootID: info.BootID}
			}
		}),
	readMutant("unknown-origin-kept", "keeps an origin number it does not know instead of reading it as unspecified (ranvier-streams §6.6)",
		func(info streams.StreamInfo, a *streams.Announcement) { a.Origin = streams.Origin(info.Origin) }),
	readMutant("unknown-assertion-kept", "keeps an assertion method it does not know instead of reading it as unspecified (ranvier-streams §6.6)",
		func(info streams.StreamInfo, a *streams.Announcement) {
			if op := info.Operator; op != nil && op.AssertedBy != 0 {
				if a.Operator == nil { // an identity stating a method alone
					a.Operator = &streams.Operator{Name: op.Name}
				}
				a.Operator.AssertedBy = streams.AssertionMethod(op.AssertedBy)
			}
		}),
	readMutant("descriptor-parsed", "parses the descriptor and drops one that is no FileDescriptorSet (ranvier-streams §6.2)",
		func(_ streams.StreamInfo, a *streams.Announcement) {
			if a.Schema != nil && a.Schema.Descriptor != nil && proto.Unmarshal(a.Schema.Descriptor, new(descriptorpb.FileDescriptorSet)) != nil {
				a.Schema.Descriptor = nil
			}
		}),
	readMutant("absent-production-as-empty", "reads an absent production as an empty one, a claim nobody made (ranvier-streams §6.1)",
		func(_ streams.StreamInfo, a *streams.Announcement) {
			if a.Production == nil {
				a.Production = []streams.Setting{}
			}
		}),
	bookMutant("announcement-updates", "treats a second announcement of a reference as an update (ranvier-streams §6.4)",
		func(next func() impl.Announcements) impl.Announcements {
			return &updating{Announcements: next(), fresh: next}
		}),
	bookMutant("schema-fallback", "matches a sample with no announcement to the connection's latest announcement (ranvier-streams §6.5)",
		func(next func() impl.Announcements) impl.Announcements {
			return &latestPerConn{Announcements: next(), fallback: true}
		}),
	bookMutant("matched-by-name", "takes the latest announcement under the subscribed name as the answer for every sample (ranvier-streams §6.7)",
		func(next func() impl.Announcements) impl.Announcements {
			return &latestPerConn{Announcements: next(), always: true}
		}),
	bookMutant("latest-announcement-only", "lists only the most recent announcement under a name (ranvier-streams §6.7)",
		func(next func() impl.Announcements) impl.Announcements { return latestListed{next()} }),
	bookMutant("announcements-keyed-on-ref", "matches announcements on stream_ref alone, across connections (ranvier-streams §6.7, §1)",
		func(next func() impl.Announcements) impl.Announcements { return keyedOnRef{next()} }),
	bookMutant("list-ignores-name", "lists every announcement heard, whatever name was asked for (ranvier-streams §6.7)",
		func(next func() impl.Announcements) impl.Announcements { return &listsAll{Announcements: next()} }),
	{
		Name: "latency-zero-before-delivery", Suite: "streams",
		Bug: "reports latency percentiles of zero before anything was delivered (ranvier-streams §4.5)",
		apply: func(im *impl.Impl) {
			im.NewLatency = func() impl.LatencyMeter { return &bugLatency{inner: new(streams.Latency), alwaysPresent: true} }
		},
	},
	{
		Name: "latency-reversed", Suite: "streams",
		Bug: "subtracts the consumer's clock from the publish stamp instead of the other way round (ranvier-streams §4.5)",
		apply: func(im *impl.Impl) {
			im.NewLatency = func() impl.LatencyMeter { return &bugLatency{inner: new(streams.Latency), reversed: true} }
		},
	},
}

// bugCounter is a frame counter with switchable bugs.
type bugCounter struct {
	inner  *streams.FrameCounter
	drop   bool // unreadable frames are not counted
	shared bool // one unreadable count for every connection
	total  uint64
}

func (c *bugCounter) Count(conn streams.ConnID, k streams.FrameKind) bool {
	readable := k == streams.FrameSample || k == streams.FrameAnnounce
	if !readable {
		c.total++
		if c.drop {
			return false
		}
	}
	return c.inner.Count(conn, k)
}

func (c *bugCounter) Counts(conn streams.ConnID) streams.FrameCounts {
	fc := c.inner.Counts(conn)
	if c.shared {
		fc.Unreadable = c.total
	}
	return fc
}

// bugSubscriber is a data-plane subscriber with switchable bugs.
type bugSubscriber struct {
	impl.Subscriber
	closeOnSkip  bool // close at an unreadable frame
	countFailure bool // report a framing error as an undecodable frame
	closed       bool
}

func (s *bugSubscriber) Receive(p []byte, emit func(wire.Event)) error {
	if s.closed {
		return nil
	}
	err := s.Subscriber.Receive(p, func(ev wire.Event) {
		if s.closed {
			return
		}
		emit(ev)
		if s.closeOnSkip && ev.Action != wire.Delivered {
			s.closed = true
		}
	})
	if err != nil && s.countFailure {
		emit(wire.Event{Action: wire.SkippedUndecodable})
	}
	return err
}

func (s *bugSubscriber) Closed() bool { return s.closed || s.Subscriber.Closed() }

// runtimeMutant is the mutant whose runtimes are the reference's wrapped
// by hooks.
func runtimeMutant(name, bug string, hooks hookRuntime) Mutant {
	return Mutant{Name: name, Suite: "streams", Bug: bug, apply: func(im *impl.Impl) {
		next := im.NewRuntime
		im.NewRuntime = func(clock func() uint64) impl.Runtime {
			h := hooks
			h.rt, h.state = next(clock), &runtimeState{counters: map[string]uint64{}}
			return &h
		}
	}}
}

// readMutant is the mutant whose reading of an announcement is the
// reference's, then changed by change.
func readMutant(name, bug string, change func(streams.StreamInfo, *streams.Announcement)) Mutant {
	return Mutant{Name: name, Suite: "streams", Bug: bug, apply: func(im *impl.Impl) {
		next := im.ReadAnnouncement
		im.ReadAnnouncement = func(info streams.StreamInfo) streams.Announcement {
			a := next(info)
			change(info, &a)
			return a
		}
	}}
}

// bookMutant is the mutant whose records of announcements are made by
// wrap from the reference's constructor.
func bookMutant(name, bug string, wrap func(next func() impl.Announcements) impl.Announcements) Mutant {
	return Mutant{Name: name, Suite: "streams", Bug: bug, apply: func(im *impl.Impl) {
		next := im.NewAnnouncements
		im.NewAnnouncements = func() impl.Announcements { return wrap(next) }
	}}
}

// runtimeState is what a hookRuntime's streams share.
type runtimeState struct {
	counters map[string]uint64 // per-name sequence counters
	freed    []uint32          // references of dropped streams
}

// hookRuntime wraps the reference runtime and the streams it makes; each
// mutant sets one field.
type hookRuntime struct {
	rt    impl.Runtime
	state *runtimeState

	// sample rewrites each published sample; supplied is the source
	// timestamp the node gave Publish.
	sample     func(st *runtimeState, name string, supplied uint64, x *streams.Sample)
	ungated    bool   // every stream carries source timestamps
	stallAfter uint64 // stop delivering after this many
	refShift   uint32 // references allocated this much lower
	reuse      bool   // a dropped stream's reference is reused
	renumber   bool   // republished samples renumbered
	keepRef    bool   // republished samples keep their stream_ref
	localConn  bool   // adopted streams on the local connection
	unnamed    string // the name a stream declared with an empty one gets
}

func (h *hookRuntime) ref(r uint32) uint32 {
	if h.reuse && len(h.state.freed) > 0 {
		r = h.state.freed[0]
		h.state.freed = h.state.freed[1:]
	}
	return r - h.refShift
}

func (h *hookRuntime) Open(name, domain string) (impl.ProducedStream, error) {
	if name == "" && h.unnamed != "" {
		name = h.unnamed
	}
	if h.ungated && domain == "" {
		domain = "ungated"
	}
	s, err := h.rt.Open(name, domain)
	if err != nil {
		return nil, err
	}
	return &hookStream{ProducedStream: s, h: h, name: name, ref: h.ref(s.Ref())}, nil
}

func (h *hookRuntime) Adopt(name string) (impl.AdoptedStream, error) {
	if name == "" && h.unnamed != "" {
		name = h.unnamed
	}
	a, err := h.rt.Adopt(name)
	if err != nil {
		return nil, err
	}
	return &hookAdopted{AdoptedStream: a, h: h, ref: h.ref(a.Ref())}, nil
}

type hookStream struct {
	impl.ProducedStream
	h    *hookRuntime
	name string
	ref  uint32
	n    uint64
	last uint64 // the sequence of the last sample, as rewritten
}

func (s *hookStream) Ref() uint32 { return s.ref }

func (s *hookStream) LastSequence() uint64 { return s.last }

func (s *hookStream) Close() { s.h.state.freed = append(s.h.state.freed, s.ref+s.h.refShift) }

func (s *hookStream) Publish(sourceNs uint64, values []byte, deliver func(streams.Sample)) {
	s.n++
	stalled := s.h.stallAfter > 0 && s.n > s.h.stallAfter
	s.ProducedStream.Publish(sourceNs, values, func(x streams.Sample) {
		x.StreamRef = s.ref
		if s.h.sample != nil {
			s.h.sample(s.h.state, s.name, sourceNs, &x)
		}
		s.last = x.Sequence
		if deliver != nil && !stalled {
			deliver(x)
		}
	})
}

type hookAdopted struct {
	impl.AdoptedStream
	h   *hookRuntime
	ref uint32
	n   uint64
}

func (a *hookAdopted) Ref() uint32 { return a.ref }

func (a *hookAdopted) Close() { a.h.state.freed = append(a.h.state.freed, a.ref+a.h.refShift) }

func (a *hookAdopted) Conn() streams.ConnID {
	if a.h.localConn {
		return 1 // the reference runtime's local connection
	}
	return a.AdoptedStream.Conn()
}

func (a *hookAdopted) Republish(x streams.Sample, deliver func(streams.Sample)) {
	recorded := x.StreamRef
	if a.h.renumber {
		a.n++
		x.Sequence = a.n
	}
	a.AdoptedStream.Republish(x, func(y streams.Sample) {
		y.StreamRef = a.ref
		if a.h.keepRef {
			y.StreamRef = recorded
		}
		if deliver != nil {
			deliver(y)
		}
	})
}

// heard is one announcement added to a record, and its connection.
type heard struct {
	conn streams.ConnID
	a    streams.Announcement
}

// updating lets a second announcement of a reference on a connection
// replace the first: the reference's record is rebuilt from what was heard,
// with the replacement in the first one's place.
type updating struct {
	impl.Announcements
	fresh func() impl.Announcements
	log   []heard
}

func (u *updating) Add(conn streams.ConnID, a streams.Announcement) (bool, error) {
	added, err := u.Announcements.Add(conn, a)
	if err != nil || added {
		if added {
			u.log = append(u.log, heard{conn, a})
		}
		return added, err
	}
	for i, h := range u.log {
		if h.conn == conn && h.a.StreamRef == a.StreamRef {
			u.log[i].a = a
		}
	}
	u.Announcements = u.fresh()
	for _, h := range u.log {
		_, _ = u.Announcements.Add(h.conn, h.a)
	}
	return true, nil
}

// latestPerConn answers a sample with its connection's latest new
// announcement: always, or only as a fallback where the reference finds
// none.
type latestPerConn struct {
	impl.Announcements
	always, fallback bool
	latest           map[streams.ConnID]streams.Announcement
}

func (b *latestPerConn) Add(conn streams.ConnID, a streams.Announcement) (bool, error) {
	added, err := b.Announcements.Add(conn, a)
	if added {
		if b.latest == nil {
			b.latest = map[streams.ConnID]streams.Announcement{}
		}
		b.latest[conn] = a
	}
	return added, err
}

func (b *latestPerConn) Lookup(conn streams.ConnID, ref uint32) (streams.Announcement, bool) {
	latest, ok := b.latest[conn]
	if ok && b.always {
		return latest, true
	}
	if a, found := b.Announcements.Lookup(conn, ref); found {
		return a, true
	}
	if ok && b.fallback {
		return latest, true
	}
	return streams.Announcement{}, false
}

// latestListed lists only the last announcement of those under a name.
type latestListed struct{ impl.Announcements }

func (b latestListed) ByName(name string) []streams.Announcement {
	all := b.Announcements.ByName(name)
	return all[max(len(all)-1, 0):]
}

// keyedOnRef records and looks up every announcement as if on one
// connection.
type keyedOnRef struct{ impl.Announcements }

func (b keyedOnRef) Add(_ streams.ConnID, a streams.Announcement) (bool, error) {
	return b.Announcements.Add(0, a)
}

func (b keyedOnRef) Lookup(_ streams.ConnID, ref uint32) (streams.Announcement, bool) {
	return b.Announcements.Lookup(0, ref)
}

// listsAll lists every announcement the reference recorded, whatever the
// name.
type listsAll struct {
	impl.Announcements
	all []streams.Announcement
}

func (b *listsAll) Add(conn streams.ConnID, a streams.Announcement) (bool, error) {
	added, err := b.Announcements.Add(conn, a)
	if added {
		b.all = append(b.all, a)
	}
	return added, err
}

func (b *listsAll) ByName(string) []streams.Announcement { return slices.Clone(b.all) }

// bugLatency is a latency meter with switchable bugs.
type bugLatency struct {
	inner         *streams.Latency
	alwaysPresent bool
	reversed      bool
}

func (l *bugLatency) Observe(nowNs, monotonicNs uint64) {
	if l.reversed {
		nowNs, monotonicNs = monotonicNs, nowNs
	}
	l.inner.Observe(nowNs, monotonicNs)
}

func (l *bugLatency) Percentiles() (streams.Percentiles, bool) {
	p, ok := l.inner.Percentiles()
	return p, ok || l.alwaysPresent
}

// wrapOp replaces im's handler of op with wrap of it: the reference's
// handler, or the one im holds.
func wrapOp(im *impl.Impl, op impl.Op, wrap func(impl.OpHandler) impl.OpHandler) {
	next := im.Ops[op.Message]
	if next == nil {
		next = op.Handle
	}
	if im.Ops == nil {
		im.Ops = map[protoreflect.FullName]impl.OpHandler{}
	}
	im.Ops[op.Message] = wrap(next)
}

// presentIfWritten makes every string of a the StreamInfo info wrote on
// the wire, empty or not, present in the read: name, node,
// source_clock_domain, the schema's identity and descriptor, the
// authorisation's two strings, and a host clock whose host_id and boot_id
// were both written. (The operator is left alone: whether an identity with
// no name is an operator named is open.) A field written twice counts as
// its last value, as protobuf reads it.
func presentIfWritten(info []byte, a *conformpb.AnnouncementRead) {
	top := writtenFields(info)
	str := func(p **string, f []byte, ok bool) {
		if ok && *p == nil {
			s := string(f)
			*p = &s
		}
	}
	f, ok := top[1]
	str(&a.Name, f, ok)
	f, ok = top[2]
	str(&a.Node, f, ok)
	f, ok = top[5]
	str(&a.SourceClockDomain, f, ok)
	if host, ok := top[6]; ok {
		if boot, ok := top[7]; ok && a.Clock == nil {
			a.Clock = &conformpb.HostClock{HostId: string(host), BootId: string(boot)}
		}
	}
	if sc, ok := top[3]; ok {
		in := writtenFields(sc)
		id, idOK := in[1]
		desc, descOK := in[2]
		if (idOK || descOK) && a.Schema == nil {
			a.Schema = new(conformpb.ReadSchema)
		}
		if a.Schema != nil {
			str(&a.Schema.SchemaId, id, idOK)
			if descOK && a.Schema.Descriptor_ == nil {
				a.Schema.Descriptor_ = append([]byte{}, desc...)
			}
		}
	}
	if au, ok := top[9]; ok && a.Authorisation != nil {
		in := writtenFields(au)
		f, ok := in[1]
		str(&a.Authorisation.Authority, f, ok)
		f, ok = in[2]
		str(&a.Authorisation.Reference, f, ok)
	}
}

// writtenFields returns the last value of each length-delimited field at
// the top level of a protobuf encoding, by number; it stops at the first
// byte that does not parse.
func writtenFields(b []byte) map[protowire.Number][]byte {
	out := map[protowire.Number][]byte{}
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return out
		}
		b = b[n:]
		if typ == protowire.BytesType {
			v, m := protowire.ConsumeBytes(b)
			if m < 0 {
				return out
			}
			out[num] = v
			b = b[m:]
			continue
		}
		m := protowire.ConsumeFieldValue(num, typ, b)
		if m < 0 {
			return out
		}
		b = b[m:]
	}
	return out
}
