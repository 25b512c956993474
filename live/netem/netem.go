// Package netem puts a slower network between two TCP peers: a proxy that
// forwards every connection it accepts to one upstream address, holding each
// byte for a fixed delay and writing no faster than a set rate, in each
// direction on its own.
//
// Loopback wins every race: a client that answers "done" before the server
// has what it sent is never caught when the server is a microsecond away.
// Between such a client and its server, a proxy with a delay of a few
// hundred milliseconds makes the race one the careless client loses — the
// way a rig's real network, or a broker across a WAN, does. conform's live
// doppler cases hand a SUT the proxy's address instead of the broker's.
//
// A typical use:
//
//	p, err := netem.Start(ctx, netem.Options{Upstream: "127.0.0.1:4222", Up: netem.Link{Delay: 300 * time.Millisecond}})
//	if err != nil { … }
//	defer p.Close()
//	// dial p.Addr() instead of 127.0.0.1:4222
//
// Shape changes the links of a running proxy, so that a case sets up its
// connections at full speed and slows them down only for what it judges;
// Sever closes every connection at once while the proxy keeps accepting,
// which a client sees as its server restarting at the same address; a
// Filter per direction may rewrite the bytes on the way (a server's
// greeting, say).
//
// Bytes keep their order in each direction. The proxy buffers at most
// Buffer bytes per direction of a connection; beyond that it stops reading,
// so a fast writer meets TCP's own backpressure rather than the proxy's
// memory. Every goroutine it starts ends when the proxy is closed, when its
// context ends, or when the connection it serves ends.
package netem

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Defaults applied to the zero fields of Options.
const (
	// DefaultListen is where the proxy listens: a port the kernel picks on
	// IPv4 loopback.
	DefaultListen = "127.0.0.1:0"
	// DefaultDialTimeout bounds the dial of the upstream for each
	// connection the proxy accepts.
	DefaultDialTimeout = 5 * time.Second
	// DefaultBuffer is how many bytes one direction of one connection may
	// hold while they wait out the delay or the rate.
	DefaultBuffer = 1 << 20
)

// segment is the most the proxy reads at once, and so the granularity of
// the delay: every byte of a segment is released at the same moment.
const segment = 32 << 10

// Link shapes one direction of every connection.
type Link struct {
	// Delay is the one-way latency: a byte the proxy reads at t is written
	// on no earlier than t + Delay. A delay does not limit throughput.
	Delay time.Duration
	// Rate is the most bytes per second the proxy writes on, paced in
	// slices of a twentieth of a second; 0 means no limit.
	Rate int
}

// Filter copies one direction of a connection from src to dst, and may
// change the bytes on the way (rewrite a greeting, say). It returns when src
// ends or fails, or when dst fails; the proxy shapes what it writes to dst.
// A nil Filter is io.Copy.
type Filter func(dst io.Writer, src io.Reader) error

// Options configure a proxy.
type Options struct {
	// Upstream is the host:port every accepted connection is forwarded
	// to. Required.
	Upstream string
	// Listen is the address to listen on; empty means DefaultListen.
	Listen string
	// Up shapes the bytes from the accepting side's client to the
	// upstream; Down the bytes from the upstream back to the client.
	Up, Down Link
	// UpFilter and DownFilter, when set, copy their direction instead of
	// io.Copy.
	UpFilter, DownFilter Filter
	// DialTimeout bounds the dial of the upstream; zero means
	// DefaultDialTimeout.
	DialTimeout time.Duration
	// Buffer is how many bytes one direction of one connection may hold;
	// zero means DefaultBuffer.
	Buffer int
}

// Proxy is a running proxy. Its methods are safe for concurrent use.
type Proxy struct {
	opts  Options
	ln    net.Listener
	stop  func() bool             // releases the context watch
	links atomic.Pointer[[2]Link] // the current shape: up, down

	mu       sync.Mutex
	closed   bool
	accepted int
	conns    map[*pair]struct{}
	changed  chan struct{} // closed, and replaced, when accepted grows

	wg sync.WaitGroup
}

