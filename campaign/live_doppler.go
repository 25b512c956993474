package campaign

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/nats-io/nats.go"
	"google.golang.org/protobuf/proto"

	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/proto/conform/v1/meaning"
	dp "github.com/conform-suite/conform/ref/doppler"
	"github.com/conform-suite/conform/sut/impl"
)

// doppler.live-subscribe drives the SUT as a doppler SUB socket on a real
// NATS server. For each input — a list of messages, the input of
// doppler.reassemble — the side (SUT or reference) joins as a SUB on a base
// of its own; conform publishes the messages on the base's subject, then a
// conforming sentinel frame, and collects what the socket delivered and
// refused until the sentinel is handled (a socket handles one
// subscription's messages in order, doppler §6). The two event lists are
// compared: the header check's verdicts (§3), reassembly (§4), delivery,
// and the subject the socket derived from its endpoint (§5), on the socket
// the binding's users would use.
//
// The SUB subscribes to the one type every header of the input claims,
// when they agree on one, and to every type otherwise: a frame of another
// type on a typed subject is a case the spec leaves open.

// Waits of a doppler live input: conform's dial and publish, and the
// collection of events, which ends as soon as the sentinel is handled. The
// collection waits the campaign's --timeout when that is longer: a
// conforming socket hands the sentinel on long before, and only a loaded
// machine comes near it.
const (
	dopplerConnectWait = 3 * time.Second
	dopplerCollectWait = 3 * time.Second
	dopplerCollectStep = 500 // milliseconds, one collect op's wait
)

// dopplerSentinelSeq is the sentinel's sequence, one no generated frame
// uses.
const dopplerSentinelSeq = 1 << 40

// dopplerLiveBudget bounds the bytes one input publishes.
const dopplerLiveBudget = 256 << 10

// errNoBroker says the engine was given no NATS server.
var errNoBroker = errors.New("no NATS server: give --nats-url, or let conform start one embedded")

// evaluateDoppler plays each input to a SUB of the SUT and one of the
// reference, each on a base of its own, and compares their events.
func (e *Engine) evaluateDoppler(ctx context.Context, t *Target, inputs []proto.Message) ([]Observation, error) {
	if e.Broker == nil {
		e.unsupported[t.Name] = errNoBroker.Error()
		return nil, errUnsupported
	}
	url, err := e.Broker(ctx)
	if err != nil {
		return nil, fmt.Errorf("%s: the NATS server: %w", t.Name, err)
	}
	nc, err := nats.Connect(url, nats.Name("conform fuzz"), nats.Timeout(dopplerConnectWait), nats.NoReconnect())
	if err != nil {
		return nil, fmt.Errorf("%s: conform cannot reach the NATS server %s: %w", t.Name, url, err)
	}
	defer nc.Close()
	return evaluateEach(ctx, e, t, inputs, func(ctx context.Context, in proto.Message, do doFunc) (*conformpb.DopplerCollectResult, error) {
		op, ok := in.(*conformpb.DopplerReassemble)
		if !ok || len(op.GetInputs()) != 1 {
			return nil, errSkip
		}
		op = closedPart(op)
		if op == nil || !publishable(op.GetInputs()[0].GetMessages(), nc.MaxPayload()) {
			return nil, errSkip
		}
		return dopplerOnce(ctx, nc, url, op, do, max(e.Timeout, dopplerCollectWait))
	})
}

// closedPart returns op with the messages the documents fix a receiver's
// behaviour for: those before the first that leaves it open
// (meaning.ReassemblyOpenFrom: an empty chunk, a message failing the header
// check mid-frame, a frame claimed above 16 MiB). The codec target compares
// a reassembly's events only up to such a message, by the message each
// event names; a live socket's events name none, so the messages from it on
// are not published at all. It returns nil when the first message already
// leaves the receiver open: nothing of the input can be judged.
func closedPart(op *conformpb.DopplerReassemble) *conformpb.DopplerReassemble {
	k := meaning.ReassemblyOpenFrom(op.GetInputs()[0])
	switch {
	case k < 0:
		return op
	case k == 0:
		return nil
	}
	cut := proto.Clone(op).(*conformpb.DopplerReassemble)
	cut.Inputs[0].Messages = cut.Inputs[0].Messages[:k]
	return cut
}

// publishable reports whether msgs fit one input's budget and the
// broker's max_payload, each being one NATS message.
func publishable(msgs [][]byte, maxPayload int64) bool {
	total := 0
	for _, m := range msgs {
		if int64(len(m)) > maxPayload {
			return false
		}
		total += len(m)
	}
	return total <= dopplerLiveBudget
}

