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
	"github.com/conform-suite/conform/proto/conform/v1/meaning"
	messagepb "github.com/conform-suite/conform/proto/ranvier/message/v1"
	"github.com/conform-suite/conform/reports"
	"github.com/conform-suite/conform/reports/evidence"
	"google.golang.org/protobuf/encoding/protowire"
)

// How the publisher cases watch.
const (
	// observeWindow is how long a case listens to a device observed with
	// conform run --peer, which publishes on its own schedule: the case
	// judges whatever arrived by then.
	observeWindow = 500 * time.Millisecond
	// acceptWatch is how long a case watches a connection the publisher
	// has accepted and must not write to yet. The specification fixes no
	// time; a publisher that writes before the Request does so as it
	// accepts the connection or as it publishes, and the publish op's
	// answer follows the latter.
	acceptWatch = 100 * time.Millisecond
	// slowHold is how long a slow-reader case keeps its reader stopped once
	// the publisher can write no more: a stop the publisher must sit out,
	// far shorter than §6.5's thirty seconds of patience.
	slowHold = 200 * time.Millisecond
	// smallBuffer is the socket buffer both ends of a slow-reader case ask
	// for, so that push-back comes after little data.
	smallBuffer = 8 << 10
)

// The requirement every publisher case judges on every frame it reads: no
// Frame carries both payload variants (ranvier-wire §8 item 1).
const reqOneVariant = "ranvier-wire§8#1"

// publisherCases are the cases of the SUT as a data-plane publisher: the
// SUT listens (live op listen_publisher) and publishes (live op publish),
// and conform dials as the subscriber and judges the wire. Against a device
// observed with conform run --peer, the cases that can judge only what the
// device sends run too; the others skip.
func publisherCases(k *cases.Kit) []cases.Case {
	return []cases.Case{
		k.Must(func() cases.Case {
			return cases.Case{
				ID:    "live/4.1/publisher-nothing-before-request",
				Title: "A publisher sends nothing on a connection before it has read the Request, even while publishing",
				Spec:  "ranvier-wire §4.1, §3.3",
				Requirements: judges(publisherPins, "ranvier-wire§4.1#5", "ranvier-wire§3.1#5", "ranvier-wire§3.3#3",
					"ranvier-wire§3.3#4", "ranvier-wire§3.4#1", reqOneVariant),
				Run: pubNothingBeforeRequest,
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:    "live/6.3/publisher-announces-every-stream",
				Title: "A connection announces every stream under the requested name before it sends any sample, not only the first one found",
				Spec:  "ranvier-streams §6.3, ranvier-wire §4.2",
				Requirements: judges(publisherPins, "ranvier-streams§6.3#1", "ranvier-wire§4.2#2", "ranvier-wire§4.1#6",
					reqOneVariant),
				Run: pubAnnouncesEvery,
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "live/4.2/publisher-announce-before-sample",
				Title:        "Every sample's stream_ref is announced on the connection before that sample",
				Spec:         "ranvier-wire §4.2",
				Requirements: judges(publisherPins, "ranvier-wire§4.2#1", "ranvier-wire§3.1#1", "ranvier-wire§7.1#1", reqOneVariant),
				Run:          pubAnnounceBeforeSample,
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "live/6.4/publisher-no-repeated-announcement",
				Title:        "A publisher announces each stream once per connection, never again",
				Spec:         "ranvier-streams §6.4, §6.3, ranvier-wire §4.2",
				Requirements: judges(publisherPins, "ranvier-streams§6.4#1", "ranvier-wire§4.2#4", reqOneVariant),
				Run:          pubNoRepeat,
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:    "live/6.3/publisher-second-connection-announced-again",
				Title: "A second connection is announced every stream again: what was announced is kept per connection",
				Spec:  "ranvier-streams §6.3, ranvier-wire §3.3",
				Requirements: judges(publisherPins, "ranvier-streams§6.3#2", "ranvier-wire§3.3#1", "ranvier-wire§4.2#1",
					reqOneVariant),
				Run: pubSecondConnection,
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:    "live/6.3/publisher-stream-opened-later-announced",
				Title: "A stream opened after the subscriber attached is announced before its first sample",
				Spec:  "ranvier-streams §6.3, ranvier-wire §4.2",
				Requirements: judges(publisherPins, "ranvier-streams§6.3#3", "ranvier-streams§6.3#5", "ranvier-wire§4.2#1",
					"ranvier-wire§4.2#3", reqOneVariant),
				Run: pubLaterStream,
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:    "live/2.1/publisher-sequence-from-1-step-1",
				Title: "Each stream's sequence starts at 1 and steps by exactly 1 per sample, counted per stream",
				Spec:  "ranvier-streams §2.1, §2.2, ranvier-wire §4.3",
				Requirements: judges(publisherPins, "ranvier-streams§2.1#1", "ranvier-streams§2.1#2", "ranvier-streams§2.2#1",
					"ranvier-wire§4.1#6", "ranvier-wire§4.3#9", "ranvier-wire§4.3#10", "ranvier-wire§4.3#11", reqOneVariant),
				Run: pubSequence,
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "live/2.3/publisher-concurrent-publishes-in-order",
				Title:        "Samples published from several threads at once reach the subscriber in sequence order",
				Spec:         "ranvier-streams §2.3, ranvier-wire §1.4",
				Requirements: judges(publisherPins, "ranvier-streams§2.3#1", "ranvier-streams§2.3#2", "ranvier-wire§1.4#1", reqOneVariant),
				Run:          pubConcurrent,
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:    "live/4.3/publisher-timestamps-fixed64",
				Title: "A sample's timestamps are encoded fixed64 on the wire, and every sample carries monotonic_timestamp_ns",
				Spec:  "ranvier-wire §4.3, ranvier-streams §4.1",
				Requirements: judges(publisherPins, "ranvier-wire§4.3#6", "ranvier-wire§4.3#1", "ranvier-wire§4.3#4",
					"ranvier-streams§4#1", "ranvier-streams§4.1#1", reqOneVariant),
				Run: pubFixed64,
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:    "live/4.3/publisher-stream-ref-and-sequence-nonzero",
				Title: "Every sample and announcement names stream_ref ≥ 1, and every sample a sequence ≥ 1",
				Spec:  "ranvier-wire §4.3, §4.4, ranvier-streams §2.1",
				Requirements: judges(publisherPins, "ranvier-wire§4.3#17", "ranvier-wire§4.4#15", "ranvier-streams§2.1#3",
					"ranvier-streams§2.6#3", "ranvier-streams§6.1#2", reqOneVariant),
				Run: pubNonZero,
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:    "live/4.3/publisher-no-source-timestamp-without-domain",
				Title: "A stream with no source clock domain carries source_timestamp_ns 0; one with a domain carries it untouched",
				Spec:  "ranvier-wire §4.3, ranvier-streams §4.2",
				Requirements: judges(publisherPins, "ranvier-wire§4.3#15", "ranvier-wire§4.3#16", "ranvier-streams§4.2#2",
					"ranvier-streams§4.2#3", "ranvier-streams§4.2#4", "ranvier-wire§4.2#1", reqOneVariant),
				Run: pubSourceTimestamp,
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "live/4.1/publisher-ignores-bytes-after-request",
				Title:        "Bytes a subscriber sends after its Request are ignored: the publisher keeps sending",
				Spec:         "ranvier-wire §4.1",
				Requirements: judges(publisherPins, "ranvier-wire§4.1#4", reqOneVariant),
				Run:          pubIgnoresAfterRequest,
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "live/6.5/publisher-waits-for-slow-reader",
				Title:        "A publisher waits for a subscriber that stops reading once its buffers are full, and then delivers everything",
				Spec:         "ranvier-wire §6.5",
				Requirements: judges(publisherPins, "ranvier-wire§6.5#3", reqOneVariant),
				Run:          func(t *cases.T) { pubSlowReader(t, false) },
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "live/1.4/publisher-resumes-partial-write",
				Title:        "After a partial write to a full socket, the frames stay aligned: the publisher resumes where the write stopped",
				Spec:         "ranvier-wire §1.4, §6.5",
				Requirements: judges(publisherPins, "ranvier-wire§1.4#2", reqOneVariant),
				Run:          func(t *cases.T) { pubSlowReader(t, true) },
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "live/6.2/publisher-too-large-request-not-resynchronised",
				Title:        "A Request behind a prefix above 16 MiB is never found: the publisher closes the connection and sends nothing on it",
				Spec:         "ranvier-wire §6.2, §2",
				Requirements: judges(publisherPins, "ranvier-wire§6.2#1", "ranvier-wire§6.2#3"),
				Run:          pubTooLargeRequest,
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "live/3.3/publisher-departed-subscriber-holds-nothing-up",
				Title:        "A subscriber that dies mid-stream holds nothing up: the others receive every sample, and a new subscriber is served",
				Spec:         "ranvier-wire §3.3",
				Requirements: judges(publisherPins, "ranvier-wire§3.3#2", "ranvier-wire§3.3#1", reqOneVariant),
				Run:          pubDepartedSubscriber,
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:    "live/6.1/publisher-announcement-names-stream-and-node",
				Title: "Every announcement names its stream (never empty) and the node that declared it, and carries host_id and boot_id together or neither",
				Spec:  "ranvier-streams §6.1, ranvier-wire §4.4",
				Requirements: judges(publisherPins, "ranvier-wire§4.4#14", "ranvier-streams§6.1#1", "ranvier-streams§6.1#3",
					"ranvier-streams§6.1#4", reqOneVariant),
				Run: pubAnnouncementFields,
			}
		}),
	}
}

