package live

import (
	"fmt"
	"slices"
	"time"

	"github.com/conform-suite/conform/cases"
	"github.com/conform-suite/conform/live/peer"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	messagepb "github.com/conform-suite/conform/proto/ranvier/message/v1"
	"github.com/conform-suite/conform/reports"
)

// subscriberCases are the cases of the SUT as a data-plane subscriber:
// conform listens as the publisher, the SUT dials it (live op subscribe),
// and the SUT reports what it received (live op report).
func subscriberCases() []cases.Case {
	return []cases.Case{
		{
			ID:    "live/4.1/subscriber-request-first-and-only",
			Title: "A subscriber sends one Request, naming the stream it asked for, as the first frame, and nothing else on the connection",
			Spec:  "ranvier-wire §4.1", Level: reports.MUST,
			Run: subRequestFirstAndOnly,
		},
		{
			ID:    "live/1.3/subscriber-byte-at-a-time",
			Title: "A subscriber reads the same frames when the publisher's bytes arrive one per write, Nagle off",
			Spec:  "ranvier-wire §1.3, §1.1", Level: reports.MUST,
			Run: func(t *cases.T) { subSegmented(t, peer.ByteAtATime(dpGap)) },
		},
		{
			ID:    "live/1.3/subscriber-prefix-split",
			Title: "A subscriber waits for the rest of a length prefix split across writes",
			Spec:  "ranvier-wire §1.3", Level: reports.MUST,
			Run: func(t *cases.T) { subSegmented(t, peer.SplitPrefix(2, dpGap)) },
		},
		{
			ID:    "live/1.3/subscriber-many-frames-per-write",
			Title: "A subscriber yields every complete frame of one read, when all of them arrive in one write",
			Spec:  "ranvier-wire §1.3", Level: reports.MUST,
			Run: func(t *cases.T) { subSegmented(t, peer.Coalesced()) },
		},
		{
			ID:    "live/1.3/subscriber-random-segmentation",
			Title: "A subscriber reads the same frames when the bytes arrive cut at random points (seeded)",
			Spec:  "ranvier-wire §1.3, §1.1", Level: reports.MUST,
			Run: func(t *cases.T) { subSegmented(t, peer.Random(t.Rand().Uint64(), 9, dpGap)) },
		},
		{
			ID:    "live/6.4/subscriber-empty-frame-skipped",
			Title: "A subscriber skips an empty Frame (00 00 00 00) and keeps the connection",
			Spec:  "ranvier-wire §6.4, §1.2", Level: reports.MUST,
			Run: func(t *cases.T) { subSkips(t, "an empty Frame", peer.EmptyFrame()) },
		},
		{
			ID:    "live/6.3/subscriber-undecodable-skipped",
			Title: "A subscriber skips a whole frame whose payload does not decode and keeps the connection",
			Spec:  "ranvier-wire §6.3, §7.5", Level: reports.MUST,
			Run: func(t *cases.T) { subSkips(t, "an undecodable payload", peer.Garbage()) },
		},
		{
			ID:    "live/3.6a/subscriber-unreadable-counted-per-connection",
			Title: "A subscriber counts every unreadable frame — undecodable, empty, an unknown variant — on the connection it arrived on",
			Spec:  "ranvier-streams §3.6a, ranvier-wire §6.3, §6.4, §7.3; RECONSTRUCTED §4", Level: reports.MUST,
			Tags: []string{"reconstructed"},
			Run:  subUnreadableCounted,
		},
		{
			ID:    "live/6.2/subscriber-too-large-closes",
			Title: "After a prefix above 16 MiB a subscriber closes the connection and does not resynchronise on the frames after it",
			Spec:  "ranvier-wire §6.2, §2", Level: reports.MUST,
			Run: subTooLargeCloses,
		},
		{
			ID:    "live/6.5/subscriber-silence-does-not-close",
			Title: "A silence longer than the socket timeout (31 s, compressed) does not close the subscriber's connection",
			Spec:  "ranvier-wire §6.5", Level: reports.MUST,
			Run: subSilence,
		},
		{
			ID:    "live/4.7/subscriber-end-of-stream",
			Title: "A subscriber treats end of stream as the connection ending, not as an error, with every sample before it delivered",
			Spec:  "ranvier-wire §4.7", Level: reports.MUST,
			Run: subEndOfStream,
		},
		{
			ID:    "live/1.3/subscriber-truncated-tail-dropped",
			Title: "A subscriber delivers no frame from bytes left buffered when the connection ends",
			Spec:  "ranvier-wire §1.3", Level: reports.MUST,
			Run: subTruncatedTail,
		},
		{
			ID:    "live/2.2/subscriber-two-publishers-one-name",
			Title: "Two publishers under one name, both stream_ref 1, are two streams keyed by (connection, stream_ref): no duplicates, each with its own schema",
			Spec:  "ranvier-streams §2.2, §2.4, §6.7, ranvier-wire §4.3", Level: reports.MUST,
			Run: subTwoPublishers,
		},
		{
			ID:    "live/6.5/subscriber-unannounced-schema-unknown",
			Title: "A sample whose stream_ref was never announced is accepted with its schema unknown, never borrowed from a stream under the same name",
			Spec:  "ranvier-streams §6.5, ranvier-wire §4.2", Level: reports.MUST,
			Run: subUnannounced,
		},
		{
			ID:    "live/4.2/subscriber-stream-starts-an-hour-in",
			Title: "A stream announced an hour (compressed) into the session is read against its own announcement, beside the stream already flowing",
			Spec:  "ranvier-wire §4.2, ranvier-streams §6.3", Level: reports.MUST,
			Run: subHourIn,
		},
		{
			ID:    "live/3.3/subscriber-gap-counted",
			Title: "A subscriber counts a gap on the socket as it arrives: 1, 2, 4 is missing 1, breaks 1",
			Spec:  "ranvier-streams §3.3, §3.1", Level: reports.MUST,
			Run: subGap,
		},
		{
			ID:    "live/4.3/subscriber-stream-ref-zero-unattributed",
			Title: "A sample with stream_ref 0 is attributed to no stream and changes no gap counter",
			Spec:  "ranvier-wire §4.3, ranvier-streams §3.6", Level: reports.MUST,
			Run: subRefZero,
		},
	}
}

