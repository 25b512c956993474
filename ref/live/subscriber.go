package live

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

	messagepb "github.com/conform-suite/conform/proto/ranvier/message/v1"
	"github.com/conform-suite/conform/ref/streams"
	"github.com/conform-suite/conform/ref/wire"
)

// DefaultMaxRecorded is how many samples a Subscriber keeps in its report
// unless configured otherwise.
const DefaultMaxRecorded = 1 << 20

// SubscriberConfig configures a Subscriber. The zero value is the reference's
// behaviour.
type SubscriberConfig struct {
	// MaxRecorded bounds the samples kept for the report; 0 means
	// DefaultMaxRecorded. Samples beyond it are still tracked and counted.
	MaxRecorded int
	// ReadTimeout is each connection's socket read timeout unless
	// SubscribeOptions names another; 0 means DefaultPatience, the 30
	// seconds of ranvier-wire §6.5. A read that times out is a quiet
	// publisher, not a broken one: the subscriber reads on.
	ReadTimeout time.Duration
	// Hooks change one behaviour each; the zero value is the reference.
	Hooks SubscriberHooks
}

// SubscriberHooks each replace one step of a Subscriber. The zero value is
// the specified step; another describes a subscriber that takes that step
// otherwise, so that it can be built from this one and compared with it
// (conform's mutants, sut/mutant, are built so).
type SubscriberHooks struct {
	// ReadTimedOut is called when a connection's read times out. A non-nil
	// error closes the connection, recorded as that error. Nil reads on
	// (ranvier-wire §6.5).
	ReadTimedOut func(conn streams.ConnID) error
	// NewReceiver returns the receive step of one connection. Nil means a
	// fresh wire.Subscriber: frames split as ranvier-wire §1.3 says,
	// unreadable frames skipped (§6.3, §6.4), a framing error closing the
	// connection (§6.2).
	NewReceiver func() Receiver
	// AfterRequest is called with each connection once its Request is
	// sent. Nil sends nothing more: the Request is the first and only frame
	// a subscriber sends (ranvier-wire §4.1).
	AfterRequest func(c net.Conn) error
	// EndOfStream is called when the publisher ends a connection. A non-nil
	// error records the end as that error; nil records end of stream, the
	// connection ending (ranvier-wire §4.7).
	EndOfStream func(conn streams.ConnID) error
	// Observe hands one arriving sample of connection conn, subscribed to
	// name, to track, the sequence tracker. Nil calls track(conn, smp):
	// streams are keyed by (connection, stream_ref) (ranvier-streams §2.2,
	// §3).
	Observe func(track func(streams.ConnID, streams.Sample) streams.Outcome, conn streams.ConnID, name string, smp streams.Sample) streams.Outcome
	// Attribute finds the announcement a sample of stream_ref ref is read
	// against, given the first announcement of each reference heard on its
	// connection, in order. Nil looks ref up on the sample's own connection
	// only (ranvier-streams §6.5).
	Attribute func(heard []streams.Announcement, ref uint32) (streams.Announcement, bool)
}

// A Receiver is one connection's receive step: bytes in, frames out, as
// wire.Subscriber, the reference, does it.
type Receiver interface {
	// Receive feeds bytes that arrived and calls emit for each frame they
	// complete. A non-nil error is a framing error: the connection closes.
	Receive(p []byte, emit func(wire.Event)) error
	// End reports the end of the connection; an error reports bytes left
	// buffered, a truncated tail.
	End() error
}

// SubscribeOptions configure one connection.
type SubscribeOptions struct {
	// ReadTimeout overrides SubscriberConfig.ReadTimeout when positive.
	ReadTimeout time.Duration
}