// pub is a publisher conversation: the SUT's publisher (or an observed
// device) and conform's subscriber connections to it.
type pub struct {
	t        *cases.T
	observed bool
	addr     string
	name     string
	handle   uint32
	refs     []uint32
	subs     []*peer.PeerSubscriber
}

func newPub(t *cases.T) *pub {
	p := &pub{t: t}
	if peerURL := t.Env().Peer; peerURL != "" {
		p.observed = true
		p.addr = observedAddr(t, peerURL)
		p.name = observedName(peerURL)
	}
	return p
}

func (p *pub) close() {
	for _, s := range p.subs {
		s.Close()
	}
	liveClose(p.t, 0, p.handle)
}

// driven skips the case against an observed device: it needs the SUT to
// publish on demand.
func (p *pub) driven() {
	if p.observed {
		p.t.Skipf("this case makes the publisher open streams and publish on demand; an observed device (--peer) is judged by the cases that read the wire alone")
	}
}

// listen has the SUT start a publisher with streams under name (the first
// stream's name); against an observed device it only names the device.
func (p *pub) listen(op *conformpb.LiveListenPublisher) {
	if p.observed {
		return
	}
	r := liveOp(p.t, &conformpb.LiveOp{Op: &conformpb.LiveOp_ListenPublisher{ListenPublisher: op}}).GetPublisherListening()
	switch {
	case r == nil:
		p.t.Protocolf("listen_publisher was answered with another result")
	case r.GetPublisher() == 0:
		p.t.Protocolf("listen_publisher answered the handle 0, which never names a publisher (live.proto)")
	}
	p.handle, p.addr, p.refs = r.GetPublisher(), r.GetAddress(), r.GetStreamRefs()
	if len(op.GetStreams()) > 0 {
		p.name = op.GetStreams()[0].GetName()
	}
	if err := checkLoopback(p.addr); err != nil {
		p.t.Fatalf("the publisher listens at %q: %v (ranvier-wire §3.3: on one machine a publisher listens on 127.0.0.1)", p.addr, err)
	}
}