// dpSub is a subscriber conversation: conform's publishers, and the SUT's
// subscriber dialled to each of them.
type dpSub struct {
	t      *cases.T
	name   string
	handle uint32
	pubs   []*peer.PeerPublisher
	conns  []*peer.Conn
	ids    []uint64
}

func newDpSub(t *cases.T, name string) *dpSub { return &dpSub{t: t, name: name} }

// close closes the SUT's subscriber, then conform's publishers.
func (s *dpSub) close() {
	liveClose(s.t, s.handle, 0)
	for _, p := range s.pubs {
		p.Close()
	}
}

// connect starts one more publisher, has the SUT's subscriber dial it with
// the given read timeout (0: the SUT's default), and checks the Request
// (§4.1). It returns the connection's index.
func (s *dpSub) connect(readTimeout time.Duration) int {
	t := s.t
	ctx, cancel := dpCtx(t, dpOwed)
	defer cancel()
	pp, err := peer.ListenPublisher(ctx, peer.Limits{})
	if err != nil {
		dpHarness("%v", err)
	}
	s.pubs = append(s.pubs, pp)
	r := liveOp(t, &conformpb.LiveOp{Op: &conformpb.LiveOp_Subscribe{Subscribe: &conformpb.LiveSubscribe{
		Subscriber: s.handle, Address: pp.Addr(), StreamName: s.name,
		ReadTimeoutMs: dpMillis(readTimeout), DialTimeoutMs: dpMillis(dpOwed),
	}}}).GetSubscribed()
	if r == nil {
		t.Protocolf("subscribe was answered with another result")
	}
	if s.handle == 0 {
		s.handle = r.GetSubscriber()
	}
	c, err := pp.Accept(ctx)
	if err != nil {
		dpFatalf(t, "the subscriber never dialled the publisher at %s: %v", pp.Addr(), err)
	}
	s.conns = append(s.conns, c)
	s.ids = append(s.ids, r.GetConnection())
	rc, err := c.WaitRequest(ctx)
	switch {
	case err != nil:
		dpFatalf(t, "no Request within %v of the dial (ranvier-wire §4.1): %s", dpOwed, describeTranscript(c.Transcript()))
	case rc.DecodeErr != nil:
		t.Fail(reports.Evidence{Message: "the subscriber's first frame is not a Request (ranvier-wire §4.1)", Got: fmt.Sprintf("% x", rc.Payload)})
	case rc.Request.GetStreamName() != s.name:
		t.Fail(reports.Evidence{Message: "the Request names another stream", Expected: s.name, Got: rc.Request.GetStreamName()})
	}
	return len(s.conns) - 1
}

