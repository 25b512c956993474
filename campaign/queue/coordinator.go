package queue

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

const (
	// findingsPrefetch bounds the findings the coordinator holds before
	// onFinding has seen them.
	findingsPrefetch = 16

	// publishWindow is how many units Run publishes before it waits for
	// their acknowledgements.
	publishWindow = 256

	// recheckEvery is how often Run rechecks, once every unit has ended,
	// whether findings still wait to be handed over, and reports its
	// status whether or not it changed (its rate and elapsed time do).
	recheckEvery = 250 * time.Millisecond
)

// StreamConfigs returns the configurations a coordinator creates the
// campaign's three streams with: the units work queue, the findings stream
// (one message per signature: the stream itself refuses a second) and the
// outcomes stream. A deployment may pre-create them; NewCoordinator adopts
// existing streams as they are.
func StreamConfigs(ep Endpoint) (units, findings, done jetstream.StreamConfig) {
	units = jetstream.StreamConfig{
		Name:        ep.UnitsStream(),
		Description: "conform fuzz campaign " + ep.Campaign + ": work units",
		Subjects:    []string{ep.subject("units", ">")},
		Retention:   jetstream.WorkQueuePolicy,
		Storage:     jetstream.FileStorage,
		Replicas:    1,
	}
	findings = jetstream.StreamConfig{
		Name:                 ep.FindingsStream(),
		Description:          "conform fuzz campaign " + ep.Campaign + ": findings, one per signature",
		Subjects:             []string{ep.subject("findings", ">")},
		Retention:            jetstream.LimitsPolicy,
		Storage:              jetstream.FileStorage,
		Replicas:             1,
		MaxMsgsPerSubject:    1,
		Discard:              jetstream.DiscardNew,
		DiscardNewPerSubject: true,
	}
	done = jetstream.StreamConfig{
		Name:        ep.DoneStream(),
		Description: "conform fuzz campaign " + ep.Campaign + ": unit outcomes",
		Subjects:    []string{ep.subject("done", ">")},
		Retention:   jetstream.LimitsPolicy,
		Storage:     jetstream.FileStorage,
		Replicas:    1,
	}
	return units, findings, done
}

// workersConsumerConfig is the durable pull consumer every worker shares.
// JetStream's own MaxDeliver is left unlimited: a unit that ran out of
// deliveries while its last worker lay dead would stay in the queue unrecorded
// and the campaign would never end. The workers enforce MaxAttempts instead,
// recording the unit as failed on the delivery after the last attempt.
func workersConsumerConfig(ep Endpoint, o Options) jetstream.ConsumerConfig {
	return jetstream.ConsumerConfig{
		Durable:       workersConsumer,
		Description:   "conform fuzz campaign " + ep.Campaign + ": workers",
		DeliverPolicy: jetstream.DeliverAllPolicy,
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       o.AckWait,
		MaxDeliver:    -1,
		Metadata:      map[string]string{attemptsKey: strconv.Itoa(o.MaxAttempts)},
	}
}

// Coordinator is the process of a campaign that publishes its units and
// collects its outcomes and findings. One coordinator at a time runs a
// campaign; a new one (after a restart) picks up where the last left off.
type Coordinator struct {
	ep       Endpoint
	o        Options
	nc       *nats.Conn
	js       jetstream.JetStream
	units    jetstream.Stream
	done     jetstream.Stream
	findings jetstream.Stream
	info     jetstream.Stream
	identity []byte

	running sync.Mutex // serialises Run

	closeOnce sync.Once
	closeErr  error
}

