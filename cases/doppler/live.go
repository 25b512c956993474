package doppler

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/conform-suite/conform/cases"
	"github.com/conform-suite/conform/corpus"
	"github.com/conform-suite/conform/live/netem"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	dp "github.com/conform-suite/conform/ref/doppler"
	"github.com/conform-suite/conform/reports"
)

// LiveProfile is the profile of every live case: the SUT joins subjects on a
// real NATS server and conform plays the other end.
const LiveProfile = "doppler-nats"

// Waits of the live cases. Every one is a bound, never a pause: a case
// goes on as soon as what it waits for has happened, so a conforming SUT
// never costs the full wait. They derive from the op timeout (conform run
// --timeout), as the Ranvier live cases' do: a machine slow enough to need
// a longer --timeout stretches what the SUT and the broker take alike.

// connectWait bounds what conform asks of the broker itself: a dial, a
// flush, a stream lookup. Running out of it is a harness error.
func connectWait(t *cases.T) time.Duration { return t.OpTimeout() }

// arrivalWait bounds the wait for what the SUT or the broker delivers: 3 s
// at the default op timeout. A case that must see nothing arrive waits it
// out against a mutant, so it is kept well inside the op timeout, which an
// op carrying such a wait for the SUT (a collect's timeout_ms) must answer
// within.
func arrivalWait(t *cases.T) time.Duration { return t.OpTimeout() * 3 / 10 }

// deliveryWait bounds a wait that ends as soon as what a conforming SUT
// must deliver has come: the whole op timeout, since only a SUT that fails
// waits it out. On a loaded machine a delivery can take longer than
// arrivalWait (a second test run beside this one held the third of three
// frames to a PULL worker past 3 s).
func deliveryWait(t *cases.T) time.Duration { return t.OpTimeout() }

// replyWait bounds one request/reply exchange, a wait a SUT's op carries:
// 2 s at the default op timeout.
func replyWait(t *cases.T) time.Duration { return t.OpTimeout() / 5 }

// waitedOnConform ends the case as a harness error when r is DP_ERR_TIMEOUT
// for an op whose other side was the broker or conform: the broker
// confirming a PULL worker's ack, conform answering a request it received.
// The SUT then waited on them, and reported so as doppler §8 asks; on a
// loaded machine they are the late ones, so the refusal says nothing of the
// SUT. The case is not judged, and the runner runs it again. (Two runs of
// go test at once made the reference's ack and request time out.)
func (l *live) waitedOnConform(r *conformpb.DopplerRefusal, what string) {
	if r.GetCode() == int32(dp.ErrTimeout) {
		l.t.Harnessf("%s timed out (%s) waiting on the broker or on conform, which on a loaded machine can be the late ones: no evidence about the SUT", what, describeRefusal(r))
	}
}

// collectSlice is one collect's wait inside an arrivalWait, in
// milliseconds.
const collectSlice = 1000

// Roles, as conform.v1 names them.
const (
	rolePUB  = conformpb.DopplerLiveRole_DOPPLER_LIVE_ROLE_PUB
	roleSUB  = conformpb.DopplerLiveRole_DOPPLER_LIVE_ROLE_SUB
	roleREQ  = conformpb.DopplerLiveRole_DOPPLER_LIVE_ROLE_REQ
	roleREP  = conformpb.DopplerLiveRole_DOPPLER_LIVE_ROLE_REP
	rolePUSH = conformpb.DopplerLiveRole_DOPPLER_LIVE_ROLE_PUSH
	rolePULL = conformpb.DopplerLiveRole_DOPPLER_LIVE_ROLE_PULL
)

// live is one live case's session: conform's own connection to the run's
// broker, a base no other case or run uses, and the sockets the SUT joined,
// all released when the case ends however it ends.
type live struct {
	t   *cases.T
	url string
	nc  *nats.Conn
	ep  dp.Endpoint

	handles []uint64
	extra   []*nats.Conn
	proxies []*netem.Proxy
	cleanup []func()
	streams bool // whether the case may have made DP_WORK_<base>

	mu       sync.Mutex
	asyncErr error // the first asynchronous error of conform's own connections
}