// send writes frames to connection i cut by seg. A write the connection
// refuses is recorded: the subscriber went away while owed frames.
func (s *dpSub) send(i int, seg peer.Segmentation, frames ...[]byte) {
	ctx, cancel := dpCtx(s.t, dpOwed+time.Duration(len(frames))*time.Millisecond*50)
	defer cancel()
	if err := s.conns[i].Write(ctx, seg, frames...); err != nil {
		s.t.Failf("writing to the subscriber's connection failed: the subscriber is no longer reading it: %v", err)
	}
}

// report asks the SUT what its subscriber received, once until holds or
// dpOwed has passed.
func (s *dpSub) report(until *conformpb.LiveUntil) *conformpb.LiveReport {
	r := liveOp(s.t, &conformpb.LiveOp{Op: &conformpb.LiveOp_Report{Report: &conformpb.LiveReportOp{
		Subscriber: s.handle, Until: until, TimeoutMs: dpMillis(dpOwed),
	}}}).GetReport()
	if r == nil {
		s.t.Protocolf("report was answered with another result")
	}
	return r
}

// conn returns the report of connection i; a report that leaves it out is
// recorded as a failure and gives an empty connection.
func (s *dpSub) conn(r *conformpb.LiveReport, i int) *conformpb.LiveConnection {
	for _, c := range r.GetConnections() {
		if c.GetConnection() == s.ids[i] {
			return c
		}
	}
	s.t.Failf("the report has no connection %d (the subscribe op named it)", s.ids[i])
	return &conformpb.LiveConnection{}
}

// samples returns the samples of connection i and stream ref, in arrival
// order.
func (s *dpSub) samples(r *conformpb.LiveReport, i int, ref uint32) []*conformpb.LiveSample {
	var out []*conformpb.LiveSample
	for _, smp := range r.GetSamples() {
		if smp.GetConnection() == s.ids[i] && smp.GetStreamRef() == ref {
			out = append(out, smp)
		}
	}
	return out
}

func dpInfo(ref uint32, name, node, schema string) *messagepb.StreamInfo {
	info := &messagepb.StreamInfo{Name: name, Node: node, StreamRef: ref}
	if schema != "" {
		info.Schema = &messagepb.SchemaInfo{SchemaId: schema}
	}
	return info
}

func dpAnnounce(ref uint32, name, schema string) []byte {
	return peer.Announce(dpInfo(ref, name, "conform", schema))
}

// dpSampleValues is what sample seq of stream ref carries, so that a case
// can tell a delivered sample from a corrupted one.
func dpSampleValues(ref uint32, seq uint64) []byte {
	return fmt.Appendf(nil, "stream %d sample %d", ref, seq)
}

func dpSample(ref uint32, seq, monoNs uint64) []byte {
	return peer.Sample(&messagepb.Sample{
		MonotonicTimestampNs: monoNs, Sequence: seq, Values: dpSampleValues(ref, seq), StreamRef: ref,
	})
}

