package live

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"slices"
	"time"

	"github.com/conform-suite/conform/cases"
	"github.com/conform-suite/conform/live/peer"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	controlpb "github.com/conform-suite/conform/proto/ranvier/control/v1"
	reflive "github.com/conform-suite/conform/ref/live"
	"github.com/conform-suite/conform/reports"
	"google.golang.org/protobuf/proto"
)

// ProfileRuntime is the profile of the cases that dial the SUT's runtime as
// nodes.
const ProfileRuntime = "ranvier-runtime"

// runtimePeriod is the heartbeat period the runtime cases configure: short,
// so that three silent periods pass in well under a second.
const runtimePeriod = 200 * time.Millisecond

// The graph every runtime case configures.
const (
	camNode     = "cam"     // publishes cam.frames
	viewerNode  = "viewer"  // binds in ← cam.frames
	driftedNode = "drifted" // declares ports the graph does not wire
	camStream   = "cam.frames"
)

// runtimeCases are the cases of the SUT as a runtime (ranvier-wire §5, §6).
func runtimeCases() []cases.Case {
	refusal := func(slug, title string, reason controlpb.RefuseReason, reg func(r *rtRun) *controlpb.Register, setup func(r *rtRun) bool) cases.Case {
		return cases.Case{
			ID: "live/5.2/runtime-refuses-" + slug, Title: title,
			Spec: "ranvier-wire §5.2", Level: reports.MUST,
			Run: func(t *cases.T) { runtimeRefuses(t, reason, reg, setup) },
		}
	}
	cs := []cases.Case{
		refusal("protocol", "A runtime refuses a Register whose protocol is not 1 with REFUSE_REASON_PROTOCOL, then closes",
			controlpb.RefuseReason_REFUSE_REASON_PROTOCOL,
			func(r *rtRun) *controlpb.Register { return r.reg(2, camNode, r.token) }, nil),
		refusal("token", "A runtime refuses a Register with a token not the session's with REFUSE_REASON_TOKEN, then closes",
			controlpb.RefuseReason_REFUSE_REASON_TOKEN,
			func(r *rtRun) *controlpb.Register { return r.reg(1, camNode, r.token+"x") }, nil),
		refusal("unknown-node", "A runtime refuses a Register naming a node not in the graph with REFUSE_REASON_UNKNOWN_NODE, then closes",
			controlpb.RefuseReason_REFUSE_REASON_UNKNOWN_NODE,
			func(r *rtRun) *controlpb.Register { return r.reg(1, "stranger", r.token) }, nil),
		refusal("port-drift", "A runtime refuses a node whose declared ports drifted from the graph with REFUSE_REASON_PORT_DRIFT, then closes",
			controlpb.RefuseReason_REFUSE_REASON_PORT_DRIFT,
			func(r *rtRun) *controlpb.Register { return r.reg(1, driftedNode, r.token) }, nil),
		refusal("already-registered", "A runtime refuses a second registration of a node registered on another connection with REFUSE_REASON_ALREADY_REGISTERED, then closes",
			controlpb.RefuseReason_REFUSE_REASON_ALREADY_REGISTERED,
			func(r *rtRun) *controlpb.Register { return r.reg(1, camNode, r.token) },
			func(r *rtRun) bool { return r.admitted(camNode) != nil }),
		{
			ID:    "live/5.2/runtime-admits-register",
			Title: "A runtime answers a Register it has no reason to refuse with Bind, and keeps the connection",
			Spec:  "ranvier-wire §5.2", Level: reports.MUST,
			Run: runtimeAdmits,
		},
		{
			ID:    "live/5.2/runtime-closes-before-register",
			Title: "A runtime that receives any message other than Register first closes the connection",
			Spec:  "ranvier-wire §5.2", Level: reports.MUST,
			Run: runtimeClosesBeforeRegister,
		},
		{
			ID:    "live/5.2/runtime-closes-second-register",
			Title: "A runtime closes a connection that carries a second Register",
			Spec:  "ranvier-wire §5.2, §6.3", Level: reports.SHOULD,
			Run: runtimeSecondRegister,
		},
		{
			ID:    "live/5.2/runtime-bind-carries-address",
			Title: "A binding whose publisher has not said Listening is bound with an empty from; a fresh Bind carries the address once it has",
			Spec:  "ranvier-wire §5.2", Level: reports.SHOULD,
			Run: runtimeBindCarriesAddress,
		},
		{
			ID:    "live/6.5/runtime-declares-gone",
			Title: "A runtime declares a node gone after three silent heartbeat periods, not before, and tears nothing down on the data plane",
			Spec:  "ranvier-wire §6.5, §5.2", Level: reports.MUST,
			Run: runtimeDeclaresGone,
		},
		{
			ID:    "live/6.3/runtime-undecodable-payload",
			Title: "What a runtime does with a well-framed payload that is not a ToRuntime (the Rust closes: a node speaking something else)",
			Spec:  "ranvier-wire §6.3", Level: reports.INFO,
			Run: runtimeUndecodable,
		},
		{
			ID:    "live/5.2/runtime-empty-first-message",
			Title: "What a runtime does when the first frame is a ToRuntime with no variant (§5.2 closes on any other first message; §6.4 ignores an empty one)",
			Spec:  "ranvier-wire §5.2, §6.4", Level: reports.INFO,
			Run: runtimeEmptyFirst,
		},
		{
			ID:    "live/6.4/runtime-ignores-empty-message",
			Title: "A ToRuntime with no variant is not an error: the runtime keeps the connection and the registration",
			Spec:  "ranvier-wire §6.4", Level: reports.MUST,
			Run: runtimeEmptyMessage,
		},
	}
	for i := range cs {
		cs[i].Profile = ProfileRuntime
	}
	return cs
}

