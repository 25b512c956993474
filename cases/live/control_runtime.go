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
	"github.com/conform-suite/conform/proto/conform/v1/meaning"
	controlpb "github.com/conform-suite/conform/proto/ranvier/control/v1"
	reflive "github.com/conform-suite/conform/ref/live"
	"github.com/conform-suite/conform/reports"
	"github.com/conform-suite/conform/reports/evidence"
	"google.golang.org/protobuf/proto"
)

// ProfileRuntime is the profile of the cases that dial the SUT's runtime as
// nodes.
const ProfileRuntime = "ranvier-runtime"

// runtimePeriod is the heartbeat period the runtime cases give the runtime
// (StartRuntime.heartbeat_period_ms): short, so that three silent periods
// pass in well under a second.
const runtimePeriod = 200 * time.Millisecond

// The graph every runtime case configures.
const (
	camNode     = "cam"     // publishes cam.frames
	viewerNode  = "viewer"  // binds in ← cam.frames
	driftedNode = "drifted" // declares ports the graph does not wire
	camStream   = "cam.frames"
)

// runtimePins are the pins of a runtime conversation: the control plane's
// messages, and the reasons a Refuse names.
var runtimePins = nodePins

// runtimeCases are the cases of the SUT as a runtime (ranvier-wire §5, §6).
func runtimeCases(k *cases.Kit) []cases.Case {
	refusal := func(reason controlpb.RefuseReason, reg func(r *rtRun) *controlpb.Register, setup func(r *rtRun)) func(t *cases.T) {
		return func(t *cases.T) { runtimeRefuses(t, reason, reg, setup) }
	}
	refusalReqs := func(ids ...string) []string {
		return judges(runtimePins, append(ids, "ranvier-wire§5.2#8", "ranvier-wire§5.2#10", pinRefuse, pinRefuseReason)...)
	}
	return []cases.Case{
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "live/5.2/runtime-refuses-protocol",
				Title:        "A runtime refuses a Register whose protocol is not 1 with REFUSE_REASON_PROTOCOL, then closes",
				Spec:         "ranvier-wire §5.2, §7.1",
				Requirements: refusalReqs("ranvier-wire§5.2#7", "ranvier-wire§7.1#3"),
				Run: refusal(controlpb.RefuseReason_REFUSE_REASON_PROTOCOL,
					func(r *rtRun) *controlpb.Register { return r.reg(2, camNode, r.token) }, nil),
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "live/5.2/runtime-refuses-token",
				Title:        "A runtime refuses a Register with a token not the session's with REFUSE_REASON_TOKEN, then closes",
				Spec:         "ranvier-wire §5.2",
				Requirements: refusalReqs(),
				Run: refusal(controlpb.RefuseReason_REFUSE_REASON_TOKEN,
					func(r *rtRun) *controlpb.Register { return r.reg(1, camNode, r.token+"x") }, nil),
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "live/5.2/runtime-refuses-unknown-node",
				Title:        "A runtime refuses a Register naming a node not in the graph with REFUSE_REASON_UNKNOWN_NODE, then closes",
				Spec:         "ranvier-wire §5.2",
				Requirements: refusalReqs(),
				Run: refusal(controlpb.RefuseReason_REFUSE_REASON_UNKNOWN_NODE,
					func(r *rtRun) *controlpb.Register { return r.reg(1, "stranger", r.token) }, nil),
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "live/5.2/runtime-refuses-port-drift",
				Title:        "A runtime refuses a node whose declared ports drifted from the graph with REFUSE_REASON_PORT_DRIFT, then closes",
				Spec:         "ranvier-wire §5.2",
				Requirements: refusalReqs(),
				Run: refusal(controlpb.RefuseReason_REFUSE_REASON_PORT_DRIFT,
					func(r *rtRun) *controlpb.Register { return r.reg(1, driftedNode, r.token) }, nil),
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "live/5.2/runtime-refuses-already-registered",
				Title:        "A runtime refuses a second registration of a node registered on another connection with REFUSE_REASON_ALREADY_REGISTERED, then closes",
				Spec:         "ranvier-wire §5.2, §3.2",
				Requirements: refusalReqs("ranvier-wire§3.2#1"),
				Run: refusal(controlpb.RefuseReason_REFUSE_REASON_ALREADY_REGISTERED,
					func(r *rtRun) *controlpb.Register { return r.reg(1, camNode, r.token) },
					func(r *rtRun) { r.admitted(camNode) }),
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "live/5.2/runtime-admits-register",
				Title:        "A runtime answers a Register it has no reason to refuse with Bind, and keeps the connection",
				Spec:         "ranvier-wire §5.2, §3.1",
				Requirements: judges(runtimePins, "ranvier-wire§5.2#10", "ranvier-wire§3.1#4", "ranvier-wire§5#1"),
				Run:          runtimeAdmits,
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "live/5.2/runtime-closes-before-register",
				Title:        "A runtime that receives any message other than Register first closes the connection",
				Spec:         "ranvier-wire §5.2",
				Requirements: judges(runtimePins, "ranvier-wire§5.2#4"),
				Run:          runtimeClosesBeforeRegister,
			}
		}),
		k.Info(func() cases.Case {
			return cases.Case{
				ID:    "live/5.2/runtime-closes-second-register",
				Title: "What a runtime does with a second Register on one connection (a node never sends one; the Rust runtime closes the connection)",
				Spec:  "ranvier-wire §5.2",
				Run:   runtimeSecondRegister,
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "live/5.2/runtime-bind-carries-address",
				Title:        "A binding whose publisher has not said Listening is bound with an empty from; a fresh Bind carries the address once it has",
				Spec:         "ranvier-wire §5.2",
				Requirements: judges(runtimePins, "ranvier-wire§5.2#15", pinListening),
				Run:          runtimeBindCarriesAddress,
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:    "live/6.5/runtime-declares-gone",
				Title: "A runtime declares a node gone after three silent heartbeat periods, not before, and tears nothing down on the data plane",
				Spec:  "ranvier-wire §6.5, §5.2",
				Requirements: judges(runtimePins, "ranvier-wire§6.5#4", "ranvier-wire§6.5#5", "ranvier-wire§5.2#18", "ranvier-wire§5.2#23",
					"ranvier-wire§3.2#1", pinAlive),
				Run: runtimeDeclaresGone,
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "live/6.3/runtime-undecodable-payload",
				Title:        "A runtime closes a control connection whose payload does not decode as a ToRuntime: the node speaks something else",
				Spec:         "ranvier-wire §6.3",
				Requirements: judges(runtimePins, "ranvier-wire§6.3#3"),
				Run:          runtimeUndecodable,
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "live/6.2/runtime-framing-error-ends-connection",
				Title:        "A runtime takes a prefix above 16 MiB on a control connection as the connection ending: it closes it and reads nothing behind it",
				Spec:         "ranvier-wire §6.2",
				Requirements: judges(runtimePins, "ranvier-wire§6.2#4", "ranvier-wire§6.2#1", pinAlive),
				Run:          runtimeFramingError,
			}
		}),
		k.Info(func() cases.Case {
			return cases.Case{
				ID:    "live/5.2/runtime-empty-first-message",
				Title: "What a runtime does when the first frame is a ToRuntime with no variant (§5.2 closes on any other first message; §6.4 ignores an empty one)",
				Spec:  "ranvier-wire §5.2, §6.4",
				Run:   runtimeEmptyFirst,
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "live/6.4/runtime-ignores-empty-message",
				Title:        "A ToRuntime with no variant is not an error: the runtime keeps the connection and the registration",
				Spec:         "ranvier-wire §6.4",
				Requirements: judges(runtimePins, "ranvier-wire§6.4#1", "ranvier-wire§6.4#3", "reconstructed§contradictions#7", pinAlive),
				Run:          runtimeEmptyMessage,
			}
		}),
	}
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
		Token: r.token, HeartbeatPeriodMs: millis(runtimePeriod),
		Nodes: []*conformpb.GraphNode{
			{NodeId: camNode, Ports: []string{"out"}, DeclaredPorts: []string{"out"}},
			{NodeId: viewerNode, Ports: []string{"in"}, DeclaredPorts: []string{"in"},
				Inputs: []*conformpb.GraphInput{{Port: "in", StreamName: camStream}}},
			{NodeId: driftedNode, Ports: []string{"in"}, DeclaredPorts: []string{"in", "aux"}},
		},
	}}}).GetRuntimeStarted()
	switch {
	case res == nil || res.GetAddress() == "":
		r.t.Protocolf("start_runtime was answered without an address: %v", res)
	case res.GetRuntime() == 0:
		r.t.Protocolf("start_runtime answered the handle 0, which never names a runtime (control.proto)")
	}
	r.id, r.addr = res.GetRuntime(), res.GetAddress()
	return r
}