// dpSamples returns the frames of samples from..to of stream ref, stamped
// a millisecond apart from base.
func dpSamples(ref uint32, from, to, base uint64) [][]byte {
	var out [][]byte
	for seq := from; seq <= to; seq++ {
		out = append(out, dpSample(ref, seq, base+seq*uint64(time.Millisecond)))
	}
	return out
}

func seqs(from, to uint64) []uint64 {
	var out []uint64
	for s := from; s <= to; s++ {
		out = append(out, s)
	}
	return out
}

// checkStream checks that connection i delivered exactly the samples want
// of stream ref, in order and intact, each attributed to schema (""
// meaning unknown).
func (s *dpSub) checkStream(r *conformpb.LiveReport, i int, ref uint32, want []uint64, schema, why string) {
	got := s.samples(r, i, ref)
	var gotSeqs []uint64
	for _, smp := range got {
		gotSeqs = append(gotSeqs, smp.GetSequence())
	}
	if !slices.Equal(gotSeqs, want) {
		s.t.Fail(reports.Evidence{Message: fmt.Sprintf("stream_ref %d on connection %d: the samples delivered are not the samples sent (%s)", ref, s.ids[i], why),
			Expected: fmt.Sprint(want), Got: fmt.Sprint(gotSeqs)})
		return
	}
	for _, smp := range got {
		if w := dpSampleValues(ref, smp.GetSequence()); string(smp.GetValues()) != string(w) {
			s.t.Fail(reports.Evidence{Message: fmt.Sprintf("sample %d of stream_ref %d arrived with other values", smp.GetSequence(), ref), Expected: string(w), Got: fmt.Sprintf("%q", smp.GetValues())})
			return
		}
		switch {
		case schema == "" && smp.GetSchemaKnown():
			s.t.Fail(reports.Evidence{Message: fmt.Sprintf("sample %d of stream_ref %d, which was never announced on its connection, is attributed to a schema (ranvier-streams §6.5)", smp.GetSequence(), ref),
				Expected: "schema unknown", Got: fmt.Sprintf("stream %q, schema %q", smp.GetStreamName(), smp.GetSchema().GetSchemaId())})
			return
		case schema != "" && (!smp.GetSchemaKnown() || smp.GetSchema().GetSchemaId() != schema):
			s.t.Fail(reports.Evidence{Message: fmt.Sprintf("sample %d of stream_ref %d is not attributed to its own announcement", smp.GetSequence(), ref),
				Expected: "schema " + schema, Got: describeAttribution(smp)})
			return
		}
	}
}

func describeAttribution(smp *conformpb.LiveSample) string {
	if !smp.GetSchemaKnown() {
		return "schema unknown"
	}
	return fmt.Sprintf("stream %q, schema %q", smp.GetStreamName(), smp.GetSchema().GetSchemaId())
}

// checkOpen checks that connection i is still open.
func (s *dpSub) checkOpen(r *conformpb.LiveReport, i int, why string) {
	if c := s.conn(r, i); c.GetState() != conformpb.LiveConnectionState_LIVE_CONNECTION_STATE_OPEN {
		s.t.Fail(reports.Evidence{Message: "the subscriber ended the connection " + why, Expected: "open", Got: describeConnState(c)})
	}
}

func describeConnState(c *conformpb.LiveConnection) string {
	st := c.GetState().String()
	if c.GetDetail() != "" {
		st += ": " + c.GetDetail()
	}
	return st
}

// checkCounters compares the report's gap counters with want, field by
// field, for the fields the case fixes.
func checkCounters(t *cases.T, got *conformpb.LiveCounters, want map[string]uint64, why string) {
	have := map[string]uint64{
		"missing": got.GetMissing(), "breaks": got.GetBreaks(), "duplicated": got.GetDuplicated(),
		"reordered": got.GetReordered(), "streams": got.GetStreams(),
	}
	for _, k := range []string{"missing", "breaks", "duplicated", "reordered", "streams"} {
		w, ok := want[k]
		if ok && have[k] != w {
			t.Fail(reports.Evidence{Message: fmt.Sprintf("the subscription reports %s %d, want %d (%s)", k, have[k], w, why),
				Expected: fmt.Sprint(want), Got: fmt.Sprintf("missing %d breaks %d duplicated %d reordered %d streams %d",
					got.GetMissing(), got.GetBreaks(), got.GetDuplicated(), got.GetReordered(), got.GetStreams())})
			return
		}
	}
}

