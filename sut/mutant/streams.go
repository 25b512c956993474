package mutant

import (
	"math"

	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/ref/wire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/conform-suite/conform/ref/streams"
	"github.com/conform-suite/conform/sut/impl"
)

// streamsMutants are every streams mutant: the ones issue 3 lists, then the
// further failure modes that give each remaining MUST case a bug to catch.
var streamsMutants = append(append([]Mutant(nil), streamsListed...), streamsFurther...)

// streamsListed are the failure modes ranvier-streams names (§2.2,
// §3.1-§3.8) and issue 3 lists, each one a working program that reports the
// wrong numbers.
var streamsListed = []Mutant{
	trackerMutant("window-256", "keeps a reorder window of 256 instead of 64 (ranvier-streams §3.4)",
		bugTracker{window: 256}),
	trackerMutant("window-63", "keeps a reorder window of 63 instead of 64 (ranvier-streams §3.4)",
		bugTracker{window: 63}),
	trackerMutant("keyed-on-stream-ref", "keys sequence tracking on stream_ref alone, not (connection, stream_ref) (ranvier-streams §2.2)",
		bugTracker{key: keyRef}),
	trackerMutant("keyed-on-name", "keys sequence tracking on the subscribed name, one series per name (ranvier-streams §2.2, §2.4)",
		bugTracker{key: keyName}),
	trackerMutant("breaks-credited-back", "decrements breaks as well as missing when a late sample fills a gap (ranvier-streams §3.4)",
		bugTracker{creditBreaks: true}),
	trackerMutant("missing-not-credited", "never credits missing back when a late sample fills a gap (ranvier-streams §3.4, §3.7)",
		bugTracker{noCredit: true}),
	trackerMutant("missing-wraps-below-zero", "decrements missing below zero without saturating, wrapping to 2^64-1 (ranvier-streams §3.4)",
		bugTracker{noSaturate: true}),
	trackerMutant("first-sample-gap-from-1", "counts a stream's first sample as a gap from sequence 1 (ranvier-streams §3.2)",
		bugTracker{firstFromOne: true}),
	trackerMutant("sequence-zero-tracked", "tracks a sample carrying sequence 0 like any other (ranvier-streams §2.1, §3.6)",
		bugTracker{trackZero: true}),
	trackerMutant("duplicate-beyond-window", "keeps every sequence and calls a seen sample 64 or more behind a duplicate (ranvier-streams §3.4)",
		bugTracker{dupBeyond: true}),
	{
		Name: "tracked-after-queue", Suite: "streams",
		Bug: "reads sequence numbers when the subscriber takes a sample, after the loss policy, so its own drops count as missing (ranvier-streams §3.1, §3.5)",
		apply: func(im *impl.Impl) {
			im.NewQueue = func(_ string, opts streams.Options) (impl.Queue, error) {
				return newBugQueue(opts, bugQueue{trackAfter: true})
			}
		},
	},
	{
		Name: "delivered-as-read", Suite: "streams",
		Bug: "reports as delivered what the subscriber read or can still read, not what was placed in the queue (ranvier-streams §3.8)",
		apply: func(im *impl.Impl) {
			im.NewQueue = func(_ string, opts streams.Options) (impl.Queue, error) {
				return newBugQueue(opts, bugQueue{deliveredRead: true})
			}
		},
	},
}

func trackerMutant(name, bug string, cfg bugTracker) Mutant {
	return Mutant{
		Name: name, Suite: "streams", Bug: bug,
		apply: func(im *impl.Impl) {
			im.NewTracker = func(sub string) impl.Tracker {
				t := cfg
				t.name = sub
				t.tracks = map[bugKey]*bugTrack{}
				return &t
			}
		},
	}
}

// keyFunc chooses what a bugTracker keys its tracking on.
type keyFunc uint8

const (
	keyPair keyFunc = iota // (connection, stream_ref), as the reference
	keyRef                 // stream_ref alone
	keyName                // the subscribed name
)

type bugKey struct {
	conn streams.ConnID
	ref  uint32
	name string
}

