package dpnats

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/conform-suite/conform/ref/doppler"
)

// pullSliceMin is the shortest pull request worth sending: with less of the
// context's deadline left, Puller.Recv waits the remainder out instead.
const pullSliceMin = 5 * time.Millisecond

// WorkStreamConfig returns the configuration a Pusher creates the work-queue
// stream with: DP_WORK_<base> capturing <base>.work.*, work-queue retention,
// file storage, one replica — doppler §5's development default. A
// production deployment pre-provisions the stream (with three replicas), and
// NewPusher adopts an existing stream as it is.
func WorkStreamConfig(ep doppler.Endpoint) jetstream.StreamConfig {
	return workStreamConfig(ep, ep)
}

func workStreamConfig(ep doppler.Endpoint, names Names) jetstream.StreamConfig {
	return jetstream.StreamConfig{
		Name:        names.StreamName(),
		Description: "doppler PUSH/PULL work queue for base " + ep.Base,
		Subjects:    []string{names.WorkWildcard()},
		Retention:   jetstream.WorkQueuePolicy,
		Storage:     jetstream.FileStorage,
		Replicas:    1,
	}
}

// WorkConsumerConfig returns the configuration NewPuller creates the durable
// pull consumer with: DP_PULL_<base>, every message from the start, explicit
// acks with the given ack wait, and no limit on redeliveries.
func WorkConsumerConfig(ep doppler.Endpoint, ackWait time.Duration) jetstream.ConsumerConfig {
	return workConsumerConfig(ep, ep, ackWait)
}

func workConsumerConfig(ep doppler.Endpoint, names Names, ackWait time.Duration) jetstream.ConsumerConfig {
	if ackWait <= 0 {
		ackWait = DefaultAckWait
	}
	return jetstream.ConsumerConfig{
		Durable:       names.ConsumerName(),
		Description:   "doppler PULL workers for base " + ep.Base,
		DeliverPolicy: jetstream.DeliverAllPolicy,
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       ackWait,
		MaxDeliver:    -1,
	}
}

// Pusher is doppler's PUSH role: it sends frames of one type into the
// JetStream work queue on <base>.work.<type>. PUSH never chunks — the chunks
// of one frame could reach different workers — so a frame that does not fit
// max_payload is refused with DP_ERR_TOO_LARGE (doppler §4). Send returns only
// once JetStream has stored the frame (§6b: the tier's whole point), so a
// Pusher needs no Flush. A Pusher is safe for concurrent use.
type Pusher struct {
	s       *socket
	js      jetstream.JetStream
	typ     doppler.Type
	subject string

	mu sync.Mutex
	st stamper
}

// NewPusher connects to ep's server and returns a Pusher of frames of type t,
// creating the work-queue stream DP_WORK_<base> (WorkStreamConfig) when the
// broker has none and adopting an existing one as it is (doppler §5). It
// fails with DP_ERR_INVALID for an unknown type or telemetry, and DP_ERR when
// the server cannot be reached or has no JetStream.
func NewPusher(ctx context.Context, ep doppler.Endpoint, t doppler.Type, o Options) (*Pusher, error) {
	const op = "create pusher"
	if err := checkType(op, t, o.Parts.emitsTelemetry("pusher")); err != nil {
		return nil, err
	}
	s, err := dial(ctx, ep, "pusher", o)
	if err != nil {
		return nil, err
	}
	js, err := jetstream.New(s.nc)
	if err != nil {
		s.nc.Close()
		return nil, s.transportError(op, err)
	}
	if err := s.parts.EnsureStream(ctx, js, workStreamConfig(ep, s.names)); err != nil {
		s.nc.Close()
		return nil, s.transportError(op, err)
	}
	return &Pusher{s: s, js: js, typ: t, subject: s.names.WorkSubject(t), st: newStamper(s)}, nil
}

// ensureStream adopts the stream cfg names if it exists, as it is, and
// creates it with cfg otherwise.
func ensureStream(ctx context.Context, js jetstream.JetStream, cfg jetstream.StreamConfig) error {
	name := cfg.Name
	_, err := js.Stream(ctx, name)
	if err == nil {
		return nil
	}
	if !errors.Is(err, jetstream.ErrStreamNotFound) {
		return fmt.Errorf("look up stream %s: %w", name, err)
	}
	for wait := storeRetry; ; wait *= 2 {
		_, err = js.CreateStream(ctx, cfg)
		if err == nil || errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
			return nil // created, or another Pusher created it meanwhile
		}
		// The server can refuse a creation with "error creating store for
		// stream" (JetStream error 10049) and succeed a moment later: seen
		// on a loaded machine, for a name no other stream had, with the
		// stream absent after the refusal. It is retried a few times; a
		// stream that exists meanwhile is adopted.
		if _, lerr := js.Stream(ctx, name); lerr == nil {
			return nil
		}
		var apiErr *jetstream.APIError
		if !errors.As(err, &apiErr) || apiErr.ErrorCode != errCodeStreamStoreFailed || wait > maxStoreRetry {
			return fmt.Errorf("create stream %s: %w", name, err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("create stream %s: %w", name, err)
		case <-time.After(wait):
		}
	}
}