// Subscriber is the data-plane subscriber (ranvier-wire §4, §6; ranvier-streams
// §2.2, §3, §6.5–§6.7). Each Subscribe dials one publisher and sends its
// Request as the first and only frame; from then on the connection is only
// read, with the receive step of wire.Subscriber: unreadable frames are
// skipped and counted per connection, a framing error closes the connection
// without resynchronising, and end of stream is the connection ending. Reads
// carry the socket timeout of §6.5, and a timeout is never a reason to close:
// silence is a quiet publisher.
//
// Sequence numbers are tracked per (connection, stream_ref) with a
// streams.Tracker, and each sample's schema is attributed only from the
// announcement of its own reference on its own connection — unknown when
// there is none, never borrowed from a stream sharing the name (§6.5).
//
// A Subscriber is safe for concurrent use.
type Subscriber struct {
	cfg SubscriberConfig
	wg  sync.WaitGroup

	mu        sync.Mutex
	changed   chan struct{} // closed and replaced on every change
	tracker   *streams.Tracker
	frames    streams.FrameCounter
	anns      streams.Announcements
	conns     []*subConn
	samples   []ReceivedSample
	unrecord  uint64
	lastID    streams.ConnID
	closedAll bool
}

type subConn struct {
	report ConnReport
	nc     net.Conn
	rx     Receiver
	rto    time.Duration
	byUs   bool // closed by CloseConn or Close
}

// ReceivedSample is one sample as the subscriber received it.
type ReceivedSample struct {
	// Conn is the connection it arrived on.
	Conn streams.ConnID
	streams.Sample
	// Outcome is what the sequence tracker made of it.
	Outcome streams.Outcome
	// Attribution is the stream the sample is attributed to.
	Attribution Attribution
	// At is when its frame was completed.
	At time.Time
}

// Attribution is the announcement a sample is read against. Known is false
// when its connection announced nothing for its reference: the schema is then
// unknown (ranvier-streams §6.5).
type Attribution struct {
	Known bool
	// Name is the announced stream's name.
	Name string
	// Schema is the announced schema, nil when the announcement had none.
	Schema *streams.Schema
}

// ConnReport is what one connection received.
type ConnReport struct {
	Conn streams.ConnID
	Addr string
	// LocalAddr is the subscriber's end of the connection.
	LocalAddr  string
	StreamName string
	// Frames counts samples, announcements and unreadable frames
	// (ranvier-streams §3.6a).
	Frames streams.FrameCounts
	// Announcements lists the first announcement heard for each reference,
	// in the order heard.
	Announcements []streams.Announcement
	// RepeatedAnnouncements counts announcements for a reference already
	// announced on this connection; InvalidAnnouncements those naming
	// reference 0. Neither is attributed to anything.
	RepeatedAnnouncements uint64
	InvalidAnnouncements  uint64
	// Ended reports that the connection is over.
	Ended bool
	// EndOfStream reports that the publisher ended it (ranvier-wire §4.7);
	// Truncated that it ended with part of a frame buffered, which was
	// dropped (§1.3).
	EndOfStream bool
	Truncated   bool
	// FramingError is the error that closed the connection, when a prefix
	// could not be believed (§6.2).
	FramingError error
	// ClosedBySubscriber reports a close asked for by CloseConn or Close.
	ClosedBySubscriber bool
	// Err is an I/O error that ended the connection, other than end of
	// stream.
	Err error
}

// Report is a snapshot of everything a Subscriber received.
type Report struct {
	Conns []ConnReport
	// Counters are the sequence tracker's counters over every connection
	// (ranvier-streams §3.7).
	Counters streams.Counters
	// Samples lists the recorded samples in arrival order.
	Samples []ReceivedSample
	// Unrecorded counts samples beyond SubscriberConfig.MaxRecorded.
	Unrecorded uint64
}

// Conn returns the report of connection id.
func (r Report) Conn(id streams.ConnID) (ConnReport, bool) {
	for _, c := range r.Conns {
		if c.Conn == id {
			return c, true
		}
	}
	return ConnReport{}, false
}

// Stream returns the recorded samples of one (connection, stream_ref) pair,
// in arrival order.
func (r Report) Stream(conn streams.ConnID, ref uint32) []ReceivedSample {
	var out []ReceivedSample
	for _, s := range r.Samples {
		if s.Conn == conn && s.StreamRef == ref {
			out = append(out, s)
		}
	}
	return out
}

