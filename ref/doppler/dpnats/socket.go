package dpnats

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/conform-suite/conform/ref/doppler"
)

// Connection behaviour pinned by doppler §8 and §6b, and the defaults of the
// knobs in Options.
const (
	// ReconnectWait is the pause between reconnect attempts (§8).
	ReconnectWait = 100 * time.Millisecond
	// ReconnectBufSize is what the client buffers while disconnected (§8).
	ReconnectBufSize = 8 << 20
	// CloseFlushCap bounds the best-effort flush of Close (§6b).
	CloseFlushCap = 500 * time.Millisecond
	// DefaultConnectTimeout bounds the initial dial when the context has no
	// deadline.
	DefaultConnectTimeout = 5 * time.Second
	// DefaultAckWait is how long the work queue waits for a PULL worker's
	// ack before redelivering, when Options.AckWait is zero. It is
	// JetStream's own default; doppler states none.
	DefaultAckWait = 30 * time.Second
)

// flushSlice is the longest single flush round trip waited for when the
// caller's context has no deadline; nats.go requires a deadline per flush.
const flushSlice = time.Second

// AnyType asks NewSubscriber for every frame type: the subscription takes the
// wildcard <base>.pub.* and the header, not the subject, says what each frame
// is (doppler §5).
const AnyType doppler.Type = 0

// Options configure a socket. The zero value is a little-endian socket with
// the defaults below.
type Options struct {
	// Order is the byte order the socket writes its headers in and expects
	// the magic in. doppler writes the sender's host order (§3); the zero
	// value, little-endian, is the order of every host conform runs on and
	// of the corpus.
	Order doppler.Order

	// Name is the NATS connection name the server shows; empty means
	// "doppler-<role>".
	Name string

	// ConnectTimeout bounds the initial dial when ctx has no deadline.
	// Zero means DefaultConnectTimeout.
	ConnectTimeout time.Duration

	// SampleRateHz is written into every frame the socket sends; zero
	// means unstated (the doppler pins (docs/requirements.md)).
	SampleRateHz float64

	// AckWait is the durable consumer's ack wait, used by NewPuller only
	// when it creates DP_PULL_<base>; a consumer that already exists is
	// adopted as it is. Zero means DefaultAckWait. Tests of redelivery set
	// it short.
	AckWait time.Duration

	// MaxFrameBytes bounds the logical frame a Subscriber reassembles
	// (doppler.Reassembler.MaxFrameBytes). Zero means the Reassembler's
	// default.
	MaxFrameBytes uint64

	// Parts replace pieces of package doppler in the socket; the zero
	// value is the reference throughout.
	Parts Parts
}

// Stats counts what a receiving socket has taken off the transport.
type Stats struct {
	Messages uint64 // transport messages received, chunks included
	Frames   uint64 // logical frames handed to the caller
	Refused  uint64 // errors reported for refused messages or dropped frames
}

// counters is a Stats safe to read while a receive is blocked.
type counters struct {
	mu sync.Mutex
	s  Stats
}

func (c *counters) add(messages, frames, refused uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.s.Messages += messages
	c.s.Frames += frames
	c.s.Refused += refused
}

func (c *counters) get() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.s
}

// socket is what every role shares: the connection, its byte order and
// max_payload, and the shut-down state that makes a send after Drain or Close
// DP_ERR_CLOSED rather than a transport failure (§6b).
type socket struct {
	role       string
	ep         doppler.Endpoint
	nc         *nats.Conn
	order      doppler.Order
	maxPayload int
	sampleRate float64
	parts      Parts // resolved: every field set
	names      Names

	closed    chan struct{} // closed by the client when the connection is CLOSED
	asyncErr  atomic.Value  // the last asynchronous client error, an errBox
	mu        sync.Mutex
	shut      bool   // Drain or Close was called
	beforeEnd func() // a receiver's unsubscribe, run once when shut down

	// life ends when the socket is shut down, so that a wait that the
	// client does not end by itself (a JetStream pull) ends with it.
	life    context.Context
	endLife context.CancelFunc
}

type errBox struct{ err error }

