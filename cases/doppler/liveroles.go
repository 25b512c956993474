package doppler

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/conform-suite/conform/cases"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	dp "github.com/conform-suite/conform/ref/doppler"
	"github.com/conform-suite/conform/reports"
	"github.com/conform-suite/conform/reports/evidence"
)

// liveRoles are the six roles on a real broker: the subjects and JetStream
// objects they use (doppler §5), REQ/REP and its raw-bytes face (§2), the
// work queue's acks and redelivery (§6), who may send telemetry (§3), the
// endpoint's form (§5, §9) and the per-socket sequence (§7).
func liveRoles(k *cases.Kit, _ *vectors) []cases.Case {
	return []cases.Case{
		k.Must(func() cases.Case {
			return cases.Case{
				ID:      "doppler/5/live-pub-subjects",
				Title:   "A PUB of each type publishes on <base>.pub.<type>, the type token being ci8 ci16 ci32 cf32 cf64 raw tlm",
				Spec:    "doppler-streaming §5",
				Profile: LiveProfile,
				Requirements: []string{"doppler-streaming§2#1", "doppler-streaming§5#1", "doppler-streaming§5#2",
					"reconstructed§doppler-subjects#1"},
				Run: livePubSubjects,
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:      "doppler/5/live-work-queue-names",
				Title:   "A PUSH creates the JetStream work-queue stream DP_WORK_<base> capturing <base>.work.*, and its frames are stored whole on <base>.work.<type>",
				Spec:    "doppler-streaming §5, §2",
				Profile: LiveProfile,
				Requirements: []string{"doppler-streaming§2#2", "doppler-streaming§5#5", "doppler-streaming§5#7",
					"reconstructed§doppler-subjects#4"},
				Run: liveWorkQueueNames,
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "doppler/5/live-existing-stream-adopted",
				Title:        "A PUSH adopts a work-queue stream that already exists as it is: a stream provisioned with its own limits and description keeps them, and the pushed frame is stored in it",
				Spec:         "doppler-streaming §5",
				Profile:      LiveProfile,
				Requirements: []string{"doppler-streaming§5#6"},
				Run:          liveExistingStream,
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "doppler/5/live-endpoint-default-base",
				Title:        "An endpoint with no path uses the default base: a PUB joined on nats://host:port publishes on doppler.pub.<type>",
				Spec:         "doppler-streaming §5",
				Profile:      LiveProfile,
				Requirements: []string{"doppler-streaming§5#3", "reconstructed§doppler-subjects#5"},
				Run:          liveDefaultBase,
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:      "doppler/2/live-rep-answers-requests",
				Title:   "A REP receives requests on <base>.req and answers each with one unchunked frame that passes every receiver check, numbered from 0 by the REP socket",
				Spec:    "doppler-streaming §2, §5, §7",
				Profile: LiveProfile,
				Requirements: []string{"doppler-streaming§2#1", "doppler-streaming§5#2", "doppler-streaming§7#1",
					"reconstructed§doppler-subjects#3"},
				Run: liveRepAnswers,
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "doppler/2/live-rep-raw-bytes-face",
				Title:        "The raw-bytes face of REP answers with a byte count, not a sample block: kind IQ, format \"SB\", num_samples the byte count",
				Spec:         "doppler-streaming §2",
				Profile:      LiveProfile,
				Requirements: []string{"doppler-streaming§2#3", "reconstructed§doppler-formats#2"},
				Run:          liveRepRawFace,
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:      "doppler/2/live-req-raw-bytes-face",
				Title:   "The raw-bytes face of REQ sends its bytes on <base>.req as a frame of kind IQ, format \"SB\", and hands back the reply's bytes",
				Spec:    "doppler-streaming §2, §5, §7",
				Profile: LiveProfile,
				Requirements: []string{"doppler-streaming§2#3", "reconstructed§doppler-formats#2",
					"reconstructed§doppler-subjects#3"},
				Run: liveReqRawFace,
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "doppler/2/live-req-typed-sample-block",
				Title:        "A REQ sends a typed sample block on <base>.req — a CI16 frame stays CI16 — and hands back the typed reply as it arrived",
				Spec:         "doppler-streaming §2",
				Profile:      LiveProfile,
				Requirements: []string{"doppler-streaming§2#4", "reconstructed§doppler-subjects#3"},
				Run:          liveReqTyped,
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "doppler/3/live-telemetry-only-from-a-publisher",
				Title:        "Only a publisher emits telemetry: a PUSH of telemetry is not opened, a REQ refuses to send a telemetry request, and a REP refuses to answer with a telemetry reply",
				Spec:         "doppler-streaming §3",
				Profile:      LiveProfile,
				Requirements: []string{"doppler-streaming§3#20"},
				Run:          liveTelemetryPublisherOnly,
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "doppler/6/live-pull-acks-work",
				Title:        "A PULL worker receives pushed frames whole, in order, and acks them: acked work leaves the queue",
				Spec:         "doppler-streaming §6, §2, §7",
				Profile:      LiveProfile,
				Requirements: []string{"doppler-streaming§2#2", "doppler-streaming§6#2", "reconstructed§doppler-subjects#4"},
				Run:          livePullAcks,
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "doppler/6/live-redelivered-after-worker-dies",
				Title:        "A worker that dies before acking gets its frame redelivered to another worker",
				Spec:         "doppler-streaming §6, §9",
				Profile:      LiveProfile,
				Requirements: []string{"doppler-streaming§6#3"},
				Run:          liveRedelivery,
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "doppler/7/live-sequence-per-socket",
				Title:        "Each socket counts its own sequence from 0, one per frame: two PUB sockets interleaving their sends each number 0, 1, 2",
				Spec:         "doppler-streaming §7",
				Profile:      LiveProfile,
				Requirements: []string{"doppler-streaming§7#1"},
				Run:          liveSequence,
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "doppler/8/live-req-timeout-is-dp-err-timeout",
				Title:        "A request whose reply does not come within the REQ's timeout returns DP_ERR_TIMEOUT (-5), a normal return, not DP_ERR",
				Spec:         "doppler-streaming §8",
				Profile:      LiveProfile,
				Requirements: []string{"doppler-streaming§8#6", "reconstructed§doppler-errors#1"},
				Run:          liveReqTimeout,
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "doppler/9/live-endpoint-nats-scheme-only",
				Title:        "The endpoint parser accepts nats:// only and names one server: an endpoint of another scheme (tls://, ws://) or with a comma-separated seed list opens no socket",
				Spec:         "doppler-streaming §9",
				Profile:      LiveProfile,
				Requirements: []string{"doppler-streaming§9#5"},
				Run:          liveEndpointScheme,
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "doppler/9/live-credentials-in-the-url",
				Title:        "Credentials embedded in the endpoint URL reach the server: a PUB joined on nats://user:password@host:port/<base> connects to a server that demands them and publishes; with a wrong password it opens no socket",
				Spec:         "doppler-streaming §9, §5",
				Profile:      LiveProfile,
				Requirements: []string{"doppler-streaming§5#1", "doppler-streaming§9#6"},
				Run:          liveCredentials,
			}
		}),
	}
}