func subRequestFirstAndOnly(t *cases.T) {
	s := newDpSub(t, "gaze")
	defer s.close()
	i := s.connect(0)
	s.send(i, peer.Whole(), append([][]byte{dpAnnounce(1, "gaze", "conform.v1.Gaze")}, dpSamples(1, 1, 3, 0)...)...)
	s.report(&conformpb.LiveUntil{Samples: 3})
	ctx, cancel := dpCtx(t, dpQuiet)
	defer cancel()
	tr, _ := s.conns[i].Idle(ctx, dpQuiet)
	rc := tr.Request()
	if rc.ExtraBytes != 0 {
		t.Fail(reports.Evidence{Message: "the subscriber sent more than its Request on the connection (ranvier-wire §4.1)",
			Expected: "nothing after the Request", Got: fmt.Sprintf("%d more bytes, %d more whole frames", rc.ExtraBytes, rc.ExtraFrames)})
	}
}

// subSegmented delivers an announcement and twenty samples cut by seg and
// checks every sample arrived intact, in order, with its schema.
func subSegmented(t *cases.T, seg peer.Segmentation) {
	s := newDpSub(t, "gaze")
	defer s.close()
	i := s.connect(0)
	frames := append([][]byte{dpAnnounce(1, "gaze", "conform.v1.Gaze")}, dpSamples(1, 1, 20, 0)...)
	s.send(i, seg, frames...)
	r := s.report(&conformpb.LiveUntil{Samples: 20})
	s.checkStream(r, i, 1, seqs(1, 20), "conform.v1.Gaze", "delivered "+seg.Name)
	s.checkOpen(r, i, "while the frames were arriving "+seg.Name)
	if c := s.conn(r, i); c.GetAnnouncements() != 1 || c.GetUnreadable() != 0 {
		t.Fail(reports.Evidence{Message: "the subscriber read the frames differently when cut " + seg.Name,
			Expected: "1 announcement, 20 samples, 0 unreadable", Got: fmt.Sprintf("%d announcements, %d samples, %d unreadable", c.GetAnnouncements(), c.GetSamples(), c.GetUnreadable())})
	}
	checkCounters(t, r.GetCounters(), map[string]uint64{"missing": 0, "breaks": 0, "duplicated": 0, "reordered": 0}, "twenty samples in order")
}

// subSkips puts one unreadable frame between samples and checks the
// subscriber skipped it and kept reading.
func subSkips(t *cases.T, what string, bad []byte) {
	s := newDpSub(t, "gaze")
	defer s.close()
	i := s.connect(0)
	s.send(i, peer.Whole(), dpAnnounce(1, "gaze", "conform.v1.Gaze"), dpSample(1, 1, 1), bad, dpSample(1, 2, 2), dpSample(1, 3, 3))
	r := s.report(&conformpb.LiveUntil{Samples: 3})
	s.checkStream(r, i, 1, seqs(1, 3), "conform.v1.Gaze", "with "+what+" between samples 1 and 2")
	s.checkOpen(r, i, "after "+what)
}