// errors is the option that keeps the asynchronous errors of a connection
// of conform's (a subscription that fell behind, say) for the case's record
// rather than the NATS client's printing them.
func (l *live) errors() nats.Option {
	return nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.asyncErr == nil {
			l.asyncErr = err
		}
	})
}

// onRelease runs f when the case ends, once the SUT's sockets are left.
func (l *live) onRelease(f func()) { l.cleanup = append(l.cleanup, f) }

// withLive runs body with a live session. conform's connection is dialled
// first, so that a broker conform cannot reach ends the case as a harness
// error at once rather than as a SUT's failure. Every socket the SUT joined
// is left and every connection closed when body returns or ends the case.
func withLive(t *cases.T, body func(l *live)) {
	url := t.BrokerURL()
	l := &live{t: t, url: url}
	nc, err := nats.Connect(url, nats.Name("conform"), nats.Timeout(connectWait(l.t)), nats.NoReconnect(), l.errors())
	if err != nil {
		t.Harnessf("cannot reach the NATS server %s: %v", url, err)
	}
	// The base is random rather than drawn from the case's seed: the seed
	// is the same for every run, and runs share brokers; no verdict
	// depends on the name.
	ep, err := dp.ParseEndpoint(url + "/" + dp.UniqueBase("conform_"))
	if err != nil {
		nc.Close()
		t.Harnessf("the broker URL makes no endpoint: %v", err)
	}
	l.nc, l.ep = nc, ep
	defer func() {
		p := recover()
		leaveErr := l.release()
		if p != nil {
			panic(p)
		}
		if leaveErr != nil {
			panic(leaveErr)
		}
	}()
	body(l)
}

// release leaves every socket, closes every connection and deletes the work
// queue the case made. It returns the first leave that ended in an Abort,
// after trying them all.
func (l *live) release() (first any) {
	// A slow link has judged what it was for; leaving through it would
	// only wait it out.
	for _, p := range l.proxies {
		p.Shape(netem.Link{}, netem.Link{})
	}
	for i := len(l.handles) - 1; i >= 0; i-- {
		if p := l.tryLeave(l.handles[i]); p != nil && first == nil {
			first = p
		}
	}
	l.handles = nil
	if l.streams {
		if js, err := jetstream.New(l.nc); err == nil {
			ctx, cancel := context.WithTimeout(context.Background(), connectWait(l.t))
			_ = js.DeleteStream(ctx, l.ep.StreamName())
			cancel()
		}
	}
	for _, c := range l.extra {
		c.Close()
	}
	for _, f := range l.cleanup {
		f()
	}
	// The SUT's sockets are gone: closing a proxy now severs nothing a
	// socket would redial.
	for _, p := range l.proxies {
		_ = p.Close()
	}
	l.nc.Close()
	l.mu.Lock()
	if l.asyncErr != nil {
		l.t.Note("conform's own NATS connection reported: %v", l.asyncErr)
	}
	l.mu.Unlock()
	return first
}

// tryLeave leaves one socket and returns the Abort that ended it, if any.
func (l *live) tryLeave(h uint64) (p any) {
	defer func() { p = recover() }()
	do(l.t, &conformpb.DopplerOp{Op: &conformpb.DopplerOp_Leave{Leave: &conformpb.DopplerLeave{Handle: h}}})
	return nil
}

// joinOpts are the optional fields of a join.
type joinOpts struct {
	// endpoint, when set, is joined instead of the case's own (a proxy's,
	// one without a path, one the SUT must refuse).
	endpoint  string
	order     conformpb.DopplerByteOrder
	ackWaitMs uint32
	noAck     bool
	reply     *conformpb.DopplerReplyPlan
}

// endpointOf is the endpoint a join with o names.
func (l *live) endpointOf(o joinOpts) string {
	if o.endpoint != "" {
		return o.endpoint
	}
	return l.ep.String()
}