// NewCoordinator connects to ep's server and settles the campaign's
// identity: when the campaign does not exist it creates it with
// o.Identity; when it does, o.Admit decides whether this coordinator may
// run it (a *RefusedError when not). A campaign whose streams an older
// conform made, without an identity, is refused too. It then creates the
// campaign's streams (InfoStreamConfig, StreamConfigs) when they do not
// exist, adopting existing ones, and creates or updates the workers'
// consumer with o.AckWait and o.MaxAttempts, which thereby become the
// campaign's.
//
// A server that cannot be reached, or has no JetStream, is an
// *UnreachableError.
func NewCoordinator(ctx context.Context, ep Endpoint, o Options) (*Coordinator, error) {
	o = o.withDefaults()
	nc, js, err := connect(ctx, ep, "conform fuzz coordinator "+ep.Campaign)
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*Coordinator, error) {
		nc.Close()
		var refused *RefusedError
		if errors.As(err, &refused) {
			return nil, err
		}
		return nil, fmt.Errorf("campaign/queue: coordinator of %s: %w", ep, err)
	}
	info, err := js.Stream(ctx, ep.InfoStream())
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		old, lerr := legacy(ctx, js, ep)
		if lerr != nil {
			return fail(lerr)
		}
		if old {
			return fail(&RefusedError{Endpoint: ep, Err: errors.New("an older conform made this campaign, and it records no identity: delete it, or choose another name")})
		}
		info, err = ensureStream(ctx, js, InfoStreamConfig(ep))
	}
	if err != nil {
		return fail(err)
	}
	identity, err := claim(ctx, js, ep, info, o.Identity, o.Admit, true)
	if err != nil {
		return fail(err)
	}
	ucfg, fcfg, dcfg := StreamConfigs(ep)
	// The units stream comes last, and its consumer after it: a worker
	// that finds the consumer finds every stream it needs, and the
	// campaign's identity.
	findings, err := ensureStream(ctx, js, fcfg)
	if err != nil {
		return fail(err)
	}
	done, err := ensureStream(ctx, js, dcfg)
	if err != nil {
		return fail(err)
	}
	units, err := ensureStream(ctx, js, ucfg)
	if err != nil {
		return fail(err)
	}
	if _, err := units.CreateOrUpdateConsumer(ctx, workersConsumerConfig(ep, o)); err != nil {
		return fail(fmt.Errorf("create consumer %s on %s: %w", workersConsumer, ucfg.Name, err))
	}
	return &Coordinator{ep: ep, o: o, nc: nc, js: js, units: units, done: done, findings: findings, info: info,
		identity: identity}, nil
}

// Identity returns the campaign's identity as stored: the coordinator's
// own when it created the campaign, else what its Admit accepted or
// stored.
func (c *Coordinator) Identity() []byte { return bytes.Clone(c.identity) }

// ensureStream adopts the stream cfg names if it exists and creates it
// otherwise.
func ensureStream(ctx context.Context, js jetstream.JetStream, cfg jetstream.StreamConfig) (jetstream.Stream, error) {
	st, err := js.Stream(ctx, cfg.Name)
	if err == nil {
		return st, nil
	}
	if !errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil, fmt.Errorf("look up stream %s: %w", cfg.Name, err)
	}
	st, err = js.CreateStream(ctx, cfg)
	if errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
		st, err = js.Stream(ctx, cfg.Name) // another process created it meanwhile
	}
	if err != nil {
		return nil, fmt.Errorf("create stream %s: %w", cfg.Name, err)
	}
	return st, nil
}