func subUnreadableCounted(t *cases.T) {
	s := newDpSub(t, "gaze")
	defer s.close()
	a := s.connect(0)
	b := s.connect(0)
	// A Frame carrying only a field 3 of wire type 2: a third payload kind
	// this contract does not have (ranvier-wire §7.3).
	unknownVariant := peer.RawFrame([]byte{0x1a, 0x02, 0x08, 0x01})
	s.send(a, peer.Whole(), dpAnnounce(1, "gaze", "conform.v1.Gaze"), peer.Garbage(), dpSample(1, 1, 1), peer.EmptyFrame(), unknownVariant, dpSample(1, 2, 2))
	s.send(b, peer.Whole(), dpAnnounce(1, "gaze", "conform.v1.Gaze"), dpSample(1, 1, 1), dpSample(1, 2, 2))
	r := s.report(&conformpb.LiveUntil{Samples: 4})
	ca, cb := s.conn(r, a), s.conn(r, b)
	if ca.GetUnreadable() != 3 || cb.GetUnreadable() != 0 {
		t.Fail(reports.Evidence{Message: "unreadable frames are not counted on the connection they arrived on (ranvier-streams §3.6a)",
			Input:    "connection A: an undecodable payload, an empty Frame, a Frame with an unknown variant; connection B: none",
			Expected: "A 3, B 0", Got: fmt.Sprintf("A %d, B %d", ca.GetUnreadable(), cb.GetUnreadable())})
	}
	s.checkStream(r, a, 1, seqs(1, 2), "conform.v1.Gaze", "around three unreadable frames")
	s.checkOpen(r, a, "after unreadable frames")
}

func subTooLargeCloses(t *cases.T) {
	s := newDpSub(t, "gaze")
	defer s.close()
	i := s.connect(0)
	s.send(i, peer.Whole(), dpAnnounce(1, "gaze", "conform.v1.Gaze"), dpSample(1, 1, 1))
	s.report(&conformpb.LiveUntil{Samples: 1})
	// The too-large prefix, then well-formed frames a resynchronising reader
	// would find.
	s.send(i, peer.Coalesced(), peer.TooLargePrefix(), dpSample(1, 2, 2), dpSample(1, 3, 3))
	r := s.report(&conformpb.LiveUntil{Ended: 1})
	c := s.conn(r, i)
	if c.GetState() == conformpb.LiveConnectionState_LIVE_CONNECTION_STATE_OPEN {
		t.Fail(reports.Evidence{Message: "the subscriber kept the connection open after a prefix claiming 16,777,217 bytes (ranvier-wire §6.2)",
			Input: "01 00 00 01, then two sample frames", Expected: "closed", Got: describeConnState(c)})
	}
	if got := s.samples(r, i, 1); len(got) != 1 {
		t.Fail(reports.Evidence{Message: "the subscriber delivered frames after the too-large prefix: it resynchronised (ranvier-wire §6.2)",
			Expected: "sample 1 only", Got: fmt.Sprintf("%d samples", len(got))})
	}
	ctx, cancel := dpCtx(t, dpOwed)
	defer cancel()
	if tr, err := s.conns[i].WaitEnded(ctx); err != nil {
		t.Fail(reports.Evidence{Message: "the subscriber's socket stayed open after the too-large prefix (ranvier-wire §6.2: it closes the connection)", Got: describeTranscript(tr)})
	}
}

func subSilence(t *cases.T) {
	s := newDpSub(t, "gaze")
	defer s.close()
	i := s.connect(dpReadTimeout)
	s.send(i, peer.Whole(), dpAnnounce(1, "gaze", "conform.v1.Gaze"), dpSample(1, 1, 1))
	s.report(&conformpb.LiveUntil{Samples: 1})
	ctx, cancel := dpCtx(t, dpSilence+time.Second)
	defer cancel()
	s.conns[i].Idle(ctx, dpSilence)
	r := s.report(nil)
	s.checkOpen(r, i, fmt.Sprintf("during a silence of %v with a read timeout of %v (a 31-second silence against §6.5's 30 seconds, compressed)", dpSilence, dpReadTimeout))
	if t.Failed() {
		return
	}
	s.send(i, peer.Whole(), dpSample(1, 2, 2), dpSample(1, 3, 3))
	r = s.report(&conformpb.LiveUntil{Samples: 3})
	s.checkStream(r, i, 1, seqs(1, 3), "conform.v1.Gaze", "samples after the silence")
}