type bugTrack struct {
	highest, highestNs uint64
	seen               map[uint64]bool
}

// bugTracker is a sequence tracker with switchable bugs. With every switch
// off and window 64 it counts as the reference does. It keeps every
// sequence it has seen, consulting the history only inside its window
// unless dupBeyond is set.
type bugTracker struct {
	window       uint64 // 0: 64
	key          keyFunc
	creditBreaks bool
	noCredit     bool
	noSaturate   bool
	firstFromOne bool
	trackZero    bool
	dupBeyond    bool
	trackRefZero bool // stream_ref 0 tracked like any other
	stepMissing  bool // missing grows by step, not step - 1
	breakEach    bool // one break per missing sample
	firstBreak   bool // keeps the first break, not the most recent

	name   string
	tracks map[bugKey]*bugTrack
	c      streams.Counters
	last   streams.Break
}

func (t *bugTracker) Observe(conn streams.ConnID, s streams.Sample) streams.Outcome {
	t.c.Arrived++
	if (s.StreamRef == 0 && !t.trackRefZero) || (s.Sequence == 0 && !t.trackZero) {
		t.c.Untracked++
		return streams.Untracked
	}
	var k bugKey
	switch t.key {
	case keyPair:
		k = bugKey{conn: conn, ref: s.StreamRef}
	case keyRef:
		k = bugKey{ref: s.StreamRef}
	case keyName:
		k = bugKey{name: t.name}
	}
	tr := t.tracks[k]
	if tr == nil {
		tr = &bugTrack{highest: s.Sequence, highestNs: s.MonotonicNs, seen: map[uint64]bool{s.Sequence: true}}
		t.tracks[k] = tr
		t.c.Streams++
		if t.firstFromOne && s.Sequence > 1 {
			t.gap(conn, s, 0, 0, s.Sequence-1)
			return streams.Gap
		}
		return streams.First
	}
	if s.Sequence > tr.highest {
		out := streams.InOrder
		if gap := s.Sequence - tr.highest - 1; gap > 0 {
			t.gap(conn, s, tr.highest, tr.highestNs, gap)
			out = streams.Gap
		}
		tr.highest, tr.highestNs = s.Sequence, s.MonotonicNs
		tr.seen[s.Sequence] = true
		return out
	}
	window := t.window
	if window == 0 {
		window = streams.ReorderWindow
	}
	distance := tr.highest - s.Sequence
	switch {
	case distance >= window && !(t.dupBeyond && tr.seen[s.Sequence]):
		t.c.Reordered++
		return streams.Beyond
	case tr.seen[s.Sequence]:
		t.c.Duplicated++
		return streams.Duplicate
	}
	tr.seen[s.Sequence] = true
	t.c.Reordered++
	switch {
	case t.noCredit:
	case t.noSaturate || t.c.Missing > 0:
		t.c.Missing--
	}
	if t.creditBreaks && t.c.Breaks > 0 {
		t.c.Breaks--
	}
	return streams.Reordered
}

func (t *bugTracker) gap(conn streams.ConnID, s streams.Sample, after, afterNs, n uint64) {
	add := n
	if t.stepMissing {
		add++
	}
	if t.c.Missing > math.MaxUint64-add {
		t.c.Missing = math.MaxUint64
	} else {
		t.c.Missing += add
	}
	if t.breakEach {
		t.c.Breaks += n
	} else {
		t.c.Breaks++
	}
	if t.firstBreak && t.last.Before != 0 {
		return
	}
	t.last = streams.Break{
		Conn: conn, StreamRef: s.StreamRef, After: after, Before: s.Sequence,
		Missing: n, AfterNs: afterNs, BeforeNs: s.MonotonicNs,
	}
}

func (t *bugTracker) Counters() streams.Counters {
	c := t.c
	if c.Breaks > 0 || t.last.Before != 0 {
		b := t.last
		c.LastBreak = &b
	}
	return c
}

type queued struct {
	conn streams.ConnID
	s    streams.Sample
}

