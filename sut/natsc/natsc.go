// Package natsc carries conform.v1 over NATS request/reply, both ways: a
// Client reaches a SUT reachable only through a broker, and Serve answers
// for a Handler, such as the reference. The subject is <base>.conform, from a
// nats://host:port/base value; each message is one bare conform.v1 payload,
// without a length prefix.
//
// A request/reply subject has no connection to open, so every empty request
// is an opening one: the SUT answers it with its Hello.
//
// A broker bounds every message by its max_payload (nats-server's default is
// 1 MiB; conform's embedded broker allows 64 MiB). The Client reports the
// bound through MaxMessage, and the cases size their batches to fit it; an
// input that cannot fit even alone is skipped with the reason, never blamed
// on the SUT.
//
// Both ends outlive a broker outage: they reconnect for as long as it lasts,
// and the Server's subscription is renewed on each reconnection. While the
// broker is away the Client's requests fail at once, as a lost connection,
// rather than waiting out the op timeout.
package natsc

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"

	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/reports"
	"github.com/conform-suite/conform/sut"
	"github.com/nats-io/nats.go"
)

// Scheme is the prefix of a --sut value that names this carrier.
const Scheme = "nats://"

// DefaultReconnectWait is the pause between two attempts to reach a broker
// that went away, when no other is set.
const DefaultReconnectWait = time.Second

// Endpoint is a broker and the base of the SUT's subject.
type Endpoint struct {
	// Server is the broker's URL, nats://host:port.
	Server string
	// Base is the subject prefix; the SUT answers on Base + ".conform".
	Base string
}

// Subject returns the request subject.
func (e Endpoint) Subject() string { return e.Base + ".conform" }

// String returns the endpoint as a --sut value.
func (e Endpoint) String() string { return e.Server + "/" + e.Base }

// ParseEndpoint parses nats://host:port/base. The base is one or more
// subject tokens separated by dots; it may not hold wildcards or spaces.
func ParseEndpoint(s string) (Endpoint, error) {
	u, err := url.Parse(s)
	if err != nil {
		return Endpoint{}, fmt.Errorf("nats endpoint %q: %w", s, err)
	}
	if u.Scheme != "nats" || u.Host == "" {
		return Endpoint{}, fmt.Errorf("nats endpoint %q: want nats://host:port/base", s)
	}
	base := strings.TrimPrefix(u.Path, "/")
	if base == "" || strings.ContainsAny(base, "*> \t/") || strings.HasPrefix(base, ".") || strings.HasSuffix(base, ".") || strings.Contains(base, "..") {
		return Endpoint{}, fmt.Errorf("nats endpoint %q: the base %q is not a plain subject", s, base)
	}
	return Endpoint{Server: "nats://" + u.Host, Base: base}, nil
}

// Client is a sut.Client over NATS request/reply.
type Client struct {
	ep    Endpoint
	nc    *nats.Conn
	enc   sut.Encoding
	hello *conformpb.Hello
	next  uint64

	mu sync.Mutex
	// abort ends the request in flight, if any, when the connection to the
	// broker is lost: its answer can no longer arrive.
	abort context.CancelCauseFunc
}

// errBrokerLost is the cause of a request abandoned because the connection
// to the broker was lost while it waited.
var errBrokerLost = errors.New("the connection to the broker was lost")

// Dial connects to the broker and asks the SUT for its Hello. A broker that
// cannot be reached, or a SUT that does not answer, is a *sut.Error of kind
// KindStart. Once connected, the client reconnects to a broker that goes
// away for as long as it is used.
func Dial(ctx context.Context, ep Endpoint, helloTimeout time.Duration) (*Client, error) {
	if helloTimeout <= 0 {
		helloTimeout = 10 * time.Second
	}
	c := &Client{ep: ep}
	nc, err := nats.Connect(ep.Server, nats.Name("conform"), nats.Timeout(helloTimeout),
		nats.MaxReconnects(-1), nats.ReconnectWait(DefaultReconnectWait),
		// A request made while the broker is away fails at once instead
		// of waiting in a buffer for a SUT that can no longer answer it.
		nats.ReconnectBufSize(-1),
		nats.DisconnectErrHandler(func(*nats.Conn, error) { c.lost() }))
	if err != nil {
		return nil, &sut.Error{Kind: reports.KindStart, Detail: "cannot reach the broker at " + ep.Server, Err: err}
	}
	c.nc = nc
	hctx, cancel := context.WithTimeout(ctx, helloTimeout)
	defer cancel()
	msg, err := nc.RequestWithContext(hctx, ep.Subject(), nil)
	if err != nil {
		nc.Close()
		detail := "the SUT never said Hello on " + ep.Subject()
		if errors.Is(err, nats.ErrNoResponders) {
			detail += ": nobody answers on " + ep.Subject()
		}
		return nil, &sut.Error{Kind: reports.KindStart, Detail: detail, Err: err}
	}
	c.enc = sut.Sniff(msg.Data)
	c.hello = new(conformpb.Hello)
	if err := c.enc.Unmarshal(msg.Data, c.hello); err != nil {
		nc.Close()
		return nil, &sut.Error{Kind: reports.KindStart, Detail: "the SUT's first answer is not a Hello", Err: err}
	}
	return c, nil
}

