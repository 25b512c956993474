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
	"github.com/conform-suite/conform/reports/evidence"
)

// The figures the subscriber cases choose and give the SUT.
const (
	// readTimeout is the socket read timeout a case asks the SUT's
	// subscriber for (LiveSubscribe.read_timeout_ms): ranvier-wire §6.5's
	// 30 seconds, compressed.
	readTimeout = 100 * time.Millisecond
	// silence is a silence longer than the socket timeout: to readTimeout
	// what 31 seconds is to 30, with a margin for the SUT's own timer so
	// that its timeout has surely fired, three times over.
	silence = 3 * readTimeout
	// byteGap paces adversarial writes so that the far end reads them apart.
	byteGap = 200 * time.Microsecond
	// hourNs is an hour, as the timestamps conform stamps say it.
	hourNs = uint64(time.Hour)
)

// subscriberCases are the cases of the SUT as a data-plane subscriber:
// conform listens as the publisher, the SUT dials it (live op subscribe),
// and the SUT reports what it received (live op report).
func subscriberCases(k *cases.Kit) []cases.Case {
	return []cases.Case{
		k.Must(func() cases.Case {
			return cases.Case{
				ID:    "live/4.1/subscriber-request-first-and-only",
				Title: "A subscriber sends one Request, naming the stream it asked for, as the first frame, and nothing else on the connection",
				Spec:  "ranvier-wire §4.1, §3.1",
				Requirements: judges(subscriberPins, "ranvier-wire§4.1#2", "ranvier-wire§4.1#3", "ranvier-wire§3.1#1",
					"ranvier-wire§3.1#5", "ranvier-wire§3.3#4"),
				Run: subRequestFirstAndOnly,
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:    "live/1.3/subscriber-byte-at-a-time",
				Title: "A subscriber reads the same frames when the publisher's bytes arrive one per write, Nagle off",
				Spec:  "ranvier-wire §1.3, §6.1",
				Requirements: judges(subscriberPins, "ranvier-wire§1.3#1", "ranvier-wire§1.3#2", "ranvier-wire§1.3#4",
					"ranvier-wire§1.3#6", "ranvier-wire§6.1#1", "ranvier-wire§6.1#3", "ranvier-wire§6.1#5"),
				Run: func(t *cases.T) { subSegmented(t, peer.ByteAtATime(byteGap)) },
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "live/1.3/subscriber-prefix-split",
				Title:        "A subscriber waits for the rest of a length prefix split across writes",
				Spec:         "ranvier-wire §1.3, §1.2",
				Requirements: judges(subscriberPins, "ranvier-wire§1.3#2", "ranvier-wire§1.2#1", "ranvier-wire§6.1#1"),
				Run:          func(t *cases.T) { subSegmented(t, peer.SplitPrefix(2, byteGap)) },
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "live/1.3/subscriber-many-frames-per-write",
				Title:        "A subscriber yields every complete frame of one read, when all of them arrive in one write",
				Spec:         "ranvier-wire §1.3",
				Requirements: judges(subscriberPins, "ranvier-wire§1.3#7", "ranvier-wire§1.3#5"),
				Run:          func(t *cases.T) { subSegmented(t, peer.Coalesced()) },
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "live/1.3/subscriber-random-segmentation",
				Title:        "A subscriber reads the same frames when the bytes arrive cut at random points (seeded)",
				Spec:         "ranvier-wire §1.3",
				Requirements: judges(subscriberPins, "ranvier-wire§1.3#6"),
				Run:          func(t *cases.T) { subSegmented(t, peer.Random(t.Rand().Uint64(), 9, byteGap)) },
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:    "live/6.4/subscriber-empty-frame-skipped",
				Title: "A subscriber skips an empty Frame (00 00 00 00) and keeps the connection",
				Spec:  "ranvier-wire §6.4, §1.2",
				Requirements: judges(subscriberPins, "ranvier-wire§6.4#1", "ranvier-wire§6.4#2", "ranvier-wire§1.2#4",
					"ranvier-wire§1.2#5", "ranvier-streams§3.6a#1"),
				Run: func(t *cases.T) { subSkips(t, "an empty Frame", peer.EmptyFrame()) },
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:    "live/6.3/subscriber-undecodable-skipped",
				Title: "A subscriber skips a whole frame whose payload does not decode and keeps the connection",
				Spec:  "ranvier-wire §6.3, §7.5",
				Requirements: judges(subscriberPins, "ranvier-wire§6.3#1", "ranvier-wire§6.3#5", "ranvier-wire§7.5#1",
					"ranvier-streams§3.6a#1"),
				Run: func(t *cases.T) { subSkips(t, "an undecodable payload", peer.Garbage()) },
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:    "live/3.6a/subscriber-unreadable-counted-per-connection",
				Title: "A subscriber counts every unreadable frame — undecodable, empty, an unknown variant — on the connection it arrived on",
				Spec:  "ranvier-streams §3.6a, ranvier-wire §6.3, §6.4, §7.3",
				Requirements: judges(subscriberPins, "ranvier-streams§3.6a#2", "ranvier-streams§3.6a#3", "ranvier-streams§3.6a#7",
					"ranvier-wire§7.3#1", "ranvier-wire§7.3#2", "reconstructed§contradictions#1"),
				Run: subUnreadableCounted,
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:    "live/6.2/subscriber-too-large-closes",
				Title: "After a prefix above 16 MiB a subscriber closes the connection, counts nothing unreadable, and does not resynchronise on the frames after it",
				Spec:  "ranvier-wire §6.2, §2, ranvier-streams §3.6a",
				Requirements: judges(subscriberPins, "ranvier-wire§6.2#1", "ranvier-wire§6.2#2", "ranvier-wire§2#2", "ranvier-wire§1.3#3",
					"ranvier-streams§3.6a#5", "ranvier-streams§3.6a#6"),
				Run: subTooLargeCloses,
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "live/6.5/subscriber-silence-does-not-close",
				Title:        "A silence longer than the socket timeout (31 s against 30, compressed through read_timeout_ms) does not close the subscriber's connection",
				Spec:         "ranvier-wire §6.5",
				Requirements: judges(subscriberPins, "ranvier-wire§6.5#2"),
				Run:          subSilence,
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "live/4.7/subscriber-end-of-stream",
				Title:        "A subscriber treats end of stream as the connection ending, not as an error, with every sample before it delivered",
				Spec:         "ranvier-wire §4.7",
				Requirements: judges(subscriberPins, "ranvier-wire§4.7#3"),
				Run:          subEndOfStream,
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "live/1.3/subscriber-truncated-tail-dropped",
				Title:        "A subscriber makes nothing of bytes left buffered when the connection ends: no frame delivered, none counted unreadable",
				Spec:         "ranvier-wire §1.3, ranvier-streams §3.6a",
				Requirements: judges(subscriberPins, "ranvier-wire§1.3#9", "ranvier-streams§3.6a#2"),
				Run:          subTruncatedTail,
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:    "live/2.2/subscriber-two-publishers-one-name",
				Title: "Two publishers under one name, both stream_ref 1, are two streams keyed by (connection, stream_ref): no duplicates, each with its own schema",
				Spec:  "ranvier-streams §2.2, §2.4, §6.7, ranvier-wire §4.3",
				Requirements: judges(subscriberPins, "ranvier-streams§2.2#2", "ranvier-streams§2.2#3", "ranvier-streams§2.2#4",
					"ranvier-streams§2.4#1", "ranvier-streams§2.4#2", "ranvier-streams§6.7#1", "ranvier-streams§6.7#2",
					"ranvier-wire§4.3#19", "ranvier-wire§4.3#20"),
				Run: subTwoPublishers,
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:    "live/6.5/subscriber-unannounced-schema-unknown",
				Title: "A sample whose stream_ref was never announced is accepted with its schema unknown, never borrowed from a stream under the same name",
				Spec:  "ranvier-streams §6.5, ranvier-wire §4.2",
				Requirements: judges(subscriberPins, "ranvier-streams§6.5#1", "ranvier-streams§6.5#2", "ranvier-streams§6.5#3",
					"ranvier-wire§4.2#5", "ranvier-wire§4.2#6"),
				Run: subUnannounced,
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:    "live/4.2/subscriber-stream-starts-an-hour-in",
				Title: "A stream announced an hour (compressed) into the session is read against its own announcement, beside the stream already flowing",
				Spec:  "ranvier-wire §4.2, ranvier-streams §6.7, §3.7",
				Requirements: judges(subscriberPins, "ranvier-wire§4.2#3", "ranvier-streams§6.7#2", "ranvier-streams§6.3#5",
					"ranvier-wire§6.5#2"),
				Run: subHourIn,
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "live/3.3/subscriber-gap-counted",
				Title:        "A subscriber counts a gap on the socket as it arrives: 1, 2, 4 is missing 1, breaks 1",
				Spec:         "ranvier-streams §3.3, §3.1",
				Requirements: judges(subscriberPins, "ranvier-streams§3.3#1", "ranvier-streams§3.3#2", "ranvier-streams§3.3#5"),
				Run:          subGap,
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "live/4.3/subscriber-stream-ref-zero-unattributed",
				Title:        "A sample with stream_ref 0 is attributed to no stream, changes no gap counter and adds no distinct stream",
				Spec:         "ranvier-wire §4.3, ranvier-streams §3.6",
				Requirements: judges(subscriberPins, "ranvier-wire§4.3#18", "ranvier-streams§3.6#1"),
				Run:          subRefZero,
			}
		}),
		k.Should(func() cases.Case {
			return cases.Case{
				ID:           "live/3.7/subscriber-distinct-stream-count",
				Title:        "A subscription reports how many distinct (connection, stream_ref) pairs have fed it",
				Spec:         "ranvier-streams §3.7, §2.2",
				Requirements: judges(subscriberPins, "ranvier-streams§3.7#2"),
				Run:          subDistinctStreams,
			}
		}),
	}
}

