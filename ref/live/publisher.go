package live

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"sync"
	"time"

	messagepb "github.com/conform-suite/conform/proto/ranvier/message/v1"
	"github.com/conform-suite/conform/ref/streams"
	"github.com/conform-suite/conform/ref/wire"
	"google.golang.org/protobuf/proto"
)

// DefaultPatience is how long a data-plane end waits for a peer that makes no
// progress: the 30-second socket timeout of ranvier-wire §6.5.
const DefaultPatience = 30 * time.Second

// DefaultAddr is where a publisher listens on one machine: loopback, on an
// ephemeral port (ranvier-wire §3.3).
const DefaultAddr = "127.0.0.1:0"

// ErrClosed is returned by operations on a closed Publisher or Subscriber.
var ErrClosed = errors.New("live: closed")

// PublisherConfig configures a Publisher. The zero value is the reference's
// behaviour.
type PublisherConfig struct {
	// Addr is the address to listen on; empty means DefaultAddr.
	Addr string
	// Patience is how long a connection's write may make no progress before
	// the connection is given up (ranvier-wire §6.5); 0 means
	// DefaultPatience. Every byte the peer accepts resets it.
	Patience time.Duration
	// RequestTimeout bounds the wait for a subscriber's Request, as one
	// deadline for the whole frame; 0 means Patience. The specification
	// names only a 30-second socket timeout at both ends (§6.5).
	RequestTimeout time.Duration
	// Clock returns publish timestamps in nanoseconds. Nil means the
	// process's monotonic clock counted from 1: ranvier-wire §4.3 asks for
	// the host's sleep-inclusive monotonic clock, which Go's standard library
	// does not expose.
	Clock func() uint64
	// Queue configures each connection's queue between Publish and the
	// socket. A Depth of 0 means streams.DefaultOptions().
	Queue streams.Options
	// Nagle leaves Nagle's algorithm on. By default it is disabled, as the
	// Rust publisher does; either is allowed (ranvier-wire §1.4).
	Nagle bool
	// WriteBuffer, when positive, sets each connection's socket send
	// buffer, in bytes; a small one makes a slow reader's push-back reach
	// the publisher sooner. Zero keeps the system's size.
	WriteBuffer int
	// Listen listens for subscribers on network and address. Nil means a
	// net.ListenConfig's Listen. A listener given here may wrap each
	// connection it accepts.
	Listen func(ctx context.Context, network, address string) (net.Listener, error)
	// Hooks change one behaviour each; the zero value is the reference.
	Hooks PublisherHooks
}

// PublisherHooks each replace one step of a Publisher. The zero value is
// the specified step; another describes a publisher that takes that step
// otherwise, so that it can be built from this one and compared with it
// (conform's mutants, sut/mutant, are built so).
type PublisherHooks struct {
	// Sweep chooses, from every stream under a connection's name, the ones
	// a sweep may announce. Nil means all of them (ranvier-wire §4.2).
	Sweep func(all []*messagepb.StreamInfo) []*messagepb.StreamInfo
	// Publish numbers one sample with st and hands it to deliver. Nil means
	// st.Publish, which numbers and delivers as one step under the stream's
	// lock (ranvier-streams §2.3).
	Publish func(st *streams.Stream, sourceNs uint64, values []byte, deliver func(streams.Sample))
	// Write writes one frame to a connection. Nil means WritePatient, which
	// resumes after a partial write (ranvier-wire §1.4) and waits for a
	// slow reader (§6.5).
	Write func(c net.Conn, b []byte, patience time.Duration, done <-chan struct{}) error
}

