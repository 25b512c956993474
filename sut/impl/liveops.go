package impl

import (
	"context"
	"fmt"
	"net"
	"sync"
	"time"

	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	messagepb "github.com/conform-suite/conform/proto/ranvier/message/v1"
	"github.com/conform-suite/conform/ref/live"
	"github.com/conform-suite/conform/ref/streams"
)

// LiveParts are the swappable parts of the live Ranvier data-plane suite
// (profiles ranvier-subscriber, ranvier-publisher): how a subscriber and a
// publisher are made. A mutant wraps one to set a hook of ref/live.
type LiveParts struct {
	// NewSubscriber returns a data-plane subscriber, as live.NewSubscriber.
	NewSubscriber func(cfg live.SubscriberConfig) *live.Subscriber
	// NewPublisher starts a data-plane publisher, as live.NewPublisher.
	NewPublisher func(ctx context.Context, cfg live.PublisherConfig) (*live.Publisher, error)

	// handles are the subscribers and publishers this session holds.
	handles *liveHandles
}

// maxLiveHandles bounds the subscribers, and separately the publishers, one
// session holds at once; beyond it the oldest is closed, so that a harness
// that never closes them cannot exhaust the SUT's sockets.
const maxLiveHandles = 64

// The defaults of the waits a live op may leave unset.
const (
	defaultDialTimeout   = 5 * time.Second
	defaultReportTimeout = 2 * time.Second
	defaultWaitTimeout   = 2 * time.Second
)

type liveHandles struct {
	mu   sync.Mutex
	next uint32
	subs map[uint32]*live.Subscriber
	pubs map[uint32]*livePublisher
}

type livePublisher struct {
	p       *live.Publisher
	mu      sync.Mutex
	streams []*live.PublishedStream
}

// referenceLive returns the reference's live parts and declares the two
// data-plane profiles.
func referenceLive(im *Impl) LiveParts {
	im.Profiles = append(im.Profiles, "ranvier-subscriber", "ranvier-publisher")
	return LiveParts{
		NewSubscriber: live.NewSubscriber,
		NewPublisher:  live.NewPublisher,
		handles:       &liveHandles{subs: map[uint32]*live.Subscriber{}, pubs: map[uint32]*livePublisher{}},
	}
}

// live answers one live op.
func (im *Impl) live(ctx context.Context, op *conformpb.LiveOp) (*conformpb.LiveResult, error) {
	l := &im.Live
	res := new(conformpb.LiveResult)
	switch op := op.Op.(type) {
	case *conformpb.LiveOp_Subscribe:
		r, err := l.subscribe(ctx, op.Subscribe)
		if err != nil {
			return nil, err
		}
		res.Result = &conformpb.LiveResult_Subscribed{Subscribed: r}
	case *conformpb.LiveOp_Report:
		r, err := l.report(ctx, op.Report)
		if err != nil {
			return nil, err
		}
		res.Result = &conformpb.LiveResult_Report{Report: r}
	case *conformpb.LiveOp_ListenPublisher:
		r, err := l.listenPublisher(ctx, op.ListenPublisher)
		if err != nil {
			return nil, err
		}
		res.Result = &conformpb.LiveResult_PublisherListening{PublisherListening: r}
	case *conformpb.LiveOp_Publish:
		r, err := l.publishLive(ctx, op.Publish)
		if err != nil {
			return nil, err
		}
		res.Result = &conformpb.LiveResult_Published{Published: r}
	case *conformpb.LiveOp_Close:
		l.close(op.Close)
		res.Result = &conformpb.LiveResult_Closed{Closed: &conformpb.LiveClosed{}}
	default:
		return nil, &UnimplementedError{Detail: fmt.Sprintf("live op %T is not implemented by %s", op, im.Name)}
	}
	return res, nil
}

func millis(ms uint32, def time.Duration) time.Duration {
	if ms == 0 {
		return def
	}
	return time.Duration(ms) * time.Millisecond
}

