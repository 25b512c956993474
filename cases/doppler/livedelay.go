package doppler

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/conform-suite/conform/cases"
	"github.com/conform-suite/conform/live/netem"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	dp "github.com/conform-suite/conform/ref/doppler"
	"github.com/conform-suite/conform/reports"
	"github.com/conform-suite/conform/reports/evidence"
)

// The shapes of the slow link a delay case puts between the SUT and the
// broker. They are the case's own controls, not allowances for slowness:
// a SUT that waits as doppler says pays them once, and a SUT that answers
// without waiting answers inside them, so its answer comes while its bytes
// are still on the link.
const (
	// linkDelay is the one-way latency from the SUT to the broker: long
	// beside the few milliseconds conform needs, between a SUT's answer and
	// its own look at the broker, even on a loaded machine.
	linkDelay = 400 * time.Millisecond
	// linkRate throttles the SUT's link in the case whose flush must run
	// out of budget: 64 KiB/s.
	linkRate = 64 << 10
	// slowWait is the budget a case gives an op that must wait out the
	// slow link: everything it sends crosses in one linkDelay and a few
	// round trips.
	slowWait = 10 * time.Second
)

// slowPath returns the join options that put a SUT's socket behind a proxy
// conform can slow down once the socket is set up, and the proxy; when
// conform cannot proxy the SUT's path (see canProxy) the socket joins the
// broker directly and the proxy is nil: its path is then a real network,
// already slower than loopback.
func (l *live) slowPath() (joinOpts, *netem.Proxy) {
	if !l.canProxy() {
		return joinOpts{}, nil
	}
	ep, p := l.viaProxy(netem.Options{})
	return joinOpts{endpoint: ep.String()}, p
}

// slow delays everything the SUT sends to the broker through p by
// linkDelay, from now on; nothing when p is nil.
func slow(p *netem.Proxy) {
	if p != nil {
		p.Shape(netem.Link{Delay: linkDelay}, netem.Link{})
	}
}

// arrived returns the messages sub holds now, after conform's own round
// trip to the server: what the server had delivered to conform when the
// round trip began, and nothing that arrives later.
func (l *live) arrived(sub *nats.Subscription) []*nats.Msg {
	if err := l.nc.FlushTimeout(connectWait(l.t)); err != nil {
		l.t.Harnessf("flush conform's connection: %v", err)
	}
	n, _, err := sub.Pending()
	if err != nil {
		l.t.Harnessf("read conform's subscription: %v", err)
	}
	var out []*nats.Msg
	for range n {
		m, err := sub.NextMsg(connectWait(l.t))
		if err != nil {
			l.t.Harnessf("a message conform holds could not be read: %v", err)
		}
		out = append(out, m)
	}
	return out
}

