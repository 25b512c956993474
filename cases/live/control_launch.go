package live

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/conform-suite/conform/cases"
	"github.com/conform-suite/conform/live/peer"
	controlpb "github.com/conform-suite/conform/proto/ranvier/control/v1"
	"github.com/conform-suite/conform/reports"
)

// The waits of the node cases. Each bounds something the node owes; none is
// a figure the specification fixes, so each is generous for a loaded
// machine and still short enough to keep the control cases fast.
const (
	// registerWait bounds launch to the node's Register.
	registerWait = 5 * time.Second
	// owedWait bounds a message, a dial or a close the node owes.
	owedWait = 3 * time.Second
	// exitWait bounds the node's exit after a refusal.
	exitWait = 3 * time.Second
	// killWait bounds the reaping of a killed node.
	killWait = 5 * time.Second
	// stderrTail is how much of the node's standard error is kept.
	stderrTail = 4 << 10
)

// nodeCommand returns the command that launches the SUT as a node: conform
// run --node-cmd, else the Hello's node_command. A SUT without one is
// skipped: conform cannot judge a node it cannot launch.
func nodeCommand(t *cases.T) []string {
	if argv := t.Env().NodeCommand; len(argv) > 0 {
		return argv
	}
	if argv := t.Hello().GetNodeCommand(); len(argv) > 0 {
		return argv
	}
	panic(&cases.Abort{Outcome: reports.Skip, Message: "no node command: the Hello declares no node_command and conform run has no --node-cmd"})
}

// harnessError ends the case with an error that is conform's, not the SUT's.
func harnessError(format string, args ...any) {
	panic(&cases.Abort{Outcome: reports.Error, Kind: "harness", Message: fmt.Sprintf(format, args...)})
}

// tail keeps the last bytes written to it.
type tail struct {
	mu sync.Mutex
	b  []byte
}

func (w *tail) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.b = append(w.b, p...)
	if len(w.b) > stderrTail {
		w.b = append([]byte(nil), w.b[len(w.b)-stderrTail:]...)
	}
	return len(p), nil
}

func (w *tail) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return string(w.b)
}

// nodeRun is one launched node and the runtime conform plays for it
// (ranvier-wire §3.2): a loopback listener, the four RANVIER_* variables,
// and a decoy RANVIER_BINDINGS naming a trap listener the node must never
// dial.
type nodeRun struct {
	t      *cases.T
	ctx    context.Context
	rt     *peer.Runtime
	trap   *peer.PeerPublisher
	cmd    *exec.Cmd
	stderr *tail
	exited chan struct{}
	err    error // the exit, once exited is closed
}

