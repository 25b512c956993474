package live

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/conform-suite/conform/cases"
	"github.com/conform-suite/conform/live/peer"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	messagepb "github.com/conform-suite/conform/proto/ranvier/message/v1"
	"github.com/conform-suite/conform/reports"
	"google.golang.org/protobuf/encoding/protowire"
)

// How the publisher cases watch. An observed device (conform run --peer)
// publishes on its own schedule, so those cases listen for dpObserve and
// judge whatever arrived.
const (
	dpObserve = 500 * time.Millisecond
	// dpSlowPause is how long the slow-reader cases stop reading: long
	// enough for the publisher's socket buffers to fill and its writes to
	// go partial, far shorter than §6.5's patience.
	dpSlowPause = time.Second
	// dpSmallBuffer is the socket buffer both ends of a slow-reader case
	// ask for, so that push-back comes after little data.
	dpSmallBuffer = 8 << 10
)

// publisherCases are the cases of the SUT as a data-plane publisher: the SUT
// listens (live op listen_publisher) and publishes (live op publish), and
// conform dials as the subscriber and judges the wire. The cases marked
// observable also run against a device observed with conform run --peer:
// they judge only what the device sends.
func publisherCases() []cases.Case {
	return []cases.Case{
		{
			ID:    "live/4.1/publisher-nothing-before-request",
			Title: "A publisher sends nothing on a connection before it has read the Request, even while publishing",
			Spec:  "ranvier-wire §4.1", Level: reports.MUST,
			Run: pubNothingBeforeRequest,
		},
		{
			ID:    "live/6.3/publisher-announces-every-stream",
			Title: "A connection announces every stream under the requested name before it sends any sample, not only the first one found",
			Spec:  "ranvier-streams §6.3, ranvier-wire §4.2", Level: reports.MUST,
			Run: pubAnnouncesEvery,
		},
		{
			ID:    "live/4.2/publisher-announce-before-sample",
			Title: "Every sample's stream_ref is announced on the connection before that sample",
			Spec:  "ranvier-wire §4.2", Level: reports.MUST,
			Run: pubAnnounceBeforeSample,
		},
		{
			ID:    "live/6.4/publisher-no-repeated-announcement",
			Title: "A publisher announces each stream once per connection, never again",
			Spec:  "ranvier-streams §6.4, §6.3, ranvier-wire §4.2", Level: reports.MUST,
			Run: pubNoRepeat,
		},
		{
			ID:    "live/6.3/publisher-second-connection-announced-again",
			Title: "A second connection is announced every stream again: what was announced is kept per connection",
			Spec:  "ranvier-streams §6.3", Level: reports.MUST,
			Run: pubSecondConnection,
		},
		{
			ID:    "live/6.3/publisher-stream-opened-later-announced",
			Title: "A stream opened after the subscriber attached is announced before its first sample",
			Spec:  "ranvier-streams §6.3, ranvier-wire §4.2", Level: reports.MUST,
			Run: pubLaterStream,
		},
		{
			ID:    "live/2.1/publisher-sequence-from-1-step-1",
			Title: "Each stream's sequence starts at 1 and steps by exactly 1 per sample, counted per stream",
			Spec:  "ranvier-streams §2.1, §2.2, ranvier-wire §4.3", Level: reports.MUST,
			Run: pubSequence,
		},
		{
			ID:    "live/2.3/publisher-concurrent-publishes-in-order",
			Title: "Samples published from several threads at once reach the subscriber in sequence order",
			Spec:  "ranvier-streams §2.3", Level: reports.MUST,
			Run: pubConcurrent,
		},
		{
			ID:    "live/4.3/publisher-timestamps-fixed64",
			Title: "A sample's timestamps are encoded fixed64 on the wire",
			Spec:  "ranvier-wire §4.3", Level: reports.MUST,
			Run: pubFixed64,
		},
		{
			ID:    "live/4.3/publisher-stream-ref-and-sequence-nonzero",
			Title: "Every sample and announcement names stream_ref ≥ 1, and every sample a sequence ≥ 1",
			Spec:  "ranvier-wire §4.3, §4.4, ranvier-streams §2.1", Level: reports.MUST,
			Run: pubNonZero,
		},
		{
			ID:    "live/4.3/publisher-no-source-timestamp-without-domain",
			Title: "A stream with no source clock domain carries source_timestamp_ns 0; one with a domain carries it untouched",
			Spec:  "ranvier-wire §4.3, ranvier-streams §4.2", Level: reports.MUST,
			Run: pubSourceTimestamp,
		},
		{
			ID:    "live/4.1/publisher-ignores-bytes-after-request",
			Title: "Bytes a subscriber sends after its Request are ignored: the publisher keeps sending",
			Spec:  "ranvier-wire §4.1", Level: reports.MUST,
			Run: pubIgnoresAfterRequest,
		},
		{
			ID:    "live/6.5/publisher-waits-for-slow-reader",
			Title: "A publisher waits for a subscriber that stops reading for a while, and then delivers everything",
			Spec:  "ranvier-wire §6.5", Level: reports.MUST,
			Run: func(t *cases.T) { pubSlowReader(t, false) },
		},
		{
			ID:    "live/1.4/publisher-resumes-partial-write",
			Title: "After a partial write to a full socket, the frames stay aligned: the publisher resumes where the write stopped",
			Spec:  "ranvier-wire §1.4, §6.5", Level: reports.MUST,
			Run: func(t *cases.T) { pubSlowReader(t, true) },
		},
		{
			ID:    "live/6.2/publisher-too-large-request-not-resynchronised",
			Title: "A Request behind a prefix above 16 MiB is never found: the publisher sends nothing on that connection",
			Spec:  "ranvier-wire §6.2, §2", Level: reports.MUST,
			Run: pubTooLargeRequest,
		},
	}
}

