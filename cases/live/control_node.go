package live

import (
	"fmt"
	"slices"
	"time"

	"github.com/conform-suite/conform/cases"
	"github.com/conform-suite/conform/live/peer"
	"github.com/conform-suite/conform/proc"
	"github.com/conform-suite/conform/proto/conform/v1/meaning"
	controlpb "github.com/conform-suite/conform/proto/ranvier/control/v1"
	reflive "github.com/conform-suite/conform/ref/live"
	"github.com/conform-suite/conform/reports"
	"github.com/conform-suite/conform/reports/evidence"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// ProfileNode is the profile of the cases that launch the SUT as a
// control-plane node and play its runtime.
const ProfileNode = "ranvier-node"

// The figures the node cases choose and give the node in their Binds, and
// the ones ranvier-wire §5.2 fixes.
const (
	// fastPeriod is the heartbeat period most cases name: short, so that a
	// case sees several periods in a fraction of a second.
	fastPeriod = 100 * time.Millisecond
	// slowPeriod is the period a case names first when it then shortens it.
	slowPeriod = time.Second
	// beatCount is how many Alive a case judges on a period.
	beatCount = 4
	// stopDeadline is the Stop.deadline_ms a case gives.
	stopDeadline = time.Second
	// notComing is §5.2's five-second timeout, after which the runtime
	// stops waiting for a publisher's Listening: a node must not be
	// waiting for a second Bind then.
	notComing = 5 * time.Second
	// undeclared is an enum value no ranvier.control.v1 enum declares
	// (ranvier-wire §7.4's example).
	undeclared = 99
)

// The pins of a node case's messages beyond every conversation's: Alive,
// Refuse and its reasons, Transport, Stop and Stopping, Listening.
const (
	pinListening    = "reconstructed§ranvier-fields#15"
	pinAlive        = "reconstructed§ranvier-fields#16"
	pinStopping     = "reconstructed§ranvier-fields#17"
	pinRefuseReason = "reconstructed§ranvier-fields#19"
	pinRefuse       = "reconstructed§ranvier-fields#20"
	pinTransport    = "reconstructed§ranvier-fields#21"
	pinStop         = "reconstructed§ranvier-fields#22"
)

// nodeCases are the cases of the SUT as a node (ranvier-wire §3.2, §5, §6,
// §7.4).
func nodeCases(k *cases.Kit) []cases.Case {
	return []cases.Case{
		k.Must(func() cases.Case {
			return cases.Case{
				ID:    "live/5.2/node-registers-first",
				Title: "A node's first frame on the control connection is Register, with protocol 1, RANVIER_NODE_ID and RANVIER_TOKEN",
				Spec:  "ranvier-wire §5.2, §3.2, §7.1",
				Requirements: judges(nodePins, "ranvier-wire§5.2#2", "ranvier-wire§5.2#6", "ranvier-wire§3.1#4", "ranvier-wire§3.2#3",
					"ranvier-wire§3.2#4", "ranvier-wire§3.2#5", "ranvier-wire§5#1", "ranvier-wire§7.1#3"),
				Run: nodeRegistersFirst,
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "live/5.2/node-single-register",
				Title:        "A node sends no second Register on one connection",
				Spec:         "ranvier-wire §5.2",
				Requirements: judges(nodePins, "ranvier-wire§5.2#5", pinAlive),
				Run:          nodeSingleRegister,
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "live/5.2/node-redial-registers-first",
				Title:        "A node that redials after its control connection was dropped sends Register first on the new connection too",
				Spec:         "ranvier-wire §5.2",
				Requirements: judges(nodePins, "ranvier-wire§5.2#3", pinAlive),
				Run:          nodeRedialRegistersFirst,
			}
		}),
		k.Should(func() cases.Case {
			return cases.Case{
				ID:           "live/5.2/node-refused-no-redial",
				Title:        "A refused node does not redial: it should exit, and the permission to redial covers every close but a refusal",
				Spec:         "ranvier-wire §5.2",
				Requirements: judges(nodePins, "ranvier-wire§5.2#9", pinRefuse, pinRefuseReason),
				Run:          nodeRefusedNoRedial,
			}
		}),
		k.Should(func() cases.Case {
			return cases.Case{
				ID:           "live/5.2/node-refused-exits-nonzero",
				Title:        "A refused node reports it and exits non-zero",
				Spec:         "ranvier-wire §5.2",
				Requirements: judges(nodePins, "ranvier-wire§5.2#9", pinRefuse, pinRefuseReason),
				Run:          nodeRefusedExits,
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "live/7.4/node-undeclared-refuse-reason",
				Title:        "A Refuse whose reason no enum value declares (99) is read as REFUSE_REASON_UNSPECIFIED: the node does what it does on an unspecified refusal",
				Spec:         "ranvier-wire §7.4",
				Requirements: judges(nodePins, "ranvier-wire§7.4#1", "ranvier-wire§7.4#2", "ranvier-wire§7.4#4", pinRefuse, pinRefuseReason),
				Run:          nodeUndeclaredRefuseReason,
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "live/5.2/node-bind-replaces-set",
				Title:        "Each Bind is the node's complete binding set: a binding left out of the next Bind is torn down",
				Spec:         "ranvier-wire §5.2, §3.1",
				Requirements: judges(nodePins, "ranvier-wire§5.2#11", "ranvier-wire§3.1#2", pinRequest),
				Run:          func(t *cases.T) { nodeBindReplaces(t, false) },
			}
		}),
		k.Should(func() cases.Case {
			return cases.Case{
				ID:           "live/5.2/node-bind-unchanged-kept",
				Title:        "An entry unchanged between two Binds does not tear down its working subscription",
				Spec:         "ranvier-wire §5.2",
				Requirements: judges(nodePins, "ranvier-wire§5.2#12", pinRequest, pinAlive),
				Run:          func(t *cases.T) { nodeBindReplaces(t, true) },
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:    "live/5.2/node-empty-from-not-dialled",
				Title: "A binding with an empty from is brought up and not dialled; a fresh Bind with the address is then dialled",
				Spec:  "ranvier-wire §5.2, §3.1",
				Requirements: judges(nodePins, "ranvier-wire§5.2#13", "ranvier-wire§5.2#14", "ranvier-wire§3.1#2", pinRequest,
					pinAlive),
				Run: nodeEmptyFrom,
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "live/5.2/node-no-wait-for-second-bind",
				Title:        "A node holding an empty-from binding does not wait for a second Bind at the five-second timeout: it beats on past it and takes up the Bind that carries the address",
				Spec:         "ranvier-wire §5.2",
				Requirements: judges(nodePins, "ranvier-wire§5.2#16", pinRequest, pinAlive),
				Run:          nodeNoWaitForSecondBind,
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "live/3.2/node-ignores-ranvier-bindings",
				Title:        "A node does not use RANVIER_BINDINGS: bindings arrive only as Bind messages",
				Spec:         "ranvier-wire §3.2",
				Requirements: judges(nodePins, "ranvier-wire§3.2#9", pinAlive),
				Run:          nodeIgnoresBindingsEnv,
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "live/3.2/node-runs-by-hand",
				Title:        "With RANVIER_CONTROL unset a node makes no control connection and runs on its own: it does not exit",
				Spec:         "ranvier-wire §3.2",
				Requirements: judges(nodePins, "ranvier-wire§3.2#8"),
				Run:          nodeRunsByHand,
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "live/5.2/node-listening-names-publishers",
				Title:        "A node told to publish a stream sends Listening naming it at a loopback address where its publisher serves it",
				Spec:         "ranvier-wire §5.2, §3.3",
				Requirements: judges(nodePins, "ranvier-wire§5.2#1", pinListening, pinRequest, pinFrame),
				Run:          nodeListening,
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "live/3.1/node-control-carries-no-data",
				Title:        "Nothing of the data plane travels on a node's control connection: every frame on it is a ToRuntime, while its stream is served on its data listener",
				Spec:         "ranvier-wire §3.1",
				Requirements: judges(nodePins, "ranvier-wire§3.1#3", pinAlive, pinListening),
				Run:          nodeControlCarriesNoData,
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "live/5.2/node-alive-on-period",
				Title:        "A node sends Alive at least every Bind.heartbeat_period_ms, from the moment the Bind arrives",
				Spec:         "ranvier-wire §5.2",
				Requirements: judges(nodePins, "ranvier-wire§5.2#17", pinAlive),
				Run:          nodeAliveOnPeriod,
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "live/5.2/node-alive-default-period",
				Title:        "A heartbeat_period_ms of 0 leaves the node on the two-second default: Alive at least every 2 s",
				Spec:         "ranvier-wire §5.2",
				Requirements: judges(nodePins, "ranvier-wire§5.2#20", pinAlive),
				Run:          nodeAliveDefault,
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "live/5.2/node-shorter-period-at-once",
				Title:        "A Bind naming a shorter heartbeat period takes effect at once",
				Spec:         "ranvier-wire §5.2",
				Requirements: judges(nodePins, "ranvier-wire§5.2#19", pinAlive),
				Run:          nodeShorterPeriod,
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "live/5.2/node-alive-sequence-advances",
				Title:        "A node sends Alive's sequence field: over several Alive on one connection the sequence changes, so it is not left out",
				Spec:         "ranvier-wire §5.2, §5.3",
				Requirements: judges(nodePins, "ranvier-wire§5.2#22", "reconstructed§contradictions#6", pinAlive),
				Run:          nodeAliveSequenceAdvances,
			}
		}),
		k.Should(func() cases.Case {
			return cases.Case{
				ID:           "live/5.2/node-alive-sequence-steps",
				Title:        "Alive.sequence counts the Alive sent on a connection: it steps by one per Alive",
				Spec:         "ranvier-wire §5.2, §5.3",
				Requirements: judges(nodePins, "reconstructed§ranvier-alive-sequence#1", pinAlive),
				Run:          nodeAliveSequenceSteps,
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "live/5.2/node-alive-carries-only-sequence",
				Title:        "Alive carries its sequence number and nothing else: no rates, counts or queue depths",
				Spec:         "ranvier-wire §5.2",
				Requirements: judges(nodePins, "ranvier-wire§5.2#21", pinAlive),
				Run:          nodeAliveCarriesOnlySequence,
			}
		}),
		k.Should(func() cases.Case {
			return cases.Case{
				ID:           "live/5.2/node-stop-stopping",
				Title:        "A node answers Stop with Stopping and exits within Stop.deadline_ms",
				Spec:         "ranvier-wire §5.2",
				Requirements: judges(nodePins, "ranvier-wire§5.2#24", pinStop, pinStopping),
				Run:          nodeStop,
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "live/5.2/node-transport-ignored",
				Title:        "A node that did not set accepts_transport ignores a Transport message",
				Spec:         "ranvier-wire §5.2",
				Requirements: judges(nodePins, "ranvier-wire§5.2#26", pinTransport, pinAlive, pinRequest),
				Run:          nodeTransportIgnored,
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:    "live/6.4/node-empty-message-ignored",
				Title: "A ToNode with no variant, or with a variant the node does not know, is not an error: the connection and the session go on",
				Spec:  "ranvier-wire §6.4, §7.3",
				Requirements: judges(nodePins, "ranvier-wire§6.4#1", "ranvier-wire§7.3#1", "ranvier-wire§7.3#2",
					"reconstructed§contradictions#7", pinAlive, pinRequest),
				Run: nodeEmptyMessage,
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "live/6.3/node-undecodable-not-framing-error",
				Title:        "A ToNode payload that fails to decode is not a framing error: the node keeps the connection",
				Spec:         "ranvier-wire §6.3",
				Requirements: judges(nodePins, "ranvier-wire§6.3#4", "ranvier-wire§6.3#5", pinAlive, pinRequest),
				Run:          nodeUndecodable,
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "live/6.2/node-framing-error-loses-connection",
				Title:        "After a prefix above 16 MiB on the control connection a node takes the connection as lost: it applies nothing behind the prefix and stops using the connection",
				Spec:         "ranvier-wire §6.2, §5.2",
				Requirements: judges(nodePins, "ranvier-wire§6.2#5", "ranvier-wire§6.2#1", pinAlive),
				Run:          nodeFramingError,
			}
		}),
		k.Info(func() cases.Case {
			return cases.Case{
				ID:    "live/5.2/node-alive-before-bind",
				Title: "Whether a node sends Alive before its first Bind (the period runs from the Bind; nothing states what comes before it)",
				Spec:  "ranvier-wire §5.2",
				Run:   nodeAliveBeforeBind,
			}
		}),
		k.May(func() cases.Case {
			return cases.Case{
				ID:           "live/5.2/node-redial-resends-listening",
				Title:        "After a dropped control connection the node may redial; it registers first and re-sends its Listening",
				Spec:         "ranvier-wire §5.2",
				Requirements: []string{"ranvier-wire§5.2#28"},
				Run:          nodeRedial,
			}
		}),
	}
}

func nodeRegistersFirst(t *cases.T) {
	n := launchNode(t, "")
	defer n.close()
	_, reg := n.register()
	if reg.GetProtocol() != reflive.Protocol {
		t.Fail(evidence.Named("Register.protocol", reports.Evidence{Message: "Register.protocol is not 1 (ranvier-wire §5.2, §7.1)", Expected: fmt.Sprint(reflive.Protocol), Got: fmt.Sprint(reg.GetProtocol())}))
	}
	if reg.GetNodeId() != n.rt.NodeID() {
		t.Fail(evidence.Named("Register.nodeId", reports.Evidence{Message: "Register.node_id is not RANVIER_NODE_ID (ranvier-wire §3.2)", Expected: n.rt.NodeID(), Got: reg.GetNodeId()}))
	}
	if reg.GetToken() != n.rt.Token() {
		t.Fail(evidence.Named("Register.token", reports.Evidence{Message: "Register.token is not RANVIER_TOKEN (ranvier-wire §3.2)", Expected: n.rt.Token(), Got: reg.GetToken()}))
	}
}

// bind sends a Bind naming period and bindings and returns the mark of the
// moment it was sent.
func (n *nodeRun) bind(c *peer.Conn, period time.Duration, bindings ...*controlpb.BindingInfo) peer.Mark {
	mark := c.Mark("bind")
	if !n.send(c, peer.Bind(millis(period), bindings...)) {
		n.t.Fatalf("the case cannot go on without its Bind")
	}
	return mark
}

// beatsOrStop is beats, ending the case when they fail.
func (n *nodeRun) beatsOrStop(c *peer.Conn, mark peer.Mark, period time.Duration, count int, what string) []peer.ControlMessage {
	ms, ok := n.beats(c, mark, period, count, what)
	if !ok {
		n.t.Fatalf("the node's heartbeat failed %s, so the case cannot go on", what)
	}
	return ms
}

// synced returns c's transcript once it holds everything the node had sent.
func (n *nodeRun) synced(c *peer.Conn) peer.Transcript {
	ctx, cancel := contextWithin(n.ctx, owed(n.t))
	defer cancel()
	tr, _ := c.Sync(ctx)
	return tr
}

func nodeSingleRegister(t *cases.T) {
	n := launchNode(t, "")
	defer n.close()
	c, _ := n.register()
	// Two Binds and several periods: every occasion a node might take to
	// register again.
	n.beatsOrStop(c, n.bind(c, fastPeriod), fastPeriod, 2, "after the first Bind")
	n.beatsOrStop(c, n.bind(c, fastPeriod), fastPeriod, 2, "after the second Bind")
	for i, m := range n.synced(c).ControlMessages()[1:] {
		if m.Msg.GetRegister() != nil {
			t.Fail(reports.Evidence{Message: "the node sent a second Register on one connection (ranvier-wire §5.2)",
				Got: fmt.Sprintf("frame %d: %s", i+2, meaning.Render(m.Msg))})
			return
		}
	}
}

// dropAndRedial registers the node, binds it, drops the control connection
// and returns the node's next connection, nil when it did not redial within
// owed. listening is the Listening the node sent on the first connection,
// if any.
func dropAndRedial(n *nodeRun) (again *peer.Conn, listening *controlpb.Listening) {
	c, _ := n.register()
	n.beatsOrStop(c, n.bind(c, fastPeriod), fastPeriod, 1, "after the Bind")
	for _, m := range n.synced(c).ControlMessages() {
		if l := m.Msg.GetListening(); l != nil {
			listening = l
		}
	}
	c.Close()
	return n.accept(owed(n.t)), listening
}

func nodeRedialRegistersFirst(t *cases.T) {
	n := launchNode(t, "")
	defer n.close()
	again, _ := dropAndRedial(n)
	if again == nil {
		t.Skipf("the node did not redial within %v of the dropped connection (redialling is a MAY): there is no second connection to judge", owed(t))
	}
	_, reg := n.firstRegister(again)
	if reg.GetNodeId() != n.rt.NodeID() || reg.GetToken() != n.rt.Token() {
		t.Fail(evidence.Named("Register", reports.Evidence{Message: "the Register on the redialled connection does not name RANVIER_NODE_ID and RANVIER_TOKEN (ranvier-wire §3.2)",
			Expected: fmt.Sprintf(`a Register with "nodeId":%q, "token":%q`, n.rt.NodeID(), n.rt.Token()), Got: meaning.Render(reg)}))
	}
}

// refuse registers the node and refuses it for reason, then closes the
// connection.
func refuse(n *nodeRun, reason controlpb.RefuseReason) {
	c, _ := n.register()
	n.send(c, peer.Refuse(reason, "conform refuses this node"))
	c.Close()
}

// afterRefusal is what a refused node did: whether it dialled the runtime
// again, and whether and how it exited, within owed.
type afterRefusal struct {
	redialled bool
	exited    bool
	code      int
	desc      string
}

func (a afterRefusal) String() string {
	switch {
	case a.redialled:
		return "dialled the runtime again"
	case a.exited:
		return "exited: " + a.desc
	default:
		return "neither redialled nor exited"
	}
}

// watchRefused watches a refused node until it redials, exits, or owed
// passes. A dial made just before it exited is still seen.
func watchRefused(n *nodeRun) afterRefusal {
	ctx, cancel := contextWithin(n.ctx, owed(n.t))
	defer cancel()
	dialled := make(chan bool, 1)
	go func() {
		c, err := n.rt.Accept(ctx)
		dialled <- err == nil && c != nil
	}()
	var out afterRefusal
	select {
	case out.redialled = <-dialled:
		return out
	case <-n.exited:
		out.exited = true
		out.code, out.desc = n.exitStatus()
	case <-ctx.Done():
	}
	if c := n.accept(50 * time.Millisecond); c != nil {
		out.redialled = true
	}
	cancel()
	return out
}

func nodeRefusedNoRedial(t *cases.T) {
	n := launchNode(t, "")
	defer n.close()
	refuse(n, controlpb.RefuseReason_REFUSE_REASON_TOKEN)
	switch got := watchRefused(n); {
	case got.redialled:
		t.Fail(reports.Evidence{Message: "the node dialled the runtime again after it was refused (ranvier-wire §5.2: a refused node should exit; redialling is allowed after any close but a refusal)",
			Got: got.String()})
	case !got.exited:
		t.Note("the node neither redialled nor exited within %v of the refusal", owed(t))
	}
}

func nodeRefusedExits(t *cases.T) {
	n := launchNode(t, "")
	defer n.close()
	refuse(n, controlpb.RefuseReason_REFUSE_REASON_TOKEN)
	if !n.waitExit(owed(t)) {
		t.Failf("the node did not exit within %v of being refused (ranvier-wire §5.2: a refused node should exit non-zero)", owed(t))
		return
	}
	if code, desc := n.exitStatus(); code == 0 {
		t.Fail(reports.Evidence{Message: "the refused node exited with status 0 (ranvier-wire §5.2: it should exit non-zero)", Got: desc})
	}
}

func nodeUndeclaredRefuseReason(t *cases.T) {
	// The same node refused twice: once with the unspecified reason the
	// rule says an undeclared one reads as, once with the undeclared 99.
	refusedWith := func(reason controlpb.RefuseReason) afterRefusal {
		n := launchNode(t, "")
		defer n.close()
		refuse(n, reason)
		return watchRefused(n)
	}
	unspecified := refusedWith(controlpb.RefuseReason_REFUSE_REASON_UNSPECIFIED)
	got := refusedWith(controlpb.RefuseReason(undeclared))
	same := got.redialled == unspecified.redialled && got.exited == unspecified.exited && (!got.exited || (got.code == 0) == (unspecified.code == 0))
	if !same {
		t.Fail(evidence.Named("the node after the Refuse", reports.Evidence{Message: "a Refuse with the undeclared reason 99 was not taken as the unspecified refusal it reads as (ranvier-wire §7.4: a decoder never rejects an undeclared enum value, and an unknown RefuseReason is an unspecified refusal)",
			Input: "Refuse{reason: 99}, then the connection closed", Expected: "what the node did after Refuse{reason: REFUSE_REASON_UNSPECIFIED}: " + unspecified.String(), Got: got.String()}))
		return
	}
	t.Note("after Refuse{reason: 99}, as after the unspecified reason, the node %s", got)
}

func nodeBindReplaces(t *cases.T, unchangedKept bool) {
	n := launchNode(t, "")
	defer n.close()
	c, _ := n.register()
	a, b := listenData(n), listenData(n)
	defer a.close()
	defer b.close()
	n.bind(c, fastPeriod, binding("in.a", "bind.a", a.p.Addr()), binding("in.b", "bind.b", b.p.Addr()))
	ca := a.expectDial(n, "bind.a", "the first Bind binds it")
	cb := b.expectDial(n, "bind.b", "the first Bind binds it")
	if ca == nil || cb == nil {
		return
	}
	// The second Bind keeps in.a exactly as it was and drops in.b.
	mark := n.bind(c, fastPeriod, binding("in.a", "bind.a", a.p.Addr()))
	if !unchangedKept {
		ctx, cancel := contextWithin(n.ctx, owed(t))
		defer cancel()
		if _, err := cb.WaitEnded(ctx); err != nil {
			t.Failf("in.b was left out of the second Bind and its subscription to %s was still open %v later: a node holding a stale binding cannot exist (ranvier-wire §5.2)", b.p.Addr(), owed(t))
		}
		return
	}
	// A few periods for the node to have acted on the Bind, whatever it
	// made of it.
	n.beatsOrStop(c, mark, fastPeriod, 3, "after the second Bind")
	if tr := ca.Transcript(); tr.Ended {
		t.Failf("in.a was unchanged in the second Bind and its subscription was torn down (ranvier-wire §5.2: an unchanged entry should be a no-op)")
	}
	if again := a.accept(n.ctx, 50*time.Millisecond); again != nil {
		t.Failf("in.a was unchanged in the second Bind and the node dialled %s again", a.p.Addr())
	}
}

func nodeEmptyFrom(t *cases.T) {
	n := launchNode(t, "")
	defer n.close()
	c, _ := n.register()
	a := listenData(n)
	defer a.close()
	mark := n.bind(c, fastPeriod, binding("in", "later.stream", ""))
	// Alive on the period shows the node took the Bind up with the port
	// up rather than refusing it.
	n.beatsOrStop(c, mark, fastPeriod, 3, "after a Bind whose binding has an empty from")
	if n.trapDialled() {
		t.Failf("the node dialled %s, the address in RANVIER_BINDINGS, while holding a binding with an empty from", n.trap.Addr())
	}
	// The address arrives in a fresh Bind: the port that was up is dialled.
	n.bind(c, fastPeriod, binding("in", "later.stream", a.p.Addr()))
	a.expectDial(n, "later.stream", "a fresh Bind carried the address its empty from was waiting for")
}

func nodeNoWaitForSecondBind(t *cases.T) {
	n := launchNode(t, "")
	defer n.close()
	c, _ := n.register()
	a := listenData(n)
	defer a.close()
	// conform says nothing for the five-second timeout and a margin: the
	// node must beat on, on the period, with its connection open.
	mark := n.bind(c, fastPeriod, binding("in", "later.stream", ""))
	count := int((notComing+slack(fastPeriod))/fastPeriod) + 1
	n.beatsOrStop(c, mark, fastPeriod, count, fmt.Sprintf("across the %v after a Bind with an empty from (ranvier-wire §5.2's five-second timeout)", notComing))
	n.bind(c, fastPeriod, binding("in", "later.stream", a.p.Addr()))
	a.expectDial(n, "later.stream", fmt.Sprintf("a Bind carrying the address arrived %v after the Bind with the empty from", notComing))
}

func nodeIgnoresBindingsEnv(t *cases.T) {
	n := launchNode(t, "")
	defer n.close()
	c, _ := n.register()
	n.beatsOrStop(c, n.bind(c, fastPeriod), fastPeriod, 2, "after an empty Bind")
	if n.trapDialled() {
		t.Fail(reports.Evidence{Message: "the node dialled the address named in RANVIER_BINDINGS (ranvier-wire §3.2: RANVIER_BINDINGS MUST NOT be used)",
			Input: "RANVIER_BINDINGS=" + n.rt.Getenv("RANVIER_BINDINGS"), Got: fmt.Sprintf("a connection to %s", n.trap.Addr())})
	}
}

// minHandWatch is the shortest time a node run by hand is watched for an
// exit.
const minHandWatch = time.Second

func nodeRunsByHand(t *cases.T) {
	// Two launches at once: the node with RANVIER_CONTROL set, to learn how
	// long this node takes to start on this machine (until its Register),
	// and the node run by hand, watched for twice that and the slack.
	hand := launch(t, nodeEnv{params: `{"publish":["hand.out"]}`, noControl: true})
	defer hand.close()
	launched := time.Now()
	ref := launchNode(t, "")
	defer ref.close()
	ctx, cancel := contextWithin(t.Context(), launchWait(t))
	c, err := ref.rt.Accept(ctx)
	cancel()
	if err != nil || c == nil {
		t.Skipf("the node launched with RANVIER_CONTROL did not dial within %v, so conform cannot tell how long this node takes to start", launchWait(t))
	}
	startup := time.Since(launched)
	// A node that refuses to run alone exits as it starts, and a loaded
	// machine can delay that exit well past a quick start of its twin: the
	// watch is never shorter than minHandWatch, and it is of the node's own
	// time. Whatever the machine kept the node waiting for a CPU, or conform
	// running late, stretches it (up to launchWait), so that such a node is
	// seen exiting however busy the machine is.
	watch := max(2*startup+slack(startup), minHandWatch)
	end := launched.Add(watch)
	var ex excuse
	for !hand.waitExit(time.Until(end)) {
		if t.Context().Err() != nil {
			return
		}
		ex = hand.excused(launched, time.Now(), nil, false)
		stretched := launched.Add(min(watch+ex.total(), launchWait(t)))
		if !stretched.After(end) {
			return // the node still runs, a watch of its own time later
		}
		end = stretched
	}
	_, desc := hand.exitStatus()
	t.Fail(evidence.Named("the node's process", reports.Evidence{Message: "with RANVIER_CONTROL unset the node exited instead of running on its own (ranvier-wire §3.2: there is no control connection and the node is run by hand)",
		Input: "RANVIER_TOKEN, RANVIER_NODE_ID and RANVIER_PARAMS set; RANVIER_CONTROL unset",
		Expected: fmt.Sprintf("still running %v after its launch (at least %v, and twice the %v the same node took to dial when RANVIER_CONTROL was set, and slack; twice the %v conform itself ran late and the %v the node waited for a CPU)",
			(watch + ex.total()).Round(time.Millisecond), minHandWatch, startup.Round(time.Millisecond), ex.harness.Round(time.Millisecond), ex.node.Round(time.Millisecond)),
		Got: desc, Stderr: hand.p.Stderr()}))
}

// waitListening waits for a Listening on c, bounded by owed; nil when none
// came.
func (n *nodeRun) waitListening(c *peer.Conn) *controlpb.Listening {
	ctx, cancel := contextWithin(n.ctx, owed(n.t))
	defer cancel()
	var l *controlpb.Listening
	c.Wait(ctx, func(tr peer.Transcript) bool {
		for _, m := range tr.ControlMessages() {
			if m.Msg.GetListening() != nil {
				l = m.Msg.GetListening()
				return true
			}
		}
		return false
	})
	return l
}

// endpoint returns the address a Listening names for stream, "" when none.
func endpoint(l *controlpb.Listening, stream string) string {
	for _, e := range l.GetEndpoints() {
		if e.GetStreamName() == stream {
			return e.GetAddress()
		}
	}
	return ""
}

// subscribeTo dials the node's publisher at addr as a subscriber of stream
// and returns once an announcement naming stream has arrived, or records
// why it did not and returns nil.
func (n *nodeRun) subscribeTo(addr, stream string) *peer.PeerSubscriber {
	if err := checkLoopback(addr); err != nil {
		n.t.Failf("the node's Listening names %q for %s: %v (ranvier-wire §3.3: on one machine a publisher listens on 127.0.0.1)", addr, stream, err)
		return nil
	}
	ctx, cancel := contextWithin(n.ctx, owed(n.t))
	defer cancel()
	s, err := peer.DialPublisher(ctx, addr, 0, peer.Limits{})
	if err != nil {
		n.t.Failf("the node's Listening names %s for %s and no publisher is up there (ranvier-wire §5.2: Listening is sent once its publishers are up): %v", addr, stream, err)
		return nil
	}
	if err := s.SendRequest(ctx, stream, nil); err != nil {
		s.Close()
		n.t.Failf("the node's publisher at %s closed the connection before conform's Request for %s: %v", addr, stream, err)
		return nil
	}
	tr, err := s.Wait(ctx, func(tr peer.Transcript) bool {
		for _, f := range tr.DataFrames() {
			if f.Msg.GetAnnounce().GetName() == stream {
				return true
			}
		}
		return false
	})
	if err != nil {
		s.Close()
		n.t.Failf("the node's publisher at %s did not announce %s within %v of conform's Request (ranvier-wire §4.2): %s", addr, stream, owed(n.t), describeTranscript(tr))
		return nil
	}
	return s
}

// nodeStream is the stream the node cases ask a node to publish, through
// RANVIER_PARAMS' "publish" list (control.proto).
const nodeStream = "node.out"

func nodeListening(t *cases.T) {
	n := launchNode(t, `{"publish":["`+nodeStream+`"]}`)
	defer n.close()
	c, _ := n.register()
	n.bind(c, fastPeriod)
	l := n.waitListening(c)
	if l == nil {
		t.Skipf("the node sent no Listening within %v of its Bind: conform cannot tell a node that publishes nothing (one that does not read RANVIER_PARAMS' \"publish\" list) from one that leaves Listening out", owed(t))
	}
	addr := endpoint(l, nodeStream)
	if addr == "" {
		t.Skipf("the node's Listening names no %s (%v): it does not read RANVIER_PARAMS' \"publish\" list, so it has no publisher to report", nodeStream, l)
	}
	if s := n.subscribeTo(addr, nodeStream); s != nil {
		s.Close()
	}
}

// unknownFields reports a field of m, at any depth, that its message does
// not declare: what bytes of another message decoded as m carry.
func unknownFields(m protoreflect.Message) bool {
	if len(m.GetUnknown()) > 0 {
		return true
	}
	found := false
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsList() && fd.Message() != nil:
			for i := range v.List().Len() {
				found = found || unknownFields(v.List().Get(i).Message())
			}
		case fd.Message() != nil && !fd.IsMap():
			found = found || unknownFields(v.Message())
		}
		return !found
	})
	return found
}