func livePubSubjects(t *cases.T) {
	withLive(t, func(l *live) {
		sub := l.watch(l.ep.Base + ".>")
		var want []string
		for i, typ := range dp.Types() {
			h, ok := l.join(rolePUB, liveType(typ), joinOpts{})
			if !ok {
				return
			}
			p := samples(typ, 2, byte(i))
			if out := l.send(h, 0, &conformpb.DopplerLiveFrame{Payload: p})[0]; out.Refused != nil {
				t.Failf("the %v PUB refused a frame of 2 elements: %s", typ, describeRefusal(out.Refused))
			}
			want = append(want, l.ep.PubSubject(typ)+": "+frameText(0, typ, p))
		}
		var got []string
		for _, m := range l.next(sub, len(want)) {
			got = append(got, m.Subject+": "+wireText(m.Data))
		}
		// Each socket has a connection of its own, so their messages reach
		// the broker in no set order.
		slices.Sort(want)
		slices.Sort(got)
		if !evidence.Equal(want, got) {
			t.Fail(reports.Evidence{Message: "where one PUB socket of each type published its first frame",
				Input:    fmt.Sprintf("endpoint %s; conform subscribed to %s.>", l.ep, l.ep.Base),
				Expected: strings.Join(want, "\n"), Got: strings.Join(got, "\n"), Diff: evidence.Format(evidence.DiffAt("subjects on the broker", want, got))})
		}
	})
}