// joinResult asks the SUT to open a socket and returns its answer as it
// stands; a socket it opened is left when the case ends.
func (l *live) joinResult(role conformpb.DopplerLiveRole, typ conformpb.DopplerFrameType, o joinOpts) *conformpb.DopplerJoinResult {
	if role == rolePUSH || role == rolePULL {
		l.streams = true
	}
	r := do(l.t, &conformpb.DopplerOp{Op: &conformpb.DopplerOp_Join{Join: &conformpb.DopplerJoin{
		Endpoint: l.endpointOf(o), Role: role, Type: typ, Order: o.order,
		AckWaitMs: o.ackWaitMs, NoAck: o.noAck, Reply: o.reply}}}).GetJoin()
	if r == nil {
		l.t.Protocolf("doppler join answered with the result of another op")
	}
	if r.Refused == nil {
		if r.Handle == 0 {
			l.t.Protocolf("doppler join answered handle 0 without a refusal")
		}
		l.handles = append(l.handles, r.Handle)
	}
	return r
}

// join opens a socket and returns its handle; when the SUT refuses, the
// case fails (a conforming socket joins a reachable broker) and ok is false.
func (l *live) join(role conformpb.DopplerLiveRole, typ conformpb.DopplerFrameType, o joinOpts) (h uint64, ok bool) {
	r := l.joinResult(role, typ, o)
	if r.Refused != nil {
		l.t.Fail(reports.Evidence{Message: fmt.Sprintf("the SUT could not open a %s socket", roleWord(role)),
			Input: fmt.Sprintf("join %s %s on %s", roleWord(role), typ, l.endpointOf(o)), Got: describeRefusal(r.Refused)})
		return 0, false
	}
	return r.Handle, true
}

// leave closes a socket now, rather than when the case ends.
func (l *live) leave(h uint64) {
	for i, x := range l.handles {
		if x == h {
			l.handles = append(l.handles[:i], l.handles[i+1:]...)
			break
		}
	}
	do(l.t, &conformpb.DopplerOp{Op: &conformpb.DopplerOp_Leave{Leave: &conformpb.DopplerLeave{Handle: h}}})
}

// send sends frames through a socket and returns one output per frame.
func (l *live) send(h uint64, timeoutMs uint32, frames ...*conformpb.DopplerLiveFrame) []*conformpb.DopplerSendOutput {
	// The frames go in order, in as many sends as the carrier's message
	// limit asks for (a backlog can outgrow a broker's max_payload).
	return cases.Batched(l.t, "doppler send", frames, func(b []*conformpb.DopplerLiveFrame) ([]*conformpb.DopplerSendOutput, bool) {
		r := do(l.t, &conformpb.DopplerOp{Op: &conformpb.DopplerOp_Send{Send: &conformpb.DopplerSend{
			Handle: h, Frames: b, TimeoutMs: timeoutMs}}}).GetSend()
		return r.GetOutputs(), r != nil
	})
}

// collectOnce hands over what a receiving socket gathered, waiting up to
// waitMs for at least min events.
func (l *live) collectOnce(h uint64, min, waitMs uint32) []*conformpb.DopplerLiveEvent {
	r := do(l.t, &conformpb.DopplerOp{Op: &conformpb.DopplerOp_Collect{Collect: &conformpb.DopplerCollect{
		Handle: h, MinEvents: min, TimeoutMs: waitMs}}}).GetCollect()
	if r == nil {
		l.t.Protocolf("doppler collect answered with the result of another op")
	}
	if r.Dropped > 0 {
		l.t.Note("the SUT dropped %d events of socket %d", r.Dropped, h)
	}
	return r.Events
}

// gather collects until done says the events so far are complete, or
// deliveryWait passes; it returns what arrived either way.
func (l *live) gather(h uint64, done func([]*conformpb.DopplerLiveEvent) bool) []*conformpb.DopplerLiveEvent {
	var all []*conformpb.DopplerLiveEvent
	deadline := time.Now().Add(deliveryWait(l.t))
	for !done(all) {
		left := time.Until(deadline)
		if left <= 0 {
			break
		}
		all = append(all, l.collectOnce(h, 1, uint32(min(left.Milliseconds()+1, collectSlice)))...)
	}
	return all
}

