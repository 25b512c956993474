// Package exec reaches a SUT program over pipes: the harness starts it with
// package proc (its own process group, a parent-death signal, a bounded
// stderr tail, always reaped, descendants ended with it), speaks conform.v1
// on its standard input and output — or, for a child that must keep those
// for someone else, on descriptors 3 and 4 — and kills it, with everything
// it started, when an op times out, breaks the protocol or the run ends.
package exec

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/conform-suite/conform/proc"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/reports"
	"github.com/conform-suite/conform/sut"
)

// StderrLimit is how much of a SUT's standard error is kept: the tail, so
// that a SUT that logs without end cannot exhaust the harness's memory.
const StderrLimit = reports.MaxStderr

// DefaultHelloTimeout bounds the wait for a program's Hello when
// Options.HelloTimeout is zero; the op's context bounds it too.
const DefaultHelloTimeout = 10 * time.Second

// exitGrace is how long the harness still reads a program's output once the
// program has exited: what it wrote before it exited is in the pipe, and a
// descendant that holds the pipe open is not the SUT.
const exitGrace = 250 * time.Millisecond

// The descriptors of the private channel (Options.PrivateFDs), as the child
// sees them.
const (
	// RequestFD is the descriptor the child reads requests from.
	RequestFD = 3
	// AnswerFD is the descriptor the child writes its answers to.
	AnswerFD = 4
)

// Client is a sut.Client for a program. After a crash, a timeout or a
// protocol error the program is killed, and the next Do starts it again.
type Client struct {
	argv         []string
	opts         Options
	helloTimeout time.Duration
	// cpuWaits reads how long a process's threads waited for a CPU
	// (proc.CPUWaits); a test gives waits of its own.
	cpuWaits func(*proc.Process) map[int]time.Duration

	proc  *process
	hello *conformpb.Hello
}

// Options configure a Client.
type Options struct {
	// HelloTimeout bounds the wait for the program's Hello.
	HelloTimeout time.Duration
	// Env is added to the program's environment.
	Env []string
	// PrivateFDs carries conform.v1 on descriptors RequestFD and AnswerFD
	// instead of the program's standard input and output: its standard
	// input is then the null device and its standard output goes, with
	// its standard error, to the kept tail. The lib: carrier's host uses
	// it, so that a library writing to stdout cannot corrupt the framing.
	PrivateFDs bool
}

