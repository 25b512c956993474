package campaign

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/conform-suite/conform/campaign/gen"
	"github.com/conform-suite/conform/cases"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/reports"
	"github.com/conform-suite/conform/suite"
	"github.com/conform-suite/conform/sut"
	"github.com/conform-suite/conform/sut/impl"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// DefaultTimeout bounds one op when Engine.Timeout is zero.
const DefaultTimeout = 10 * time.Second

// Kinds of finding. The names are fixed: finding files and scripts read
// them. crash, timeout and protocol are sut.ErrorKind's names.
const (
	KindDiff     = "diff"     // the SUT's answer differs from the reference's
	KindError    = "error"    // the SUT answered Error where the reference answered
	KindCrash    = "crash"    // the SUT exited or the connection was lost
	KindTimeout  = "timeout"  // the SUT did not answer within the op timeout
	KindProtocol = "protocol" // the SUT broke conform.v1
)

// Minimisation budgets, in SUT executions per finding. A timeout is never
// minimised: each test would cost a whole op timeout.
const (
	minimizeDiffBudget  = 400
	minimizeFaultBudget = 24
)

// DefaultMinimizeFor bounds the minimisation of one finding in time when
// Engine.MinimizeFor is zero: a live input the SUT never answers costs a
// whole collect wait per test, and 400 of them would stall a campaign.
const DefaultMinimizeFor = time.Minute

// An Engine runs inputs of targets against one SUT and the reference, in
// batches, and reports what differs. One goroutine uses an Engine at a
// time.
type Engine struct {
	// Client reaches the SUT. Carriers restart a crashed SUT on the next
	// op; a hung one is killed when its op times out.
	Client sut.Client
	// Spec is the --sut value, for findings.
	Spec  string
	Seeds *Seeds
	// Seed is the campaign seed: with the seed pool it fixes every input.
	Seed int64
	// Timeout bounds each op sent to the SUT.
	Timeout time.Duration
	// MinimizeFor bounds the minimisation of one finding; zero means
	// DefaultMinimizeFor.
	MinimizeFor time.Duration
	// Broker, if set, returns the URL (nats://host:port) of the NATS
	// server the doppler live target publishes on; without it that target
	// is unsupported.
	Broker func(context.Context) (string, error)

	ref *impl.Impl
	// targets are the fuzz targets of the registry the engine was made
	// with: those a unit or a finding file may name.
	targets []*Target
	// known holds the signatures already reported (or already on disk),
	// so that a finding is reported once.
	known map[string]bool
	// unsupported holds the targets the SUT answered Unimplemented for.
	unsupported map[string]string

	// Execs counts inputs run; Restarts counts SUT errors after which the
	// carrier restarts or reconnects the SUT.
	Execs    uint64
	Restarts int
	// Skipped counts the inputs, among Execs, that proved nothing either
	// way and were not judged: a live input too large to send or decided
	// by timing, an input too large for the carrier's message limit.
	Skipped uint64
	// Judged counts the inputs, among Execs, whose answers were compared
	// with the reference's: a campaign whose SUT answered nothing (it hung
	// past the campaign's end, it implements no target) judged none.
	Judged uint64
	// Unconfirmed counts answers that differed from the reference's once
	// and not when their inputs ran again: not findings (a finding must
	// replay), but worth a look if there are many.
	Unconfirmed uint64
	// streak counts requests in a row the SUT failed to answer at all.
	streak int
}

// MaxFailStreak is how many requests in a row a SUT may fail to answer
// (crash, hang, break the protocol) before the campaign presumes it lost
// and stops, so that a rig whose device is gone does not burn through its
// inputs: fix the rig and --resume.
const MaxFailStreak = 16

// ErrSUTLost is returned when the SUT failed MaxFailStreak requests in a
// row.
var ErrSUTLost = errors.New("the SUT failed every request in a row; presumed lost (fix it and --resume)")

