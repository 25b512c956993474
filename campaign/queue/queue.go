package queue

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Defaults applied to the zero fields of Options.
const (
	// DefaultAckWait is how long a unit may go unacknowledged, with no
	// keep-alive from its worker, before JetStream hands it to another
	// worker. A live worker sends a keep-alive every third of it.
	DefaultAckWait = 30 * time.Second

	// DefaultMaxAttempts is how many times a unit is delivered before it
	// is recorded as failed.
	DefaultMaxAttempts = 3
)

const (
	// workersConsumer is the durable pull consumer of the units stream
	// that every worker of a campaign shares.
	workersConsumer = "workers"

	// attemptsKey is the units consumer's metadata entry that carries
	// Options.MaxAttempts from the coordinator to every worker, so that
	// all rigs give up on a unit after the same number of deliveries.
	attemptsKey = "conform.max_attempts"

	// Message headers. The unit and signature are also in the subject,
	// encoded; the headers carry them readably for anyone inspecting the
	// streams with the nats CLI.
	hdrUnit      = "Conform-Unit"
	hdrSignature = "Conform-Signature"
	hdrWorker    = "Conform-Worker"

	// maxIDLen and maxSignatureLen bound unit IDs and signatures, which
	// travel in headers and (base64-encoded) in subjects.
	maxIDLen        = 512
	maxSignatureLen = 1024

	// connectTimeout bounds dialling the server when ctx has no deadline.
	connectTimeout = 10 * time.Second

	// finishTimeout bounds the steps that end a unit — recording its
	// outcome and acknowledging it — which run even when the worker's
	// context has just ended, so that finished work is not thrown away.
	finishTimeout = 10 * time.Second

	// pullWait is how long one pull request waits for a unit. Shorter
	// pulls notice a closed connection sooner; longer ones cost fewer
	// requests on an idle queue.
	pullWait = 5 * time.Second

	// retryPause is the pause between attempts to bind a campaign that does
	// not exist yet, and after a transient error.
	retryPause = 250 * time.Millisecond

	// drainTimeout bounds Close's orderly drain of the connection.
	drainTimeout = 5 * time.Second
)

// Unit is one piece of a campaign's work: run target Target with generator
// seed Seed over the inputs numbered [Start, End), starting from the corpus
// entries named in Corpus. A unit travels as JSON.
type Unit struct {
	// ID names the unit uniquely within its campaign, for example
	// "wire.read-frames/000017". Outcomes are recorded and deduplicated
	// by it.
	ID     string   `json:"id"`
	Target string   `json:"target"`
	Seed   int64    `json:"seed"`
	Start  uint64   `json:"start"`
	End    uint64   `json:"end"`
	Corpus []string `json:"corpus,omitempty"`
}

func (u Unit) validate() error {
	if err := checkToken("unit ID", u.ID, maxIDLen); err != nil {
		return err
	}
	if u.End < u.Start {
		return fmt.Errorf("campaign/queue: unit %q: input range [%d, %d) ends before it starts", u.ID, u.Start, u.End)
	}
	return nil
}

// Finding is one finding a worker reports. Signature identifies it across
// the campaign — two findings with one signature are the same bug — and Body
// is the finding file's JSON, which this package carries without reading.
type Finding struct {
	Signature string
	Body      []byte
}

// checkToken checks an ID or signature: non-empty, bounded, valid UTF-8
// without control characters, since it travels in a message header.
func checkToken(what, s string, limit int) error {
	if s == "" {
		return fmt.Errorf("campaign/queue: empty %s", what)
	}
	if len(s) > limit {
		return fmt.Errorf("campaign/queue: %s %.40q… is %d bytes, more than %d", what, s, len(s), limit)
	}
	if !utf8.ValidString(s) {
		return fmt.Errorf("campaign/queue: %s %q is not valid UTF-8", what, s)
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return fmt.Errorf("campaign/queue: %s %q has a control character", what, s)
		}
	}
	return nil
}

