package dpnats

import (
	"context"
	"fmt"
	"strconv"
	"sync"

	"github.com/nats-io/nats.go"

	"github.com/conform-suite/conform/ref/doppler"
)

// Requester is doppler's REQ role, the status plane: it sends a request frame
// on <base>.req and waits for the reply. REQ/REP never chunks — a frame that
// does not fit in one message is refused with DP_ERR_TOO_LARGE — and every
// request is flushed before the wait, because a request nobody sent gets no
// reply (doppler §6b). One request is outstanding at a time; concurrent calls
// are serialised.
type Requester struct {
	s     *socket
	inbox string // replies arrive on <inbox>.<n>
	sub   *nats.Subscription

	mu    sync.Mutex
	st    stamper
	n     uint64 // the token of the latest request
	stats counters
}

// NewRequester connects to ep's server and returns a Requester. It returns
// once the server has the Requester's reply subscription.
func NewRequester(ctx context.Context, ep doppler.Endpoint, o Options) (*Requester, error) {
	s, err := dial(ctx, ep, "requester", o)
	if err != nil {
		return nil, err
	}
	inbox := s.nc.NewInbox()
	sub, err := subscribe(ctx, s, "create requester", inbox+".*")
	if err != nil {
		return nil, err
	}
	return &Requester{s: s, inbox: inbox, sub: sub, st: newStamper(s)}, nil
}

// Request sends payload as a frame of type t on <base>.req and returns the
// reply frame, which has passed the header check. A reply to an earlier
// request that timed out is recognised by its reply subject and discarded.
//
// It fails with DP_ERR_INVALID for telemetry (a Publisher's alone), a payload
// that is not whole elements, or a reply the header check refuses (with its
// Verdict) or that is chunked; DP_ERR_TOO_LARGE for a frame over
// max_payload, which consumes no sequence number; DP_ERR when no replier is
// subscribed (the server says so at once); DP_ERR_TIMEOUT or
// DP_ERR_INTERRUPTED when ctx ends first; DP_ERR_CLOSED after Drain or
// Close.
func (q *Requester) Request(ctx context.Context, t doppler.Type, payload []byte) (doppler.Frame, error) {
	const op = "request"
	if err := checkType(op, t, q.s.parts.EmitsTelemetry("requester")); err != nil {
		return doppler.Frame{}, err
	}
	if err := ctx.Err(); err != nil {
		return doppler.Frame{}, ctxError(op, err)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.s.isShut() {
		return doppler.Frame{}, q.s.closedError(op)
	}
	f, err := q.st.frame(op, t, payload)
	if err != nil {
		return doppler.Frame{}, err
	}
	msg, err := q.st.sender.Send(f)
	if err != nil {
		return doppler.Frame{}, err
	}
	q.n++
	reply := q.inbox + "." + strconv.FormatUint(q.n, 10)
	if err := q.s.nc.PublishMsg(&nats.Msg{Subject: q.s.names.ReqSubject(), Reply: reply, Data: msg}); err != nil {
		return doppler.Frame{}, q.s.transportError(op, err)
	}
	if err := q.s.flush(ctx, op); err != nil {
		return doppler.Frame{}, err
	}
	for {
		m, err := q.sub.NextMsgWithContext(ctx)
		if err != nil {
			return doppler.Frame{}, q.s.transportError(op, err)
		}
		if m.Subject != reply {
			continue // the late reply to a request that already gave up
		}
		if len(m.Data) == 0 && m.Header.Get("Status") == "503" {
			return doppler.Frame{}, wrap(&doppler.Error{Code: doppler.ErrGeneric, Op: op,
				Detail: fmt.Sprintf("no replier subscribed to %s", q.s.names.ReqSubject())}, nats.ErrNoResponders)
		}
		rf, err := single(op, m.Data, q.s)
		if err != nil {
			q.stats.add(1, 0, 1)
			return doppler.Frame{}, err
		}
		q.stats.add(1, 1, 0)
		return rf, nil
	}
}

// RequestBytes is the raw-bytes face of REQ (doppler §2): it sends b as a RAW
// frame (kind IQ, format "SB", one-byte elements) and returns the reply's
// payload bytes, whatever the reply's type — control messages that are not
// signals. It fails as Request does.
func (q *Requester) RequestBytes(ctx context.Context, b []byte) ([]byte, error) {
	f, err := q.Request(ctx, doppler.TypeRaw, b)
	if err != nil {
		return nil, err
	}
	return f.Payload, nil
}

// SetTimestampNs makes the next request carry ns as its timestamp_ns instead
// of the send time; the override then clears itself (doppler §7).
func (q *Requester) SetTimestampNs(ns uint64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.st.setTimestamp(ns)
}

// Stats counts the replies received: Frames accepted, Refused by the check.
func (q *Requester) Stats() Stats { return q.stats.get() }

// MaxPayload returns the max_payload read from the connection at creation.
func (q *Requester) MaxPayload() int { return q.s.maxPayload }

// NextSequence returns the sequence the next request will carry.
func (q *Requester) NextSequence() uint64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.st.sender.NextSequence()
}

