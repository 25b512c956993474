// Package natsc carries conform.v1 over NATS request/reply, both ways: a
// Client reaches a SUT reachable only through a broker, and Serve answers
// for a Handler, such as the reference. The subject is <base>.conform, from a
// nats://host:port/base value; each message is one bare conform.v1 payload,
// without a length prefix.
//
// A request/reply subject has no connection to open, so every empty request
// is an opening one: the SUT answers it with its Hello. The broker must
// accept messages of at least 64 MiB (conform's embedded one does), since a
// batch of inputs can run to several megabytes.
package natsc

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/sut"
	"github.com/nats-io/nats.go"
)

// Scheme is the prefix of a --sut value that names this carrier.
const Scheme = "nats://"

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
}

// Dial connects to the broker and asks the SUT for its Hello. A broker that
// cannot be reached, or a SUT that does not answer, is a *sut.Error of kind
// KindStart.
func Dial(ctx context.Context, ep Endpoint, helloTimeout time.Duration) (*Client, error) {
	if helloTimeout <= 0 {
		helloTimeout = 10 * time.Second
	}
	nc, err := nats.Connect(ep.Server, nats.Name("conform"), nats.Timeout(helloTimeout))
	if err != nil {
		return nil, &sut.Error{Kind: sut.KindStart, Detail: "cannot reach the broker at " + ep.Server, Err: err}
	}
	c := &Client{ep: ep, nc: nc}
	hctx, cancel := context.WithTimeout(ctx, helloTimeout)
	defer cancel()
	msg, err := nc.RequestWithContext(hctx, ep.Subject(), nil)
	if err != nil {
		nc.Close()
		return nil, &sut.Error{Kind: sut.KindStart, Detail: "the SUT never said Hello on " + ep.Subject(), Err: err}
	}
	c.enc = sut.Sniff(msg.Data)
	c.hello = new(conformpb.Hello)
	if err := c.enc.Unmarshal(msg.Data, c.hello); err != nil {
		nc.Close()
		return nil, &sut.Error{Kind: sut.KindStart, Detail: "the SUT's first answer is not a Hello", Err: err}
	}
	return c, nil
}

func (c *Client) Hello() *conformpb.Hello { return c.hello }

func (c *Client) Carrier() string { return c.ep.String() }

// Do sends one request and waits for its reply. There is no stream to
// misalign, so an error leaves the client usable for the next op.
func (c *Client) Do(ctx context.Context, req *conformpb.Request) (*conformpb.Response, error) {
	c.next++
	req.Id = c.next
	b, err := c.enc.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("encoding request: %w", err)
	}
	if int64(len(b)) > c.nc.MaxPayload() {
		return nil, &sut.Error{Kind: sut.KindProtocol, Detail: fmt.Sprintf("a %d-byte request exceeds the broker's %d-byte max_payload", len(b), c.nc.MaxPayload())}
	}
	msg, err := c.nc.RequestWithContext(ctx, c.ep.Subject(), b)
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, nats.ErrTimeout):
		return nil, &sut.Error{Kind: sut.KindTimeout, Detail: "the SUT did not answer in time", Err: err}
	case errors.Is(err, nats.ErrNoResponders):
		return nil, &sut.Error{Kind: sut.KindCrash, Detail: "nothing answers on " + c.ep.Subject(), Err: err}
	case err != nil:
		return nil, &sut.Error{Kind: sut.KindCrash, Detail: "the request failed", Err: err}
	}
	resp := new(conformpb.Response)
	if err := c.enc.Unmarshal(msg.Data, resp); err != nil {
		return nil, &sut.Error{Kind: sut.KindProtocol, Detail: fmt.Sprintf("answer to request %d is not a Response", req.Id), Err: err}
	}
	if resp.Id != req.Id {
		return nil, &sut.Error{Kind: sut.KindProtocol, Detail: fmt.Sprintf("answer carries id %d, the request was %d", resp.Id, req.Id)}
	}
	if resp.Result == nil {
		return nil, &sut.Error{Kind: sut.KindProtocol, Detail: fmt.Sprintf("answer to request %d carries no result", req.Id)}
	}
	return resp, nil
}

// Close closes the connection to the broker.
func (c *Client) Close() error {
	c.nc.Close()
	return nil
}

// Server answers conform.v1 requests on a subject for a Handler.
type Server struct {
	ctx context.Context
	nc  *nats.Conn
	sub *nats.Subscription
	err chan error
}

// Listen subscribes to ep's subject and answers each request for h, in enc,
// until ctx ends: an empty request with h's Hello, any other with h's
// response. When Listen returns, the subscription is registered with the
// broker, so a client may ask for the Hello at once.
func Listen(ctx context.Context, ep Endpoint, h sut.Handler, enc sut.Encoding) (*Server, error) {
	nc, err := nats.Connect(ep.Server, nats.Name("conform reference"))
	if err != nil {
		return nil, fmt.Errorf("connecting to %s: %w", ep.Server, err)
	}
	s := &Server{ctx: ctx, nc: nc, err: make(chan error, 1)}
	// The callbacks of one subscription run one at a time, in order.
	s.sub, err = nc.Subscribe(ep.Subject(), func(msg *nats.Msg) {
		answer, err := sut.Answer(ctx, h, enc, msg.Data, len(msg.Data) == 0)
		if err == nil {
			err = msg.Respond(answer)
		}
		if err != nil {
			select {
			case s.err <- fmt.Errorf("answering on %s: %w", ep.Subject(), err):
			default:
			}
		}
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

// Wait serves until the server's context ends or an answer cannot be sent,
// then drains the subscription and closes the connection.
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