// gatherUntil collects until the SUT has handled the frame of sequence seq,
// delivering or refusing it. A receiver handles a subscription's messages
// in order, so once that frame, published last, is handled, so is
// everything published before it.
func (l *live) gatherUntil(h uint64, seq uint64) []*conformpb.DopplerLiveEvent {
	return l.gather(h, func(evs []*conformpb.DopplerLiveEvent) bool {
		for _, e := range evs {
			if f := e.GetDelivered(); f != nil && f.GetHeader().GetSequence() == seq {
				return true
			}
			if r := e.GetRefused(); r != nil && r.GetHasSequence() && r.GetSequence() == seq && r.GetVerdict() != conformpb.DopplerVerdict_DOPPLER_VERDICT_UNSPECIFIED {
				return true
			}
		}
		return false
	})
}

// gatherEvents collects until n events, frames or refusals, have arrived.
func (l *live) gatherEvents(h uint64, n int) []*conformpb.DopplerLiveEvent {
	return l.gather(h, func(evs []*conformpb.DopplerLiveEvent) bool { return len(evs) >= n })
}

// publish publishes messages on subject from conn, in order, and returns
// once the server has them all, so that they reach a subscriber in order.
func (l *live) publish(conn *nats.Conn, subject string, msgs ...[]byte) {
	for _, m := range msgs {
		if err := conn.Publish(subject, m); err != nil {
			l.t.Harnessf("publish on %s: %v", subject, err)
		}
	}
	if err := conn.FlushTimeout(connectWait(l.t)); err != nil {
		l.t.Harnessf("flush conform's publishes: %v", err)
	}
}

// other dials a second conform connection: another publisher.
func (l *live) other() *nats.Conn {
	nc, err := nats.Connect(l.url, nats.Name("conform-other"), nats.Timeout(connectWait(l.t)), nats.NoReconnect(), l.errors())
	if err != nil {
		l.t.Harnessf("second connection: %v", err)
	}
	l.extra = append(l.extra, nc)
	return nc
}

// watch subscribes conform to subject and returns once the server has the
// subscription.
func (l *live) watch(subject string) *nats.Subscription {
	sub, err := l.nc.SubscribeSync(subject)
	if err == nil {
		err = sub.SetPendingLimits(-1, -1)
	}
	if err == nil {
		err = l.nc.FlushTimeout(connectWait(l.t))
	}
	if err != nil {
		l.t.Harnessf("subscribe to %s: %v", subject, err)
	}
	return sub
}

// next returns the messages sub receives until n have arrived or
// deliveryWait passes.
func (l *live) next(sub *nats.Subscription, n int) []*nats.Msg {
	var out []*nats.Msg
	deadline := time.Now().Add(deliveryWait(l.t))
	for len(out) < n {
		left := time.Until(deadline)
		if left <= 0 {
			break
		}
		m, err := sub.NextMsg(left)
		if err != nil {
			break
		}
		out = append(out, m)
	}
	return out
}

// stream returns the work queue DP_WORK_<base> as the broker holds it.
func (l *live) stream() (jetstream.Stream, error) {
	js, err := jetstream.New(l.nc)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(l.t.Context(), connectWait(l.t))
	defer cancel()
	return js.Stream(ctx, l.ep.StreamName())
}

// needJetStream ends the case as a harness error when the run's broker has
// no JetStream: the work queue is the broker's to offer (PUSH/PULL need
// nats-server -js, doppler §2), and its absence is no fault of the SUT's.
func (l *live) needJetStream() {
	js, err := jetstream.New(l.nc)
	if err == nil {
		ctx, cancel := context.WithTimeout(l.t.Context(), connectWait(l.t))
		_, err = js.AccountInfo(ctx)
		cancel()
	}
	if err != nil {
		l.t.Harnessf("the NATS server %s offers no JetStream, which PUSH/PULL need (nats-server -js): %v", l.url, err)
	}
}