// streamMessages reads every message the work queue holds, as subject and
// frame text.
func streamMessages(ctx context.Context, st jetstream.Stream) ([]string, *jetstream.StreamInfo, error) {
	info, err := st.Info(ctx)
	if err != nil {
		return nil, nil, err
	}
	var out []string
	for seq := info.State.FirstSeq; info.State.Msgs > 0 && seq <= info.State.LastSeq; seq++ {
		m, err := st.GetMsg(ctx, seq)
		if err != nil {
			continue // acked and removed between Info and GetMsg
		}
		out = append(out, m.Subject+": "+wireText(m.Data))
	}
	return out, info, nil
}

func liveWorkQueueNames(t *cases.T) {
	withLive(t, func(l *live) {
		l.needJetStream()
		h, ok := l.join(rolePUSH, liveType(dp.TypeCI16), joinOpts{})
		if !ok {
			return
		}
		p0, p1 := samples(dp.TypeCI16, 3, 1), samples(dp.TypeCI16, 5, 2)
		for i, o := range l.send(h, 0, &conformpb.DopplerLiveFrame{Payload: p0}, &conformpb.DopplerLiveFrame{Payload: p1}) {
			if o.Refused != nil {
				t.Failf("the PUSH refused frame %d: %s", i, describeRefusal(o.Refused))
			}
		}
		st, err := l.stream()
		if err != nil {
			t.Failf("no stream %s after a PUSH socket sent on %s: %v", l.ep.StreamName(), l.ep, err)
			return
		}
		ctx, cancel := context.WithTimeout(t.Context(), connectWait(l.t))
		defer cancel()
		got, info, err := streamMessages(ctx, st)
		if err != nil {
			t.Harnessf("read the work queue: %v", err)
		}
		if !slices.Contains(info.Config.Subjects, l.ep.WorkWildcard()) || info.Config.Retention != jetstream.WorkQueuePolicy {
			t.Fail(evidence.Named("the stream the PUSH created", reports.Evidence{Message: "the stream the PUSH created", Input: l.ep.String(),
				Expected: fmt.Sprintf("stream %s, work-queue retention, capturing %s", l.ep.StreamName(), l.ep.WorkWildcard()),
				Got:      fmt.Sprintf("stream %s, retention %v, subjects %v", info.Config.Name, info.Config.Retention, info.Config.Subjects)}))
		}
		subject := l.ep.WorkSubject(dp.TypeCI16)
		want := []string{subject + ": " + frameText(0, dp.TypeCI16, p0), subject + ": " + frameText(1, dp.TypeCI16, p1)}
		if !evidence.Equal(want, got) {
			t.Fail(reports.Evidence{Message: "what the work queue holds after two pushes", Input: l.ep.String(),
				Expected: strings.Join(want, "\n"), Got: strings.Join(got, "\n"), Diff: evidence.Format(evidence.DiffAt("messages in the work queue", want, got))})
		}
	})
}

// request sends one request frame on <base>.req through conform's own
// connection and returns the reply's bytes, or why there was none.
func (l *live) request(msg []byte) ([]byte, error) {
	ctx, cancel := context.WithTimeout(l.t.Context(), replyWait(l.t))
	defer cancel()
	m, err := l.nc.RequestWithContext(ctx, l.ep.ReqSubject(), msg)
	if err != nil {
		return nil, err
	}
	return m.Data, nil
}

func liveRepAnswers(t *cases.T) {
	withLive(t, func(l *live) {
		h, ok := l.join(roleREP, 0, joinOpts{reply: &conformpb.DopplerReplyPlan{Echo: true}})
		if !ok {
			return
		}
		reqs := []struct {
			typ dp.Type
			p   []byte
		}{{dp.TypeCF32, samples(dp.TypeCF32, 4, 1)}, {dp.TypeCI16, samples(dp.TypeCI16, 3, 2)}}
		var want, got []string
		for i, r := range reqs {
			want = append(want, frameText(uint64(i), r.typ, r.p))
			reply, err := l.request(frameMessage(r.typ, uint64(40+i), r.p))
			if err != nil {
				got = append(got, "no reply: "+err.Error())
				continue
			}
			got = append(got, wireText(reply))
		}
		input := fmt.Sprintf("conform requests on %s a CF32 frame of 4 samples (sequence 40), then a CI16 frame of 3 (sequence 41); the REP echoes each in its own type", l.ep.ReqSubject())
		if !evidence.Equal(want, got) {
			t.Fail(reports.Evidence{Message: "the replies, as conform took them off the wire", Input: input,
				Expected: strings.Join(want, "\n"), Got: strings.Join(got, "\n"), Diff: evidence.Format(evidence.DiffAt("replies on the broker", want, got))})
		}
		evs := l.gatherEvents(h, len(reqs))
		var wantEv, gotEv []string
		for i, r := range reqs {
			wantEv = append(wantEv, frameText(uint64(40+i), r.typ, r.p)+", replied")
		}
		for _, e := range evs {
			s := eventText(e)
			if e.GetDelivered() != nil && e.Replied {
				s += ", replied"
			}
			gotEv = append(gotEv, s)
		}
		if !evidence.Equal(wantEv, gotEv) {
			t.Fail(reports.Evidence{Message: "the requests the REP reported", Input: input,
				Expected: strings.Join(wantEv, "\n"), Got: strings.Join(gotEv, "\n"), Diff: evidence.Format(evidence.DiffAt("events", wantEv, gotEv))})
		}
	})
}