// Start listens and returns the running proxy. The proxy serves until Close
// is called or ctx ends, whichever is first. It fails when Upstream is
// empty or the listen address cannot be bound.
func Start(ctx context.Context, o Options) (*Proxy, error) {
	if o.Upstream == "" {
		return nil, errors.New("netem: no upstream address")
	}
	if o.Up.Delay < 0 || o.Down.Delay < 0 || o.Up.Rate < 0 || o.Down.Rate < 0 {
		return nil, errors.New("netem: a delay or a rate is negative")
	}
	if o.Listen == "" {
		o.Listen = DefaultListen
	}
	if o.DialTimeout <= 0 {
		o.DialTimeout = DefaultDialTimeout
	}
	if o.Buffer <= 0 {
		o.Buffer = DefaultBuffer
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", o.Listen)
	if err != nil {
		return nil, fmt.Errorf("netem: listen on %s: %w", o.Listen, err)
	}
	p := &Proxy{opts: o, ln: ln, conns: map[*pair]struct{}{}, changed: make(chan struct{})}
	p.links.Store(&[2]Link{o.Up, o.Down})
	p.stop = context.AfterFunc(ctx, func() { _ = p.Close() })
	p.wg.Add(1)
	go p.serve()
	return p, nil
}

// Shape changes the links of every connection, open ones included, from
// now on: a byte still held is released by the delay in force when its turn
// comes. A case shapes a proxy after the setup it does not mean to slow down.
// A negative delay or rate counts as zero.
func (p *Proxy) Shape(up, down Link) {
	clean := func(l Link) Link { return Link{Delay: max(l.Delay, 0), Rate: max(l.Rate, 0)} }
	p.links.Store(&[2]Link{clean(up), clean(down)})
}

// Addr returns the host:port the proxy listens on.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Accepted returns how many connections the proxy has accepted since it
// started, severed and ended ones included.
func (p *Proxy) Accepted() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.accepted
}

// AwaitAccepted waits until the proxy has accepted at least n connections
// since it started, and fails when ctx ends first or the proxy is closed.
func (p *Proxy) AwaitAccepted(ctx context.Context, n int) error {
	for {
		p.mu.Lock()
		got, closed, changed := p.accepted, p.closed, p.changed
		p.mu.Unlock()
		switch {
		case got >= n:
			return nil
		case closed:
			return fmt.Errorf("netem: closed after %d of %d connections", got, n)
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return fmt.Errorf("netem: %d of %d connections accepted: %w", got, n, ctx.Err())
		}
	}
}

// Sever closes every open connection at once, on both sides, dropping what
// the proxy still holds for them, and returns how many it closed. The
// proxy goes on accepting: to a client this looks like its server going
// away and coming back at the same address.
func (p *Proxy) Sever() int {
	p.mu.Lock()
	open := make([]*pair, 0, len(p.conns))
	for c := range p.conns {
		open = append(open, c)
	}
	p.mu.Unlock()
	for _, c := range open {
		c.close()
	}
	return len(open)
}

// Close stops listening, closes every connection, and returns once every
// goroutine of the proxy has ended. Closing again does nothing.
func (p *Proxy) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		p.wg.Wait()
		return nil
	}
	p.closed = true
	close(p.changed)
	p.mu.Unlock()
	p.stop()
	err := p.ln.Close()
	p.Sever()
	p.wg.Wait()
	return err
}

// serve accepts connections until the listener is closed.
func (p *Proxy) serve() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return // closed
		}
		pr := &pair{client: c, done: make(chan struct{})}
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			_ = c.Close()
			return
		}
		p.accepted++
		close(p.changed)
		p.changed = make(chan struct{})
		p.conns[pr] = struct{}{}
		p.wg.Add(1)
		p.mu.Unlock()
		go p.forward(pr)
	}
}

// pair is one accepted connection and its upstream.
type pair struct {
	client   net.Conn
	upstream net.Conn // set once dialled

	mu   sync.Mutex
	once sync.Once
	done chan struct{} // closed when the pair is closed
}

// close closes both sides; safe to call more than once.
func (c *pair) close() {
	c.once.Do(func() {
		close(c.done)
		_ = c.client.Close()
		c.mu.Lock()
		up := c.upstream
		c.mu.Unlock()
		if up != nil {
			_ = up.Close()
		}
	})
}

