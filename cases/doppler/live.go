package doppler

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/conform-suite/conform/cases"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	dp "github.com/conform-suite/conform/ref/doppler"
	"github.com/conform-suite/conform/reports"
)

// LiveProfile is the profile of every live case: the SUT joins subjects on a
// real NATS server and conform plays the other end.
const LiveProfile = "doppler-nats"

// Waits of the live cases. Every one is a bound, never a pause: a case
// goes on as soon as what it waits for has happened, so a conforming SUT
// never costs the full wait.
const (
	// connectWait bounds conform's own dial of the broker.
	connectWait = 3 * time.Second
	// arrivalWait bounds the wait for what the SUT or the broker delivers.
	arrivalWait = 3 * time.Second
	// collectSlice is one collect's wait inside an arrivalWait.
	collectSlice = 1000 // milliseconds
	// replyWait bounds one request/reply exchange.
	replyWait = 2 * time.Second
)

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
	streams bool // whether the case may have made DP_WORK_<base>
}

// withLive runs body with a live session. conform's connection is dialled
// first, so that a broker conform cannot reach ends the case as a harness
// error at once rather than as a SUT's failure. Every socket the SUT joined
// is left and every connection closed when body returns or ends the case.
func withLive(t *cases.T, body func(l *live)) {
	url := t.BrokerURL()
	nc, err := nats.Connect(url, nats.Name("conform"), nats.Timeout(connectWait), nats.NoReconnect())
	if err != nil {
		panic(&cases.Abort{Outcome: reports.Error, Kind: "harness",
			Message: fmt.Sprintf("cannot reach the NATS server %s: %v", url, err)})
	}
	// The base is random rather than drawn from the case's seed: the seed
	// is the same for every run, and runs share brokers; no verdict
	// depends on the name.
	ep, err := dp.ParseEndpoint(url + "/" + dp.UniqueBase("conform_"))
	if err != nil {
		nc.Close()
		panic(&cases.Abort{Outcome: reports.Error, Kind: "harness", Message: "the broker URL makes no endpoint: " + err.Error()})
	}
	l := &live{t: t, url: url, nc: nc, ep: ep}
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
	for i := len(l.handles) - 1; i >= 0; i-- {
		if p := l.tryLeave(l.handles[i]); p != nil && first == nil {
			first = p
		}
	}
	l.handles = nil
	if l.streams {
		if js, err := jetstream.New(l.nc); err == nil {
			ctx, cancel := context.WithTimeout(context.Background(), connectWait)
			_ = js.DeleteStream(ctx, l.ep.StreamName())
			cancel()
		}
	}
	for _, c := range l.extra {
		c.Close()
	}
	l.nc.Close()
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
	order     conformpb.DopplerByteOrder
	ackWaitMs uint32
	noAck     bool
	reply     *conformpb.DopplerReplyPlan
}

// joinResult asks the SUT to open a socket and returns its answer as it
// stands; a socket it opened is left when the case ends.
func (l *live) joinResult(role conformpb.DopplerLiveRole, typ conformpb.DopplerFrameType, o joinOpts) *conformpb.DopplerJoinResult {
	if role == rolePUSH || role == rolePULL {
		l.streams = true
	}
	r := do(l.t, &conformpb.DopplerOp{Op: &conformpb.DopplerOp_Join{Join: &conformpb.DopplerJoin{
		Endpoint: l.ep.String(), Role: role, Type: typ, Order: o.order,
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
			Input: fmt.Sprintf("join %s %s on %s", roleWord(role), typ, l.ep), Got: describeRefusal(r.Refused)})
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
	r := do(l.t, &conformpb.DopplerOp{Op: &conformpb.DopplerOp_Send{Send: &conformpb.DopplerSend{
		Handle: h, Frames: frames, TimeoutMs: timeoutMs}}}).GetSend()
	if r == nil {
		l.t.Protocolf("doppler send answered with the result of another op")
	}
	if len(r.Outputs) != len(frames) {
		l.t.Protocolf("doppler send: %d frames, %d outputs", len(frames), len(r.Outputs))
	}
	return r.Outputs
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
// arrivalWait passes; it returns what arrived either way.
func (l *live) gather(h uint64, done func([]*conformpb.DopplerLiveEvent) bool) []*conformpb.DopplerLiveEvent {
	var all []*conformpb.DopplerLiveEvent
	deadline := time.Now().Add(arrivalWait)
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
			panic(&cases.Abort{Outcome: reports.Error, Kind: "harness", Message: fmt.Sprintf("publish on %s: %v", subject, err)})
		}
	}
	if err := conn.FlushTimeout(connectWait); err != nil {
		panic(&cases.Abort{Outcome: reports.Error, Kind: "harness", Message: "flush conform's publishes: " + err.Error()})
	}
}

// other dials a second conform connection: another publisher.
func (l *live) other() *nats.Conn {
	nc, err := nats.Connect(l.url, nats.Name("conform-other"), nats.Timeout(connectWait), nats.NoReconnect())
	if err != nil {
		panic(&cases.Abort{Outcome: reports.Error, Kind: "harness", Message: "second connection: " + err.Error()})
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
		err = l.nc.FlushTimeout(connectWait)
	}
	if err != nil {
		panic(&cases.Abort{Outcome: reports.Error, Kind: "harness", Message: fmt.Sprintf("subscribe to %s: %v", subject, err)})
	}
	return sub
}

// next returns the messages sub receives until n have arrived or
// arrivalWait passes.
func next(sub *nats.Subscription, n int) []*nats.Msg {
	var out []*nats.Msg
	deadline := time.Now().Add(arrivalWait)
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
	ctx, cancel := context.WithTimeout(l.t.Context(), connectWait)
	defer cancel()
	return js.Stream(ctx, l.ep.StreamName())
}

// needJetStream ends the case as a harness error when the run's broker has
// no JetStream: the work queue is the broker's to offer (PUSH/PULL need
// nats-server -js, doppler §2), and its absence is no fault of the SUT's.
func (l *live) needJetStream() {
	js, err := jetstream.New(l.nc)
	if err == nil {
		ctx, cancel := context.WithTimeout(l.t.Context(), connectWait)
		_, err = js.AccountInfo(ctx)
		cancel()
	}
	if err != nil {
		panic(&cases.Abort{Outcome: reports.Error, Kind: "harness",
			Message: fmt.Sprintf("the NATS server %s offers no JetStream, which PUSH/PULL need (nats-server -js): %v", l.url, err)})
	}
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
