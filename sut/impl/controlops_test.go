package impl

import (
	"context"
	"net"
	"slices"
	"testing"
	"time"

	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	controlpb "github.com/conform-suite/conform/proto/ranvier/control/v1"
	"github.com/conform-suite/conform/ref/wire"
	"google.golang.org/protobuf/proto"
)

func controlOp(t *testing.T, im *Impl, op *conformpb.ControlOp) *conformpb.ControlResult {
	t.Helper()
	resp := im.Handle(context.Background(), &conformpb.Request{Op: &conformpb.Request_Control{Control: op}})
	if resp.GetControl() == nil {
		t.Fatalf("control op %v answered %v", op, resp)
	}
	return resp.GetControl()
}

// TestRuntimeOps starts a runtime over conform.v1, registers a node with it
// on a real socket, reads the report and stops it.
func TestRuntimeOps(t *testing.T) {
	im := reference(Handler(Control))
	if !slices.Contains(im.Profiles, "ranvier-runtime") || slices.Contains(im.Profiles, "ranvier-node") {
		t.Errorf("profiles %v: want ranvier-runtime, and ranvier-node only with a node command", im.Profiles)
	}
	started := controlOp(t, im, &conformpb.ControlOp{Op: &conformpb.ControlOp_StartRuntime{StartRuntime: &conformpb.StartRuntime{
		Token: "tok", HeartbeatPeriodMs: 1000, Nodes: []*conformpb.GraphNode{{NodeId: "n"}},
	}}}).GetRuntimeStarted()
	nc, err := net.Dial("tcp", started.GetAddress())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	p, _ := proto.Marshal(&controlpb.ToRuntime{Message: &controlpb.ToRuntime_Register{Register: &controlpb.Register{Protocol: 1, NodeId: "n", Token: "tok"}}})
	if err := wire.WriteFrame(context.Background(), nc, p); err != nil {
		t.Fatal(err)
	}
	nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	var rd wire.Reader
	buf := make([]byte, 512)
	for {
		k, err := nc.Read(buf)
		rd.Write(buf[:k])
		if payload, ok, _ := rd.Next(); ok {
			m := new(controlpb.ToNode)
			if err := proto.Unmarshal(payload, m); err != nil || m.GetBind().GetHeartbeatPeriodMs() != 1000 {
				t.Fatalf("got %v (%v), want a Bind naming 1000 ms", m, err)
			}
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	rep := controlOp(t, im, &conformpb.ControlOp{Op: &conformpb.ControlOp_RuntimeReport{RuntimeReport: &conformpb.RuntimeReportOp{Runtime: started.GetRuntime()}}}).GetRuntimeReport()
	if !slices.Equal(rep.GetRegistered(), []string{"n"}) {
		t.Errorf("registered %v, want [n]", rep.GetRegistered())
	}
	controlOp(t, im, &conformpb.ControlOp{Op: &conformpb.ControlOp_StopRuntime{StopRuntime: &conformpb.StopRuntime{Runtime: started.GetRuntime()}}})
	resp := im.Handle(context.Background(), &conformpb.Request{Op: &conformpb.Request_Control{Control: &conformpb.ControlOp{Op: &conformpb.ControlOp_StopRuntime{StopRuntime: &conformpb.StopRuntime{Runtime: started.GetRuntime()}}}}})
	if resp.GetError() == nil {
		t.Errorf("stopping a stopped runtime answered %v, want an Error", resp)
	}
	im.SetNodeCommand([]string{"conform", "reference", "node"})
	if h := im.Hello(); !slices.Contains(h.GetProfiles(), "ranvier-node") || len(h.GetNodeCommand()) != 3 {
		t.Errorf("Hello %v: want ranvier-node declared with the node command", h)
	}
}
