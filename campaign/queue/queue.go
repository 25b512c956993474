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

	// coordinatorConsumer is the durable pull consumer of the findings
	// stream through which the coordinator hands findings over.
	coordinatorConsumer = "coordinator"

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
}

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
	// Findings counts distinct signatures handed to onFinding, by this
	// coordinator or an earlier one of the same campaign.
	Findings int
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
	ID         string `json:"id"`
	Worker     string `json:"worker"`
	Failed     bool   `json:"failed,omitempty"`
	Error      string `json:"error,omitempty"`
	Deliveries uint64 `json:"deliveries"`
}

// connect dials ep's server and opens JetStream on it, bounded by ctx.
func connect(ctx context.Context, ep Endpoint, name string) (*nats.Conn, jetstream.JetStream, error) {
	if err := ep.validate(); err != nil {
		return nil, nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, fmt.Errorf("campaign/queue: connect to %s: %w", ep.URL, err)
	}
	timeout := connectTimeout
	if d, ok := ctx.Deadline(); ok {
		timeout = min(timeout, time.Until(d))
	}
	nc, err := nats.Connect(ep.URL,
		nats.Name(name),
		nats.Timeout(timeout),
		nats.MaxReconnects(-1),
	)
	if err != nil {
		return nil, nil, fmt.Errorf("campaign/queue: connect to %s: %w", ep.URL, err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, nil, fmt.Errorf("campaign/queue: JetStream on %s: %w", ep.URL, err)
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