// token encodes an ID or signature as one subject token. Base64url uses
// only letters, digits, '-' and '_', so the token never splits a subject
// or acts as a wildcard, whatever the ID holds.
func token(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

// Options tune a coordinator or a worker. The zero value is usable.
type Options struct {
	// AckWait is how long a unit may go without an acknowledgement or a
	// keep-alive before it is redelivered to another worker; it bounds
	// how long a dead worker's unit waits. Zero means DefaultAckWait. The
	// coordinator's value is the campaign's: workers read it from the
	// units consumer.
	AckWait time.Duration

	// MaxAttempts is how many times a unit is delivered before it is
	// recorded as failed: a unit whose run returns an error is retried
	// until its last attempt fails, and a unit delivered more often than
	// this (its workers died) is recorded as failed without running it.
	// Zero means DefaultMaxAttempts. The coordinator's value is the
	// campaign's.
	MaxAttempts int

	// RetryDelay is how long a unit whose run failed waits before it is
	// redelivered. Zero redelivers it at once.
	RetryDelay time.Duration

	// Worker names a worker in the outcomes it records and the findings
	// it reports. Empty means "<hostname>/<pid>".
	Worker string

	// Logf, when set, receives notes about transient trouble the queue
	// rides out (a failed pull, a unit that could not be recorded).
	Logf func(format string, args ...any)

	// Identity says what the process is, as JSON that this package stores
	// and shows but never reads. A coordinator's is the campaign's
	// identity, stored with the campaign when the coordinator creates it; a
	// worker's is published in its worker record (Status.Workers), where the
	// coordinator shows it.
	Identity []byte

	// Admit, when set, decides whether the process may take part in a
	// campaign that already has an identity: it is called with the identity
	// stored with the campaign, and returns an error naming what differs to
	// refuse it (NewCoordinator and RunWorker then return a *RefusedError).
	// It may instead return an identity to store in the stored one's place
	// — the stored one completed, say, with the SUT the campaign had not
	// named yet — or nil to leave it as it is. Two processes completing it
	// at once do not overwrite each other: the loser's Admit is called
	// again with the winner's identity.
	Admit func(stored []byte) ([]byte, error)
}

// A RefusedError is a coordinator's or worker's refusal to take part in a
// campaign whose identity differs from its own, or that an older conform
// made.
type RefusedError struct {
	Endpoint Endpoint
	Err      error
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("campaign %s: %v", e.Endpoint, e.Err)
}

func (e *RefusedError) Unwrap() error { return e.Err }

// Refuse wraps err so that a worker's run, returning it, makes RunWorker
// hand the unit back and stop with a *RefusedError: the worker can no
// longer run the campaign (its SUT now says it is another, say).
func Refuse(err error) error { return &refusal{err} }

type refusal struct{ err error }

func (r *refusal) Error() string { return r.err.Error() }
func (r *refusal) Unwrap() error { return r.err }

func (o Options) withDefaults() Options {
	if o.AckWait <= 0 {
		o.AckWait = DefaultAckWait
	}
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = DefaultMaxAttempts
	}
	if o.RetryDelay < 0 {
		o.RetryDelay = 0
	}
	if o.Worker == "" {
		host, err := os.Hostname()
		if err != nil || host == "" {
			host = "unknown-host"
		}
		o.Worker = host + "/" + strconv.Itoa(os.Getpid())
	}
	return o
}

func (o Options) logf(format string, args ...any) {
	if o.Logf != nil {
		o.Logf(format, args...)
	}
}

// Status is a campaign's progress as the coordinator sees it.
type Status struct {
	// Units is the number of units in the campaign.
	Units int
	// Done counts units that ran to completion.
	Done int
	// Failed counts units given up on after MaxAttempts deliveries. The
	// campaign is over when Done+Failed == Units.
	Failed int
	// Unsupported counts the done units that ran no input: their worker's
	// SUT does not implement their target.
	Unsupported int
	// Findings counts the distinct signatures handed to onFinding by this
	// Run: every finding the campaign has stored, whoever found it and
	// whichever coordinator ran before.
	Findings int
	// Inputs counts the inputs of the done units, over the campaign's life;
	// InputsThisRun those of the units that ended during this Run, which
	// has been running for Elapsed.
	Inputs        uint64
	InputsThisRun uint64
	Elapsed       time.Duration
	// Workers are the workers that have joined or refused the campaign, by
	// name, with what they ran.
	Workers []WorkerStatus
}

// Rate is the campaign's inputs per second during this Run.
func (s Status) Rate() float64 {
	if s.Elapsed <= 0 {
		return 0
	}
	return float64(s.InputsThisRun) / s.Elapsed.Seconds()
}

// A WorkerStatus is one worker's part in a campaign.
type WorkerStatus struct {
	Name string
	// Identity is what the worker said of itself (Options.Identity) when
	// it joined or refused the campaign.
	Identity []byte
	// Refused says why the worker refused the campaign; empty when it
	// joined.
	Refused string
	// Units and Inputs count the units it completed and their inputs;
	// Busy is the time it spent running them.
	Units  int
	Inputs uint64
	Busy   time.Duration
}

// Rate is the worker's inputs per second while it ran units.
func (w WorkerStatus) Rate() float64 {
	if w.Busy <= 0 {
		return 0
	}
	return float64(w.Inputs) / w.Busy.Seconds()
}

// A Result is what a worker's run of a unit did.
type Result struct {
	// Inputs counts the inputs run.
	Inputs uint64
	// Unsupported, when set, says why the unit ran nothing: the worker's
	// SUT does not implement its target.
	Unsupported string
}

// FailedUnit is a unit recorded as failed.
type FailedUnit struct {
	ID string
	// Worker is the worker that gave up on the unit.
	Worker string
	// Deliveries is how often the unit had been delivered when it was
	// given up on.
	Deliveries uint64
	// Err is the error of its last run, or why it was not run.
	Err string
}