func (r *rtRun) close() {
	for _, c := range r.conns {
		c.Close()
	}
	defer func() { recover() }() // a failing stop must not hide why the case stopped
	r.do(&conformpb.ControlOp{Op: &conformpb.ControlOp_StopRuntime{StopRuntime: &conformpb.StopRuntime{Runtime: r.id}}})
}

func (r *rtRun) report() *conformpb.RuntimeReport {
	return r.do(&conformpb.ControlOp{Op: &conformpb.ControlOp_RuntimeReport{RuntimeReport: &conformpb.RuntimeReportOp{Runtime: r.id}}}).GetRuntimeReport()
}

func (r *rtRun) reg(protocol uint32, node, token string) *controlpb.Register {
	return &controlpb.Register{Protocol: protocol, NodeId: node, Token: token}
}

// dial connects to the runtime as a node; failing, it ends the case.
func (r *rtRun) dial() *peer.Conn {
	ctx, cancel := contextWithin(r.ctx, owed(r.t))
	defer cancel()
	s, err := peer.DialPublisher(ctx, r.addr, 0, peer.Limits{})
	if err != nil {
		r.t.Fatalf("dialling the runtime at %s: %v", r.addr, err)
	}
	r.conns = append(r.conns, s.Conn)
	return s.Conn
}