// viaProxy starts a proxy between the SUT and the run's broker, shaped as o
// says, and returns the endpoint (the case's own base) that reaches the
// broker through it, and the proxy; the case is skipped when conform cannot
// put one on the SUT's path (see canProxy).
func (l *live) viaProxy(o netem.Options) (dp.Endpoint, *netem.Proxy) {
	l.needProxy()
	u, _ := url.Parse(l.url)
	o.Upstream = u.Host
	p, err := netem.Start(l.t.Context(), o)
	if err != nil {
		l.t.Harnessf("start the proxy: %v", err)
	}
	l.proxies = append(l.proxies, p)
	server := "nats://" + p.Addr()
	if u.User != nil {
		server = "nats://" + u.User.String() + "@" + p.Addr()
	}
	return dp.Endpoint{Server: server, Base: l.ep.Base}, p
}

// canProxy reports whether conform can put a proxy on the SUT's path to the
// broker. The proxy listens on conform's loopback, which a SUT reaches only
// when it runs on conform's host; conform knows it does when the broker is
// on loopback too (conform's embedded one, or --nats-url naming one). On a
// real network the SUT's path to the broker is not conform's to shape, and
// needs no shaping to be slower than loopback.
func (l *live) canProxy() bool {
	u, err := url.Parse(l.url)
	return err == nil && u.Host != "" && loopback(u.Hostname())
}

// needProxy skips the case, saying why, when canProxy is false: the case
// needs the SUT to reach a listener on conform's loopback.
func (l *live) needProxy() {
	if !l.canProxy() {
		l.t.Skipf("this case has the SUT reach conform's loopback (a proxy before the broker, or a server of the case's own), which a SUT does only when the run's broker is on loopback too; it is %s", l.url)
	}
}

// loopback reports whether host names this machine's loopback.
func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// rewriteInfo is a proxy filter for the server's side of a NATS connection:
// it hands the client every INFO the server sends with edit applied to its
// JSON, and everything else unchanged. Numbers keep their exact text.
//
// Not only the INFO that opens the connection: the protocol lets a server
// send another at any time, and a client takes its max_payload from the
// latest. On a loaded machine the SUT's connection once reported the
// broker's own max_payload through this proxy. The filter therefore follows the
// protocol: a MSG or HMSG line's payload, whose size is the line's last
// field, passes through whole, so that payload bytes are never read as
// protocol lines.
func rewriteInfo(edit func(info map[string]any)) netem.Filter {
	return func(dst io.Writer, src io.Reader) error {
		r := bufio.NewReader(src)
		for {
			line, err := r.ReadBytes('\n')
			if len(line) > 0 {
				if body, ok := bytes.CutPrefix(line, []byte("INFO ")); ok && err == nil {
					line = editInfo(body, line, edit)
				}
				if _, werr := dst.Write(line); werr != nil {
					return werr
				}
			}
			if err != nil {
				if errors.Is(err, io.EOF) {
					return nil
				}
				return err
			}
			if n, ok := payloadSize(line); ok {
				if _, err := io.CopyN(dst, r, n+2); err != nil { // the payload and its CRLF
					if errors.Is(err, io.EOF) {
						return nil
					}
					return err
				}
			}
		}
	}
}

// editInfo returns the INFO line whose JSON is body with edit applied, or
// line as it is when body is not JSON.
func editInfo(body, line []byte, edit func(info map[string]any)) []byte {
	d := json.NewDecoder(bytes.NewReader(body))
	d.UseNumber()
	var info map[string]any
	if d.Decode(&info) != nil {
		return line
	}
	edit(info)
	b, err := json.Marshal(info)
	if err != nil {
		return line
	}
	return append(append([]byte("INFO "), b...), '\r', '\n')
}

// payloadSize returns the payload size a MSG or HMSG line announces (its
// last field: the total size, headers included, for HMSG).
func payloadSize(line []byte) (int64, bool) {
	if !bytes.HasPrefix(line, []byte("MSG ")) && !bytes.HasPrefix(line, []byte("HMSG ")) {
		return 0, false
	}
	f := bytes.Fields(line)
	n, err := strconv.ParseInt(string(f[len(f)-1]), 10, 64)
	return n, err == nil && n >= 0
}