func nodeControlCarriesNoData(t *cases.T) {
	n := launchNode(t, `{"publish":["`+nodeStream+`"]}`)
	defer n.close()
	c, _ := n.register()
	mark := n.bind(c, fastPeriod)
	// With its data plane serving a subscriber, the node has every reason
	// to send data somewhere: it must be there, never here.
	if l := n.waitListening(c); l != nil && endpoint(l, nodeStream) != "" {
		if s := n.subscribeTo(endpoint(l, nodeStream), nodeStream); s != nil {
			defer s.Close()
		}
	}
	n.beatsOrStop(c, mark, fastPeriod, 3, "after the Bind")
	var bad []string
	for i, m := range n.synced(c).ControlMessages() {
		switch {
		case m.Err != nil:
			bad = append(bad, fmt.Sprintf("frame %d does not decode as a ToRuntime: % x", i+1, clip(m.Payload, 64)))
		case m.Msg.GetMessage() == nil:
			bad = append(bad, fmt.Sprintf("frame %d is a ToRuntime with no variant this contract knows: % x", i+1, clip(m.Payload, 64)))
		case unknownFields(m.Msg.ProtoReflect()):
			bad = append(bad, fmt.Sprintf("frame %d carries fields no control message has, as a data-plane Frame read as a ToRuntime does: % x", i+1, clip(m.Payload, 64)))
		}
	}
	if len(bad) > 0 {
		t.Fail(evidence.Named("ToRuntime.message", reports.Evidence{Message: "the node sent on its control connection something that is not a control message (ranvier-wire §3.1: data never travels on the control connection)",
			Expected: "Register, Listening, Alive or Stopping only", Got: fmt.Sprint(bad)}))
	}
}