// NewSubscriber returns a Subscriber with no connections.
func NewSubscriber(cfg SubscriberConfig) *Subscriber {
	if cfg.MaxRecorded <= 0 {
		cfg.MaxRecorded = DefaultMaxRecorded
	}
	if cfg.ReadTimeout <= 0 {
		cfg.ReadTimeout = DefaultPatience
	}
	return &Subscriber{
		cfg:     cfg,
		changed: make(chan struct{}),
		tracker: streams.NewTracker(),
	}
}

// Subscribe dials the publisher at addr, sends Request{stream_name: name} as
// the connection's first and only frame, and starts receiving. It returns the
// connection's identifier, chosen here and never sent (ranvier-streams §2.2).
func (s *Subscriber) Subscribe(ctx context.Context, addr, name string) (streams.ConnID, error) {
	return s.SubscribeWith(ctx, addr, name, SubscribeOptions{})
}

// SubscribeWith is Subscribe with options for this connection.
func (s *Subscriber) SubscribeWith(ctx context.Context, addr, name string, opts SubscribeOptions) (streams.ConnID, error) {
	rto := s.cfg.ReadTimeout
	if opts.ReadTimeout > 0 {
		rto = opts.ReadTimeout
	}
	var d net.Dialer
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return 0, fmt.Errorf("live subscriber: dial %s: %w", addr, err)
	}
	payload, err := wire.Encode(&messagepb.Request{StreamName: name})
	if err == nil {
		stop := context.AfterFunc(ctx, func() { nc.SetWriteDeadline(time.Now()) })
		err = wire.WriteFrame(ctx, nc, payload)
		if h := s.cfg.Hooks.AfterRequest; err == nil && h != nil {
			err = h(nc)
		}
		stop()
	}
	if err != nil {
		nc.Close()
		return 0, fmt.Errorf("live subscriber: sending the Request to %s: %w", addr, err)
	}
	s.mu.Lock()
	if s.closedAll {
		s.mu.Unlock()
		nc.Close()
		return 0, fmt.Errorf("live subscriber: subscribe: %w", ErrClosed)
	}
	s.lastID++
	var rx Receiver = new(wire.Subscriber)
	if h := s.cfg.Hooks.NewReceiver; h != nil {
		rx = h()
	}
	c := &subConn{nc: nc, rx: rx, rto: rto, report: ConnReport{Conn: s.lastID, Addr: addr, LocalAddr: nc.LocalAddr().String(), StreamName: name}}
	s.conns = append(s.conns, c)
	s.wg.Add(1)
	s.notifyLocked()
	s.mu.Unlock()
	go s.receive(c)
	return c.report.Conn, nil
}

// receive reads connection c until it ends.
func (s *Subscriber) receive(c *subConn) {
	defer s.wg.Done()
	defer c.nc.Close()
	buf := make([]byte, 64<<10)
	for {
		c.nc.SetReadDeadline(time.Now().Add(c.rto))
		n, err := c.nc.Read(buf)
		if n > 0 {
			at := time.Now()
			s.mu.Lock()
			ferr := c.rx.Receive(buf[:n], func(ev wire.Event) { s.onEvent(c, ev, at) })
			if ferr != nil {
				// §6.2: no resynchronising; the connection closes.
				c.report.FramingError = ferr
				c.report.Ended = true
				s.notifyLocked()
				s.mu.Unlock()
				return
			}
			s.notifyLocked()
			s.mu.Unlock()
		}
		if err != nil && errors.Is(err, os.ErrDeadlineExceeded) {
			// §6.5: a quiet publisher, not a broken one.
			h := s.cfg.Hooks.ReadTimedOut
			if h == nil {
				continue
			}
			if herr := h(c.report.Conn); herr == nil {
				continue
			} else {
				s.mu.Lock()
				c.byUs = true
				c.report.ClosedBySubscriber = true
				c.report.Err = herr
				c.report.Ended = true
				s.notifyLocked()
				s.mu.Unlock()
				return
			}
		}
		if err != nil {
			s.mu.Lock()
			switch {
			case c.byUs:
				c.report.ClosedBySubscriber = true
			case errors.Is(err, io.EOF):
				if h := s.cfg.Hooks.EndOfStream; h != nil {
					if herr := h(c.report.Conn); herr != nil {
						c.report.Err = herr
						break
					}
				}
				c.report.EndOfStream = true
				c.report.Truncated = c.rx.End() != nil
			default:
				c.report.Err = err
			}
			c.report.Ended = true
			s.notifyLocked()
			s.mu.Unlock()
			return
		}
	}
}

