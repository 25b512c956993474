package live

import (
	"fmt"
	"time"

	"github.com/conform-suite/conform/cases"
	"github.com/conform-suite/conform/live/peer"
	controlpb "github.com/conform-suite/conform/proto/ranvier/control/v1"
	reflive "github.com/conform-suite/conform/ref/live"
	"github.com/conform-suite/conform/reports"
)

// ProfileNode is the profile of the cases that launch the SUT as a
// control-plane node and play its runtime.
const ProfileNode = "ranvier-node"

// The heartbeat periods the node cases name in their Binds: short, so that
// a case sees many periods in well under a second.
const (
	fastPeriod = 200 * time.Millisecond
	slowPeriod = 1500 * time.Millisecond
)

func ms(d time.Duration) uint32 { return uint32(d / time.Millisecond) }

// nodeCases are the cases of the SUT as a node (ranvier-wire §3.2, §5, §6).
func nodeCases() []cases.Case {
	cs := []cases.Case{
		{
			ID:    "live/5.2/node-registers-first",
			Title: "A node's first frame on the control connection is Register, with protocol 1, RANVIER_NODE_ID and RANVIER_TOKEN",
			Spec:  "ranvier-wire §5.2, §3.2, §7.1", Level: reports.MUST,
			Run: nodeRegistersFirst,
		},
		{
			ID:    "live/5.2/node-single-register",
			Title: "A node sends no second Register on one connection",
			Spec:  "ranvier-wire §5.2", Level: reports.MUST,
			Run: nodeSingleRegister,
		},
		{
			ID:    "live/5.2/node-refused-no-redial",
			Title: "A refused node does not redial: the permission to redial covers every close but a refusal",
			Spec:  "ranvier-wire §5.2", Level: reports.MUST,
			Run: nodeRefusedNoRedial,
		},
		{
			ID:    "live/5.2/node-refused-exits-nonzero",
			Title: "A refused node reports it and exits non-zero",
			Spec:  "ranvier-wire §5.2", Level: reports.SHOULD,
			Run: nodeRefusedExits,
		},
		{
			ID:    "live/5.2/node-bind-replaces-set",
			Title: "Each Bind is the node's complete binding set: a binding left out of the next Bind is torn down",
			Spec:  "ranvier-wire §5.2", Level: reports.MUST,
			Run: func(t *cases.T) { nodeBindReplaces(t, false) },
		},
		{
			ID:    "live/5.2/node-bind-unchanged-kept",
			Title: "An entry unchanged between two Binds does not tear down its working subscription",
			Spec:  "ranvier-wire §5.2", Level: reports.SHOULD,
			Run: func(t *cases.T) { nodeBindReplaces(t, true) },
		},
		{
			ID:    "live/5.2/node-empty-from-not-dialled",
			Title: "A binding with an empty from is brought up and not dialled; a fresh Bind with the address is then dialled",
			Spec:  "ranvier-wire §5.2", Level: reports.MUST,
			Run: nodeEmptyFrom,
		},
		{
			ID:    "live/3.2/node-ignores-ranvier-bindings",
			Title: "A node does not use RANVIER_BINDINGS: bindings arrive only as Bind messages",
			Spec:  "ranvier-wire §3.2", Level: reports.MUST,
			Run: nodeIgnoresBindingsEnv,
		},
		{
			ID:    "live/5.2/node-alive-on-period",
			Title: "A node sends Alive at least every Bind.heartbeat_period_ms, from the moment the Bind arrives",
			Spec:  "ranvier-wire §5.2", Level: reports.MUST,
			Run: nodeAliveOnPeriod,
		},
		{
			ID:    "live/5.2/node-alive-default-period",
			Title: "A heartbeat_period_ms of 0 leaves the node on the two-second default: Alive at least every 2 s",
			Spec:  "ranvier-wire §5.2", Level: reports.MUST,
			Run: nodeAliveDefault,
		},
		{
			ID:    "live/5.2/node-shorter-period-at-once",
			Title: "A Bind naming a shorter heartbeat period takes effect at once",
			Spec:  "ranvier-wire §5.2", Level: reports.MUST,
			Run: nodeShorterPeriod,
		},
		{
			ID:    "live/5.2/node-alive-sequence-steps",
			Title: "Alive.sequence steps by one per Alive on a connection",
			Spec:  "ranvier-wire §5.2, §5.3; RECONSTRUCTED.md §1", Level: reports.SHOULD,
			Tags: []string{"reconstructed"},
			Run:  nodeAliveSequence,
		},
		{
			ID:    "live/5.2/node-stop-stopping",
			Title: "A node answers Stop with Stopping and exits within Stop.deadline_ms",
			Spec:  "ranvier-wire §5.2", Level: reports.SHOULD,
			Run: nodeStop,
		},
		{
			ID:    "live/5.2/node-transport-ignored",
			Title: "A node that did not set accepts_transport ignores a Transport message",
			Spec:  "ranvier-wire §5.2", Level: reports.MUST,
			Run: nodeTransportIgnored,
		},
		{
			ID:    "live/6.4/node-empty-message-ignored",
			Title: "A ToNode with no variant, or with a variant the node does not know, is not an error: the connection and the session go on",
			Spec:  "ranvier-wire §6.4, §7.3", Level: reports.MUST,
			Run: nodeEmptyMessage,
		},
		{
			ID:    "live/6.3/node-undecodable-not-framing-error",
			Title: "A ToNode payload that fails to decode is not a framing error: the node keeps the connection",
			Spec:  "ranvier-wire §6.3", Level: reports.MUST,
			Run: nodeUndecodable,
		},
		{
			ID:    "live/5.2/node-alive-before-bind",
			Title: "Whether a node sends Alive before its first Bind (the period runs from the Bind; nothing states what comes before it)",
			Spec:  "ranvier-wire §5.2", Level: reports.INFO,
			Run: nodeAliveBeforeBind,
		},
		{
			ID:    "live/5.2/node-redial-resends-listening",
			Title: "After a dropped control connection the node may redial; it registers first and re-sends its Listening",
			Spec:  "ranvier-wire §5.2", Level: reports.MAY,
			Run: nodeRedial,
		},
	}
	for i := range cs {
		cs[i].Profile = ProfileNode
	}
	return cs
}