func nodeAliveOnPeriod(t *cases.T) {
	n := launchNode(t, "")
	defer n.close()
	c, _ := n.register()
	n.beats(c, n.bind(c, fastPeriod), fastPeriod, beatCount, fmt.Sprintf("after a Bind naming %v", fastPeriod))
}

func nodeAliveDefault(t *cases.T) {
	n := launchNode(t, "")
	defer n.close()
	c, _ := n.register()
	n.beats(c, n.bind(c, 0), reflive.DefaultHeartbeat, 2, "after a Bind naming 0 (the 2 s default)")
}

func nodeShorterPeriod(t *cases.T) {
	n := launchNode(t, "")
	defer n.close()
	c, _ := n.register()
	n.beatsOrStop(c, n.bind(c, slowPeriod), slowPeriod, 1, fmt.Sprintf("after a Bind naming %v", slowPeriod))
	n.beats(c, n.bind(c, fastPeriod), fastPeriod, beatCount, fmt.Sprintf("after a Bind shortened the period from %v to %v", slowPeriod, fastPeriod))
}

func aliveSequences(ms []peer.ControlMessage) []uint64 {
	var out []uint64
	for _, m := range ms {
		out = append(out, m.Msg.GetAlive().GetSequence())
	}
	return out
}

func nodeAliveSequenceAdvances(t *cases.T) {
	n := launchNode(t, "")
	defer n.close()
	c, _ := n.register()
	got := aliveSequences(n.beatsOrStop(c, n.bind(c, fastPeriod), fastPeriod, beatCount, "after the Bind"))
	if slices.Min(got) == slices.Max(got) {
		t.Fail(evidence.Named("Alive.sequence", reports.Evidence{Message: fmt.Sprintf("%d Alive on one connection all carried sequence %d: the node does not send the field's count (ranvier-wire §5.2: a node MUST send the field; only the first Alive may carry 0, which proto3 leaves out)", len(got), got[0]),
			Expected: "a sequence that advances", Got: fmt.Sprint(got)}))
	}
}