// dpPub is a publisher conversation: the SUT's publisher (or an observed
// device) and conform's subscriber connections to it.
type dpPub struct {
	t        *cases.T
	observed bool
	addr     string
	name     string
	handle   uint32
	refs     []uint32
	subs     []*peer.PeerSubscriber
}

func newDpPub(t *cases.T) *dpPub {
	p := &dpPub{t: t}
	if peerURL := t.Env().Peer; peerURL != "" {
		p.observed = true
		p.addr = dpObservedAddr(peerURL)
		p.name = dpObservedName(peerURL)
	}
	return p
}

func (p *dpPub) close() {
	for _, s := range p.subs {
		s.Close()
	}
	liveClose(p.t, 0, p.handle)
}

// driven skips the case against an observed device: it needs the SUT to
// publish on demand.
func (p *dpPub) driven() {
	if p.observed {
		dpSkip("this case makes the publisher open streams and publish on demand; an observed device (--peer) is judged by the cases that read the wire alone")
	}
}

// listen has the SUT start a publisher with streams under name (the first
// stream's name); against an observed device it only names the device.
func (p *dpPub) listen(op *conformpb.LiveListenPublisher) {
	if p.observed {
		return
	}
	r := liveOp(p.t, &conformpb.LiveOp{Op: &conformpb.LiveOp_ListenPublisher{ListenPublisher: op}}).GetPublisherListening()
	if r == nil {
		p.t.Protocolf("listen_publisher was answered with another result")
	}
	p.handle, p.addr, p.refs = r.GetPublisher(), r.GetAddress(), r.GetStreamRefs()
	if len(op.GetStreams()) > 0 {
		p.name = op.GetStreams()[0].GetName()
	}
	if err := dpCheckLoopback(p.addr); err != nil {
		dpFatalf(p.t, "the publisher listens at %q: %v", p.addr, err)
	}
}

// publish has the SUT publish; against an observed device it does nothing,
// the device publishing on its own.
func (p *dpPub) publish(op *conformpb.LivePublish) *conformpb.LivePublished {
	if p.observed {
		return nil
	}
	op.Publisher = p.handle
	r := liveOp(p.t, &conformpb.LiveOp{Op: &conformpb.LiveOp_Publish{Publish: op}}).GetPublished()
	if r == nil {
		p.t.Protocolf("publish was answered with another result")
	}
	p.refs = append(p.refs, r.GetStreamRefs()...)
	return r
}

// dial connects one more subscriber, sending nothing yet.
func (p *dpPub) dial(readBuffer int) *peer.PeerSubscriber {
	ctx, cancel := dpCtx(p.t, dpOwed)
	defer cancel()
	s, err := peer.DialPublisher(ctx, p.addr, readBuffer, peer.Limits{})
	if err != nil {
		dpFatalf(p.t, "the publisher does not accept a subscriber at %s: %v", p.addr, err)
	}
	p.subs = append(p.subs, s)
	return s
}

// subscribe dials and sends the Request for p.name.
func (p *dpPub) subscribe(readBuffer int) *peer.PeerSubscriber {
	s := p.dial(readBuffer)
	p.request(s, nil)
	return s
}

func (p *dpPub) request(s *peer.PeerSubscriber, extra []byte) {
	ctx, cancel := dpCtx(p.t, dpOwed)
	defer cancel()
	if err := s.SendRequest(ctx, p.name, extra); err != nil {
		dpFatalf(p.t, "sending the Request: the publisher closed the connection: %v", err)
	}
}

// collect returns what s has read once it holds n samples (a driven
// publisher owes them) or, against an observed device, after dpObserve. A
// device that sent no sample, and nothing unreadable, leaves nothing to
// judge, and the case skips.
func (p *dpPub) collect(s *peer.PeerSubscriber, n int) peer.Transcript {
	if p.observed {
		ctx, cancel := dpCtx(p.t, dpObserve+time.Second)
		defer cancel()
		tr, _ := s.Idle(ctx, dpObserve)
		if w := readWire(tr); len(w.samples) == 0 && len(w.unreadable) == 0 && w.framingErr == nil {
			dpSkip("the device sent no sample within %v of the Request for %q: nothing to judge (%s); name the stream to request as the path of --peer, tcp://HOST:PORT/NAME", dpObserve, p.name, describeTranscript(tr))
		}
		return tr
	}
	ctx, cancel := dpCtx(p.t, dpOwed)
	defer cancel()
	tr, err := waitSamples(ctx, s, n)
	if err != nil {
		p.t.Fail(reports.Evidence{Message: fmt.Sprintf("the publisher did not deliver the %d samples it owed within %v", n, dpOwed), Got: describeTranscript(tr)})
	}
	return tr
}

