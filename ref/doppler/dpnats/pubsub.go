package dpnats

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/nats-io/nats.go"

	"github.com/conform-suite/conform/ref/doppler"
)

// Publisher is doppler's PUB role: it publishes frames of one type on
// <base>.pub.<type>, chunking a frame that does not fit the connection's
// max_payload (doppler §4). PUB/SUB is at-most-once and has no backpressure
// (§9). A Publisher is safe for concurrent use; the chunks of one frame are
// never interleaved with another frame's.
type Publisher struct {
	s       *socket
	typ     doppler.Type
	subject string

	mu sync.Mutex
	st stamper
}

// NewPublisher connects to ep's server and returns a Publisher of frames of
// type t, telemetry included. It fails with DP_ERR_INVALID for an unknown
// type and DP_ERR when the server cannot be reached.
func NewPublisher(ctx context.Context, ep doppler.Endpoint, t doppler.Type, o Options) (*Publisher, error) {
	if err := checkType("create publisher", t, o.Parts.emitsTelemetry("publisher")); err != nil {
		return nil, err
	}
	s, err := dial(ctx, ep, "publisher", o)
	if err != nil {
		return nil, err
	}
	return &Publisher{s: s, typ: t, subject: s.names.PubSubject(t), st: newStamper(s)}, nil
}

// Send publishes payload as one logical frame: it takes the socket's next
// sequence, is stamped with the send time (or the override of
// SetTimestampNs), and is split into element-aligned chunks when 64 bytes of
// header and the payload exceed max_payload. It returns once the client has
// the messages, not once the server has them; see Flush (§6b).
//
// It fails with DP_ERR_INVALID when payload is not a whole number of
// elements, DP_ERR_CLOSED after Drain or Close, and DP_ERR when the client
// refuses a message; a frame that fails before its first message consumes no
// sequence number.
func (p *Publisher) Send(ctx context.Context, payload []byte) error {
	const op = "publish"
	if err := ctx.Err(); err != nil {
		return ctxError(op, err)
	}
	if p.s.isShut() {
		return p.s.closedError(op)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	f, err := p.st.frame(op, p.typ, payload)
	if err != nil {
		return err
	}
	msgs, err := p.st.sender.Publish(f)
	if err != nil {
		return err
	}
	for i, m := range msgs {
		if err := p.s.nc.Publish(p.subject, m); err != nil {
			e := p.s.transportError(op, err)
			var de *doppler.Error
			if errors.As(e, &de) {
				de.Sequence, de.HasSequence = f.Header.Sequence, true
				de.Detail = fmt.Sprintf("message %d of %d: %s", i+1, len(msgs), de.Detail)
			}
			return e
		}
	}
	return nil
}

// SetTimestampNs makes the next frame sent carry ns as its timestamp_ns
// instead of the send time; the override then clears itself (doppler §7).
// A hop that republishes upstream data uses it to keep the origin time.
func (p *Publisher) SetTimestampNs(ns uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.st.setTimestamp(ns)
}

// Flush is the round trip of doppler §6b: it returns nil once the server has
// received every frame sent before the call, and DP_ERR_TIMEOUT when ctx's
// deadline passes first, which means data is still buffered. It is the only
// way to ask without closing; a drained shutdown does not need it.
func (p *Publisher) Flush(ctx context.Context) error { return p.s.flush(ctx, "flush") }

// Drain is the ordered exit of doppler §6b: from the call on, Send is refused
// with DP_ERR_CLOSED; everything already sent is flushed, the connection is
// closed, and Drain returns once it is CLOSED. When ctx ends first the
// connection is closed at once, what was not yet flushed is abandoned, and
// Drain returns DP_ERR_TIMEOUT (DP_ERR_INTERRUPTED for a cancellation).
// Draining twice, or after Close, is DP_ERR_CLOSED.
func (p *Publisher) Drain(ctx context.Context) error { return p.s.drain(ctx) }

// Close closes the connection after a best-effort flush capped at 500 ms
// whose outcome it does not report: a backlog that cannot be written in that
// time is lost in silence (doppler §6b). It always returns nil; closing
// again, or after Drain, does nothing.
func (p *Publisher) Close() error { return p.s.close() }

// Subject returns the subject the Publisher publishes on.
func (p *Publisher) Subject() string { return p.subject }

// Type returns the frame type the Publisher sends.
func (p *Publisher) Type() doppler.Type { return p.typ }

// MaxPayload returns the max_payload read from the connection at creation,
// at which frames are chunked.
func (p *Publisher) MaxPayload() int { return p.s.maxPayload }

// NextSequence returns the sequence the next frame sent will carry.
func (p *Publisher) NextSequence() uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.st.sender.NextSequence()
}

// Conn returns the Publisher's NATS connection, for inspection. Publishing
// on it directly bypasses the socket's sequence.
func (p *Publisher) Conn() *nats.Conn { return p.s.nc }

// Subscriber is doppler's SUB role: it receives frames published on
// <base>.pub.<type> (or every type), checks every message (doppler §3), and
// reassembles chunked frames (§4), so the caller sees logical frames only.
// Reassembly follows the subscription: a message from another publisher
// arriving mid-frame drops the frame in progress with DP_ERR_INVALID, so on
// a wildcard subscription two publishers that both chunk cost each other
// frames — doppler's "one publisher per subject" rule, applied to the
// subscription that reassembles.
//
// Recv is serialised; a Subscriber may be shared, but its frames are then
// divided between the callers.
type Subscriber struct {
	s       *socket
	sub     *nats.Subscription
	subject string

	mu     sync.Mutex // serialises Recv
	r      Reassembler
	queued []doppler.Frame // a frame delivered together with a refusal
	stats  counters
}