// dial connects a socket of the given role to ep's server.
func dial(ctx context.Context, ep doppler.Endpoint, role string, o Options) (*socket, error) {
	op := "create " + role
	if err := ctx.Err(); err != nil {
		return nil, ctxError(op, err)
	}
	if ep.Server == "" || ep.Base == "" {
		return nil, &doppler.Error{Code: doppler.ErrInvalid, Op: op,
			Detail: fmt.Sprintf("endpoint %q has no server or base; use doppler.ParseEndpoint", ep.String())}
	}
	timeout := o.ConnectTimeout
	if timeout <= 0 {
		timeout = DefaultConnectTimeout
	}
	if d, ok := ctx.Deadline(); ok {
		timeout = time.Until(d)
		if timeout <= 0 {
			return nil, ctxError(op, context.DeadlineExceeded)
		}
	}
	name := o.Name
	if name == "" {
		name = "doppler-" + role
	}
	parts := o.Parts.withDefaults(o.MaxFrameBytes)
	s := &socket{role: role, ep: ep, order: o.Order, sampleRate: o.SampleRateHz, closed: make(chan struct{}),
		parts: parts, names: parts.Names(ep)}
	s.life, s.endLife = context.WithCancel(context.Background())
	nc, err := parts.Connect(ep.Server,
		nats.Name(name),
		nats.Timeout(timeout),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(ReconnectWait),
		nats.ReconnectBufSize(ReconnectBufSize),
		// Drain's own bound is the caller's context; the client's is set
		// out of the way so that it never cuts the drain short first.
		nats.DrainTimeout(24*time.Hour),
		nats.ClosedHandler(func(*nats.Conn) { close(s.closed) }),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
			s.asyncErr.Store(errBox{err})
		}),
	)
	if err != nil {
		s.endLife()
		return nil, wrap(&doppler.Error{Code: doppler.ErrGeneric, Op: op,
			Detail: fmt.Sprintf("connect to %s", ep.Server)}, err)
	}
	s.nc = nc
	// max_payload is discovered, not assumed, with a 1 MiB fallback for a
	// server that reports none (§8).
	s.maxPayload = parts.MaxPayload(nc.MaxPayload())
	return s, nil
}

// bind returns a context that ends with ctx or when the socket is shut
// down, whichever is first, and the function that releases it.
func (s *socket) bind(ctx context.Context) (context.Context, context.CancelFunc) {
	c, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(s.life, cancel)
	return c, func() { stop(); cancel() }
}

// isShut reports whether Drain or Close has been called.
func (s *socket) isShut() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.shut
}

// closedError is the DP_ERR_CLOSED an operation on a shut-down socket gets.
func (s *socket) closedError(op string) error {
	return &doppler.Error{Code: doppler.ErrClosed, Op: op,
		Detail: fmt.Sprintf("the %s socket on %s was drained or closed", s.role, s.ep)}
}

// transportError maps a NATS client error to a doppler code: the caller's
// own shut-down is DP_ERR_CLOSED, a context's end is DP_ERR_TIMEOUT or
// DP_ERR_INTERRUPTED, a client timeout is DP_ERR_TIMEOUT, and anything else
// is DP_ERR. A message the client refuses as over max_payload is DP_ERR too:
// every role refuses an oversized frame with DP_ERR_TOO_LARGE before the
// client sees it (doppler §4), so reaching the client's own limit means a
// sender's size rule failed, and the role must not pass that off as its own
// refusal.
func (s *socket) transportError(op string, err error) error {
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return ctxError(op, err)
	case s.isShut() && (errors.Is(err, nats.ErrConnectionClosed) || errors.Is(err, nats.ErrConnectionDraining) ||
		errors.Is(err, nats.ErrBadSubscription)):
		return wrap(s.closedError(op).(*doppler.Error), err)
	case errors.Is(err, nats.ErrMaxPayload):
		return wrap(&doppler.Error{Code: doppler.ErrGeneric, Op: op,
			Detail: "the NATS client refused a message over max_payload"}, err)
	case errors.Is(err, nats.ErrTimeout):
		return wrap(&doppler.Error{Code: doppler.ErrTimeout, Op: op}, err)
	}
	return wrap(&doppler.Error{Code: doppler.ErrGeneric, Op: op, Detail: "transport"}, err)
}

// flush is the round trip of §6b: it returns once the server has processed
// everything the connection sent before it, or DP_ERR_TIMEOUT when ctx's
// deadline passes first (data may still be buffered). A context without a
// deadline is waited on in one-second round trips until one succeeds or the
// context ends.
func (s *socket) flush(ctx context.Context, op string) error {
	if s.isShut() {
		return s.closedError(op)
	}
	for {
		if err := ctx.Err(); err != nil {
			return ctxError(op, err)
		}
		fctx, cancel := ctx, context.CancelFunc(func() {})
		if _, ok := ctx.Deadline(); !ok {
			fctx, cancel = context.WithTimeout(ctx, flushSlice)
		}
		err := s.nc.FlushWithContext(fctx)
		cancel()
		switch {
		case err == nil:
			return nil
		case ctx.Err() != nil:
			return ctxError(op, ctx.Err())
		case fctx != ctx && (errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout)):
			continue // one slice of an unbounded wait
		}
		return s.transportError(op, err)
	}
}

// shutdown marks the socket shut and runs the receiver's unsubscribe once.
// It reports whether this call was the first.
func (s *socket) shutdown() bool {
	s.mu.Lock()
	if s.shut {
		s.mu.Unlock()
		return false
	}
	s.shut = true
	end := s.beforeEnd
	s.mu.Unlock()
	s.endLife()
	if end != nil {
		end()
	}
	return true
}

