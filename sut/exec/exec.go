// Package exec reaches a SUT program over its standard input and output: the
// harness starts it in its own process group, speaks conform.v1 on its stdin
// and stdout, keeps the tail of its stderr for the record, and kills the
// whole group when an op times out or the run ends.
package exec

import (
	"context"
	"errors"
	"fmt"
	"os"
	osexec "os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/sut"
)

// StderrLimit is how much of a SUT's standard error is kept: the tail, so
// that a SUT that logs without end cannot exhaust the harness's memory.
const StderrLimit = 64 << 10

// Client is a sut.Client for a program. After a crash, a timeout or a
// protocol error the program is killed, and the next Do starts it again.
type Client struct {
	argv         []string
	env          []string
	helloTimeout time.Duration

	proc  *process
	hello *conformpb.Hello
}

// Options configure a Client.
type Options struct {
	// HelloTimeout bounds the wait for the program's Hello.
	HelloTimeout time.Duration
	// Env is added to the program's environment.
	Env []string
}

// Start starts argv and waits for its Hello. A program that cannot be
// started or never says Hello yields an *sut.Error of kind KindStart.
func Start(ctx context.Context, argv []string, opts Options) (*Client, error) {
	if len(argv) == 0 {
		return nil, &sut.Error{Kind: sut.KindStart, Detail: "no program to run"}
	}
	if opts.HelloTimeout <= 0 {
		opts.HelloTimeout = 10 * time.Second
	}
	c := &Client{argv: argv, env: opts.Env, helloTimeout: opts.HelloTimeout}
	if err := c.start(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *Client) Hello() *conformpb.Hello { return c.hello }

func (c *Client) Carrier() string { return "exec:" + strings.Join(c.argv, " ") }

// Do runs one op, restarting the program first if the last op lost it.
func (c *Client) Do(ctx context.Context, req *conformpb.Request) (*conformpb.Response, error) {
	if c.proc == nil {
		if err := c.start(ctx); err != nil {
			return nil, err
		}
	}
	resp, err := c.proc.sess.Do(ctx, req)
	if err != nil {
		var se *sut.Error
		if !errors.As(err, &se) {
			se = &sut.Error{Kind: sut.KindProtocol, Detail: "conform.v1 failed", Err: err}
		}
		c.proc.stop(se)
		c.proc = nil
		return nil, se
	}
	return resp, nil
}

// Close kills the program and waits for it.
func (c *Client) Close() error {
	if c.proc != nil {
		c.proc.stop(nil)
		c.proc = nil
	}
	return nil
}

func (c *Client) start(ctx context.Context) error {
	p, err := launch(c.argv, c.env)
	if err != nil {
		return &sut.Error{Kind: sut.KindStart, Detail: fmt.Sprintf("cannot start %q", c.argv[0]), Err: err}
	}
	hctx, cancel := context.WithTimeout(ctx, c.helloTimeout)
	defer cancel()
	sess, err := sut.Open(hctx, p.stdout, p.stdin)
	if err != nil {
		se := &sut.Error{Kind: sut.KindStart, Detail: "the SUT never said Hello", Err: err}
		p.stop(se)
		return se
	}
	p.sess = sess
	c.proc = p
	c.hello = sess.Hello()
	return nil
}

// process is one run of the program.
type process struct {
	cmd    *osexec.Cmd
	stdin  *os.File
	stdout *os.File
	stderr *tail
	sess   *sut.Session
	waited chan struct{}
	err    error // from cmd.Wait
}

func launch(argv, env []string) (*process, error) {
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
	p := &process{stdin: inW, stdout: outR, stderr: &tail{limit: StderrLimit}, waited: make(chan struct{})}
	cmd := osexec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, p.stderr
	cmd.Env = append(os.Environ(), env...)
	// Its own process group, so that a timeout kills whatever the SUT
	// started too; and killed with the harness, so that nothing outlives it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		for _, f := range []*os.File{inR, inW, outR, outW} {
			f.Close()
		}
		return nil, err
	}
	inR.Close()
	outW.Close()
	p.cmd = cmd
	go func() {
		p.err = cmd.Wait()
		close(p.waited)
	}()
	return p, nil
}

// stop ends the process group and fills in what se needs to know about how
// the process ended. A process that already exited is only reaped.
func (p *process) stop(se *sut.Error) {
	if se != nil && se.Kind == sut.KindCrash {
		// The SUT's output ended: it is exiting. Give it a moment to finish,
		// so that the record names its real status rather than our kill.
		select {
		case <-p.waited:
		case <-time.After(200 * time.Millisecond):
		}
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	p.stdin.Close()
	<-p.waited
	p.stdout.Close()
	if p.sess != nil {
		p.sess.Close()
	}
	if se != nil {
		se.Stderr = p.stderr.String()
		if p.err != nil {
			se.Exit = p.err.Error()
		} else {
			se.Exit = "exit status 0"
		}
	}
}

// tail keeps the last limit bytes written to it.
type tail struct {
	mu    sync.Mutex
	limit int
	buf   []byte
	lost  int
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.limit; over > 0 {
		t.lost += over
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.lost > 0 {
		return fmt.Sprintf("[%d earlier bytes dropped]\n%s", t.lost, t.buf)
	}
	return string(t.buf)
}