// onEvent accounts for one frame. s.mu is held.
func (s *Subscriber) onEvent(c *subConn, ev wire.Event, at time.Time) {
	id := c.report.Conn
	switch {
	case ev.Action == wire.SkippedUndecodable:
		s.frames.Count(id, streams.FrameUndecodable)
	case ev.Action != wire.Delivered:
		s.frames.Count(id, streams.FrameNoVariant)
	case ev.Frame.GetAnnounce() != nil:
		s.frames.Count(id, streams.FrameAnnounce)
		a := streams.ReadAnnouncement(ToStreamInfo(ev.Frame.GetAnnounce()))
		switch added, err := s.anns.Add(id, a); {
		case err != nil:
			c.report.InvalidAnnouncements++
		case !added:
			c.report.RepeatedAnnouncements++
		default:
			c.report.Announcements = append(c.report.Announcements, a)
		}
	case ev.Frame.GetSample() != nil:
		s.frames.Count(id, streams.FrameSample)
		smp := ToSample(ev.Frame.GetSample())
		rs := ReceivedSample{Conn: id, Sample: smp, At: at}
		if h := s.cfg.Hooks.Observe; h != nil {
			rs.Outcome = h(s.tracker.Observe, id, c.report.StreamName, smp)
		} else {
			rs.Outcome = s.tracker.Observe(id, smp)
		}
		lookup := func() (streams.Announcement, bool) { return s.anns.Lookup(id, smp.StreamRef) }
		if h := s.cfg.Hooks.Attribute; h != nil {
			lookup = func() (streams.Announcement, bool) { return h(c.report.Announcements, smp.StreamRef) }
		}
		if a, ok := lookup(); ok {
			rs.Attribution = Attribution{Known: true, Name: a.Name, Schema: a.Schema}
		}
		if len(s.samples) < s.cfg.MaxRecorded {
			s.samples = append(s.samples, rs)
		} else {
			s.unrecord++
		}
	default:
		// A variant this build knows but a data plane never carries cannot
		// occur: Frame has two. Counted as nothing readable.
		s.frames.Count(id, streams.FrameNoVariant)
	}
	c.report.Frames = s.frames.Counts(id)
}

// notifyLocked wakes every Wait. s.mu is held.
func (s *Subscriber) notifyLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// Report returns a snapshot of what has been received.
func (s *Subscriber) Report() Report {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reportLocked()
}

func (s *Subscriber) reportLocked() Report {
	r := Report{
		Counters:   s.tracker.Counters(),
		Samples:    slices.Clone(s.samples),
		Unrecorded: s.unrecord,
	}
	for _, c := range s.conns {
		cr := c.report
		cr.Announcements = slices.Clone(cr.Announcements)
		r.Conns = append(r.Conns, cr)
	}
	return r
}

// Wait waits until cond holds for the report, and returns that report. cond
// is evaluated after each change, without the subscriber's lock held.
func (s *Subscriber) Wait(ctx context.Context, cond func(Report) bool) (Report, error) {
	for {
		s.mu.Lock()
		r := s.reportLocked()
		ch := s.changed
		s.mu.Unlock()
		if cond(r) {
			return r, nil
		}
		select {
		case <-ctx.Done():
			return r, fmt.Errorf("live subscriber: waiting: %w", ctx.Err())
		case <-ch:
		}
	}
}

// CloseConn closes connection id and waits for nothing; its report records
// that the subscriber closed it.
func (s *Subscriber) CloseConn(id streams.ConnID) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.conns {
		if c.report.Conn == id {
			c.byUs = true
			return c.nc.Close()
		}
	}
	return fmt.Errorf("live subscriber: no connection %d", id)
}

// Close closes every connection and waits for their goroutines to end.
func (s *Subscriber) Close() error {
	s.mu.Lock()
	s.closedAll = true
	for _, c := range s.conns {
		c.byUs = true
		c.nc.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
	return nil
}
