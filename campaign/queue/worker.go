package queue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// RunWorker runs units of ep's campaign until ctx ends, and then returns
// ctx.Err(). It waits for the campaign when its coordinator has not created
// it yet.
//
// It takes one unit at a time from the shared work queue and calls run with
// it. run calls report for each finding; report returns once the findings
// stream has stored the finding, or found one of that signature there
// already, and returns an error otherwise, which run should return. While
// run works, RunWorker keeps the unit alive in the queue so that a long unit
// is not redelivered; a worker that dies stops doing so, and the unit goes to
// another worker after the campaign's AckWait.
//
// When run returns nil the unit's outcome is recorded in the done stream and
// only then is the unit acknowledged. When run returns an error (or
// panics), the unit is redelivered after Options.RetryDelay, until its
// campaign's MaxAttempts-th delivery fails too: then it is recorded as failed
// and acknowledged, so that the campaign still ends. When ctx ends while run
// works, the unit is handed back at once for another worker; that delivery
// counts towards MaxAttempts.
//
// Before it takes a unit, the worker settles the campaign's identity: it
// publishes its own (o.Identity) in its worker record, and o.Admit, given
// the identity stored with the campaign, decides whether it may run it.
// When Admit refuses, the refusal is recorded in the worker record, for the
// coordinator to show, and RunWorker returns a *RefusedError. So does it
// when run returns an error made by Refuse: the unit is handed back for
// another worker.
//
// A worker whose campaign is deleted (DeleteCampaign) waits for a new
// campaign of the same name, and settles that one's identity too.
// RunWorker returns an error other than ctx.Err() only when it is refused,
// cannot connect (an *UnreachableError) or its connection is closed for
// good. A unit the server hands to a pull request that ctx abandoned goes
// to another worker after the ack wait.
func RunWorker(ctx context.Context, ep Endpoint, o Options,
	run func(ctx context.Context, u Unit, report func(Finding) error) (Result, error)) error {
	if run == nil {
		return errors.New("campaign/queue: RunWorker needs a run function")
	}
	o = o.withDefaults()
	nc, js, err := connect(ctx, ep, "conform fuzz worker "+o.Worker)
	if err != nil {
		return err
	}
	defer func() { _ = drain(nc) }()
	w, err := bind(ctx, js, ep, o, run)
	if err != nil {
		return err
	}
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		pctx, cancel := context.WithTimeout(ctx, pullWait)
		m, err := w.cons.Next(jetstream.FetchContext(pctx))
		cancel()
		switch {
		case err == nil:
			if err := w.handle(ctx, m); err != nil {
				return err
			}
		case ctx.Err() != nil:
			return ctx.Err()
		case errors.Is(err, nats.ErrTimeout), errors.Is(err, context.DeadlineExceeded),
			errors.Is(err, jetstream.ErrNoMessages):
			// An idle queue: ask again.
		case nc.IsClosed():
			return fmt.Errorf("campaign/queue: worker of %s: connection closed: %w", ep, err)
		case errors.Is(err, jetstream.ErrConsumerDeleted), errors.Is(err, jetstream.ErrConsumerNotFound),
			errors.Is(err, jetstream.ErrStreamNotFound):
			// The campaign was deleted: wait for the next one of its name.
			o.logf("campaign/queue: worker of %s: the campaign's queue is gone: %v", ep, err)
			if w, err = bind(ctx, js, ep, o, run); err != nil {
				return err
			}
		default:
			o.logf("campaign/queue: worker of %s: pull: %v; retrying", ep, err)
			if sleep(ctx, retryPause) != nil {
				return ctx.Err()
			}
		}
	}
}

// worker is one RunWorker's binding to its campaign.
type worker struct {
	ep          Endpoint
	o           Options
	js          jetstream.JetStream
	cons        jetstream.Consumer
	findings    jetstream.Stream
	done        jetstream.Stream
	ackWait     time.Duration
	maxAttempts uint64
	run         func(ctx context.Context, u Unit, report func(Finding) error) (Result, error)
}