func liveRepRawFace(t *cases.T) {
	withLive(t, func(l *live) {
		_, ok := l.join(roleREP, 0, joinOpts{reply: &conformpb.DopplerReplyPlan{
			Type: liveType(dp.TypeRaw), Echo: true}})
		if !ok {
			return
		}
		var want, got []string
		for i, b := range [][]byte{[]byte("hello"), []byte("status?!")} {
			want = append(want, frameText(uint64(i), dp.TypeRaw, b))
			reply, err := l.request(frameMessage(dp.TypeRaw, uint64(i), b))
			if err != nil {
				got = append(got, "no reply: "+err.Error())
				continue
			}
			got = append(got, wireText(reply))
		}
		if !evidence.Equal(want, got) {
			t.Fail(reports.Evidence{Message: "the replies of a REP answering through its raw-bytes face",
				Input:    fmt.Sprintf("conform requests on %s with raw frames of the bytes \"hello\" and \"status?!\"; the REP echoes each as raw bytes", l.ep.ReqSubject()),
				Expected: strings.Join(want, "\n"), Got: strings.Join(got, "\n"), Diff: evidence.Format(evidence.DiffAt("replies on the broker", want, got))})
		}
	})
}

func liveReqRawFace(t *cases.T) {
	withLive(t, func(l *live) {
		var mu sync.Mutex
		var seen []string
		sub, err := l.nc.Subscribe(l.ep.ReqSubject(), func(m *nats.Msg) {
			mu.Lock()
			seen = append(seen, wireText(m.Data))
			mu.Unlock()
			if m.Reply != "" {
				f, ferr := checkWire(m.Data)
				if ferr == nil {
					_ = m.Respond(frameMessage(dp.TypeRaw, 70, append([]byte("re:"), f.Payload...)))
				}
			}
		})
		if err == nil {
			err = l.nc.FlushTimeout(connectWait(l.t))
		}
		if err != nil {
			t.Harnessf("subscribe to "+l.ep.ReqSubject()+": %v", err)
		}
		defer func() { _ = sub.Unsubscribe() }()
		h, ok := l.join(roleREQ, 0, joinOpts{})
		if !ok {
			return
		}
		bodies := [][]byte{[]byte("hello"), []byte("ping")}
		var frames []*conformpb.DopplerLiveFrame
		for _, b := range bodies {
			frames = append(frames, &conformpb.DopplerLiveFrame{Payload: b, Type: liveType(dp.TypeRaw)})
		}
		outs := l.send(h, uint32(replyWait(l.t).Milliseconds()), frames...)
		var want, got []string
		for i, b := range bodies {
			want = append(want, "reply "+frameText(70, dp.TypeRaw, append([]byte("re:"), b...)))
			switch o := outs[i]; {
			case o.Refused != nil:
				got = append(got, "refused "+describeRefusal(o.Refused))
			case o.Reply == nil:
				got = append(got, "no reply reported")
			default:
				got = append(got, "reply "+eventText(&conformpb.DopplerLiveEvent{Event: &conformpb.DopplerLiveEvent_Delivered{Delivered: o.Reply}}))
			}
		}
		mu.Lock()
		gotReq := append([]string(nil), seen...)
		mu.Unlock()
		wantReq := []string{frameText(0, dp.TypeRaw, bodies[0]), frameText(1, dp.TypeRaw, bodies[1])}
		input := fmt.Sprintf("the REQ sends the raw bytes \"hello\" and \"ping\"; conform, subscribed to %s, answers each with raw bytes \"re:\" and the request's bytes", l.ep.ReqSubject())
		if !evidence.Equal(wantReq, gotReq) {
			t.Fail(reports.Evidence{Message: "the requests conform received on " + l.ep.ReqSubject(), Input: input,
				Expected: strings.Join(wantReq, "\n"), Got: strings.Join(gotReq, "\n"), Diff: evidence.Format(evidence.DiffAt("requests on the broker", wantReq, gotReq))})
		} else {
			// Both requests reached conform, which answered each: a
			// request that timed out waited on conform's reply.
			for _, o := range outs {
				l.waitedOnConform(o.Refused, "a request conform received and answered")
			}
		}
		if !evidence.Equal(want, got) {
			t.Fail(reports.Evidence{Message: "the replies the REQ handed back", Input: input,
				Expected: strings.Join(want, "\n"), Got: strings.Join(got, "\n"), Diff: evidence.Format(evidence.DiffAt("reply", want, got))})
		}
	})
}

