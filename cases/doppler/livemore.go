package doppler

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
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

// describeStream renders the parts of a stream's configuration an adopting
// PUSH must leave as they are.
func describeStream(c jetstream.StreamConfig) string {
	return fmt.Sprintf("description %q, subjects %v, retention %v, storage %v, max_msgs %d, max_age %v, replicas %d",
		c.Description, c.Subjects, c.Retention, c.Storage, c.MaxMsgs, c.MaxAge, c.Replicas)
}

func liveExistingStream(t *cases.T) {
	withLive(t, func(l *live) {
		l.needJetStream()
		js, err := jetstream.New(l.nc)
		if err != nil {
			t.Harnessf("JetStream on conform's connection: %v", err)
		}
		// A deployment's own stream: limits and a description doppler's
		// development default does not have.
		cfg := jetstream.StreamConfig{
			Name:        l.ep.StreamName(),
			Description: "provisioned by conform before any doppler socket",
			Subjects:    []string{l.ep.WorkWildcard()},
			Retention:   jetstream.WorkQueuePolicy,
			Storage:     jetstream.FileStorage,
			Replicas:    1,
			MaxMsgs:     1000,
			MaxAge:      time.Hour,
		}
		ctx, cancel := context.WithTimeout(t.Context(), connectWait(l.t))
		defer cancel()
		l.streams = true
		if _, err := js.CreateStream(ctx, cfg); err != nil {
			t.Harnessf("provision the stream %s: %v", cfg.Name, err)
		}
		cancel()
		h, ok := l.join(rolePUSH, liveType(dp.TypeCI16), joinOpts{})
		if !ok {
			return
		}
		p := samples(dp.TypeCI16, 3, 4)
		if o := l.send(h, 0, &conformpb.DopplerLiveFrame{Payload: p})[0]; o.Refused != nil {
			t.Failf("the PUSH refused a frame of 3 samples into the provisioned stream: %s", describeRefusal(o.Refused))
			return
		}
		st, err := l.stream()
		if err != nil {
			t.Failf("the provisioned stream %s is gone after a PUSH joined: %v", cfg.Name, err)
			return
		}
		// A budget of its own: the SUT's join and send, in between, may
		// have taken most of the one above on a loaded machine.
		rctx, rcancel := context.WithTimeout(t.Context(), connectWait(l.t))
		defer rcancel()
		got, info, err := streamMessages(rctx, st)
		if err != nil {
			t.Harnessf("read the work queue: %v", err)
		}
		input := fmt.Sprintf("conform created %s (%s); a PUSH of CI16 joined %s and sent one frame", cfg.Name, describeStream(cfg), l.ep)
		if w, g := describeStream(cfg), describeStream(info.Config); w != g {
			t.Fail(reports.Evidence{Message: "the provisioned stream's configuration after the PUSH joined", Input: input,
				Expected: w, Got: g, Diff: evidence.Format(evidence.DiffAt("the stream's configuration", w, g))})
		}
		want := []string{l.ep.WorkSubject(dp.TypeCI16) + ": " + frameText(0, dp.TypeCI16, p)}
		if !evidence.Equal(want, got) {
			t.Fail(reports.Evidence{Message: "what the provisioned stream holds", Input: input,
				Expected: strings.Join(want, "\n"), Got: strings.Join(got, "\n"), Diff: evidence.Format(evidence.DiffAt("messages in the stream", want, got))})
		}
	})
}

// nonce returns n random bytes: a payload no other frame on a shared
// subject carries.
func nonce(n int) []byte {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return b
}

func liveDefaultBase(t *cases.T) {
	withLive(t, func(l *live) {
		subject := dp.Endpoint{Base: dp.DefaultBase}.PubSubject(dp.TypeCI16)
		sub := l.watch(dp.DefaultBase + ".>")
		h, ok := l.join(rolePUB, liveType(dp.TypeCI16), joinOpts{endpoint: l.ep.Server})
		if !ok {
			return
		}
		// Other runs sharing this broker may publish on the default base
		// too: conform knows its frame by its payload.
		p := nonce(16)
		if o := l.send(h, 0, &conformpb.DopplerLiveFrame{Payload: p})[0]; o.Refused != nil {
			t.Failf("the PUB refused a frame of 4 samples: %s", describeRefusal(o.Refused))
			return
		}
		want := subject + ": " + frameText(0, dp.TypeCI16, p)
		got := "no frame with that payload on " + subject
		deadline := time.Now().Add(arrivalWait(l.t))
		for left := arrivalWait(l.t); left > 0; left = time.Until(deadline) {
			m, err := sub.NextMsg(left)
			if err != nil {
				break
			}
			if f, err := checkWire(m.Data); err == nil && bytes.Equal(f.Payload, p) {
				got = m.Subject + ": " + wireText(m.Data)
				break
			}
		}
		if got != want {
			t.Fail(reports.Evidence{Message: "where a PUB joined on an endpoint with no path published",
				Input:    fmt.Sprintf("a PUB of CI16 joined on %s (no path) sends 4 samples; conform subscribed to %s", l.ep.Server, subject),
				Expected: want, Got: got, Diff: evidence.Format(evidence.DiffAt("subject", want, got))})
		}
	})
}