func nodeAliveSequenceSteps(t *cases.T) {
	n := launchNode(t, "")
	defer n.close()
	c, _ := n.register()
	got := aliveSequences(n.beatsOrStop(c, n.bind(c, fastPeriod), fastPeriod, beatCount, "after the Bind"))
	for i := 1; i < len(got); i++ {
		if got[i] != got[i-1]+1 {
			t.Fail(evidence.Named("Alive.sequence", reports.Evidence{Message: "Alive.sequence did not step by one (reconstructed§ranvier-alive-sequence#1: it counts the Alive sent on a connection)",
				Expected: fmt.Sprint(got[i-1] + 1), Got: fmt.Sprintf("%d after %d (all: %v)", got[i], got[i-1], got)}))
			return
		}
	}
}

// aliveFields returns the field numbers inside the Alive submessage of a
// ToRuntime payload.
func aliveFields(payload []byte) []protowire.Number {
	var out []protowire.Number
	for len(payload) > 0 {
		num, typ, n := protowire.ConsumeTag(payload)
		if n < 0 {
			return out
		}
		m := protowire.ConsumeFieldValue(num, typ, payload[n:])
		if m < 0 {
			return out
		}
		if num == 3 && typ == protowire.BytesType {
			inner, _ := protowire.ConsumeBytes(payload[n:])
			for len(inner) > 0 {
				f, ft, k := protowire.ConsumeTag(inner)
				if k < 0 {
					break
				}
				v := protowire.ConsumeFieldValue(f, ft, inner[k:])
				if v < 0 {
					break
				}
				out = append(out, f)
				inner = inner[k+v:]
			}
		}
		payload = payload[n+m:]
	}
	return out
}