// drain is doppler's ordered exit (§6b): refuse new work from now on, let
// the client drain, flush what is pending, close, and wait until the
// connection is CLOSED. When ctx ends first the connection is closed at
// once, abandoning whatever the drain had not yet flushed, and the error is
// DP_ERR_TIMEOUT (or DP_ERR_INTERRUPTED).
func (s *socket) drain(ctx context.Context) error {
	const op = "drain"
	if !s.shutdown() {
		return s.closedError(op)
	}
	if err := ctx.Err(); err != nil {
		s.nc.Close() // no budget at all: the drain is cut off before it starts
		return ctxError(op, err)
	}
	if err := s.nc.Drain(); err != nil && !errors.Is(err, nats.ErrConnectionClosed) {
		s.nc.Close()
		return s.transportError(op, err)
	}
	select {
	case <-s.closed:
	case <-ctx.Done():
		s.nc.Close()
		return ctxError(op, ctx.Err())
	}
	// The client reports a drain that could not flush through its
	// asynchronous error handler, which this socket records.
	if b, ok := s.asyncErr.Load().(errBox); ok && b.err != nil &&
		(errors.Is(b.err, nats.ErrDrainTimeout) || errors.Is(b.err, nats.ErrTimeout)) {
		return wrap(&doppler.Error{Code: doppler.ErrTimeout, Op: op, Detail: "the drain's final flush did not complete"}, b.err)
	}
	return nil
}

// close is the abrupt exit: a best-effort flush capped at CloseFlushCap
// whose outcome is not reported (§6b), then the connection is closed. It
// always returns nil, and closing a drained or closed socket does nothing.
func (s *socket) close() error {
	if s.shutdown() && s.nc.IsConnected() {
		_ = s.nc.FlushTimeout(CloseFlushCap)
	}
	s.nc.Close()
	return nil
}

// ctxError is the doppler error for a context that ended: DP_ERR_TIMEOUT for
// a deadline, DP_ERR_INTERRUPTED for a cancellation (§8b's request to stop).
// The context error is wrapped too.
func ctxError(op string, err error) error {
	code := doppler.ErrInterrupted
	if errors.Is(err, context.DeadlineExceeded) {
		code = doppler.ErrTimeout
	}
	return wrap(&doppler.Error{Code: code, Op: op}, err)
}

// wrapped is a *doppler.Error together with the error that caused it, so
// that errors.Is and errors.As find either.
type wrapped struct {
	de    *doppler.Error
	cause error
}

func (w *wrapped) Error() string   { return w.de.Error() + ": " + w.cause.Error() }
func (w *wrapped) Unwrap() []error { return []error{w.de, w.cause} }

// wrap returns de carrying cause, or de alone when cause is nil.
func wrap(de *doppler.Error, cause error) error {
	if cause == nil {
		return de
	}
	return &wrapped{de: de, cause: cause}
}

// stamper is the sending half of a socket: the sequence counter (through a
// doppler.Sender), the clock and the one-shot timestamp override of §7.
type stamper struct {
	sender     Sender
	now        func() uint64
	sampleRate float64
	order      doppler.Order
	override   uint64
	overridden bool
}

func newStamper(s *socket) stamper {
	return stamper{sender: s.parts.NewSender(s.order, s.maxPayload), now: s.parts.Now, sampleRate: s.sampleRate, order: s.order}
}

// setTimestamp makes the next frame carry ns instead of the send time.
func (st *stamper) setTimestamp(ns uint64) { st.override, st.overridden = ns, true }

// frame builds the logical frame of type t carrying payload, stamped with
// the send time (CLOCK_REALTIME nanoseconds) or the pending override, which
// it then clears. The sequence is assigned by the Sender.
func (st *stamper) frame(op string, t doppler.Type, payload []byte) (doppler.Frame, error) {
	f, err := doppler.NewFrame(t, st.order, payload)
	if err != nil {
		var de *doppler.Error
		if errors.As(err, &de) {
			de.Op = op
		}
		return doppler.Frame{}, err
	}
	f.Header.SampleRateHz = st.sampleRate
	if st.overridden {
		f.Header.TimestampNs, st.overridden = st.override, false
	} else {
		f.Header.TimestampNs = st.now()
	}
	return f, nil
}

// Now returns the CLOCK_REALTIME nanoseconds doppler stamps a frame with at
// send (§7), so that a receiver can subtract a frame's timestamp_ns from it.
func Now() uint64 { return uint64(time.Now().UnixNano()) }

// checkType refuses, with DP_ERR_INVALID, a type the role cannot send.
// Telemetry is a Publisher's alone (doppler §3): tlmAllowed is whether the
// role may send it.
func checkType(op string, t doppler.Type, tlmAllowed bool) error {
	switch {
	case !t.Valid():
		return &doppler.Error{Code: doppler.ErrInvalid, Op: op, Detail: fmt.Sprintf("unknown frame type %v", t)}
	case t == doppler.TypeTLM && !tlmAllowed:
		return &doppler.Error{Code: doppler.ErrInvalid, Op: op,
			Detail: "only a Publisher emits telemetry (doppler §3)"}
	}
	return nil
}