// Run runs the campaign of units to its end.
//
// It first learns what is already known: the units still in the queue, then
// every outcome recorded (in that order: a unit acked in between has its
// outcome recorded before its ack, so it is seen in the second look). It
// then publishes the units that are neither queued nor ended, each with its
// ID as Nats-Msg-Id so that a publish retried within the stream's duplicate
// window is stored once. A restarted coordinator therefore publishes nothing
// twice.
//
// Run hands every finding the campaign has stored to onFinding, once per
// signature, from the first: those of earlier coordinators too, so that
// a coordinator writing to a new place gets them all. The findings stream
// holds one message per signature. onFinding may be handed a finding an
// earlier Run handed over, and should be idempotent (write the finding file
// by renaming it into place). An error from onFinding ends Run with that
// error.
//
// progress, when not nil, is called with the campaign's status at the start,
// after every change and every recheckEvery (so that its rate and the
// workers' totals stay current). Both callbacks run on Run's goroutine.
//
// Run returns nil once every unit has ended well and every finding stored
// for them has been handed over; a *UnitsFailedError when every unit ended
// but some failed; ctx.Err() when ctx ends first; and an error when the
// units are invalid (an empty or repeated ID, a range that ends before it
// starts) or the server fails.
func (c *Coordinator) Run(ctx context.Context, units []Unit, onFinding func(Finding) error, progress func(Status)) error {
	if !c.running.TryLock() {
		return errors.New("campaign/queue: Run is already running on this coordinator")
	}
	defer c.running.Unlock()
	if c.nc.IsClosed() {
		return errors.New("campaign/queue: Run on a closed coordinator")
	}
	want := make(map[string]bool, len(units))
	for _, u := range units {
		if err := u.validate(); err != nil {
			return err
		}
		if want[u.ID] {
			return fmt.Errorf("campaign/queue: unit ID %q appears twice", u.ID)
		}
		want[u.ID] = true
	}
	if onFinding == nil {
		onFinding = func(Finding) error { return nil }
	}
	r := &run{c: c, want: want, ok: make(map[string]bool), failed: make(map[string]FailedUnit),
		seen: make(map[string]bool), workers: make(map[string]*WorkerStatus), progress: progress, start: time.Now()}

	queued, err := c.queuedUnits(ctx)
	if err != nil {
		return err
	}
	runCtx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() {
		cancel() // stops the pumps' iterators
		wg.Wait()
	}()
	errc := make(chan error, 3)

	ordered := func(stream string, subjects ...string) (jetstream.Consumer, error) {
		cons, err := c.js.OrderedConsumer(ctx, stream, jetstream.OrderedConsumerConfig{FilterSubjects: subjects})
		if err != nil {
			return nil, fmt.Errorf("campaign/queue: read %s of %s: %w", stream, c.ep, err)
		}
		return cons, nil
	}
	oc, err := ordered(c.ep.DoneStream())
	if err != nil {
		return err
	}
	outcomes, err := c.pump(runCtx, &wg, oc, errc, "outcomes")
	if err != nil {
		return err
	}
	fc, err := ordered(c.ep.FindingsStream())
	if err != nil {
		return err
	}
	findings, err := c.pump(runCtx, &wg, fc, errc, "findings", jetstream.PullMaxMessages(findingsPrefetch))
	if err != nil {
		return err
	}
	wc, err := ordered(c.ep.InfoStream(), c.ep.workersSubject())
	if err != nil {
		return err
	}
	workers, err := c.pump(runCtx, &wg, wc, errc, "workers")
	if err != nil {
		return err
	}

	// Replay the outcomes recorded so far before deciding what to publish.
	info, err := c.done.Info(ctx)
	if err != nil {
		return fmt.Errorf("campaign/queue: outcomes stream of %s: %w", c.ep, err)
	}
	for last := info.State.LastSeq; info.State.Msgs > 0 && r.outcomeSeq < last && !r.caughtUp; {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case err := <-errc:
			return err
		case m := <-outcomes:
			r.outcome(m, false)
		}
	}

	var publish []Unit
	for _, u := range units {
		if !queued[u.ID] && !r.ended(u.ID) {
			publish = append(publish, u)
		}
	}
	if err := c.publish(ctx, publish); err != nil {
		return err
	}
	r.report()

	tick := time.NewTicker(recheckEvery)
	defer tick.Stop()
	for {
		if r.allEnded() {
			drained, err := r.findingsDrained(ctx)
			if err != nil {
				return err
			}
			if drained {
				return r.result()
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case err := <-errc:
			return err
		case m := <-outcomes:
			if r.outcome(m, true) {
				r.report()
			}
		case m := <-findings:
			isNew, err := r.handFinding(m, onFinding)
			if err != nil {
				return err
			}
			if isNew {
				r.report()
			}
		case m := <-workers:
			if r.worker(m) {
				r.report()
			}
		case <-tick.C:
			r.report()
		}
	}
}

