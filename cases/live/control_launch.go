package live

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/conform-suite/conform/cases"
	"github.com/conform-suite/conform/live/peer"
	"github.com/conform-suite/conform/proc"
	"github.com/conform-suite/conform/proto/conform/v1/meaning"
	controlpb "github.com/conform-suite/conform/proto/ranvier/control/v1"
	messagepb "github.com/conform-suite/conform/proto/ranvier/message/v1"
	"github.com/conform-suite/conform/reports"
	"github.com/conform-suite/conform/reports/evidence"
)

// stderrTail is how much of a launched node's standard error is kept.
const stderrTail = 4 << 10

// The pins every control-plane conversation rests on: conform encodes and
// decodes ToRuntime, Register, ToNode and Bind with these reconstructed
// field numbers.
var nodePins = []string{
	"reconstructed§ranvier-fields#12", "reconstructed§ranvier-fields#14",
	"reconstructed§ranvier-fields#13", "reconstructed§ranvier-fields#18",
}

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
	t.Skipf("no node command: the Hello declares no node_command and conform run has no --node-cmd")
	return nil
}

// nodeRun is one launched node and the runtime conform plays for it
// (ranvier-wire §3.2): a loopback listener, the four RANVIER_* variables,
// and a decoy RANVIER_BINDINGS naming a trap listener the node must never
// dial. A meter measures how late conform itself runs while the case judges
// the node's periods.
type nodeRun struct {
	t      *cases.T
	ctx    context.Context
	rt     *peer.Runtime
	trap   *peer.PeerPublisher
	p      *proc.Process
	meter  *lateMeter
	exited <-chan struct{} // closed once the node has exited and been reaped
	// cpuWaits, when set, replaces reading the node's waits for a CPU
	// (tests).
	cpuWaits func() map[int]time.Duration
}

// nodeEnv says what a launched node's environment holds besides what the
// process inherits.
type nodeEnv struct {
	// params is RANVIER_PARAMS; empty means "{}".
	params string
	// noControl leaves RANVIER_CONTROL out: a node run by hand.
	noControl bool
}

// launchNode starts the SUT as a node with params as RANVIER_PARAMS. The
// caller defers close.
func launchNode(t *cases.T, params string) *nodeRun {
	return launch(t, nodeEnv{params: params})
}

func launch(t *cases.T, e nodeEnv) *nodeRun {
	argv := nodeCommand(t)
	ctx := t.Context()
	trap, err := peer.ListenPublisher(ctx, peer.Limits{})
	if err != nil {
		t.Harnessf("listening for the decoy binding: %v", err)
	}
	decoy, _ := json.Marshal([]map[string]string{{"port": "in", "stream_name": "decoy", "from": trap.Addr()}})
	rt, err := peer.ListenRuntime(ctx, peer.RuntimeConfig{Params: e.params, ExtraEnv: map[string]string{"RANVIER_BINDINGS": string(decoy)}})
	if err != nil {
		trap.Close()
		t.Harnessf("listening as the runtime: %v", err)
	}
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "RANVIER_") {
			env = append(env, kv)
		}
	}
	for _, kv := range rt.Env() {
		if e.noControl && strings.HasPrefix(kv, "RANVIER_CONTROL=") {
			continue
		}
		env = append(env, kv)
	}
	meter := startMeter()
	// proc gives the node the guarantees of every child conform starts: its
	// own process group, a parent-death signal, a bounded stderr tail, and
	// reaping with whatever it started when the case closes it.
	p, err := proc.Start(proc.Config{Argv: argv, Env: env, StderrLimit: stderrTail})
	if err != nil {
		meter.close()
		rt.Close()
		trap.Close()
		panic(&cases.Abort{Outcome: reports.Error, Kind: reports.KindStart, Message: fmt.Sprintf("launching the node %q: %v", argv, err)})
	}
	return &nodeRun{t: t, ctx: ctx, rt: rt, trap: trap, p: p, meter: meter, exited: p.Exited()}
}

