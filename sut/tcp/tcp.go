// Package tcp carries conform.v1 over TCP, both ways: a Client dials a SUT
// that serves conform.v1 on a TCP port (a device on a rig), and Listen serves
// a Handler, such as the reference, on one.
//
// On the connection every message is framed exactly as on the exec carrier
// (a 4-byte big-endian length, 16 MiB ceiling), and the session opens with
// the empty request that the SUT answers with its Hello.
package tcp

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/reports"
	"github.com/conform-suite/conform/sut"
)

// Scheme is the prefix of a --sut value that names this carrier.
const Scheme = "tcp://"

// Default timeouts, used where Options leaves them zero.
const (
	DefaultConnectTimeout = 5 * time.Second
	DefaultHelloTimeout   = 10 * time.Second
)

// Options configure a Client.
type Options struct {
	// ConnectTimeout bounds each attempt to establish the TCP connection.
	ConnectTimeout time.Duration
	// HelloTimeout bounds the wait for the SUT's Hello once connected.
	HelloTimeout time.Duration
}

// ParseAddr returns the host:port of a tcp://host:port value. The scheme is
// optional; a path, a missing host, or a port that is missing or not a
// number from 0 to 65535 is an error (port 0, "any free port", suits a
// listener only).
func ParseAddr(spec string) (string, error) {
	addr := strings.TrimPrefix(spec, Scheme)
	if strings.ContainsAny(addr, "/?#") {
		return "", fmt.Errorf("%q is not tcp://host:port", spec)
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("%q is not tcp://host:port: %w", spec, err)
	}
	if host == "" || port == "" {
		return "", fmt.Errorf("%q is not tcp://host:port: a host and a port are both required", spec)
	}
	if n, err := strconv.ParseUint(port, 10, 16); err != nil || n > 65535 {
		return "", fmt.Errorf("%q is not tcp://host:port: the port %q is not a number from 0 to 65535", spec, port)
	}
	return addr, nil
}

// Client is a sut.Client for a SUT serving conform.v1 on TCP.
//
// After the connection is lost (the SUT closed it, an op timed out, or the
// SUT broke conform.v1 so that the stream can no longer be trusted to be
// aligned), the next Do reconnects once, within that op's context. If that
// reconnection fails, that Do and every later one report an *sut.Error of
// kind KindStart naming the failed reconnection — the SUT could not be
// reached again, which the runner counts toward presuming it lost — so a rig
// whose device has gone is recorded promptly rather than waited for case
// after case.
type Client struct {
	addr string
	opts Options

	conn  net.Conn
	sess  *sut.Session
	hello *conformpb.Hello
	// gone is set when a reconnection failed; the client is then spent.
	gone error
}

// Dial connects to the SUT at addr (host:port, or tcp://host:port) and waits
// for its Hello. A SUT that cannot be reached or never says Hello yields an
// *sut.Error of kind KindStart.
func Dial(ctx context.Context, addr string, opts Options) (*Client, error) {
	a, err := ParseAddr(addr)
	if err != nil {
		return nil, &sut.Error{Kind: reports.KindStart, Detail: "bad address", Err: err}
	}
	if opts.ConnectTimeout <= 0 {
		opts.ConnectTimeout = DefaultConnectTimeout
	}
	if opts.HelloTimeout <= 0 {
		opts.HelloTimeout = DefaultHelloTimeout
	}
	c := &Client{addr: a, opts: opts}
	if err := c.connect(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

// Hello returns the Hello the SUT sent on the current (or last) connection.
func (c *Client) Hello() *conformpb.Hello { return c.hello }

// Carrier describes the client for the record: tcp://host:port.
func (c *Client) Carrier() string { return Scheme + c.addr }

// Do runs one op, reconnecting first if the last op lost the connection.
func (c *Client) Do(ctx context.Context, req *conformpb.Request) (*conformpb.Response, error) {
	if c.gone != nil {
		return nil, c.gone
	}
	if c.sess == nil {
		if err := c.connect(ctx); err != nil {
			c.gone = &sut.Error{
				Kind:   reports.KindStart,
				Detail: fmt.Sprintf("the connection to %s was lost and reconnecting once failed", c.Carrier()),
				Err:    err,
			}
			return nil, c.gone
		}
	}
	resp, err := c.sess.Do(ctx, req)
	if err != nil {
		var se *sut.Error
		if !errors.As(err, &se) {
			se = &sut.Error{Kind: reports.KindProtocol, Detail: "conform.v1 failed", Err: err}
		}
		c.drop()
		return nil, se
	}
	return resp, nil
}

// Close closes the connection. The client cannot be used afterwards.
func (c *Client) Close() error {
	c.drop()
	if c.gone == nil {
		c.gone = &sut.Error{Kind: reports.KindCrash, Detail: "the client was closed"}
	}
	return nil
}

// connect dials the SUT and opens a session on the connection.
func (c *Client) connect(ctx context.Context) error {
	d := net.Dialer{Timeout: c.opts.ConnectTimeout}
	conn, err := d.DialContext(ctx, "tcp", c.addr)
	if err != nil {
		return &sut.Error{Kind: reports.KindStart, Detail: fmt.Sprintf("cannot connect to %s", c.Carrier()), Err: err}
	}
	hctx, cancel := context.WithTimeout(ctx, c.opts.HelloTimeout)
	defer cancel()
	sess, err := sut.Open(hctx, conn, conn)
	if err != nil {
		conn.Close()
		detail := fmt.Sprintf("the SUT at %s never said Hello", c.Carrier())
		if d, ok := hctx.Deadline(); ok && !time.Now().Before(d) {
			detail = fmt.Sprintf("the SUT at %s did not say Hello in time", c.Carrier())
		}
		return &sut.Error{Kind: reports.KindStart, Detail: detail, Err: err}
	}
	c.conn, c.sess, c.hello = conn, sess, sess.Hello()
	return nil
}

// drop closes the current connection, which ends the session's goroutines.
func (c *Client) drop() {
	if c.sess != nil {
		c.sess.Close()
		c.sess = nil
	}
	if c.conn != nil {
		c.conn.Close()
		c.conn = nil
	}
}