func (p *pub) basicListen(streams ...*conformpb.LiveStream) {
	p.listen(&conformpb.LiveListenPublisher{Streams: streams})
}

// publish has the SUT publish; against an observed device it does nothing,
// the device publishing on its own.
func (p *pub) publish(op *conformpb.LivePublish) *conformpb.LivePublished {
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

// waitFor returns the publish op fields that wait for n subscribers to have
// sent their Request, bounded by owed.
func (p *pub) waitFor(n uint32) (uint32, uint32) { return n, millis(owed(p.t)) }

// dial connects one more subscriber, sending nothing yet.
func (p *pub) dial(readBuffer int) *peer.PeerSubscriber {
	ctx, cancel := contextWithin(p.t.Context(), owed(p.t))
	defer cancel()
	s, err := peer.DialPublisher(ctx, p.addr, readBuffer, peer.Limits{})
	if err != nil {
		p.t.Fatalf("the publisher does not accept a subscriber at %s: %v", p.addr, err)
	}
	p.subs = append(p.subs, s)
	return s
}

// subscribe dials and sends the Request for p.name.
func (p *pub) subscribe(readBuffer int) *peer.PeerSubscriber {
	s := p.dial(readBuffer)
	p.request(s, nil)
	return s
}

func (p *pub) request(s *peer.PeerSubscriber, extra []byte) {
	ctx, cancel := contextWithin(p.t.Context(), owed(p.t))
	defer cancel()
	if err := s.SendRequest(ctx, p.name, extra); err != nil {
		if p.t.Context().Err() != nil {
			p.t.Harnessf("the case ended while conform sent its Request: %v", err)
		}
		p.t.Fatalf("sending the Request: the publisher closed the connection: %v", err)
	}
}

// collect returns what s has read once it holds n samples (a driven
// publisher owes them) or, against an observed device, after
// observeWindow. A device that sent no sample, and nothing unreadable,
// leaves nothing to judge, and the case skips.
func (p *pub) collect(s *peer.PeerSubscriber, n int) peer.Transcript {
	if p.observed {
		ctx, cancel := contextWithin(p.t.Context(), observeWindow+owed(p.t))
		defer cancel()
		s.Idle(ctx, observeWindow)
		tr, _ := s.Sync(ctx)
		if w := readWire(tr); len(w.samples) == 0 && len(w.unreadable) == 0 && w.framingErr == nil {
			p.t.Skipf("the device sent no sample within %v of the Request for %q: nothing to judge (%s); name the stream to request as the path of --peer, tcp://HOST:PORT/NAME", observeWindow, p.name, describeTranscript(tr))
		}
		return tr
	}
	ctx, cancel := contextWithin(p.t.Context(), owed(p.t))
	defer cancel()
	tr, err := waitSamples(ctx, s, n)
	if err != nil {
		p.t.Fail(reports.Evidence{Message: fmt.Sprintf("the publisher did not deliver the %d samples it owed within %v", n, owed(p.t)), Got: describeTranscript(tr)})
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

func liveStream(name, node, schema, domain string) *conformpb.LiveStream {
	return &conformpb.LiveStream{Name: name, Node: node, SchemaId: schema, SourceClockDomain: domain}
}

func publishN(stream, n uint32, src uint64) *conformpb.LivePublishSample {
	return &conformpb.LivePublishSample{Stream: stream, Count: n, SourceTimestampNs: src, Values: fmt.Appendf(nil, "handle %d", stream)}
}

// wireRead is a subscriber connection's frames, read as a data plane.
type wireRead struct {
	frames []peer.DataFrame
	// samples are the decoded samples in order, with their frame index.
	samples []wireSample
	// firstAnnounce is the frame index of each reference's first
	// announcement; announces counts them.
	firstAnnounce map[uint32]int
	announces     map[uint32]int
	infos         map[uint32]*messagepb.StreamInfo
	// announcements are every announcement, in order.
	announcements []*messagepb.StreamInfo
	// unreadable lists the frames that decoded to nothing: misaligned bytes
	// read as a frame, or a Frame with no variant.
	unreadable []string
	// bothVariants lists the frames that carry an announcement and a
	// sample at once.
	bothVariants []string
	framingErr   error
}

type wireSample struct {
	at  int
	smp *messagepb.Sample
	raw []byte
}

func readWire(tr peer.Transcript) *wireRead {
	w := &wireRead{frames: tr.DataFrames(), firstAnnounce: map[uint32]int{}, announces: map[uint32]int{}, infos: map[uint32]*messagepb.StreamInfo{}, framingErr: tr.FramingError}
	for i, f := range w.frames {
		if topLevelFields(f.Payload)[1] > 0 && topLevelFields(f.Payload)[2] > 0 {
			w.bothVariants = append(w.bothVariants, fmt.Sprintf("frame %d: % x", i+1, clip(f.Payload, 64)))
		}
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
			w.announcements = append(w.announcements, f.Msg.GetAnnounce())
		case f.Msg.GetSample() != nil:
			w.samples = append(w.samples, wireSample{at: i, smp: f.Msg.GetSample(), raw: f.Payload})
		default:
			w.unreadable = append(w.unreadable, fmt.Sprintf("frame %d (%d bytes) carries neither an announcement nor a sample", i+1, len(f.Payload)))
		}
	}
	return w
}

// topLevelFields counts the length-delimited top-level fields of a payload
// by number. protobuf decoding keeps the last of two oneof variants
// silently, so a Frame carrying both is seen only in its bytes.
func topLevelFields(b []byte) map[protowire.Number]int {
	out := map[protowire.Number]int{}
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return out
		}
		m := protowire.ConsumeFieldValue(num, typ, b[n:])
		if m < 0 {
			return out
		}
		if typ == protowire.BytesType {
			out[num]++
		}
		b = b[n+m:]
	}
	return out
}