// close kills and reaps the node, closes the listeners, and, when the case
// failed, records the tail of the node's standard error.
func (n *nodeRun) close() {
	// The whole group and every marked descendant, even when the node
	// itself has exited: whatever it started must not outlive the case.
	// Stop is bounded (proc.StopTimeout).
	n.p.Stop()
	n.rt.Close()
	n.trap.Close()
	n.meter.close()
	if tail := n.p.Stderr(); n.t.Failed() && tail != "" {
		n.t.Fail(reports.Evidence{Message: "the node's standard error ended with", Stderr: tail})
	}
}

// waitExit waits up to d for the node to exit and reports whether it did.
func (n *nodeRun) waitExit(d time.Duration) bool {
	select {
	case <-n.exited:
		return true
	default:
	}
	tm := time.NewTimer(max(d, 0))
	defer tm.Stop()
	select {
	case <-n.exited:
		return true
	case <-tm.C:
		return false
	case <-n.ctx.Done():
		return false
	}
}

// exitStatus describes how the node exited; call it after exited is closed.
func (n *nodeRun) exitStatus() (code int, desc string) {
	return n.p.ExitCode(), n.p.Exit()
}

// accept waits up to d for the node's next control connection; nil when none
// came.
func (n *nodeRun) accept(d time.Duration) *peer.Conn {
	ctx, cancel := contextWithin(n.ctx, d)
	defer cancel()
	c, err := n.rt.Accept(ctx)
	if err != nil {
		return nil
	}
	return c
}

// register accepts the node's first connection and checks that its first
// frame is a Register (ranvier-wire §5.2). On failure it records why and
// ends the case.
func (n *nodeRun) register() (*peer.Conn, *controlpb.Register) {
	// A node that exits before it dials is judged at once, not after the
	// whole wait.
	ctx, cancel := contextWithin(n.ctx, launchWait(n.t))
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
			n.t.Fatalf("the node exited (%s) without dialling RANVIER_CONTROL", desc)
		default:
			n.t.Fatalf("the node did not dial RANVIER_CONTROL within %v of its launch", launchWait(n.t))
		}
	}
	return n.firstRegister(c)
}

// firstRegister waits for the first frame the node sends, on c or, when c
// ends without a byte, on the node's next connection, and checks it is a
// Register; on failure it records why and ends the case. It returns the
// connection that carried the Register.
func (n *nodeRun) firstRegister(c *peer.Conn) (*peer.Conn, *controlpb.Register) {
	ctx, cancel := contextWithin(n.ctx, owed(n.t))
	defer cancel()
	c, tr, silent, err := n.speaking(ctx, c)
	if err != nil {
		n.t.Fatalf("no frame on the control connection within %v of the dial (ranvier-wire §5.2: Register is the first frame): %s%s", owed(n.t), describeTranscript(tr), describeSilent(silent))
	}
	first := tr.ControlMessages()[0]
	if first.Err != nil || first.Msg.GetRegister() == nil {
		n.t.Fatalf("the first frame on the control connection is not ToRuntime{register} (ranvier-wire §5.2): it is %s", describeToRuntime(first))
	}
	return c, first.Msg.GetRegister()
}

// speaking waits until ctx ends for a connection of the node's, c or a
// later one, to carry a whole frame, and returns that connection and its
// transcript. A connection the node ends without sending a byte is passed
// over for its next one, and counted in silent: a dial the node abandoned
// (its own dial timeout firing on a loaded machine after the kernel had
// already accepted) sends nothing, so it breaks no rule about what a
// connection's first frame is. On error, c is the last connection waited on.
func (n *nodeRun) speaking(ctx context.Context, c *peer.Conn) (_ *peer.Conn, _ peer.Transcript, silent int, _ error) {
	for {
		tr, err := c.WaitFrames(ctx, 1)
		if err == nil || !tr.Ended || tr.Bytes > 0 || tr.ClosedByPeer {
			return c, tr, silent, err
		}
		silent++
		next, aerr := n.rt.Accept(ctx)
		if aerr != nil {
			return c, tr, silent, err
		}
		c = next
	}
}