// pump feeds the messages of cons, an ordered consumer, into a channel
// until ctx ends, so that Run can wait on them together with everything
// else. A terminal error goes to errc.
func (c *Coordinator) pump(ctx context.Context, wg *sync.WaitGroup, cons jetstream.Consumer, errc chan<- error,
	what string, opts ...jetstream.PullMessagesOpt) (<-chan jetstream.Msg, error) {
	it, err := cons.Messages(opts...)
	if err != nil {
		return nil, fmt.Errorf("campaign/queue: read %s of %s: %w", what, c.ep, err)
	}
	out := make(chan jetstream.Msg)
	wg.Add(2)
	go func() {
		defer wg.Done()
		<-ctx.Done()
		it.Drain()
	}()
	go func() {
		defer wg.Done()
		for {
			m, err := it.Next()
			if err != nil {
				if errors.Is(err, jetstream.ErrMsgIteratorClosed) || ctx.Err() != nil {
					return
				}
				if c.nc.IsClosed() {
					errc <- fmt.Errorf("campaign/queue: read %s of %s: %w", what, c.ep, err)
					return
				}
				c.o.logf("campaign/queue: read %s of %s: %v; retrying", what, c.ep, err)
				_ = sleep(ctx, retryPause)
				continue
			}
			select {
			case out <- m:
			case <-ctx.Done():
				return
			}
		}
	}()
	return out, nil
}

// queuedUnits returns the IDs of the units in the work queue, delivered or
// not: a work queue removes a unit only when it is acknowledged.
func (c *Coordinator) queuedUnits(ctx context.Context) (map[string]bool, error) {
	info, err := c.units.Info(ctx, jetstream.WithSubjectFilter(c.ep.subject("units", ">")))
	if err != nil {
		return nil, fmt.Errorf("campaign/queue: list queued units of %s: %w", c.ep, err)
	}
	queued := make(map[string]bool, len(info.State.Subjects))
	for subj := range info.State.Subjects {
		if id, ok := idFromSubject(subj); ok {
			queued[id] = true
		}
	}
	return queued, nil
}

// idFromSubject decodes the ID or signature token at the end of a subject.
func idFromSubject(subj string) (string, bool) {
	i := strings.LastIndexByte(subj, '.')
	b, err := base64.RawURLEncoding.DecodeString(subj[i+1:])
	return string(b), err == nil
}