// errCodeStreamStoreFailed is JetStream's error code for "error creating
// store for stream"; nats.go names no constant for it.
const errCodeStreamStoreFailed jetstream.ErrorCode = 10049

// storeRetry and maxStoreRetry bound the retries of a stream creation the
// server refused for its store: 50, 100, 200 and 400 ms.
const (
	storeRetry    = 50 * time.Millisecond
	maxStoreRetry = 400 * time.Millisecond
)

// Send pushes payload as one frame into the work queue and returns once
// JetStream has acknowledged storing it. The frame takes the socket's next
// sequence and is stamped with the send time (or the SetTimestampNs
// override).
//
// It fails with DP_ERR_TOO_LARGE, consuming no sequence number, when 64
// bytes of header and the payload exceed max_payload; DP_ERR_INVALID when
// payload is not whole elements; DP_ERR_TIMEOUT or DP_ERR_INTERRUPTED when
// ctx ends before the acknowledgement (the frame may then be stored or not);
// DP_ERR_CLOSED after Drain or Close; DP_ERR when JetStream refuses it.
func (p *Pusher) Send(ctx context.Context, payload []byte) error {
	const op = "push"
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
	msg, err := p.st.sender.Send(f)
	if err != nil {
		return err
	}
	if _, err := p.js.Publish(ctx, p.subject, msg); err != nil {
		e := p.s.transportError(op, err)
		var de *doppler.Error
		if errors.As(e, &de) {
			de.Sequence, de.HasSequence = f.Header.Sequence, true
		}
		return e
	}
	return nil
}

// SetTimestampNs makes the next frame pushed carry ns as its timestamp_ns
// instead of the send time; the override then clears itself (doppler §7).
func (p *Pusher) SetTimestampNs(ns uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.st.setTimestamp(ns)
}

// Subject returns the subject the Pusher sends on.
func (p *Pusher) Subject() string { return p.subject }

// MaxPayload returns the max_payload read from the connection at creation,
// above which Send refuses a frame.
func (p *Pusher) MaxPayload() int { return p.s.maxPayload }

// NextSequence returns the sequence the next frame pushed will carry.
func (p *Pusher) NextSequence() uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.st.sender.NextSequence()
}

// Drain is doppler §6b's ordered exit. Every Send already returned was
// acknowledged by the server, so nothing of the Pusher's is in flight: Drain
// closes the connection in order and returns once it is CLOSED, and a later
// Send is DP_ERR_CLOSED.
func (p *Pusher) Drain(ctx context.Context) error { return p.s.drain(ctx) }

// Close closes the connection at once. It always returns nil; closing again,
// or after Drain, does nothing.
func (p *Pusher) Close() error { return p.s.close() }

// Puller is doppler's PULL role, one worker of the work queue: it takes one
// frame at a time from the durable consumer DP_PULL_<base> of the stream
// DP_WORK_<base>. Delivery is at-least-once: a frame stays pending until the
// worker acks it, and a worker that dies (or closes) without acking has its
// frame redelivered to another worker once the consumer's ack wait passes
// (doppler §6). A duplicate after a redelivery is therefore normal (§9).
// Recv is serialised.
type Puller struct {
	s    *socket
	cons jetstream.Consumer

	mu    sync.Mutex // serialises Recv
	stats counters
}

// NewPuller connects to ep's server and binds the work-queue stream
// DP_WORK_<base>, which it never creates: on a broker that has never carried
// the stream it fails at once, with DP_ERR wrapping
// jetstream.ErrStreamNotFound (doppler §5 and its gap 2). It then binds the
// durable pull consumer DP_PULL_<base>, creating it (WorkConsumerConfig,
// with Options.AckWait) when it does not exist and adopting it as it is when
// it does.
func NewPuller(ctx context.Context, ep doppler.Endpoint, o Options) (*Puller, error) {
	const op = "create puller"
	s, err := dial(ctx, ep, "puller", o)
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*Puller, error) {
		s.nc.Close()
		return nil, s.transportError(op, err)
	}
	js, err := jetstream.New(s.nc)
	if err != nil {
		return fail(err)
	}
	names := s.names
	st, err := js.Stream(ctx, names.StreamName())
	if err != nil {
		return fail(fmt.Errorf("bind stream %s (the Push side creates it): %w", names.StreamName(), err))
	}
	cons, err := st.Consumer(ctx, names.ConsumerName())
	if errors.Is(err, jetstream.ErrConsumerNotFound) {
		cons, err = st.CreateConsumer(ctx, workConsumerConfig(ep, names, o.AckWait))
		if errors.Is(err, jetstream.ErrConsumerExists) {
			cons, err = st.Consumer(ctx, names.ConsumerName()) // another worker won the race
		}
	}
	if err != nil {
		return fail(fmt.Errorf("bind consumer %s: %w", names.ConsumerName(), err))
	}
	return &Puller{s: s, cons: cons}, nil
}