// waitSamples waits until s has read n frames that carry a sample, judged by
// their first byte: Frame field 2, wire type 2 (the only field a sample
// frame has). Announcements owed before a sample have arrived by then.
func waitSamples(ctx context.Context, s *peer.PeerSubscriber, n int) (peer.Transcript, error) {
	return s.Wait(ctx, func(tr peer.Transcript) bool {
		if tr.FramingError != nil {
			return true // misaligned: nothing more will be read
		}
		k := 0
		for _, f := range tr.Frames {
			if len(f.Payload) > 0 && f.Payload[0] == 0x12 {
				k++
			}
		}
		return k >= n
	})
}

func dpStream(name, node, schema, domain string) *conformpb.LiveStream {
	return &conformpb.LiveStream{Name: name, Node: node, SchemaId: schema, SourceClockDomain: domain}
}

func dpPublishN(stream, n uint32, src uint64) *conformpb.LivePublishSample {
	return &conformpb.LivePublishSample{Stream: stream, Count: n, SourceTimestampNs: src, Values: fmt.Appendf(nil, "handle %d", stream)}
}

// dpWire is a subscriber connection's frames, read as a data plane.
type dpWire struct {
	frames []peer.DataFrame
	// samples are the decoded samples in order, with their frame index.
	samples []dpWireSample
	// firstAnnounce is the frame index of each reference's first
	// announcement; announces counts them.
	firstAnnounce map[uint32]int
	announces     map[uint32]int
	infos         map[uint32]*messagepb.StreamInfo
	// unreadable lists the frames that decoded to nothing: misaligned bytes
	// read as a frame, or a Frame with no variant.
	unreadable []string
	framingErr error
}

type dpWireSample struct {
	at  int
	smp *messagepb.Sample
	raw []byte
}

func readWire(tr peer.Transcript) *dpWire {
	w := &dpWire{frames: tr.DataFrames(), firstAnnounce: map[uint32]int{}, announces: map[uint32]int{}, infos: map[uint32]*messagepb.StreamInfo{}, framingErr: tr.FramingError}
	for i, f := range w.frames {
		switch {
		case f.Err != nil:
			w.unreadable = append(w.unreadable, fmt.Sprintf("frame %d (%d bytes) does not decode: %v", i+1, len(f.Payload), f.Err))
		case f.Msg.GetAnnounce() != nil:
			ref := f.Msg.GetAnnounce().GetStreamRef()
			if _, ok := w.firstAnnounce[ref]; !ok {
				w.firstAnnounce[ref] = i
				w.infos[ref] = f.Msg.GetAnnounce()
			}
			w.announces[ref]++
		case f.Msg.GetSample() != nil:
			w.samples = append(w.samples, dpWireSample{at: i, smp: f.Msg.GetSample(), raw: f.Payload})
		default:
			w.unreadable = append(w.unreadable, fmt.Sprintf("frame %d (%d bytes) carries neither an announcement nor a sample", i+1, len(f.Payload)))
		}
	}
	return w
}

// seqs returns each reference's sequences in arrival order.
func (w *dpWire) seqs() map[uint32][]uint64 {
	out := map[uint32][]uint64{}
	for _, s := range w.samples {
		out[s.smp.GetStreamRef()] = append(out[s.smp.GetStreamRef()], s.smp.GetSequence())
	}
	return out
}

// checkAligned fails the case when the byte stream is misaligned: a framing
// error, or frames that do not decode — what a resent buffer produces.
func checkAligned(t *cases.T, w *dpWire, why string) {
	if w.framingErr != nil || len(w.unreadable) > 0 {
		got := fmt.Sprint(w.unreadable)
		if w.framingErr != nil {
			got = fmt.Sprintf("framing error: %v; %s", w.framingErr, got)
		}
		t.Fail(reports.Evidence{Message: "the publisher's byte stream is misaligned: frames that do not decode, or a length prefix that cannot be believed (" + why + ")",
			Expected: "every frame a Frame carrying an announcement or a sample", Got: got})
	}
}

// checkAnnouncedBefore fails the case for every reference whose first
// sample arrived before its announcement.
func checkAnnouncedBefore(t *cases.T, w *dpWire) {
	seen := map[uint32]bool{}
	for _, s := range w.samples {
		ref := s.smp.GetStreamRef()
		if seen[ref] {
			continue
		}
		seen[ref] = true
		if at, ok := w.firstAnnounce[ref]; !ok || at > s.at {
			got := "never announced on this connection"
			if ok {
				got = fmt.Sprintf("announced at frame %d, after its first sample at frame %d", at+1, s.at+1)
			}
			t.Fail(reports.Evidence{Message: fmt.Sprintf("stream_ref %d's first sample arrived before its announcement (ranvier-wire §4.2)", ref),
				Expected: "Frame{announce} before the first Frame{sample} of the stream", Got: got})
		}
	}
}