// answerer is conform's own replier on <base>.req: it records every request
// as it arrived and answers each with what reply returns (no answer for
// nil).
type answerer struct {
	mu   sync.Mutex
	seen []string
	sub  *nats.Subscription
}

func (l *live) answerRequests(reply func(req []byte) []byte) *answerer {
	a := &answerer{}
	sub, err := l.nc.Subscribe(l.ep.ReqSubject(), func(m *nats.Msg) {
		a.mu.Lock()
		a.seen = append(a.seen, wireText(m.Data))
		a.mu.Unlock()
		if r := reply(m.Data); r != nil && m.Reply != "" {
			_ = m.Respond(r)
		}
	})
	if err == nil {
		err = l.nc.FlushTimeout(connectWait(l.t))
	}
	if err != nil {
		l.t.Harnessf("subscribe to %s: %v", l.ep.ReqSubject(), err)
	}
	a.sub = sub
	return a
}

// requests returns what the answerer received so far.
func (a *answerer) requests() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.seen)
}

// stop ends the answerer's subscription.
func (a *answerer) stop() { _ = a.sub.Unsubscribe() }

func liveReqTyped(t *cases.T) {
	withLive(t, func(l *live) {
		reply := samples(dp.TypeCF32, 2, 9)
		a := l.answerRequests(func([]byte) []byte { return frameMessage(dp.TypeCF32, 70, reply) })
		defer a.stop()
		h, ok := l.join(roleREQ, 0, joinOpts{})
		if !ok {
			return
		}
		p := samples(dp.TypeCI16, 3, 4)
		out := l.send(h, uint32(replyWait(l.t).Milliseconds()), &conformpb.DopplerLiveFrame{Payload: p, Type: liveType(dp.TypeCI16)})[0]
		input := fmt.Sprintf("a REQ sends a CI16 frame of 3 samples; conform, subscribed to %s, answers with a CF32 frame 70 of 2 samples", l.ep.ReqSubject())
		if w, g := []string{frameText(0, dp.TypeCI16, p)}, a.requests(); !evidence.Equal(w, g) {
			t.Fail(reports.Evidence{Message: "the request conform received on " + l.ep.ReqSubject(), Input: input,
				Expected: strings.Join(w, "\n"), Got: strings.Join(g, "\n"), Diff: evidence.Format(evidence.DiffAt("requests on the broker", w, g))})
		} else {
			l.waitedOnConform(out.Refused, "a request conform received and answered")
		}
		want := "reply " + frameText(70, dp.TypeCF32, reply)
		got := "no reply reported"
		switch {
		case out.Refused != nil:
			got = "refused " + describeRefusal(out.Refused)
		case out.Reply != nil:
			got = "reply " + eventText(&conformpb.DopplerLiveEvent{Event: &conformpb.DopplerLiveEvent_Delivered{Delivered: out.Reply}})
		}
		if got != want {
			t.Fail(reports.Evidence{Message: "the reply the REQ handed back", Input: input, Expected: want, Got: got, Diff: evidence.Format(evidence.DiffAt("reply", want, got))})
		}
	})
}