// send writes m to the runtime; failing, it records why and ends the case.
func (r *rtRun) send(c *peer.Conn, m *controlpb.ToRuntime) {
	r.sendRaw(c, "a "+describeVariant(m), peer.MustFrame(m))
}

// sendRaw writes frames to the runtime; failing, it records why and ends
// the case.
func (r *rtRun) sendRaw(c *peer.Conn, what string, frames ...[]byte) {
	if err := c.Pace(r.ctx, owed(r.t), peer.Coalesced(), frames...); err != nil {
		if r.ctx.Err() != nil {
			r.t.Harnessf("the case ended while conform sent %s: %v", what, err)
		}
		r.t.Fatalf("the runtime's end of the control connection failed while conform sent %s: %v", what, err)
	}
}

func describeVariant(m *controlpb.ToRuntime) string {
	if v := m.ProtoReflect().WhichOneof(m.ProtoReflect().Descriptor().Oneofs().Get(0)); v != nil {
		return string(v.Name())
	}
	return "ToRuntime with no variant"
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
	ctx, cancel := contextWithin(r.ctx, owed(r.t))
	defer cancel()
	tr, _ := c.Wait(ctx, func(tr peer.Transcript) bool { return tr.FrameCount >= 1 })
	if tr.FrameCount == 0 {
		return nil, tr
	}
	return toNodes(tr)[0], tr
}

// admitted dials and registers node with the session's token and returns
// the connection once the runtime has answered with Bind; otherwise it
// records why and ends the case.
func (r *rtRun) admitted(node string) *peer.Conn {
	c := r.dial()
	r.send(c, register(r.reg(1, node, r.token)))
	m, tr := r.firstReply(c)
	if m.GetBind() == nil {
		r.t.Fail(evidence.Named("ToNode.bind", reports.Evidence{Message: fmt.Sprintf("a Register from node %q with protocol 1 and the session's token was not answered with Bind (ranvier-wire §5.2)", node),
			Expected: "ToNode{bind}", Got: r.describeReply(m, tr)}))
		r.t.Fatalf("the case cannot go on without node %q admitted", node)
	}
	return c
}