func nodeAliveCarriesOnlySequence(t *cases.T) {
	n := launchNode(t, "")
	defer n.close()
	c, _ := n.register()
	for i, a := range n.beatsOrStop(c, n.bind(c, fastPeriod), fastPeriod, 3, "after the Bind") {
		for _, f := range aliveFields(a.Payload) {
			if f != 1 {
				t.Fail(evidence.Named("Alive (its fields)", reports.Evidence{Message: fmt.Sprintf("Alive #%d carries field %d beside its sequence (ranvier-wire §5.2: Alive carries its sequence number and nothing else)", i+1, f),
					Expected: "Alive{sequence} only", Got: fmt.Sprintf("% x", a.Payload)}))
				return
			}
		}
	}
}

func nodeStop(t *cases.T) {
	n := launchNode(t, "")
	defer n.close()
	c, _ := n.register()
	n.beatsOrStop(c, n.bind(c, fastPeriod), fastPeriod, 1, "after the Bind")
	mark := c.Mark("stop")
	if !n.send(c, peer.Stop(millis(stopDeadline))) {
		return
	}
	limit := stopDeadline + slack(stopDeadline)
	waits := n.waits()
	exited := n.waitExit(limit)
	if !exited {
		// Excuse the node what the machine made it, and conform, wait.
		if ex := n.excused(mark.At, time.Now(), waits, true); ex.total() > 0 {
			exited = n.waitExit(time.Until(mark.At.Add(limit + ex.total())))
		}
	}
	// The node's end of the connection closed when it exited: everything
	// it sent is read by then.
	ctx, cancel := contextWithin(n.ctx, owed(t))
	defer cancel()
	if exited {
		c.WaitEnded(ctx)
	}
	stopping := false
	for _, m := range messagesSince(c, mark.Frames) {
		stopping = stopping || m.Msg.GetStopping() != nil
	}
	if !stopping {
		t.Failf("the node sent no Stopping after Stop (ranvier-wire §5.2)")
	}
	if !exited {
		t.Failf("the node did not exit within Stop.deadline_ms (%v) of Stop, and %v of slack (ranvier-wire §5.2)", stopDeadline, slack(stopDeadline))
		return
	}
	_, desc := n.exitStatus()
	t.Note("after Stop the node exited: %s", desc)
}