// Publisher is the data-plane publisher (ranvier-wire §3.3, §4.1–§4.3,
// §6.2–§6.5). It listens on one socket that serves any number of
// subscribers. On each connection it reads exactly one frame, the Request,
// and never reads the socket again; it sends nothing before that Request;
// it announces every stream under the requested name before that stream's
// first sample on the connection, never twice on one connection; and it
// closes the connection silently when the Request is unreadable.
//
// Publishing never waits (ranvier-streams §5.1): each connection has its own
// bounded queue and its own goroutine that writes to the socket, waiting
// for a slow reader with PublisherConfig.Patience.
type Publisher struct {
	cfg     PublisherConfig
	ln      net.Listener
	rt      *streams.Runtime
	done    chan struct{} // closed by Close
	drain   chan struct{} // closed by Shutdown
	wg      sync.WaitGroup
	closeMu sync.Once
	drainMu sync.Once

	mu     sync.Mutex
	byName map[string][]*PublishedStream
	byRef  map[uint32]*PublishedStream
	conns  []*pubConn            // every connection ever accepted, in order, for ConnStats
	active map[*pubConn]struct{} // the connections Publish delivers to
	lastID streams.ConnID
}

// PublishedStream is a stream a Publisher produces. Its methods are safe for
// concurrent use.
type PublishedStream struct {
	p    *Publisher
	st   *streams.Stream
	info *messagepb.StreamInfo // fixed for the stream's life (§4.2)
}

// ConnStats is what one publisher connection has done.
type ConnStats struct {
	// Conn numbers the publisher's connections from 1, in accept order.
	Conn streams.ConnID
	// Remote is the subscriber's address.
	Remote string
	// Attached reports whether the Request was read; StreamName is what
	// it asked for.
	Attached   bool
	StreamName string
	// Announced lists the references announced, in the order sent.
	Announced []uint32
	// Samples counts the samples written whole to the socket.
	Samples uint64
	// Pending counts the samples queued or being written: 0 once the
	// connection has written everything published to it.
	Pending int
	// Queue is the connection's queue counters.
	Queue streams.QueueCounters
	// Done reports whether the connection has ended; Err says why, nil for
	// an end the publisher chose (Close or Shutdown).
	Done bool
	Err  error
}

type pubConn struct {
	id     streams.ConnID
	nc     net.Conn
	remote string
	wake   chan struct{} // capacity 1

	mu        sync.Mutex
	attached  bool
	name      string
	queue     *streams.Subscription
	heard     map[uint32]bool
	announced []uint32
	samples   uint64
	writing   bool
	done      bool
	err       error
}