func subEndOfStream(t *cases.T) {
	s := newDpSub(t, "gaze")
	defer s.close()
	i := s.connect(0)
	s.send(i, peer.Whole(), append([][]byte{dpAnnounce(1, "gaze", "conform.v1.Gaze")}, dpSamples(1, 1, 3, 0)...)...)
	if err := s.conns[i].CloseWrite(); err != nil {
		dpHarness("%v", err)
	}
	r := s.report(&conformpb.LiveUntil{Ended: 1, Samples: 3})
	c := s.conn(r, i)
	if c.GetState() != conformpb.LiveConnectionState_LIVE_CONNECTION_STATE_END_OF_STREAM {
		t.Fail(reports.Evidence{Message: "end of stream from the publisher is not reported as the connection ending (ranvier-wire §4.7)",
			Expected: conformpb.LiveConnectionState_LIVE_CONNECTION_STATE_END_OF_STREAM.String(), Got: describeConnState(c)})
	}
	s.checkStream(r, i, 1, seqs(1, 3), "conform.v1.Gaze", "before end of stream")
}

func subTruncatedTail(t *cases.T) {
	s := newDpSub(t, "gaze")
	defer s.close()
	i := s.connect(0)
	last := dpSample(1, 2, 2)
	s.send(i, peer.Whole(), dpAnnounce(1, "gaze", "conform.v1.Gaze"), dpSample(1, 1, 1), last[:len(last)-3])
	if err := s.conns[i].CloseWrite(); err != nil {
		dpHarness("%v", err)
	}
	r := s.report(&conformpb.LiveUntil{Ended: 1})
	s.checkStream(r, i, 1, seqs(1, 1), "conform.v1.Gaze", "the second sample's frame was cut three bytes short by the end of the connection")
	// Whatever stream_ref a frame made from the tail would name — the cut
	// takes stream_ref with it — no sample but the first may arrive.
	if n := len(r.GetSamples()); n != 1 {
		t.Fail(reports.Evidence{Message: "the subscriber delivered a sample from the bytes left buffered at end of stream (ranvier-wire §1.3: a truncated tail is dropped)",
			Expected: "1 sample", Got: fmt.Sprintf("%d samples", n)})
	}
	if c := s.conn(r, i); c.GetState() == conformpb.LiveConnectionState_LIVE_CONNECTION_STATE_OPEN {
		t.Fail(reports.Evidence{Message: "the connection is still reported open after end of stream (ranvier-wire §4.7)", Got: describeConnState(c)})
	}
}

func subTwoPublishers(t *cases.T) {
	s := newDpSub(t, "trial.events")
	defer s.close()
	a := s.connect(0)
	b := s.connect(0)
	s.send(a, peer.Whole(), peer.Announce(dpInfo(1, "trial.events", "stimulus", "conform.v1.Stimulus")))
	s.send(b, peer.Whole(), peer.Announce(dpInfo(1, "trial.events", "buttons", "conform.v1.Button")))
	s.report(&conformpb.LiveUntil{Frames: 2})
	// Alternate, as ranvier-streams §2.4's worked example does, waiting for
	// each sample so that the arrivals interleave.
	for seq := uint64(1); seq <= 3; seq++ {
		for k, i := range []int{a, b} {
			s.send(i, peer.Whole(), dpSample(1, seq, seq))
			s.report(&conformpb.LiveUntil{Samples: (seq-1)*2 + uint64(k) + 1})
		}
	}
	r := s.report(&conformpb.LiveUntil{Samples: 6})
	checkCounters(t, r.GetCounters(), map[string]uint64{"missing": 0, "breaks": 0, "duplicated": 0, "reordered": 0, "streams": 2},
		"two publishers, each stream_ref 1, alternating 1, 1, 2, 2, 3, 3: keyed by (connection, stream_ref) both runs are clean")
	s.checkStream(r, a, 1, seqs(1, 3), "conform.v1.Stimulus", "the first publisher's stream")
	s.checkStream(r, b, 1, seqs(1, 3), "conform.v1.Button", "the second publisher's stream")
}

