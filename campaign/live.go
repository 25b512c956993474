package campaign

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/conform-suite/conform/campaign/gen"
	"github.com/conform-suite/conform/live/peer"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/reports"
	"github.com/conform-suite/conform/sut"
	"github.com/conform-suite/conform/sut/impl"
	"google.golang.org/protobuf/proto"
)

// Live targets drive the SUT over a real socket: the harness plays the
// peer on loopback, sends the input as generated traffic, and reads back
// the SUT's report, which is compared with the reference's report of the
// same traffic. Their inputs are not batched: each is one connection.

// liveBudget bounds the bytes one live input may put on a socket; larger
// inputs (the 16 MiB boundary seeds of frame reading) are not sent.
const liveBudget = 1 << 20

// Waits of a live input: the SUT's dial, and its report once the harness
// has ended the stream.
const (
	liveDialTimeout   = 2 * time.Second
	liveReportTimeout = 2 * time.Second
)

// A liveEvaluator is how the engine plays the inputs of a live target: a
// kind a target's declaration names (gen.Live).
type liveEvaluator struct {
	// evaluate plays inputs, each one connection or subscription, and
	// returns what differed.
	evaluate func(e *Engine, ctx context.Context, t *Target, inputs []proto.Message) ([]Observation, error)
	// asBuilt is set when the reports compared are built by conform from
	// what it read (a transcript decoded), not answers of the SUT.
	asBuilt bool
}

// liveEvaluatorOf returns the evaluator of a live kind.
func liveEvaluatorOf(k gen.Live) (liveEvaluator, bool) {
	switch k {
	case gen.LiveSubscriber:
		return liveEvaluator{evaluate: (*Engine).evaluateSubscribe}, true
	case gen.LivePublisher:
		return liveEvaluator{evaluate: (*Engine).evaluatePublish, asBuilt: true}, true
	case gen.LiveDopplerSub:
		return liveEvaluator{evaluate: (*Engine).evaluateDoppler}, true
	}
	return liveEvaluator{}, false
}

// evaluateSubscribe plays each input as one connection to the SUT and one
// to the reference.
func (e *Engine) evaluateSubscribe(ctx context.Context, t *Target, inputs []proto.Message) ([]Observation, error) {
	return evaluateEach(ctx, e, t, inputs, func(ctx context.Context, in proto.Message, do doFunc) (*conformpb.LiveReport, error) {
		writes, ok := liveWrites(in.(*conformpb.ReadFrames).GetInputs()[0])
		if !ok {
			return nil, errSkip
		}
		rep, err := subscribeOnce(ctx, writes, do)
		normalizeReport(rep)
		return rep, err
	})
}

// doFunc sends one request to one side of a live input: the SUT or the
// reference.
type doFunc func(context.Context, *conformpb.Request) (*conformpb.Response, error)

// errSkip says an input proves nothing either way: it cannot be played
// (too large for a socket, say), or timing decided what was observed.
var errSkip = errors.New("the input cannot be judged")

// errCut says a side's play returned the report it had when its wait ran
// out, before the traffic's end was seen. The reference's cut report is no
// oracle (on a loaded machine one made a difference that did not replay),
// so the input is left out. The SUT's is judged as it stands: the target's
// wait is what it gives every SUT (the doppler and publish targets' last
// at least the campaign's --timeout).
var errCut = errors.New("the report was cut by its wait")

// evaluateEach plays each input against the reference and the SUT,
// concurrently, and judges the SUT's report against the reference's. An
// input either side's play returns errSkip for, or the reference cannot
// play (errCut included), is left out.
func evaluateEach[R proto.Message](ctx context.Context, e *Engine, t *Target, inputs []proto.Message, play func(context.Context, proto.Message, doFunc) (R, error)) ([]Observation, error) {
	ref := func(ctx context.Context, req *conformpb.Request) (*conformpb.Response, error) {
		return e.ref.Handle(ctx, req), nil
	}
	sut := func(ctx context.Context, req *conformpb.Request) (*conformpb.Response, error) {
		octx, cancel := context.WithTimeout(ctx, e.Timeout)
		defer cancel()
		return e.Client.Do(octx, req)
	}
	var obs []Observation
	for i, in := range inputs {
		var want R
		var refErr error
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			want, refErr = play(ctx, in, ref)
		}()
		got, err := play(ctx, in, sut)
		wg.Wait()
		if errors.Is(err, errCut) {
			err = nil
		}
		if ctx.Err() != nil {
			return obs, ctx.Err()
		}
		if refErr != nil || errors.Is(err, errSkip) {
			e.Skipped++
			continue
		}
		ob, stop := e.liveObservation(t, i, t.entry(in), err, got, want)
		if stop != nil {
			return obs, stop
		}
		if ob != nil {
			obs = append(obs, *ob)
		}
	}
	return obs, ctx.Err()
}