func clip(b []byte, n int) []byte { return b[:min(len(b), n)] }

// seqs returns each reference's sequences in arrival order.
func (w *wireRead) seqs() map[uint32][]uint64 {
	out := map[uint32][]uint64{}
	for _, s := range w.samples {
		out[s.smp.GetStreamRef()] = append(out[s.smp.GetStreamRef()], s.smp.GetSequence())
	}
	return out
}

// checkFrames fails the case when the byte stream is misaligned — a framing
// error, or frames that do not decode, what a resent buffer produces — and
// when a Frame carries both an announcement and a sample, which a sender
// never emits (ranvier-wire §8 item 1).
func checkFrames(t *cases.T, w *wireRead, why string) {
	if w.framingErr != nil || len(w.unreadable) > 0 {
		got := fmt.Sprint(w.unreadable)
		if w.framingErr != nil {
			got = fmt.Sprintf("framing error: %v; %s", w.framingErr, got)
		}
		t.Fail(evidence.Named("the publisher's frames on the wire", reports.Evidence{Message: "the publisher's byte stream is misaligned: frames that do not decode, or a length prefix that cannot be believed (" + why + ")",
			Expected: "every frame a Frame carrying an announcement or a sample", Got: got}))
	}
	if len(w.bothVariants) > 0 {
		t.Fail(evidence.Named("Frame.payload (both variants set)", reports.Evidence{Message: "the publisher sent a Frame carrying both an announcement and a sample (ranvier-wire §8 item 1: a sender never emits one; a receiver keeps whichever came last)",
			Expected: "one payload variant per Frame", Got: fmt.Sprint(w.bothVariants)}))
	}
}

// checkAnnouncedBefore fails the case for every reference whose first
// sample arrived before its announcement.
func checkAnnouncedBefore(t *cases.T, w *wireRead) {
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
			t.Fail(evidence.Named("the order of Frame{announce} and Frame{sample} on the wire", reports.Evidence{Message: fmt.Sprintf("stream_ref %d's first sample arrived before its announcement (ranvier-wire §4.2)", ref),
				Expected: "Frame{announce} before the first Frame{sample} of the stream", Got: got}))
		}
	}
}

func checkNoRepeats(t *cases.T, w *wireRead) {
	for ref, n := range w.announces {
		if n > 1 {
			t.Fail(reports.Evidence{Message: fmt.Sprintf("stream_ref %d was announced %d times on one connection (ranvier-streams §6.4)", ref, n), Expected: "once"})
		}
	}
}

// checkExactSeqs checks each reference in want delivered exactly its
// sequences, in order.
func checkExactSeqs(t *cases.T, w *wireRead, want map[uint32][]uint64, why string) {
	got := w.seqs()
	for ref, ws := range want {
		if !slices.Equal(got[ref], ws) {
			t.Fail(evidence.Named("Sample.sequence on the wire", reports.Evidence{Message: fmt.Sprintf("stream_ref %d's sequences on the wire are not the ones published, in order (%s)", ref, why),
				Expected: compactSeqs(ws), Got: compactSeqs(got[ref])}))
		}
	}
}

// checkIncreasing checks every reference's sequences rise: a gap is a loss
// the subscriber counts, a step back is the order §2.3 forbids.
func checkIncreasing(t *cases.T, w *wireRead) {
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

func pubNothingBeforeRequest(t *cases.T) {
	p := newPub(t)
	defer p.close()
	p.basicListen(liveStream("gaze", "eye", "conform.v1.Gaze", ""))
	s := p.dial(0)
	p.publish(&conformpb.LivePublish{Samples: []*conformpb.LivePublishSample{publishN(0, 5, 0)}})
	idle(t, acceptWatch)
	ctx, cancel := contextWithin(t.Context(), owed(t))
	defer cancel()
	tr, _ := s.Sync(ctx)
	if tr.Bytes > 0 {
		w := readWire(tr)
		t.Fail(evidence.Named("the connection before the Request", reports.Evidence{Message: "the publisher sent bytes before the subscriber's Request (ranvier-wire §4.1)",
			Expected: "nothing until the Request", Got: fmt.Sprintf("%s: %d announcements, %d samples", describeTranscript(tr), len(w.firstAnnounce), len(w.samples))}))
	}
	p.request(s, nil)
	n, wait := p.waitFor(1)
	p.publish(&conformpb.LivePublish{WaitSubscribers: n, WaitTimeoutMs: wait, Samples: []*conformpb.LivePublishSample{publishN(0, 3, 0)}})
	w := readWire(p.collect(s, 3))
	checkFrames(t, w, "after the Request")
}

func pubAnnouncesEvery(t *cases.T) {
	p := newPub(t)
	defer p.close()
	p.basicListen(
		liveStream("gaze", "eye-left", "conform.v1.Gaze", ""),
		liveStream("gaze", "eye-right", "conform.v1.Gaze", ""),
		liveStream("pupil", "eye-left", "conform.v1.Pupil", ""),
		liveStream("gaze", "head", "conform.v1.HeadGaze", ""),
	)
	p.driven()
	s := p.subscribe(0)
	// The last stream under the name publishes first, so that a publisher
	// announcing only the first stream it finds shows.
	n, wait := p.waitFor(1)
	p.publish(&conformpb.LivePublish{WaitSubscribers: n, WaitTimeoutMs: wait, Samples: []*conformpb.LivePublishSample{
		publishN(3, 2, 0), publishN(0, 2, 0), publishN(1, 2, 0), publishN(2, 2, 0)}})
	w := readWire(p.collect(s, 6))
	checkFrames(t, w, "")
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
		t.Fail(evidence.Named("Frame{announce} before the first Frame{sample}", reports.Evidence{Message: "not every stream under the requested name was announced before the connection's first sample (ranvier-streams §6.3)",
			Input: "three streams under \"gaze\", one under \"pupil\"", Expected: fmt.Sprintf("stream_refs %v announced first", want), Got: fmt.Sprintf("announced before the first sample: %v", before)}))
	}
}