func nodeRegistersFirst(t *cases.T) {
	n := launchNode(t, "")
	defer n.close()
	_, reg := n.register()
	if reg == nil {
		return
	}
	if reg.GetProtocol() != reflive.Protocol {
		t.Fail(reports.Evidence{Message: "Register.protocol is not 1 (ranvier-wire §5.2, §7.1)", Expected: fmt.Sprint(reflive.Protocol), Got: fmt.Sprint(reg.GetProtocol())})
	}
	if reg.GetNodeId() != n.rt.NodeID() {
		t.Fail(reports.Evidence{Message: "Register.node_id is not RANVIER_NODE_ID (ranvier-wire §3.2)", Expected: n.rt.NodeID(), Got: reg.GetNodeId()})
	}
	if reg.GetToken() != n.rt.Token() {
		t.Fail(reports.Evidence{Message: "Register.token is not RANVIER_TOKEN (ranvier-wire §3.2)", Expected: n.rt.Token(), Got: reg.GetToken()})
	}
}

func nodeSingleRegister(t *cases.T) {
	n := launchNode(t, "")
	defer n.close()
	c, reg := n.register()
	if reg == nil {
		return
	}
	// Two Binds and several periods: every occasion a node might take to
	// register again.
	if !n.send(c, peer.Bind(ms(fastPeriod))) {
		return
	}
	n.idle(3 * fastPeriod)
	if !n.send(c, peer.Bind(ms(fastPeriod))) {
		return
	}
	n.idle(3 * fastPeriod)
	for i, m := range messagesSince(c, 1) {
		if m.Msg.GetRegister() != nil {
			t.Fail(reports.Evidence{Message: "the node sent a second Register on one connection (ranvier-wire §5.2)",
				Got: fmt.Sprintf("frame %d: %v", i+2, m.Msg)})
			return
		}
	}
}

// refuse registers the node and refuses it, then closes the connection.
func refuse(n *nodeRun) bool {
	c, reg := n.register()
	if reg == nil {
		return false
	}
	n.send(c, peer.Refuse(controlpb.RefuseReason_REFUSE_REASON_TOKEN, "conform refuses this node"))
	c.Close()
	return true
}

func nodeRefusedNoRedial(t *cases.T) {
	n := launchNode(t, "")
	defer n.close()
	if !refuse(n) {
		return
	}
	// Watch for a second connection until the node exits, and a little
	// after, or for exitWait if it never exits.
	deadline := time.Now().Add(exitWait)
	for time.Now().Before(deadline) {
		if c := n.accept(50 * time.Millisecond); c != nil {
			t.Fail(reports.Evidence{Message: "the node dialled the runtime again after it was refused (ranvier-wire §5.2: only a close for any reason other than a refusal may be redialled)",
				Got: fmt.Sprintf("a new control connection from %v", c.RemoteAddr())})
			return
		}
		select {
		case <-n.exited:
			if c := n.accept(50 * time.Millisecond); c != nil {
				t.Failf("the node dialled the runtime again after it was refused")
			}
			return
		default:
		}
	}
	t.Note("the node neither redialled nor exited within %v of the refusal", exitWait)
}

