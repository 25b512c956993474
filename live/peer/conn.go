// Package peer is the harness side of Ranvier's live conversations: it plays
// the other end of a real loopback TCP connection so that a case can judge an
// implementation by what crosses the socket (ranvier-wire §3–§6).
//
//   - PeerPublisher listens like a data-plane publisher; the implementation
//     under test dials it as a subscriber. The harness captures the Request,
//     checks that nothing else is sent, and writes scripted frames with
//     adversarial segmentation.
//   - PeerSubscriber dials an implementation's publisher, optionally waits
//     before sending its Request, and records every frame with its arrival
//     time; it can stop reading for a while to play a slow reader.
//   - Runtime listens like a control-plane runtime, hands out the four
//     RANVIER_* variables a node is launched with, records every ToRuntime
//     message, and sends scripted ToNode messages.
//
// Every connection is a Conn: a socket with Nagle off and a recorder
// goroutine that reads it into a bounded Transcript. Everything that waits
// takes a context.Context, and every goroutine is ended by a Close.
package peer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/conform-suite/conform/ref/wire"
	"google.golang.org/protobuf/proto"
)

// The bounds a transcript keeps unless configured otherwise.
const (
	// DefaultMaxFrames is how many frames a transcript keeps.
	DefaultMaxFrames = 1 << 16
	// DefaultMaxBytes is how many payload bytes a transcript keeps.
	DefaultMaxBytes = 64 << 20
)

// ErrClosed is returned by operations on a closed Conn or listener.
var ErrClosed = errors.New("peer: closed")

// Limits bound what a Conn records. Zero fields take the defaults.
type Limits struct {
	// MaxFrames bounds the frames kept; MaxBytes the payload bytes kept.
	// Beyond either, frames are still counted but not kept, and the
	// transcript says it overflowed.
	MaxFrames int
	MaxBytes  int64
}

func (l Limits) withDefaults() Limits {
	if l.MaxFrames <= 0 {
		l.MaxFrames = DefaultMaxFrames
	}
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultMaxBytes
	}
	return l
}

// Frame is one frame as it arrived.
type Frame struct {
	// At is when the read that completed the frame returned.
	At time.Time
	// Payload is the frame's payload, without its prefix.
	Payload []byte
}

// Mark is a point in the conversation the harness named, such as the moment
// it sent its Request, with what had arrived by then.
type Mark struct {
	Label string
	At    time.Time
	// Bytes and Frames are how much had been read when the mark was made.
	Bytes  int64
	Frames int
}

// Transcript is everything a Conn has read, in order.
type Transcript struct {
	// Frames are the complete frames read, in order, up to the limits.
	Frames []Frame
	// FrameCount counts every complete frame, kept or not.
	FrameCount int
	// Bytes counts every byte read; Consumed the bytes that made up
	// complete frames. Bytes - Consumed is a partial frame, or what
	// followed a framing error.
	Bytes, Consumed int64
	// FirstByteAt is when the first byte arrived; zero before.
	FirstByteAt time.Time
	// Marks are the points the harness named, in order.
	Marks []Mark
	// FramingError is the error that stopped framing: a prefix above the
	// ceiling. Bytes are still counted after it.
	FramingError error
	// Overflow reports that a limit was reached and later frames were not
	// kept.
	Overflow bool
	// Ended reports that the connection is over. EOF says the far end
	// closed it cleanly; Err is any other read error; ClosedByPeer says the
	// harness closed it.
	Ended        bool
	EOF          bool
	Err          error
	ClosedByPeer bool
	EndedAt      time.Time
}

// Mark returns the mark with label, and whether there is one.
func (t Transcript) Mark(label string) (Mark, bool) {
	for _, m := range t.Marks {
		if m.Label == label {
			return m, true
		}
	}
	return Mark{}, false
}

// Conn is one harness connection: a TCP socket with Nagle's algorithm off
// and a goroutine that reads it into a Transcript until it ends. A Conn is
// safe for concurrent use; writes are serialised.
type Conn struct {
	nc     *net.TCPConn
	limits Limits
	done   chan struct{} // closed when the recorder ends
	resume chan struct{} // closed and replaced by Resume

	writeMu sync.Mutex

	mu       sync.Mutex
	t        Transcript
	kept     int64
	changed  chan struct{}
	paused   bool
	closing  bool
	closeErr error
	once     sync.Once
}