// describeSilent says how many connections the node ended without sending
// a byte, if any.
func describeSilent(silent int) string {
	if silent == 0 {
		return ""
	}
	return fmt.Sprintf("; the node had ended %d connection(s) without sending a byte and dialled no other", silent)
}

func describeToRuntime(m peer.ControlMessage) string {
	if m.Err != nil {
		return fmt.Sprintf("% x (not a ToRuntime: %v)", m.Payload, m.Err)
	}
	return meaning.Render(m.Msg)
}

// send writes framed messages to the node. It reports false, with the
// failure recorded, when the node's end of the connection is gone.
func (n *nodeRun) send(c *peer.Conn, frames ...[]byte) bool {
	if err := c.Pace(n.ctx, owed(n.t), peer.Whole(), frames...); err != nil {
		if n.ctx.Err() != nil {
			n.t.Harnessf("the case ended while conform sent to the node: %v", err)
		}
		n.t.Failf("the control connection failed while conform sent to the node: %v", err)
		return false
	}
	return true
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

// beats waits for count Alive messages on c after mark, the moment conform
// sent the Bind that set period, and judges each gap, the first from that
// Bind: an Alive must follow its predecessor within period + slack(period)
// (ranvier-wire §5.2: at least as often as heartbeat_period_ms, from the
// moment that Bind arrives), plus what the machine, not the node, made it
// wait: however late conform itself ran over the gap, and however long the
// node's threads waited for a CPU (excused). It returns the Alive messages;
// on a gap too long, or a connection that ended, it records the failure and
// returns false.
func (n *nodeRun) beats(c *peer.Conn, mark peer.Mark, period time.Duration, count int, what string) ([]peer.ControlMessage, bool) {
	limit := period + slack(period)
	prev, prevName := mark.At, "the Bind"
	prevWaits := n.waits()
	started := time.Now()
	for i := 0; i < count; {
		ctx, cancel := context.WithDeadline(n.ctx, prev.Add(limit+n.excused(prev, time.Now(), prevWaits, false).total()+meterSlice))
		tr, err := c.Wait(ctx, func(tr peer.Transcript) bool { return len(alives(messagesSince(c, mark.Frames))) > i })
		cancel()
		if err == nil {
			a := alives(messagesSince(c, mark.Frames))[i]
			ex := n.excused(prev, a.At, prevWaits, true)
			if gap := a.At.Sub(prev); gap > limit+ex.total() {
				n.beatFailure(fmt.Sprintf("a gap of %v between %s and Alive #%d", gap.Round(time.Millisecond), prevName, i+1), period, ex, what)
				return nil, false
			}
			prev, prevName, prevWaits = a.At, fmt.Sprintf("Alive #%d", i+1), ex.waits
			i++
			continue
		}
		switch {
		case n.ctx.Err() != nil:
			n.t.Harnessf("the case ended while conform waited for Alive #%d %s", i+1, what)
		case tr.Ended:
			n.t.Failf("the node closed the control connection %s, with %d of %d Alive received (%s)", what, i, count, describeTranscript(tr))
			return nil, false
		}
		now := time.Now()
		if ex := n.excused(prev, now, prevWaits, true); now.Sub(prev) > limit+ex.total() {
			n.beatFailure(fmt.Sprintf("no Alive for %v after %s", now.Sub(prev).Round(time.Millisecond), prevName), period, ex, what)
			return nil, false
		}
		// The machine held conform or the node up long enough to excuse the
		// wait so far: wait on.
		if time.Since(started) > time.Duration(count+1)*limit+owed(n.t) {
			n.t.Harnessf("the machine ran too late to judge a heartbeat period of %v %s: conform's own wakes were up to %v late", period, what, n.meter.lateIn(started, time.Now()))
		}
	}
	return alives(messagesSince(c, mark.Frames))[:count], true
}

// excuse is the lateness over an interval that is the machine's, not the
// node's: conform's own, and the node's wait for a CPU.
type excuse struct {
	harness, node time.Duration
	// waits is the node's cpuWaits snapshot at the interval's end.
	waits map[int]time.Duration
}

// total is what an interval's judgement forgives. Each measure is a lower
// bound of the delay it names: the meter sees only the stalls its own
// slices fall in, and the node's CPU wait misses what else holds its timer
// back (its garbage collector, the kernel's loopback). A machine that
// delayed either by that much can delay the Alive's path as much again, so
// each counts twice. A loaded series failed a correct node by 25 ms when
// they counted once; the bugs these gaps catch are off by seconds.
func (e excuse) total() time.Duration { return 2 * (e.harness + e.node) }

// excused measures the excuse over [from, to]; settle waits for conform's
// meter to have looked past to.
func (n *nodeRun) excused(from, to time.Time, waitsAtFrom map[int]time.Duration, settle bool) excuse {
	var e excuse
	if settle {
		e.harness = n.meter.late(n.ctx, from, to)
	} else {
		e.harness = n.meter.lateIn(from, to)
	}
	e.waits = n.waits()
	e.node = proc.MostWaited(waitsAtFrom, e.waits)
	return e
}

// waits is the launched node's cpuWaits now.
func (n *nodeRun) waits() map[int]time.Duration {
	if n.cpuWaits != nil {
		return n.cpuWaits()
	}
	return n.p.CPUWaits()
}

func (n *nodeRun) beatFailure(got string, period time.Duration, ex excuse, what string) {
	n.t.Fail(evidence.Named("Alive (its arrival)", reports.Evidence{
		Message: fmt.Sprintf("Alive did not arrive at least every heartbeat period %s (ranvier-wire §5.2)", what),
		Expected: fmt.Sprintf("an Alive within %v of the one before (the period %v, %v of slack, twice the %v conform itself ran late and the %v the node waited for a CPU)",
			(period + slack(period) + ex.total()).Round(time.Millisecond), period, slack(period), ex.harness.Round(time.Millisecond), ex.node.Round(time.Millisecond)),
		Got: got,
	}))
}

// dataPeer is a publisher conform plays for a node's input binding.
type dataPeer struct {
	p *peer.PeerPublisher
}

func listenData(n *nodeRun) *dataPeer {
	p, err := peer.ListenPublisher(n.ctx, peer.Limits{})
	if err != nil {
		n.t.Harnessf("listening as a publisher: %v", err)
	}
	return &dataPeer{p: p}
}

// accept waits up to d for the node to dial; nil when it did not.
func (d *dataPeer) accept(ctx context.Context, wait time.Duration) *peer.Conn {
	ctx, cancel := contextWithin(ctx, wait)
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
	c := d.accept(n.ctx, owed(n.t))
	if c == nil {
		n.t.Failf("the node did not dial %s for stream %q within %v: %s", d.p.Addr(), stream, owed(n.t), why)
		return nil
	}
	ctx, cancel := contextWithin(n.ctx, owed(n.t))
	defer cancel()
	rc, err := c.WaitRequest(ctx)
	if err != nil || rc.Request == nil || rc.Request.GetStreamName() != stream {
		n.t.Fail(evidence.Named("Request.streamName", reports.Evidence{Message: "the node dialled its binding's from and did not send a Request naming the bound stream (ranvier-wire §4.1)",
			Expected: meaning.Render(&messagepb.Request{StreamName: stream}), Got: describeRequest(rc, err)}))
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
// RANVIER_BINDINGS names. A dial completes in the kernel whether or not
// conform's acceptor has run, so a short wait finds one made before it.
func (n *nodeRun) trapDialled() bool {
	ctx, cancel := contextWithin(n.ctx, 50*time.Millisecond)
	defer cancel()
	c, err := n.trap.Accept(ctx)
	return err == nil && c != nil
}

// describeRequest writes what a subscriber sent first, in the protocol's
// terms: the Request as JSON, or the bytes that did not decode as one, and
// why the wait for it ended.
func describeRequest(rc peer.RequestCheck, err error) string {
	var s string
	switch {
	case !rc.Arrived:
		s = "no frame"
	case rc.Request != nil:
		s = meaning.Render(rc.Request)
	default:
		s = fmt.Sprintf("% x (not a Request: %v)", rc.Payload, rc.DecodeErr)
	}
	if err != nil {
		s += " (" + err.Error() + ")"
	}
	return s
}