// NewEngine returns an engine comparing a SUT with a fresh reference of
// reg, on reg's fuzz targets. known lists signatures already reported,
// which are not reported again.
func NewEngine(client sut.Client, reg *suite.Registry, spec string, seeds *Seeds, seed int64, timeout time.Duration, known []string) *Engine {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	e := &Engine{Client: client, Spec: spec, Seeds: seeds, Seed: seed, Timeout: timeout,
		ref: reg.Reference(), targets: Targets(reg), known: map[string]bool{}, unsupported: map[string]string{}}
	for _, s := range known {
		e.known[s] = true
	}
	return e
}

// Targets returns the fuzz targets the engine knows, sorted by name.
func (e *Engine) Targets() []*Target { return e.targets }

// Lookup returns the target named name.
func (e *Engine) Lookup(name string) (*Target, bool) { return Lookup(e.targets, name) }

// Unsupported reports why the SUT does not implement a target, or "".
func (e *Engine) Unsupported(t *Target) string { return e.unsupported[t.Name] }

// Known reports whether a signature has already been reported.
func (e *Engine) Known(sig string) bool { return e.known[sig] }

// Input returns input i of target t: the i-th seed while seeds last, then a
// mutated seed or a generated input, fixed by the campaign seed and i.
func (e *Engine) Input(t *Target, i uint64) proto.Message {
	seeds := e.Seeds.For(t)
	if i < uint64(len(seeds)) {
		return proto.Clone(seeds[i].Input)
	}
	g := gen.New(rand.New(rand.NewPCG(uint64(e.Seed), hashString(t.Name)^(i*0x9E3779B97F4A7C15))), t.decl.Format)
	light := e.Seeds.light[t.Name]
	var in proto.Message
	if len(light) == 0 || g.Chance(0.2) {
		in = t.generate(g)
	} else {
		in = proto.Clone(seeds[light[g.IntN(len(light))]].Input)
		other := seeds[light[g.IntN(len(light))]].Input
		for n := 1 + g.IntN(3); n > 0; n-- {
			g.Mutate(in, other, t.decl.Mutate)
		}
	}
	l := in.ProtoReflect().Mutable(t.list).List()
	if l.Len() > 1 {
		l.Truncate(1)
	}
	if l.Len() == 0 || proto.Size(in) > 4*gen.MaxInputBytes {
		in = t.generate(g)
	}
	t.clamp(in)
	return in
}

// An Observation is one problem a batch showed: a difference on one input,
// or a failure of the batch as a whole.
type Observation struct {
	Signature string
	Kind      string
	// Detail is what the signature is made of besides target and kind: the
	// differing field paths, or a crash's exit status.
	Detail string
	// Index is the input's position in the batch, or -1 when the batch as a
	// whole failed.
	Index int
	// SUT and Ref are the two answers to the input (diff), or the SUT's
	// error message (error).
	SUT, Ref proto.Message
	SUTText  string
	// Err is the carrier's error (crash, timeout, protocol).
	Err *sut.Error
	// entry is the entry of the input that SUT and Ref answer, which
	// canonicalPair needs to render the evidence; nil when unknown.
	entry proto.Message
}

// Signature names a finding: its target, kind and what differed, never the
// values, so that one bug met many times is one finding.
func Signature(target, kind, detail string) string {
	h := fnv.New32a()
	h.Write([]byte(kind + "|" + detail))
	return fmt.Sprintf("%s.%s-%08x", target, kind, h.Sum32())
}

// errUnsupported ends a batch of a target the SUT does not implement.
var errUnsupported = errors.New("target unimplemented by the SUT")