func nodeRefusedExits(t *cases.T) {
	n := launchNode(t, "")
	defer n.close()
	if !refuse(n) {
		return
	}
	if !n.waitExit(exitWait) {
		t.Failf("the node did not exit within %v of being refused (ranvier-wire §5.2: a refused node SHOULD exit non-zero)", exitWait)
		return
	}
	if code, desc := n.exitStatus(); code == 0 {
		t.Fail(reports.Evidence{Message: "the refused node exited with status 0 (ranvier-wire §5.2: it SHOULD exit non-zero)", Got: desc})
	}
}

func nodeBindReplaces(t *cases.T, unchangedKept bool) {
	n := launchNode(t, "")
	defer n.close()
	c, reg := n.register()
	if reg == nil {
		return
	}
	a, b := listenData(n), listenData(n)
	defer a.close()
	defer b.close()
	if !n.send(c, peer.Bind(ms(fastPeriod), binding("in.a", "bind.a", a.p.Addr()), binding("in.b", "bind.b", b.p.Addr()))) {
		return
	}
	ca := a.expectDial(n, "bind.a", "the first Bind binds it")
	cb := b.expectDial(n, "bind.b", "the first Bind binds it")
	if ca == nil || cb == nil {
		return
	}
	// The second Bind keeps in.a exactly as it was and drops in.b.
	if !n.send(c, peer.Bind(ms(fastPeriod), binding("in.a", "bind.a", a.p.Addr()))) {
		return
	}
	if !unchangedKept {
		ctx, cancel := contextFor(n, owedWait)
		defer cancel()
		if _, err := cb.WaitEnded(ctx); err != nil {
			t.Failf("in.b was left out of the second Bind and its subscription to %s was still open %v later: a node holding a stale binding cannot exist (ranvier-wire §5.2)", b.p.Addr(), owedWait)
		}
		return
	}
	n.idle(4 * fastPeriod)
	if tr := ca.Transcript(); tr.Ended {
		t.Failf("in.a was unchanged in the second Bind and its subscription was torn down (ranvier-wire §5.2: an unchanged entry SHOULD be a no-op)")
	}
	if again := a.accept(n.ctx, 10*time.Millisecond); again != nil {
		t.Failf("in.a was unchanged in the second Bind and the node dialled %s again", a.p.Addr())
	}
}

func nodeEmptyFrom(t *cases.T) {
	n := launchNode(t, "")
	defer n.close()
	c, reg := n.register()
	if reg == nil {
		return
	}
	a := listenData(n)
	defer a.close()
	mark := c.Mark("bind")
	if !n.send(c, peer.Bind(ms(fastPeriod), binding("in", "later.stream", ""))) {
		return
	}
	n.idle(4 * fastPeriod)
	tr := c.Transcript()
	if tr.Ended {
		t.Failf("the node closed the control connection after a Bind whose binding has an empty from (ranvier-wire §5.2: it MUST bring the port up)")
		return
	}
	if len(alives(messagesSince(c, mark.Frames))) == 0 {
		t.Failf("the node sent no Alive after a Bind whose binding has an empty from: it did not take the Bind up")
	}
	if n.trapDialled() {
		t.Failf("the node dialled %s, the address in RANVIER_BINDINGS, while holding a binding with an empty from", n.trap.Addr())
	}
	// The address arrives in a fresh Bind: the port that was up is dialled.
	if !n.send(c, peer.Bind(ms(fastPeriod), binding("in", "later.stream", a.p.Addr()))) {
		return
	}
	a.expectDial(n, "later.stream", "a fresh Bind carried the address its empty from was waiting for")
}

func nodeIgnoresBindingsEnv(t *cases.T) {
	n := launchNode(t, "")
	defer n.close()
	c, reg := n.register()
	if reg == nil {
		return
	}
	if !n.send(c, peer.Bind(ms(fastPeriod))) {
		return
	}
	n.idle(3 * fastPeriod)
	if n.trapDialled() {
		t.Fail(reports.Evidence{Message: "the node dialled the address named in RANVIER_BINDINGS (ranvier-wire §3.2: RANVIER_BINDINGS MUST NOT be used)",
			Input: "RANVIER_BINDINGS=" + n.rt.Getenv("RANVIER_BINDINGS"), Got: fmt.Sprintf("a connection to %s", n.trap.Addr())})
	}
}

