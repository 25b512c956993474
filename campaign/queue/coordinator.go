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
	// findingsAckWait is the coordinator's own ack wait on the findings
	// stream. Run keeps a finding alive while onFinding works, so this
	// only bounds how soon a finding left unacknowledged by a coordinator
	// that died is handed to its successor.
	findingsAckWait = 30 * time.Second

	// findingsPrefetch bounds the findings the coordinator holds before
	// onFinding has seen them.
	findingsPrefetch = 16

	// publishWindow is how many units Run publishes before it waits for
	// their acknowledgements.
	publishWindow = 256

	// recheckEvery is how often Run rechecks, once every unit has ended,
	// whether findings still wait to be handed over.
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

func coordinatorConsumerConfig(ep Endpoint) jetstream.ConsumerConfig {
	return jetstream.ConsumerConfig{
		Durable:       coordinatorConsumer,
		Description:   "conform fuzz campaign " + ep.Campaign + ": coordinator",
		DeliverPolicy: jetstream.DeliverAllPolicy,
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       findingsAckWait,
		MaxDeliver:    -1,
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
	findings jetstream.Consumer

	running sync.Mutex // serialises Run

	// seen holds the signatures handed to onFinding; handedBefore counts
	// those an earlier coordinator handed over.
	seen         map[string]bool
	handedBefore int

	closeOnce sync.Once
	closeErr  error
}

// NewCoordinator connects to ep's server and creates the campaign's streams
// (StreamConfigs) when they do not exist, adopting existing ones. It creates
// or updates the workers' consumer with o.AckWait and o.MaxAttempts, which
// thereby become the campaign's, and the coordinator's own durable consumer
// of the findings stream.
func NewCoordinator(ctx context.Context, ep Endpoint, o Options) (*Coordinator, error) {
	o = o.withDefaults()
	nc, js, err := connect(ctx, ep, "conform fuzz coordinator "+ep.Campaign)
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*Coordinator, error) {
		nc.Close()
		return nil, fmt.Errorf("campaign/queue: coordinator of %s: %w", ep, err)
	}
	ucfg, fcfg, dcfg := StreamConfigs(ep)
	// The units stream comes last, and its consumer after it: a worker
	// that finds the consumer finds every stream it needs.
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
	fcons, err := findings.CreateOrUpdateConsumer(ctx, coordinatorConsumerConfig(ep))
	if err != nil {
		return fail(fmt.Errorf("create consumer %s on %s: %w", coordinatorConsumer, fcfg.Name, err))
	}
	// The findings stream never deletes and holds one message per
	// signature, so its sequence numbers count signatures: the ack floor
	// is how many an earlier coordinator handed over.
	handed := int(fcons.CachedInfo().AckFloor.Stream)
	return &Coordinator{ep: ep, o: o, nc: nc, js: js, units: units, done: done, findings: fcons,
		seen: make(map[string]bool), handedBefore: handed}, nil
}

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
// While the workers run, Run hands each finding to onFinding, once per
// signature: the findings stream holds one message per signature, and a
// finding redelivered to this coordinator is recognised by its signature. A
// finding is acknowledged only after onFinding returns nil, so a coordinator
// that dies loses none; one that dies after onFinding returned and before
// the acknowledgement reached the server has that finding handed to its
// successor again, so onFinding should be idempotent (write the finding file
// by renaming it into place). An error from onFinding ends Run with that
// error, and the finding stays to be handed over by the next Run.
//
// progress, when not nil, is called with the campaign's status at the start
// and after every change. Both callbacks run on Run's goroutine.
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
		progress: progress}

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
	errc := make(chan error, 2)

	oc, err := c.js.OrderedConsumer(ctx, c.ep.DoneStream(), jetstream.OrderedConsumerConfig{})
	if err != nil {
		return fmt.Errorf("campaign/queue: read outcomes of %s: %w", c.ep, err)
	}
	outcomes, err := c.pump(runCtx, &wg, oc, errc, "outcomes", func(jetstream.Msg) {})
	if err != nil {
		return err
	}
	findings, err := c.pump(runCtx, &wg, c.findings, errc, "findings", func(m jetstream.Msg) { _ = m.Nak() },
		jetstream.PullMaxMessages(findingsPrefetch))
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
			r.outcome(m)
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
			drained, err := c.findingsDrained(ctx)
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
			if r.outcome(m) {
				r.report()
			}
		case m := <-findings:
			isNew, err := c.handFinding(ctx, m, onFinding)
			if err != nil {
				return err
			}
			if isNew {
				r.report()
			}
		case <-tick.C:
		}
	}
}