func (r *rtRun) describeReply(m *controlpb.ToNode, tr peer.Transcript) string {
	switch {
	case tr.FrameCount == 0 && tr.Ended:
		return "the connection closed with nothing sent"
	case tr.FrameCount == 0:
		return fmt.Sprintf("nothing within %v", owed(r.t))
	case m == nil:
		return fmt.Sprintf("an undecodable frame % x", tr.Frames[0].Payload)
	default:
		return meaning.Render(m)
	}
}

// waitEnded reports whether c ends within d.
func (r *rtRun) waitEnded(c *peer.Conn, d time.Duration) bool {
	ctx, cancel := contextWithin(r.ctx, d)
	defer cancel()
	_, err := c.WaitEnded(ctx)
	return err == nil
}

func runtimeRefuses(t *cases.T, want controlpb.RefuseReason, reg func(*rtRun) *controlpb.Register, setup func(*rtRun)) {
	r := startRuntime(t)
	defer r.close()
	if setup != nil {
		setup(r)
	}
	c := r.dial()
	m := reg(r)
	r.send(c, register(m))
	got, tr := r.firstReply(c)
	if got.GetRefuse() == nil || got.GetRefuse().GetReason() != want {
		t.Fail(evidence.Named("ToNode.refuse.reason", reports.Evidence{Message: fmt.Sprintf("the runtime did not refuse with %v (ranvier-wire §5.2)", want),
			Input: meaning.Render(m), Expected: meaning.Render(&controlpb.ToNode{Message: &controlpb.ToNode_Refuse{Refuse: &controlpb.Refuse{Reason: want}}}) + ", then the connection closed", Got: r.describeReply(got, tr)}))
		return
	}
	if !r.waitEnded(c, owed(t)) {
		t.Failf("the runtime refused with %v and did not close the connection within %v (ranvier-wire §5.2: a runtime that refuses MUST send Refuse and then close)", want, owed(t))
	}
}