// liveDelay are the rules that only show when the broker is not a
// microsecond away (doppler §6b, §8, and conform.v1's join): each puts a
// slow link between the SUT and the broker.
func liveDelay(k *cases.Kit, _ *vectors) []cases.Case {
	return []cases.Case{
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "doppler/6b/live-flush-round-trip",
				Title:        "A PUB's flush is the round trip: once it answers DP_OK, the server has every frame sent before it, even over a link that holds each byte 400 ms",
				Spec:         "doppler-streaming §6b",
				Profile:      LiveProfile,
				Requirements: []string{"doppler-streaming§6b#3"},
				Run:          liveFlush,
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "doppler/6b/live-flush-budget-runs-out",
				Title:        "A flush whose budget runs out while data is still buffered answers DP_ERR_TIMEOUT (-5): 256 KiB behind a 64 KiB/s link, flushed with 200 ms",
				Spec:         "doppler-streaming §6b",
				Profile:      LiveProfile,
				Requirements: []string{"doppler-streaming§6b#4", "reconstructed§doppler-errors#1"},
				Run:          liveFlushBudget,
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "doppler/6b/live-push-returns-once-stored",
				Title:        "A JetStream PUSH returns only once the server has acknowledged the frame: when the send answers over a link that holds each byte 400 ms, the frame is already in the work queue",
				Spec:         "doppler-streaming §6b",
				Profile:      LiveProfile,
				Requirements: []string{"doppler-streaming§6b#5"},
				Run:          livePushStored,
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:      "doppler/6b/live-drain-then-send-closed",
				Title:   "A drain answers only once closed, having flushed everything sent before it — over a link that holds each byte 400 ms too — and a send after it is refused with DP_ERR_CLOSED, a state rather than a transport failure",
				Spec:    "doppler-streaming §6b",
				Profile: LiveProfile,
				Requirements: []string{"doppler-streaming§6b#7", "doppler-streaming§6b#8", "doppler-streaming§6b#9",
					"reconstructed§doppler-errors#1"},
				Run: liveDrain,
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:      "doppler/2/live-join-answers-once-subscribed",
				Title:   "A receiving socket's join answers only once its subscription has reached the server: a frame conform publishes the moment a SUB's join answers, over a link that holds each byte 400 ms, is delivered",
				Spec:    "doppler-streaming §2; conform.v1 DopplerJoin",
				Profile: LiveProfile,
				Run:     liveJoinReady,
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "doppler/8/live-reconnects-after-broker-restart",
				Title:        "Reconnect is on: after the broker goes away and comes back at the same address, a SUB resubscribes and a PUB carries on, and a frame the PUB sends then reaches the broker and the SUB",
				Spec:         "doppler-streaming §8",
				Profile:      LiveProfile,
				Requirements: []string{"doppler-streaming§8#1"},
				Run:          liveReconnect,
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "doppler/8/live-max-payload-fallback",
				Title:        "When the server reports no max_payload, a socket assumes 1 MiB (1,048,576 bytes)",
				Spec:         "doppler-streaming §8",
				Profile:      LiveProfile,
				Requirements: []string{"doppler-streaming§8#8"},
				Run:          liveMaxPayloadFallback,
			}
		}),
	}
}

func liveFlush(t *cases.T) {
	withLive(t, func(l *live) {
		opts, px := l.slowPath()
		sub := l.watch(l.ep.PubSubject(dp.TypeCF32))
		h, ok := l.join(rolePUB, liveType(dp.TypeCF32), opts)
		if !ok {
			return
		}
		slow(px)
		const n = 20
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
		fr := do(t, &conformpb.DopplerOp{Op: &conformpb.DopplerOp_Flush{Flush: &conformpb.DopplerFlush{
			Handle: h, TimeoutMs: uint32(slowWait.Milliseconds())}}}).GetFlush()
		if fr == nil {
			t.Protocolf("doppler flush answered with the result of another op")
		}
		if fr.Refused != nil {
			// A flush waits for the broker's answer to its round trip.
			l.waitedOnConform(fr.Refused, "the flush of a PUB that is keeping up")
			t.Failf("the flush of a PUB that is keeping up failed: %s", describeRefusal(fr.Refused))
			return
		}
		// Whatever the server had when the SUT's flush answered was queued
		// to conform before the answer to conform's own round trip.
		if held := len(l.arrived(sub)); held != n {
			t.Fail(evidence.Named("messages on the broker when flush answered", reports.Evidence{Message: "frames at the server when the SUT's flush answered",
				Input:    fmt.Sprintf("a CF32 PUB sends %d frames of 16 KiB over %s, then flushes", n, linkWords(px)),
				Expected: fmt.Sprintf("%d frames", n), Got: fmt.Sprintf("%d frames", held)}))
		}
	})
}

// linkWords says which path a case's SUT socket took to the broker.
func linkWords(px *netem.Proxy) string {
	if px == nil {
		return "the run's network (no proxy: the broker is not on loopback)"
	}
	return fmt.Sprintf("a link that holds each byte %v", linkDelay)
}