// publish stores units in the work queue, publishWindow at a time, and
// returns once JetStream has acknowledged them all.
func (c *Coordinator) publish(ctx context.Context, units []Unit) error {
	for batch := range slices.Chunk(units, publishWindow) {
		futures := make([]jetstream.PubAckFuture, 0, len(batch))
		for _, u := range batch {
			data, err := json.Marshal(u)
			if err != nil {
				return fmt.Errorf("campaign/queue: encode unit %q: %w", u.ID, err)
			}
			m := nats.NewMsg(c.ep.subject("units", token(u.ID)))
			m.Header.Set(hdrUnit, u.ID)
			m.Data = data
			f, err := c.js.PublishMsgAsync(m, jetstream.WithMsgID(u.ID))
			if err != nil {
				return fmt.Errorf("campaign/queue: publish unit %q: %w", u.ID, err)
			}
			futures = append(futures, f)
		}
		for _, f := range futures {
			select {
			case <-f.Ok():
			case err := <-f.Err():
				return fmt.Errorf("campaign/queue: publish unit %q: %w", f.Msg().Header.Get(hdrUnit), err)
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
	return nil
}

// handFinding hands m to onFinding unless its signature was handed over
// already in this Run. It reports whether the finding was new.
func (r *run) handFinding(m jetstream.Msg, onFinding func(Finding) error) (bool, error) {
	if md, err := m.Metadata(); err == nil {
		r.findingSeq = md.Sequence.Stream
	}
	sig := m.Headers().Get(hdrSignature)
	if sig == "" {
		sig, _ = idFromSubject(m.Subject())
	}
	if sig == "" {
		r.c.o.logf("campaign/queue: %s: a finding without a signature on %s; ignored", r.c.ep, m.Subject())
		return false, nil
	}
	if r.seen[sig] {
		return false, nil
	}
	if err := onFinding(Finding{Signature: sig, Body: bytes.Clone(m.Data())}); err != nil {
		return false, fmt.Errorf("campaign/queue: handle finding %q: %w", sig, err)
	}
	r.seen[sig] = true
	return true, nil
}

// findingsDrained reports whether every finding stored so far has been
// handed over.
func (r *run) findingsDrained(ctx context.Context) (bool, error) {
	info, err := r.c.findings.Info(ctx)
	if err != nil {
		return false, fmt.Errorf("campaign/queue: findings stream of %s: %w", r.c.ep, err)
	}
	return info.State.Msgs == 0 || r.findingSeq >= info.State.LastSeq, nil
}

// Close closes the coordinator's connection in order, after what it has in
// flight. It does not delete the campaign: a later coordinator resumes it.
// Closing again does nothing.
func (c *Coordinator) Close() error {
	c.closeOnce.Do(func() { c.closeErr = drain(c.nc) })
	return c.closeErr
}

// run is the state of one Run.
type run struct {
	c          *Coordinator
	want       map[string]bool
	ok         map[string]bool
	failed     map[string]FailedUnit
	seen       map[string]bool // signatures handed over
	workers    map[string]*WorkerStatus
	outcomeSeq uint64 // the stream sequence of the last outcome read
	caughtUp   bool   // no outcome stored was unread after the last one
	findingSeq uint64 // the stream sequence of the last finding read
	progress   func(Status)
	start      time.Time

	unsupported   int
	inputs        uint64
	inputsThisRun uint64
}

// outcome applies one outcome record and reports whether it changed the
// status. A unit that ended well stays ended well, whatever a straggler
// records for it later. now says whether the outcome was recorded during
// this Run (rather than replayed from before it), for the rate.
func (r *run) outcome(m jetstream.Msg, now bool) bool {
	if md, err := m.Metadata(); err == nil {
		r.outcomeSeq = md.Sequence.Stream
		r.caughtUp = md.NumPending == 0
	}
	o, err := decodeOutcome(m.Data())
	if err != nil {
		r.c.o.logf("campaign/queue: %s: %v", r.c.ep, err)
		return false
	}
	if !r.want[o.ID] || r.ok[o.ID] {
		return false
	}
	if !o.Failed {
		delete(r.failed, o.ID)
		r.ok[o.ID] = true
		r.inputs += o.Inputs
		if now {
			r.inputsThisRun += o.Inputs
		}
		if o.Unsupported != "" {
			r.unsupported++
		}
		w := r.workerStatus(o.Worker)
		w.Units++
		w.Inputs += o.Inputs
		w.Busy += time.Duration(o.Busy * float64(time.Second))
		return true
	}
	if _, ok := r.failed[o.ID]; ok {
		return false
	}
	r.failed[o.ID] = FailedUnit{ID: o.ID, Worker: o.Worker, Deliveries: o.Deliveries, Err: o.Error}
	return true
}

func (r *run) workerStatus(name string) *WorkerStatus {
	w := r.workers[name]
	if w == nil {
		w = &WorkerStatus{Name: name}
		r.workers[name] = w
	}
	return w
}

// worker applies a worker's record and reports whether it changed the
// status.
func (r *run) worker(m jetstream.Msg) bool {
	var rec workerRecord
	if err := json.Unmarshal(m.Data(), &rec); err != nil || rec.Worker == "" {
		r.c.o.logf("campaign/queue: %s: an unreadable worker record on %s; ignored", r.c.ep, m.Subject())
		return false
	}
	w := r.workerStatus(rec.Worker)
	w.Identity, w.Refused = bytes.Clone(rec.Identity), rec.Refused
	return true
}

func (r *run) ended(id string) bool {
	_, failed := r.failed[id]
	return r.ok[id] || failed
}

func (r *run) allEnded() bool { return len(r.ok)+len(r.failed) == len(r.want) }

func (r *run) status() Status {
	s := Status{Units: len(r.want), Done: len(r.ok), Failed: len(r.failed), Unsupported: r.unsupported,
		Findings: len(r.seen), Inputs: r.inputs, InputsThisRun: r.inputsThisRun, Elapsed: time.Since(r.start)}
	for _, w := range r.workers {
		s.Workers = append(s.Workers, *w)
	}
	slices.SortFunc(s.Workers, func(a, b WorkerStatus) int { return strings.Compare(a.Name, b.Name) })
	return s
}

func (r *run) report() {
	if r.progress != nil {
		r.progress(r.status())
	}
}

func (r *run) result() error {
	r.report()
	if len(r.failed) == 0 {
		return nil
	}
	e := &UnitsFailedError{}
	for _, f := range r.failed {
		e.Units = append(e.Units, f)
	}
	slices.SortFunc(e.Units, func(a, b FailedUnit) int { return strings.Compare(a.ID, b.ID) })
	return e
}

// sleep waits d or until ctx ends, returning ctx.Err() in the second case.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