// Delivery is one frame a Puller received, pending in the work queue until it
// is acked.
type Delivery struct {
	// Frame passed the header check; its payload aliases the message.
	Frame doppler.Frame
	msg   jetstream.Msg
	s     *socket
}

// Recv takes the next frame from the work queue, waiting until one is
// available or ctx ends. The frame must be acked (Delivery.Ack) or it is
// redelivered after the ack wait.
//
// A message the header check refuses, or a chunk (PUSH never chunks,
// doppler §4), is terminated in the queue so it is not redelivered, and
// reported as DP_ERR_INVALID — with the check's Verdict when the check
// refused it; the next call carries on. DP_ERR_TIMEOUT and DP_ERR_INTERRUPTED
// report ctx's end, DP_ERR_CLOSED a drained or closed Puller.
//
// Each call sends one pull request for one message, bounded by ctx's
// deadline (in 30-second pulls without one). A pull request abandoned
// because ctx was cancelled can still be granted a message the worker never
// sees; the work queue redelivers it after the ack wait.
func (p *Puller) Recv(ctx context.Context) (*Delivery, error) {
	const op = "pull"
	p.mu.Lock()
	defer p.mu.Unlock()
	outer := ctx
	ctx, release := p.s.bind(ctx)
	defer release()
	for {
		if p.s.isShut() {
			return nil, p.s.closedError(op)
		}
		if err := outer.Err(); err != nil {
			return nil, ctxError(op, err)
		}
		if d, ok := ctx.Deadline(); ok && time.Until(d) < pullSliceMin {
			<-ctx.Done()
			continue
		}
		batch, err := p.cons.Fetch(1, jetstream.FetchContext(ctx))
		if err != nil {
			if ctx.Err() != nil {
				continue // the socket was shut or ctx ended: reported above
			}
			return nil, p.s.transportError(op, err)
		}
		var m jetstream.Msg
		for got := range batch.Messages() {
			m = got
		}
		if m == nil {
			if err := batch.Error(); err != nil && !errors.Is(err, jetstream.ErrNoMessages) && ctx.Err() == nil {
				return nil, p.s.transportError(op, err)
			}
			continue // the pull expired empty: ask again until ctx ends
		}
		f, err := single(op, m.Data(), p.s)
		if err != nil {
			_ = m.Term()
			p.stats.add(1, 0, 1)
			return nil, err
		}
		p.stats.add(1, 1, 0)
		return &Delivery{Frame: f, msg: m, s: p.s}, nil
	}
}

// Ack acknowledges the frame and waits for the server to confirm, after which
// the work queue has removed it and it is never redelivered. It fails with
// DP_ERR_CLOSED when the Puller was drained or closed (the frame will be
// redelivered to another worker), DP_ERR_TIMEOUT or DP_ERR_INTERRUPTED when
// ctx ends first, and DP_ERR when the server refuses.
func (d *Delivery) Ack(ctx context.Context) error {
	const op = "ack"
	if d.s.isShut() {
		return d.s.closedError(op)
	}
	if err := d.msg.DoubleAck(ctx); err != nil {
		return d.s.transportError(op, err)
	}
	return nil
}

// Nak asks the work queue to redeliver the frame now rather than after the
// ack wait. It returns once the request is handed to the client.
func (d *Delivery) Nak() error {
	const op = "nak"
	if d.s.isShut() {
		return d.s.closedError(op)
	}
	if err := d.msg.Nak(); err != nil {
		return d.s.transportError(op, err)
	}
	return nil
}

// NumDelivered returns how many times the work queue has delivered this
// frame, 1 the first time; a value above 1 marks a redelivery. It returns 0
// when the delivery's metadata cannot be read.
func (d *Delivery) NumDelivered() uint64 {
	md, err := d.msg.Metadata()
	if err != nil {
		return 0
	}
	return md.NumDelivered
}

// Stats counts what the Puller has taken from the queue: Frames delivered,
// Refused and terminated.
func (p *Puller) Stats() Stats { return p.stats.get() }

// Drain is doppler §6b's ordered exit for a worker: it closes the connection
// in order and returns once it is CLOSED, and later Recv and Ack calls are
// DP_ERR_CLOSED. Frames received and not yet acked stay pending and are
// redelivered to another worker after the ack wait — draining one worker's
// subscription so that it finishes its work before leaving is the drain
// doppler §6b says is missing (#966), and this package does not add it.
func (p *Puller) Drain(ctx context.Context) error { return p.s.drain(ctx) }

// Close closes the connection at once, as a worker that dies does: frames
// not acked are redelivered to another worker after the ack wait. It always
// returns nil; closing again, or after Drain, does nothing.
func (p *Puller) Close() error { return p.s.close() }

// MaxPayload returns the max_payload read from the connection at creation.
func (p *Puller) MaxPayload() int { return p.s.maxPayload }
