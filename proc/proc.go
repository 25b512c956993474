// Package proc starts every child process conform runs — a SUT over the exec
// carrier, a fault SUT, the lib: carrier's host, a node the live cases
// launch — with one set of guarantees, so that no child, and nothing a child
// starts, can keep conform from exiting or outlive it:
//
//   - Each child leads a process group of its own, and stopping it kills the
//     whole group. conform's terminal signals (Ctrl+C) reach conform alone,
//     which decides when its children end.
//   - Each child carries a mark in its environment (the variable
//     CONFORM_PROC) that its descendants inherit. When the child ends, every
//     process still carrying its mark is killed, even one that left the
//     group with setsid, so a descendant cannot hold the child's pipes open
//     and stall the harness.
//   - On Linux each child is started with a parent-death signal (SIGKILL):
//     when conform dies, even by kill -9, its children die with it. What they
//     started is killed by the next conform's Sweep, which ends the processes
//     whose mark names a conform that is no longer running.
//   - A program that calls Subreap (conform's main does) becomes, on Linux,
//     a child subreaper: orphaned descendants are re-parented to it rather
//     than to init, so it can reap them; Stop and Shutdown do.
//   - The child's standard error is kept in a bounded ring (Config.StderrLimit
//     bytes, the tail); what was dropped is counted, never stored.
//   - Every wait is bounded. A child is always reaped, by a goroutine that
//     waits for it from the moment it starts; Stop returns within StopTimeout
//     even when a process cannot be killed (one in uninterruptible sleep).
//
// Standard input and output are *os.File values (pipes, usually), never
// io.Reader or io.Writer, so that no copying goroutine stands between the
// child and its caller: os/exec's Wait blocks on such a goroutine as long as
// any descendant holds the pipe, which is how a SUT's setsid'd descendant
// once kept conform from exiting.
//
// The package keeps a registry of the children it started, because the
// state it mirrors is the process's own: which of its children it waits for,
// and whether it is a subreaper. A program that calls Subreap promises that
// it starts every child through proc, so that any other child it finds is an
// orphan it may reap.
package proc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// MarkVar is the environment variable that carries the marks of the
// children proc starts: a space-separated list of tokens, one added by each
// conform in the chain of processes that led to this one.
const MarkVar = "CONFORM_PROC"

// Limits of the package's waits and buffers.
const (
	// DefaultStderrLimit is how much of a child's standard error is kept
	// when Config.StderrLimit is zero: the tail.
	DefaultStderrLimit = 8 << 10

	// StopTimeout bounds Stop: the kill of the child's group and its
	// descendants, the reaping of the child and the draining of its
	// standard error.
	StopTimeout = 5 * time.Second

	// treeTimeout bounds the killing of a child's descendants once the child
	// itself has exited: long enough for a killed process to be scheduled
	// and die on a loaded machine.
	treeTimeout = 2 * time.Second

	// drainTimeout is how long the standard error of an exited child is
	// still read: what the child wrote before it exited is already in the
	// pipe, and a process that escaped the kill and holds the pipe must not
	// hold Stop too.
	drainTimeout = 250 * time.Millisecond
)

// Config describes a child to start.
type Config struct {
	// Argv is the program and its arguments. A program name without a slash
	// is looked up in PATH, as os/exec does.
	Argv []string
	// Env is the child's whole environment; nil means conform's own. The
	// mark (MarkVar) is added to it.
	Env []string
	// Dir is the child's working directory; empty means conform's.
	Dir string
	// Stdin and Stdout are the child's standard input and output; nil means
	// the null device.
	Stdin, Stdout *os.File
	// ExtraFiles are passed as descriptors 3, 4, … .
	ExtraFiles []*os.File
	// StderrLimit is how much of the child's standard error is kept (the
	// tail). Zero means DefaultStderrLimit.
	StderrLimit int
}

// Process is a started child. Its methods are safe for concurrent use.
type Process struct {
	cmd   *exec.Cmd
	pid   int
	token string

	stderr  *Ring
	errR    *os.File      // the read end of the stderr pipe
	drained chan struct{} // closed when the stderr copier returns

	mu        sync.Mutex
	reaped    bool            // set, under mu, once cmd.Wait has returned
	exited    context.Context // done once the child is reaped
	setExited context.CancelFunc
	err       error // cmd.Wait's, once exited is done

	stopOnce sync.Once
}