// keptBeats is how many heartbeat periods a node must go on beating after
// conform wrote it something it must not act on. A node that does act on
// it (stops beating on a Transport it did not accept) acts only once it
// has read the message, and on a loaded machine the Alives already due
// before then still come: three periods once passed such a node. Ten, a
// second at fastPeriod, are more than any delay a loaded series has shown.
const keptBeats = 10

// stillInSession checks, after conform wrote the node something it must
// not act on, that the node kept the connection, kept beating, and still
// applies a Bind: it dials the address a fresh Bind names.
func stillInSession(n *nodeRun, c *peer.Conn, what string) {
	written := c.Mark("written: " + what)
	if _, ok := n.beats(c, written, fastPeriod, keptBeats, "after "+what); !ok {
		return
	}
	a := listenData(n)
	defer a.close()
	n.bind(c, fastPeriod, binding("in", "after.stream", a.p.Addr()))
	a.expectDial(n, "after.stream", "a Bind sent after "+what+" was not applied")
}

func nodeTransportIgnored(t *cases.T) {
	n := launchNode(t, "")
	defer n.close()
	c, reg := n.register()
	if reg.GetAcceptsTransport() {
		t.Skipf("the node set accepts_transport, so the rule for a node that did not is not exercised")
	}
	n.beatsOrStop(c, n.bind(c, fastPeriod), fastPeriod, 1, "after the Bind")
	mark := c.Mark("transport")
	if !n.send(c, peer.Transport(controlpb.TransportAction_TRANSPORT_ACTION_PAUSE)) {
		return
	}
	stillInSession(n, c, "a Transport{pause} it did not accept")
	for _, m := range messagesSince(c, mark.Frames) {
		if m.Msg.GetStopping() != nil {
			t.Failf("the node answered a Transport it did not accept with Stopping")
		}
	}
}