// lost abandons the request in flight; nats.go calls it when the
// connection to the broker breaks.
func (c *Client) lost() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.abort != nil {
		c.abort(errBrokerLost)
	}
}

func (c *Client) Hello() *conformpb.Hello { return c.hello }

func (c *Client) Carrier() string { return c.ep.String() }

// MaxMessage returns the broker's max_payload: the largest request, and the
// largest answer, that the broker carries. The runner hands it to the cases
// (cases.T.LimitMessages) so that their batches fit.
func (c *Client) MaxMessage() int { return int(c.nc.MaxPayload()) }

// Do sends one request and waits for its reply. There is no stream to
// misalign, so an error leaves the client usable for the next op.
//
// A request larger than the broker's max_payload is never sent: that is a
// *sut.Error of kind KindHarness, since conform built it. A broker that is
// away, or goes away while Do waits, is one of kind KindCrash, returned as
// soon as the connection is known lost; no subscriber on the subject is
// one of kind KindCrash too.
func (c *Client) Do(ctx context.Context, req *conformpb.Request) (*conformpb.Response, error) {
	c.next++
	req.Id = c.next
	b, err := c.enc.Marshal(req)
	if err != nil {
		return nil, &sut.Error{Kind: reports.KindHarness, Detail: "encoding the request", Err: err}
	}
	if limit := c.nc.MaxPayload(); int64(len(b)) > limit {
		return nil, &sut.Error{Kind: reports.KindHarness, Detail: fmt.Sprintf(
			"conform built a request of %d bytes, above the broker's max_payload of %d bytes; "+
				"raise max_payload in the broker's configuration", len(b), limit)}
	}
	if !c.nc.IsConnected() {
		return nil, &sut.Error{Kind: reports.KindCrash, Detail: fmt.Sprintf(
			"the broker at %s is unreachable (%s); conform keeps reconnecting", c.ep.Server, strings.ToLower(c.nc.Status().String()))}
	}
	rctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	c.mu.Lock()
	c.abort = cancel
	c.mu.Unlock()
	msg, err := c.nc.RequestWithContext(rctx, c.ep.Subject(), b)
	c.mu.Lock()
	c.abort = nil
	c.mu.Unlock()
	if err != nil {
		return nil, c.requestError(rctx, err)
	}
	resp := new(conformpb.Response)
	if err := c.enc.Unmarshal(msg.Data, resp); err != nil {
		return nil, &sut.Error{Kind: reports.KindProtocol, Detail: fmt.Sprintf("the %d-byte answer to request %d is not a Response", len(msg.Data), req.Id), Err: err}
	}
	if resp.Id != req.Id {
		return nil, &sut.Error{Kind: reports.KindProtocol, Detail: fmt.Sprintf("answer carries id %d, the request was %d", resp.Id, req.Id)}
	}
	if resp.Result == nil {
		return nil, &sut.Error{Kind: reports.KindProtocol, Detail: fmt.Sprintf("answer to request %d carries no result", req.Id)}
	}
	return resp, nil
}

// requestError classifies why a request got no answer.
func (c *Client) requestError(rctx context.Context, err error) error {
	switch {
	case errors.Is(context.Cause(rctx), errBrokerLost),
		errors.Is(err, nats.ErrDisconnected), errors.Is(err, nats.ErrReconnectBufExceeded):
		return &sut.Error{Kind: reports.KindCrash, Detail: fmt.Sprintf(
			"the connection to the broker at %s was lost while the request waited; conform keeps reconnecting", c.ep.Server), Err: err}
	case errors.Is(err, nats.ErrConnectionClosed):
		return &sut.Error{Kind: reports.KindCrash, Detail: "the connection to the broker at " + c.ep.Server + " is closed", Err: err}
	case errors.Is(err, nats.ErrNoResponders):
		return &sut.Error{Kind: reports.KindCrash, Detail: "nobody answers on " + c.ep.Subject(), Err: err}
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, nats.ErrTimeout):
		return &sut.Error{Kind: reports.KindTimeout, Detail: "no answer on " + c.ep.Subject() + " within the op timeout", Err: err}
	case errors.Is(err, nats.ErrMaxPayload):
		return &sut.Error{Kind: reports.KindHarness, Detail: "the request exceeds the broker's max_payload", Err: err}
	}
	return &sut.Error{Kind: reports.KindCrash, Detail: "the request on " + c.ep.Subject() + " failed", Err: err}
}

// Close closes the connection to the broker.
func (c *Client) Close() error {
	c.nc.Close()
	return nil
}

// ListenOptions configure a Server. The zero value is what conform
// reference --nats uses, without its log.
type ListenOptions struct {
	// Logf, when set, receives a line when the connection to the broker is
	// lost, when it is back, after 1, 10, 100, … failed attempts to
	// reconnect, and when an answer cannot be sent. Its calls never
	// overlap.
	Logf func(format string, args ...any)
	// ReconnectWait is the pause between two attempts to reach a broker
	// that went away; zero means DefaultReconnectWait.
	ReconnectWait time.Duration
}