func checkNoRepeats(t *cases.T, w *dpWire) {
	for ref, n := range w.announces {
		if n > 1 {
			t.Fail(reports.Evidence{Message: fmt.Sprintf("stream_ref %d was announced %d times on one connection (ranvier-streams §6.4)", ref, n), Expected: "once"})
		}
	}
}

// checkExactSeqs checks each reference in want delivered exactly its
// sequences, in order.
func checkExactSeqs(t *cases.T, w *dpWire, want map[uint32][]uint64, why string) {
	got := w.seqs()
	for ref, ws := range want {
		if !slices.Equal(got[ref], ws) {
			t.Fail(reports.Evidence{Message: fmt.Sprintf("stream_ref %d's sequences on the wire are not 1, 2, 3, … in order (%s)", ref, why),
				Expected: compactSeqs(ws), Got: compactSeqs(got[ref])})
		}
	}
}

// checkIncreasing checks every reference's sequences rise: a gap is a loss
// the subscriber counts, a step back is the order §2.3 forbids.
func checkIncreasing(t *cases.T, w *dpWire) {
	for ref, ss := range w.seqs() {
		for i := 1; i < len(ss); i++ {
			if ss[i] <= ss[i-1] {
				t.Fail(reports.Evidence{Message: fmt.Sprintf("stream_ref %d's samples arrived out of sequence order (ranvier-streams §2.3)", ref),
					Got: fmt.Sprintf("sequence %d after %d", ss[i], ss[i-1])})
				break
			}
		}
	}
}

// compactSeqs renders a sequence list briefly: runs as a-b.
func compactSeqs(ss []uint64) string {
	if len(ss) == 0 {
		return "none"
	}
	var b bytes.Buffer
	start := 0
	for i := 1; i <= len(ss); i++ {
		if i < len(ss) && ss[i] == ss[i-1]+1 {
			continue
		}
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		if i-1 == start {
			fmt.Fprint(&b, ss[start])
		} else {
			fmt.Fprintf(&b, "%d-%d", ss[start], ss[i-1])
		}
		start = i
		if b.Len() > 400 {
			b.WriteString(", …")
			break
		}
	}
	return fmt.Sprintf("%s (%d samples)", b.String(), len(ss))
}

func (p *dpPub) basicListen(streams ...*conformpb.LiveStream) {
	p.listen(&conformpb.LiveListenPublisher{Streams: streams})
}

func pubNothingBeforeRequest(t *cases.T) {
	p := newDpPub(t)
	defer p.close()
	p.basicListen(dpStream("gaze", "eye", "conform.v1.Gaze", ""))
	s := p.dial(0)
	p.publish(&conformpb.LivePublish{Samples: []*conformpb.LivePublishSample{dpPublishN(0, 5, 0)}})
	ctx, cancel := dpCtx(t, dpQuiet+time.Second)
	defer cancel()
	tr, _ := s.Idle(ctx, dpQuiet)
	if tr.Bytes > 0 {
		w := readWire(tr)
		t.Fail(reports.Evidence{Message: "the publisher sent bytes before the subscriber's Request (ranvier-wire §4.1)",
			Expected: "nothing until the Request", Got: fmt.Sprintf("%s: %d announcements, %d samples", describeTranscript(tr), len(w.firstAnnounce), len(w.samples))})
	}
	p.request(s, nil)
	p.publish(&conformpb.LivePublish{WaitSubscribers: 1, WaitTimeoutMs: dpMillis(dpOwed), Samples: []*conformpb.LivePublishSample{dpPublishN(0, 3, 0)}})
	w := readWire(p.collect(s, 3))
	checkAligned(t, w, "after the Request")
}

func pubAnnouncesEvery(t *cases.T) {
	p := newDpPub(t)
	defer p.close()
	p.basicListen(
		dpStream("gaze", "eye-left", "conform.v1.Gaze", ""),
		dpStream("gaze", "eye-right", "conform.v1.Gaze", ""),
		dpStream("pupil", "eye-left", "conform.v1.Pupil", ""),
		dpStream("gaze", "head", "conform.v1.HeadGaze", ""),
	)
	p.driven()
	s := p.subscribe(0)
	// The last stream under the name publishes first, so that a publisher
	// announcing only the first stream it finds shows.
	p.publish(&conformpb.LivePublish{WaitSubscribers: 1, WaitTimeoutMs: dpMillis(dpOwed), Samples: []*conformpb.LivePublishSample{
		dpPublishN(3, 2, 0), dpPublishN(0, 2, 0), dpPublishN(1, 2, 0), dpPublishN(2, 2, 0)}})
	tr := p.collect(s, 6)
	w := readWire(tr)
	checkAligned(t, w, "")
	if len(w.samples) == 0 {
		return
	}
	first := w.samples[0].at
	var want []uint32
	for _, h := range []int{0, 1, 3} {
		if h < len(p.refs) && p.refs[h] != 0 {
			want = append(want, p.refs[h])
		}
	}
	var before []uint32
	names := 0
	for ref, at := range w.firstAnnounce {
		if at < first {
			before = append(before, ref)
			if w.infos[ref].GetName() == "gaze" {
				names++
			}
		}
	}
	slices.Sort(before)
	missing := false
	if len(want) == 3 {
		for _, ref := range want {
			missing = missing || !slices.Contains(before, ref)
		}
	} else {
		missing = names < 3
	}
	if missing {
		t.Fail(reports.Evidence{Message: "not every stream under the requested name was announced before the connection's first sample (ranvier-streams §6.3)",
			Input: "three streams under \"gaze\", one under \"pupil\"", Expected: fmt.Sprintf("stream_refs %v announced first", want), Got: fmt.Sprintf("announced before the first sample: %v", before)})
	}
}