func liveFlushBudget(t *cases.T) {
	withLive(t, func(l *live) {
		ep, px := l.viaProxy(netem.Options{})
		h, ok := l.join(rolePUB, liveType(dp.TypeCF32), joinOpts{endpoint: ep.String()})
		if !ok {
			return
		}
		px.Shape(netem.Link{Rate: linkRate}, netem.Link{})
		// 256 KiB at 64 KiB/s take four seconds to cross; a flush with a
		// budget of 200 ms cannot see them all at the server.
		const n, budgetMs = 16, 200
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
		fr := do(t, &conformpb.DopplerOp{Op: &conformpb.DopplerOp_Flush{Flush: &conformpb.DopplerFlush{Handle: h, TimeoutMs: budgetMs}}}).GetFlush()
		if fr == nil {
			t.Protocolf("doppler flush answered with the result of another op")
		}
		want, got := "refused "+codeName(int32(dp.ErrTimeout)), "answered DP_OK"
		if fr.Refused != nil {
			got = "refused " + codeName(fr.Refused.Code)
		}
		if got != want {
			t.Fail(evidence.Named("refused (the flush's answer)", reports.Evidence{Message: "a flush whose budget cannot cover the backlog",
				Input:    fmt.Sprintf("a CF32 PUB sends %d frames of 16 KiB over a link of %d KiB/s, then flushes with timeout_ms %d", n, linkRate>>10, budgetMs),
				Expected: want, Got: got}))
		}
	})
}

func livePushStored(t *cases.T) {
	withLive(t, func(l *live) {
		l.needJetStream()
		opts, px := l.slowPath()
		h, ok := l.join(rolePUSH, liveType(dp.TypeCI16), opts)
		if !ok {
			return
		}
		slow(px)
		p := samples(dp.TypeCI16, 5, 8)
		if o := l.send(h, 0, &conformpb.DopplerLiveFrame{Payload: p})[0]; o.Refused != nil {
			t.Failf("the PUSH refused a frame of 5 samples: %s", describeRefusal(o.Refused))
			return
		}
		// The send has answered: the work queue must hold the frame now,
		// without conform waiting for it.
		st, err := l.stream()
		if err != nil {
			t.Failf("no stream %s after a PUSH socket sent on %s: %v", l.ep.StreamName(), l.ep, err)
			return
		}
		ctx, cancel := context.WithTimeout(t.Context(), connectWait(l.t))
		defer cancel()
		got, _, err := streamMessages(ctx, st)
		if err != nil {
			t.Harnessf("read the work queue: %v", err)
		}
		want := []string{l.ep.WorkSubject(dp.TypeCI16) + ": " + frameText(0, dp.TypeCI16, p)}
		if !evidence.Equal(want, got) {
			t.Fail(reports.Evidence{Message: "what the work queue held when the PUSH's send answered",
				Input:    fmt.Sprintf("a PUSH of CI16 sends one frame over %s", linkWords(px)),
				Expected: strings.Join(want, "\n"), Got: strings.Join(got, "\n"), Diff: evidence.Format(evidence.DiffAt("messages in the work queue", want, got))})
		}
	})
}

func liveDrain(t *cases.T) {
	withLive(t, func(l *live) {
		opts, px := l.slowPath()
		sub := l.watch(l.ep.PubSubject(dp.TypeCI16))
		h, ok := l.join(rolePUB, liveType(dp.TypeCI16), opts)
		if !ok {
			return
		}
		slow(px)
		const n = 20
		var frames []*conformpb.DopplerLiveFrame
		var want []string
		for i := range n {
			p := samples(dp.TypeCI16, 8, byte(i))
			frames = append(frames, &conformpb.DopplerLiveFrame{Payload: p})
			want = append(want, frameText(uint64(i), dp.TypeCI16, p))
		}
		l.send(h, 0, frames...)
		dr := do(t, &conformpb.DopplerOp{Op: &conformpb.DopplerOp_Drain{Drain: &conformpb.DopplerDrain{
			Handle: h, TimeoutMs: uint32(slowWait.Milliseconds())}}}).GetDrain()
		if dr == nil {
			t.Protocolf("doppler drain answered with the result of another op")
		}
		if dr.Refused != nil {
			t.Failf("the drain of a PUB that is keeping up failed: %s", describeRefusal(dr.Refused))
		}
		// The drain has answered: everything sent before it is at the
		// server, and reaches conform before its own round trip ends.
		var got []string
		for _, m := range l.arrived(sub) {
			got = append(got, wireText(m.Data))
		}
		input := fmt.Sprintf("PUB: 20 frames over %s, drain, one more frame", linkWords(px))
		if !evidence.Equal(want, got) {
			t.Fail(reports.Evidence{Message: "what the broker had from a PUB that sent 20 frames, when its drain answered",
				Input: input, Expected: strings.Join(want, "\n"), Got: strings.Join(got, "\n"), Diff: evidence.Format(evidence.DiffAt("messages on the broker", want, got))})
		}
		after := l.send(h, 0, &conformpb.DopplerLiveFrame{Payload: samples(dp.TypeCI16, 1, 99)})[0]
		gotAfter := "sent"
		if after.Refused != nil {
			gotAfter = "refused " + codeName(after.Refused.Code)
		}
		if w := "refused " + codeName(int32(dp.ErrClosed)); gotAfter != w {
			t.Fail(evidence.Named("outputs (the send after the drain)", reports.Evidence{Message: "a send after the drain returned", Input: input, Expected: w, Got: gotAfter}))
		}
		// The refused send put nothing on the wire: had it, the server would
		// have it after the drained connection closed, before conform's
		// round trip.
		if late := l.arrived(sub); len(late) > 0 {
			t.Fail(evidence.Named("messages on the broker after the drain", reports.Evidence{Message: "a frame reached the broker after the drain", Input: input,
				Expected: "nothing", Got: wireText(late[0].Data)}))
		}
	})
}