// frameMessage is a conforming little-endian message carrying payload as
// one unchunked frame of type typ and sequence seq.
func frameMessage(typ dp.Type, seq uint64, payload []byte) []byte {
	f, err := dp.NewFrame(typ, dp.LittleEndian, payload)
	if err != nil {
		panic(err) // conform's own frames are whole elements
	}
	f.Header.Sequence = seq
	f.Header.TimestampNs = 1_700_000_000_000_000_000 + seq
	f.Header.SampleRateHz = 1e6
	return f.AppendMessage(nil, dp.LittleEndian)
}

// sentinel is the CI16 frame a receiving case publishes last: once it is
// delivered, everything before it has been handled.
func sentinel(seq uint64) ([]byte, []byte) {
	p := []byte("sentinel")
	return frameMessage(dp.TypeCI16, seq, p), p
}

// liveType is a reference type in conform.v1's words.
func liveType(t dp.Type) conformpb.DopplerFrameType { return conformpb.DopplerFrameType(t) }

func roleWord(r conformpb.DopplerLiveRole) string {
	return strings.TrimPrefix(r.String(), "DOPPLER_LIVE_ROLE_")
}

// payloadIs reports whether a reported payload is want: its bytes, or its
// length and digest.
func payloadIs(p *conformpb.DopplerPayload, want []byte) bool {
	if p == nil || p.Length != uint64(len(want)) {
		return false
	}
	if len(p.Bytes) > 0 || len(want) == 0 {
		return bytes.Equal(p.Bytes, want)
	}
	sum := sha256.Sum256(want)
	return bytes.Equal(p.Sha256, sum[:])
}

// digest renders a payload by its length and a short digest, so that a
// reported payload and an expected one compare as text.
func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return fmt.Sprintf("%d bytes sha256:%x", len(b), sum[:6])
}

func reportedDigest(p *conformpb.DopplerPayload) string {
	switch {
	case p == nil:
		return "no payload"
	case len(p.Bytes) > 0 || p.Length == 0:
		return digest(p.Bytes)
	case len(p.Sha256) >= 6:
		return fmt.Sprintf("%d bytes sha256:%x", p.Length, p.Sha256[:6])
	}
	return fmt.Sprintf("%d bytes, neither bytes nor digest", p.Length)
}

// frameText renders a logical frame as a receiver must hand it over.
func frameText(seq uint64, typ dp.Type, payload []byte) string {
	elem := uint64(typ.ElemSize())
	return fmt.Sprintf("delivered frame %d: %v, flags 0x0, num_samples %d, payload_bytes %d, payload %s",
		seq, typ, uint64(len(payload))/elem, len(payload), digest(payload))
}

// typeName names a reported header's kind and format as a frame type.
func typeName(h *conformpb.DopplerHeader) string {
	if t, ok := dp.TypeOf(dp.Kind(h.GetKind()), dp.Format(h.GetFormat())); ok {
		return t.String()
	}
	return fmt.Sprintf("kind %d format %#04x", h.GetKind(), h.GetFormat())
}

// eventText renders one event for comparison: a delivered frame as
// frameText does, a refusal by its code and verdict.
func eventText(e *conformpb.DopplerLiveEvent) string {
	switch {
	case e.GetDelivered() != nil:
		f := e.GetDelivered()
		h := f.GetHeader()
		return fmt.Sprintf("delivered frame %d: %s, flags %#x, num_samples %d, payload_bytes %d, payload %s",
			h.GetSequence(), typeName(h), h.GetFlags(), h.GetNumSamples(), h.GetPayloadBytes(), reportedDigest(f.GetPayload()))
	case e.GetRefused() != nil:
		return "refused " + refusalText(e.GetRefused())
	}
	return "an event with neither a frame nor a refusal"
}