// rtRun is one runtime the SUT started for a case.
type rtRun struct {
	t     *cases.T
	ctx   context.Context
	id    uint32
	addr  string
	token string
	conns []*peer.Conn
}

func (r *rtRun) do(op *conformpb.ControlOp) *conformpb.ControlResult {
	resp := r.t.Do(&conformpb.Request{Op: &conformpb.Request_Control{Control: op}})
	res := resp.GetControl()
	if res == nil {
		r.t.Protocolf("a control op was answered with %T", resp.GetResult())
	}
	return res
}

// startRuntime asks the SUT for a runtime serving the cases' graph. The
// caller defers close.
func startRuntime(t *cases.T) *rtRun {
	var b [8]byte
	rand.Read(b[:])
	r := &rtRun{t: t, ctx: t.Context(), token: hex.EncodeToString(b[:])}
	res := r.do(&conformpb.ControlOp{Op: &conformpb.ControlOp_StartRuntime{StartRuntime: &conformpb.StartRuntime{
		Token: r.token, HeartbeatPeriodMs: ms(runtimePeriod),
		Nodes: []*conformpb.GraphNode{
			{NodeId: camNode, Ports: []string{"out"}, DeclaredPorts: []string{"out"}},
			{NodeId: viewerNode, Ports: []string{"in"}, DeclaredPorts: []string{"in"},
				Inputs: []*conformpb.GraphInput{{Port: "in", StreamName: camStream}}},
			{NodeId: driftedNode, Ports: []string{"in"}, DeclaredPorts: []string{"in", "aux"}},
		},
	}}}).GetRuntimeStarted()
	if res == nil || res.GetAddress() == "" {
		r.t.Protocolf("start_runtime was answered without an address: %v", res)
	}
	r.id, r.addr = res.GetRuntime(), res.GetAddress()
	return r
}

func (r *rtRun) close() {
	for _, c := range r.conns {
		c.Close()
	}
	r.do(&conformpb.ControlOp{Op: &conformpb.ControlOp_StopRuntime{StopRuntime: &conformpb.StopRuntime{Runtime: r.id}}})
}

func (r *rtRun) report() *conformpb.RuntimeReport {
	return r.do(&conformpb.ControlOp{Op: &conformpb.ControlOp_RuntimeReport{RuntimeReport: &conformpb.RuntimeReportOp{Runtime: r.id}}}).GetRuntimeReport()
}

func (r *rtRun) reg(protocol uint32, node, token string) *controlpb.Register {
	return &controlpb.Register{Protocol: protocol, NodeId: node, Token: token}
}

// dial connects to the runtime as a node.
func (r *rtRun) dial() *peer.Conn {
	s, err := peer.DialPublisher(r.ctx, r.addr, 0, peer.Limits{})
	if err != nil {
		r.t.Failf("dialling the runtime at %s: %v", r.addr, err)
		return nil
	}
	r.conns = append(r.conns, s.Conn)
	return s.Conn
}

func (r *rtRun) send(c *peer.Conn, m *controlpb.ToRuntime) bool {
	if err := c.SendMessage(r.ctx, m); err != nil {
		r.t.Failf("the runtime's end of the control connection failed while conform sent to it: %v", err)
		return false
	}
	return true
}