func subUnannounced(t *cases.T) {
	s := newDpSub(t, "gaze")
	defer s.close()
	i := s.connect(0)
	s.send(i, peer.Whole(), dpAnnounce(1, "gaze", "conform.v1.Gaze"), dpSample(1, 1, 1), dpSample(2, 1, 1), dpSample(1, 2, 2), dpSample(2, 2, 2))
	r := s.report(&conformpb.LiveUntil{Samples: 4})
	s.checkStream(r, i, 1, seqs(1, 2), "conform.v1.Gaze", "the announced stream")
	s.checkStream(r, i, 2, seqs(1, 2), "", "stream_ref 2 was never announced; stream_ref 1 under the same name was")
}

func subHourIn(t *cases.T) {
	s := newDpSub(t, "gaze")
	defer s.close()
	i := s.connect(dpReadTimeout)
	s.send(i, peer.Whole(), append([][]byte{dpAnnounce(1, "gaze", "conform.v1.Gaze")}, dpSamples(1, 1, 3, 0)...)...)
	s.report(&conformpb.LiveUntil{Samples: 3})
	ctx, cancel := dpCtx(t, dpHour+time.Second)
	defer cancel()
	s.conns[i].Idle(ctx, dpHour)
	if s.checkOpen(s.report(nil), i, "across an hour (compressed) with no frames"); t.Failed() {
		return
	}
	frames := [][]byte{dpAnnounce(2, "gaze", "conform.v1.Pupil")}
	frames = append(frames, dpSamples(2, 1, 2, hourNs)...)
	frames = append(frames, dpSamples(1, 4, 5, hourNs)...)
	s.send(i, peer.SplitPrefix(3, dpGap), frames...)
	r := s.report(&conformpb.LiveUntil{Samples: 7})
	s.checkStream(r, i, 1, seqs(1, 5), "conform.v1.Gaze", "the stream flowing from the start")
	s.checkStream(r, i, 2, seqs(1, 2), "conform.v1.Pupil", "the stream announced an hour in")
	checkCounters(t, r.GetCounters(), map[string]uint64{"missing": 0, "breaks": 0, "duplicated": 0, "streams": 2}, "two clean streams on one connection")
}

func subGap(t *cases.T) {
	s := newDpSub(t, "gaze")
	defer s.close()
	i := s.connect(0)
	s.send(i, peer.Whole(), dpAnnounce(1, "gaze", "conform.v1.Gaze"), dpSample(1, 1, 1), dpSample(1, 2, 2), dpSample(1, 4, 4))
	r := s.report(&conformpb.LiveUntil{Samples: 3})
	checkCounters(t, r.GetCounters(), map[string]uint64{"missing": 1, "breaks": 1, "duplicated": 0, "reordered": 0, "streams": 1}, "sequences 1, 2, 4 on one stream")
}

func subRefZero(t *cases.T) {
	s := newDpSub(t, "gaze")
	defer s.close()
	i := s.connect(0)
	s.send(i, peer.Whole(), dpAnnounce(1, "gaze", "conform.v1.Gaze"), dpSample(1, 1, 1), dpSample(0, 7, 2), dpSample(1, 2, 3))
	r := s.report(&conformpb.LiveUntil{Samples: 3})
	for _, smp := range s.samples(r, i, 0) {
		if smp.GetSchemaKnown() {
			t.Fail(reports.Evidence{Message: "a sample with stream_ref 0 is attributed to a stream (ranvier-wire §4.3)", Expected: "schema unknown", Got: describeAttribution(smp)})
		}
	}
	if len(s.samples(r, i, 0)) != 1 {
		t.Failf("the sample with stream_ref 0 was not accepted: %d such samples reported, want 1", len(s.samples(r, i, 0)))
	}
	s.checkStream(r, i, 1, seqs(1, 2), "conform.v1.Gaze", "around a sample naming no stream")
	checkCounters(t, r.GetCounters(), map[string]uint64{"missing": 0, "breaks": 0, "duplicated": 0, "reordered": 0, "streams": 1}, "a sample with stream_ref 0 changes no counter")
}