func pubAnnounceBeforeSample(t *cases.T) {
	p := newDpPub(t)
	defer p.close()
	p.basicListen(dpStream("gaze", "eye-left", "conform.v1.Gaze", ""), dpStream("gaze", "eye-right", "conform.v1.Gaze", ""))
	s := p.subscribe(0)
	p.publish(&conformpb.LivePublish{WaitSubscribers: 1, WaitTimeoutMs: dpMillis(dpOwed), Samples: []*conformpb.LivePublishSample{dpPublishN(1, 3, 0), dpPublishN(0, 3, 0)}})
	w := readWire(p.collect(s, 6))
	checkAligned(t, w, "")
	checkAnnouncedBefore(t, w)
}

func pubNoRepeat(t *cases.T) {
	p := newDpPub(t)
	defer p.close()
	p.basicListen(dpStream("gaze", "eye-left", "conform.v1.Gaze", ""), dpStream("gaze", "eye-right", "conform.v1.Gaze", ""))
	s := p.subscribe(0)
	var smps []*conformpb.LivePublishSample
	for range 10 {
		smps = append(smps, dpPublishN(0, 1, 0), dpPublishN(1, 1, 0))
	}
	p.publish(&conformpb.LivePublish{WaitSubscribers: 1, WaitTimeoutMs: dpMillis(dpOwed), Samples: smps, DrainTimeoutMs: dpMillis(dpOwed)})
	tr := p.collect(s, 20)
	if !p.observed {
		// Anything more than owed arrives now, or not at all.
		ctx, cancel := dpCtx(t, dpQuiet+time.Second)
		defer cancel()
		tr, _ = s.Idle(ctx, dpQuiet/3)
	}
	w := readWire(tr)
	checkAligned(t, w, "")
	checkNoRepeats(t, w)
}

func pubSecondConnection(t *cases.T) {
	p := newDpPub(t)
	defer p.close()
	p.basicListen(dpStream("gaze", "eye-left", "conform.v1.Gaze", ""), dpStream("gaze", "eye-right", "conform.v1.Gaze", ""))
	a := p.subscribe(0)
	p.publish(&conformpb.LivePublish{WaitSubscribers: 1, WaitTimeoutMs: dpMillis(dpOwed), Samples: []*conformpb.LivePublishSample{dpPublishN(0, 2, 0), dpPublishN(1, 2, 0)}, DrainTimeoutMs: dpMillis(dpOwed)})
	wa := readWire(p.collect(a, 4))
	b := p.subscribe(0)
	p.publish(&conformpb.LivePublish{WaitSubscribers: 2, WaitTimeoutMs: dpMillis(dpOwed), Samples: []*conformpb.LivePublishSample{dpPublishN(0, 2, 0), dpPublishN(1, 2, 0)}})
	wb := readWire(p.collect(b, 4))
	checkAligned(t, wb, "the second connection")
	checkAnnouncedBefore(t, wb)
	var onA, onB []uint32
	for ref := range wa.firstAnnounce {
		onA = append(onA, ref)
	}
	for ref := range wb.firstAnnounce {
		onB = append(onB, ref)
	}
	slices.Sort(onA)
	slices.Sort(onB)
	if !p.observed && !slices.Equal(onA, onB) {
		t.Fail(reports.Evidence{Message: "the second connection was not announced every stream the first was (ranvier-streams §6.3: what was announced is kept per connection)",
			Expected: fmt.Sprint(onA), Got: fmt.Sprint(onB)})
	}
}