func liveTelemetryPublisherOnly(t *cases.T) {
	withLive(t, func(l *live) {
		tlm := samples(dp.TypeTLM, 1, 3)
		// PUSH: the join itself is the place to refuse; a PUSH socket is
		// made for one type.
		l.needJetStream()
		if r := l.joinResult(rolePUSH, liveType(dp.TypeTLM), joinOpts{}); r.Refused == nil {
			t.Fail(evidence.Named("refused (the join's answer)", reports.Evidence{Message: "a PUSH socket of telemetry was opened", Input: "join PUSH TLM on " + l.ep.String(),
				Expected: "the join refused", Got: fmt.Sprintf("socket %d opened", r.Handle)}))
		}

		// REQ: a telemetry request must not be sent.
		a := l.answerRequests(func([]byte) []byte { return frameMessage(dp.TypeRaw, 70, []byte("ok")) })
		h, ok := l.join(roleREQ, 0, joinOpts{})
		if !ok {
			return
		}
		out := l.send(h, uint32(replyWait(l.t).Milliseconds()), &conformpb.DopplerLiveFrame{Payload: tlm, Type: liveType(dp.TypeTLM)})[0]
		if err := l.nc.FlushTimeout(connectWait(l.t)); err != nil {
			t.Harnessf("flush conform's connection: %v", err)
		}
		if seen := a.requests(); out.Refused == nil || len(seen) > 0 {
			t.Fail(evidence.Named("refused (the send's answer)", reports.Evidence{Message: "a REQ asked to send one telemetry record", Input: "REQ send of type TLM",
				Expected: "the send refused, nothing on " + l.ep.ReqSubject(),
				Got:      fmt.Sprintf("refused: %v; on %s: %q", out.Refused != nil, l.ep.ReqSubject(), seen)}))
		}
		a.stop()

		// REP: a reply plan of telemetry must not be answered with.
		rh, ok := l.join(roleREP, 0, joinOpts{reply: &conformpb.DopplerReplyPlan{Type: liveType(dp.TypeTLM), Payload: tlm}})
		if !ok {
			return
		}
		inbox := l.nc.NewInbox()
		replies, err := l.nc.SubscribeSync(inbox)
		if err == nil {
			err = l.nc.PublishRequest(l.ep.ReqSubject(), inbox, frameMessage(dp.TypeRaw, 1, []byte("status?")))
		}
		if err == nil {
			err = l.nc.FlushTimeout(connectWait(l.t))
		}
		if err != nil {
			t.Harnessf("request on %s: %v", l.ep.ReqSubject(), err)
		}
		evs := l.gatherEvents(rh, 1)
		// The REP reports a request once its answer, if any, is sent and
		// flushed: after conform's own round trip, a reply would be here.
		if err := l.nc.FlushTimeout(connectWait(l.t)); err != nil {
			t.Harnessf("flush conform's connection: %v", err)
		}
		var got []string
		for _, e := range evs {
			s := eventText(e)
			if e.Replied {
				s += ", replied"
			}
			got = append(got, s)
		}
		if m, err := replies.NextMsg(time.Millisecond); err == nil {
			got = append(got, "conform received a reply: "+wireText(m.Data))
		}
		want := []string{frameText(1, dp.TypeRaw, []byte("status?"))}
		if !evidence.Equal(want, got) {
			t.Fail(reports.Evidence{Message: "a REP whose reply plan is one telemetry record, sent a request",
				Input:    "REP joined with a TLM reply plan; conform requests with the raw bytes \"status?\"",
				Expected: strings.Join(want, "\n") + " (not replied)", Got: strings.Join(got, "\n"), Diff: evidence.Format(evidence.DiffAt("replies on the broker", want, got))})
		}
	})
}

func liveReqTimeout(t *cases.T) {
	withLive(t, func(l *live) {
		// A replier that never answers: the request reaches someone, so
		// the server reports no "no responders", and the wait runs out.
		silent := l.watch(l.ep.ReqSubject())
		h, ok := l.join(roleREQ, 0, joinOpts{})
		if !ok {
			return
		}
		const timeoutMs = 200
		out := l.send(h, timeoutMs, &conformpb.DopplerLiveFrame{Payload: []byte("anyone?")})[0]
		want := "refused " + codeName(int32(dp.ErrTimeout))
		got := "a reply"
		if out.Refused != nil {
			got = "refused " + codeName(out.Refused.Code)
		}
		if got != want {
			t.Fail(evidence.Named("outputs[].refused", reports.Evidence{Message: "a request nobody answers",
				Input:    fmt.Sprintf("conform subscribed to %s and answers nothing; a REQ sends the raw bytes \"anyone?\" with a timeout of %d ms", l.ep.ReqSubject(), timeoutMs),
				Expected: want, Got: got}))
		}
		// The request went out, timed out or not. It need not be at the
		// server yet: the 200 ms bound the flush of doppler §6b, and on a
		// loaded machine the flush itself can run out of it, with the
		// request still on its way.
		if len(l.next(silent, 1)) != 1 {
			t.Failf("the request never reached %s", l.ep.ReqSubject())
		}
	})
}