// sub is a subscriber conversation: conform's publishers, and the SUT's
// subscriber dialled to each of them.
type sub struct {
	t      *cases.T
	name   string
	handle uint32
	pubs   []*peer.PeerPublisher
	conns  []*peer.Conn
	ids    []uint64
}

func newSub(t *cases.T, name string) *sub { return &sub{t: t, name: name} }

// close closes the SUT's subscriber, then conform's publishers.
func (s *sub) close() {
	liveClose(s.t, s.handle, 0)
	for _, p := range s.pubs {
		p.Close()
	}
}

// connect starts one more publisher, has the SUT's subscriber dial it with
// the given read timeout (0: the SUT's default), and checks the Request
// (ranvier-wire §4.1). It returns the connection's index.
func (s *sub) connect(rto time.Duration) int {
	t := s.t
	pp, err := peer.ListenPublisher(t.Context(), peer.Limits{})
	if err != nil {
		t.Harnessf("%v", err)
	}
	s.pubs = append(s.pubs, pp)
	r := liveOp(t, &conformpb.LiveOp{Op: &conformpb.LiveOp_Subscribe{Subscribe: &conformpb.LiveSubscribe{
		Subscriber: s.handle, Address: pp.Addr(), StreamName: s.name,
		ReadTimeoutMs: millis(rto), DialTimeoutMs: millis(owed(t)),
	}}}).GetSubscribed()
	switch {
	case r == nil:
		t.Protocolf("subscribe was answered with another result")
	case r.GetSubscriber() == 0:
		t.Protocolf("subscribe answered the handle 0, which never names a subscriber (live.proto)")
	case s.handle != 0 && r.GetSubscriber() != s.handle:
		t.Protocolf("subscribe to add a connection to subscriber %d answered subscriber %d", s.handle, r.GetSubscriber())
	case r.GetConnection() == 0 || slices.Contains(s.ids, r.GetConnection()):
		t.Protocolf("subscribe answered connection %d: a connection identifier is non-zero and unique within its subscriber (live.proto)", r.GetConnection())
	}
	s.handle = r.GetSubscriber()
	ctx, cancel := contextWithin(t.Context(), owed(t))
	defer cancel()
	c, err := pp.Accept(ctx)
	if err != nil {
		t.Fatalf("the subscriber answered subscribe but never dialled the publisher at %s within %v: %v", pp.Addr(), owed(t), err)
	}
	s.conns = append(s.conns, c)
	s.ids = append(s.ids, r.GetConnection())
	rc, err := c.WaitRequest(ctx)
	switch {
	case err != nil:
		t.Fatalf("no Request within %v of the dial (ranvier-wire §4.1): %s", owed(t), describeTranscript(c.Transcript()))
	case rc.DecodeErr != nil:
		t.Fail(reports.Evidence{Message: "the subscriber's first frame is not a Request (ranvier-wire §4.1)", Got: fmt.Sprintf("% x", rc.Payload)})
	case rc.Request.GetStreamName() != s.name:
		t.Fail(evidence.Named("Request.streamName", reports.Evidence{Message: "the Request names another stream (ranvier-wire §4.1)", Expected: s.name, Got: rc.Request.GetStreamName()}))
	}
	return len(s.conns) - 1
}