// bind waits until the campaign's workers consumer exists, settles the
// campaign's identity (claim), records the worker, and binds the streams a
// worker writes to. The campaign's AckWait and MaxAttempts come from the
// consumer, where the coordinator put them.
func bind(ctx context.Context, js jetstream.JetStream, ep Endpoint, o Options,
	run func(ctx context.Context, u Unit, report func(Finding) error) (Result, error)) (*worker, error) {
	waiting := false
	for {
		cons, err := js.Consumer(ctx, ep.UnitsStream(), workersConsumer)
		if err == nil {
			w := &worker{ep: ep, o: o, js: js, cons: cons, run: run, maxAttempts: uint64(o.MaxAttempts)}
			if err := w.join(ctx); err != nil {
				return nil, err
			}
			cfg := cons.CachedInfo().Config
			w.ackWait = cfg.AckWait
			if n, err := strconv.Atoi(cfg.Metadata[attemptsKey]); err == nil && n > 0 {
				w.maxAttempts = uint64(n)
			}
			if w.findings, err = js.Stream(ctx, ep.FindingsStream()); err != nil {
				return nil, fmt.Errorf("campaign/queue: worker of %s: findings stream: %w", ep, err)
			}
			if w.done, err = js.Stream(ctx, ep.DoneStream()); err != nil {
				return nil, fmt.Errorf("campaign/queue: worker of %s: outcomes stream: %w", ep, err)
			}
			return w, nil
		}
		if !errors.Is(err, jetstream.ErrStreamNotFound) && !errors.Is(err, jetstream.ErrConsumerNotFound) {
			return nil, fmt.Errorf("campaign/queue: worker of %s: bind the queue: %w", ep, err)
		}
		if !waiting {
			o.logf("campaign/queue: worker of %s: waiting for the coordinator to create the campaign", ep)
			waiting = true
		}
		if err := sleep(ctx, retryPause); err != nil {
			return nil, err
		}
	}
}

// join settles the campaign's identity with Admit and records the worker:
// joined, or refused with why.
func (w *worker) join(ctx context.Context) error {
	info, err := w.js.Stream(ctx, w.ep.InfoStream())
	if err != nil {
		if errors.Is(err, jetstream.ErrStreamNotFound) {
			err = &RefusedError{Endpoint: w.ep, Err: errors.New("an older conform made this campaign, and it records no identity")}
		}
		return w.refused(ctx, err)
	}
	if _, err := claim(ctx, w.js, w.ep, info, nil, w.o.Admit, false); err != nil {
		if errors.Is(err, errNoCampaign) {
			err = &RefusedError{Endpoint: w.ep, Err: errors.New("the campaign records no identity")}
		}
		return w.refused(ctx, err)
	}
	if err := publishWorker(ctx, w.js, w.ep, w.o.Worker, w.o.Identity, ""); err != nil {
		w.o.logf("campaign/queue: worker of %s: record this worker: %v", w.ep, err)
	}
	return nil
}

// refused records a refusal in the worker's record, when err is one, and
// returns err.
func (w *worker) refused(ctx context.Context, err error) error {
	var r *RefusedError
	if errors.As(err, &r) {
		if perr := publishWorker(ctx, w.js, w.ep, w.o.Worker, w.o.Identity, r.Err.Error()); perr != nil {
			w.o.logf("campaign/queue: worker of %s: record the refusal: %v", w.ep, perr)
		}
		return err
	}
	return fmt.Errorf("campaign/queue: worker of %s: %w", w.ep, err)
}

// handle takes one delivered unit to its end: run and recorded, handed back
// for another attempt, or recorded as failed. It returns an error only when
// the run refused the campaign (Refuse): the unit is then handed back.
func (w *worker) handle(ctx context.Context, m jetstream.Msg) error {
	var n uint64 = 1
	if md, err := m.Metadata(); err == nil {
		n = md.NumDelivered
	}
	u, err := w.decode(m)
	if err != nil {
		if u.ID == "" {
			w.o.logf("campaign/queue: worker of %s: %v; dropped", w.ep, err)
			_ = m.Term()
			return nil
		}
		w.finish(ctx, m, outcome{ID: u.ID, Failed: true, Error: err.Error(), Deliveries: n})
		return nil
	}
	if n > 1 && w.recorded(ctx, u.ID) {
		// An earlier worker recorded the outcome and died before its
		// acknowledgement: the unit is over.
		w.ack(ctx, m, u.ID)
		return nil
	}
	if n > w.maxAttempts {
		w.finish(ctx, m, outcome{ID: u.ID, Failed: true, Deliveries: n,
			Error: fmt.Sprintf("delivered %d times, more than the %d attempts allowed: the workers that took it died or stalled",
				n, w.maxAttempts)})
		return nil
	}
	stop := keepAlive(m, keepAlivePeriod(w.ackWait))
	start := time.Now()
	res, err := w.call(ctx, u)
	busy := time.Since(start)
	stop()
	var refused *refusal
	switch {
	case errors.As(err, &refused):
		_ = m.Nak()
		return w.refused(ctx, &RefusedError{Endpoint: w.ep, Err: refused.err})
	case err == nil:
		w.finish(ctx, m, outcome{ID: u.ID, Deliveries: n, Inputs: res.Inputs, Busy: busy.Seconds(), Unsupported: res.Unsupported})
	case ctx.Err() != nil:
		_ = m.Nak() // the worker is stopping: let another one have it now
	case n >= w.maxAttempts:
		w.finish(ctx, m, outcome{ID: u.ID, Failed: true, Error: err.Error(), Deliveries: n})
	default:
		w.o.logf("campaign/queue: worker of %s: unit %s, attempt %d of %d: %v", w.ep, u.ID, n, w.maxAttempts, err)
		if w.o.RetryDelay > 0 {
			_ = m.NakWithDelay(w.o.RetryDelay)
		} else {
			_ = m.Nak()
		}
	}
	return nil
}