func nodeEmptyMessage(t *cases.T) {
	n := launchNode(t, "")
	defer n.close()
	c, _ := n.register()
	n.beatsOrStop(c, n.bind(c, fastPeriod), fastPeriod, 1, "after the Bind")
	c.Mark("empty")
	// 00 00 00 00, then ToNode with only a field 9 varint: a variant this
	// contract does not define (§7.3).
	if !n.send(c, peer.EmptyFrame(), peer.RawFrame([]byte{0x48, 0x01})) {
		return
	}
	stillInSession(n, c, "an empty ToNode and a ToNode with an unknown variant")
}

func nodeUndecodable(t *cases.T) {
	n := launchNode(t, "")
	defer n.close()
	c, _ := n.register()
	n.beatsOrStop(c, n.bind(c, fastPeriod), fastPeriod, 1, "after the Bind")
	c.Mark("garbage")
	if !n.send(c, peer.Garbage()) {
		return
	}
	stillInSession(n, c, "a well-framed payload that is not a ToNode")
}

func nodeFramingError(t *cases.T) {
	n := launchNode(t, "")
	defer n.close()
	c, _ := n.register()
	a := listenData(n)
	defer a.close()
	n.beatsOrStop(c, n.bind(c, fastPeriod), fastPeriod, 1, "after the Bind")
	// The bad prefix, then a well-formed Bind a resynchronising node would
	// find and apply.
	mark := c.Mark("framing-error")
	waits := n.waits()
	behind := peer.Bind(millis(fastPeriod), binding("in", "behind.stream", a.p.Addr()))
	if err := c.Pace(n.ctx, owed(t), peer.Coalesced(), peer.TooLargePrefix(), behind); err != nil {
		t.Note("the node's end of the connection was gone while conform wrote the bad prefix: %v", err)
	}
	ctx, cancel := contextWithin(n.ctx, owed(t))
	tr, err := c.WaitEnded(ctx)
	cancel()
	if err != nil {
		// Open still: a node that took the connection as lost and keeps the
		// socket has at least stopped beating on it.
		limit := fastPeriod + slack(fastPeriod) + n.meter.late(n.ctx, mark.At, time.Now()) + proc.MostWaited(waits, n.waits())
		for _, m := range alives(messagesSince(c, mark.Frames)) {
			if m.At.Sub(mark.At) > limit {
				t.Fail(evidence.Named("the control connection after the too-large prefix", reports.Evidence{Message: "after a prefix claiming 16,777,217 bytes the node went on using the control connection (ranvier-wire §6.2: a node treats a framing error as the connection lost)",
					Input: "01 00 00 01, then a Bind", Expected: "the connection closed, or no Alive on it after the bad prefix",
					Got: fmt.Sprintf("an Alive %v after the bad prefix; %s", m.At.Sub(mark.At).Round(time.Millisecond), describeTranscript(tr))}))
				break
			}
		}
	}
	if c := a.accept(n.ctx, 50*time.Millisecond); c != nil {
		t.Fail(evidence.Named("the binding after the too-large prefix", reports.Evidence{Message: "the node applied a Bind that followed a prefix claiming 16,777,217 bytes: it resynchronised (ranvier-wire §6.2)",
			Input: "01 00 00 01, then a Bind binding behind.stream", Expected: "the binding never dialled", Got: fmt.Sprintf("a dial to %s", a.p.Addr())}))
	}
	// A node that redials after the loss opens the new connection with
	// Register, as after any other loss.
	if again := n.accept(3*fastPeriod + slack(fastPeriod)); again != nil {
		n.firstRegister(again)
	}
}