func runtimeAdmits(t *cases.T) {
	r := startRuntime(t)
	defer r.close()
	c := r.admitted(camNode)
	r.send(c, alive(0))
	if r.waitEnded(c, runtimePeriod) {
		t.Failf("the runtime closed the connection of a node it had answered with Bind")
		return
	}
	if rep := r.report(); !slices.Contains(rep.GetRegistered(), camNode) {
		t.Fail(evidence.Named("registered (the runtime's report)", reports.Evidence{Message: "the runtime's report does not list the node it bound as registered", Expected: camNode, Got: fmt.Sprint(rep.GetRegistered())}))
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
	r.send(c, first)
	if !r.waitEnded(c, owed(t)) {
		t.Fail(reports.Evidence{Message: "the runtime kept a connection whose first message was not Register (ranvier-wire §5.2: it MUST close it)",
			Input: meaning.Render(first), Got: fmt.Sprintf("still open after %v; the runtime sent %d frames", owed(t), c.Transcript().FrameCount)})
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
	r.send(c, register(r.reg(1, camNode, r.token)))
	if r.waitEnded(c, owed(t)) {
		t.Note("the runtime closed the connection after a second Register on it, as the Rust runtime does")
		return
	}
	t.Note("the runtime kept the connection for %v after a second Register on it; the Rust runtime closes it", owed(t))
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
	ctx, cancel := contextWithin(r.ctx, owed(r.t))
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
	first := toNodes(viewer.Transcript())[0]
	if from, ok := bindFrom(first, "in"); !ok || from != "" {
		t.Fail(evidence.Named("Bind.bindings (in).from", reports.Evidence{Message: "before any Listening named cam.frames, the viewer's Bind does not bind in with an empty from (ranvier-wire §5.2)",
			Expected: `a Bind binding in to cam.frames with "from":""`, Got: meaning.Render(first)}))
	}
	cam := r.admitted(camNode)
	const addr = "127.0.0.1:40999"
	r.send(cam, camListening(addr))
	if !r.waitBindFrom(viewer, "in", addr) {
		t.Failf("cam's Listening named %s for %s and the viewer received no Bind carrying it within %v (ranvier-wire §5.2: a fresh Bind carries the address when the publisher's Listening arrives)", addr, camStream, owed(t))
	}
}

func runtimeDeclaresGone(t *cases.T) {
	r := startRuntime(t)
	defer r.close()
	meter := startMeter()
	defer meter.close()
	cam, viewer := r.admitted(camNode), r.admitted(viewerNode)
	const addr = "127.0.0.1:40998"
	r.send(cam, camListening(addr))
	if !r.waitBindFrom(viewer, "in", addr) {
		t.Note("the viewer was never bound to cam's address; the data-plane check covers the Binds it did receive")
	}
	// viewer beats every quarter period throughout; cam beats once and
	// falls silent. lastBeat is when conform began writing viewer's
	// latest beat: the runtime heard it no earlier.
	beatViewer := func() time.Time {
		at := time.Now()
		r.send(viewer, alive(0))
		return at
	}
	lastViewer := beatViewer()
	viewerGap := time.Duration(0)
	silentSince := time.Now() // the runtime heard cam's beat no earlier
	r.send(cam, alive(0))
	camMark, viewerMark := cam.Mark("silent"), viewer.Mark("silent")
	misses := reflive.Misses * runtimePeriod
	gone := false
	// notGone is cam's silence when conform last asked for a report that
	// did not yet declare it gone: the runtime declared it later than that.
	notGone := time.Duration(0)
	for !gone {
		idle(t, runtimePeriod/4)
		at := beatViewer()
		viewerGap, lastViewer = max(viewerGap, at.Sub(lastViewer)), at
		asked := time.Since(silentSince)
		rep := r.report()
		silence := time.Since(silentSince) // at least cam's silence when the report was taken
		if slices.Contains(rep.GetGone(), viewerNode) {
			// Conform beats for viewer only between reports, so viewer was
			// also silent from its last beat until this report was taken:
			// a report slow to come (a loaded machine) is such a gap too.
			gap := max(viewerGap, time.Since(lastViewer))
			if gap+meter.late(r.ctx, silentSince, time.Now()) >= misses {
				t.Harnessf("conform fell behind on viewer's beats (a gap of %v against three periods of %v) and the runtime rightly declared viewer gone", gap.Round(time.Millisecond), runtimePeriod)
			}
			t.Failf("the runtime declared viewer gone although conform beat for it at least every %v (three periods are %v)", viewerGap.Round(time.Millisecond), misses)
		}
		gone = slices.Contains(rep.GetGone(), camNode)
		if gone && silence < misses {
			t.Fail(evidence.Named("gone (the runtime's report)", reports.Evidence{Message: "the runtime declared a node gone before three heartbeat periods of silence (ranvier-wire §6.5)",
				Expected: fmt.Sprintf("gone after %v of silence (three periods of %v)", misses, runtimePeriod),
				Got:      fmt.Sprintf("gone in a report that returned %v after cam's last Alive was sent", silence.Round(time.Millisecond))}))
			return
		}
		if gone && notGone < misses-runtimePeriod {
			// Conform looks every quarter period; when it fell so far
			// behind that more than a period passed unobserved before the
			// limit, a runtime that declared cam gone early would pass.
			t.Harnessf("conform asked for the runtime's report too rarely to time its declaration: cam was not gone at %v of silence and gone at %v, so it may have been declared gone before three periods (%v)",
				notGone.Round(time.Millisecond), silence.Round(time.Millisecond), misses)
		}
		if !gone {
			notGone = asked
		}
		late := misses + slack(runtimePeriod) + runtimePeriod
		if !gone && silence > late+meter.late(r.ctx, silentSince, time.Now()) {
			t.Failf("cam was silent for %v (three periods are %v) and the runtime did not declare it gone (ranvier-wire §6.5)", silence.Round(time.Millisecond), misses)
			return
		}
	}
	// Being declared gone is a report: nothing on the data plane changes.
	idle(t, runtimePeriod)
	for _, m := range toNodes(viewer.Transcript())[viewerMark.Frames:] {
		if from, ok := bindFrom(m, "in"); m.GetBind() != nil && (!ok || from != addr) {
			t.Fail(reports.Evidence{Message: "after declaring cam gone the runtime re-bound the viewer away from cam's stream (ranvier-wire §6.5: being declared gone MUST NOT tear down anything on the data plane)",
				Got: meaning.Render(m)})
		}
	}
	for _, m := range toNodes(cam.Transcript())[camMark.Frames:] {
		if m.GetStop() != nil || m.GetTransport() != nil {
			t.Fail(reports.Evidence{Message: "after declaring cam gone the runtime told it to stop or pause (ranvier-wire §6.5: being declared gone MUST NOT tear down anything on the data plane)",
				Got: meaning.Render(m)})
		}
	}
}

func runtimeEmptyMessage(t *cases.T) {
	r := startRuntime(t)
	defer r.close()
	cam, viewer := r.admitted(camNode), r.admitted(viewerNode)
	// The Listening behind the empty frame is the runtime's receipt for it:
	// viewer is bound to the address it names only once the runtime has
	// read past the empty frame. Without it, a runtime slow to read (a
	// loaded machine) would pass by not having reached the frame yet.
	const addr = "127.0.0.1:40997"
	r.sendRaw(cam, "an empty frame, then a Listening", peer.EmptyFrame(), peer.MustFrame(camListening(addr)))
	closed := r.waitEnded(cam, runtimePeriod) // at once, from a runtime that is not slow
	readPast := !closed && r.waitBindFrom(viewer, "in", addr)
	if closed || r.waitEnded(cam, runtimePeriod) {
		t.Failf("the runtime closed the connection after a ToRuntime with no variant (ranvier-wire §6.4: a receiver MUST NOT treat one as an error)")
		return
	}
	if !readPast {
		t.Note("viewer was never bound to the address cam's Listening named after the empty frame, so nothing shows the runtime read that far; the verdict rests on the open connection and the report")
	}
	if rep := r.report(); !slices.Contains(rep.GetRegistered(), camNode) {
		t.Failf("after a ToRuntime with no variant the runtime no longer lists the node as registered: %v", rep.GetRegistered())
	}
}

func runtimeUndecodable(t *cases.T) {
	r := startRuntime(t)
	defer r.close()
	c := r.admitted(camNode)
	r.sendRaw(c, "an undecodable frame", peer.Garbage())
	if !r.waitEnded(c, owed(t)) {
		t.Fail(reports.Evidence{Message: fmt.Sprintf("the runtime kept the connection for %v after a well-framed payload that is not a ToRuntime (ranvier-wire §6.3: the control-plane runtime closes it, a node speaking something else)", owed(t)),
			Input: fmt.Sprintf("% x", peer.Garbage())})
	}
}

func runtimeFramingError(t *cases.T) {
	r := startRuntime(t)
	defer r.close()
	c := r.admitted(camNode)
	// The bad prefix, then a well-formed Alive a resynchronising runtime
	// would find.
	r.sendRaw(c, "a prefix claiming 16,777,217 bytes and an Alive", peer.TooLargePrefix(), peer.MustFrame(alive(1)))
	if !r.waitEnded(c, owed(t)) {
		t.Fail(reports.Evidence{Message: fmt.Sprintf("the runtime kept the connection for %v after a prefix claiming 16,777,217 bytes (ranvier-wire §6.2: the runtime treats the framing error as the connection ending)", owed(t)),
			Input: "01 00 00 01, then an Alive frame", Expected: "the connection closed"})
	}
}

func runtimeEmptyFirst(t *cases.T) {
	r := startRuntime(t)
	defer r.close()
	c := r.dial()
	r.sendRaw(c, "an empty first frame", peer.EmptyFrame())
	if r.waitEnded(c, runtimePeriod) {
		t.Note("the runtime closed the connection after an empty first frame")
		return
	}
	r.send(c, register(r.reg(1, camNode, r.token)))
	m, tr := r.firstReply(c)
	t.Note("the runtime kept the connection for %v after an empty first frame and answered a Register after it with %s", runtimePeriod, r.describeReply(m, tr))
}