// Drain is doppler §6b's ordered exit: the reply subscription ends, the
// connection flushes and closes, and Drain returns once it is CLOSED; a
// later Request is DP_ERR_CLOSED. A Request blocked in another goroutine
// returns DP_ERR_CLOSED. When ctx ends first the connection is closed at
// once and Drain returns DP_ERR_TIMEOUT (or DP_ERR_INTERRUPTED).
func (q *Requester) Drain(ctx context.Context) error { return q.s.drain(ctx) }

// Close closes the connection at once. It always returns nil; closing again,
// or after Drain, does nothing.
func (q *Requester) Close() error { return q.s.close() }

// Replier is doppler's REP role: it receives request frames on <base>.req,
// checks each, and replies to it through the Request it returns. Replies, like
// requests, never chunk and are flushed before Reply returns (doppler §6b).
// Every Replier subscribed to <base>.req receives every request — doppler
// names no queue group — and the requester keeps the first reply.
type Replier struct {
	s   *socket
	sub *nats.Subscription

	recvMu sync.Mutex // serialises Recv
	mu     sync.Mutex // guards st
	st     stamper
	stats  counters
}

// NewReplier connects to ep's server and subscribes to <base>.req. It returns
// once the server has the subscription.
func NewReplier(ctx context.Context, ep doppler.Endpoint, o Options) (*Replier, error) {
	s, err := dial(ctx, ep, "replier", o)
	if err != nil {
		return nil, err
	}
	sub, err := subscribe(ctx, s, "create replier", s.names.ReqSubject())
	if err != nil {
		return nil, err
	}
	return &Replier{s: s, sub: sub, st: newStamper(s)}, nil
}

// Request is one request a Replier received: the frame, which passed the
// header check, and the way back to its sender.
type Request struct {
	Frame doppler.Frame
	reply string
	rep   *Replier
}

// Recv returns the next request. A message the header check refuses, or a
// chunked one (REQ/REP does not chunk), is reported as DP_ERR_INVALID — with
// the check's Verdict when it refused — and dropped unanswered; the next call
// carries on. DP_ERR_TIMEOUT and DP_ERR_INTERRUPTED report ctx's end,
// DP_ERR_CLOSED a drained or closed Replier.
func (r *Replier) Recv(ctx context.Context) (*Request, error) {
	const op = "receive request"
	r.recvMu.Lock()
	defer r.recvMu.Unlock()
	if r.s.isShut() {
		return nil, r.s.closedError(op)
	}
	if err := ctx.Err(); err != nil {
		return nil, ctxError(op, err)
	}
	m, err := r.sub.NextMsgWithContext(ctx)
	if err != nil {
		return nil, r.s.transportError(op, err)
	}
	f, err := single(op, m.Data, r.s)
	if err != nil {
		r.stats.add(1, 0, 1)
		return nil, err
	}
	r.stats.add(1, 1, 0)
	return &Request{Frame: f, reply: m.Reply, rep: r}, nil
}