// NewPublisher listens on cfg.Addr and starts accepting subscribers. The
// context bounds only the listen; Close ends the publisher.
func NewPublisher(ctx context.Context, cfg PublisherConfig) (*Publisher, error) {
	if cfg.Addr == "" {
		cfg.Addr = DefaultAddr
	}
	if cfg.Patience <= 0 {
		cfg.Patience = DefaultPatience
	}
	if cfg.RequestTimeout <= 0 {
		cfg.RequestTimeout = cfg.Patience
	}
	if cfg.Clock == nil {
		start := time.Now()
		cfg.Clock = func() uint64 { return uint64(time.Since(start)) + 1 }
	}
	if cfg.Queue.Depth == 0 {
		cfg.Queue = streams.DefaultOptions()
	}
	if _, err := streams.NewSubscription(cfg.Queue); err != nil {
		return nil, fmt.Errorf("live publisher: queue options: %w", err)
	}
	listen := cfg.Listen
	if listen == nil {
		var lc net.ListenConfig
		listen = lc.Listen
	}
	ln, err := listen(ctx, "tcp", cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("live publisher: listen on %s: %w", cfg.Addr, err)
	}
	p := &Publisher{
		cfg:    cfg,
		ln:     ln,
		rt:     streams.NewRuntime(cfg.Clock),
		done:   make(chan struct{}),
		drain:  make(chan struct{}),
		byName: make(map[string][]*PublishedStream),
		byRef:  make(map[uint32]*PublishedStream),
		active: make(map[*pubConn]struct{}),
	}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Addr returns the address subscribers dial, host:port.
func (p *Publisher) Addr() string { return p.ln.Addr().String() }

// Open declares a stream described by info and returns it. The name and
// source clock domain come from info; the stream reference is allocated
// here and overwrites info's (ranvier-streams §2.6). info is copied, and the
// copy is the stream's announcement for its whole life (§6.4).
func (p *Publisher) Open(info *messagepb.StreamInfo) (*PublishedStream, error) {
	st, err := p.rt.Open(info.GetName(), info.GetSourceClockDomain())
	if err != nil {
		return nil, fmt.Errorf("live publisher: %w", err)
	}
	ann := proto.Clone(info).(*messagepb.StreamInfo)
	ann.StreamRef = st.Ref()
	s := &PublishedStream{p: p, st: st, info: ann}
	p.mu.Lock()
	p.byName[ann.Name] = append(p.byName[ann.Name], s)
	p.byRef[ann.StreamRef] = s
	p.mu.Unlock()
	return s, nil
}

// Ref returns the stream's reference.
func (s *PublishedStream) Ref() uint32 { return s.st.Ref() }

// Info returns a copy of the stream's announcement.
func (s *PublishedStream) Info() *messagepb.StreamInfo {
	return proto.Clone(s.info).(*messagepb.StreamInfo)
}

// Sent returns how many samples the stream has published.
func (s *PublishedStream) Sent() uint64 { return s.st.Sent() }

// Publish numbers, stamps and queues one sample for every connection that
// asked for the stream's name. It never waits for a subscriber. values is
// copied. A source timestamp on a stream with no clock domain is replaced by
// 0 (ranvier-wire §4.3). Numbering and queueing are one step, so one
// stream's samples reach every connection in sequence order
// (ranvier-streams §2.3).
func (s *PublishedStream) Publish(sourceNs uint64, values []byte) {
	values = slices.Clone(values)
	deliver := func(smp streams.Sample) { s.p.deliver(s.info.Name, smp) }
	if h := s.p.cfg.Hooks.Publish; h != nil {
		h(s.st, sourceNs, values, deliver)
		return
	}
	s.st.Publish(sourceNs, values, deliver)
}

// Withdraw removes the stream from the publisher's registry, as a stream
// whose owner dropped it. Samples already queued are still sent; a
// connection that has not announced it then sends them unannounced, which a
// subscriber must accept (ranvier-wire §4.2). The reference is never reused.
func (s *PublishedStream) Withdraw() {
	p := s.p
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.byRef, s.info.StreamRef)
	list := p.byName[s.info.Name]
	if i := slices.Index(list, s); i >= 0 {
		p.byName[s.info.Name] = slices.Delete(slices.Clone(list), i, i+1)
	}
}

// deliver queues smp on every attached connection that asked for name. A
// connection that has ended is no longer among them: a publisher does not
// track subscribers that have gone (ranvier-wire §3.3).
func (p *Publisher) deliver(name string, smp streams.Sample) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.active {
		c.mu.Lock()
		if c.name == name {
			c.queue.Push(c.id, smp)
			select {
			case c.wake <- struct{}{}:
			default:
			}
		}
		c.mu.Unlock()
	}
}

// Connections returns a snapshot of every connection accepted so far.
func (p *Publisher) Connections() []ConnStats {
	p.mu.Lock()
	conns := slices.Clone(p.conns)
	p.mu.Unlock()
	out := make([]ConnStats, 0, len(conns))
	for _, c := range conns {
		c.mu.Lock()
		cs := ConnStats{
			Conn: c.id, Remote: c.remote, Attached: c.attached, StreamName: c.name,
			Announced: slices.Clone(c.announced), Samples: c.samples, Done: c.done, Err: c.err,
		}
		if c.queue != nil {
			cs.Queue = c.queue.Queue()
			cs.Pending = cs.Queue.Readable
		}
		if c.writing {
			cs.Pending++
		}
		c.mu.Unlock()
		out = append(out, cs)
	}
	return out
}

