package impl

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/ref/doppler"
	"github.com/conform-suite/conform/ref/doppler/dpnats"
)

// Bounds of the live doppler sockets of one Impl. They are the reference
// SUT's choices, so that a harness that forgets to leave, or asks for too
// much, costs bounded memory and time.
const (
	// maxLiveSockets is how many sockets may be open at once.
	maxLiveSockets = 64
	// liveIdle is how long a socket may go untouched before a later join
	// closes it.
	liveIdle = 5 * time.Minute
	// maxLiveEvents is how many events a receiving socket keeps between
	// collects; later ones are counted as dropped.
	maxLiveEvents = 4096
	// maxLiveEventBytes bounds the payload bytes those events carry
	// inline (a payload up to 1 MiB is kept whole, a larger one as its
	// digest).
	maxLiveEventBytes = 64 << 20
	// maxLiveFill bounds a described payload (DopplerLiveFrame.fill_length).
	maxLiveFill = 256 << 20
	// maxCollectWait caps a collect's wait, well inside the op timeout.
	maxCollectWait = 8 * time.Second
	// The waits an op leaves at 0.
	defaultReplyWait = 2 * time.Second
	defaultFlushWait = 2 * time.Second
	defaultDrainWait = 5 * time.Second
	// answerWait bounds one ack or one reply a receiving socket sends.
	answerWait = 2 * time.Second
	// stopWait bounds leave's wait for a background receiver to end.
	stopWait = 2 * time.Second
)

// dopplerLive holds the open live sockets of one Impl, by handle.
type dopplerLive struct {
	mu      sync.Mutex
	next    uint64
	sockets map[uint64]*liveSocket
}

func newDopplerLive() *dopplerLive {
	return &dopplerLive{sockets: map[uint64]*liveSocket{}}
}

// liveSocket is one joined socket: exactly one of the role fields is set.
type liveSocket struct {
	role       conformpb.DopplerLiveRole
	maxPayload int
	used       time.Time // guarded by dopplerLive.mu

	pub  *dpnats.Publisher
	sub  *dpnats.Subscriber
	req  *dpnats.Requester
	rep  *dpnats.Replier
	push *dpnats.Pusher
	pull *dpnats.Puller
	// closer is whichever of the above is set.
	closer interface{ Close() error }

	// A receiving socket's background receiver.
	stop context.CancelFunc
	done chan struct{}

	mu      sync.Mutex
	events  []*conformpb.DopplerLiveEvent
	kept    int // payload bytes the events carry inline
	dropped uint64
	added   chan struct{} // closed, and replaced, whenever an event is kept
}

// close closes the socket at once and waits, bounded, for its receiver.
func (s *liveSocket) close() {
	if s.stop != nil {
		s.stop()
	}
	_ = s.closer.Close()
	if s.done != nil {
		select {
		case <-s.done:
		case <-time.After(stopWait):
		}
	}
}

// record keeps one event, or counts it dropped when the buffer is full.
func (s *liveSocket) record(ev *conformpb.DopplerLiveEvent) {
	n := len(ev.GetDelivered().GetPayload().GetBytes())
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.events) >= maxLiveEvents || s.kept+n > maxLiveEventBytes {
		s.dropped++
		return
	}
	s.events = append(s.events, ev)
	s.kept += n
	close(s.added)
	s.added = make(chan struct{})
}

// natsParts are the parts the live sockets are built from: the same check,
// reassembly, sender and names the codec ops use, so that a bug in one
// shows on the broker as it does in the codec.
func (d *DopplerParts) natsParts() dpnats.Parts {
	p := d.Transport
	p.Check = d.checkMessage
	p.NewReassembler = func(o doppler.Order, check func([]byte, doppler.Order) doppler.Verdict) dpnats.Reassembler {
		return d.NewReassembler(o, check)
	}
	p.NewSender = func(o doppler.Order, maxPayload int) dpnats.Sender { return d.NewSender(o, maxPayload) }
	p.Names = d.Names
	return p
}