// liveObservation judges one live input, whose entry is entry: the SUT's
// error, or how its report differs from the reference's, by what the
// declaration says of the report for that input. It returns errUnsupported
// when the SUT does not implement the live op.
func (e *Engine) liveObservation(t *Target, i int, entry proto.Message, err error, got, ref proto.Message) (*Observation, error) {
	var se *sut.Error
	var unimpl *impl.UnimplementedError
	switch {
	case errors.As(err, &unimpl):
		e.unsupported[t.Name] = "the SUT answered Unimplemented: " + unimpl.Detail
		return nil, errUnsupported
	case errors.As(err, &se):
		e.streak++
		e.Restarts++
		kind, detail := string(se.Kind), ""
		if se.Kind == reports.KindCrash {
			detail = normalizeExit(se.Exit)
		}
		return &Observation{Signature: Signature(t.Name, kind, detail), Kind: kind, Detail: detail, Index: i, Err: se}, nil
	case err != nil:
		return &Observation{Signature: Signature(t.Name, KindError, ""), Kind: KindError, Index: i, SUTText: err.Error()}, nil
	}
	e.streak = 0
	if paths := e.oracle(t).compare(entry, got, ref); len(paths) > 0 {
		return &Observation{Signature: Signature(t.Name, KindDiff, topLevel(paths)), Kind: KindDiff,
			Detail: strings.Join(paths, ","), Index: i, SUT: got, Ref: ref, entry: entry}, nil
	}
	return nil, nil
}

// liveResult returns a response's live result, an Unimplemented answer as
// an *impl.UnimplementedError, an Error answer as an error.
func liveResult(resp *conformpb.Response) (*conformpb.LiveResult, error) {
	switch r := resp.GetResult().(type) {
	case *conformpb.Response_Live:
		return r.Live, nil
	case *conformpb.Response_Unimplemented:
		return nil, &impl.UnimplementedError{Detail: r.Unimplemented.GetDetail()}
	case *conformpb.Response_Error:
		return nil, errors.New(r.Error.GetMessage())
	}
	return nil, errors.New("answered a live op with the result of another op")
}

// liveWrites returns an input's chunks as socket writes, or false when
// they are more than a live input may send.
func liveWrites(in *conformpb.ReadInput) ([][]byte, bool) {
	var writes [][]byte
	total := uint64(0)
	for _, c := range in.GetChunks() {
		total += uint64(len(c.GetData())) + c.GetFill().GetLength()
		if total > liveBudget {
			return nil, false
		}
		b, err := impl.Expand(c)
		if err != nil {
			return nil, false
		}
		if len(b) > 0 {
			writes = append(writes, b)
		}
	}
	return writes, true
}

// subscribeOnce has one side (SUT or reference, through do) subscribe to a
// harness publisher, sends it writes, ends the stream, and returns the
// side's report. A sut.Error from do is returned as is; an Unimplemented
// answer as an *impl.UnimplementedError; a failure of the harness's own
// peer as another error. A report whose wait for the stream's end ran out
// is returned with errCut.
func subscribeOnce(ctx context.Context, writes [][]byte, do doFunc) (*conformpb.LiveReport, error) {
	pub, err := peer.ListenPublisher(ctx, peer.Limits{})
	if err != nil {
		return nil, fmt.Errorf("harness publisher: %w", err)
	}
	defer pub.Close()
	liveOp := func(op *conformpb.LiveOp) (*conformpb.LiveResult, error) {
		return doLive(ctx, do, op)
	}
	sub, err := liveOp(&conformpb.LiveOp{Op: &conformpb.LiveOp_Subscribe{Subscribe: &conformpb.LiveSubscribe{
		Address: pub.Addr(), StreamName: "fuzz", DialTimeoutMs: uint32(liveDialTimeout / time.Millisecond)}}})
	if err != nil {
		return nil, err
	}
	handle := sub.GetSubscribed().GetSubscriber()
	defer liveOp(&conformpb.LiveOp{Op: &conformpb.LiveOp_Close{Close: &conformpb.LiveClose{Subscriber: handle}}})
	actx, cancel := context.WithTimeout(ctx, liveDialTimeout)
	defer cancel()
	conn, err := pub.Accept(actx)
	if err != nil {
		return nil, fmt.Errorf("the subscriber never connected: %w", err)
	}
	defer conn.Close()
	if _, err := conn.WaitRequest(actx); err != nil {
		return nil, fmt.Errorf("the subscriber sent no Request: %w", err)
	}
	// A subscriber that closes on a framing error may refuse the rest of
	// the writes; that is its report's business, not an error.
	_ = conn.Write(actx, peer.Whole(), writes...)
	_ = conn.CloseWrite()
	rep, err := liveOp(&conformpb.LiveOp{Op: &conformpb.LiveOp_Report{Report: &conformpb.LiveReportOp{
		Subscriber: handle, Until: &conformpb.LiveUntil{Ended: 1}, TimeoutMs: uint32(liveReportTimeout / time.Millisecond)}}})
	if err != nil {
		return nil, err
	}
	if rep.GetReport().GetTimedOut() {
		return rep.GetReport(), fmt.Errorf("%w: the side did not see the stream's end within %v", errCut, liveReportTimeout)
	}
	return rep.GetReport(), nil
}

// normalizeReport clears what differs between two runs of the same
// traffic: connection identifiers and addresses, which each side chooses,
// and the words of a detail.
func normalizeReport(r *conformpb.LiveReport) {
	if r == nil {
		return
	}
	for _, c := range r.GetConnections() {
		c.Connection, c.Address, c.LocalAddress, c.Detail = 0, "", "", ""
	}
	for _, s := range r.GetSamples() {
		s.Connection = 0
	}
}