// pump feeds the messages of cons into a channel until ctx ends, so that
// Run can wait on them together with everything else. A terminal error goes
// to errc. When ctx ends, the messages already fetched and not handed over
// go to release (which, for the findings, hands them back to JetStream at
// once rather than after their ack wait).
func (c *Coordinator) pump(ctx context.Context, wg *sync.WaitGroup, cons jetstream.Consumer, errc chan<- error,
	what string, release func(jetstream.Msg), opts ...jetstream.PullMessagesOpt) (<-chan jetstream.Msg, error) {
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
					// What the drain leaves behind goes back after its ack wait.
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
				release(m)
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
// already, and acknowledges it. It reports whether the finding was new.
func (c *Coordinator) handFinding(ctx context.Context, m jetstream.Msg, onFinding func(Finding) error) (bool, error) {
	sig := m.Headers().Get(hdrSignature)
	if sig == "" {
		sig, _ = idFromSubject(m.Subject())
	}
	if sig == "" {
		c.o.logf("campaign/queue: %s: a finding without a signature on %s; dropped", c.ep, m.Subject())
		_ = m.Term()
		return false, nil
	}
	isNew := !c.seen[sig]
	if isNew {
		stop := keepAlive(m, keepAlivePeriod(findingsAckWait))
		err := onFinding(Finding{Signature: sig, Body: bytes.Clone(m.Data())})
		stop()
		if err != nil {
			_ = m.Nak()
			return false, fmt.Errorf("campaign/queue: handle finding %q: %w", sig, err)
		}
		c.seen[sig] = true
	}
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), finishTimeout)
	defer cancel()
	if err := m.DoubleAck(actx); err != nil {
		// Redelivered later, and recognised by its signature then.
		c.o.logf("campaign/queue: %s: acknowledge finding %q: %v", c.ep, sig, err)
	}
	return isNew, nil
}

// findingsDrained reports whether every finding stored so far has been
// handed over and acknowledged.
func (c *Coordinator) findingsDrained(ctx context.Context) (bool, error) {
	info, err := c.findings.Info(ctx)
	if err != nil {
		return false, fmt.Errorf("campaign/queue: findings consumer of %s: %w", c.ep, err)
	}
	return info.NumPending == 0 && info.NumAckPending == 0, nil
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
	outcomeSeq uint64 // the stream sequence of the last outcome read
	caughtUp   bool   // no outcome stored was unread after the last one
	progress   func(Status)
}

// outcome applies one outcome record and reports whether it changed the
// status. A unit that ended well stays ended well, whatever a straggler
// records for it later.
func (r *run) outcome(m jetstream.Msg) bool {
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
		return true
	}
	if _, ok := r.failed[o.ID]; ok {
		return false
	}
	r.failed[o.ID] = FailedUnit{ID: o.ID, Worker: o.Worker, Deliveries: o.Deliveries, Err: o.Error}
	return true
}

func (r *run) ended(id string) bool {
	_, failed := r.failed[id]
	return r.ok[id] || failed
}

func (r *run) allEnded() bool { return len(r.ok)+len(r.failed) == len(r.want) }

func (r *run) status() Status {
	return Status{Units: len(r.want), Done: len(r.ok), Failed: len(r.failed),
		Findings: r.c.handedBefore + len(r.c.seen)}
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

// DeleteCampaign deletes ep's campaign: its three streams, with the units
// still queued, the outcomes and the findings. A coordinator resumes a
// campaign by its name, so a new campaign under a used name must first
// delete the old one. Streams already gone are not an error. Workers bound
// to the campaign wait for the next campaign of its name.
func DeleteCampaign(ctx context.Context, ep Endpoint) error {
	nc, js, err := connect(ctx, ep, "conform fuzz delete "+ep.Campaign)
	if err != nil {
		return err
	}
	defer nc.Close()
	for _, name := range []string{ep.UnitsStream(), ep.FindingsStream(), ep.DoneStream()} {
		if err := js.DeleteStream(ctx, name); err != nil && !errors.Is(err, jetstream.ErrStreamNotFound) {
			return fmt.Errorf("campaign/queue: delete campaign %s: stream %s: %w", ep, name, err)
		}
	}
	return nil
}