// now reads the clock the live senders stamp frames with.
func (d *DopplerParts) now() uint64 {
	if d.Transport.Now != nil {
		return d.Transport.Now()
	}
	return dpnats.Now()
}

// liveOp answers a live op, or returns nil, nil for an op it does not know.
func (d *DopplerParts) liveOp(ctx context.Context, op *conformpb.DopplerOp) (*conformpb.DopplerResult, error) {
	if d.live == nil {
		return nil, nil
	}
	res := new(conformpb.DopplerResult)
	var err error
	switch op := op.Op.(type) {
	case *conformpb.DopplerOp_Join:
		var r *conformpb.DopplerJoinResult
		r, err = d.join(ctx, op.Join)
		res.Result = &conformpb.DopplerResult_Join{Join: r}
	case *conformpb.DopplerOp_Send:
		var r *conformpb.DopplerSendResult
		r, err = d.send(ctx, op.Send)
		res.Result = &conformpb.DopplerResult_Send{Send: r}
	case *conformpb.DopplerOp_Collect:
		var r *conformpb.DopplerCollectResult
		r, err = d.collect(ctx, op.Collect)
		res.Result = &conformpb.DopplerResult_Collect{Collect: r}
	case *conformpb.DopplerOp_Flush:
		var r *conformpb.DopplerFlushResult
		r, err = d.flush(ctx, op.Flush)
		res.Result = &conformpb.DopplerResult_Flush{Flush: r}
	case *conformpb.DopplerOp_Drain:
		var r *conformpb.DopplerDrainResult
		r, err = d.drain(ctx, op.Drain)
		res.Result = &conformpb.DopplerResult_Drain{Drain: r}
	case *conformpb.DopplerOp_Leave:
		res.Result = &conformpb.DopplerResult_Leave{Leave: d.leave(op.Leave)}
	case *conformpb.DopplerOp_Clock:
		res.Result = &conformpb.DopplerResult_Clock{Clock: &conformpb.DopplerClockResult{TimestampNs: d.now()}}
	default:
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return res, nil
}

// socket returns the open socket of a handle and marks it used.
func (d *DopplerParts) socket(handle uint64) (*liveSocket, error) {
	l := d.live
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.sockets[handle]
	if s == nil {
		return nil, fmt.Errorf("no open doppler socket has handle %d", handle)
	}
	s.used = time.Now()
	return s, nil
}

// sweep closes sockets left idle past liveIdle.
func (l *dopplerLive) sweep() {
	l.mu.Lock()
	var idle []*liveSocket
	for h, s := range l.sockets {
		if time.Since(s.used) > liveIdle {
			idle = append(idle, s)
			delete(l.sockets, h)
		}
	}
	l.mu.Unlock()
	for _, s := range idle {
		s.close()
	}
}

func (d *DopplerParts) join(ctx context.Context, op *conformpb.DopplerJoin) (*conformpb.DopplerJoinResult, error) {
	l := d.live
	l.sweep()
	l.mu.Lock()
	full := len(l.sockets) >= maxLiveSockets
	l.mu.Unlock()
	if full {
		return nil, fmt.Errorf("%d doppler sockets are open already; leave some first", maxLiveSockets)
	}
	refused := func(err error) (*conformpb.DopplerJoinResult, error) {
		return &conformpb.DopplerJoinResult{Refused: d.refusal(err)}, nil
	}
	ep, err := d.ParseEndpoint(op.Endpoint)
	if err != nil {
		return refused(err)
	}
	o := d.SocketOrder(DopplerOrder(op.Order))
	opts := dpnats.Options{Order: o, Parts: d.natsParts(), Name: "conform-doppler-" + roleName(op.Role),
		AckWait: time.Duration(op.AckWaitMs) * time.Millisecond}
	typ := func(allowAny bool) (doppler.Type, error) {
		if allowAny && op.Type == conformpb.DopplerFrameType_DOPPLER_FRAME_TYPE_UNSPECIFIED {
			return d.SubscribeTo(dpnats.AnyType), nil
		}
		t, err := DopplerType(op.Type)
		if err == nil && allowAny {
			t = d.SubscribeTo(t)
		}
		return t, err
	}
	s := &liveSocket{role: op.Role, added: make(chan struct{})}
	switch op.Role {
	case conformpb.DopplerLiveRole_DOPPLER_LIVE_ROLE_PUB:
		t, terr := typ(false)
		if terr != nil {
			return nil, fmt.Errorf("join PUB: %w", terr)
		}
		s.pub, err = dpnats.NewPublisher(ctx, ep, t, opts)
		if err == nil {
			s.maxPayload = s.pub.MaxPayload()
		}
	case conformpb.DopplerLiveRole_DOPPLER_LIVE_ROLE_SUB:
		t, terr := typ(true)
		if terr != nil {
			return nil, fmt.Errorf("join SUB: %w", terr)
		}
		s.sub, err = dpnats.NewSubscriber(ctx, ep, t, opts)
		if err == nil {
			s.maxPayload = s.sub.MaxPayload()
		}
	case conformpb.DopplerLiveRole_DOPPLER_LIVE_ROLE_REQ:
		s.req, err = dpnats.NewRequester(ctx, ep, opts)
		if err == nil {
			s.maxPayload = s.req.MaxPayload()
		}
	case conformpb.DopplerLiveRole_DOPPLER_LIVE_ROLE_REP:
		if perr := d.checkPlan(op.Reply); perr != nil {
			return nil, perr
		}
		s.rep, err = dpnats.NewReplier(ctx, ep, opts)
		if err == nil {
			s.maxPayload = s.rep.MaxPayload()
		}
	case conformpb.DopplerLiveRole_DOPPLER_LIVE_ROLE_PUSH:
		t, terr := typ(false)
		if terr != nil {
			return nil, fmt.Errorf("join PUSH: %w", terr)
		}
		s.push, err = dpnats.NewPusher(ctx, ep, t, opts)
		if err == nil {
			s.maxPayload = s.push.MaxPayload()
		}
	case conformpb.DopplerLiveRole_DOPPLER_LIVE_ROLE_PULL:
		s.pull, err = dpnats.NewPuller(ctx, ep, opts)
		if err == nil {
			s.maxPayload = s.pull.MaxPayload()
		}
	default:
		return nil, fmt.Errorf("join: role %v is not one of the six", op.Role)
	}
	if err != nil {
		return refused(err)
	}
	switch {
	case s.pub != nil:
		s.closer = s.pub
	case s.sub != nil:
		s.closer = s.sub
	case s.req != nil:
		s.closer = s.req
	case s.rep != nil:
		s.closer = s.rep
	case s.push != nil:
		s.closer = s.push
	case s.pull != nil:
		s.closer = s.pull
	}
	if s.sub != nil || s.rep != nil || s.pull != nil {
		rctx, stop := context.WithCancel(context.Background())
		s.stop, s.done = stop, make(chan struct{})
		go d.receive(rctx, s, op)
	}
	l.mu.Lock()
	l.next++
	h := l.next
	s.used = time.Now()
	l.sockets[h] = s
	l.mu.Unlock()
	return &conformpb.DopplerJoinResult{Handle: h, MaxPayload: uint64(s.maxPayload)}, nil
}

func roleName(r conformpb.DopplerLiveRole) string {
	switch r {
	case conformpb.DopplerLiveRole_DOPPLER_LIVE_ROLE_PUB:
		return "pub"
	case conformpb.DopplerLiveRole_DOPPLER_LIVE_ROLE_SUB:
		return "sub"
	case conformpb.DopplerLiveRole_DOPPLER_LIVE_ROLE_REQ:
		return "req"
	case conformpb.DopplerLiveRole_DOPPLER_LIVE_ROLE_REP:
		return "rep"
	case conformpb.DopplerLiveRole_DOPPLER_LIVE_ROLE_PUSH:
		return "push"
	case conformpb.DopplerLiveRole_DOPPLER_LIVE_ROLE_PULL:
		return "pull"
	}
	return "socket"
}

// checkPlan refuses a reply plan naming a type outside the seven.
func (d *DopplerParts) checkPlan(p *conformpb.DopplerReplyPlan) error {
	if p.GetType() == conformpb.DopplerFrameType_DOPPLER_FRAME_TYPE_UNSPECIFIED {
		return nil
	}
	if _, err := DopplerType(p.GetType()); err != nil {
		return fmt.Errorf("join REP: reply plan: %w", err)
	}
	return nil
}

// receive is a receiving socket's background receiver: it takes every frame
// and error the socket reports, answers or acks as the join said, and keeps
// an event for each, until the socket is closed.
func (d *DopplerParts) receive(ctx context.Context, s *liveSocket, op *conformpb.DopplerJoin) {
	defer close(s.done)
	for ctx.Err() == nil {
		ev, more := d.receiveOne(ctx, s, op)
		if ev != nil {
			s.record(ev)
		}
		if !more {
			return
		}
	}
}

// receiveOne receives one thing. It returns the event to keep, if any, and
// whether to go on: a socket that was closed, or whose transport failed,
// ends its receiver. A panic in a part (a mutant's) is kept as an event
// rather than taking the process down.
func (d *DopplerParts) receiveOne(ctx context.Context, s *liveSocket, op *conformpb.DopplerJoin) (ev *conformpb.DopplerLiveEvent, more bool) {
	defer func() {
		if p := recover(); p != nil {
			ev = &conformpb.DopplerLiveEvent{Event: &conformpb.DopplerLiveEvent_Refused{Refused: &conformpb.DopplerRefusal{
				Code: int32(doppler.ErrGeneric), Detail: fmt.Sprintf("panic: %v", p)}}}
			more = true
		}
	}()
	var (
		f   doppler.Frame
		err error
	)
	switch {
	case s.sub != nil:
		f, err = s.sub.Recv(ctx)
		if err == nil {
			return delivered(f), true
		}
	case s.rep != nil:
		var rq *dpnats.Request
		rq, err = s.rep.Recv(ctx)
		if err == nil {
			return d.answer(ctx, rq, op.Reply), true
		}
	case s.pull != nil:
		var dl *dpnats.Delivery
		dl, err = s.pull.Recv(ctx)
		if err == nil {
			ev := delivered(dl.Frame)
			ev.NumDelivered = dl.NumDelivered()
			if !op.NoAck {
				actx, cancel := context.WithTimeout(ctx, answerWait)
				aerr := d.Ack(actx, dl)
				cancel()
				ev.Acked = aerr == nil
				if aerr != nil {
					ev.AckRefused = d.refusals(aerr)[0]
				}
			}
			return ev, true
		}
	default:
		return nil, false
	}
	if ctx.Err() != nil || errors.Is(err, doppler.ErrClosed) {
		return nil, false
	}
	var ev0 *conformpb.DopplerLiveEvent
	for _, r := range d.refusals(err) {
		if ev0 == nil {
			ev0 = &conformpb.DopplerLiveEvent{Event: &conformpb.DopplerLiveEvent_Refused{Refused: r}}
			continue
		}
		s.record(&conformpb.DopplerLiveEvent{Event: &conformpb.DopplerLiveEvent_Refused{Refused: r}})
	}
	// A refused message or a dropped frame is the socket's ordinary work;
	// anything else means the transport failed, and the receiver stops.
	more = errors.Is(err, doppler.ErrInvalid) || errors.Is(err, doppler.ErrNoMem)
	return ev0, more
}

// answer replies to one request as the plan says and returns its event.
func (d *DopplerParts) answer(ctx context.Context, rq *dpnats.Request, plan *conformpb.DopplerReplyPlan) *conformpb.DopplerLiveEvent {
	ev := delivered(rq.Frame)
	t, ok := doppler.TypeOf(rq.Frame.Header.Kind, rq.Frame.Header.Format)
	if plan.GetType() != conformpb.DopplerFrameType_DOPPLER_FRAME_TYPE_UNSPECIFIED {
		t, ok = doppler.Type(plan.GetType()), true
	}
	payload := plan.GetPayload()
	if plan.GetEcho() {
		payload = rq.Frame.Payload
	}
	if t == doppler.TypeRaw {
		t = d.RawType
	}
	var err error
	if !ok {
		err = &doppler.Error{Code: doppler.ErrInvalid, Op: "reply", Detail: "the request's type has no reply face"}
	} else {
		rctx, cancel := context.WithTimeout(ctx, answerWait)
		err = rq.Reply(rctx, t, payload)
		cancel()
	}
	ev.Replied = err == nil
	if err != nil {
		ev.ReplyRefused = d.refusal(err)
	}
	return ev
}

// delivered is the event of a frame handed over.
func delivered(f doppler.Frame) *conformpb.DopplerLiveEvent {
	return &conformpb.DopplerLiveEvent{Event: &conformpb.DopplerLiveEvent_Delivered{Delivered: liveFrame(f)}}
}

func liveFrame(f doppler.Frame) *conformpb.DopplerFrame {
	return &conformpb.DopplerFrame{Header: DopplerHeader(f.Header), Payload: DopplerPayload(f.Payload)}
}

// livePayload returns a frame's payload, expanding a described one.
func livePayload(f *conformpb.DopplerLiveFrame) ([]byte, error) {
	if f.FillLength == 0 {
		return f.Payload, nil
	}
	if f.FillLength > maxLiveFill {
		return nil, fmt.Errorf("a fill of %d bytes exceeds the %d-byte limit", f.FillLength, maxLiveFill)
	}
	if len(f.FillPattern) == 0 {
		return nil, fmt.Errorf("a fill of %d bytes has an empty pattern", f.FillLength)
	}
	return fill(f.FillPattern, int(f.FillLength)), nil
}

// liveLength is a frame's payload length, given or described.
func liveLength(f *conformpb.DopplerLiveFrame) uint64 {
	if f.FillLength != 0 {
		return f.FillLength
	}
	return uint64(len(f.Payload))
}

func (d *DopplerParts) send(ctx context.Context, op *conformpb.DopplerSend) (*conformpb.DopplerSendResult, error) {
	s, err := d.socket(op.Handle)
	if err != nil {
		return nil, err
	}
	wait := defaultReplyWait
	if op.TimeoutMs > 0 {
		wait = time.Duration(op.TimeoutMs) * time.Millisecond
	}
	res := new(conformpb.DopplerSendResult)
	for _, fr := range op.Frames {
		out := new(conformpb.DopplerSendOutput)
		var serr error
		switch {
		case s.pub != nil:
			var payload []byte
			if payload, err = livePayload(fr); err != nil {
				return nil, err
			}
			d.Stamp(s, s.pub.SetTimestampNs, fr.TimestampNs)
			serr = s.pub.Send(ctx, payload)
		case s.push != nil:
			// The size rule comes first, so that a frame PUSH refuses is
			// never built (doppler §4).
			if serr = d.CheckPush(liveLength(fr), s.maxPayload); serr == nil {
				var payload []byte
				if payload, err = livePayload(fr); err != nil {
					return nil, err
				}
				d.Stamp(s, s.push.SetTimestampNs, fr.TimestampNs)
				serr = d.Wait(ctx, "push", func(ctx context.Context) error { return s.push.Send(ctx, payload) })
			}
		case s.req != nil:
			var payload []byte
			if payload, err = livePayload(fr); err != nil {
				return nil, err
			}
			d.Stamp(s, s.req.SetTimestampNs, fr.TimestampNs)
			t := doppler.TypeRaw
			if fr.Type != conformpb.DopplerFrameType_DOPPLER_FRAME_TYPE_UNSPECIFIED {
				if t, err = DopplerType(fr.Type); err != nil {
					return nil, fmt.Errorf("send REQ: %w", err)
				}
			}
			if t == doppler.TypeRaw {
				t = d.RawType
			}
			rctx, cancel := context.WithTimeout(ctx, wait)
			var reply doppler.Frame
			reply, serr = s.req.Request(rctx, t, payload)
			cancel()
			if serr == nil {
				out.Reply = liveFrame(reply)
			}
		default:
			return nil, fmt.Errorf("socket %d is a %s socket, which does not send", op.Handle, roleName(s.role))
		}
		if serr != nil {
			out.Refused = d.refusals(d.SendError(serr))[0]
		}
		res.Outputs = append(res.Outputs, out)
	}
	return res, nil
}

func (d *DopplerParts) collect(ctx context.Context, op *conformpb.DopplerCollect) (*conformpb.DopplerCollectResult, error) {
	s, err := d.socket(op.Handle)
	if err != nil {
		return nil, err
	}
	if s.done == nil {
		return nil, fmt.Errorf("socket %d is a %s socket, which does not receive", op.Handle, roleName(s.role))
	}
	wait := min(time.Duration(op.TimeoutMs)*time.Millisecond, maxCollectWait)
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		s.mu.Lock()
		if len(s.events) >= int(op.MinEvents) || wait == 0 {
			res := &conformpb.DopplerCollectResult{Events: s.events, Dropped: s.dropped}
			s.events, s.kept, s.dropped = nil, 0, 0
			s.mu.Unlock()
			return res, nil
		}
		added := s.added
		s.mu.Unlock()
		select {
		case <-added:
		case <-timer.C:
			wait = 0
		case <-ctx.Done():
			wait = 0
		}
	}
}