// send writes frames to connection i cut by seg.
func (s *sub) send(i int, seg peer.Segmentation, frames ...[]byte) {
	paced(s.t, s.conns[i], seg, fmt.Sprintf("%d frames cut %s", len(frames), seg.Name), frames...)
}

// report asks the SUT what its subscriber received, once until holds or
// owed has passed.
func (s *sub) report(until *conformpb.LiveUntil) *conformpb.LiveReport {
	r := liveOp(s.t, &conformpb.LiveOp{Op: &conformpb.LiveOp_Report{Report: &conformpb.LiveReportOp{
		Subscriber: s.handle, Until: until, TimeoutMs: millis(owed(s.t)),
	}}}).GetReport()
	if r == nil {
		s.t.Protocolf("report was answered with another result")
	}
	return r
}

// conn returns the report of connection i; a report that leaves it out is
// recorded as a failure and gives an empty connection.
func (s *sub) conn(r *conformpb.LiveReport, i int) *conformpb.LiveConnection {
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
func (s *sub) samples(r *conformpb.LiveReport, i int, ref uint32) []*conformpb.LiveSample {
	var out []*conformpb.LiveSample
	for _, smp := range r.GetSamples() {
		if smp.GetConnection() == s.ids[i] && smp.GetStreamRef() == ref {
			out = append(out, smp)
		}
	}
	return out
}

func streamInfo(ref uint32, name, node, schema string) *messagepb.StreamInfo {
	info := &messagepb.StreamInfo{Name: name, Node: node, StreamRef: ref}
	if schema != "" {
		info.Schema = &messagepb.SchemaInfo{SchemaId: schema}
	}
	return info
}

func announce(ref uint32, name, schema string) []byte {
	return peer.Announce(streamInfo(ref, name, "conform", schema))
}

// sampleValues is what sample seq of stream ref carries, so that a case can
// tell a delivered sample from a corrupted one.
func sampleValues(ref uint32, seq uint64) []byte {
	return fmt.Appendf(nil, "stream %d sample %d", ref, seq)
}

func sample(ref uint32, seq, monoNs uint64) []byte {
	return peer.Sample(&messagepb.Sample{
		MonotonicTimestampNs: monoNs, Sequence: seq, Values: sampleValues(ref, seq), StreamRef: ref,
	})
}

// sampleRun returns the frames of samples from..to of stream ref, stamped
// a millisecond apart from base.
func sampleRun(ref uint32, from, to, base uint64) [][]byte {
	var out [][]byte
	for seq := from; seq <= to; seq++ {
		out = append(out, sample(ref, seq, base+seq*uint64(time.Millisecond)))
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
func (s *sub) checkStream(r *conformpb.LiveReport, i int, ref uint32, want []uint64, schema, why string) {
	got := s.samples(r, i, ref)
	var gotSeqs []uint64
	for _, smp := range got {
		gotSeqs = append(gotSeqs, smp.GetSequence())
	}
	if !slices.Equal(gotSeqs, want) {
		s.t.Fail(evidence.Named("samples[].sequence (this stream_ref on this connection)", reports.Evidence{Message: fmt.Sprintf("stream_ref %d on connection %d: the samples delivered are not the samples sent (%s)", ref, s.ids[i], why),
			Expected: fmt.Sprint(want), Got: fmt.Sprint(gotSeqs)}))
		return
	}
	for _, smp := range got {
		if w := sampleValues(ref, smp.GetSequence()); string(smp.GetValues()) != string(w) {
			s.t.Fail(evidence.Named("samples[].values", reports.Evidence{Message: fmt.Sprintf("sample %d of stream_ref %d arrived with other values", smp.GetSequence(), ref), Expected: string(w), Got: fmt.Sprintf("%q", smp.GetValues())}))
			return
		}
		switch {
		case schema == "" && smp.GetSchemaKnown():
			s.t.Fail(evidence.Named("samples[].schemaKnown", reports.Evidence{Message: fmt.Sprintf("sample %d of stream_ref %d, which was never announced on its connection, is attributed to a schema (ranvier-streams §6.5)", smp.GetSequence(), ref),
				Expected: "schema unknown", Got: fmt.Sprintf("stream %q, schema %q", smp.GetStreamName(), smp.GetSchema().GetSchemaId())}))
			return
		case schema != "" && (!smp.GetSchemaKnown() || smp.GetSchema().GetSchemaId() != schema):
			s.t.Fail(evidence.Named("samples[].schema", reports.Evidence{Message: fmt.Sprintf("sample %d of stream_ref %d is not attributed to its own announcement", smp.GetSequence(), ref),
				Expected: "schema " + schema, Got: describeAttribution(smp)}))
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
func (s *sub) checkOpen(r *conformpb.LiveReport, i int, why string) {
	if c := s.conn(r, i); c.GetState() != conformpb.LiveConnectionState_LIVE_CONNECTION_STATE_OPEN {
		s.t.Fail(evidence.Named("connections[].state", reports.Evidence{Message: "the subscriber ended the connection " + why, Expected: "open", Got: describeConnState(c)}))
	}
}

// checkUnreadable checks that connection i counted want unreadable frames.
func (s *sub) checkUnreadable(r *conformpb.LiveReport, i int, want uint64, why string) {
	if c := s.conn(r, i); c.GetUnreadable() != want {
		s.t.Fail(evidence.Named("connections[].unreadable", reports.Evidence{Message: fmt.Sprintf("connection %d counted %d unreadable frames (%s)", s.ids[i], c.GetUnreadable(), why),
			Expected: fmt.Sprint(want), Got: fmt.Sprint(c.GetUnreadable())}))
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
// field, for the fields the case fixes. The distinct-stream count is not
// among them: reporting it is a SHOULD (ranvier-streams §3.7), judged by
// its own case.
func checkCounters(t *cases.T, got *conformpb.LiveCounters, want map[string]uint64, why string) {
	have := map[string]uint64{
		"missing": got.GetMissing(), "breaks": got.GetBreaks(), "duplicated": got.GetDuplicated(), "reordered": got.GetReordered(),
	}
	for _, k := range []string{"missing", "breaks", "duplicated", "reordered"} {
		w, ok := want[k]
		if ok && have[k] != w {
			t.Fail(evidence.Named("counters", reports.Evidence{Message: fmt.Sprintf("the subscription reports %s %d, want %d (%s)", k, have[k], w, why),
				Expected: fmt.Sprint(want), Got: fmt.Sprintf("missing %d breaks %d duplicated %d reordered %d",
					got.GetMissing(), got.GetBreaks(), got.GetDuplicated(), got.GetReordered())}))
			return
		}
	}
}

func subRequestFirstAndOnly(t *cases.T) {
	s := newSub(t, "gaze")
	defer s.close()
	// A subscriber's own timer is its read timeout; whatever it might send
	// on one fires within the silence below.
	i := s.connect(readTimeout)
	s.send(i, peer.Whole(), append([][]byte{announce(1, "gaze", "conform.v1.Gaze")}, sampleRun(1, 1, 3, 0)...)...)
	s.report(&conformpb.LiveUntil{Samples: 3})
	idle(t, silence)
	ctx, cancel := contextWithin(t.Context(), owed(t))
	defer cancel()
	tr, _ := s.conns[i].Sync(ctx)
	if rc := tr.Request(); rc.ExtraBytes != 0 {
		t.Fail(evidence.Named("the connection after the Request", reports.Evidence{Message: "the subscriber sent more than its Request on the connection (ranvier-wire §4.1)",
			Expected: "nothing after the Request", Got: fmt.Sprintf("%d more bytes, %d more whole frames", rc.ExtraBytes, rc.ExtraFrames)}))
	}
}

// subSegmented delivers an announcement and five samples cut by seg and
// checks every sample arrived intact, in order, with its schema.
func subSegmented(t *cases.T, seg peer.Segmentation) {
	s := newSub(t, "gaze")
	defer s.close()
	i := s.connect(0)
	frames := append([][]byte{announce(1, "gaze", "conform.v1.Gaze")}, sampleRun(1, 1, 5, 0)...)
	s.send(i, seg, frames...)
	r := s.report(&conformpb.LiveUntil{Samples: 5})
	s.checkStream(r, i, 1, seqs(1, 5), "conform.v1.Gaze", "delivered "+seg.Name)
	s.checkOpen(r, i, "while the frames were arriving "+seg.Name)
	if c := s.conn(r, i); c.GetAnnouncements() != 1 || c.GetUnreadable() != 0 {
		t.Fail(evidence.Named("connections[] (announcements, samples, unreadable)", reports.Evidence{Message: "the subscriber read the frames differently when cut " + seg.Name,
			Expected: "1 announcement, 5 samples, 0 unreadable", Got: fmt.Sprintf("%d announcements, %d samples, %d unreadable", c.GetAnnouncements(), c.GetSamples(), c.GetUnreadable())}))
	}
	checkCounters(t, r.GetCounters(), map[string]uint64{"missing": 0, "breaks": 0, "duplicated": 0, "reordered": 0}, "five samples in order")
}

// subSkips puts one unreadable frame between samples and checks the
// subscriber skipped it and kept reading.
func subSkips(t *cases.T, what string, bad []byte) {
	s := newSub(t, "gaze")
	defer s.close()
	i := s.connect(0)
	s.send(i, peer.Whole(), announce(1, "gaze", "conform.v1.Gaze"), sample(1, 1, 1), bad, sample(1, 2, 2), sample(1, 3, 3))
	r := s.report(&conformpb.LiveUntil{Samples: 3})
	s.checkStream(r, i, 1, seqs(1, 3), "conform.v1.Gaze", "with "+what+" between samples 1 and 2")
	s.checkOpen(r, i, "after "+what)
}

func subUnreadableCounted(t *cases.T) {
	s := newSub(t, "gaze")
	defer s.close()
	a := s.connect(0)
	b := s.connect(0)
	// A Frame carrying only a field 3 of wire type 2: a third payload kind
	// this contract does not have (ranvier-wire §7.3).
	unknownVariant := peer.RawFrame([]byte{0x1a, 0x02, 0x08, 0x01})
	s.send(a, peer.Whole(), announce(1, "gaze", "conform.v1.Gaze"), peer.Garbage(), sample(1, 1, 1), peer.EmptyFrame(), unknownVariant, sample(1, 2, 2))
	s.send(b, peer.Whole(), announce(1, "gaze", "conform.v1.Gaze"), sample(1, 1, 1), sample(1, 2, 2))
	r := s.report(&conformpb.LiveUntil{Samples: 4})
	ca, cb := s.conn(r, a), s.conn(r, b)
	if ca.GetUnreadable() != 3 || cb.GetUnreadable() != 0 {
		t.Fail(evidence.Named("connections[].unreadable", reports.Evidence{Message: "unreadable frames are not counted on the connection they arrived on (ranvier-streams §3.6a)",
			Input:    "connection A: an undecodable payload, an empty Frame, a Frame with an unknown variant; connection B: none",
			Expected: "A 3, B 0", Got: fmt.Sprintf("A %d, B %d", ca.GetUnreadable(), cb.GetUnreadable())}))
	}
	s.checkStream(r, a, 1, seqs(1, 2), "conform.v1.Gaze", "around three unreadable frames")
	s.checkOpen(r, a, "after unreadable frames")
}

func subTooLargeCloses(t *cases.T) {
	s := newSub(t, "gaze")
	defer s.close()
	i := s.connect(0)
	s.send(i, peer.Whole(), announce(1, "gaze", "conform.v1.Gaze"), sample(1, 1, 1))
	s.report(&conformpb.LiveUntil{Samples: 1})
	// The too-large prefix, then well-formed frames a resynchronising reader
	// would find.
	s.send(i, peer.Coalesced(), peer.TooLargePrefix(), sample(1, 2, 2), sample(1, 3, 3))
	r := s.report(&conformpb.LiveUntil{Ended: 1})
	c := s.conn(r, i)
	if c.GetState() == conformpb.LiveConnectionState_LIVE_CONNECTION_STATE_OPEN {
		t.Fail(evidence.Named("connections[].state", reports.Evidence{Message: "the subscriber kept the connection open after a prefix claiming 16,777,217 bytes (ranvier-wire §6.2)",
			Input: "01 00 00 01, then two sample frames", Expected: "closed", Got: describeConnState(c)}))
	}
	if got := s.samples(r, i, 1); len(got) != 1 {
		t.Fail(evidence.Named("samples", reports.Evidence{Message: "the subscriber delivered frames after the too-large prefix: it resynchronised (ranvier-wire §6.2)",
			Expected: "sample 1 only", Got: fmt.Sprintf("%d samples", len(got))}))
	}
	s.checkUnreadable(r, i, 0, "a misaligned byte stream is the connection ending, never an unreadable frame (ranvier-streams §3.6a)")
	ctx, cancel := contextWithin(t.Context(), owed(t))
	defer cancel()
	if tr, err := s.conns[i].WaitEnded(ctx); err != nil {
		t.Fail(reports.Evidence{Message: fmt.Sprintf("the subscriber's socket was still open %v after the too-large prefix (ranvier-wire §6.2: it closes the connection)", owed(t)), Got: describeTranscript(tr)})
	}
}

func subSilence(t *cases.T) {
	s := newSub(t, "gaze")
	defer s.close()
	i := s.connect(readTimeout)
	s.send(i, peer.Whole(), announce(1, "gaze", "conform.v1.Gaze"), sample(1, 1, 1))
	s.report(&conformpb.LiveUntil{Samples: 1})
	idle(t, silence)
	r := s.report(nil)
	s.checkOpen(r, i, fmt.Sprintf("during a silence of %v with a read timeout of %v (a 31-second silence against §6.5's 30 seconds, compressed)", silence, readTimeout))
	if t.Failed() {
		return
	}
	s.send(i, peer.Whole(), sample(1, 2, 2), sample(1, 3, 3))
	r = s.report(&conformpb.LiveUntil{Samples: 3})
	s.checkStream(r, i, 1, seqs(1, 3), "conform.v1.Gaze", "samples after the silence")
}

func subEndOfStream(t *cases.T) {
	s := newSub(t, "gaze")
	defer s.close()
	i := s.connect(0)
	s.send(i, peer.Whole(), append([][]byte{announce(1, "gaze", "conform.v1.Gaze")}, sampleRun(1, 1, 3, 0)...)...)
	if err := s.conns[i].CloseWrite(); err != nil {
		t.Harnessf("%v", err)
	}
	r := s.report(&conformpb.LiveUntil{Ended: 1, Samples: 3})
	c := s.conn(r, i)
	if c.GetState() != conformpb.LiveConnectionState_LIVE_CONNECTION_STATE_END_OF_STREAM {
		t.Fail(evidence.Named("connections[].state", reports.Evidence{Message: "end of stream from the publisher is not reported as the connection ending (ranvier-wire §4.7)",
			Expected: conformpb.LiveConnectionState_LIVE_CONNECTION_STATE_END_OF_STREAM.String(), Got: describeConnState(c)}))
	}
	s.checkStream(r, i, 1, seqs(1, 3), "conform.v1.Gaze", "before end of stream")
}

func subTruncatedTail(t *cases.T) {
	s := newSub(t, "gaze")
	defer s.close()
	i := s.connect(0)
	last := sample(1, 2, 2)
	s.send(i, peer.Whole(), announce(1, "gaze", "conform.v1.Gaze"), sample(1, 1, 1), last[:len(last)-3])
	if err := s.conns[i].CloseWrite(); err != nil {
		t.Harnessf("%v", err)
	}
	r := s.report(&conformpb.LiveUntil{Ended: 1})
	s.checkStream(r, i, 1, seqs(1, 1), "conform.v1.Gaze", "the second sample's frame was cut three bytes short by the end of the connection")
	// Whatever stream_ref a frame made from the tail would name — the cut
	// takes stream_ref with it — no sample but the first may arrive.
	if n := len(r.GetSamples()); n != 1 {
		t.Fail(evidence.Named("samples", reports.Evidence{Message: "the subscriber delivered a sample from the bytes left buffered at end of stream (ranvier-wire §1.3: a truncated tail is dropped)",
			Expected: "1 sample", Got: fmt.Sprintf("%d samples", n)}))
	}
	// The tail never arrived whole, so it is no frame at all: not even an
	// unreadable one (ranvier-streams §3.6a counts frames that arrived
	// whole; ranvier-wire §1.3: no frame is assembled from those bytes).
	s.checkUnreadable(r, i, 0, "the bytes left at end of stream were handed to the decoder as a frame")
	if c := s.conn(r, i); c.GetState() == conformpb.LiveConnectionState_LIVE_CONNECTION_STATE_OPEN {
		t.Fail(reports.Evidence{Message: "the connection is still reported open after end of stream (ranvier-wire §4.7)", Got: describeConnState(c)})
	}
}

func subTwoPublishers(t *cases.T) {
	s := newSub(t, "trial.events")
	defer s.close()
	a := s.connect(0)
	b := s.connect(0)
	s.send(a, peer.Whole(), peer.Announce(streamInfo(1, "trial.events", "stimulus", "conform.v1.Stimulus")))
	s.send(b, peer.Whole(), peer.Announce(streamInfo(1, "trial.events", "buttons", "conform.v1.Button")))
	s.report(&conformpb.LiveUntil{Frames: 2})
	// Alternate, as ranvier-streams §2.4's worked example does, waiting for
	// each sample so that the arrivals interleave.
	for seq := uint64(1); seq <= 3; seq++ {
		for k, i := range []int{a, b} {
			s.send(i, peer.Whole(), sample(1, seq, seq))
			s.report(&conformpb.LiveUntil{Samples: (seq-1)*2 + uint64(k) + 1})
		}
	}
	r := s.report(&conformpb.LiveUntil{Samples: 6})
	checkCounters(t, r.GetCounters(), map[string]uint64{"missing": 0, "breaks": 0, "duplicated": 0, "reordered": 0},
		"two publishers, each stream_ref 1, alternating 1, 1, 2, 2, 3, 3: keyed by (connection, stream_ref) both runs are clean")
	s.checkStream(r, a, 1, seqs(1, 3), "conform.v1.Stimulus", "the first publisher's stream")
	s.checkStream(r, b, 1, seqs(1, 3), "conform.v1.Button", "the second publisher's stream")
}

func subUnannounced(t *cases.T) {
	s := newSub(t, "gaze")
	defer s.close()
	i := s.connect(0)
	s.send(i, peer.Whole(), announce(1, "gaze", "conform.v1.Gaze"), sample(1, 1, 1), sample(2, 1, 1), sample(1, 2, 2), sample(2, 2, 2))
	r := s.report(&conformpb.LiveUntil{Samples: 4})
	s.checkStream(r, i, 1, seqs(1, 2), "conform.v1.Gaze", "the announced stream")
	s.checkStream(r, i, 2, seqs(1, 2), "", "stream_ref 2 was never announced; stream_ref 1 under the same name was")
}

func subHourIn(t *cases.T) {
	s := newSub(t, "gaze")
	defer s.close()
	i := s.connect(readTimeout)
	s.send(i, peer.Whole(), append([][]byte{announce(1, "gaze", "conform.v1.Gaze")}, sampleRun(1, 1, 3, 0)...)...)
	s.report(&conformpb.LiveUntil{Samples: 3})
	// An hour of session, compressed: longer than the socket timeout the
	// subscriber was given, while the timestamps say an hour.
	idle(t, silence)
	if s.checkOpen(s.report(nil), i, "across an hour (compressed) with no frames"); t.Failed() {
		return
	}
	frames := [][]byte{announce(2, "gaze", "conform.v1.Pupil")}
	frames = append(frames, sampleRun(2, 1, 2, hourNs)...)
	frames = append(frames, sampleRun(1, 4, 5, hourNs)...)
	s.send(i, peer.SplitPrefix(3, byteGap), frames...)
	r := s.report(&conformpb.LiveUntil{Samples: 7})
	s.checkStream(r, i, 1, seqs(1, 5), "conform.v1.Gaze", "the stream flowing from the start")
	s.checkStream(r, i, 2, seqs(1, 2), "conform.v1.Pupil", "the stream announced an hour in")
	checkCounters(t, r.GetCounters(), map[string]uint64{"missing": 0, "breaks": 0, "duplicated": 0}, "two clean streams on one connection")
}

func subGap(t *cases.T) {
	s := newSub(t, "gaze")
	defer s.close()
	i := s.connect(0)
	s.send(i, peer.Whole(), announce(1, "gaze", "conform.v1.Gaze"), sample(1, 1, 1), sample(1, 2, 2), sample(1, 4, 4))
	r := s.report(&conformpb.LiveUntil{Samples: 3})
	checkCounters(t, r.GetCounters(), map[string]uint64{"missing": 1, "breaks": 1, "duplicated": 0, "reordered": 0}, "sequences 1, 2, 4 on one stream")
}

func subRefZero(t *cases.T) {
	s := newSub(t, "gaze")
	defer s.close()
	i := s.connect(0)
	s.send(i, peer.Whole(), announce(1, "gaze", "conform.v1.Gaze"), sample(1, 1, 1), sample(0, 7, 2), sample(1, 2, 3))
	r := s.report(&conformpb.LiveUntil{Samples: 3})
	for _, smp := range s.samples(r, i, 0) {
		if smp.GetSchemaKnown() {
			t.Fail(evidence.Named("samples[].schemaKnown", reports.Evidence{Message: "a sample with stream_ref 0 is attributed to a stream (ranvier-wire §4.3)", Expected: "schema unknown", Got: describeAttribution(smp)}))
		}
	}
	if len(s.samples(r, i, 0)) != 1 {
		t.Failf("the sample with stream_ref 0 was not accepted: %d such samples reported, want 1", len(s.samples(r, i, 0)))
	}
	s.checkStream(r, i, 1, seqs(1, 2), "conform.v1.Gaze", "around a sample naming no stream")
	checkCounters(t, r.GetCounters(), map[string]uint64{"missing": 0, "breaks": 0, "duplicated": 0, "reordered": 0}, "a sample with stream_ref 0 changes no counter")
	// Reporting the distinct-stream count is a SHOULD; raising it for a
	// sample that names no stream is what §3.6 forbids. A subscription
	// that reports no count has raised nothing.
	if n := r.GetCounters().GetStreams(); n > 1 {
		t.Fail(evidence.Named("counters.streams", reports.Evidence{Message: "a sample with stream_ref 0 raised the distinct-stream count (ranvier-streams §3.6)",
			Expected: "at most 1 (stream_ref 1 on the one connection)", Got: fmt.Sprint(n)}))
	}
}

func subDistinctStreams(t *cases.T) {
	s := newSub(t, "gaze")
	defer s.close()
	a := s.connect(0)
	b := s.connect(0)
	s.send(a, peer.Whole(), announce(1, "gaze", "conform.v1.Gaze"), announce(2, "gaze", "conform.v1.Pupil"), sample(1, 1, 1), sample(2, 1, 1))
	s.send(b, peer.Whole(), announce(1, "gaze", "conform.v1.Gaze"), sample(1, 1, 1))
	r := s.report(&conformpb.LiveUntil{Samples: 3})
	if n := r.GetCounters().GetStreams(); n != 3 {
		t.Fail(evidence.Named("counters.streams", reports.Evidence{Message: "the subscription does not report the distinct (connection, stream_ref) pairs that fed it (ranvier-streams §3.7)",
			Input: "connection A: stream_refs 1 and 2; connection B: stream_ref 1", Expected: "3", Got: fmt.Sprint(n)}))
	}
}