func pubLaterStream(t *cases.T) {
	p := newDpPub(t)
	defer p.close()
	p.basicListen(dpStream("gaze", "eye-left", "conform.v1.Gaze", ""))
	p.driven()
	s := p.subscribe(0)
	p.publish(&conformpb.LivePublish{WaitSubscribers: 1, WaitTimeoutMs: dpMillis(dpOwed), Samples: []*conformpb.LivePublishSample{dpPublishN(0, 2, 0)}, DrainTimeoutMs: dpMillis(dpOwed)})
	p.collect(s, 2)
	p.publish(&conformpb.LivePublish{
		Open:    []*conformpb.LiveStream{dpStream("gaze", "eye-right", "conform.v1.Pupil", "")},
		Samples: []*conformpb.LivePublishSample{dpPublishN(1, 2, 0), dpPublishN(0, 1, 0)},
	})
	w := readWire(p.collect(s, 5))
	checkAligned(t, w, "")
	checkAnnouncedBefore(t, w)
	if len(w.firstAnnounce) < 2 {
		t.Fail(reports.Evidence{Message: "the stream opened after the subscriber attached was never announced on its connection (ranvier-streams §6.3)",
			Expected: "two announcements", Got: fmt.Sprintf("%d", len(w.firstAnnounce))})
	}
}

func pubSequence(t *cases.T) {
	p := newDpPub(t)
	defer p.close()
	p.basicListen(dpStream("gaze", "eye-left", "conform.v1.Gaze", ""), dpStream("gaze", "eye-right", "conform.v1.Gaze", ""))
	p.driven()
	s := p.subscribe(0)
	var smps []*conformpb.LivePublishSample
	for i := range 10 {
		smps = append(smps, dpPublishN(0, 1, 0))
		if i < 7 {
			smps = append(smps, dpPublishN(1, 1, 0))
		}
	}
	p.publish(&conformpb.LivePublish{WaitSubscribers: 1, WaitTimeoutMs: dpMillis(dpOwed), Samples: smps})
	w := readWire(p.collect(s, 17))
	checkAligned(t, w, "")
	want := map[uint32][]uint64{}
	if len(p.refs) >= 2 && p.refs[0] != 0 && p.refs[1] != 0 {
		want[p.refs[0]], want[p.refs[1]] = seqs(1, 10), seqs(1, 7)
	} else {
		// The SUT does not say which reference is which; judge by count.
		for ref, ss := range w.seqs() {
			want[ref] = seqs(1, uint64(len(ss)))
		}
	}
	checkExactSeqs(t, w, want, "two streams under one name, ten and seven samples interleaved")
}

func pubConcurrent(t *cases.T) {
	const n = 300
	p := newDpPub(t)
	defer p.close()
	p.basicListen(dpStream("gaze", "eye-left", "conform.v1.Gaze", ""), dpStream("gaze", "eye-right", "conform.v1.Gaze", ""))
	s := p.subscribe(0)
	p.publish(&conformpb.LivePublish{WaitSubscribers: 1, WaitTimeoutMs: dpMillis(dpOwed), Concurrency: 8,
		Samples: []*conformpb.LivePublishSample{dpPublishN(0, n, 0), dpPublishN(1, n, 0)}})
	w := readWire(p.collect(s, 2*n))
	checkAligned(t, w, "")
	if p.observed {
		checkIncreasing(t, w)
		return
	}
	want := map[uint32][]uint64{}
	for ref := range w.seqs() {
		want[ref] = seqs(1, n)
	}
	if len(want) != 2 {
		t.Failf("samples of %d streams arrived, want 2", len(want))
	}
	checkExactSeqs(t, w, want, fmt.Sprintf("%d samples on each of two streams, published by eight threads at once", n))
}

// sampleTimestampTypes returns the wire types of fields 1 and 4 of the
// Sample inside a Frame payload, where present.
func sampleTimestampTypes(frame []byte) (map[protowire.Number]protowire.Type, error) {
	out := map[protowire.Number]protowire.Type{}
	for len(frame) > 0 {
		num, typ, n := protowire.ConsumeTag(frame)
		if n < 0 {
			return nil, protowire.ParseError(n)
		}
		frame = frame[n:]
		if num == 2 && typ == protowire.BytesType {
			smp, m := protowire.ConsumeBytes(frame)
			if m < 0 {
				return nil, protowire.ParseError(m)
			}
			for len(smp) > 0 {
				f, ft, k := protowire.ConsumeTag(smp)
				if k < 0 {
					return nil, protowire.ParseError(k)
				}
				smp = smp[k:]
				if f == 1 || f == 4 {
					out[f] = ft
				}
				v := protowire.ConsumeFieldValue(f, ft, smp)
				if v < 0 {
					return nil, protowire.ParseError(v)
				}
				smp = smp[v:]
			}
			frame = frame[m:]
			continue
		}
		v := protowire.ConsumeFieldValue(num, typ, frame)
		if v < 0 {
			return nil, protowire.ParseError(v)
		}
		frame = frame[v:]
	}
	return out, nil
}