// beatsAfterBind sends a Bind naming period and returns the messages that
// arrived in the window that followed, with its bounds.
func beatsAfterBind(n *nodeRun, c *peer.Conn, period uint32, window time.Duration) (ms []peer.ControlMessage, from, to time.Time, ok bool) {
	mark := c.Mark("bind")
	if !n.send(c, peer.Bind(period)) {
		return nil, time.Time{}, time.Time{}, false
	}
	n.idle(window)
	to = time.Now()
	if c.Transcript().Ended {
		n.t.Failf("the node closed the control connection after a Bind")
		return nil, time.Time{}, time.Time{}, false
	}
	return messagesSince(c, mark.Frames), mark.At, to, true
}

func nodeAliveOnPeriod(t *cases.T) {
	n := launchNode(t, "")
	defer n.close()
	c, reg := n.register()
	if reg == nil {
		return
	}
	got, from, to, ok := beatsAfterBind(n, c, ms(fastPeriod), 8*fastPeriod)
	if ok {
		checkBeats(t, got, from, to, fastPeriod, fmt.Sprintf("after a Bind naming %v", fastPeriod))
	}
}

func nodeAliveDefault(t *cases.T) {
	n := launchNode(t, "")
	defer n.close()
	c, reg := n.register()
	if reg == nil {
		return
	}
	const def = reflive.DefaultHeartbeat
	got, from, to, ok := beatsAfterBind(n, c, 0, def+def/4+heartbeatTolerance(def))
	if ok {
		checkBeats(t, got, from, to, def, "after a Bind naming 0 (the 2 s default)")
	}
}

func nodeShorterPeriod(t *cases.T) {
	n := launchNode(t, "")
	defer n.close()
	c, reg := n.register()
	if reg == nil {
		return
	}
	if !n.send(c, peer.Bind(ms(slowPeriod))) {
		return
	}
	n.idle(slowPeriod / 4)
	got, from, to, ok := beatsAfterBind(n, c, ms(fastPeriod), 6*fastPeriod)
	if ok {
		checkBeats(t, got, from, to, fastPeriod, fmt.Sprintf("after a Bind shortened the period from %v to %v", slowPeriod, fastPeriod))
	}
}

func nodeAliveSequence(t *cases.T) {
	n := launchNode(t, "")
	defer n.close()
	c, reg := n.register()
	if reg == nil {
		return
	}
	if !n.send(c, peer.Bind(ms(fastPeriod))) {
		return
	}
	ctx, cancel := contextFor(n, owedWait)
	defer cancel()
	tr, err := c.Wait(ctx, func(tr peer.Transcript) bool { return len(alives(tr.ControlMessages())) >= 4 })
	beats := alives(tr.ControlMessages())
	if err != nil {
		t.Failf("fewer than 4 Alive within %v of a Bind naming %v: %v", owedWait, fastPeriod, err)
		return
	}
	for i := 1; i < len(beats); i++ {
		prev, cur := beats[i-1].Msg.GetAlive().GetSequence(), beats[i].Msg.GetAlive().GetSequence()
		if cur != prev+1 {
			t.Fail(reports.Evidence{Message: "Alive.sequence did not step by one (RECONSTRUCTED.md §1)",
				Expected: fmt.Sprint(prev + 1), Got: fmt.Sprintf("%d after %d", cur, prev)})
			return
		}
	}
	t.Note("the first Alive carried sequence %d", beats[0].Msg.GetAlive().GetSequence())
}

func nodeStop(t *cases.T) {
	n := launchNode(t, "")
	defer n.close()
	c, reg := n.register()
	if reg == nil {
		return
	}
	if !n.send(c, peer.Bind(ms(fastPeriod))) {
		return
	}
	n.idle(fastPeriod)
	const deadline = time.Second
	mark := c.Mark("stop")
	if !n.send(c, peer.Stop(ms(deadline))) {
		return
	}
	exited := n.waitExit(deadline + heartbeatTolerance(deadline))
	stopping := false
	for _, m := range messagesSince(c, mark.Frames) {
		if m.Msg.GetStopping() != nil {
			stopping = true
		}
	}
	if !stopping {
		t.Failf("the node sent no Stopping after Stop (ranvier-wire §5.2)")
	}
	if !exited {
		t.Failf("the node did not exit within Stop.deadline_ms (%v) of Stop (ranvier-wire §5.2)", deadline)
		return
	}
	_, desc := n.exitStatus()
	t.Note("after Stop the node exited: %s", desc)
}