// WaitConnections waits until cond holds for the connection snapshot, polling
// every few milliseconds, and returns the snapshot it held for.
func (p *Publisher) WaitConnections(ctx context.Context, cond func([]ConnStats) bool) ([]ConnStats, error) {
	t := time.NewTicker(2 * time.Millisecond)
	defer t.Stop()
	for {
		cs := p.Connections()
		if cond(cs) {
			return cs, nil
		}
		select {
		case <-ctx.Done():
			return cs, fmt.Errorf("live publisher: waiting for connections: %w", ctx.Err())
		case <-p.done:
			return cs, fmt.Errorf("live publisher: waiting for connections: %w", ErrClosed)
		case <-t.C:
		}
	}
}

// Shutdown stops accepting, lets every attached connection write what it has
// queued, then closes each one: a subscriber sees every queued sample and
// then end of stream (ranvier-wire §4.7). Connections still waiting for
// their Request are closed at once. When ctx ends first, Shutdown closes
// everything as Close does and returns ctx's error.
func (p *Publisher) Shutdown(ctx context.Context) error {
	p.drainMu.Do(func() { close(p.drain) })
	p.ln.Close()
	finished := make(chan struct{})
	go func() { p.wg.Wait(); close(finished) }()
	select {
	case <-finished:
		p.Close()
		return nil
	case <-ctx.Done():
		p.Close()
		return fmt.Errorf("live publisher: shutdown: %w", ctx.Err())
	}
}

// Close stops accepting, closes every connection at once, and waits for the
// publisher's goroutines to end.
func (p *Publisher) Close() error {
	p.closeMu.Do(func() {
		close(p.done)
		p.ln.Close()
		p.mu.Lock()
		for _, c := range p.conns {
			c.nc.Close()
		}
		p.mu.Unlock()
	})
	p.wg.Wait()
	return nil
}

func (p *Publisher) accept() {
	defer p.wg.Done()
	for {
		nc, err := p.ln.Accept()
		if err != nil {
			return // closed; a listener error ends accepting either way
		}
		if tc, ok := nc.(*net.TCPConn); ok {
			tc.SetNoDelay(!p.cfg.Nagle)
			if p.cfg.WriteBuffer > 0 {
				tc.SetWriteBuffer(p.cfg.WriteBuffer)
			}
		}
		p.mu.Lock()
		select {
		case <-p.done:
			p.mu.Unlock()
			nc.Close()
			return
		default:
		}
		p.lastID++
		c := &pubConn{id: p.lastID, nc: nc, remote: nc.RemoteAddr().String(), wake: make(chan struct{}, 1)}
		p.conns = append(p.conns, c)
		p.wg.Add(1)
		p.mu.Unlock()
		go p.serve(c)
	}
}

// serve is one connection's life.
func (p *Publisher) serve(c *pubConn) {
	defer p.wg.Done()
	err := p.serveConn(c)
	c.nc.Close()
	select {
	case <-p.done:
		err = nil // the publisher chose to end it
	default:
	}
	c.mu.Lock()
	c.done = true
	c.err = err
	c.mu.Unlock()
}

func (p *Publisher) serveConn(c *pubConn) error {
	name, err := readRequest(c.nc, p.cfg.RequestTimeout, p.drain)
	if err != nil {
		return err // closed silently (§6.2, §6.3)
	}
	q, _ := streams.NewSubscription(p.cfg.Queue) // options checked in NewPublisher
	p.mu.Lock()
	c.mu.Lock()
	c.attached, c.name, c.queue, c.heard = true, name, q, make(map[uint32]bool)
	c.mu.Unlock()
	p.active[c] = struct{}{}
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		delete(p.active, c)
		p.mu.Unlock()
	}()

	// §6.3: announce every stream under the name at attach.
	if err := p.sweep(c); err != nil {
		return err
	}
	for {
		c.mu.Lock()
		smp, ok := c.queue.Pop()
		c.writing = ok
		c.mu.Unlock()
		if !ok {
			select {
			case <-c.wake:
				continue
			case <-p.done:
				return nil
			case <-p.drain:
				c.mu.Lock()
				empty := c.queue.Len() == 0
				c.mu.Unlock()
				if empty {
					return nil
				}
				continue
			}
		}
		// §6.3: the first time a reference not yet heard arrives, sweep
		// again, and record it whether or not the sweep found it.
		if !c.heard[smp.StreamRef] {
			if err := p.sweep(c); err != nil {
				return err
			}
			c.heard[smp.StreamRef] = true
		}
		b, err := sampleFrame(smp)
		if err != nil {
			return err
		}
		if err := p.write(c.nc, b); err != nil {
			return fmt.Errorf("sending sample %d of stream %d: %w", smp.Sequence, smp.StreamRef, err)
		}
		c.mu.Lock()
		c.samples++
		c.writing = false
		c.mu.Unlock()
	}
}