func register(reg *controlpb.Register) *controlpb.ToRuntime {
	return &controlpb.ToRuntime{Message: &controlpb.ToRuntime_Register{Register: reg}}
}

func alive(seq uint64) *controlpb.ToRuntime {
	return &controlpb.ToRuntime{Message: &controlpb.ToRuntime_Alive{Alive: &controlpb.Alive{Sequence: seq}}}
}

// toNodes decodes every frame the runtime sent on a connection; an
// undecodable one is nil.
func toNodes(tr peer.Transcript) []*controlpb.ToNode {
	out := make([]*controlpb.ToNode, 0, len(tr.Frames))
	for _, f := range tr.Frames {
		m := new(controlpb.ToNode)
		if proto.Unmarshal(f.Payload, m) != nil {
			m = nil
		}
		out = append(out, m)
	}
	return out
}

// firstReply waits for the runtime's first message on c, or for c to end.
func (r *rtRun) firstReply(c *peer.Conn) (*controlpb.ToNode, peer.Transcript) {
	ctx, cancel := context.WithTimeout(r.ctx, owedWait)
	defer cancel()
	tr, _ := c.Wait(ctx, func(tr peer.Transcript) bool { return tr.FrameCount >= 1 })
	if tr.FrameCount == 0 {
		return nil, tr
	}
	return toNodes(tr)[0], tr
}

// admitted dials and registers node with the session's token and returns
// the connection once the runtime has answered with Bind; it records a
// failure and returns nil otherwise.
func (r *rtRun) admitted(node string) *peer.Conn {
	c := r.dial()
	if c == nil || !r.send(c, register(r.reg(1, node, r.token))) {
		return nil
	}
	m, tr := r.firstReply(c)
	if m.GetBind() == nil {
		r.t.Fail(reports.Evidence{Message: fmt.Sprintf("a Register from node %q with protocol 1 and the session's token was not answered with Bind (ranvier-wire §5.2)", node),
			Expected: "ToNode{bind}", Got: describeReply(m, tr)})
		return nil
	}
	return c
}

func describeReply(m *controlpb.ToNode, tr peer.Transcript) string {
	switch {
	case tr.FrameCount == 0 && tr.Ended:
		return "the connection closed with nothing sent"
	case tr.FrameCount == 0:
		return fmt.Sprintf("nothing within %v", owedWait)
	case m == nil:
		return fmt.Sprintf("an undecodable frame % x", tr.Frames[0].Payload)
	default:
		return fmt.Sprint(m)
	}
}

// waitEnded reports whether c ends within d.
func (r *rtRun) waitEnded(c *peer.Conn, d time.Duration) bool {
	ctx, cancel := context.WithTimeout(r.ctx, d)
	defer cancel()
	_, err := c.WaitEnded(ctx)
	return err == nil
}

func runtimeRefuses(t *cases.T, want controlpb.RefuseReason, reg func(*rtRun) *controlpb.Register, setup func(*rtRun) bool) {
	r := startRuntime(t)
	defer r.close()
	if setup != nil && !setup(r) {
		return
	}
	c := r.dial()
	if c == nil {
		return
	}
	m := reg(r)
	if !r.send(c, register(m)) {
		return
	}
	got, tr := r.firstReply(c)
	if got.GetRefuse() == nil || got.GetRefuse().GetReason() != want {
		t.Fail(reports.Evidence{Message: fmt.Sprintf("the runtime did not refuse with %v (ranvier-wire §5.2)", want),
			Input: fmt.Sprint(m), Expected: fmt.Sprintf("ToNode{refuse: {reason: %v}}, then the connection closed", want), Got: describeReply(got, tr)})
		return
	}
	if !r.waitEnded(c, owedWait) {
		t.Failf("the runtime refused with %v and did not close the connection within %v (ranvier-wire §5.2: a runtime that refuses MUST send Refuse and then close)", want, owedWait)
	}
	t.Note("refused with %v: %q", want, got.GetRefuse().GetDetail())
}

func runtimeAdmits(t *cases.T) {
	r := startRuntime(t)
	defer r.close()
	c := r.admitted(camNode)
	if c == nil {
		return
	}
	if !r.send(c, alive(0)) {
		return
	}
	if r.waitEnded(c, runtimePeriod) {
		t.Failf("the runtime closed the connection of a node it had answered with Bind")
		return
	}
	if rep := r.report(); !slices.Contains(rep.GetRegistered(), camNode) {
		t.Fail(reports.Evidence{Message: "the runtime's report does not list the node it bound as registered", Expected: camNode, Got: fmt.Sprint(rep.GetRegistered())})
	}
}