// checkLoopback refuses an address off this machine: no connection may
// cross a device boundary (ranvier-wire §3.4), and the suite runs on
// loopback only.
func checkLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("address %q: %w", addr, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("address %q is not loopback: live ops stay on this machine", addr)
	}
	return nil
}

func (l *LiveParts) subscribe(ctx context.Context, op *conformpb.LiveSubscribe) (*conformpb.LiveSubscribed, error) {
	if err := checkLoopback(op.GetAddress()); err != nil {
		return nil, err
	}
	h := l.handles
	h.mu.Lock()
	id := op.GetSubscriber()
	sub, ok := h.subs[id]
	if id != 0 && !ok {
		h.mu.Unlock()
		return nil, fmt.Errorf("no subscriber %d", id)
	}
	if id == 0 {
		sub = l.NewSubscriber(live.SubscriberConfig{ReadTimeout: millis(op.GetReadTimeoutMs(), 0)})
		id = h.add(func(id uint32) { h.subs[id] = sub })
		h.trim()
	}
	h.mu.Unlock()
	dctx, cancel := context.WithTimeout(ctx, millis(op.GetDialTimeoutMs(), defaultDialTimeout))
	defer cancel()
	conn, err := sub.SubscribeWith(dctx, op.GetAddress(), op.GetStreamName(), live.SubscribeOptions{ReadTimeout: millis(op.GetReadTimeoutMs(), 0)})
	if err != nil {
		return nil, err
	}
	out := &conformpb.LiveSubscribed{Subscriber: id, Connection: uint64(conn)}
	if c, ok := sub.Report().Conn(conn); ok {
		out.LocalAddress = c.LocalAddr
	}
	return out, nil
}

// add allocates a handle and stores the value with put. h.mu is held.
func (h *liveHandles) add(put func(id uint32)) uint32 {
	h.next++
	put(h.next)
	return h.next
}

// trim closes the oldest handles beyond maxLiveHandles. h.mu is held; the
// closes run in the background so that no op waits on another's sockets.
func (h *liveHandles) trim() {
	for len(h.subs) > maxLiveHandles {
		oldest := uint32(0)
		for id := range h.subs {
			if oldest == 0 || id < oldest {
				oldest = id
			}
		}
		s := h.subs[oldest]
		delete(h.subs, oldest)
		go s.Close()
	}
	for len(h.pubs) > maxLiveHandles {
		oldest := uint32(0)
		for id := range h.pubs {
			if oldest == 0 || id < oldest {
				oldest = id
			}
		}
		p := h.pubs[oldest]
		delete(h.pubs, oldest)
		go p.p.Close()
	}
}

func (l *LiveParts) report(ctx context.Context, op *conformpb.LiveReportOp) (*conformpb.LiveReport, error) {
	h := l.handles
	h.mu.Lock()
	sub, ok := h.subs[op.GetSubscriber()]
	h.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("no subscriber %d", op.GetSubscriber())
	}
	u := op.GetUntil()
	if u == nil {
		return LiveReport(sub.Report(), false), nil
	}
	wctx, cancel := context.WithTimeout(ctx, millis(op.GetTimeoutMs(), defaultReportTimeout))
	defer cancel()
	r, err := sub.Wait(wctx, func(r live.Report) bool {
		var frames, samples uint64
		var ended uint32
		for _, c := range r.Conns {
			frames += c.Frames.Samples + c.Frames.Announcements + c.Frames.Unreadable
			samples += c.Frames.Samples
			if c.Ended {
				ended++
			}
		}
		return frames >= u.GetFrames() && samples >= u.GetSamples() && ended >= u.GetEnded()
	})
	return LiveReport(r, err != nil), nil
}