// launchNode starts the SUT as a node with params as RANVIER_PARAMS. The
// caller defers close.
func launchNode(t *cases.T, params string) *nodeRun {
	argv := nodeCommand(t)
	ctx := t.Context()
	trap, err := peer.ListenPublisher(ctx, peer.Limits{})
	if err != nil {
		harnessError("listening for the decoy binding: %v", err)
	}
	decoy, _ := json.Marshal([]map[string]string{{"port": "in", "stream_name": "decoy", "from": trap.Addr()}})
	rt, err := peer.ListenRuntime(ctx, peer.RuntimeConfig{Params: params, ExtraEnv: map[string]string{"RANVIER_BINDINGS": string(decoy)}})
	if err != nil {
		trap.Close()
		harnessError("listening as the runtime: %v", err)
	}
	n := &nodeRun{t: t, ctx: ctx, rt: rt, trap: trap, stderr: new(tail), exited: make(chan struct{})}
	cmd := exec.Command(argv[0], argv[1:]...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "RANVIER_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, rt.Env()...)
	cmd.Stderr = n.stderr
	cmd.WaitDelay = time.Second
	ownGroup(cmd)
	if err := cmd.Start(); err != nil {
		rt.Close()
		trap.Close()
		panic(&cases.Abort{Outcome: reports.Error, Kind: "start", Message: fmt.Sprintf("launching the node %q: %v", argv, err)})
	}
	n.cmd = cmd
	go func() {
		n.err = cmd.Wait()
		close(n.exited)
	}()
	return n
}

// close kills and reaps the node, closes the listeners, and, when the case
// failed, records the tail of the node's standard error.
func (n *nodeRun) close() {
	// The whole group, even when the node itself has exited: whatever it
	// started must not outlive the case. A group ID is not reused while any
	// member lives.
	killGroup(n.cmd)
	select {
	case <-n.exited:
	case <-time.After(killWait):
	}
	n.rt.Close()
	n.trap.Close()
	if tail := n.stderr.String(); n.t.Failed() && tail != "" {
		n.t.Fail(reports.Evidence{Message: "the node's standard error ended with", Stderr: tail})
	}
}

// waitExit waits up to d for the node to exit and reports whether it did.
func (n *nodeRun) waitExit(d time.Duration) bool {
	select {
	case <-n.exited:
		return true
	case <-time.After(d):
		return false
	case <-n.ctx.Done():
		return false
	}
}

// exitStatus describes how the node exited; call it after exited is closed.
func (n *nodeRun) exitStatus() (code int, desc string) {
	var ee *exec.ExitError
	switch {
	case n.err == nil:
		return 0, "exit status 0"
	case errors.As(n.err, &ee):
		return ee.ExitCode(), ee.Error()
	default:
		return -1, n.err.Error()
	}
}

// accept waits up to d for the node's next control connection; nil when none
// came.
func (n *nodeRun) accept(d time.Duration) *peer.Conn {
	ctx, cancel := context.WithTimeout(n.ctx, d)
	defer cancel()
	c, err := n.rt.Accept(ctx)
	if err != nil {
		return nil
	}
	return c
}

// register accepts the node's first connection and checks that its first
// frame is a Register (ranvier-wire §5.2). On failure it records why and
// returns nil.
func (n *nodeRun) register() (*peer.Conn, *controlpb.Register) {
	// A node that exits before it dials is judged at once, not after the
	// whole wait.
	ctx, cancel := context.WithTimeout(n.ctx, registerWait)
	defer cancel()
	go func() {
		select {
		case <-n.exited:
			cancel()
		case <-ctx.Done():
		}
	}()
	c, err := n.rt.Accept(ctx)
	if err != nil {
		select {
		case <-n.exited:
			_, desc := n.exitStatus()
			n.t.Failf("the node exited (%s) without dialling RANVIER_CONTROL", desc)
		default:
			n.t.Failf("the node did not dial RANVIER_CONTROL within %v of its launch", registerWait)
		}
		return nil, nil
	}
	reg := n.firstRegister(c)
	if reg == nil {
		return nil, nil
	}
	return c, reg
}

// firstRegister waits for c's first frame and checks it is a Register.
func (n *nodeRun) firstRegister(c *peer.Conn) *controlpb.Register {
	ctx, cancel := context.WithTimeout(n.ctx, owedWait)
	defer cancel()
	tr, err := c.WaitFrames(ctx, 1)
	if err != nil {
		n.t.Failf("no frame on the control connection within %v of the dial: %v", owedWait, err)
		return nil
	}
	first := tr.ControlMessages()[0]
	if first.Err != nil || first.Msg.GetRegister() == nil {
		n.t.Fail(reports.Evidence{Message: "the first frame on the control connection is not ToRuntime{register} (ranvier-wire §5.2)",
			Expected: "ToRuntime{register}", Got: describeToRuntime(first)})
		return nil
	}
	return first.Msg.GetRegister()
}

func describeToRuntime(m peer.ControlMessage) string {
	if m.Err != nil {
		return fmt.Sprintf("% x (not a ToRuntime: %v)", m.Payload, m.Err)
	}
	return fmt.Sprintf("%v", m.Msg)
}

// send writes framed messages to the node. It reports false, with the
// failure recorded, when the node's end of the connection is gone.
func (n *nodeRun) send(c *peer.Conn, frames ...[]byte) bool {
	if err := c.Send(n.ctx, frames...); err != nil {
		n.t.Failf("the control connection failed while conform sent to the node: %v", err)
		return false
	}
	return true
}

// idle waits d.
func (n *nodeRun) idle(d time.Duration) {
	select {
	case <-time.After(d):
	case <-n.ctx.Done():
	}
}

// messagesSince returns the ToRuntime messages that arrived on c after the
// first `from` frames.
func messagesSince(c *peer.Conn, from int) []peer.ControlMessage {
	ms := c.Transcript().ControlMessages()
	if from > len(ms) {
		return nil
	}
	return ms[from:]
}

// alives returns the Alive messages among ms.
func alives(ms []peer.ControlMessage) []peer.ControlMessage {
	var out []peer.ControlMessage
	for _, m := range ms {
		if m.Msg.GetAlive() != nil {
			out = append(out, m)
		}
	}
	return out
}

// heartbeatTolerance is the lateness allowed an Alive beyond its period. A
// loaded machine delays timers and sockets by tens of milliseconds, so a
// short period gets a fixed allowance; the allowance never reaches what the
// runtime acts on, three periods of silence (ranvier-wire §6.5), and a node
// that ignores the period or reads it only once misses it by far more.
func heartbeatTolerance(period time.Duration) time.Duration {
	return 150*time.Millisecond + period/4
}

// checkBeats checks that Alive arrived at least every period from `from`
// (the Bind) to `to`, judged with heartbeatTolerance, and records the worst
// gap when it did not.
func checkBeats(t *cases.T, ms []peer.ControlMessage, from, to time.Time, period time.Duration, what string) {
	limit := period + heartbeatTolerance(period)
	prev := from
	worst, worstAt := time.Duration(0), 0
	beats := alives(ms)
	for i, a := range beats {
		if gap := a.At.Sub(prev); gap > worst {
			worst, worstAt = gap, i
		}
		prev = a.At
	}
	if gap := to.Sub(prev); gap > worst {
		worst, worstAt = gap, len(beats)
	}
	if worst > limit {
		where := "before Alive #" + fmt.Sprint(worstAt+1)
		if worstAt == len(beats) {
			where = "after the last Alive"
		}
		t.Fail(reports.Evidence{
			Message:  fmt.Sprintf("Alive did not arrive at least every heartbeat period %s (ranvier-wire §5.2)", what),
			Expected: fmt.Sprintf("no gap above %v (the period %v, plus %v for scheduling)", limit, period, heartbeatTolerance(period)),
			Got:      fmt.Sprintf("a gap of %v %s; %d Alive in %v", worst.Round(time.Millisecond), where, len(beats), to.Sub(from).Round(time.Millisecond)),
		})
	}
}

// dataPeer is a publisher conform plays for a node's input binding.
type dataPeer struct {
	p *peer.PeerPublisher
}

func listenData(n *nodeRun) *dataPeer {
	p, err := peer.ListenPublisher(n.ctx, peer.Limits{})
	if err != nil {
		harnessError("listening as a publisher: %v", err)
	}
	return &dataPeer{p: p}
}

// accept waits up to d for the node to dial; nil when it did not.
func (d *dataPeer) accept(ctx context.Context, wait time.Duration) *peer.Conn {
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	c, err := d.p.Accept(ctx)
	if err != nil {
		return nil
	}
	return c
}

// expectDial waits for the node to dial d for stream and send its Request
// naming it. It records a failure and returns nil when it does not.
func (d *dataPeer) expectDial(n *nodeRun, stream, why string) *peer.Conn {
	c := d.accept(n.ctx, owedWait)
	if c == nil {
		n.t.Failf("the node did not dial %s for stream %q within %v: %s", d.p.Addr(), stream, owedWait, why)
		return nil
	}
	ctx, cancel := context.WithTimeout(n.ctx, owedWait)
	defer cancel()
	rc, err := c.WaitRequest(ctx)
	if err != nil || rc.Request == nil || rc.Request.GetStreamName() != stream {
		n.t.Fail(reports.Evidence{Message: "the node dialled its binding's from and did not send a Request naming the bound stream (ranvier-wire §4.1)",
			Expected: fmt.Sprintf("Request{stream_name: %q}", stream), Got: fmt.Sprintf("%+v (%v)", rc, err)})
		return nil
	}
	return c
}

func (d *dataPeer) close() { d.p.Close() }

// binding returns a BindingInfo.
func binding(port, stream, from string) *controlpb.BindingInfo {
	return &controlpb.BindingInfo{Port: port, StreamName: stream, From: from}
}

// trapDialled reports whether the node has dialled the address the decoy
// RANVIER_BINDINGS names.
func (n *nodeRun) trapDialled() bool {
	ctx, cancel := context.WithTimeout(n.ctx, 20*time.Millisecond)
	defer cancel()
	c, err := n.trap.Accept(ctx)
	return err == nil && c != nil
}

// contextFor returns the case's context bounded by d.
func contextFor(n *nodeRun, d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(n.ctx, d)
}