func liveEndpointScheme(t *cases.T) {
	withLive(t, func(l *live) {
		u, err := url.Parse(l.url)
		if err != nil {
			t.Harnessf("the broker URL %q: %v", l.url, err)
		}
		authority := u.Host
		if u.User != nil {
			authority = u.User.String() + "@" + u.Host
		}
		// Each names the run's own broker, so a SUT that ignores the
		// scheme or takes the list connects.
		for _, ep := range []string{
			"tls://" + authority + "/" + l.ep.Base,
			"ws://" + authority + "/" + l.ep.Base,
			"nats://" + authority + "," + u.Host + "/" + l.ep.Base,
		} {
			if r := l.joinResult(rolePUB, liveType(dp.TypeCI16), joinOpts{endpoint: ep}); r.Refused == nil {
				t.Fail(evidence.Named("refused (the join's answer)", reports.Evidence{Message: "a PUB was opened on an endpoint doppler's parser does not accept",
					Input: "join PUB CI16 on " + ep, Expected: "the join refused, no socket",
					Got: fmt.Sprintf("socket %d opened (max_payload %d)", r.Handle, r.MaxPayload)}))
			}
		}
	})
}

// authServer starts a NATS server on loopback that demands user and
// password (the run's Env.CredentialBroker), for a case that needs
// credentials to matter, and returns its host:port; it is stopped when the
// case ends.
func (l *live) authServer(user, password string) string {
	l.needProxy() // the same condition: the SUT reaches conform's loopback
	start := l.t.Env().CredentialBroker
	if start == nil {
		l.t.Harnessf("this case needs a NATS server of conform's own that demands credentials, and the run cannot start one")
	}
	raw, stop, err := start(l.t.Context(), user, password)
	if err != nil {
		l.t.Harnessf("start a NATS server with credentials: %v", err)
	}
	l.onRelease(stop)
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		l.t.Harnessf("the NATS server with credentials gave no host:port in its URL %q: %v", raw, err)
	}
	return u.Host
}

func liveCredentials(t *cases.T) {
	withLive(t, func(l *live) {
		user, password := "conform", hex.EncodeToString(nonce(8))
		addr := l.authServer(user, password)
		nc, err := nats.Connect("nats://"+addr, nats.UserInfo(user, password), nats.Timeout(connectWait(l.t)), nats.NoReconnect(), l.errors())
		if err != nil {
			t.Harnessf("conform's connection to the server with credentials: %v", err)
		}
		l.extra = append(l.extra, nc)
		subject := l.ep.Base + ".>"
		sub, err := nc.SubscribeSync(subject)
		if err == nil {
			err = nc.FlushTimeout(connectWait(l.t))
		}
		if err != nil {
			t.Harnessf("subscribe to %s: %v", subject, err)
		}
		ep := fmt.Sprintf("nats://%s:%s@%s/%s", user, password, addr, l.ep.Base)
		h, ok := l.join(rolePUB, liveType(dp.TypeCI16), joinOpts{endpoint: ep})
		if ok {
			p := samples(dp.TypeCI16, 2, 6)
			if o := l.send(h, 0, &conformpb.DopplerLiveFrame{Payload: p})[0]; o.Refused != nil {
				t.Failf("the PUB refused a frame of 2 samples: %s", describeRefusal(o.Refused))
			}
			want, got := frameText(0, dp.TypeCI16, p), "nothing"
			if ms := l.next(sub, 1); len(ms) == 1 {
				got = wireText(ms[0].Data)
			}
			if got != want {
				t.Fail(evidence.Named("messages on the broker", reports.Evidence{Message: "what a PUB joined with credentials in its endpoint published",
					Input:    "join PUB CI16 on nats://conform:<password>@" + addr + "/" + l.ep.Base + ", a server that demands them; send 2 samples",
					Expected: want, Got: got}))
			}
		}
		wrong := fmt.Sprintf("nats://%s:%s@%s/%s", user, "not-"+password, addr, l.ep.Base)
		if r := l.joinResult(rolePUB, liveType(dp.TypeCI16), joinOpts{endpoint: wrong}); r.Refused == nil {
			t.Fail(evidence.Named("refused (the join's answer)", reports.Evidence{Message: "a PUB was opened with a wrong password",
				Input: "join PUB CI16 on nats://conform:<wrong password>@" + addr + "/" + l.ep.Base, Expected: "the join refused",
				Got: fmt.Sprintf("socket %d opened", r.Handle)}))
		}
	})
}