// LiveReport converts a subscriber's report to conform.v1.
func LiveReport(r live.Report, timedOut bool) *conformpb.LiveReport {
	out := &conformpb.LiveReport{Counters: liveCounters(r.Counters), Unrecorded: r.Unrecorded, TimedOut: timedOut}
	for _, c := range r.Conns {
		lc := &conformpb.LiveConnection{
			Connection: uint64(c.Conn), Address: c.Addr, LocalAddress: c.LocalAddr, StreamName: c.StreamName,
			Samples: c.Frames.Samples, Announcements: c.Frames.Announcements, Unreadable: c.Frames.Unreadable,
		}
		for _, a := range c.Announcements {
			lc.Announced = append(lc.Announced, &conformpb.LiveAnnouncement{
				StreamRef: a.StreamRef, Name: a.Name, Node: a.Node, Schema: liveSchema(a.Schema), SourceClockDomain: a.SourceClockDomain,
			})
		}
		switch {
		case !c.Ended:
			lc.State = conformpb.LiveConnectionState_LIVE_CONNECTION_STATE_OPEN
		case c.FramingError != nil:
			lc.State = conformpb.LiveConnectionState_LIVE_CONNECTION_STATE_CLOSED_FRAMING_ERROR
			lc.Detail = c.FramingError.Error()
		case c.ClosedBySubscriber:
			lc.State = conformpb.LiveConnectionState_LIVE_CONNECTION_STATE_CLOSED_BY_SUBSCRIBER
			if c.Err != nil {
				lc.Detail = c.Err.Error()
			}
		case c.EndOfStream:
			lc.State = conformpb.LiveConnectionState_LIVE_CONNECTION_STATE_END_OF_STREAM
			if c.Truncated {
				lc.Detail = "ended with part of a frame buffered, which was dropped"
			}
		default:
			lc.State = conformpb.LiveConnectionState_LIVE_CONNECTION_STATE_FAILED
			if c.Err != nil {
				lc.Detail = c.Err.Error()
			}
		}
		out.Connections = append(out.Connections, lc)
	}
	for _, s := range r.Samples {
		ls := &conformpb.LiveSample{
			Connection: uint64(s.Conn), StreamRef: s.StreamRef, Sequence: s.Sequence,
			MonotonicTimestampNs: s.MonotonicNs, SourceTimestampNs: s.SourceNs, Values: s.Values,
			SchemaKnown: s.Attribution.Known,
		}
		if s.Attribution.Known {
			ls.StreamName = s.Attribution.Name
			ls.Schema = liveSchema(s.Attribution.Schema)
		}
		out.Samples = append(out.Samples, ls)
	}
	return out
}

func liveSchema(s *streams.Schema) *conformpb.LiveSchema {
	if s == nil {
		return nil
	}
	return &conformpb.LiveSchema{SchemaId: s.ID, DescriptorLength: uint64(len(s.Descriptor))}
}

func liveCounters(c streams.Counters) *conformpb.LiveCounters {
	return &conformpb.LiveCounters{
		Arrived: c.Arrived, Untracked: c.Untracked, Missing: c.Missing, Breaks: c.Breaks,
		Duplicated: c.Duplicated, Reordered: c.Reordered, Streams: c.Streams,
	}
}

func (l *LiveParts) listenPublisher(ctx context.Context, op *conformpb.LiveListenPublisher) (*conformpb.LivePublisherListening, error) {
	p, err := l.NewPublisher(ctx, live.PublisherConfig{
		Patience:    millis(op.GetPatienceMs(), 0),
		WriteBuffer: int(op.GetSendBuffer()),
	})
	if err != nil {
		return nil, err
	}
	lp := &livePublisher{p: p}
	refs, err := lp.open(op.GetStreams())
	if err != nil {
		p.Close()
		return nil, err
	}
	h := l.handles
	h.mu.Lock()
	id := h.add(func(id uint32) { h.pubs[id] = lp })
	h.trim()
	h.mu.Unlock()
	return &conformpb.LivePublisherListening{Publisher: id, Address: p.Addr(), StreamRefs: refs}, nil
}