func liveJoinReady(t *cases.T) {
	withLive(t, func(l *live) {
		ep, px := l.viaProxy(netem.Options{})
		slow(px)
		h, ok := l.join(roleSUB, liveType(dp.TypeCI16), joinOpts{endpoint: ep.String()})
		if !ok {
			return
		}
		// The join has answered: the server must have the subscription.
		p := samples(dp.TypeCI16, 2, 1)
		subject := l.ep.PubSubject(dp.TypeCI16)
		l.publish(l.nc, subject, frameMessage(dp.TypeCI16, 1, p))
		input := fmt.Sprintf("a SUB of CI16 joins over a link that holds each byte %v; once the join answers, conform publishes frame 1 on %s", linkDelay, subject)
		want := []string{frameText(1, dp.TypeCI16, p)}
		evs := l.gatherEvents(h, 1)
		if len(evs) == 0 {
			// Frame 1 was lost (the subscription was not yet in place) or
			// is slow to come (a loaded machine). One subscription
			// delivers in order, so frame 2, published now, comes after
			// frame 1 unless frame 1 was lost: the wait for it tells the
			// two apart.
			l.publish(l.nc, subject, frameMessage(dp.TypeCI16, 2, p))
			evs = l.gatherUntil(h, 2)
			input += fmt.Sprintf("; nothing arrived within %v, so conform published frame 2 and waited for it as long", deliveryWait(l.t))
			want = append(want, frameText(2, dp.TypeCI16, p))
		}
		if got := eventTexts(evs); !evidence.Equal(want, got) {
			t.Fail(reports.Evidence{Message: "a frame published the moment the SUB's join answered", Input: input,
				Expected: strings.Join(want, "\n"), Got: strings.Join(got, "\n"), Diff: evidence.Format(evidence.DiffAt("events", want, got))})
		}
	})
}