// Server answers conform.v1 requests on a subject for a Handler.
type Server struct {
	ctx  context.Context
	ep   Endpoint
	nc   *nats.Conn
	sub  *nats.Subscription
	enc  sut.Encoding
	err  chan error
	mu   sync.Mutex // serialises logf: nats.go calls back from two goroutines
	logf func(format string, args ...any)
}

// Listen subscribes to ep's subject and answers each request for h, in enc,
// until ctx ends: an empty request with h's Hello, any other with h's
// response. When Listen returns, the subscription is registered with the
// broker, so a client may ask for the Hello at once.
//
// The broker must be reachable when Listen is called. If it goes away
// later, the server reconnects for as long as ctx lasts, however long the
// outage, and its subscription is renewed on reconnection. An answer
// larger than the broker's max_payload is replaced by a conform.v1 Error
// saying so, and an answer that cannot be sent is logged; neither stops
// the server.
func Listen(ctx context.Context, ep Endpoint, h sut.Handler, enc sut.Encoding, o ListenOptions) (*Server, error) {
	wait := o.ReconnectWait
	if wait <= 0 {
		wait = DefaultReconnectWait
	}
	s := &Server{ctx: ctx, ep: ep, enc: enc, err: make(chan error, 1), logf: o.Logf}
	nc, err := nats.Connect(ep.Server, nats.Name("conform reference"),
		nats.MaxReconnects(-1),
		nats.CustomReconnectDelay(func(attempts int) time.Duration {
			if isPowerOf10(attempts) {
				s.log("still cannot reach the broker at %s after %d attempt(s); retrying every %v", ep.Server, attempts, wait)
			}
			return wait
		}),
		// An answer made while the broker is away is stale by the time it
		// is back: its asker has given up.
		nats.ReconnectBufSize(-1),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			s.log("lost the broker at %s: %v; reconnecting", ep.Server, err)
		}),
		nats.ReconnectHandler(func(nc *nats.Conn) {
			s.log("reconnected to %s; answering on %s again", nc.ConnectedUrlRedacted(), ep.Subject())
		}),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
			s.log("on %s: %v", ep.Subject(), err)
		}),
		nats.ClosedHandler(func(*nats.Conn) {
			if ctx.Err() == nil {
				s.fail(fmt.Errorf("the connection to the broker at %s was closed", ep.Server))
			}
		}))
	if err != nil {
		return nil, fmt.Errorf("connecting to %s: %w", ep.Server, err)
	}
	s.nc = nc
	// The callbacks of one subscription run one at a time, in order.
	s.sub, err = nc.Subscribe(ep.Subject(), func(msg *nats.Msg) {
		s.answer(h, msg)
	})
	if err == nil {
		err = nc.Flush()
	}
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("subscribing to %s: %w", ep.Subject(), err)
	}
	return s, nil
}

// answer answers one request.
func (s *Server) answer(h sut.Handler, msg *nats.Msg) {
	answer, err := sut.Answer(s.ctx, h, s.enc, msg.Data, len(msg.Data) == 0)
	if err != nil {
		s.log("answering on %s: %v", s.ep.Subject(), err)
		return
	}
	if limit := s.nc.MaxPayload(); int64(len(answer)) > limit {
		answer, err = s.tooLarge(msg.Data, len(answer), limit)
		if err != nil {
			s.log("answering on %s: %v", s.ep.Subject(), err)
			return
		}
	}
	if err := msg.Respond(answer); err != nil {
		s.log("answering on %s: %v", s.ep.Subject(), err)
	}
}

// tooLarge returns the Error that replaces an answer of n bytes the broker
// cannot carry.
func (s *Server) tooLarge(request []byte, n int, limit int64) ([]byte, error) {
	req := new(conformpb.Request)
	_ = s.enc.Unmarshal(request, req) // it decoded once already, for the answer
	return s.enc.Marshal(&conformpb.Response{Id: req.Id, Result: &conformpb.Response_Error{Error: &conformpb.Error{
		Message: fmt.Sprintf("the answer of %d bytes exceeds the broker's max_payload of %d bytes", n, limit)}}})
}

func (s *Server) log(format string, args ...any) {
	if s.logf == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.logf(format, args...)
}

func (s *Server) fail(err error) {
	select {
	case s.err <- err:
	default:
	}
}

// Wait serves until the server's context ends, then drains the subscription
// and closes the connection. It returns an error only when the connection
// was closed from outside (the broker refused it for good), never for a
// broker outage.
func (s *Server) Wait() error {
	var err error
	select {
	case <-s.ctx.Done():
	case err = <-s.err:
	}
	s.sub.Drain()
	s.nc.Close()
	return err
}

// isPowerOf10 reports whether n is 1, 10, 100, ….
func isPowerOf10(n int) bool {
	for n >= 10 && n%10 == 0 {
		n /= 10
	}
	return n == 1
}