// refusalText renders a refusal by its code and, when the header check
// refused, its verdict.
func refusalText(r *conformpb.DopplerRefusal) string {
	s := codeName(r.GetCode())
	if r.GetVerdict() != conformpb.DopplerVerdict_DOPPLER_VERDICT_UNSPECIFIED {
		s += " " + verdictSlug(r.GetVerdict())
	}
	return s
}

func describeRefusal(r *conformpb.DopplerRefusal) string {
	s := refusalText(r)
	if r.GetHasSequence() {
		s += fmt.Sprintf(" [frame %d]", r.GetSequence())
	}
	if r.GetDetail() != "" {
		s += ": " + r.GetDetail()
	}
	return s
}

func eventTexts(evs []*conformpb.DopplerLiveEvent) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = eventText(e)
	}
	return out
}

func deliveredOf(evs []*conformpb.DopplerLiveEvent) []*conformpb.DopplerFrame {
	var out []*conformpb.DopplerFrame
	for _, e := range evs {
		if f := e.GetDelivered(); f != nil {
			out = append(out, f)
		}
	}
	return out
}

func refusalsOf(evs []*conformpb.DopplerLiveEvent) []*conformpb.DopplerRefusal {
	var out []*conformpb.DopplerRefusal
	for _, e := range evs {
		if r := e.GetRefused(); r != nil {
			out = append(out, r)
		}
	}
	return out
}

// checkWire judges one message conform took off the wire from the SUT: it
// passes the header check and is one unchunked frame. It returns the
// frame, or why not.
func checkWire(m []byte) (dp.Frame, error) {
	if v := dp.Check(m, dp.LittleEndian); v != dp.Accepted {
		return dp.Frame{}, fmt.Errorf("fails the header check: %v", v)
	}
	h, _ := dp.DecodeHeader(m, dp.LittleEndian)
	if h.Chunked() {
		return dp.Frame{}, errors.New("is a chunk")
	}
	return dp.Frame{Header: h, Payload: m[dp.HeaderSize:]}, nil
}

// wireText renders a message conform took off the wire like frameText.
func wireText(m []byte) string {
	f, err := checkWire(m)
	if err != nil {
		return fmt.Sprintf("a %d-byte message that %v", len(m), err)
	}
	t, ok := dp.TypeOf(f.Header.Kind, f.Header.Format)
	if !ok {
		return "a frame of no known type"
	}
	return frameText(f.Header.Sequence, t, f.Payload)
}

// wireTextOrder renders a message a sender of byte order o put on the wire,
// as read by a receiver of that order: the frame as frameText does, with
// the order named and the magic's bytes and data_rep as they stand.
func wireTextOrder(m []byte, o dp.Order) string {
	if v := dp.Check(m, o); v != dp.Accepted {
		return fmt.Sprintf("a %d-byte message that a %s receiver refuses: %v", len(m), o, v)
	}
	h, _ := dp.DecodeHeader(m, o)
	t, ok := dp.TypeOf(h.Kind, h.Format)
	if h.Chunked() || !ok {
		return fmt.Sprintf("a %d-byte chunk or frame of no known type", len(m))
	}
	return fmt.Sprintf("%s %s, magic bytes %s, data_rep %q", o, frameText(h.Sequence, t, m[dp.HeaderSize:]),
		corpus.FormatHex(m[:8]), string(m[atDataRep:atDataRep+4]))
}

// fill is a live frame described rather than carried: n bytes of pattern.
func fill(n int, pattern []byte) *conformpb.DopplerLiveFrame {
	return &conformpb.DopplerLiveFrame{FillLength: uint64(n), FillPattern: pattern}
}

// expand returns the bytes a fill stands for.
func expand(n int, pattern []byte) []byte {
	out := make([]byte, n)
	for i := 0; i < n; i += len(pattern) {
		copy(out[i:], pattern)
	}
	return out
}

// samples returns n elements of typ, filled with a pattern seeded by seed.
func samples(typ dp.Type, n int, seed byte) []byte {
	b := make([]byte, n*typ.ElemSize())
	for i := range b {
		b[i] = byte(i*13) ^ seed
	}
	return b
}