// open declares streams in order and returns their references.
func (lp *livePublisher) open(specs []*conformpb.LiveStream) ([]uint32, error) {
	var refs []uint32
	for _, sp := range specs {
		info := &messagepb.StreamInfo{Name: sp.GetName(), Node: sp.GetNode(), SourceClockDomain: sp.GetSourceClockDomain()}
		if sp.GetSchemaId() != "" {
			info.Schema = &messagepb.SchemaInfo{SchemaId: sp.GetSchemaId()}
		}
		st, err := lp.p.Open(info)
		if err != nil {
			return nil, fmt.Errorf("opening stream %q: %w", sp.GetName(), err)
		}
		lp.mu.Lock()
		lp.streams = append(lp.streams, st)
		lp.mu.Unlock()
		refs = append(refs, st.Ref())
	}
	return refs, nil
}

func (l *LiveParts) publishLive(ctx context.Context, op *conformpb.LivePublish) (*conformpb.LivePublished, error) {
	h := l.handles
	h.mu.Lock()
	lp, ok := h.pubs[op.GetPublisher()]
	h.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("no publisher %d", op.GetPublisher())
	}
	refs, err := lp.open(op.GetOpen())
	if err != nil {
		return nil, err
	}
	lp.mu.Lock()
	sts := append([]*live.PublishedStream(nil), lp.streams...)
	lp.mu.Unlock()
	var calls []func()
	for _, s := range op.GetSamples() {
		if int(s.GetStream()) >= len(sts) {
			return nil, fmt.Errorf("no stream handle %d (the publisher has %d)", s.GetStream(), len(sts))
		}
		st := sts[s.GetStream()]
		src, values := s.GetSourceTimestampNs(), s.GetValues()
		for range max(1, s.GetCount()) {
			calls = append(calls, func() { st.Publish(src, values) })
		}
	}
	attached := func(cs []live.ConnStats) int {
		n := 0
		for _, c := range cs {
			if c.Attached {
				n++
			}
		}
		return n
	}
	if w := int(op.GetWaitSubscribers()); w > 0 {
		wctx, cancel := context.WithTimeout(ctx, millis(op.GetWaitTimeoutMs(), defaultWaitTimeout))
		lp.p.WaitConnections(wctx, func(cs []live.ConnStats) bool { return attached(cs) >= w })
		cancel()
	}
	out := &conformpb.LivePublished{StreamRefs: refs, Subscribers: uint32(attached(lp.p.Connections()))}
	if n := int(op.GetConcurrency()); n > 1 {
		var next sync.Mutex
		i := 0
		var wg sync.WaitGroup
		for range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					next.Lock()
					if i >= len(calls) {
						next.Unlock()
						return
					}
					call := calls[i]
					i++
					next.Unlock()
					call()
				}
			}()
		}
		wg.Wait()
	} else {
		for _, call := range calls {
			call()
		}
	}
	out.Published = uint64(len(calls))
	if d := op.GetDrainTimeoutMs(); d > 0 {
		dctx, cancel := context.WithTimeout(ctx, millis(d, 0))
		lp.p.WaitConnections(dctx, func(cs []live.ConnStats) bool {
			for _, c := range cs {
				if c.Attached && !c.Done && c.Pending > 0 {
					return false
				}
			}
			return true
		})
		cancel()
	}
	return out, nil
}

func (l *LiveParts) close(op *conformpb.LiveClose) {
	h := l.handles
	h.mu.Lock()
	sub := h.subs[op.GetSubscriber()]
	delete(h.subs, op.GetSubscriber())
	pub := h.pubs[op.GetPublisher()]
	delete(h.pubs, op.GetPublisher())
	h.mu.Unlock()
	if sub != nil {
		sub.Close()
	}
	if pub != nil {
		pub.p.Close()
	}
}