func runtimeClosesBeforeRegister(t *cases.T) {
	r := startRuntime(t)
	defer r.close()
	firsts := []*controlpb.ToRuntime{
		alive(0),
		{Message: &controlpb.ToRuntime_Listening{Listening: &controlpb.Listening{Endpoints: []*controlpb.Endpoint{{StreamName: camStream, Address: "127.0.0.1:9"}}}}},
		{Message: &controlpb.ToRuntime_Stopping{Stopping: &controlpb.Stopping{}}},
	}
	first := firsts[t.Rand().IntN(len(firsts))]
	c := r.dial()
	if c == nil || !r.send(c, first) {
		return
	}
	if !r.waitEnded(c, owedWait) {
		t.Fail(reports.Evidence{Message: "the runtime kept a connection whose first message was not Register (ranvier-wire §5.2: it MUST close it)",
			Input: fmt.Sprint(first), Got: fmt.Sprintf("still open after %v; the runtime sent %d frames", owedWait, c.Transcript().FrameCount)})
		return
	}
	for _, m := range toNodes(c.Transcript()) {
		if m.GetBind() != nil {
			t.Failf("the runtime sent Bind on a connection that never registered")
		}
	}
}

func runtimeSecondRegister(t *cases.T) {
	r := startRuntime(t)
	defer r.close()
	c := r.admitted(camNode)
	if c == nil || !r.send(c, register(r.reg(1, camNode, r.token))) {
		return
	}
	if !r.waitEnded(c, owedWait) {
		t.Failf("the runtime kept the connection after a second Register on it (ranvier-wire §5.2: the Rust runtime closes it)")
	}
}

// bindFrom returns the from of port in a Bind, and whether the Bind has it.
func bindFrom(m *controlpb.ToNode, port string) (string, bool) {
	for _, b := range m.GetBind().GetBindings() {
		if b.GetPort() == port {
			return b.GetFrom(), true
		}
	}
	return "", false
}

// camListening is the Listening cam sends for its stream.
func camListening(addr string) *controlpb.ToRuntime {
	return &controlpb.ToRuntime{Message: &controlpb.ToRuntime_Listening{Listening: &controlpb.Listening{
		Endpoints: []*controlpb.Endpoint{{StreamName: camStream, Address: addr}}}}}
}

// waitBindFrom waits for a Bind on c binding port from addr.
func (r *rtRun) waitBindFrom(c *peer.Conn, port, addr string) bool {
	ctx, cancel := context.WithTimeout(r.ctx, owedWait)
	defer cancel()
	_, err := c.Wait(ctx, func(tr peer.Transcript) bool {
		for _, m := range toNodes(tr) {
			if from, ok := bindFrom(m, port); ok && from == addr {
				return true
			}
		}
		return false
	})
	return err == nil
}

func runtimeBindCarriesAddress(t *cases.T) {
	r := startRuntime(t)
	defer r.close()
	viewer := r.admitted(viewerNode)
	if viewer == nil {
		return
	}
	first := toNodes(viewer.Transcript())[0]
	if from, ok := bindFrom(first, "in"); !ok || from != "" {
		t.Fail(reports.Evidence{Message: "before any Listening named cam.frames, the viewer's Bind does not bind in with an empty from (ranvier-wire §5.2)",
			Expected: `in ← cam.frames from ""`, Got: fmt.Sprint(first)})
	}
	cam := r.admitted(camNode)
	if cam == nil {
		return
	}
	const addr = "127.0.0.1:40999"
	if !r.send(cam, camListening(addr)) {
		return
	}
	if !r.waitBindFrom(viewer, "in", addr) {
		t.Failf("cam's Listening named %s for %s and the viewer received no Bind carrying it within %v", addr, camStream, owedWait)
	}
}