// decode reads the unit in m. On error the returned unit carries the ID
// from the message's header, when there is one, so that the bad unit can be
// recorded as failed.
func (w *worker) decode(m jetstream.Msg) (Unit, error) {
	id := m.Headers().Get(hdrUnit)
	var u Unit
	if err := json.Unmarshal(m.Data(), &u); err != nil {
		return Unit{ID: id}, fmt.Errorf("undecodable unit %q: %w", id, err)
	}
	if err := u.validate(); err != nil {
		return Unit{ID: id}, err
	}
	if id != "" && u.ID != id {
		return Unit{ID: id}, fmt.Errorf("unit %q carries ID %q in its body", id, u.ID)
	}
	return u, nil
}

// call runs u, turning a panic into the unit's error so that one bad unit
// does not take the worker down with it.
func (w *worker) call(ctx context.Context, u Unit) (res Result, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("run panicked: %v", r)
		}
	}()
	return w.run(ctx, u, func(f Finding) error { return w.report(ctx, u, f) })
}

// report stores f in the findings stream. The stream keeps one message per
// signature and refuses the rest, so a refusal while the signature is there
// already is success: the finding is stored.
func (w *worker) report(ctx context.Context, u Unit, f Finding) error {
	if err := checkToken("finding signature", f.Signature, maxSignatureLen); err != nil {
		return err
	}
	subj := w.ep.subject("findings", token(f.Signature))
	m := nats.NewMsg(subj)
	m.Header.Set(hdrSignature, f.Signature)
	m.Header.Set(hdrUnit, u.ID)
	m.Header.Set(hdrWorker, w.o.Worker)
	m.Data = f.Body
	_, err := w.js.PublishMsg(ctx, m)
	if err == nil {
		return nil
	}
	if _, gerr := w.findings.GetLastMsgForSubject(ctx, subj); gerr == nil {
		return nil
	}
	return fmt.Errorf("campaign/queue: report finding %q of unit %s: %w", f.Signature, u.ID, err)
}

// recorded reports whether an outcome of unit id is in the done stream. A
// failed look-up counts as no: running the unit again is harmless.
func (w *worker) recorded(ctx context.Context, id string) bool {
	_, err := w.done.GetLastMsgForSubject(ctx, w.ep.subject("done", token(id)))
	return err == nil
}

// finish records o and then acknowledges m. The order is what makes the
// campaign end: acknowledged first, a unit whose worker died before the
// record would be gone from the queue with no outcome, and the coordinator
// would wait for it forever. Recorded first, the worst case is a unit run
// twice, which the outcome and finding deduplication absorb. Both steps run
// even if ctx has just ended, bounded by finishTimeout.
func (w *worker) finish(ctx context.Context, m jetstream.Msg, o outcome) {
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), finishTimeout)
	defer cancel()
	o.Worker = w.o.Worker
	data, err := json.Marshal(o)
	if err != nil {
		w.o.logf("campaign/queue: worker of %s: encode outcome of %s: %v", w.ep, o.ID, err)
		return
	}
	rec := nats.NewMsg(w.ep.subject("done", token(o.ID)))
	rec.Header.Set(hdrUnit, o.ID)
	rec.Header.Set(hdrWorker, w.o.Worker)
	rec.Data = data
	if _, err := w.js.PublishMsg(fctx, rec); err != nil {
		// Not acknowledged either: the unit is redelivered after the ack
		// wait and its next worker records it.
		w.o.logf("campaign/queue: worker of %s: record outcome of unit %s: %v; it will be redelivered", w.ep, o.ID, err)
		return
	}
	w.ack(fctx, m, o.ID)
}

func (w *worker) ack(ctx context.Context, m jetstream.Msg, id string) {
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), finishTimeout)
	defer cancel()
	if err := m.DoubleAck(actx); err != nil {
		// Its next worker finds the outcome recorded and acknowledges it.
		w.o.logf("campaign/queue: worker of %s: acknowledge unit %s: %v", w.ep, id, err)
	}
}