// Start starts the child that c describes and a goroutine that reaps it.
// The caller must call Stop, which is what releases the child's pipes and
// its descendants, when it is done with the child, even after the child
// has exited.
func Start(c Config) (*Process, error) {
	if len(c.Argv) == 0 {
		return nil, errors.New("proc: no program to start")
	}
	limit := c.StderrLimit
	if limit <= 0 {
		limit = DefaultStderrLimit
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("proc: stderr pipe: %w", err)
	}
	cmd := exec.Command(c.Argv[0], c.Argv[1:]...)
	cmd.Dir = c.Dir
	cmd.Stdin, cmd.Stdout, cmd.Stderr = c.Stdin, c.Stdout, errW
	cmd.ExtraFiles = c.ExtraFiles
	cmd.SysProcAttr = sysProcAttr()
	env := c.Env
	if env == nil {
		env = os.Environ()
	}

	p := &Process{cmd: cmd, stderr: NewRing(limit), errR: errR, drained: make(chan struct{})}
	p.exited, p.setExited = context.WithCancel(context.Background())
	reg.mu.Lock()
	reg.seq++
	p.token = fmt.Sprintf("%s.%d", self, reg.seq)
	cmd.Env = withMark(env, p.token)
	err = cmd.Start()
	if err == nil {
		p.pid = cmd.Process.Pid
		reg.live[p.pid] = p
	}
	reg.mu.Unlock()
	errW.Close()
	if err != nil {
		errR.Close()
		return nil, err
	}
	go p.copyStderr()
	go p.wait()
	return p, nil
}

// withMark returns env with token added to MarkVar's list.
func withMark(env []string, token string) []string {
	out := make([]string, 0, len(env)+1)
	marks := token
	prefix := MarkVar + "="
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, prefix); ok {
			if v != "" {
				marks = v + " " + token
			}
			continue
		}
		out = append(out, kv)
	}
	return append(out, prefix+marks)
}

// hasToken reports whether env, a NUL-separated environment as
// /proc/PID/environ holds it, carries a mark that match accepts.
func hasToken(env []byte, match func(token string) bool) bool {
	prefix := []byte(MarkVar + "=")
	for len(env) > 0 {
		kv := env
		if i := bytes.IndexByte(env, 0); i >= 0 {
			kv, env = env[:i], env[i+1:]
		} else {
			env = nil
		}
		v, ok := bytes.CutPrefix(kv, prefix)
		if !ok {
			continue
		}
		for _, t := range bytes.Fields(v) {
			if match(string(t)) {
				return true
			}
		}
	}
	return false
}

func (p *Process) copyStderr() {
	defer close(p.drained)
	buf := make([]byte, 4<<10)
	for {
		n, err := p.errR.Read(buf)
		p.stderr.Write(buf[:n])
		if err != nil {
			return
		}
	}
}

// wait reaps the child. On Linux it first waits for the exit without
// reaping, so that the child's process ID, and with it its group's, cannot
// be reused while the group and the marked descendants are killed.
func (p *Process) wait() {
	held := waitExited(p.pid)
	if held {
		p.endTree()
	}
	p.mu.Lock()
	p.err = p.cmd.Wait()
	p.reaped = true
	p.mu.Unlock()
	if !held {
		// Where the exit cannot be awaited without reaping, the group is
		// killed just after: its ID could in principle have been reused in
		// between, a window of microseconds against the whole ID space.
		p.endTree()
	}
	reg.mu.Lock()
	delete(reg.live, p.pid)
	reg.mu.Unlock()
	p.setExited()
}

// endTree kills the child's group and every process carrying its mark,
// until none is left alive or treeTimeout passes.
func (p *Process) endTree() {
	deadline := time.Now().Add(treeTimeout)
	pause := time.Millisecond
	for {
		killGroup(p.pid)
		alive := killMarked(func(t string) bool { return t == p.token })
		reapOrphans()
		if alive == 0 || time.Now().After(deadline) {
			return
		}
		time.Sleep(pause)
		pause = min(2*pause, 50*time.Millisecond)
	}
}

// Pid returns the child's process ID.
func (p *Process) Pid() int { return p.pid }

// Exited returns a channel closed once the child has exited and been
// reaped, and its descendants killed.
func (p *Process) Exited() <-chan struct{} { return p.exited.Done() }

// AfterExit arranges for f to run in its own goroutine once the child has
// exited, as context.AfterFunc does; stop cancels that, reporting whether
// it did. It costs no goroutine while the child runs.
func (p *Process) AfterExit(f func()) (stop func() bool) { return context.AfterFunc(p.exited, f) }

// WaitExit waits up to d, or until ctx is done, for the child to exit, and
// reports whether it did.
func (p *Process) WaitExit(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.exited.Done():
		return true
	case <-t.C:
	case <-ctx.Done():
	}
	return false
}

// Err returns what os/exec's Wait returned for the child — nil for a zero
// exit status, an *exec.ExitError otherwise — once Exited is closed, and nil
// before.
func (p *Process) Err() error {
	select {
	case <-p.exited.Done():
		return p.err
	default:
		return nil
	}
}

// ExitCode returns the child's exit status, -1 when a signal ended it or it
// has not exited.
func (p *Process) ExitCode() int {
	select {
	case <-p.exited.Done():
	default:
		return -1
	}
	var ee *exec.ExitError
	switch {
	case p.err == nil:
		return 0
	case errors.As(p.err, &ee):
		return ee.ExitCode()
	}
	return -1
}

// Exit describes how the child ended — "exit status 1", "signal: aborted" —
// or returns "" while it runs.
func (p *Process) Exit() string {
	select {
	case <-p.exited.Done():
	default:
		return ""
	}
	if p.err == nil {
		return "exit status 0"
	}
	return p.err.Error()
}

