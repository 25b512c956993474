package live

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/conform-suite/conform/internal/hang"
	controlpb "github.com/conform-suite/conform/proto/ranvier/control/v1"
	"github.com/conform-suite/conform/ref/wire"
	"google.golang.org/protobuf/proto"
)

// rtNode is a test's hand-driven node connection.
type rtNode struct {
	t  *testing.T
	nc net.Conn
	rd wire.Reader
}

func dialRuntime(t *testing.T, r *Runtime) *rtNode {
	t.Helper()
	nc, err := net.Dial("tcp", r.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	return &rtNode{t: t, nc: nc}
}

func (n *rtNode) send(m *controlpb.ToRuntime) {
	n.t.Helper()
	p, err := proto.Marshal(m)
	if err != nil {
		n.t.Fatal(err)
	}
	if err := wire.WriteFrame(context.Background(), n.nc, p); err != nil {
		n.t.Fatal(err)
	}
}

// next returns the next ToNode, or nil when the connection ended.
func (n *rtNode) next() *controlpb.ToNode {
	n.t.Helper()
	n.nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 4096)
	for {
		if p, ok, err := n.rd.Next(); err != nil {
			n.t.Fatal(err)
		} else if ok {
			m := new(controlpb.ToNode)
			if err := proto.Unmarshal(p, m); err != nil {
				n.t.Fatal(err)
			}
			return m
		}
		k, err := n.nc.Read(buf)
		n.rd.Write(buf[:k])
		if err != nil && k == 0 {
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				n.t.Fatal("no message within 5 s")
			}
			return nil
		}
	}
}

func register(protocol uint32, node, token string) *controlpb.ToRuntime {
	return &controlpb.ToRuntime{Message: &controlpb.ToRuntime_Register{Register: &controlpb.Register{Protocol: protocol, NodeId: node, Token: token}}}
}

func alive(seq uint64) *controlpb.ToRuntime {
	return &controlpb.ToRuntime{Message: &controlpb.ToRuntime_Alive{Alive: &controlpb.Alive{Sequence: seq}}}
}

func startRuntime(t *testing.T, period time.Duration) *Runtime {
	t.Helper()
	r, err := ListenRuntime(context.Background(), RuntimeConfig{
		Token: "tok", Heartbeat: period,
		Nodes: []GraphNode{
			{ID: "a", Ports: []string{"in"}, DeclaredPorts: []string{"in"}, Inputs: []GraphInput{{Port: "in", StreamName: "x"}}},
			{ID: "b"},
			{ID: "drifted", Ports: []string{"in"}, DeclaredPorts: []string{"in", "extra"}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

func TestRuntimeRefusesForEachReason(t *testing.T) {
	r := startRuntime(t, time.Second)
	held := dialRuntime(t, r)
	held.send(register(Protocol, "b", "tok"))
	if m := held.next(); m.GetBind() == nil {
		t.Fatalf("b: got %v, want a Bind", m)
	}
	for _, tc := range []struct {
		name     string
		protocol uint32
		node     string
		token    string
		want     controlpb.RefuseReason
	}{
		{"protocol", 2, "a", "tok", controlpb.RefuseReason_REFUSE_REASON_PROTOCOL},
		{"token", Protocol, "a", "wrong", controlpb.RefuseReason_REFUSE_REASON_TOKEN},
		{"unknown node", Protocol, "zz", "tok", controlpb.RefuseReason_REFUSE_REASON_UNKNOWN_NODE},
		{"port drift", Protocol, "drifted", "tok", controlpb.RefuseReason_REFUSE_REASON_PORT_DRIFT},
		{"already registered", Protocol, "b", "tok", controlpb.RefuseReason_REFUSE_REASON_ALREADY_REGISTERED},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := dialRuntime(t, r)
			n.send(register(tc.protocol, tc.node, tc.token))
			m := n.next()
			if got := m.GetRefuse().GetReason(); got != tc.want {
				t.Fatalf("got %v, want Refuse %v", m, tc.want)
			}
			if m := n.next(); m != nil {
				t.Fatalf("after the Refuse: got %v, want the connection closed", m)
			}
		})
	}
	if got := r.Report(); got.Refusals != 5 || len(got.Registered) != 1 {
		t.Errorf("report %+v, want 5 refusals and b registered", got)
	}
}

func TestRuntimeClosesOnProtocolViolations(t *testing.T) {
	r := startRuntime(t, time.Second)
	first := dialRuntime(t, r)
	first.send(alive(0))
	if m := first.next(); m != nil {
		t.Errorf("Alive first: got %v, want the connection closed", m)
	}
	twice := dialRuntime(t, r)
	twice.send(register(Protocol, "b", "tok"))
	if m := twice.next(); m.GetBind() == nil {
		t.Fatalf("got %v, want a Bind", m)
	}
	twice.send(&controlpb.ToRuntime{}) // §6.4: ignored
	twice.send(register(Protocol, "b", "tok"))
	if m := twice.next(); m != nil {
		t.Errorf("second Register: got %v, want the connection closed", m)
	}
}

func TestRuntimeBindsFromListening(t *testing.T) {
	r := startRuntime(t, time.Second)
	a := dialRuntime(t, r)
	a.send(register(Protocol, "a", "tok"))
	m := a.next()
	if got := m.GetBind().GetBindings(); len(got) != 1 || got[0].GetFrom() != "" || m.GetBind().GetHeartbeatPeriodMs() != 1000 {
		t.Fatalf("first Bind %v, want in←x from empty", m)
	}
	b := dialRuntime(t, r)
	b.send(register(Protocol, "b", "tok"))
	b.next()
	b.send(&controlpb.ToRuntime{Message: &controlpb.ToRuntime_Listening{Listening: &controlpb.Listening{
		Endpoints: []*controlpb.Endpoint{{StreamName: "x", Address: "127.0.0.1:9"}}}}})
	m = a.next()
	if got := m.GetBind().GetBindings(); len(got) != 1 || got[0].GetFrom() != "127.0.0.1:9" {
		t.Fatalf("fresh Bind %v, want in←x from 127.0.0.1:9", m)
	}
}

func TestRuntimeDeclaresSilentNodeGone(t *testing.T) {
	const period = 50 * time.Millisecond
	r := startRuntime(t, period)
	n := dialRuntime(t, r)
	n.send(register(Protocol, "b", "tok"))
	n.next()
	for i := range 4 {
		n.send(alive(uint64(i)))
		time.Sleep(period / 2)
	}
	if g := r.Report().Gone; len(g) != 0 {
		t.Fatalf("gone %v while beating", g)
	}
	deadline := time.Now().Add(hang.Guard(t, 2*time.Second))
	for len(r.Report().Gone) == 0 && time.Now().Before(deadline) {
		time.Sleep(period / 4)
	}
	rep := r.Report()
	if len(rep.Gone) != 1 || len(rep.Registered) != 1 {
		t.Fatalf("report %+v, want b gone and still registered", rep)
	}
	n.send(alive(9))
	time.Sleep(period / 2)
	if g := r.Report().Gone; len(g) != 0 {
		t.Errorf("gone %v after an Alive", g)
	}
}
