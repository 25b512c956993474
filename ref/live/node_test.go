package live_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/conform-suite/conform/live/peer"
	controlpb "github.com/conform-suite/conform/proto/ranvier/control/v1"
	"github.com/conform-suite/conform/ref/live"
)

// The heartbeat periods the node tests use: short, so the tests are fast,
// and judged with a generous tolerance, never exactly.
const (
	period    = 40 * time.Millisecond
	tolerance = 500 * time.Millisecond
)

type runningNode struct {
	node   *live.Node
	done   chan error
	mu     sync.Mutex
	events []live.NodeEvent
}

func (r *runningNode) saw(k live.NodeEventKind) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range r.events {
		if e.Kind == k {
			return true
		}
	}
	return false
}

// startNode launches a reference node with the environment rt produces.
func startNode(t *testing.T, ctx context.Context, rt *peer.Runtime, edit func(*live.NodeConfig)) *runningNode {
	t.Helper()
	cfg, err := live.NodeConfigFromEnv(rt.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Heartbeat = period
	r := &runningNode{done: make(chan error, 1)}
	cfg.Events = func(e live.NodeEvent) {
		r.mu.Lock()
		r.events = append(r.events, e)
		r.mu.Unlock()
	}
	if edit != nil {
		edit(&cfg)
	}
	n, err := live.NewNode(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	r.node = n
	runCtx, cancel := context.WithCancel(ctx)
	go func() { r.done <- n.Run(runCtx) }()
	t.Cleanup(func() {
		cancel()
		<-r.done
	})
	return r
}

func newRuntime(t *testing.T, ctx context.Context, cfg peer.RuntimeConfig) *peer.Runtime {
	t.Helper()
	rt, err := peer.ListenRuntime(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	return rt
}

func kinds(ms []peer.ControlMessage) (register, alive, stopping, listening []peer.ControlMessage) {
	for _, m := range ms {
		switch {
		case m.Msg.GetRegister() != nil:
			register = append(register, m)
		case m.Msg.GetAlive() != nil:
			alive = append(alive, m)
		case m.Msg.GetStopping() != nil:
			stopping = append(stopping, m)
		case m.Msg.GetListening() != nil:
			listening = append(listening, m)
		}
	}
	return
}

func waitAlive(t *testing.T, ctx context.Context, c *peer.Conn, n int) []peer.ControlMessage {
	t.Helper()
	tr, err := c.Wait(ctx, func(tr peer.Transcript) bool {
		_, alive, _, _ := kinds(tr.ControlMessages())
		return len(alive) >= n
	})
	if err != nil {
		t.Fatal(err)
	}
	_, alive, _, _ := kinds(tr.ControlMessages())
	return alive
}

// checkAlive judges a run of Alive messages: sequences step by one from
// first, and none is later than the period plus the tolerance after the one
// before it (or after from).
func checkAlive(t *testing.T, alive []peer.ControlMessage, first uint64, from time.Time, p time.Duration) {
	t.Helper()
	prev := from
	for i, a := range alive {
		if got := a.Msg.GetAlive().GetSequence(); got != first+uint64(i) {
			t.Errorf("alive %d: sequence %d, want %d", i, got, first+uint64(i))
		}
		if gap := a.At.Sub(prev); gap > p+tolerance {
			t.Errorf("alive %d arrived %v after the previous, period %v", i, gap, p)
		}
		prev = a.At
	}
}

func TestNodeConversation(t *testing.T) {
	ctx := testCtx(t)
	rt := newRuntime(t, ctx, peer.RuntimeConfig{
		NodeID:   "n1",
		ExtraEnv: map[string]string{"RANVIER_BINDINGS": `[{"port":"decoy"}]`},
	})
	pp, err := peer.ListenPublisher(ctx, peer.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	defer pp.Close()
	rn := startNode(t, ctx, rt, nil)

	c, err := rt.Accept(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := c.WaitFrames(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	reg := tr.ControlMessages()[0].Msg.GetRegister()
	if reg == nil || reg.GetProtocol() != 1 || reg.GetNodeId() != "n1" || reg.GetToken() != rt.Token() {
		t.Fatalf("first message = %v, want Register{1, n1, token}", tr.ControlMessages()[0].Msg)
	}
	// No Alive before the first Bind (a choice; see the package doc).
	if tr, _ := c.Idle(ctx, 3*period); tr.FrameCount != 1 {
		t.Errorf("%d frames before any Bind, want only Register", tr.FrameCount)
	}

	bindAt := time.Now()
	if err := c.Send(ctx, peer.Bind(uint32(period/time.Millisecond),
		&controlpb.BindingInfo{Port: "waiting", StreamName: "x"},
		&controlpb.BindingInfo{Port: "in", StreamName: "y", From: pp.Addr()},
	)); err != nil {
		t.Fatal(err)
	}
	alive := waitAlive(t, ctx, c, 5)
	checkAlive(t, alive[:5], 0, bindAt, period)

	// The bound input is dialled with its Request; the one with no from is
	// up and not dialled.
	sc, err := pp.Accept(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rc, err := sc.WaitRequest(ctx); err != nil || rc.Request.GetStreamName() != "y" {
		t.Fatalf("node's data-plane request = %+v, %v", rc, err)
	}
	bs := rn.node.Bindings()
	if len(bs) != 2 || bs[1].Port != "waiting" || bs[1].Dialled || !bs[0].Dialled {
		t.Fatalf("bindings = %+v", bs)
	}
	var conn = bs[0].Conn
	for conn == 0 { // the dial goroutine records the connection
		time.Sleep(time.Millisecond)
		conn = rn.node.Bindings()[0].Conn
	}

	// A shorter period applies at once, and an unchanged entry is not torn
	// down.
	short := 15 * time.Millisecond
	before := len(waitAlive(t, ctx, c, 0))
	rebindAt := time.Now()
	c.Send(ctx, peer.Bind(uint32(short/time.Millisecond),
		&controlpb.BindingInfo{Port: "in", StreamName: "y", From: pp.Addr()},
	))
	alive = waitAlive(t, ctx, c, before+6)
	checkAlive(t, alive[before:before+6], uint64(before), rebindAt, short)
	bs = rn.node.Bindings()
	if len(bs) != 1 || bs[0].Conn != conn {
		t.Errorf("after rebind: %+v, want port in alone on connection %d", bs, conn)
	}
	if tr := sc.Transcript(); tr.Ended {
		t.Error("an unchanged binding's subscription was torn down")
	}

	// Garbage, an empty ToNode, an unknown variant and a Transport the node
	// did not accept are all ignored; the heartbeat continues.
	unknown := peer.RawFrame([]byte{0x4a, 0x00}) // field 9, empty
	c.Send(ctx, peer.Garbage(), peer.EmptyFrame(), unknown,
		peer.Transport(controlpb.TransportAction_TRANSPORT_ACTION_PAUSE))
	for !rn.saw(live.EventTransportIgnored) {
		if ctx.Err() != nil {
			t.Fatal("the Transport was never reported ignored")
		}
		time.Sleep(time.Millisecond)
	}
	if rn.node.Paused() {
		t.Error("a Transport without accepts_transport was applied")
	}
	n := len(waitAlive(t, ctx, c, 0))
	waitAlive(t, ctx, c, n+3)

	// Stop: Stopping, then Run returns within the deadline.
	stopAt := time.Now()
	c.Send(ctx, peer.Stop(1000))
	select {
	case err := <-rn.done:
		rn.done <- err // for the cleanup
		if err != nil {
			t.Fatalf("Run after Stop = %v, want nil", err)
		}
	case <-time.After(time.Second + tolerance):
		t.Fatal("the node did not return within the Stop deadline")
	}
	if d := time.Since(stopAt); d > time.Second {
		t.Errorf("node took %v to stop", d)
	}
	tr, err = c.WaitEnded(ctx)
	if err != nil {
		t.Fatal(err)
	}
	register, _, stopping, _ := kinds(tr.ControlMessages())
	if len(register) != 1 || len(stopping) != 1 {
		t.Errorf("%d Register and %d Stopping, want one each", len(register), len(stopping))
	}
}

func TestNodeRefusedDoesNotRedial(t *testing.T) {
	ctx := testCtx(t)
	rt := newRuntime(t, ctx, peer.RuntimeConfig{})
	rn := startNode(t, ctx, rt, nil)
	c, err := rt.Accept(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c.WaitFrames(ctx, 1)
	c.Send(ctx, peer.Refuse(controlpb.RefuseReason_REFUSE_REASON_TOKEN, "bad token"))
	c.CloseWrite()
	err = <-rn.done
	rn.done <- err
	var refused *live.RefusedError
	if !errors.As(err, &refused) || refused.Reason != controlpb.RefuseReason_REFUSE_REASON_TOKEN {
		t.Fatalf("Run = %v, want a refusal for the token", err)
	}
	actx, cancel := context.WithTimeout(ctx, 5*period)
	defer cancel()
	if _, err := rt.Accept(actx); err == nil {
		t.Error("the node redialled after a refusal")
	}
}

func TestNodeRedialsAfterAFramingError(t *testing.T) {
	ctx := testCtx(t)
	rt := newRuntime(t, ctx, peer.RuntimeConfig{})
	rn := startNode(t, ctx, rt, func(cfg *live.NodeConfig) { cfg.Publish = []string{"out"} })
	c1, err := rt.Accept(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c1.WaitFrames(ctx, 1)
	c1.Send(ctx, peer.Bind(uint32(period/time.Millisecond)))
	tr, err := c1.Wait(ctx, func(tr peer.Transcript) bool {
		_, alive, _, listening := kinds(tr.ControlMessages())
		return len(alive) >= 2 && len(listening) == 1
	})
	if err != nil {
		t.Fatal(err)
	}
	_, _, _, listening := kinds(tr.ControlMessages())
	ep := listening[0].Msg.GetListening().GetEndpoints()
	if len(ep) != 1 || ep[0].GetStreamName() != "out" || ep[0].GetAddress() != rn.node.Publisher().Addr() {
		t.Errorf("Listening = %v", ep)
	}

	// A prefix above the ceiling is a lost connection (§6.2): the node
	// closes and redials on the heartbeat period.
	c1.Send(ctx, peer.TooLargePrefix())
	if _, err := c1.WaitEnded(ctx); err != nil {
		t.Fatal(err)
	}
	c2, err := rt.Accept(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tr, err = c2.WaitFrames(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if tr.ControlMessages()[0].Msg.GetRegister() == nil {
		t.Fatalf("first message after redial = %v, want Register", tr.ControlMessages()[0].Msg)
	}
	c2.Send(ctx, peer.Bind(0)) // 0: the default period
	tr, err = c2.Wait(ctx, func(tr peer.Transcript) bool {
		_, alive, _, listening := kinds(tr.ControlMessages())
		return len(alive) >= 1 && len(listening) == 1
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, alive, _, _ := kinds(tr.ControlMessages()); alive[0].Msg.GetAlive().GetSequence() != 0 {
		t.Error("the Alive sequence did not restart on the new connection")
	}

	// The runtime closing the connection is a loss too.
	c2.Close()
	c3, err := rt.Accept(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c3.WaitFrames(ctx, 1); err != nil {
		t.Fatal(err)
	}
}

func TestNodeAcceptsTransportWhenDeclared(t *testing.T) {
	ctx := testCtx(t)
	rt := newRuntime(t, ctx, peer.RuntimeConfig{Params: `{"accepts_transport": true}`})
	rn := startNode(t, ctx, rt, nil)
	c, err := rt.Accept(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tr, _ := c.WaitFrames(ctx, 1)
	if !tr.ControlMessages()[0].Msg.GetRegister().GetAcceptsTransport() {
		t.Fatal("Register did not declare accepts_transport")
	}
	c.Send(ctx, peer.Bind(uint32(period/time.Millisecond)), peer.Transport(controlpb.TransportAction_TRANSPORT_ACTION_PAUSE))
	for !rn.node.Paused() {
		if ctx.Err() != nil {
			t.Fatal("an accepted Transport was not applied")
		}
		time.Sleep(time.Millisecond)
	}
}

func TestNodeConfigFromEnv(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	if cfg, err := live.NodeConfigFromEnv(env(nil)); err != nil || cfg.Control != "" {
		t.Errorf("no RANVIER_CONTROL: %+v, %v; want a node run by hand", cfg, err)
	}
	if _, err := live.NodeConfigFromEnv(env(map[string]string{"RANVIER_CONTROL": "x:1", "RANVIER_PARAMS": "[1]"})); err == nil {
		t.Error("a RANVIER_PARAMS that is not an object was accepted")
	}
	cfg, err := live.NodeConfigFromEnv(env(map[string]string{
		"RANVIER_CONTROL": "127.0.0.1:9", "RANVIER_TOKEN": "t", "RANVIER_NODE_ID": "n",
		"RANVIER_PARAMS": `{"publish":["a","b"],"other":1}`, "RANVIER_BINDINGS": "ignored",
	}))
	if err != nil || cfg.Control != "127.0.0.1:9" || cfg.Token != "t" || cfg.NodeID != "n" || len(cfg.Publish) != 2 || len(cfg.Params) != 2 {
		t.Errorf("config = %+v, %v", cfg, err)
	}
}

// TestNodeRunByHand: with RANVIER_CONTROL unset a node makes no control
// connection and runs on its own (ranvier-wire §3.2): its publisher serves
// until its context ends, and it ends without an error.
func TestNodeRunByHand(t *testing.T) {
	cfg, err := live.NodeConfigFromEnv(func(k string) string {
		return map[string]string{"RANVIER_TOKEN": "t", "RANVIER_NODE_ID": "n", "RANVIER_PARAMS": `{"publish":["x.out"]}`}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	n, err := live.NewNode(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- n.Run(ctx) }()
	sub := live.NewSubscriber(live.SubscriberConfig{})
	defer sub.Close()
	if _, err := sub.Subscribe(ctx, n.Publisher().Addr(), "x.out"); err != nil {
		t.Fatalf("the node run by hand does not serve its stream: %v", err)
	}
	if _, err := sub.Wait(ctx, func(r live.Report) bool { return len(r.Conns) == 1 && len(r.Conns[0].Announcements) == 1 }); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		t.Fatalf("the node run by hand ended on its own: %v", err)
	default:
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("the node run by hand ended with %v, want nil", err)
	}
}
