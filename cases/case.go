// Package cases defines a conformance case and the T a case runs with. The
// catalogues live in subpackages, one per suite (cases/wire, …); each entry
// reads like the requirement it enforces and talks to the SUT only through T.
package cases

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"time"

	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/reports"
)

// A Case checks one requirement of the specification.
type Case struct {
	// ID is the case's stable name, suite/section/slug, for example
	// wire/1.3/byte-at-a-time. It never changes and is never reused.
	ID string
	// Title states the requirement in one line.
	Title string
	// Spec cites the section enforced, for example "ranvier-wire §1.3".
	Spec string
	// Level is the requirement's RFC 2119 level. It decides what a failed
	// check means: fail for MUST, warn for SHOULD, info for MAY and INFO.
	Level reports.Level
	// Profile is the profile a SUT declares to implement this case.
	Profile string
	// Tags classify the case; "reconstructed" marks a verdict that rests on
	// the pins of docs/requirements.md rather than on a source document.
	Tags []string
	// Requirements are the IDs of the requirements the case judges, as the
	// requirements index names them (for example "ranvier-wire§1.3#2").
	Requirements []string
	// Vectors are the IDs of the corpus vectors the case uses.
	Vectors []string
	// Run performs the case.
	Run func(t *T)
}

// Suite returns the case's suite, the first part of its ID.
func (c *Case) Suite() string { return reports.SuiteOf(c.ID) }

// Check validates a catalogue: IDs well formed, unique, and every field set.
func Check(cs []Case) error {
	seen := map[string]bool{}
	for _, c := range cs {
		parts := strings.Split(c.ID, "/")
		if len(parts) != 3 || parts[0] == "" || parts[1] == "" || parts[2] == "" {
			return fmt.Errorf("case %q: an ID is suite/section/slug", c.ID)
		}
		if seen[c.ID] {
			return fmt.Errorf("case %q: ID used twice", c.ID)
		}
		seen[c.ID] = true
		switch {
		case c.Title == "", c.Spec == "", c.Profile == "", c.Run == nil:
			return fmt.Errorf("case %q: title, spec, profile and run are required", c.ID)
		case c.Level != reports.MUST && c.Level != reports.SHOULD && c.Level != reports.MAY && c.Level != reports.INFO:
			return fmt.Errorf("case %q: level %q is not MUST, SHOULD, MAY or INFO", c.ID, c.Level)
		}
	}
	return nil
}