// Evaluate runs inputs of t on the SUT and the reference, in requests
// bounded like cases.Batched's, and returns what differed. It returns an
// error only when ctx ends or the SUT does not implement the target.
func (e *Engine) Evaluate(ctx context.Context, t *Target, inputs []proto.Message) ([]Observation, error) {
	if why := e.unsupported[t.Name]; why != "" {
		return nil, errUnsupported
	}
	e.Execs += uint64(len(inputs))
	if t.live != nil {
		skipped := e.Skipped
		obs, err := t.live.evaluate(e, ctx, t, inputs)
		if err == nil {
			e.Judged += uint64(len(inputs)) - (e.Skipped - skipped)
		}
		return obs, err
	}
	var obs []Observation
	// On a carrier that limits a message's size (a NATS broker's
	// max_payload), a request's inputs take a share of the limit, as the
	// cases' batches do, and an input that does not fit even alone is not
	// sent: the carrier cannot carry it, whatever the SUT would answer.
	budget, limit := cases.MaxBatchBytes, 0
	if l, ok := e.Client.(interface{ MaxMessage() int }); ok {
		limit = l.MaxMessage()
		budget = cases.BatchBytes(limit)
	}
	// Inputs travel together only when they share their op-level fields.
	groups := map[string][]int{}
	var order []string
	for i, in := range inputs {
		if limit > 0 && proto.Size(in) > limit/cases.LimitShare {
			e.Skipped++
			continue
		}
		k := t.groupKey(in)
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], i)
	}
	for _, k := range order {
		idx := groups[k]
		for start := 0; start < len(idx); {
			end, size := start, 0
			for end < len(idx) && end-start < cases.MaxBatchInputs && (end == start || size+proto.Size(inputs[idx[end]]) <= budget) {
				size += proto.Size(inputs[idx[end]])
				end++
			}
			batch := make([]proto.Message, end-start)
			for j := range batch {
				batch[j] = inputs[idx[start+j]]
			}
			o, err := e.evaluateRequest(ctx, t, batch)
			if err != nil {
				return obs, err
			}
			for _, ob := range o {
				if ob.Index >= 0 {
					ob.Index = idx[start+ob.Index]
				}
				obs = append(obs, ob)
			}
			start = end
		}
	}
	return obs, ctx.Err()
}

func (e *Engine) evaluateRequest(ctx context.Context, t *Target, batch []proto.Message) ([]Observation, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	req := t.request(batch)
	var refResp *conformpb.Response
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		refResp = e.ref.Handle(ctx, req)
	}()
	octx, cancel := context.WithTimeout(ctx, e.Timeout)
	// The reference only reads req; the carrier sets its id, a field the
	// reference does not read.
	resp, err := e.Client.Do(octx, req)
	cancel()
	wg.Wait()
	if err == nil {
		e.streak = 0
	} else {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		e.streak++
		var se *sut.Error
		if !errors.As(err, &se) {
			se = &sut.Error{Kind: reports.KindProtocol, Detail: "conform.v1 failed", Err: err}
		}
		e.Restarts++
		kind, detail := string(se.Kind), ""
		switch se.Kind {
		case reports.KindCrash:
			detail = normalizeExit(se.Exit)
		case reports.KindTimeout, reports.KindProtocol:
		default:
			kind = KindCrash
			detail = string(se.Kind)
		}
		return []Observation{{Signature: Signature(t.Name, kind, detail), Kind: kind, Detail: detail, Index: -1, Err: se}}, nil
	}
	refOuts, refAns, _ := t.outputs(refResp)
	if refAns != answerOK && len(batch) > 1 {
		// The reference refused the request as a whole (an input it
		// cannot carry out): compare each half on its own, down to the
		// inputs it refuses.
		var obs []Observation
		half := len(batch) / 2
		for _, part := range [][2]int{{0, half}, {half, len(batch)}} {
			o, err := e.evaluateRequest(ctx, t, batch[part[0]:part[1]])
			if err != nil {
				return obs, err
			}
			for _, ob := range o {
				if ob.Index >= 0 {
					ob.Index += part[0]
				}
				obs = append(obs, ob)
			}
		}
		return obs, nil
	}
	outs, ans, msg := t.outputs(resp)
	// Output k answers entry k of the request. An input of a campaign holds
	// one entry; an input read from a finding file may hold several, and
	// then several outputs answer it.
	owner := make([]int, 0, len(refOuts))
	entries := make([]proto.Message, 0, len(refOuts))
	for i, in := range batch {
		l := t.entries(in)
		for j := 0; j < l.Len(); j++ {
			owner = append(owner, i)
			var entry proto.Message
			if t.list.Kind() == protoreflect.MessageKind {
				entry = l.Get(j).Message().Interface()
			}
			entries = append(entries, entry)
		}
	}
	switch {
	case ans == answerUnimplemented:
		e.unsupported[t.Name] = "the SUT answered Unimplemented: " + msg
		return nil, errUnsupported
	case ans == answerError && refAns == answerError:
		// The SUT and the reference both refused the whole request (its
		// fills expand past the bound, say): they agree, and agreement is
		// the verdict "no finding".
		e.Judged += uint64(len(batch))
		return nil, nil
	case ans == answerError:
		return []Observation{{Signature: Signature(t.Name, KindError, ""), Kind: KindError, Index: -1, SUTText: msg}}, nil
	case refAns != answerOK:
		d := "reference refused the op"
		return []Observation{{Signature: Signature(t.Name, KindDiff, d), Kind: KindDiff, Detail: d, Index: -1, SUTText: "answered where the reference could not"}}, nil
	case ans == answerOtherOp:
		return []Observation{{Signature: Signature(t.Name, KindProtocol, "other op"), Kind: KindProtocol, Detail: "other op", Index: -1, SUTText: "answered with " + msg}}, nil
	case len(refOuts) != len(owner):
		return nil, fmt.Errorf("%s: the reference answered %d outputs to %d entries", t.Name, len(refOuts), len(owner))
	case len(outs) != len(refOuts):
		d := "output count"
		return []Observation{{Signature: Signature(t.Name, KindProtocol, d), Kind: KindProtocol, Detail: d, Index: -1,
			SUTText: fmt.Sprintf("%d entries, %d outputs", len(owner), len(outs))}}, nil
	}
	e.Judged += uint64(len(batch))
	var obs []Observation
	o := e.oracle(t)
	for k := range outs {
		if sameBytes(outs[k], refOuts[k]) {
			continue
		}
		paths := o.compare(entries[k], outs[k], refOuts[k])
		if len(paths) == 0 {
			continue
		}
		// The signature is made of the answer's top-level fields that
		// differ: one bug shows in the same fields however deep in a list
		// it strikes. Detail keeps the full paths for the person reading.
		obs = append(obs, Observation{Signature: Signature(t.Name, KindDiff, topLevel(paths)), Kind: KindDiff,
			Detail: strings.Join(paths, ","), Index: owner[k], SUT: outs[k], Ref: refOuts[k], entry: entries[k]})
	}
	return obs, nil
}