func runtimeDeclaresGone(t *cases.T) {
	r := startRuntime(t)
	defer r.close()
	cam, viewer := r.admitted(camNode), r.admitted(viewerNode)
	if cam == nil || viewer == nil {
		return
	}
	const addr = "127.0.0.1:40998"
	if !r.send(cam, camListening(addr)) {
		return
	}
	if !r.waitBindFrom(viewer, "in", addr) {
		t.Note("the viewer was never bound to cam's address; the data-plane check covers the Binds it did receive")
	}
	// Both beat for a while; then cam falls silent and viewer beats on.
	beat := func(cs ...*peer.Conn) {
		for _, c := range cs {
			r.send(c, alive(0))
		}
	}
	for range 3 {
		beat(cam, viewer)
		time.Sleep(runtimePeriod / 2)
	}
	beat(cam, viewer)
	silentSince := time.Now()
	camMark, viewerMark := cam.Mark("silent"), viewer.Mark("silent")
	// A report returned within two periods of silence that names cam gone
	// is early by at least one period; one that still does not name it a
	// period after the third is late.
	early := 2 * runtimePeriod
	late := reflive.Misses*runtimePeriod + heartbeatTolerance(runtimePeriod) + runtimePeriod
	gone := false
	for !gone && time.Since(silentSince) < late {
		time.Sleep(runtimePeriod / 4)
		beat(viewer)
		rep := r.report()
		silence := time.Since(silentSince)
		if slices.Contains(rep.GetGone(), viewerNode) {
			t.Failf("the runtime declared viewer gone although it sent Alive every quarter period")
		}
		gone = slices.Contains(rep.GetGone(), camNode)
		if gone && silence < early {
			t.Fail(reports.Evidence{Message: "the runtime declared a node gone before three heartbeat periods of silence (ranvier-wire §6.5)",
				Expected: fmt.Sprintf("gone after %v of silence (three periods of %v)", reflive.Misses*runtimePeriod, runtimePeriod),
				Got:      fmt.Sprintf("gone in a report taken %v into the silence", silence.Round(time.Millisecond))})
			return
		}
	}
	if !gone {
		t.Failf("cam was silent for %v (three periods are %v) and the runtime did not declare it gone (ranvier-wire §6.5)", time.Since(silentSince).Round(time.Millisecond), reflive.Misses*runtimePeriod)
		return
	}
	// Being declared gone is a report: nothing on the data plane changes.
	time.Sleep(runtimePeriod)
	for _, m := range toNodes(viewer.Transcript())[viewerMark.Frames:] {
		if from, ok := bindFrom(m, "in"); m.GetBind() != nil && (!ok || from != addr) {
			t.Fail(reports.Evidence{Message: "after declaring cam gone the runtime re-bound the viewer away from cam's stream (ranvier-wire §6.5: being declared gone MUST NOT tear down anything on the data plane)",
				Got: fmt.Sprint(m)})
		}
	}
	for _, m := range toNodes(cam.Transcript())[camMark.Frames:] {
		if m.GetStop() != nil || m.GetTransport() != nil {
			t.Fail(reports.Evidence{Message: "after declaring cam gone the runtime told it to stop or pause (ranvier-wire §6.5: being declared gone MUST NOT tear down anything on the data plane)",
				Got: fmt.Sprint(m)})
		}
	}
}

func runtimeEmptyMessage(t *cases.T) {
	r := startRuntime(t)
	defer r.close()
	c := r.admitted(camNode)
	if c == nil {
		return
	}
	if err := c.Send(r.ctx, peer.EmptyFrame()); err != nil {
		t.Failf("sending an empty frame: %v", err)
		return
	}
	r.send(c, alive(0))
	if r.waitEnded(c, runtimePeriod) {
		t.Failf("the runtime closed the connection after a ToRuntime with no variant (ranvier-wire §6.4: a receiver MUST NOT treat one as an error)")
		return
	}
	if rep := r.report(); !slices.Contains(rep.GetRegistered(), camNode) {
		t.Failf("after a ToRuntime with no variant the runtime no longer lists the node as registered: %v", rep.GetRegistered())
	}
}

func runtimeUndecodable(t *cases.T) {
	r := startRuntime(t)
	defer r.close()
	c := r.admitted(camNode)
	if c == nil {
		return
	}
	if err := c.Send(r.ctx, peer.Garbage()); err != nil {
		t.Failf("sending an undecodable frame: %v", err)
		return
	}
	if r.waitEnded(c, 2*runtimePeriod) {
		t.Note("the runtime closed the connection after an undecodable payload")
	} else {
		t.Note("the runtime kept the connection after an undecodable payload")
	}
}

func runtimeEmptyFirst(t *cases.T) {
	r := startRuntime(t)
	defer r.close()
	c := r.dial()
	if c == nil {
		return
	}
	if err := c.Send(r.ctx, peer.EmptyFrame()); err != nil {
		t.Failf("sending an empty frame: %v", err)
		return
	}
	if r.waitEnded(c, 2*runtimePeriod) {
		t.Note("the runtime closed the connection after an empty first frame")
		return
	}
	if !r.send(c, register(r.reg(1, camNode, r.token))) {
		return
	}
	m, tr := r.firstReply(c)
	t.Note("the runtime kept the connection after an empty first frame and answered a Register after it with %s", describeReply(m, tr))
}