// Start starts argv and waits for its Hello. A program that cannot be
// started, exits before its Hello or does not say it in time yields an
// *sut.Error of kind reports.KindStart carrying the exit status or signal
// and the tail of its standard error.
func Start(ctx context.Context, argv []string, opts Options) (*Client, error) {
	if len(argv) == 0 {
		return nil, &sut.Error{Kind: reports.KindStart, Detail: "no program to run"}
	}
	c := &Client{argv: argv, opts: opts, helloTimeout: opts.HelloTimeout, cpuWaits: (*proc.Process).CPUWaits}
	if c.helloTimeout <= 0 {
		c.helloTimeout = DefaultHelloTimeout
	}
	if err := c.start(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *Client) Hello() *conformpb.Hello { return c.hello }

func (c *Client) Carrier() string { return "exec:" + strings.Join(c.argv, " ") }

// Do runs one op, restarting the program first if the last op lost it. The
// restart is bounded by ctx as the op is: a program that no longer says
// Hello costs one op's time, and yields an error of kind reports.KindStart.
func (c *Client) Do(ctx context.Context, req *conformpb.Request) (*conformpb.Response, error) {
	if c.proc == nil {
		if err := c.start(ctx); err != nil {
			return nil, err
		}
	}
	p := c.proc
	// The op's deadline is the SUT's own time, stretched by what the
	// machine kept it waiting for a CPU (patience.go).
	ctx, stretched, release := patient(ctx, c.waitsOf(p))
	defer release()
	ctx, cancel := p.untilExit(ctx)
	defer cancel()
	resp, err := p.sess.Do(ctx, req)
	if err != nil {
		var se *sut.Error
		if !errors.As(err, &se) {
			se = &sut.Error{Kind: reports.KindProtocol, Detail: "conform.v1 failed", Err: err}
		}
		if errors.Is(context.Cause(ctx), errExited) {
			se = &sut.Error{Kind: reports.KindCrash, Detail: "the SUT exited without answering", Err: err}
		}
		if se.Kind == reports.KindTimeout {
			se.Detail += stretched.excused()
		}
		p.stop(se)
		c.proc = nil
		return nil, se
	}
	return resp, nil
}

// Close kills the program and everything it started, and reaps it.
func (c *Client) Close() error {
	if c.proc != nil {
		c.proc.stop(nil)
		c.proc = nil
	}
	return nil
}

func (c *Client) start(ctx context.Context) error {
	p, err := launch(c.argv, c.opts)
	if err != nil {
		return &sut.Error{Kind: reports.KindStart, Detail: fmt.Sprintf("cannot start %q", c.argv[0]), Err: err}
	}
	d, ok := ctx.Deadline()
	opFirst := ok && time.Until(d) <= c.helloTimeout // the op's time bounds the Hello
	hctx, cancel := context.WithTimeout(ctx, c.helloTimeout)
	defer cancel()
	// A program starting on a busy machine waits for a CPU as one
	// answering an op does, and is excused it the same way: a restart in a
	// fuzz campaign that missed its Hello for that reason was a start
	// error where the op before it had been a timeout, and the campaign
	// could not see the hang again.
	hctx, stretched, release := patient(hctx, c.waitsOf(p))
	defer release()
	hctx, stopWatch := p.untilExit(hctx)
	defer stopWatch()
	sess, err := sut.Open(hctx, p.answers, p.requests)
	if err != nil {
		se := &sut.Error{Kind: reports.KindStart, Detail: "the SUT never said Hello", Err: err}
		exited := errors.Is(context.Cause(hctx), errExited)
		if !exited && outputEnded(se) {
			exited = p.p.WaitExit(context.Background(), exitGrace)
		}
		switch {
		case exited:
			se.Detail = "the SUT exited before its Hello"
		case errors.Is(ctx.Err(), context.Canceled):
			// The run was interrupted (Ctrl+C) while the SUT was starting:
			// nothing is known against it.
			se.Kind, se.Detail = reports.KindInterrupted, "interrupted before the SUT said Hello"
		case errors.Is(context.Cause(hctx), errOpTimeout) && opFirst:
			se.Detail = "the SUT did not say Hello within the op's time"
		case errors.Is(context.Cause(hctx), errOpTimeout):
			se.Detail = fmt.Sprintf("the SUT did not say Hello within %v", c.helloTimeout)
		}
		if errors.Is(context.Cause(hctx), errOpTimeout) {
			se.Detail += stretched.excused()
		}
		p.stop(se)
		return se
	}
	p.sess = sess
	c.proc = p
	c.hello = sess.Hello()
	return nil
}

// waitsOf returns the reader of p's waits for a CPU that patient takes.
func (c *Client) waitsOf(p *process) func() map[int]time.Duration {
	return func() map[int]time.Duration { return c.cpuWaits(p.p) }
}

// errExited is the cause of a context ended because the program exited.
var errExited = errors.New("the SUT exited")

// process is one run of the program.
type process struct {
	p        *proc.Process
	requests *os.File // the harness's end: the SUT reads what is written here
	answers  *os.File // the harness's end: the SUT's answers arrive here
	sess     *sut.Session
}

func launch(argv []string, opts Options) (*process, error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	cfg := proc.Config{Argv: argv, Env: append(os.Environ(), opts.Env...), StderrLimit: StderrLimit}
	if opts.PrivateFDs {
		cfg.ExtraFiles = []*os.File{inR, outW} // 3 and 4
	} else {
		cfg.Stdin, cfg.Stdout = inR, outW
	}
	p, err := proc.Start(cfg)
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, err
	}
	return &process{p: p, requests: inW, answers: outR}, nil
}

// untilExit returns ctx, also ended — with cause errExited — exitGrace
// after the program exits: a program that died cannot answer, even when a
// descendant of it keeps its output open.
func (p *process) untilExit(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(ctx)
	stop := p.p.AfterExit(func() {
		time.AfterFunc(exitGrace, func() { cancel(errExited) })
	})
	return ctx, func() {
		stop()
		cancel(nil)
	}
}

// stop ends the program and everything it started, and fills in what se
// needs to know about how the program ended. A program whose output ended
// is exiting: it is given a moment, so that the record names its own
// status rather than conform's kill.
func (p *process) stop(se *sut.Error) {
	if se != nil && outputEnded(se) {
		p.p.WaitExit(context.Background(), exitGrace)
	}
	p.p.Stop()
	p.requests.Close()
	p.answers.Close()
	if p.sess != nil {
		p.sess.Close()
	}
	if se != nil {
		se.Stderr = reports.ClipTail(p.p.Stderr(), reports.MaxStderr)
		se.Exit = p.p.Exit()
	}
}

// outputEnded reports whether se, or the error it wraps, says the SUT's
// output ended or broke off.
func outputEnded(se *sut.Error) bool {
	if se.Kind == reports.KindCrash {
		return true
	}
	var inner *sut.Error
	return errors.As(se.Err, &inner) && inner.Kind == reports.KindCrash
}