func pubAnnounceBeforeSample(t *cases.T) {
	p := newPub(t)
	defer p.close()
	p.basicListen(liveStream("gaze", "eye-left", "conform.v1.Gaze", ""), liveStream("gaze", "eye-right", "conform.v1.Gaze", ""))
	s := p.subscribe(0)
	n, wait := p.waitFor(1)
	p.publish(&conformpb.LivePublish{WaitSubscribers: n, WaitTimeoutMs: wait, Samples: []*conformpb.LivePublishSample{publishN(1, 3, 0), publishN(0, 3, 0)}})
	w := readWire(p.collect(s, 6))
	checkFrames(t, w, "")
	checkAnnouncedBefore(t, w)
}

func pubNoRepeat(t *cases.T) {
	p := newPub(t)
	defer p.close()
	p.basicListen(liveStream("gaze", "eye-left", "conform.v1.Gaze", ""), liveStream("gaze", "eye-right", "conform.v1.Gaze", ""))
	s := p.subscribe(0)
	var smps []*conformpb.LivePublishSample
	for range 10 {
		smps = append(smps, publishN(0, 1, 0), publishN(1, 1, 0))
	}
	n, wait := p.waitFor(1)
	p.publish(&conformpb.LivePublish{WaitSubscribers: n, WaitTimeoutMs: wait, Samples: smps, DrainTimeoutMs: millis(owed(t))})
	tr := p.collect(s, 20)
	if !p.observed {
		// The publisher has written everything it queued (drain_timeout_ms):
		// anything more is in the socket now.
		ctx, cancel := contextWithin(t.Context(), owed(t))
		defer cancel()
		tr, _ = s.Sync(ctx)
	}
	w := readWire(tr)
	checkFrames(t, w, "")
	checkNoRepeats(t, w)
}

func pubSecondConnection(t *cases.T) {
	p := newPub(t)
	defer p.close()
	p.basicListen(liveStream("gaze", "eye-left", "conform.v1.Gaze", ""), liveStream("gaze", "eye-right", "conform.v1.Gaze", ""))
	a := p.subscribe(0)
	n, wait := p.waitFor(1)
	p.publish(&conformpb.LivePublish{WaitSubscribers: n, WaitTimeoutMs: wait, Samples: []*conformpb.LivePublishSample{publishN(0, 2, 0), publishN(1, 2, 0)}, DrainTimeoutMs: millis(owed(t))})
	wa := readWire(p.collect(a, 4))
	b := p.subscribe(0)
	n, wait = p.waitFor(2)
	p.publish(&conformpb.LivePublish{WaitSubscribers: n, WaitTimeoutMs: wait, Samples: []*conformpb.LivePublishSample{publishN(0, 2, 0), publishN(1, 2, 0)}})
	wb := readWire(p.collect(b, 4))
	checkFrames(t, wb, "the second connection")
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
		t.Fail(evidence.Named("the second connection's Frame{announce}", reports.Evidence{Message: "the second connection was not announced every stream the first was (ranvier-streams §6.3: what was announced is kept per connection)",
			Expected: fmt.Sprint(onA), Got: fmt.Sprint(onB)}))
	}
}

func pubLaterStream(t *cases.T) {
	p := newPub(t)
	defer p.close()
	p.basicListen(liveStream("gaze", "eye-left", "conform.v1.Gaze", ""))
	p.driven()
	s := p.subscribe(0)
	n, wait := p.waitFor(1)
	p.publish(&conformpb.LivePublish{WaitSubscribers: n, WaitTimeoutMs: wait, Samples: []*conformpb.LivePublishSample{publishN(0, 2, 0)}, DrainTimeoutMs: millis(owed(t))})
	p.collect(s, 2)
	p.publish(&conformpb.LivePublish{
		Open:    []*conformpb.LiveStream{liveStream("gaze", "eye-right", "conform.v1.Pupil", "")},
		Samples: []*conformpb.LivePublishSample{publishN(1, 2, 0), publishN(0, 1, 0)},
	})
	w := readWire(p.collect(s, 5))
	checkFrames(t, w, "")
	checkAnnouncedBefore(t, w)
	if len(w.firstAnnounce) < 2 {
		t.Fail(evidence.Named("Frame{announce} on the connection", reports.Evidence{Message: "the stream opened after the subscriber attached was never announced on its connection (ranvier-streams §6.3)",
			Expected: "two announcements", Got: fmt.Sprintf("%d", len(w.firstAnnounce))}))
	}
}