// forward dials the upstream for one accepted connection and copies both
// directions until both end or the pair is closed.
func (p *Proxy) forward(c *pair) {
	defer p.wg.Done()
	defer func() {
		c.close()
		p.mu.Lock()
		delete(p.conns, c)
		p.mu.Unlock()
	}()
	d := net.Dialer{Timeout: p.opts.DialTimeout}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { // a Sever or Close while dialling ends the dial
		select {
		case <-c.done:
			cancel()
		case <-ctx.Done():
		}
	}()
	up, err := d.DialContext(ctx, "tcp", p.opts.Upstream)
	cancel()
	if err != nil {
		return
	}
	c.mu.Lock()
	c.upstream = up
	c.mu.Unlock()
	select {
	case <-c.done: // severed while dialling
		_ = up.Close()
		return
	default:
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		p.direction(c, up, c.client, func() Link { return p.links.Load()[0] }, p.opts.UpFilter)
	}()
	go func() {
		defer wg.Done()
		p.direction(c, c.client, up, func() Link { return p.links.Load()[1] }, p.opts.DownFilter)
	}()
	wg.Wait()
}

// direction copies src to dst through a shaper: the filter (or io.Copy)
// writes into the shaper, and the shaper's writer releases each segment
// after the link's delay, at the link's rate. When src ends, what is held
// is still delivered, then dst's write side is closed; when either side
// fails, or the pair is closed, the pair is closed.
func (p *Proxy) direction(c *pair, dst, src net.Conn, l func() Link, f Filter) {
	sh := newShaper(l, p.opts.Buffer, c.done)
	wrote := make(chan error, 1)
	go func() { wrote <- sh.drain(dst) }()
	if f == nil {
		f = func(dst io.Writer, src io.Reader) error { _, err := io.Copy(dst, src); return err }
	}
	ferr := f(sh, src)
	sh.end()
	werr := <-wrote
	switch {
	case werr != nil, ferr != nil && !errors.Is(ferr, io.EOF):
		c.close()
	default:
		if tc, ok := dst.(interface{ CloseWrite() error }); ok {
			_ = tc.CloseWrite()
		} else {
			c.close()
		}
	}
}

// held is bytes read at a moment, waiting to be written on.
type held struct {
	b  []byte
	at time.Time
}

// shaper holds what one direction read until its link lets it go.
type shaper struct {
	link  func() Link // the link in force
	queue chan held
	done  <-chan struct{}

	mu    sync.Mutex
	ended bool
}

func newShaper(l func() Link, buffer int, done <-chan struct{}) *shaper {
	slots := max(buffer/segment, 1)
	return &shaper{link: l, queue: make(chan held, slots), done: done}
}

// Write queues a copy of b, in segments, stamped now. It blocks while the
// direction holds its whole buffer, and fails once the pair is closed.
func (s *shaper) Write(b []byte) (int, error) {
	n := 0
	for len(b) > 0 {
		k := min(len(b), segment)
		seg := held{b: append([]byte(nil), b[:k]...), at: time.Now()}
		select {
		case s.queue <- seg:
		case <-s.done:
			return n, net.ErrClosed
		}
		n += k
		b = b[k:]
	}
	return n, nil
}

// end says nothing more will be written.
func (s *shaper) end() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.ended {
		s.ended = true
		close(s.queue)
	}
}

// drain writes every queued segment to dst once its delay has passed, at
// the link's rate, until the queue ends or the pair is closed.
func (s *shaper) drain(dst io.Writer) error {
	var next time.Time // when the rate lets the next byte go
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	wait := func(until time.Time) error {
		d := time.Until(until)
		if d <= 0 {
			return nil
		}
		timer.Reset(d)
		select {
		case <-timer.C:
			return nil
		case <-s.done:
			return net.ErrClosed
		}
	}
	for {
		var seg held
		var ok bool
		select {
		case seg, ok = <-s.queue:
		case <-s.done:
			return net.ErrClosed
		}
		if !ok {
			return nil
		}
		link := s.link()
		if err := wait(seg.at.Add(link.Delay)); err != nil {
			return err
		}
		b := seg.b
		for len(b) > 0 {
			k := len(b)
			if rate := s.link().Rate; rate > 0 {
				k = min(k, max(rate/20, 1))
				if err := wait(next); err != nil {
					return err
				}
				start := time.Now()
				if start.Before(next) {
					start = next
				}
				next = start.Add(time.Duration(float64(k) / float64(rate) * float64(time.Second)))
			}
			if _, err := dst.Write(b[:k]); err != nil {
				return err
			}
			b = b[k:]
		}
	}
}