func (d *DopplerParts) flush(ctx context.Context, op *conformpb.DopplerFlush) (*conformpb.DopplerFlushResult, error) {
	s, err := d.socket(op.Handle)
	if err != nil {
		return nil, err
	}
	if s.pub == nil {
		return nil, fmt.Errorf("socket %d is a %s socket; only PUB flushes (doppler §6b)", op.Handle, roleName(s.role))
	}
	wait := defaultFlushWait
	if op.TimeoutMs > 0 {
		wait = time.Duration(op.TimeoutMs) * time.Millisecond
	}
	fctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	res := new(conformpb.DopplerFlushResult)
	if err := d.Wait(fctx, "flush", s.pub.Flush); err != nil {
		res.Refused = d.refusal(err)
	}
	return res, nil
}

func (d *DopplerParts) drain(ctx context.Context, op *conformpb.DopplerDrain) (*conformpb.DopplerDrainResult, error) {
	s, err := d.socket(op.Handle)
	if err != nil {
		return nil, err
	}
	wait := defaultDrainWait
	if op.TimeoutMs > 0 {
		wait = time.Duration(op.TimeoutMs) * time.Millisecond
	}
	dctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	var drain func(context.Context) error
	switch {
	case s.pub != nil:
		drain = s.pub.Drain
	case s.sub != nil:
		drain = s.sub.Drain
	case s.req != nil:
		drain = s.req.Drain
	case s.rep != nil:
		drain = s.rep.Drain
	case s.push != nil:
		drain = s.push.Drain
	case s.pull != nil:
		drain = s.pull.Drain
	}
	derr := d.Wait(dctx, "drain", drain)
	res := new(conformpb.DopplerDrainResult)
	if derr != nil {
		res.Refused = d.refusals(derr)[0]
	}
	return res, nil
}

func (d *DopplerParts) leave(op *conformpb.DopplerLeave) *conformpb.DopplerLeaveResult {
	l := d.live
	l.mu.Lock()
	s := l.sockets[op.Handle]
	delete(l.sockets, op.Handle)
	l.mu.Unlock()
	if s == nil {
		return &conformpb.DopplerLeaveResult{}
	}
	s.close()
	return &conformpb.DopplerLeaveResult{Known: true}
}