// dopplerOnce has one side join as a SUB on a fresh base, publishes op's
// messages and the sentinel, and returns the socket's events, in order, and
// how many it dropped. A side that has not handled the sentinel when wait
// ends returns what it reported until then, and errCut.
func dopplerOnce(ctx context.Context, nc *nats.Conn, url string, op *conformpb.DopplerReassemble, do doFunc, wait time.Duration) (*conformpb.DopplerCollectResult, error) {
	ep, err := dp.ParseEndpoint(url + "/" + dp.UniqueBase("conform_fuzz_"))
	if err != nil {
		return nil, err
	}
	order := impl.DopplerOrder(op.GetOrder())
	msgs := op.GetInputs()[0].GetMessages()
	typ, typed := subscriptionType(msgs, order)
	join := &conformpb.DopplerJoin{Endpoint: ep.String(), Role: conformpb.DopplerLiveRole_DOPPLER_LIVE_ROLE_SUB, Order: op.GetOrder()}
	if typed {
		join.Type = conformpb.DopplerFrameType(typ)
	}
	joined, err := doDoppler(ctx, do, &conformpb.DopplerOp{Op: &conformpb.DopplerOp_Join{Join: join}})
	if err != nil {
		return nil, err
	}
	j := joined.GetJoin()
	if j == nil {
		return nil, errors.New("doppler join was answered with the result of another op")
	}
	if j.GetRefused() != nil {
		return &conformpb.DopplerCollectResult{Events: []*conformpb.DopplerLiveEvent{{Event: &conformpb.DopplerLiveEvent_Refused{Refused: j.GetRefused()}}}}, nil
	}
	defer doDoppler(context.WithoutCancel(ctx), do, &conformpb.DopplerOp{Op: &conformpb.DopplerOp_Leave{Leave: &conformpb.DopplerLeave{Handle: j.GetHandle()}}})

	// Sixteen bytes are whole elements of every type.
	sentinel, err := dp.NewFrame(typ, order, []byte("sentinel-sixteen"))
	if err != nil {
		return nil, err
	}
	sentinel.Header.Sequence = dopplerSentinelSeq
	subject := ep.PubSubject(typ)
	for _, m := range append(slices.Clip(msgs), sentinel.AppendMessage(nil, order)) {
		if err := nc.Publish(subject, m); err != nil {
			return nil, fmt.Errorf("publishing on %s: %w", subject, err)
		}
	}
	if err := nc.FlushTimeout(dopplerConnectWait); err != nil {
		return nil, fmt.Errorf("flushing conform's publishes: %w", err)
	}

	rep := &conformpb.DopplerCollectResult{}
	deadline := time.Now().Add(wait)
	for !sentinelHandled(rep.Events) {
		left := time.Until(deadline)
		if left <= 0 {
			return rep, fmt.Errorf("%w: the socket neither delivered nor refused the sentinel frame within %v", errCut, wait)
		}
		res, err := doDoppler(ctx, do, &conformpb.DopplerOp{Op: &conformpb.DopplerOp_Collect{Collect: &conformpb.DopplerCollect{
			Handle: j.GetHandle(), MinEvents: 1, TimeoutMs: uint32(min(left.Milliseconds()+1, dopplerCollectStep))}}})
		if err != nil {
			return nil, err
		}
		c := res.GetCollect()
		if c == nil {
			return nil, errors.New("doppler collect was answered with the result of another op")
		}
		rep.Events = append(rep.Events, c.GetEvents()...)
		rep.Dropped += c.GetDropped()
	}
	return rep, nil
}

// subscriptionType returns the type every message whose header decodes
// claims, and true, when there is one; CI16 and false otherwise.
func subscriptionType(msgs [][]byte, o dp.Order) (dp.Type, bool) {
	var typ dp.Type
	seen := false
	for _, m := range msgs {
		h, err := dp.DecodeHeader(m, o)
		if err != nil {
			continue
		}
		t, ok := dp.TypeOf(h.Kind, h.Format)
		if !ok || seen && t != typ {
			return dp.TypeCI16, false
		}
		typ, seen = t, true
	}
	if !seen {
		return dp.TypeCI16, false
	}
	return typ, true
}

// sentinelHandled reports whether the sentinel was delivered or refused.
func sentinelHandled(evs []*conformpb.DopplerLiveEvent) bool {
	for _, e := range evs {
		if f := e.GetDelivered(); f != nil && f.GetHeader().GetSequence() == dopplerSentinelSeq {
			return true
		}
		if r := e.GetRefused(); r != nil && r.GetHasSequence() && r.GetSequence() == dopplerSentinelSeq {
			return true
		}
	}
	return false
}

// doDoppler sends one doppler op and returns its result, an Unimplemented
// answer as an *impl.UnimplementedError, an Error answer as an error.
func doDoppler(ctx context.Context, do doFunc, op *conformpb.DopplerOp) (*conformpb.DopplerResult, error) {
	resp, err := do(ctx, &conformpb.Request{Op: &conformpb.Request_Doppler{Doppler: op}})
	if err != nil {
		return nil, err
	}
	switch r := resp.GetResult().(type) {
	case *conformpb.Response_Doppler:
		return r.Doppler, nil
	case *conformpb.Response_Unimplemented, *conformpb.Response_Error:
		_, err := liveResult(resp)
		return nil, err
	}
	return nil, errors.New("answered a doppler op with the result of another op")
}