// UnitsFailedError is Run's error when every unit ended but some of them
// failed.
type UnitsFailedError struct {
	Units []FailedUnit
}

func (e *UnitsFailedError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "campaign/queue: %d unit(s) failed", len(e.Units))
	for i, u := range e.Units {
		if i == 3 {
			fmt.Fprintf(&b, "; and %d more", len(e.Units)-i)
			break
		}
		fmt.Fprintf(&b, "; %s after %d deliveries on %s: %s", u.ID, u.Deliveries, u.Worker, u.Err)
	}
	return b.String()
}

// outcome is the record of one unit's end in the done stream.
type outcome struct {
	ID          string  `json:"id"`
	Worker      string  `json:"worker"`
	Failed      bool    `json:"failed,omitempty"`
	Error       string  `json:"error,omitempty"`
	Deliveries  uint64  `json:"deliveries"`
	Inputs      uint64  `json:"inputs,omitempty"`
	Busy        float64 `json:"busy_sec,omitempty"`
	Unsupported string  `json:"unsupported,omitempty"`
}

// workerRecord is a worker's record in the info stream: who it is, and
// whether it joined the campaign or refused it.
type workerRecord struct {
	Worker   string          `json:"worker"`
	Identity json.RawMessage `json:"identity,omitempty"`
	Refused  string          `json:"refused,omitempty"`
	At       time.Time       `json:"at"`
}

// An UnreachableError is a server that could not be reached, or that has no
// JetStream: the campaign could not run at all.
type UnreachableError struct {
	URL string
	Err error
}

func (e *UnreachableError) Error() string {
	return fmt.Sprintf("campaign/queue: %s: %v", e.URL, e.Err)
}

func (e *UnreachableError) Unwrap() error { return e.Err }

// connect dials ep's server and opens JetStream on it, bounded by ctx.
func connect(ctx context.Context, ep Endpoint, name string) (*nats.Conn, jetstream.JetStream, error) {
	if err := ep.validate(); err != nil {
		return nil, nil, err
	}
	return connectServer(ctx, ep.URL, name)
}

// connectServer dials a server and opens JetStream on it, bounded by ctx.
// The server must answer as a JetStream server before it returns.
func connectServer(ctx context.Context, url, name string) (*nats.Conn, jetstream.JetStream, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, fmt.Errorf("campaign/queue: connect to %s: %w", url, err)
	}
	timeout := connectTimeout
	if d, ok := ctx.Deadline(); ok {
		timeout = min(timeout, time.Until(d))
	}
	nc, err := nats.Connect(url,
		nats.Name(name),
		nats.Timeout(timeout),
		nats.MaxReconnects(-1),
	)
	if err != nil {
		return nil, nil, &UnreachableError{URL: url, Err: fmt.Errorf("connect: %w", err)}
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, nil, &UnreachableError{URL: url, Err: fmt.Errorf("JetStream: %w", err)}
	}
	actx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if _, err := js.AccountInfo(actx); err != nil {
		nc.Close()
		if ctx.Err() != nil {
			return nil, nil, fmt.Errorf("campaign/queue: connect to %s: %w", url, ctx.Err())
		}
		return nil, nil, &UnreachableError{URL: url, Err: fmt.Errorf("no JetStream (is the server started with -js?): %w", err)}
	}
	return nc, js, nil
}

// drain closes nc in order, waiting at most drainTimeout for what it has in
// flight to reach the server.
func drain(nc *nats.Conn) error {
	if nc.IsClosed() {
		return nil
	}
	closed := make(chan struct{})
	nc.SetClosedHandler(func(*nats.Conn) { close(closed) })
	if err := nc.Drain(); err != nil {
		nc.Close()
		if errors.Is(err, nats.ErrConnectionClosed) {
			return nil
		}
		return fmt.Errorf("campaign/queue: drain: %w", err)
	}
	select {
	case <-closed:
		return nil
	case <-time.After(drainTimeout):
		nc.Close()
		return fmt.Errorf("campaign/queue: drain: not done after %v; closed", drainTimeout)
	}
}

// keepAlive tells JetStream every period that m is still being worked on,
// until the returned stop is called.
func keepAlive(m jetstream.Msg, period time.Duration) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(period)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				_ = m.InProgress() // a lost keep-alive only risks a duplicate run
			}
		}
	}()
	return func() { close(done); <-finished }
}

// keepAlivePeriod is the keep-alive interval for an ack wait: a third of
// it, so that two keep-alives can be lost before the unit is redelivered.
func keepAlivePeriod(ackWait time.Duration) time.Duration {
	return max(ackWait/3, 10*time.Millisecond)
}

func decodeOutcome(data []byte) (outcome, error) {
	var o outcome
	if err := json.Unmarshal(data, &o); err != nil {
		return o, fmt.Errorf("campaign/queue: undecodable outcome record: %w", err)
	}
	if o.ID == "" {
		return o, fmt.Errorf("campaign/queue: outcome record without a unit ID")
	}
	return o, nil
}