func pubFixed64(t *cases.T) {
	p := newDpPub(t)
	defer p.close()
	p.basicListen(dpStream("gaze", "eye", "conform.v1.Gaze", "device.tracker-1"))
	s := p.subscribe(0)
	p.publish(&conformpb.LivePublish{WaitSubscribers: 1, WaitTimeoutMs: dpMillis(dpOwed), Samples: []*conformpb.LivePublishSample{dpPublishN(0, 5, 123456789)}})
	w := readWire(p.collect(s, 5))
	checkAligned(t, w, "")
	for _, smp := range w.samples {
		types, err := sampleTimestampTypes(smp.raw)
		if err != nil {
			t.Failf("sample frame %d does not parse: %v", smp.at+1, err)
			continue
		}
		for f, typ := range types {
			if typ != protowire.Fixed64Type {
				t.Fail(reports.Evidence{Message: fmt.Sprintf("Sample field %d (a timestamp) is not encoded fixed64 (ranvier-wire §4.3)", f),
					Expected: "wire type 1 (fixed64)", Got: fmt.Sprintf("wire type %d", typ), Input: fmt.Sprintf("% x", smp.raw)})
				return
			}
		}
		if _, ok := types[1]; !ok {
			t.Fail(reports.Evidence{Message: "a sample carries no monotonic_timestamp_ns: it is required on every sample (ranvier-streams §4.1)", Input: fmt.Sprintf("% x", smp.raw)})
			return
		}
	}
}

func pubNonZero(t *cases.T) {
	p := newDpPub(t)
	defer p.close()
	p.basicListen(dpStream("gaze", "eye-left", "conform.v1.Gaze", ""), dpStream("gaze", "eye-right", "", ""))
	s := p.subscribe(0)
	p.publish(&conformpb.LivePublish{WaitSubscribers: 1, WaitTimeoutMs: dpMillis(dpOwed), Samples: []*conformpb.LivePublishSample{dpPublishN(0, 3, 0), dpPublishN(1, 3, 0)}})
	w := readWire(p.collect(s, 6))
	checkAligned(t, w, "")
	for ref := range w.firstAnnounce {
		if ref == 0 {
			t.Fail(reports.Evidence{Message: "an announcement names stream_ref 0, which means absent (ranvier-wire §4.4)"})
		}
	}
	for _, smp := range w.samples {
		if smp.smp.GetStreamRef() == 0 || smp.smp.GetSequence() == 0 {
			t.Fail(reports.Evidence{Message: "a sample carries stream_ref 0 or sequence 0, which mean absent (ranvier-wire §4.3, ranvier-streams §2.1)",
				Got: fmt.Sprintf("stream_ref %d, sequence %d", smp.smp.GetStreamRef(), smp.smp.GetSequence())})
			return
		}
	}
}

func pubSourceTimestamp(t *cases.T) {
	const src = 5_000_000_123
	p := newDpPub(t)
	defer p.close()
	p.basicListen(dpStream("gaze", "eye", "conform.v1.Gaze", "device.tracker-1"), dpStream("gaze", "stimulus", "conform.v1.Stimulus", ""))
	s := p.subscribe(0)
	p.publish(&conformpb.LivePublish{WaitSubscribers: 1, WaitTimeoutMs: dpMillis(dpOwed), Samples: []*conformpb.LivePublishSample{dpPublishN(0, 3, src), dpPublishN(1, 3, src)}})
	w := readWire(p.collect(s, 6))
	checkAligned(t, w, "")
	checkAnnouncedBefore(t, w)
	for _, smp := range w.samples {
		info, ok := w.infos[smp.smp.GetStreamRef()]
		if !ok {
			continue
		}
		got := smp.smp.GetSourceTimestampNs()
		switch {
		case info.GetSourceClockDomain() == "" && got != 0:
			t.Fail(reports.Evidence{Message: fmt.Sprintf("stream_ref %d announced no source clock domain and its sample carries a source timestamp (ranvier-wire §4.3)", smp.smp.GetStreamRef()),
				Expected: "source_timestamp_ns 0", Got: fmt.Sprint(got)})
			return
		case !p.observed && info.GetSourceClockDomain() != "" && got != src:
			t.Fail(reports.Evidence{Message: fmt.Sprintf("stream_ref %d announced clock domain %q and its source timestamp was not carried untouched (ranvier-wire §4.3)", smp.smp.GetStreamRef(), info.GetSourceClockDomain()),
				Expected: fmt.Sprint(src), Got: fmt.Sprint(got)})
			return
		}
	}
}

func pubIgnoresAfterRequest(t *cases.T) {
	p := newDpPub(t)
	defer p.close()
	p.basicListen(dpStream("gaze", "eye", "conform.v1.Gaze", ""))
	s := p.dial(0)
	// After the Request, in the same write: a second Request for another
	// name, garbage, and a prefix no reader may believe.
	extra := append(peer.MustFrame(&messagepb.Request{StreamName: "other"}), peer.Garbage()...)
	extra = append(extra, peer.TooLargePrefix()...)
	p.request(s, extra)
	ctx, cancel := dpCtx(t, dpOwed)
	defer cancel()
	if err := s.Send(ctx, peer.Garbage()); err != nil {
		t.Failf("the publisher closed the connection when the subscriber sent bytes after its Request (ranvier-wire §4.1): %v", err)
	}
	p.publish(&conformpb.LivePublish{WaitSubscribers: 1, WaitTimeoutMs: dpMillis(dpOwed), Samples: []*conformpb.LivePublishSample{dpPublishN(0, 5, 0)}})
	tr := p.collect(s, 5)
	w := readWire(tr)
	checkAligned(t, w, "")
	if tr.Ended {
		t.Fail(reports.Evidence{Message: "the publisher ended the connection after bytes that followed the Request (ranvier-wire §4.1: they are not read)", Got: describeTranscript(tr)})
	}
}