// stillInSession checks, after conform sent the node something it must not
// act on, that the node kept the connection, kept beating, and still applies
// a Bind: it dials the address a fresh Bind names.
func stillInSession(n *nodeRun, c *peer.Conn, mark peer.Mark, what string) {
	n.idle(4 * fastPeriod)
	if c.Transcript().Ended {
		n.t.Failf("the node closed the control connection after %s", what)
		return
	}
	checkBeats(n.t, messagesSince(c, mark.Frames), mark.At, time.Now(), fastPeriod, "after "+what)
	a := listenData(n)
	defer a.close()
	if !n.send(c, peer.Bind(ms(fastPeriod), binding("in", "after.stream", a.p.Addr()))) {
		return
	}
	a.expectDial(n, "after.stream", "a Bind sent after "+what+" was not applied")
}

func nodeTransportIgnored(t *cases.T) {
	n := launchNode(t, "")
	defer n.close()
	c, reg := n.register()
	if reg == nil {
		return
	}
	if reg.GetAcceptsTransport() {
		t.Note("the node set accepts_transport, so the rule for a node that did not is not exercised")
		return
	}
	if !n.send(c, peer.Bind(ms(fastPeriod))) {
		return
	}
	mark := c.Mark("transport")
	if !n.send(c, peer.Transport(controlpb.TransportAction_TRANSPORT_ACTION_PAUSE)) {
		return
	}
	stillInSession(n, c, mark, "a Transport{pause} it did not accept")
	for _, m := range messagesSince(c, mark.Frames) {
		if m.Msg.GetStopping() != nil {
			t.Failf("the node answered a Transport it did not accept with Stopping")
		}
	}
}

func nodeEmptyMessage(t *cases.T) {
	n := launchNode(t, "")
	defer n.close()
	c, reg := n.register()
	if reg == nil {
		return
	}
	if !n.send(c, peer.Bind(ms(fastPeriod))) {
		return
	}
	mark := c.Mark("empty")
	// 00 00 00 00, then ToNode with only a field 9 varint: a variant this
	// contract does not define (§7.3).
	if !n.send(c, peer.EmptyFrame(), peer.RawFrame([]byte{0x48, 0x01})) {
		return
	}
	stillInSession(n, c, mark, "an empty ToNode and a ToNode with an unknown variant")
}

func nodeUndecodable(t *cases.T) {
	n := launchNode(t, "")
	defer n.close()
	c, reg := n.register()
	if reg == nil {
		return
	}
	if !n.send(c, peer.Bind(ms(fastPeriod))) {
		return
	}
	mark := c.Mark("garbage")
	if !n.send(c, peer.Garbage()) {
		return
	}
	stillInSession(n, c, mark, "a well-framed payload that is not a ToNode")
}

func nodeRedial(t *cases.T) {
	n := launchNode(t, `{"publish":["redial.out"]}`)
	defer n.close()
	c, reg := n.register()
	if reg == nil {
		return
	}
	if !n.send(c, peer.Bind(ms(fastPeriod))) {
		return
	}
	n.idle(3 * fastPeriod)
	var listening *controlpb.Listening
	for _, m := range messagesSince(c, 1) {
		if l := m.Msg.GetListening(); l != nil {
			listening = l
		}
	}
	c.Close()
	again := n.accept(owedWait)
	if again == nil {
		t.Failf("the node did not redial within %v of the dropped connection (a MAY)", owedWait)
		return
	}
	if n.firstRegister(again) == nil {
		return
	}
	if listening == nil {
		t.Note("the node redialled and registered; it sent no Listening on the first connection, so there was none to re-send")
		return
	}
	if !n.send(again, peer.Bind(ms(fastPeriod))) {
		return
	}
	ctx, cancel := contextFor(n, owedWait)
	defer cancel()
	if _, err := again.Wait(ctx, func(tr peer.Transcript) bool {
		for _, m := range tr.ControlMessages() {
			if m.Msg.GetListening() != nil {
				return true
			}
		}
		return false
	}); err != nil {
		t.Failf("the node redialled and did not re-send its Listening (%v) within %v", listening, owedWait)
	}
}

func nodeAliveBeforeBind(t *cases.T) {
	n := launchNode(t, "")
	defer n.close()
	c, reg := n.register()
	if reg == nil {
		return
	}
	const wait = time.Second
	n.idle(wait)
	got := messagesSince(c, 1)
	t.Note("with no Bind for %v after Register the node sent %d Alive and %d other messages", wait, len(alives(got)), len(got)-len(alives(got)))
}