// Sorted returns cs sorted by ID.
func Sorted(cs []Case) []Case {
	out := append([]Case(nil), cs...)
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// Abort stops a case with an outcome other than the one its checks would
// give: a skip, or an error attributed to the SUT. T.Do raises it; the runner
// recovers it.
type Abort struct {
	Outcome reports.Outcome
	// Kind is the error kind, with Outcome error.
	Kind    reports.ErrorKind
	Message string
	Stderr  string
	// Unimplemented is set when the SUT answered Unimplemented.
	Unimplemented bool
}

func (a *Abort) Error() string { return fmt.Sprintf("%s: %s", a.Outcome, a.Message) }

// T is what a case runs with: the SUT, a seeded source of randomness, and the
// record of what the case found.
type T struct {
	ctx   context.Context
	do    DoFunc
	hello *conformpb.Hello
	rand  *rand.Rand

	env *Env
	// maxMessage is the carrier's limit on one message, or zero.
	maxMessage int
	// opTimeout bounds one op, as --timeout says, or is zero.
	opTimeout time.Duration

	evidence []reports.Evidence
	notes    []string
}

// Env is what live cases need beyond the SUT's conform.v1 session: the
// broker, the device observed without a shim, the node to launch. The runner
// builds one per run from conform run's flags; a case reads it through T.Env.
type Env struct {
	// Broker returns the URL (nats://host:port) of the NATS server the
	// doppler-nats cases use: the one --nats-url names, or the embedded
	// server, started on first use and shut down with the run. Nil when the
	// run has no broker; Env.BrokerURL then fails the case as a harness error.
	Broker func(ctx context.Context) (string, error)
	// CredentialBroker starts a NATS server of conform's own on loopback
	// that admits only user with password, for the case in which
	// credentials must matter, and returns its URL (nats://host:port,
	// without the credentials) and a func that stops it. Nil when the run
	// cannot start one; the case then ends as a harness error. The run
	// gives the function, rather than the cases starting a server, so that
	// the cases, and every program that links them, leave the NATS
	// server's code to the programs that run one.
	CredentialBroker func(ctx context.Context, user, password string) (url string, stop func(), err error)
	// Peer is the tcp://host:port of a device observed with no shim
	// (conform run --peer), or empty.
	Peer string
	// NodeCommand launches the SUT as a control-plane node (--node-cmd, else
	// the Hello's node_command), or is empty.
	NodeCommand []string
	// Self runs this conform binary, for cases that start a helper process.
	Self []string
}

// BrokerURL returns the URL of the run's NATS server, ending the case as a
// harness error when the run has none or it cannot be started.
func (t *T) BrokerURL() string {
	if t.env == nil || t.env.Broker == nil {
		panic(&Abort{Outcome: reports.Error, Kind: reports.KindHarness, Message: "this case needs a NATS server and the run has none (conform run starts one unless --nats-url names one)"})
	}
	u, err := t.env.Broker(t.ctx)
	if err != nil {
		panic(&Abort{Outcome: reports.Error, Kind: reports.KindHarness, Message: "starting the NATS server: " + err.Error()})
	}
	return u
}

// Env returns the run's environment; never nil.
func (t *T) Env() *Env {
	if t.env == nil {
		return &Env{}
	}
	return t.env
}

// UseEnv gives the case the run's environment. The runner calls it before
// the case runs.
func (t *T) UseEnv(e *Env) { t.env = e }

// UseOpTimeout tells the case how long one op may take (conform run
// --timeout). The runner calls it before the case runs.
func (t *T) UseOpTimeout(d time.Duration) { t.opTimeout = d }

// OpTimeout returns how long one op may take: the run's --timeout, or
// DefaultOpTimeout when the runner gave none. A live case derives from it
// the budgets of waits that cover the SUT's slowness, so that a slow SUT
// given a longer --timeout gets longer waits too.
func (t *T) OpTimeout() time.Duration {
	if t.opTimeout <= 0 {
		return DefaultOpTimeout
	}
	return t.opTimeout
}

// DefaultOpTimeout is how long one op may take when the run says nothing.
const DefaultOpTimeout = 10 * time.Second

// LimitMessages tells the case that the carrier reaching the SUT carries
// messages, requests and answers alike, of at most n bytes (a NATS broker's
// max_payload); zero or less means no limit below conform.v1's ceiling.
// Batched sizes its requests to fit, and skips a case whose input cannot.
// The runner calls it before the case runs.
func (t *T) LimitMessages(n int) { t.maxMessage = max(n, 0) }

// DoFunc performs one request on the SUT. It returns the response only when
// the SUT answered with the op's result; otherwise it returns an *Abort.
type DoFunc func(ctx context.Context, req *conformpb.Request) (*conformpb.Response, error)

// NewT returns a T for one case. The runner supplies do, with the op timeout
// and the carrier's error handling; seed seeds the case's randomness.
func NewT(ctx context.Context, hello *conformpb.Hello, seed uint64, do DoFunc) *T {
	return &T{ctx: ctx, do: do, hello: hello, rand: rand.New(rand.NewPCG(seed, 0x636f6e666f726d))}
}

// Context returns the case's context.
func (t *T) Context() context.Context { return t.ctx }

// Hello returns the SUT's Hello, for the bounds it declares.
func (t *T) Hello() *conformpb.Hello { return t.hello }

// Rand returns the case's seeded randomness: the same seed and case give the
// same chunkings, so a failure reproduces.
func (t *T) Rand() *rand.Rand { return t.rand }

// Do sends req to the SUT and returns the response. A SUT error, an
// Unimplemented answer or an Error answer ends the case with an Abort.
func (t *T) Do(req *conformpb.Request) *conformpb.Response {
	resp, err := t.do(t.ctx, req)
	if err != nil {
		var a *Abort
		if !errors.As(err, &a) {
			a = &Abort{Outcome: reports.Error, Kind: reports.KindHarness, Message: err.Error()}
		}
		panic(a)
	}
	return resp
}

// Protocolf ends the case with an error of kind protocol: the SUT answered
// with something conform.v1 does not allow, such as the result of another op
// or a batch of the wrong length.
func (t *T) Protocolf(format string, args ...any) {
	panic(&Abort{Outcome: reports.Error, Kind: reports.KindProtocol, Message: fmt.Sprintf(format, args...)})
}

// Fatalf records a broken requirement after which the case cannot go on,
// and ends the case.
func (t *T) Fatalf(format string, args ...any) {
	t.Failf(format, args...)
	panic(stop{})
}

// stop ends a case whose checks have said all they can; the case is then
// judged on them at its level, like a case that returned.
type stop struct{}

// Perform runs c on t: c.Run, ended early by Fatalf or not. A panic other
// than Fatalf's (an *Abort, or a conform bug) is the caller's to recover.
func Perform(c *Case, t *T) {
	defer func() {
		if p := recover(); p != nil {
			if _, ok := p.(stop); !ok {
				panic(p)
			}
		}
	}()
	c.Run(t)
}

// Skipf ends the case as skipped, saying why: the SUT cannot be judged on
// it here (its carrier cannot reach what the case needs, for instance).
func (t *T) Skipf(format string, args ...any) {
	panic(&Abort{Outcome: reports.Skip, Message: fmt.Sprintf(format, args...)})
}

// Harnessf ends the case with an error that is conform's own, never the
// SUT's: a resource conform could not get, a deadline conform itself missed.
func (t *T) Harnessf(format string, args ...any) {
	panic(&Abort{Outcome: reports.Error, Kind: reports.KindHarness, Message: fmt.Sprintf(format, args...)})
}

// Fail records a broken requirement with its evidence. The case goes on, so
// that one run shows every check that failed.
func (t *T) Fail(e reports.Evidence) { t.evidence = append(t.evidence, e) }

// Failf records a broken requirement described by a message alone.
func (t *T) Failf(format string, args ...any) {
	t.Fail(reports.Evidence{Message: fmt.Sprintf(format, args...)})
}

// Note records what an informational case observed.
func (t *T) Note(format string, args ...any) {
	t.notes = append(t.notes, fmt.Sprintf(format, args...))
}

// Failed reports whether a check has failed.
func (t *T) Failed() bool { return len(t.evidence) > 0 }

// Evidence returns what the failed checks recorded.
func (t *T) Evidence() []reports.Evidence { return t.evidence }

// Notes returns what the case observed.
func (t *T) Notes() []string { return t.notes }