// normalizeExit keeps what names how a process ended ("signal: aborted",
// "exit status 2") and drops the rest.
func normalizeExit(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.Index(s, " (core dumped)"); i >= 0 {
		s = s[:i]
	}
	return s
}

// reproduces reports whether inputs still show the observation sig.
func (e *Engine) reproduces(ctx context.Context, t *Target, inputs []proto.Message, sig string) (Observation, bool) {
	obs, err := e.Evaluate(ctx, t, inputs)
	if err != nil {
		return Observation{}, false
	}
	for _, o := range obs {
		if o.Signature == sig {
			return o, true
		}
	}
	return Observation{}, false
}

// isolate narrows a batch that failed as a whole to the smallest part of
// it that still fails the same way, halving while one half does.
func (e *Engine) isolate(ctx context.Context, t *Target, inputs []proto.Message, ob Observation) ([]proto.Message, Observation) {
	for len(inputs) > 1 && ctx.Err() == nil {
		half := len(inputs) / 2
		if o, ok := e.reproduces(ctx, t, inputs[:half], ob.Signature); ok {
			inputs, ob = inputs[:half], o
			continue
		}
		if o, ok := e.reproduces(ctx, t, inputs[half:], ob.Signature); ok {
			inputs, ob = inputs[half:], o
			continue
		}
		break
	}
	return inputs, ob
}

// topLevel returns the distinct first elements of field paths, sorted and
// joined: "end,yields" for "end", "yields.len" and "yields[].frames.len".
func topLevel(paths []string) string {
	var out []string
	for _, p := range paths {
		if i := strings.IndexAny(p, ".["); i >= 0 {
			p = p[:i]
		}
		if len(out) == 0 || out[len(out)-1] != p {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return strings.Join(slices.Compact(out), ",")
}