func nodeAliveBeforeBind(t *cases.T) {
	n := launchNode(t, "")
	defer n.close()
	c, _ := n.register()
	// Long enough for a node beating on its default period before any Bind
	// to show one.
	wait := reflive.DefaultHeartbeat + slack(reflive.DefaultHeartbeat)
	idle(t, wait)
	got := n.synced(c).ControlMessages()[1:]
	beats := len(alives(got))
	if beats == 0 {
		t.Note("with no Bind for %v after its Register the node sent no Alive (and %d other messages)", wait, len(got))
		return
	}
	t.Note("with no Bind for %v after its Register the node sent %d Alive, the first %v after the Register (and %d other messages)",
		wait, beats, alives(got)[0].At.Sub(c.Transcript().Frames[0].At).Round(time.Millisecond), len(got)-beats)
}

func nodeRedial(t *cases.T) {
	n := launchNode(t, `{"publish":["`+nodeStream+`"]}`)
	defer n.close()
	again, listening := dropAndRedial(n)
	if again == nil {
		t.Note("the node did not redial within %v of the dropped connection: it did not take the MAY", owed(t))
		return
	}
	ctx, cancel := contextWithin(n.ctx, owed(t))
	defer cancel()
	again, tr, _, err := n.speaking(ctx, again)
	if err != nil || tr.ControlMessages()[0].Msg.GetRegister() == nil {
		t.Note("the node redialled; its first frame on the new connection was not a Register (live/5.2/node-redial-registers-first judges that)")
		return
	}
	if listening == nil || endpoint(listening, nodeStream) == "" {
		t.Note("the node redialled and registered; it sent no Listening naming %s on the first connection, so there was none to re-send (it does not read RANVIER_PARAMS' \"publish\" list)", nodeStream)
		return
	}
	n.bind(again, fastPeriod)
	if l := n.waitListening(again); l == nil {
		t.Note("the node redialled and registered, and did not re-send its Listening within %v of the new Bind", owed(t))
		return
	}
	t.Note("the node redialled, registered first, and re-sent its Listening naming %s", nodeStream)
}