// push has the SUT push frames of CI16 through a new PUSH socket and
// returns their payloads.
func (l *live) push(n int) ([][]byte, bool) {
	h, ok := l.join(rolePUSH, liveType(dp.TypeCI16), joinOpts{})
	if !ok {
		return nil, false
	}
	var ps [][]byte
	var frames []*conformpb.DopplerLiveFrame
	for i := range n {
		p := samples(dp.TypeCI16, 2+i, byte(i+1))
		ps = append(ps, p)
		frames = append(frames, &conformpb.DopplerLiveFrame{Payload: p})
	}
	for i, o := range l.send(h, 0, frames...) {
		if o.Refused != nil {
			// A push waits for JetStream's acknowledgement.
			l.waitedOnConform(o.Refused, fmt.Sprintf("the PUSH of frame %d", i))
			l.t.Failf("the PUSH refused frame %d: %s", i, describeRefusal(o.Refused))
			return nil, false
		}
	}
	return ps, true
}

// queueDepth waits, bounded, for the work queue to hold want messages and
// returns how many it holds.
func (l *live) queueDepth(want uint64) uint64 {
	st, err := l.stream()
	if err != nil {
		return 0
	}
	deadline := time.Now().Add(deliveryWait(l.t))
	for {
		ctx, cancel := context.WithTimeout(l.t.Context(), connectWait(l.t))
		info, err := st.Info(ctx)
		cancel()
		if err != nil {
			l.t.Harnessf("read the work queue: %v", err)
		}
		if info.State.Msgs == want || time.Now().After(deadline) {
			return info.State.Msgs
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// pullText renders a PULL event: the frame and whether it was acked.
func pullText(e *conformpb.DopplerLiveEvent) string {
	s := eventText(e)
	if e.GetDelivered() != nil {
		if e.Acked {
			s += ", acked"
		} else if e.AckRefused != nil {
			s += ", ack refused " + describeRefusal(e.AckRefused)
		}
	}
	return s
}

func livePullAcks(t *cases.T) {
	withLive(t, func(l *live) {
		l.needJetStream()
		ps, ok := l.push(3)
		if !ok {
			return
		}
		h, ok := l.join(rolePULL, 0, joinOpts{})
		if !ok {
			return
		}
		evs := l.gatherEvents(h, len(ps))
		var want, got []string
		for i, p := range ps {
			want = append(want, frameText(uint64(i), dp.TypeCI16, p)+", acked")
		}
		for _, e := range evs {
			l.waitedOnConform(e.AckRefused, "the PULL worker's ack")
			got = append(got, pullText(e))
		}
		input := fmt.Sprintf("a PUSH of CI16 on %s sends three frames; a PULL worker joins and acks what it receives", l.ep)
		if !evidence.Equal(want, got) {
			t.Fail(reports.Evidence{Message: "what the PULL worker received", Input: input,
				Expected: strings.Join(want, "\n"), Got: strings.Join(got, "\n"), Diff: evidence.Format(evidence.DiffAt("events", want, got))})
		}
		if n := l.queueDepth(0); n != 0 {
			t.Fail(evidence.Named("messages in the work queue", reports.Evidence{Message: "acked work must leave the work queue", Input: input,
				Expected: "0 messages in " + l.ep.StreamName(), Got: fmt.Sprintf("%d messages", n)}))
		}
	})
}

func liveRedelivery(t *cases.T) {
	withLive(t, func(l *live) {
		l.needJetStream()
		ps, ok := l.push(1)
		if !ok {
			return
		}
		dying, ok := l.join(rolePULL, 0, joinOpts{ackWaitMs: 100, noAck: true})
		if !ok {
			return
		}
		first := l.gatherEvents(dying, 1)
		want := frameText(0, dp.TypeCI16, ps[0])
		input := fmt.Sprintf("a PUSH sends one CI16 frame on %s; worker A (ack wait 100 ms) receives it without acking and dies; worker B joins", l.ep)
		// A may see the frame more than once: the queue redelivers it to A
		// too once the ack wait passes, A being alive until it leaves.
		got := eventTexts(first)
		if len(got) == 0 || slices.ContainsFunc(got, func(s string) bool { return s != want }) {
			t.Fail(evidence.Named("events", reports.Evidence{Message: "what worker A received", Input: input, Expected: want, Got: strings.Join(got, "\n")}))
			return
		}
		l.leave(dying)
		next, ok := l.join(rolePULL, 0, joinOpts{})
		if !ok {
			return
		}
		evs := l.gatherEvents(next, 1)
		got = nil
		for _, e := range evs {
			l.waitedOnConform(e.AckRefused, "worker B's ack")
			got = append(got, pullText(e))
		}
		if w := []string{want + ", acked"}; !evidence.Equal(w, got) {
			t.Fail(reports.Evidence{Message: "what worker B received", Input: input, Expected: strings.Join(w, "\n"),
				Got: strings.Join(got, "\n"), Diff: evidence.Format(evidence.DiffAt("events", w, got))})
			return
		}
		if nd := evs[0].NumDelivered; nd != 0 && nd < 2 {
			t.Failf("worker B reports the frame delivered %d time(s); it is a redelivery", nd)
		}
		if n := l.queueDepth(0); n != 0 {
			t.Fail(evidence.Named("messages in the work queue", reports.Evidence{Message: "the redelivered frame, once acked, must leave the work queue", Input: input,
				Expected: "0 messages in " + l.ep.StreamName(), Got: fmt.Sprintf("%d messages", n)}))
		}
	})
}

func liveSequence(t *cases.T) {
	withLive(t, func(l *live) {
		sub := l.watch(l.ep.PubWildcard())
		a, ok := l.join(rolePUB, liveType(dp.TypeCI8), joinOpts{})
		if !ok {
			return
		}
		b, ok := l.join(rolePUB, liveType(dp.TypeCF32), joinOpts{})
		if !ok {
			return
		}
		plan := []uint64{a, b, a, b, a}
		for i, h := range plan {
			typ := dp.TypeCI8
			if h == b {
				typ = dp.TypeCF32
			}
			if o := l.send(h, 0, &conformpb.DopplerLiveFrame{Payload: samples(typ, 1+i, byte(i))})[0]; o.Refused != nil {
				t.Failf("send %d refused: %s", i, describeRefusal(o.Refused))
			}
		}
		want := []string{
			l.ep.PubSubject(dp.TypeCI8) + " 0", l.ep.PubSubject(dp.TypeCF32) + " 0",
			l.ep.PubSubject(dp.TypeCI8) + " 1", l.ep.PubSubject(dp.TypeCF32) + " 1",
			l.ep.PubSubject(dp.TypeCI8) + " 2",
		}
		var got []string
		for _, m := range l.next(sub, len(want)) {
			f, err := checkWire(m.Data)
			if err != nil {
				got = append(got, fmt.Sprintf("%s: a message that %v", m.Subject, err))
				continue
			}
			got = append(got, fmt.Sprintf("%s %d", m.Subject, f.Header.Sequence))
		}
		// Each socket has a connection of its own: the broker keeps each
		// one's order, not an order between them.
		slices.Sort(want)
		slices.SortStableFunc(got, func(x, y string) int { return strings.Compare(strings.Fields(x)[0], strings.Fields(y)[0]) })
		if !evidence.Equal(want, got) {
			t.Fail(reports.Evidence{Message: "the sequence of each frame, by subject",
				Input:    "a CI8 PUB and a CF32 PUB on one endpoint send alternately: CI8, CF32, CI8, CF32, CI8",
				Expected: strings.Join(want, "\n"), Got: strings.Join(got, "\n"), Diff: evidence.Format(evidence.DiffAt("messages on the broker, by subject", want, got))})
		}
	})
}