func pubSequence(t *cases.T) {
	p := newPub(t)
	defer p.close()
	p.basicListen(liveStream("gaze", "eye-left", "conform.v1.Gaze", ""), liveStream("gaze", "eye-right", "conform.v1.Gaze", ""))
	p.driven()
	s := p.subscribe(0)
	var smps []*conformpb.LivePublishSample
	for i := range 10 {
		smps = append(smps, publishN(0, 1, 0))
		if i < 7 {
			smps = append(smps, publishN(1, 1, 0))
		}
	}
	n, wait := p.waitFor(1)
	p.publish(&conformpb.LivePublish{WaitSubscribers: n, WaitTimeoutMs: wait, Samples: smps})
	w := readWire(p.collect(s, 17))
	checkFrames(t, w, "")
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
	const count = 300
	p := newPub(t)
	defer p.close()
	p.basicListen(liveStream("gaze", "eye-left", "conform.v1.Gaze", ""), liveStream("gaze", "eye-right", "conform.v1.Gaze", ""))
	s := p.subscribe(0)
	n, wait := p.waitFor(1)
	p.publish(&conformpb.LivePublish{WaitSubscribers: n, WaitTimeoutMs: wait, Concurrency: 8,
		Samples: []*conformpb.LivePublishSample{publishN(0, count, 0), publishN(1, count, 0)}})
	w := readWire(p.collect(s, 2*count))
	checkFrames(t, w, "")
	if p.observed {
		checkIncreasing(t, w)
		return
	}
	want := map[uint32][]uint64{}
	for ref := range w.seqs() {
		want[ref] = seqs(1, count)
	}
	if len(want) != 2 {
		t.Failf("samples of %d streams arrived, want 2", len(want))
	}
	checkExactSeqs(t, w, want, fmt.Sprintf("%d samples on each of two streams, published by eight threads at once", count))
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
	p := newPub(t)
	defer p.close()
	p.basicListen(liveStream("gaze", "eye", "conform.v1.Gaze", "device.tracker-1"))
	s := p.subscribe(0)
	n, wait := p.waitFor(1)
	p.publish(&conformpb.LivePublish{WaitSubscribers: n, WaitTimeoutMs: wait, Samples: []*conformpb.LivePublishSample{publishN(0, 5, 123456789)}})
	w := readWire(p.collect(s, 5))
	checkFrames(t, w, "")
	for _, smp := range w.samples {
		types, err := sampleTimestampTypes(smp.raw)
		if err != nil {
			t.Failf("sample frame %d does not parse: %v", smp.at+1, err)
			continue
		}
		for f, typ := range types {
			if typ != protowire.Fixed64Type {
				t.Fail(evidence.Named("Sample: the wire type of a timestamp field", reports.Evidence{Message: fmt.Sprintf("Sample field %d (a timestamp) is not encoded fixed64 (ranvier-wire §4.3)", f),
					Expected: "wire type 1 (fixed64)", Got: fmt.Sprintf("wire type %d", typ), Input: fmt.Sprintf("% x", smp.raw)}))
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
	p := newPub(t)
	defer p.close()
	p.basicListen(liveStream("gaze", "eye-left", "conform.v1.Gaze", ""), liveStream("gaze", "eye-right", "", ""))
	s := p.subscribe(0)
	n, wait := p.waitFor(1)
	p.publish(&conformpb.LivePublish{WaitSubscribers: n, WaitTimeoutMs: wait, Samples: []*conformpb.LivePublishSample{publishN(0, 3, 0), publishN(1, 3, 0)}})
	w := readWire(p.collect(s, 6))
	checkFrames(t, w, "")
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
	p := newPub(t)
	defer p.close()
	p.basicListen(liveStream("gaze", "eye", "conform.v1.Gaze", "device.tracker-1"), liveStream("gaze", "stimulus", "conform.v1.Stimulus", ""))
	s := p.subscribe(0)
	n, wait := p.waitFor(1)
	p.publish(&conformpb.LivePublish{WaitSubscribers: n, WaitTimeoutMs: wait, Samples: []*conformpb.LivePublishSample{publishN(0, 3, src), publishN(1, 3, src)}})
	w := readWire(p.collect(s, 6))
	checkFrames(t, w, "")
	checkAnnouncedBefore(t, w)
	for _, smp := range w.samples {
		info, ok := w.infos[smp.smp.GetStreamRef()]
		if !ok {
			continue
		}
		got := smp.smp.GetSourceTimestampNs()
		switch {
		case info.GetSourceClockDomain() == "" && got != 0:
			t.Fail(evidence.Named("Sample.sourceTimestampNs", reports.Evidence{Message: fmt.Sprintf("stream_ref %d announced no source clock domain and its sample carries a source timestamp (ranvier-wire §4.3)", smp.smp.GetStreamRef()),
				Expected: "source_timestamp_ns 0", Got: fmt.Sprint(got)}))
			return
		case !p.observed && info.GetSourceClockDomain() != "" && got != src:
			t.Fail(evidence.Named("Sample.sourceTimestampNs", reports.Evidence{Message: fmt.Sprintf("stream_ref %d announced clock domain %q and its source timestamp was not carried untouched (ranvier-wire §4.3)", smp.smp.GetStreamRef(), info.GetSourceClockDomain()),
				Expected: fmt.Sprint(src), Got: fmt.Sprint(got)}))
			return
		}
	}
}

func pubIgnoresAfterRequest(t *cases.T) {
	p := newPub(t)
	defer p.close()
	p.basicListen(liveStream("gaze", "eye", "conform.v1.Gaze", ""))
	s := p.dial(0)
	// After the Request, in the same write: a second Request for another
	// name, garbage, and a prefix no reader may believe.
	extra := append(peer.MustFrame(&messagepb.Request{StreamName: "other"}), peer.Garbage()...)
	extra = append(extra, peer.TooLargePrefix()...)
	p.request(s, extra)
	ctx, cancel := contextWithin(t.Context(), owed(t))
	defer cancel()
	if err := s.Send(ctx, peer.Garbage()); err != nil {
		t.Failf("the publisher closed the connection when the subscriber sent bytes after its Request (ranvier-wire §4.1): %v", err)
	}
	n, wait := p.waitFor(1)
	p.publish(&conformpb.LivePublish{WaitSubscribers: n, WaitTimeoutMs: wait, Samples: []*conformpb.LivePublishSample{publishN(0, 5, 0)}})
	tr := p.collect(s, 5)
	w := readWire(tr)
	checkFrames(t, w, "")
	if tr.Ended {
		t.Fail(reports.Evidence{Message: "the publisher ended the connection after bytes that followed the Request (ranvier-wire §4.1: they are not read)", Got: describeTranscript(tr)})
	}
}

// waitBackedUp waits until the publisher can write no more to s, which has
// stopped reading: the bytes the kernel has received for s stop growing
// above base. Where the system does not count them, it waits slowHold.
func waitBackedUp(t *cases.T, s *peer.PeerSubscriber, base int64) {
	const poll, steady = 10 * time.Millisecond, 3
	deadline := time.Now().Add(owed(t))
	prev, still := int64(-1), 0
	for time.Now().Before(deadline) {
		n, err := s.Received()
		if err != nil {
			idle(t, slowHold)
			return
		}
		if n > base && n == prev {
			if still++; still >= steady {
				return
			}
		} else {
			still = 0
		}
		prev = n
		idle(t, poll)
	}
	// The publisher never filled the buffers: what it delivers once the
	// reader resumes is judged below.
}

// pubSlowReader stops reading while the publisher sends more than the
// socket buffers hold, keeps the reader stopped a while once the publisher
// can write no more, then reads everything. aligned judges the bytes
// (§1.4); otherwise the connection's survival and completeness (§6.5).
func pubSlowReader(t *cases.T, aligned bool) {
	const count, size = 48, 32 << 10
	p := newPub(t)
	defer p.close()
	p.listen(&conformpb.LiveListenPublisher{Streams: []*conformpb.LiveStream{liveStream("camera", "cam", "conform.v1.Frame", "")}, SendBuffer: smallBuffer})
	s := p.subscribe(smallBuffer)
	n, wait := p.waitFor(1)
	p.publish(&conformpb.LivePublish{WaitSubscribers: n, WaitTimeoutMs: wait, Samples: []*conformpb.LivePublishSample{publishN(0, 1, 0)}, DrainTimeoutMs: millis(owed(t))})
	if !p.observed {
		p.collect(s, 1)
	}
	s.Pause()
	base, _ := s.Received()
	big := &conformpb.LivePublishSample{Stream: 0, Count: count, Values: bytes.Repeat([]byte{0xa5}, size)}
	p.publish(&conformpb.LivePublish{Samples: []*conformpb.LivePublishSample{big}})
	waitBackedUp(t, s, base)
	idle(t, slowHold)
	s.Resume()
	var tr peer.Transcript
	if p.observed {
		tr = p.collect(s, 0)
	} else {
		wctx, wcancel := contextWithin(t.Context(), owed(t))
		defer wcancel()
		var err error
		tr, err = waitSamples(wctx, s, 1+count)
		if err != nil && !aligned {
			t.Fail(reports.Evidence{Message: fmt.Sprintf("after the subscriber stopped reading with the publisher's writes backed up, the publisher did not deliver the %d samples published meanwhile within %v of the reader resuming (ranvier-wire §6.5: a slow reader is waited for)", count, owed(t)),
				Got: describeTranscript(tr)})
		}
	}
	w := readWire(tr)
	if aligned {
		checkFrames(t, w, fmt.Sprintf("%d samples of %d bytes written to a subscriber that stopped reading", count, size))
		for _, smp := range w.samples {
			if v := smp.smp.GetValues(); !p.observed && smp.smp.GetSequence() > 1 && (len(v) != size || v[0] != 0xa5 || v[len(v)-1] != 0xa5) {
				t.Fail(evidence.Named("Sample.values", reports.Evidence{Message: fmt.Sprintf("sample %d arrived with values other than published: bytes repeated or lost on the wire (ranvier-wire §1.4)", smp.smp.GetSequence()),
					Expected: fmt.Sprintf("%d bytes of a5", size), Got: fmt.Sprintf("%d bytes", len(v))}))
				break
			}
		}
		return
	}
	checkFrames(t, w, "")
	if tr.Ended {
		t.Fail(reports.Evidence{Message: "the publisher ended the connection of a subscriber that stopped reading (ranvier-wire §6.5)", Got: describeTranscript(tr)})
	}
	if p.observed {
		checkIncreasing(t, w)
		return
	}
	want := map[uint32][]uint64{}
	for ref := range w.seqs() {
		want[ref] = seqs(1, count+1)
	}
	checkExactSeqs(t, w, want, "every sample published while the subscriber was not reading")
}

func pubTooLargeRequest(t *cases.T) {
	p := newPub(t)
	defer p.close()
	p.basicListen(liveStream("gaze", "eye", "conform.v1.Gaze", ""))
	s := p.dial(0)
	req := peer.MustFrame(&messagepb.Request{StreamName: p.name})
	ctx, cancel := contextWithin(t.Context(), owed(t))
	defer cancel()
	s.Mark(peer.MarkRequest)
	if err := s.Send(ctx, append(peer.TooLargePrefix(), req...)); err != nil {
		t.Note("sending: %v", err)
	}
	// A publisher that found the Request behind the bad prefix announces
	// and sends these.
	p.publish(&conformpb.LivePublish{Samples: []*conformpb.LivePublishSample{publishN(0, 3, 0)}})
	tr, err := s.WaitEnded(ctx)
	if tr.Bytes > 0 {
		t.Fail(evidence.Named("the connection after the too-large prefix", reports.Evidence{Message: "the publisher sent frames after a Request behind a prefix claiming 16,777,217 bytes: it resynchronised (ranvier-wire §6.2)",
			Input: "01 00 00 01 then a Request frame", Expected: "nothing, then the connection closed", Got: describeTranscript(tr)}))
	}
	if err != nil {
		t.Fail(evidence.Named("the connection after the too-large prefix", reports.Evidence{Message: fmt.Sprintf("the publisher kept the connection open %v after a Request it could not frame (ranvier-wire §6.2: it closes the connection, silently)", owed(t)),
			Input: "01 00 00 01 then a Request frame", Expected: "the connection closed", Got: describeTranscript(tr)}))
	}
}

func pubDepartedSubscriber(t *cases.T) {
	const more = 200
	p := newPub(t)
	defer p.close()
	p.basicListen(liveStream("gaze", "eye", "conform.v1.Gaze", ""))
	p.driven()
	a, b := p.subscribe(0), p.subscribe(0)
	n, wait := p.waitFor(2)
	p.publish(&conformpb.LivePublish{WaitSubscribers: n, WaitTimeoutMs: wait, Samples: []*conformpb.LivePublishSample{publishN(0, 3, 0)}, DrainTimeoutMs: millis(owed(t))})
	p.collect(a, 3)
	p.collect(b, 3)
	// A dies as a process does: its socket reset, nothing said first.
	if err := a.Reset(); err != nil {
		t.Harnessf("resetting subscriber A: %v", err)
	}
	p.publish(&conformpb.LivePublish{Samples: []*conformpb.LivePublishSample{publishN(0, more, 0)}, DrainTimeoutMs: millis(owed(t))})
	wb := readWire(p.collect(b, 3+more))
	checkFrames(t, wb, "the subscriber that stayed")
	checkExactSeqs(t, wb, map[uint32][]uint64{wb.refOf(): seqs(1, 3+more)}, fmt.Sprintf("%d samples published after another subscriber's socket was reset", more))
	if tr := b.Transcript(); tr.Ended {
		t.Fail(reports.Evidence{Message: "the publisher ended the connection of the subscriber that stayed, after another subscriber died (ranvier-wire §3.3)", Got: describeTranscript(tr)})
	}
	c := p.subscribe(0)
	n, wait = p.waitFor(3)
	p.publish(&conformpb.LivePublish{WaitSubscribers: n, WaitTimeoutMs: wait, Samples: []*conformpb.LivePublishSample{publishN(0, 3, 0)}})
	wc := readWire(p.collect(c, 3))
	checkFrames(t, wc, "a subscriber that dialled after another died")
	checkAnnouncedBefore(t, wc)
	checkExactSeqs(t, wc, map[uint32][]uint64{wc.refOf(): seqs(3+more+1, 3+more+3)}, "a subscriber that dialled after another died")
}

// refOf returns the reference of the connection's first sample, 0 when none
// arrived.
func (w *wireRead) refOf() uint32 {
	if len(w.samples) == 0 {
		return 0
	}
	return w.samples[0].smp.GetStreamRef()
}

func pubAnnouncementFields(t *cases.T) {
	p := newPub(t)
	defer p.close()
	streams := []*conformpb.LiveStream{
		liveStream("gaze", "eye-left", "conform.v1.Gaze", ""),
		liveStream("gaze", "eye-right", "", "device.tracker-1"),
	}
	p.basicListen(streams...)
	s := p.subscribe(0)
	n, wait := p.waitFor(1)
	p.publish(&conformpb.LivePublish{WaitSubscribers: n, WaitTimeoutMs: wait, Samples: []*conformpb.LivePublishSample{publishN(0, 2, 0), publishN(1, 2, 0)}})
	w := readWire(p.collect(s, 4))
	checkFrames(t, w, "")
	if len(w.announcements) == 0 {
		t.Failf("no announcement arrived on the connection, so none could be read (ranvier-wire §4.2: every stream is announced before its first sample)")
		return
	}
	nodes := map[uint32]string{}
	for i, ref := range p.refs {
		if ref != 0 && i < len(streams) {
			nodes[ref] = streams[i].GetNode()
		}
	}
	for _, a := range w.announcements {
		ref := a.GetStreamRef()
		switch {
		case a.GetName() == "":
			t.Fail(evidence.Named("StreamInfo.name", reports.Evidence{Message: fmt.Sprintf("the announcement of stream_ref %d names no stream (ranvier-wire §4.4, ranvier-streams §6.1: a name is never empty)", ref),
				Expected: fmt.Sprintf("name %q", p.name), Got: meaning.Render(a)}))
		case !p.observed && a.GetName() != p.name:
			t.Fail(evidence.Named("StreamInfo.name", reports.Evidence{Message: fmt.Sprintf("the announcement of stream_ref %d names another stream than the one it publishes under (ranvier-streams §6.1)", ref),
				Expected: fmt.Sprintf("name %q", p.name), Got: fmt.Sprintf("name %q", a.GetName())}))
		}
		want, known := nodes[ref]
		switch {
		case a.GetNode() == "":
			t.Fail(evidence.Named("StreamInfo.node", reports.Evidence{Message: fmt.Sprintf("the announcement of stream_ref %d names no node (ranvier-streams §6.1: an announcement names the node that declared the stream)", ref),
				Expected: "a node", Got: meaning.Render(a)}))
		case known && a.GetNode() != want:
			t.Fail(evidence.Named("StreamInfo.node", reports.Evidence{Message: fmt.Sprintf("the announcement of stream_ref %d names another node than the one that declared the stream (ranvier-streams §6.1)", ref),
				Expected: fmt.Sprintf("node %q", want), Got: fmt.Sprintf("node %q", a.GetNode())}))
		}
		if (a.GetHostId() == "") != (a.GetBootId() == "") {
			t.Fail(reports.Evidence{Message: fmt.Sprintf("the announcement of stream_ref %d carries one of host_id and boot_id without the other (ranvier-streams §6.1: both, or neither)", ref),
				Got: fmt.Sprintf("host_id %q, boot_id %q", a.GetHostId(), a.GetBootId())})
		}
	}
}