// Stderr returns the tail of the child's standard error so far, preceded by
// "[N bytes dropped]" when more was written than is kept. The bytes are as
// the child wrote them; escaping them for a terminal is the reader's task.
func (p *Process) Stderr() string { return p.stderr.String() }

// Stop kills the child's process group and every process carrying its mark,
// reaps the child and stops reading its standard error. A child that has
// already exited is only cleaned up after, so Exit still reports its own
// status. Stop returns within StopTimeout; calling it again does nothing.
func (p *Process) Stop() {
	p.stopOnce.Do(func() {
		deadline := time.Now().Add(StopTimeout)
		p.mu.Lock()
		if !p.reaped {
			// The child is alive or not yet reaped, so its process ID and
			// group ID are still its own.
			killGroup(p.pid)
			_ = p.cmd.Process.Kill()
		}
		p.mu.Unlock()
		select {
		case <-p.exited.Done():
		case <-time.After(time.Until(deadline)):
		}
		// What the child wrote before it exited is in the pipe; a process
		// that escaped the kill and still holds the pipe is not waited for.
		_ = p.errR.SetReadDeadline(time.Now().Add(min(drainTimeout, max(0, time.Until(deadline)))))
		select {
		case <-p.drained:
		case <-time.After(time.Until(deadline) + drainTimeout):
		}
		p.errR.Close()
	})
}

// Shutdown stops every child proc started that has not been stopped and,
// in a subreaper (see Subreap), kills and reaps every other child of this
// process: at exit, any such child is an orphan of something conform
// started. It returns within StopTimeout.
func Shutdown() {
	reg.mu.Lock()
	live := make([]*Process, 0, len(reg.live))
	for _, p := range reg.live {
		live = append(live, p)
	}
	reg.mu.Unlock()
	var wg sync.WaitGroup
	for _, p := range live {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.Stop()
		}()
	}
	wg.Wait()
	killOwnMarks()
	killOrphans()
}

// KillAll sends SIGKILL, at once and without waiting, to every child proc
// started, to their process groups, and to every process carrying a mark of
// this process. It is for a program about to exit immediately, such as
// conform on a second Ctrl+C.
func KillAll() {
	reg.mu.Lock()
	for pid := range reg.live {
		killGroup(pid)
	}
	reg.mu.Unlock()
	killOwnMarks()
}

// killOwnMarks kills every live process carrying a mark this process gave.
func killOwnMarks() {
	prefix := self.String() + "."
	killMarked(func(t string) bool { return strings.HasPrefix(t, prefix) })
}

// Sweep kills the processes that conforms which are no longer running left
// behind: every live process, of this user, whose mark names an owner that
// has exited. A conform killed by SIGKILL cannot clean up after itself, and
// while its children die by their parent-death signal, what they started
// does not. Sweep returns the number of processes it killed.
func Sweep() int {
	alive := map[string]bool{}
	return killMarked(func(t string) bool {
		owner := ownerOfToken(t)
		ok, seen := alive[owner]
		if !seen {
			o, err := ParseOwner(owner)
			ok = err != nil || o.Alive() // an unreadable mark is not ours to judge
			alive[owner] = ok
		}
		return !ok
	})
}

// ownerOfToken returns the owner part of a token "PID.START.SEQ".
func ownerOfToken(t string) string {
	if i := strings.LastIndexByte(t, '.'); i >= 0 {
		return t[:i]
	}
	return t
}

// registry is the package's view of this process's children: the ones proc
// started and reaps itself, and whether the process is a subreaper.
type registry struct {
	mu        sync.Mutex
	seq       uint64
	live      map[int]*Process
	subreaper bool
}

var (
	reg  = registry{live: map[int]*Process{}}
	self = Self()
)

// Ring keeps the last bytes written to it and counts the ones it dropped.
// Its methods are safe for concurrent use.
type Ring struct {
	mu      sync.Mutex
	limit   int
	buf     []byte
	dropped int64
}

// NewRing returns a Ring that keeps the last limit bytes.
func NewRing(limit int) *Ring { return &Ring{limit: limit, buf: make([]byte, 0, min(limit, 4<<10))} }

// Write keeps the tail of what it is given. It never fails.
func (r *Ring) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := len(p)
	if len(p) > r.limit {
		r.dropped += int64(len(p) - r.limit)
		p = p[len(p)-r.limit:]
	}
	if over := len(r.buf) + len(p) - r.limit; over > 0 {
		r.dropped += int64(over)
		r.buf = r.buf[:copy(r.buf, r.buf[over:])]
	}
	r.buf = append(r.buf, p...)
	return n, nil
}

// Dropped returns how many bytes were written and not kept.
func (r *Ring) Dropped() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.dropped
}

// String returns what is kept, preceded by "[N bytes dropped]" and a
// newline when bytes were dropped.
func (r *Ring) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.dropped > 0 {
		return fmt.Sprintf("[%d bytes dropped]\n%s", r.dropped, r.buf)
	}
	return string(r.buf)
}