// Reply answers the request with payload as a frame of type t, taking the
// Replier's next sequence, and returns once the reply is flushed to the
// server. It fails as Requester.Request does for the frame, with
// DP_ERR_INVALID when the request carried no reply subject, and with
// DP_ERR_CLOSED after the Replier was drained or closed.
func (q *Request) Reply(ctx context.Context, t doppler.Type, payload []byte) error {
	const op = "reply"
	r := q.rep
	if err := checkType(op, t, r.s.parts.EmitsTelemetry("replier")); err != nil {
		return err
	}
	if q.reply == "" {
		return &doppler.Error{Code: doppler.ErrInvalid, Op: op, Sequence: q.Frame.Header.Sequence, HasSequence: true,
			Detail: "the request carries no reply subject"}
	}
	if err := ctx.Err(); err != nil {
		return ctxError(op, err)
	}
	if r.s.isShut() {
		return r.s.closedError(op)
	}
	r.mu.Lock()
	f, err := r.st.frame(op, t, payload)
	var msg []byte
	if err == nil {
		msg, err = r.st.sender.Send(f)
	}
	if err == nil {
		err = r.s.nc.Publish(q.reply, msg)
		if err != nil {
			err = r.s.transportError(op, err)
		}
	}
	r.mu.Unlock()
	if err != nil {
		return err
	}
	return r.s.flush(ctx, op)
}

// ReplyBytes is the raw-bytes face of REP (doppler §2): it answers with b as
// a RAW frame. It fails as Reply does.
func (q *Request) ReplyBytes(ctx context.Context, b []byte) error {
	return q.Reply(ctx, doppler.TypeRaw, b)
}

// SetTimestampNs makes the next reply carry ns as its timestamp_ns instead of
// the send time; the override then clears itself (doppler §7).
func (r *Replier) SetTimestampNs(ns uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.st.setTimestamp(ns)
}

// Stats counts the requests received: Frames accepted, Refused by the check.
func (r *Replier) Stats() Stats { return r.stats.get() }

// MaxPayload returns the max_payload read from the connection at creation.
func (r *Replier) MaxPayload() int { return r.s.maxPayload }

// Drain is doppler §6b's ordered exit: the subscription ends, requests the
// client had buffered and Recv had not taken are discarded unanswered (their
// requesters time out), replies already sent are flushed, the connection
// closes, and Drain returns once it is CLOSED. When ctx ends first the
// connection is closed at once and Drain returns DP_ERR_TIMEOUT (or
// DP_ERR_INTERRUPTED).
func (r *Replier) Drain(ctx context.Context) error { return r.s.drain(ctx) }

// Close closes the connection at once. It always returns nil; closing again,
// or after Drain, does nothing.
func (r *Replier) Close() error { return r.s.close() }

// single checks one message of a role that never chunks and returns it as a
// frame: refused when the header check refuses it, and refused when it is a
// chunk, since only PUB/SUB chunks (doppler §4) and a chunk alone is not a
// frame. The payload aliases msg.
func single(op string, msg []byte, s *socket) (doppler.Frame, error) {
	o := s.order
	v := s.parts.Check(msg, o)
	if v == doppler.Accepted && len(msg) < doppler.HeaderSize {
		v = doppler.ShortMessage // a replaced check accepted what cannot be read
	}
	if v != doppler.Accepted {
		e := &doppler.Error{Code: doppler.ErrInvalid, Op: op, Verdict: v, Detail: "refused by the header check"}
		if h, err := doppler.DecodeHeader(msg, o); err == nil {
			e.Sequence, e.HasSequence = h.Sequence, true
		}
		return doppler.Frame{}, e
	}
	h, _ := doppler.DecodeHeader(msg, o)
	if h.Chunked() {
		return doppler.Frame{}, &doppler.Error{Code: doppler.ErrInvalid, Op: op, Sequence: h.Sequence, HasSequence: true,
			Detail: "a chunk where frames are never chunked (only PUB/SUB chunks, doppler §4)"}
	}
	return doppler.Frame{Header: h, Payload: msg[doppler.HeaderSize:]}, nil
}