// bugQueue is a subscription queue with switchable bugs. With every switch
// off it behaves as streams.Subscription.
type bugQueue struct {
	trackAfter    bool // observe when the subscriber takes a sample
	deliveredRead bool // report delivered as read + readable
	lossAsDropped bool // fold the loss before the queue into dropped
	swapPolicy    bool // drop-oldest behaves as drop-newest and back
	substitute    bool // block and halt quietly become drop-oldest
	zeroIsDefault bool // depth 0 quietly becomes the default depth

	opts    streams.Options
	tracker *streams.Tracker
	buf     []queued
	q       streams.QueueCounters
	read    uint64
}

func newBugQueue(opts streams.Options, b bugQueue) (*bugQueue, error) {
	if b.substitute && (opts.Policy == streams.Block || opts.Policy == streams.Halt) {
		opts.Policy = streams.DropOldest
	}
	if b.zeroIsDefault && opts.Depth == 0 {
		opts.Depth = streams.DefaultDepth
	}
	// The reference decides what is refused.
	if _, err := streams.NewSubscription(opts); err != nil {
		return nil, err
	}
	b.opts, b.tracker, b.q = opts, streams.NewTracker(), streams.QueueCounters{Depth: opts.Depth}
	return &b, nil
}

func (b *bugQueue) Push(conn streams.ConnID, s streams.Sample) {
	if !b.trackAfter {
		b.tracker.Observe(conn, s)
	}
	if len(b.buf) == b.opts.Depth {
		b.q.Dropped++
		if (b.opts.Policy == streams.DropNewest) != b.swapPolicy {
			return
		}
		b.buf = b.buf[1:]
	}
	b.buf = append(b.buf, queued{conn, s})
	b.q.Delivered++
	b.q.Peak = max(b.q.Peak, len(b.buf))
}

func (b *bugQueue) Pop() (streams.Sample, bool) {
	if len(b.buf) == 0 {
		return streams.Sample{}, false
	}
	e := b.buf[0]
	b.buf = b.buf[1:]
	b.read++
	if b.trackAfter {
		b.tracker.Observe(e.conn, e.s)
	}
	return e.s, true
}

func (b *bugQueue) Options() streams.Options { return b.opts }

func (b *bugQueue) Queue() streams.QueueCounters {
	q := b.q
	q.Readable = len(b.buf)
	if b.deliveredRead {
		q.Delivered = b.read + uint64(len(b.buf))
	}
	if b.lossAsDropped {
		q.Dropped += b.tracker.Counters().Missing
	}
	return q
}

func (b *bugQueue) Gaps() streams.Counters {
	c := b.tracker.Counters()
	if b.lossAsDropped {
		c.Missing, c.Breaks, c.LastBreak = 0, 0, nil
	}
	return c
}

func queueMutant(name, bug string, cfg bugQueue) Mutant {
	return Mutant{Name: name, Suite: "streams", Bug: bug, apply: func(im *impl.Impl) {
		im.NewQueue = func(_ string, opts streams.Options) (impl.Queue, error) { return newBugQueue(opts, cfg) }
	}}
}

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

func bookMutant(name, bug string, cfg bugBook) Mutant {
	return Mutant{Name: name, Suite: "streams", Bug: bug, apply: func(im *impl.Impl) {
		im.NewAnnouncements = func() impl.Announcements { b := cfg; return &b }
	}}
}