func newConn(nc *net.TCPConn, limits Limits) *Conn {
	nc.SetNoDelay(true)
	c := &Conn{
		nc:      nc,
		limits:  limits.withDefaults(),
		done:    make(chan struct{}),
		resume:  make(chan struct{}),
		changed: make(chan struct{}),
	}
	go c.record()
	return c
}

// LocalAddr returns the harness end's address.
func (c *Conn) LocalAddr() net.Addr { return c.nc.LocalAddr() }

// RemoteAddr returns the far end's address.
func (c *Conn) RemoteAddr() net.Addr { return c.nc.RemoteAddr() }

func (c *Conn) record() {
	defer close(c.done)
	var r wire.Reader
	buf := make([]byte, 64<<10)
	for {
		if !c.waitUnpaused() {
			c.end(nil)
			return
		}
		n, err := c.nc.Read(buf)
		at := time.Now()
		c.mu.Lock()
		if n > 0 {
			if c.t.FirstByteAt.IsZero() {
				c.t.FirstByteAt = at
			}
			c.t.Bytes += int64(n)
			if c.t.FramingError == nil {
				r.Write(buf[:n])
				c.frames(&r, at)
			}
		}
		c.notifyLocked()
		c.mu.Unlock()
		if err != nil {
			c.end(err)
			return
		}
	}
}

// frames takes every complete frame from r. c.mu is held.
func (c *Conn) frames(r *wire.Reader, at time.Time) {
	for {
		payload, ok, err := r.Next()
		if err != nil {
			c.t.FramingError = err
			return
		}
		if !ok {
			return
		}
		c.t.FrameCount++
		c.t.Consumed += int64(wire.PrefixLen + len(payload))
		if len(c.t.Frames) >= c.limits.MaxFrames || c.kept+int64(len(payload)) > c.limits.MaxBytes {
			c.t.Overflow = true
			continue
		}
		c.kept += int64(len(payload))
		c.t.Frames = append(c.t.Frames, Frame{At: at, Payload: slices.Clone(payload)})
	}
}

// waitUnpaused blocks while the harness has paused reading. It reports false
// when the Conn is closing.
func (c *Conn) waitUnpaused() bool {
	for {
		c.mu.Lock()
		paused, closing, resume := c.paused, c.closing, c.resume
		c.mu.Unlock()
		if closing {
			return false
		}
		if !paused {
			return true
		}
		<-resume
	}
}

func (c *Conn) end(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t.Ended = true
	c.t.EndedAt = time.Now()
	switch {
	case c.closing:
		c.t.ClosedByPeer = true
	case errors.Is(err, io.EOF):
		c.t.EOF = true
	default:
		c.t.Err = err
	}
	c.notifyLocked()
}

func (c *Conn) notifyLocked() {
	close(c.changed)
	c.changed = make(chan struct{})
}

// Mark records a named point in the transcript, with what has arrived so far.
func (c *Conn) Mark(label string) Mark {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := Mark{Label: label, At: time.Now(), Bytes: c.t.Bytes, Frames: c.t.FrameCount}
	c.t.Marks = append(c.t.Marks, m)
	c.notifyLocked()
	return m
}

// Transcript returns a snapshot of what has been read.
func (c *Conn) Transcript() Transcript {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.snapshotLocked()
}

func (c *Conn) snapshotLocked() Transcript {
	t := c.t
	t.Frames = slices.Clip(t.Frames) // payloads are never modified
	t.Marks = slices.Clone(t.Marks)
	return t
}

// Wait waits until cond holds for the transcript and returns that transcript.
// cond runs without the Conn's lock held.
func (c *Conn) Wait(ctx context.Context, cond func(Transcript) bool) (Transcript, error) {
	for {
		c.mu.Lock()
		t := c.snapshotLocked()
		ch := c.changed
		c.mu.Unlock()
		if cond(t) {
			return t, nil
		}
		if t.Ended {
			return t, fmt.Errorf("peer: waiting on %v: the connection ended", c.nc.RemoteAddr())
		}
		select {
		case <-ctx.Done():
			return t, fmt.Errorf("peer: waiting on %v: %w", c.nc.RemoteAddr(), ctx.Err())
		case <-ch:
		}
	}
}

// WaitFrames waits until at least n frames have arrived.
func (c *Conn) WaitFrames(ctx context.Context, n int) (Transcript, error) {
	return c.Wait(ctx, func(t Transcript) bool { return t.FrameCount >= n })
}

