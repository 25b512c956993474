package doppler

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/conform-suite/conform/cases"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	dp "github.com/conform-suite/conform/ref/doppler"
	"github.com/conform-suite/conform/reports"
)

// liveRoles are the six roles on a real broker: the subjects and JetStream
// objects they use (doppler §5), REQ/REP and its raw-bytes face (§2), the
// work queue's acks and redelivery (§6), drain (§6b) and the per-socket
// sequence (§7).
func (s *suite) liveRoles() []cases.Case {
	return []cases.Case{
		reconstructed(must(cases.Case{
			ID:    "doppler/5/live-pub-subjects",
			Title: "A PUB of each type publishes on <base>.pub.<type>, the type token being ci8 ci16 ci32 cf32 cf64 raw tlm",
			Spec:  "doppler-streaming §5; RECONSTRUCTED §3",
			Run:   livePubSubjects,
		})),
		reconstructed(must(cases.Case{
			ID:    "doppler/5/live-work-queue-names",
			Title: "A PUSH creates the JetStream work-queue stream DP_WORK_<base> capturing <base>.work.*, and its frames are stored whole on <base>.work.<type>",
			Spec:  "doppler-streaming §5, §2; RECONSTRUCTED §3",
			Run:   liveWorkQueueNames,
		})),
		reconstructed(must(cases.Case{
			ID:    "doppler/2/live-rep-answers-requests",
			Title: "A REP receives requests on <base>.req and answers each with one unchunked frame that passes every receiver check, numbered from 0 by the REP socket",
			Spec:  "doppler-streaming §2, §5, §7; RECONSTRUCTED §3",
			Run:   liveRepAnswers,
		})),
		reconstructed(must(cases.Case{
			ID:    "doppler/2/live-rep-raw-bytes-face",
			Title: "The raw-bytes face of REP answers with a byte count, not a sample block: kind IQ, format \"SB\", num_samples the byte count",
			Spec:  "doppler-streaming §2; RECONSTRUCTED §3",
			Run:   liveRepRawFace,
		})),
		reconstructed(must(cases.Case{
			ID:    "doppler/2/live-req-raw-bytes-face",
			Title: "The raw-bytes face of REQ sends its bytes on <base>.req as a frame of kind IQ, format \"SB\", and hands back the reply's bytes",
			Spec:  "doppler-streaming §2, §5, §7; RECONSTRUCTED §3",
			Run:   liveReqRawFace,
		})),
		must(cases.Case{
			ID:    "doppler/6/live-pull-acks-work",
			Title: "A PULL worker receives pushed frames whole, in order, and acks them: acked work leaves the queue",
			Spec:  "doppler-streaming §6, §2, §7",
			Run:   livePullAcks,
		}),
		must(cases.Case{
			ID:    "doppler/6/live-redelivered-after-worker-dies",
			Title: "A worker that dies before acking gets its frame redelivered to another worker",
			Spec:  "doppler-streaming §6, §9",
			Run:   liveRedelivery,
		}),
		must(cases.Case{
			ID:    "doppler/6b/live-flush-round-trip",
			Title: "A PUB's flush is the round trip: once it answers DP_OK, the server has every frame sent before it",
			Spec:  "doppler-streaming §6b",
			Run:   liveFlush,
		}),
		must(cases.Case{
			ID:    "doppler/6b/live-drain-then-send-closed",
			Title: "A drained PUB has flushed everything it sent before the drain, and a send after the drain is refused with DP_ERR_CLOSED, a state rather than a transport failure",
			Spec:  "doppler-streaming §6b",
			Run:   liveDrain,
		}),
		must(cases.Case{
			ID:    "doppler/7/live-sequence-per-socket",
			Title: "Each socket counts its own sequence from 0, one per frame: two PUB sockets interleaving their sends each number 0, 1, 2",
			Spec:  "doppler-streaming §7",
			Run:   liveSequence,
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
		for _, m := range next(sub, len(want)) {
			got = append(got, m.Subject+": "+wireText(m.Data))
		}
		// Each socket has a connection of its own, so their messages reach
		// the broker in no set order.
		slices.Sort(want)
		slices.Sort(got)
		if !cmp.Equal(want, got) {
			t.Fail(reports.Evidence{Message: "where one PUB socket of each type published its first frame",
				Input:    fmt.Sprintf("endpoint %s; conform subscribed to %s.>", l.ep, l.ep.Base),
				Expected: strings.Join(want, "\n"), Got: strings.Join(got, "\n"), Diff: cmp.Diff(want, got)})
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
		ctx, cancel := context.WithTimeout(t.Context(), connectWait)
		defer cancel()
		got, info, err := streamMessages(ctx, st)
		if err != nil {
			panic(&cases.Abort{Outcome: reports.Error, Kind: "harness", Message: "read the work queue: " + err.Error()})
		}
		if !slices.Contains(info.Config.Subjects, l.ep.WorkWildcard()) || info.Config.Retention != jetstream.WorkQueuePolicy {
			t.Fail(reports.Evidence{Message: "the stream the PUSH created", Input: l.ep.String(),
				Expected: fmt.Sprintf("stream %s, work-queue retention, capturing %s", l.ep.StreamName(), l.ep.WorkWildcard()),
				Got:      fmt.Sprintf("stream %s, retention %v, subjects %v", info.Config.Name, info.Config.Retention, info.Config.Subjects)})
		}
		subject := l.ep.WorkSubject(dp.TypeCI16)
		want := []string{subject + ": " + frameText(0, dp.TypeCI16, p0), subject + ": " + frameText(1, dp.TypeCI16, p1)}
		if !cmp.Equal(want, got) {
			t.Fail(reports.Evidence{Message: "what the work queue holds after two pushes", Input: l.ep.String(),
				Expected: strings.Join(want, "\n"), Got: strings.Join(got, "\n"), Diff: cmp.Diff(want, got)})
		}
	})
}

// request sends one request frame on <base>.req through conform's own
// connection and returns the reply's bytes, or why there was none.
func (l *live) request(msg []byte) ([]byte, error) {
	ctx, cancel := context.WithTimeout(l.t.Context(), replyWait)
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
		if !cmp.Equal(want, got) {
			t.Fail(reports.Evidence{Message: "the replies, as conform took them off the wire", Input: input,
				Expected: strings.Join(want, "\n"), Got: strings.Join(got, "\n"), Diff: cmp.Diff(want, got)})
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
		if !cmp.Equal(wantEv, gotEv) {
			t.Fail(reports.Evidence{Message: "the requests the REP reported", Input: input,
				Expected: strings.Join(wantEv, "\n"), Got: strings.Join(gotEv, "\n"), Diff: cmp.Diff(wantEv, gotEv)})
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
		if !cmp.Equal(want, got) {
			t.Fail(reports.Evidence{Message: "the replies of a REP answering through its raw-bytes face",
				Input:    fmt.Sprintf("conform requests on %s with raw frames of the bytes \"hello\" and \"status?!\"; the REP echoes each as raw bytes", l.ep.ReqSubject()),
				Expected: strings.Join(want, "\n"), Got: strings.Join(got, "\n"), Diff: cmp.Diff(want, got)})
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
			err = l.nc.FlushTimeout(connectWait)
		}
		if err != nil {
			panic(&cases.Abort{Outcome: reports.Error, Kind: "harness", Message: "subscribe to " + l.ep.ReqSubject() + ": " + err.Error()})
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
		outs := l.send(h, uint32(replyWait.Milliseconds()), frames...)
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
		if !cmp.Equal(wantReq, gotReq) {
			t.Fail(reports.Evidence{Message: "the requests conform received on " + l.ep.ReqSubject(), Input: input,
				Expected: strings.Join(wantReq, "\n"), Got: strings.Join(gotReq, "\n"), Diff: cmp.Diff(wantReq, gotReq)})
		}
		if !cmp.Equal(want, got) {
			t.Fail(reports.Evidence{Message: "the replies the REQ handed back", Input: input,
				Expected: strings.Join(want, "\n"), Got: strings.Join(got, "\n"), Diff: cmp.Diff(want, got)})
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
	deadline := time.Now().Add(arrivalWait)
	for {
		ctx, cancel := context.WithTimeout(l.t.Context(), connectWait)
		info, err := st.Info(ctx)
		cancel()
		if err != nil {
			panic(&cases.Abort{Outcome: reports.Error, Kind: "harness", Message: "read the work queue: " + err.Error()})
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
			got = append(got, pullText(e))
		}
		input := fmt.Sprintf("a PUSH of CI16 on %s sends three frames; a PULL worker joins and acks what it receives", l.ep)
		if !cmp.Equal(want, got) {
			t.Fail(reports.Evidence{Message: "what the PULL worker received", Input: input,
				Expected: strings.Join(want, "\n"), Got: strings.Join(got, "\n"), Diff: cmp.Diff(want, got)})
		}
		if n := l.queueDepth(0); n != 0 {
			t.Fail(reports.Evidence{Message: "acked work must leave the work queue", Input: input,
				Expected: "0 messages in " + l.ep.StreamName(), Got: fmt.Sprintf("%d messages", n)})
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
			t.Fail(reports.Evidence{Message: "what worker A received", Input: input, Expected: want, Got: strings.Join(got, "\n")})
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
			got = append(got, pullText(e))
		}
		if w := []string{want + ", acked"}; !cmp.Equal(w, got) {
			t.Fail(reports.Evidence{Message: "what worker B received", Input: input, Expected: strings.Join(w, "\n"),
				Got: strings.Join(got, "\n"), Diff: cmp.Diff(w, got)})
			return
		}
		if nd := evs[0].NumDelivered; nd != 0 && nd < 2 {
			t.Failf("worker B reports the frame delivered %d time(s); it is a redelivery", nd)
		}
		if n := l.queueDepth(0); n != 0 {
			t.Fail(reports.Evidence{Message: "the redelivered frame, once acked, must leave the work queue", Input: input,
				Expected: "0 messages in " + l.ep.StreamName(), Got: fmt.Sprintf("%d messages", n)})
		}
	})
}

func liveFlush(t *cases.T) {
	withLive(t, func(l *live) {
		sub := l.watch(l.ep.PubSubject(dp.TypeCF32))
		h, ok := l.join(rolePUB, liveType(dp.TypeCF32), joinOpts{})
		if !ok {
			return
		}
		// A backlog of 1.6 MB, so that a flush that does not wait for the
		// server has something left to lose.
		const n = 100
		var frames []*conformpb.DopplerLiveFrame
		for i := range n {
			frames = append(frames, &conformpb.DopplerLiveFrame{Payload: samples(dp.TypeCF32, 2048, byte(i))})
		}
		for i, o := range l.send(h, 0, frames...) {
			if o.Refused != nil {
				t.Failf("the PUB refused frame %d: %s", i, describeRefusal(o.Refused))
				return
			}
		}
		fr := do(t, &conformpb.DopplerOp{Op: &conformpb.DopplerOp_Flush{Flush: &conformpb.DopplerFlush{Handle: h}}}).GetFlush()
		if fr == nil {
			t.Protocolf("doppler flush answered with the result of another op")
		}
		if fr.Refused != nil {
			t.Failf("the flush of a PUB on loopback failed: %s", describeRefusal(fr.Refused))
			return
		}
		// Whatever the server had when the SUT's flush answered was queued
		// to conform before the answer to conform's own round trip.
		if err := l.nc.FlushTimeout(connectWait); err != nil {
			panic(&cases.Abort{Outcome: reports.Error, Kind: "harness", Message: "flush conform's connection: " + err.Error()})
		}
		held, _, err := sub.Pending()
		if err != nil {
			panic(&cases.Abort{Outcome: reports.Error, Kind: "harness", Message: "read conform's subscription: " + err.Error()})
		}
		if held != n {
			t.Fail(reports.Evidence{Message: "frames at the server when the SUT's flush answered",
				Input:    fmt.Sprintf("a CF32 PUB sends %d frames of 16 KiB, then flushes", n),
				Expected: fmt.Sprintf("%d frames", n), Got: fmt.Sprintf("%d frames", held)})
		}
	})
}

func liveDrain(t *cases.T) {
	withLive(t, func(l *live) {
		sub := l.watch(l.ep.PubSubject(dp.TypeCI16))
		h, ok := l.join(rolePUB, liveType(dp.TypeCI16), joinOpts{})
		if !ok {
			return
		}
		const n = 20
		var frames []*conformpb.DopplerLiveFrame
		var want []string
		for i := range n {
			p := samples(dp.TypeCI16, 8, byte(i))
			frames = append(frames, &conformpb.DopplerLiveFrame{Payload: p})
			want = append(want, frameText(uint64(i), dp.TypeCI16, p))
		}
		l.send(h, 0, frames...)
		dr := do(t, &conformpb.DopplerOp{Op: &conformpb.DopplerOp_Drain{Drain: &conformpb.DopplerDrain{Handle: h}}}).GetDrain()
		if dr == nil {
			t.Protocolf("doppler drain answered with the result of another op")
		}
		if dr.Refused != nil {
			t.Failf("the drain of a PUB that is keeping up failed: %s", describeRefusal(dr.Refused))
		}
		after := l.send(h, 0, &conformpb.DopplerLiveFrame{Payload: samples(dp.TypeCI16, 1, 99)})[0]
		gotAfter := "sent"
		if after.Refused != nil {
			gotAfter = "refused " + codeName(after.Refused.Code)
		}
		if w := "refused " + codeName(int32(dp.ErrClosed)); gotAfter != w {
			t.Fail(reports.Evidence{Message: "a send after the drain returned", Input: "PUB: 20 frames, drain, one more frame",
				Expected: w, Got: gotAfter})
		}
		var got []string
		for _, m := range next(sub, n) {
			got = append(got, wireText(m.Data))
		}
		// The drain flushed everything before it answered, and the refused
		// send must have put nothing on the wire: after conform's own
		// round trip to the server, whatever the SUT sent has reached it.
		if err := l.nc.FlushTimeout(connectWait); err != nil {
			panic(&cases.Abort{Outcome: reports.Error, Kind: "harness", Message: "flush conform's connection: " + err.Error()})
		}
		if m, err := sub.NextMsg(time.Millisecond); err == nil {
			got = append(got, "after the drain: "+wireText(m.Data))
		}
		if !cmp.Equal(want, got) {
			t.Fail(reports.Evidence{Message: "what reached the broker from a PUB that sent 20 frames and drained",
				Input: "PUB: 20 frames, drain, one more frame", Expected: strings.Join(want, "\n"), Got: strings.Join(got, "\n"),
				Diff: cmp.Diff(want, got)})
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
		for _, m := range next(sub, len(want)) {
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
		if !cmp.Equal(want, got) {
			t.Fail(reports.Evidence{Message: "the sequence of each frame, by subject",
				Input:    "a CI8 PUB and a CF32 PUB on one endpoint send alternately: CI8, CF32, CI8, CF32, CI8",
				Expected: strings.Join(want, "\n"), Got: strings.Join(got, "\n"), Diff: cmp.Diff(want, got)})
		}
	})
}