// sweep announces every stream under c's name that c has not announced.
func (p *Publisher) sweep(c *pubConn) error {
	p.mu.Lock()
	var list []*messagepb.StreamInfo
	for _, s := range p.byName[c.name] {
		list = append(list, s.info)
	}
	p.mu.Unlock()
	if h := p.cfg.Hooks.Sweep; h != nil {
		list = h(list)
	}
	for _, info := range list {
		ref := info.StreamRef
		if c.heard[ref] {
			continue
		}
		b, err := announceFrame(info)
		if err != nil {
			return err
		}
		if err := p.write(c.nc, b); err != nil {
			return fmt.Errorf("announcing stream %d: %w", ref, err)
		}
		c.heard[ref] = true
		c.mu.Lock()
		c.announced = append(c.announced, ref)
		c.mu.Unlock()
	}
	return nil
}

// write writes one frame to a connection with the configured write.
func (p *Publisher) write(nc net.Conn, b []byte) error {
	if h := p.cfg.Hooks.Write; h != nil {
		return h(nc, b, p.cfg.Patience, p.done)
	}
	return WritePatient(nc, b, p.cfg.Patience, p.done)
}

// Streams returns the streams the publisher has open, in the order their
// references were allocated.
func (p *Publisher) Streams() []*PublishedStream {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]*PublishedStream, 0, len(p.byRef))
	for _, s := range p.byRef {
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b *PublishedStream) int { return cmp.Compare(a.Ref(), b.Ref()) })
	return out
}

// ErrBadRequest reports a connection whose first frame was not a readable
// Request; the publisher closed it silently (ranvier-wire §6.2, §6.3).
var ErrBadRequest = errors.New("first frame is not a readable Request")

// readRequest reads exactly one frame from nc and decodes it as a Request.
// Bytes after that frame, in the same read or later, are never looked at
// (ranvier-wire §4.1).
func readRequest(nc net.Conn, timeout time.Duration, drain <-chan struct{}) (name string, err error) {
	if err := nc.SetReadDeadline(time.Now().Add(timeout)); err != nil {
		return "", fmt.Errorf("setting read deadline: %w", err)
	}
	stop := make(chan struct{})
	defer close(stop)
	go func() { // Shutdown does not wait for a Request that has not come.
		select {
		case <-drain:
			nc.SetReadDeadline(time.Now())
		case <-stop:
		}
	}()
	var r wire.Reader
	buf := make([]byte, 4096)
	for {
		n, err := nc.Read(buf)
		r.Write(buf[:n])
		payload, ok, ferr := r.Next()
		if ferr != nil {
			return "", fmt.Errorf("reading the Request: %w: %w", ErrBadRequest, ferr)
		}
		if ok {
			req := new(messagepb.Request)
			if err := proto.Unmarshal(payload, req); err != nil {
				return "", fmt.Errorf("decoding the Request: %w: %w", ErrBadRequest, err)
			}
			return req.GetStreamName(), nil
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return "", fmt.Errorf("connection ended before the Request: %w", err)
			}
			return "", fmt.Errorf("reading the Request: %w", err)
		}
	}
}