// WaitEnded waits until the connection is over: the far end closed it, it
// failed, or the harness closed it.
func (c *Conn) WaitEnded(ctx context.Context) (Transcript, error) {
	for {
		c.mu.Lock()
		t := c.snapshotLocked()
		ch := c.changed
		c.mu.Unlock()
		if t.Ended {
			return t, nil
		}
		select {
		case <-ctx.Done():
			return t, fmt.Errorf("peer: waiting for %v to end: %w", c.nc.RemoteAddr(), ctx.Err())
		case <-ch:
		}
	}
}

// Idle waits for d without sending anything — the harness going silent — and
// returns the transcript. It returns early only when ctx ends.
func (c *Conn) Idle(ctx context.Context, d time.Duration) (Transcript, error) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return c.Transcript(), fmt.Errorf("peer: idle: %w", ctx.Err())
	case <-t.C:
		return c.Transcript(), nil
	}
}

// Pause stops reading the socket once the read in progress returns: the
// harness becomes a slow reader, and the far end's writes back up.
func (c *Conn) Pause() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.paused = true
}

// Resume starts reading again after Pause.
func (c *Conn) Resume() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.paused {
		c.paused = false
		close(c.resume)
		c.resume = make(chan struct{})
	}
}

// Write writes frames, which are bytes already framed (or deliberately not),
// cut into socket writes by seg, pausing seg.Gap between writes. Each write
// is sent whole before the next begins. ctx bounds the whole write, pauses
// included.
func (c *Conn) Write(ctx context.Context, seg Segmentation, frames ...[]byte) error {
	return c.write(ctx, 0, seg, frames)
}

// ErrStalled reports a socket write that made no progress for the stall
// bound of Pace: the far end stopped reading.
var ErrStalled = errors.New("peer: the far end accepted nothing for the stall bound")

// Pace writes frames as Write does, but bounds each socket write by stall
// rather than the whole: the pauses between writes are the harness's own
// pace, which a loaded machine may stretch, and only a write that makes no
// progress for stall is the far end's doing (ErrStalled). ctx only cancels;
// its error is returned as it is, so that a caller tells its own deadline
// from the far end's.
func (c *Conn) Pace(ctx context.Context, stall time.Duration, seg Segmentation, frames ...[]byte) error {
	return c.write(ctx, stall, seg, frames)
}

func (c *Conn) write(ctx context.Context, stall time.Duration, seg Segmentation, frames [][]byte) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	writes := seg.Writes(frames...)
	stop := context.AfterFunc(ctx, func() { c.nc.SetWriteDeadline(time.Now()) })
	defer func() {
		if stop() {
			return
		}
		c.nc.SetWriteDeadline(time.Time{})
	}()
	for i, w := range writes {
		if i > 0 && seg.Gap > 0 {
			t := time.NewTimer(seg.Gap)
			select {
			case <-ctx.Done():
				t.Stop()
				return fmt.Errorf("peer: write %d of %d: %w", i+1, len(writes), ctx.Err())
			case <-t.C:
			}
		}
		if err := c.writeOne(ctx, stall, w); err != nil {
			return fmt.Errorf("peer: write %d of %d (%s): %w", i+1, len(writes), seg.Name, err)
		}
	}
	return nil
}

// writeOne writes b, allowing each socket write stall (none when zero)
// to make progress.
func (c *Conn) writeOne(ctx context.Context, stall time.Duration, b []byte) error {
	for len(b) > 0 {
		if stall > 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
			c.nc.SetWriteDeadline(time.Now().Add(stall))
		}
		n, err := c.nc.Write(b)
		b = b[n:]
		switch {
		case err == nil:
		case ctx.Err() != nil:
			return ctx.Err()
		case stall > 0 && errors.Is(err, os.ErrDeadlineExceeded):
			if n > 0 {
				continue // progress: the stall bound starts again
			}
			return fmt.Errorf("%w (%v)", ErrStalled, stall)
		default:
			return err
		}
	}
	return nil
}

// Send writes frames one per socket write.
func (c *Conn) Send(ctx context.Context, frames ...[]byte) error {
	return c.Write(ctx, Whole(), frames...)
}

// SendMessage encodes m, frames it, and sends it in one write.
func (c *Conn) SendMessage(ctx context.Context, m proto.Message) error {
	b, err := EncodeFrame(m)
	if err != nil {
		return err
	}
	return c.Send(ctx, b)
}