func liveReconnect(t *cases.T) {
	withLive(t, func(l *live) {
		ep, px := l.viaProxy(netem.Options{})
		opts := joinOpts{endpoint: ep.String()}
		sh, ok := l.join(roleSUB, conformpb.DopplerFrameType_DOPPLER_FRAME_TYPE_UNSPECIFIED, opts)
		if !ok {
			return
		}
		ph, ok := l.join(rolePUB, liveType(dp.TypeCI16), opts)
		if !ok {
			return
		}
		direct := l.watch(l.ep.PubSubject(dp.TypeCI16))
		before := px.Accepted()
		// To the SUT's sockets, the broker goes away and comes back at the
		// same address: their connections close and the server forgets
		// their subscriptions.
		severed := px.Sever()
		input := fmt.Sprintf("a SUB of every type and a PUB of CI16 joined through a proxy; the proxy closes their %d connections at once and goes on accepting", severed)
		deadline := time.Now().Add(2 * arrivalWait(l.t))
		ctx, cancel := context.WithDeadline(t.Context(), deadline)
		defer cancel()
		if err := px.AwaitAccepted(ctx, before+severed); err != nil {
			t.Fail(evidence.Named("the SUT's connections to the broker", reports.Evidence{Message: "the sockets did not reconnect", Input: input,
				Expected: fmt.Sprintf("%d new connections", severed), Got: err.Error()}))
			return
		}
		// The SUB has resubscribed once a frame conform publishes reaches
		// it; conform publishes a probe each time a collect comes back
		// empty.
		subBack := false
		for seq := uint64(1000); !subBack && time.Now().Before(deadline); seq++ {
			l.publish(l.nc, l.ep.PubSubject(dp.TypeCI16), frameMessage(dp.TypeCI16, seq, []byte("probe...")))
			for _, e := range l.collectOnce(sh, 1, 200) {
				subBack = subBack || e.GetDelivered() != nil
			}
		}
		if !subBack {
			t.Fail(evidence.Named("events", reports.Evidence{Message: "the SUB delivered none of the frames conform published after the restart", Input: input,
				Expected: "the SUB resubscribed", Got: "nothing delivered"}))
			return
		}
		// The PUB carries on: a frame it sends and flushes once it is back
		// reaches the broker and the SUB. A frame it sends while still
		// reconnecting may be lost (doppler §8 does not promise those), and
		// its flush fails then: it sends again until a flush succeeds.
		var arrived []byte
		for time.Now().Before(deadline) {
			p := nonce(8)
			if o := l.send(ph, 0, &conformpb.DopplerLiveFrame{Payload: p})[0]; o.Refused != nil {
				t.Fail(evidence.Named("outputs[].refused", reports.Evidence{Message: "the PUB refused a send after the restart", Input: input,
					Expected: "sent", Got: describeRefusal(o.Refused)}))
				return
			}
			fr := do(t, &conformpb.DopplerOp{Op: &conformpb.DopplerOp_Flush{Flush: &conformpb.DopplerFlush{Handle: ph, TimeoutMs: 500}}}).GetFlush()
			if fr.GetRefused() != nil {
				continue
			}
			// Known by its payload, whatever its header: the header is
			// judged elsewhere.
			for _, m := range l.arrived(direct) {
				if bytes.HasSuffix(m.Data, p) {
					arrived = p
				}
			}
			break
		}
		reached := false
		for _, e := range l.gather(sh, func(evs []*conformpb.DopplerLiveEvent) bool {
			for _, e := range evs {
				if payloadIs(e.GetDelivered().GetPayload(), arrived) {
					return true
				}
			}
			return false
		}) {
			reached = reached || payloadIs(e.GetDelivered().GetPayload(), arrived)
		}
		if !reached {
			t.Fail(evidence.Named("events", reports.Evidence{Message: "the SUB did not deliver the PUB's frame sent after the restart", Input: input,
				Expected: "the PUB's frame delivered", Got: "not delivered"}))
		}
	})
}

func liveMaxPayloadFallback(t *cases.T) {
	withLive(t, func(l *live) {
		ep, _ := l.viaProxy(netem.Options{DownFilter: rewriteInfo(func(info map[string]any) { delete(info, "max_payload") })})
		r := l.joinResult(rolePUB, liveType(dp.TypeCI16), joinOpts{endpoint: ep.String()})
		input := "a PUB of CI16 joins a broker whose INFO, as the SUT's connection sees it, carries no max_payload"
		switch {
		case r.Refused != nil:
			t.Fail(reports.Evidence{Message: "the SUT could not open a PUB socket", Input: input, Got: describeRefusal(r.Refused)})
		case r.MaxPayload != dp.DefaultMaxPayload:
			t.Fail(reports.Evidence{Message: "the max_payload the PUB assumed", Input: input,
				Expected: fmt.Sprint(dp.DefaultMaxPayload), Got: fmt.Sprint(r.MaxPayload),
				Diff: evidence.Format(evidence.DiffAt("maxPayload", uint64(dp.DefaultMaxPayload), r.MaxPayload))})
		}
	})
}