// NewSubscriber connects to ep's server and subscribes to frames of type t,
// or to every type when t is AnyType. It returns once the server has the
// subscription, so a frame published after it returns reaches it. The
// subscription has no pending limits (doppler §8): a subscriber that stops
// receiving grows the client's queue rather than dropping.
func NewSubscriber(ctx context.Context, ep doppler.Endpoint, t doppler.Type, o Options) (*Subscriber, error) {
	const op = "create subscriber"
	if t != AnyType {
		if err := checkType(op, t, true); err != nil {
			return nil, err
		}
	}
	s, err := dial(ctx, ep, "subscriber", o)
	if err != nil {
		return nil, err
	}
	subject := s.names.PubWildcard()
	if t != AnyType {
		subject = s.names.PubSubject(t)
	}
	sub, err := subscribe(ctx, s, op, subject)
	if err != nil {
		return nil, err
	}
	r := &Subscriber{s: s, sub: sub, subject: subject}
	r.r = s.parts.NewReassembler(o.Order, s.parts.Check)
	return r, nil
}

// subscribe takes a synchronous, unlimited subscription on subject, makes
// the socket's shut-down unsubscribe it first, and waits until the server
// has it. On failure it closes the socket.
func subscribe(ctx context.Context, s *socket, op, subject string) (*nats.Subscription, error) {
	sub, err := s.nc.SubscribeSync(subject)
	if err == nil {
		err = sub.SetPendingLimits(-1, -1)
	}
	if err != nil {
		s.nc.Close()
		return nil, s.transportError(op, err)
	}
	// A synchronous receiver has no handler to finish: on Drain or Close
	// the subscription goes first, and what it buffered and the caller had
	// not received is discarded (see Subscriber.Drain).
	s.beforeEnd = func() { _ = sub.Unsubscribe() }
	flush := func(ctx context.Context) error { return s.flush(ctx, op) }
	if err := s.parts.AwaitSubscription(ctx, flush); err != nil {
		s.nc.Close()
		return nil, err
	}
	return sub, nil
}

// Recv returns the next logical frame. Every message passes the header check
// in the Subscriber's byte order; chunks are reassembled and never returned,
// and the frame handed back has CHUNKED cleared and the totals in its
// header. An unchunked frame's payload aliases the NATS message.
//
// A refused message, or a frame lost mid-assembly (a message of another
// sequence arriving mid-frame), is reported as an error — DP_ERR_INVALID
// with the check's Verdict when the header check refused it, DP_ERR_NOMEM
// for a frame over MaxFrameBytes — one per call, and the next call carries
// on; when the message that cost a frame is itself a whole frame, that frame
// is returned by the next call. DP_ERR_TIMEOUT and DP_ERR_INTERRUPTED report
// ctx's end and DP_ERR_CLOSED a drained or closed Subscriber.
//
// A frame in progress survives a Recv that times out: its remaining chunks
// may still be queued in the client, and §8b's loop of short timeouts must
// not lose every chunked frame. It is dropped, and reported, when a message
// of another frame arrives first.
func (r *Subscriber) Recv(ctx context.Context) (doppler.Frame, error) {
	const op = "receive"
	r.mu.Lock()
	defer r.mu.Unlock()
	for {
		if len(r.queued) > 0 {
			f := r.queued[0]
			r.queued = r.queued[1:]
			r.stats.add(0, 1, 0)
			return f, nil
		}
		if r.s.isShut() {
			return doppler.Frame{}, r.s.closedError(op)
		}
		if err := ctx.Err(); err != nil {
			return doppler.Frame{}, ctxError(op, err)
		}
		m, err := r.sub.NextMsgWithContext(ctx)
		if err != nil {
			return doppler.Frame{}, r.s.transportError(op, err)
		}
		f, ok, err := r.r.Add(m.Data)
		if err != nil {
			r.stats.add(1, 0, 1)
			if ok {
				r.queued = append(r.queued, f)
			}
			return doppler.Frame{}, err
		}
		if ok {
			r.stats.add(1, 1, 0)
			return f, nil
		}
		r.stats.add(1, 0, 0)
	}
}

// Stats returns what the Subscriber has received so far.
func (r *Subscriber) Stats() Stats { return r.stats.get() }

// Drain is the ordered exit of doppler §6b for a receiver: the subscription
// ends first, so the server sends nothing more; messages the client had
// buffered and Recv had not taken are discarded, because a synchronous
// receiver has no handler to let finish (§6b's "no handler to finish");
// then the connection flushes, closes, and Drain returns once it is CLOSED.
// After Drain, Recv is refused with DP_ERR_CLOSED. When ctx ends first the
// connection is closed at once and Drain returns DP_ERR_TIMEOUT (or
// DP_ERR_INTERRUPTED).
func (r *Subscriber) Drain(ctx context.Context) error { return r.s.drain(ctx) }

// Close ends the subscription and closes the connection. It always returns
// nil; closing again, or after Drain, does nothing.
func (r *Subscriber) Close() error { return r.s.close() }

// Subject returns the subject the Subscriber subscribed to.
func (r *Subscriber) Subject() string { return r.subject }

// MaxPayload returns the max_payload read from the connection at creation.
func (r *Subscriber) MaxPayload() int { return r.s.maxPayload }