// Received returns how many bytes the kernel has received on the
// connection, read by the harness or still queued for it (TCP_INFO's
// bytes_received). It fails where the system does not say.
func (c *Conn) Received() (int64, error) {
	raw, err := c.nc.SyscallConn()
	if err != nil {
		return 0, fmt.Errorf("peer: received: %w", err)
	}
	var n int64
	var serr error
	if err := raw.Control(func(fd uintptr) { n, serr = bytesReceived(fd) }); err != nil {
		return 0, fmt.Errorf("peer: received: %w", err)
	}
	if serr != nil {
		return 0, fmt.Errorf("peer: received: %w", serr)
	}
	return n, nil
}

// syncFallback is how long Sync waits where the system cannot say how many
// bytes have arrived: long enough for a recorder that is not starved.
const syncFallback = 50 * time.Millisecond

// Sync waits until the transcript holds every byte that had reached the
// harness's socket when Sync was called, or the connection ended: after it,
// anything the far end sent before that moment is in Transcript. It is how a
// case looks for something that must not have been sent without guessing how
// late its own recorder runs. Where the kernel cannot say what has arrived,
// Sync waits syncFallback.
func (c *Conn) Sync(ctx context.Context) (Transcript, error) {
	target, err := c.Received()
	if err != nil {
		t := time.NewTimer(syncFallback)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return c.Transcript(), fmt.Errorf("peer: sync: %w", ctx.Err())
		case <-t.C:
			return c.Transcript(), nil
		}
	}
	return c.Wait(ctx, func(t Transcript) bool { return t.Bytes >= target || t.Ended })
}

// Reset closes the connection abortively: the far end reads a reset, not
// end of stream, as from a subscriber whose process died.
func (c *Conn) Reset() error {
	c.nc.SetLinger(0)
	return c.Close()
}

// CloseWrite shuts the sending side: the far end reads end of stream, and
// the harness can still read what it sends.
func (c *Conn) CloseWrite() error {
	if err := c.nc.CloseWrite(); err != nil {
		return fmt.Errorf("peer: close write: %w", err)
	}
	return nil
}

// Close closes the connection and waits for its recorder to end.
func (c *Conn) Close() error {
	c.once.Do(func() {
		c.mu.Lock()
		c.closing = true
		if c.paused {
			c.paused = false
			close(c.resume)
			c.resume = make(chan struct{})
		}
		c.mu.Unlock()
		c.closeErr = c.nc.Close()
	})
	<-c.done
	return c.closeErr
}

// Done is closed when the connection's recorder has ended.
func (c *Conn) Done() <-chan struct{} { return c.done }

// acceptor accepts connections in the background and hands them out.
type acceptor struct {
	ln     *net.TCPListener
	limits Limits
	ch     chan *Conn
	quit   chan struct{} // closed by close
	done   chan struct{} // closed when the accept loop ends

	mu    sync.Mutex
	conns []*Conn
	once  sync.Once
}

func listen(ctx context.Context, limits Limits) (*acceptor, error) {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("peer: listen on loopback: %w", err)
	}
	a := &acceptor{ln: ln.(*net.TCPListener), limits: limits, ch: make(chan *Conn), quit: make(chan struct{}), done: make(chan struct{})}
	go a.loop()
	return a, nil
}

func (a *acceptor) loop() {
	defer close(a.done)
	for {
		nc, err := a.ln.AcceptTCP()
		if err != nil {
			return
		}
		a.mu.Lock()
		select {
		case <-a.quit:
			a.mu.Unlock()
			nc.Close()
			return
		default:
		}
		c := newConn(nc, a.limits)
		a.conns = append(a.conns, c)
		a.mu.Unlock()
		select {
		case a.ch <- c:
		case <-a.quit:
			return
		}
	}
}

func (a *acceptor) accept(ctx context.Context) (*Conn, error) {
	select {
	case c := <-a.ch:
		return c, nil
	case <-a.done:
		return nil, fmt.Errorf("peer: accept: %w", ErrClosed)
	case <-ctx.Done():
		return nil, fmt.Errorf("peer: accept on %v: %w", a.ln.Addr(), ctx.Err())
	}
}

func (a *acceptor) close() error {
	var err error
	a.once.Do(func() {
		close(a.quit)
		err = a.ln.Close()
		<-a.done
		a.mu.Lock()
		conns := slices.Clone(a.conns)
		a.mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return err
}