// pubSlowReader stops reading while the publisher sends more than the
// socket buffers hold, then reads everything. aligned judges the bytes
// (§1.4); otherwise the connection's survival and completeness (§6.5).
func pubSlowReader(t *cases.T, aligned bool) {
	const n, size = 48, 32 << 10
	p := newDpPub(t)
	defer p.close()
	p.listen(&conformpb.LiveListenPublisher{Streams: []*conformpb.LiveStream{dpStream("camera", "cam", "conform.v1.Frame", "")}, SendBuffer: dpSmallBuffer})
	s := p.subscribe(dpSmallBuffer)
	p.publish(&conformpb.LivePublish{WaitSubscribers: 1, WaitTimeoutMs: dpMillis(dpOwed), Samples: []*conformpb.LivePublishSample{dpPublishN(0, 1, 0)}, DrainTimeoutMs: dpMillis(dpOwed)})
	if !p.observed {
		p.collect(s, 1)
	}
	s.Pause()
	big := &conformpb.LivePublishSample{Stream: 0, Count: n, Values: bytes.Repeat([]byte{0xa5}, size)}
	p.publish(&conformpb.LivePublish{Samples: []*conformpb.LivePublishSample{big}})
	ctx, cancel := dpCtx(t, dpSlowPause+time.Second)
	defer cancel()
	s.Idle(ctx, dpSlowPause)
	s.Resume()
	var tr peer.Transcript
	if p.observed {
		tr = p.collect(s, 0)
	} else {
		wctx, wcancel := dpCtx(t, 2*dpOwed)
		defer wcancel()
		var err error
		tr, err = waitSamples(wctx, s, 1+n)
		if err != nil && !aligned {
			t.Fail(reports.Evidence{Message: fmt.Sprintf("after the subscriber stopped reading for %v, the publisher did not deliver the %d samples published meanwhile (ranvier-wire §6.5: a slow reader is waited for)", dpSlowPause, n),
				Got: describeTranscript(tr)})
		}
	}
	w := readWire(tr)
	if aligned {
		checkAligned(t, w, fmt.Sprintf("%d samples of %d bytes written to a subscriber that stopped reading for %v", n, size, dpSlowPause))
		for _, smp := range w.samples {
			if v := smp.smp.GetValues(); !p.observed && smp.smp.GetSequence() > 1 && (len(v) != size || v[0] != 0xa5 || v[len(v)-1] != 0xa5) {
				t.Fail(reports.Evidence{Message: fmt.Sprintf("sample %d arrived with values other than published: bytes repeated or lost on the wire (ranvier-wire §1.4)", smp.smp.GetSequence()),
					Expected: fmt.Sprintf("%d bytes of a5", size), Got: fmt.Sprintf("%d bytes", len(v))})
				break
			}
		}
		return
	}
	if tr.Ended {
		t.Fail(reports.Evidence{Message: fmt.Sprintf("the publisher ended the connection of a subscriber that stopped reading for %v (ranvier-wire §6.5)", dpSlowPause), Got: describeTranscript(tr)})
	}
	if p.observed {
		checkIncreasing(t, w)
		return
	}
	want := map[uint32][]uint64{}
	for ref := range w.seqs() {
		want[ref] = seqs(1, n+1)
	}
	checkExactSeqs(t, w, want, "every sample published while the subscriber was not reading")
}

func pubTooLargeRequest(t *cases.T) {
	p := newDpPub(t)
	defer p.close()
	p.basicListen(dpStream("gaze", "eye", "conform.v1.Gaze", ""))
	s := p.dial(0)
	req := peer.MustFrame(&messagepb.Request{StreamName: p.name})
	ctx, cancel := dpCtx(t, dpOwed)
	defer cancel()
	s.Mark(peer.MarkRequest)
	if err := s.Send(ctx, append(peer.TooLargePrefix(), req...)); err != nil {
		t.Note("sending: %v", err)
	}
	p.publish(&conformpb.LivePublish{WaitSubscribers: 1, WaitTimeoutMs: dpMillis(dpQuiet), Samples: []*conformpb.LivePublishSample{dpPublishN(0, 3, 0)}})
	wait := dpQuiet
	if p.observed {
		wait = dpObserve
	}
	tr, _ := s.Idle(ctx, wait)
	if tr.Bytes > 0 {
		t.Fail(reports.Evidence{Message: "the publisher sent frames after a Request behind a prefix claiming 16,777,217 bytes: it resynchronised (ranvier-wire §6.2)",
			Input: "01 00 00 01 then a Request frame", Expected: "nothing", Got: describeTranscript(tr)})
	}
	if !tr.Ended {
		t.Note("the publisher kept the connection open after the too-large prefix; the Rust closes it silently (ranvier-wire §6.2)")
	}
}