// streamsFurther are failure modes beyond issue 3's list, one or more for
// each MUST case the listed ones leave uncaught, so that every such case
// is shown to be able to fail.
var streamsFurther = []Mutant{
	trackerMutant("missing-counts-step", "adds the whole step to missing, not step - 1 (ranvier-streams §3.3)",
		bugTracker{stepMissing: true}),
	trackerMutant("break-per-missing-sample", "adds one break per missing sample, not one per gap (ranvier-streams §3.3)",
		bugTracker{breakEach: true}),
	trackerMutant("first-break-kept", "retains the first break instead of the most recent (ranvier-streams §3.3)",
		bugTracker{firstBreak: true}),
	trackerMutant("stream-ref-zero-tracked", "tracks a sample with stream_ref 0 as a stream of its own (ranvier-streams §3.6)",
		bugTracker{trackRefZero: true}),
	queueMutant("upstream-loss-as-dropped", "reports a loss before the queue as dropped and never as missing (ranvier-streams §3.5)",
		bugQueue{lossAsDropped: true}),
	queueMutant("policies-swapped", "drops the arriving sample under drop-oldest and the oldest under drop-newest (ranvier-streams §5.2)",
		bugQueue{swapPolicy: true}),
	queueMutant("block-substituted", "accepts block and halt and runs drop-oldest instead (ranvier-streams §5.2)",
		bugQueue{substitute: true}),
	queueMutant("zero-depth-accepted", "accepts a depth of 0 and uses the default depth (ranvier-streams §5.2)",
		bugQueue{zeroIsDefault: true}),
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
		hookRuntime{sample: func(_ *runtimeState, _ string, x *streams.Sample) { x.Sequence-- }}),
	runtimeMutant("counter-per-name", "keeps one sequence counter per name, shared by every stream under it (ranvier-streams §2.2)",
		hookRuntime{sample: func(st *runtimeState, name string, x *streams.Sample) {
			st.counters[name]++
			x.Sequence = st.counters[name]
		}}),
	runtimeMutant("stamped-with-node-time", "stamps monotonic_timestamp_ns with the timestamp the node supplied (ranvier-streams §4.1)",
		hookRuntime{sample: func(_ *runtimeState, _ string, x *streams.Sample) { x.MonotonicNs = x.SourceNs }, ungated: true}),
	runtimeMutant("source-not-gated", "carries a source timestamp on a stream that named no clock domain (ranvier-streams §4.2)",
		hookRuntime{ungated: true}),
	runtimeMutant("source-rebased", "replaces a source timestamp with the host clock's reading (ranvier-streams §4.2)",
		hookRuntime{sample: func(_ *runtimeState, _ string, x *streams.Sample) {
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
				empty(&r.Node)
				empty(&r.SourceClockDomain)
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
	readMutant("empty-schema-kept", "reads a schema with neither identity nor descriptor as a schema (ranvier-streams §6.6)",
		func(info streams.StreamInfo, a *streams.Announcement) {
			if info.Schema != nil && a.Schema == nil {
				a.Schema = &streams.Schema{}
			}
		}),
	readMutant("host-without-boot", "names a host clock from host_id alone (ranvier-streams §6.6, §4.1)",
		func(info streams.StreamInfo, a *streams.Announcement) {
			if info.HostID != "" || info.BootID != "" {
				a.Clock = &streams.HostClock{HostID: info.HostID, BootID: info.BootID}
			}
		}),
	readMutant("unknown-origin-kept", "keeps an origin number it does not know instead of reading it as unspecified (ranvier-streams §6.6)",
		func(info streams.StreamInfo, a *streams.Announcement) { a.Origin = streams.Origin(info.Origin) }),
	readMutant("unknown-assertion-kept", "keeps an assertion method it does not know instead of reading it as unspecified (ranvier-streams §6.6)",
		func(info streams.StreamInfo, a *streams.Announcement) {
			if info.Operator != nil && a.Operator != nil {
				a.Operator.AssertedBy = streams.AssertionMethod(info.Operator.AssertedBy)
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
		bugBook{update: true}),
	bookMutant("schema-fallback", "matches a sample with no announcement to the connection's latest announcement (ranvier-streams §6.5)",
		bugBook{fallback: true}),
	bookMutant("matched-by-name", "takes the latest announcement under the subscribed name as the answer for every sample (ranvier-streams §6.7)",
		bugBook{byName: true}),
	bookMutant("latest-announcement-only", "lists only the most recent announcement under a name (ranvier-streams §6.7)",
		bugBook{latestOnly: true}),
	bookMutant("announcements-keyed-on-ref", "matches announcements on stream_ref alone, across connections (ranvier-streams §6.7, §1)",
		bugBook{refOnly: true}),
	bookMutant("list-ignores-name", "lists every announcement heard, whatever name was asked for (ranvier-streams §6.7)",
		bugBook{anyName: true}),
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

// runtimeState is what a hookRuntime's streams share.
type runtimeState struct {
	counters map[string]uint64 // per-name sequence counters
	freed    []uint32          // references of dropped streams
}

// hookRuntime wraps a runtime and the streams it makes with switchable
// bugs.
type hookRuntime struct {
	rt    impl.Runtime
	state *runtimeState

	sample     func(st *runtimeState, name string, x *streams.Sample) // rewrites each published sample
	ungated    bool                                                   // every stream carries source timestamps
	stallAfter uint64                                                 // stop delivering after this many
	refShift   uint32                                                 // references allocated this much lower
	reuse      bool                                                   // a dropped stream's reference is reused
	renumber   bool                                                   // republished samples renumbered
	keepRef    bool                                                   // republished samples keep their stream_ref
	localConn  bool                                                   // adopted streams on the local connection
}

func (h *hookRuntime) ref(r uint32) uint32 {
	if h.reuse && len(h.state.freed) > 0 {
		r = h.state.freed[0]
		h.state.freed = h.state.freed[1:]
	}
	return r - h.refShift
}

func (h *hookRuntime) Open(name, domain string) (impl.ProducedStream, error) {
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
}

func (s *hookStream) Ref() uint32 { return s.ref }

func (s *hookStream) Close() { s.h.state.freed = append(s.h.state.freed, s.ref+s.h.refShift) }

func (s *hookStream) Publish(sourceNs uint64, values []byte, deliver func(streams.Sample)) {
	s.n++
	stalled := s.h.stallAfter > 0 && s.n > s.h.stallAfter
	s.ProducedStream.Publish(sourceNs, values, func(x streams.Sample) {
		x.StreamRef = s.ref
		if s.h.sample != nil {
			s.h.sample(s.h.state, s.name, &x)
		}
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

// bugBook is a record of announcements with switchable bugs. With every
// switch off it matches as streams.Announcements does.
type bugBook struct {
	update     bool // a second announcement replaces the first
	fallback   bool // an unknown reference matches the connection's latest
	byName     bool // every sample matches the connection's latest
	latestOnly bool // a list holds only the latest under the name
	refOnly    bool // keyed on the reference alone
	anyName    bool // a list ignores the name

	keys   []bugKey
	byKey  map[bugKey]streams.Announcement
	latest map[streams.ConnID]bugKey
}

func (b *bugBook) key(conn streams.ConnID, ref uint32) bugKey {
	if b.refOnly {
		return bugKey{ref: ref}
	}
	return bugKey{conn: conn, ref: ref}
}

func (b *bugBook) Add(conn streams.ConnID, a streams.Announcement) (bool, error) {
	if b.byKey == nil {
		b.byKey, b.latest = map[bugKey]streams.Announcement{}, map[streams.ConnID]bugKey{}
	}
	k := b.key(conn, a.StreamRef)
	if _, ok := b.byKey[k]; ok && !b.update {
		return false, nil
	} else if !ok {
		b.keys = append(b.keys, k)
	}
	b.byKey[k] = a
	b.latest[conn] = k
	return true, nil
}

func (b *bugBook) Lookup(conn streams.ConnID, ref uint32) (streams.Announcement, bool) {
	if k, ok := b.latest[conn]; ok && b.byName {
		return b.byKey[k], true
	}
	if a, ok := b.byKey[b.key(conn, ref)]; ok {
		return a, true
	}
	if k, ok := b.latest[conn]; ok && b.fallback {
		return b.byKey[k], true
	}
	return streams.Announcement{}, false
}

func (b *bugBook) ByName(name string) []streams.Announcement {
	var out []streams.Announcement
	for _, k := range b.keys {
		if a := b.byKey[k]; a.Name == name || b.anyName {
			out = append(out, a)
		}
	}
	if b.latestOnly && len(out) > 1 {
		out = out[len(out)-1:]
	}
	return out
}

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
