package impl

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/ref/live"
)

// ControlParts are the swappable parts of the live Ranvier control-plane
// suite (profiles ranvier-node, ranvier-runtime).
type ControlParts struct {
	// NewRuntime starts a control-plane runtime, as live.ListenRuntime
	// (profile ranvier-runtime, op start_runtime).
	NewRuntime func(ctx context.Context, cfg live.RuntimeConfig) (ControlRuntime, error)
	// RunNode runs a control-plane node configured from getenv until it
	// stops, is refused, or ctx ends (profile ranvier-node: the process the
	// Hello's node_command starts calls it). A non-nil error is an exit
	// non-zero.
	RunNode func(ctx context.Context, getenv func(string) string) error

	// runtimes are the runtimes this session started.
	runtimes *runtimes
}

// ControlRuntime is a running control-plane runtime; *live.Runtime is the
// reference.
type ControlRuntime interface {
	// Addr is the listener, host:port.
	Addr() string
	// Report is what the runtime has concluded so far.
	Report() live.RuntimeReport
	// Close stops the runtime.
	Close() error
}

// maxRuntimes bounds the runtimes one session holds at once, so that a
// harness that never stops them cannot exhaust the SUT's sockets.
const maxRuntimes = 64

type runtimes struct {
	mu   sync.Mutex
	next uint32
	m    map[uint32]ControlRuntime
}

// referenceControl returns the reference's control parts and declares the
// runtime profile. The node profile is declared by SetNodeCommand: conform
// can judge a node only when it knows how to launch one.
func referenceControl(im *Impl) ControlParts {
	im.Profiles = append(im.Profiles, "ranvier-runtime")
	return ControlParts{
		NewRuntime: func(ctx context.Context, cfg live.RuntimeConfig) (ControlRuntime, error) {
			return live.ListenRuntime(ctx, cfg)
		},
		RunNode:  RunReferenceNode,
		runtimes: &runtimes{m: make(map[uint32]ControlRuntime)},
	}
}

// RunReferenceNode runs the reference node (ref/live) configured from the
// RANVIER_* variables getenv reads (ranvier-wire §3.2).
func RunReferenceNode(ctx context.Context, getenv func(string) string) error {
	cfg, err := live.NodeConfigFromEnv(getenv)
	if err != nil {
		return err
	}
	n, err := live.NewNode(ctx, cfg)
	if err != nil {
		return err
	}
	return n.Run(ctx)
}

// SetNodeCommand records argv as the Hello's node_command, the command that
// launches this implementation as a control-plane node, and declares the
// ranvier-node profile.
func (im *Impl) SetNodeCommand(argv []string) {
	im.NodeCommand = slices.Clone(argv)
	if len(argv) > 0 && !slices.Contains(im.Profiles, "ranvier-node") {
		im.Profiles = append(im.Profiles, "ranvier-node")
	}
}

// control answers one control op.
func (im *Impl) control(ctx context.Context, op *conformpb.ControlOp) (*conformpb.ControlResult, error) {
	c := &im.Control
	res := new(conformpb.ControlResult)
	switch op := op.Op.(type) {
	case *conformpb.ControlOp_StartRuntime:
		r, err := c.startRuntime(ctx, op.StartRuntime)
		if err != nil {
			return nil, err
		}
		res.Result = &conformpb.ControlResult_RuntimeStarted{RuntimeStarted: r}
	case *conformpb.ControlOp_RuntimeReport:
		rt, err := c.runtime(op.RuntimeReport.GetRuntime())
		if err != nil {
			return nil, err
		}
		rep := rt.Report()
		res.Result = &conformpb.ControlResult_RuntimeReport{RuntimeReport: &conformpb.RuntimeReport{
			Registered: rep.Registered, Gone: rep.Gone, Refusals: uint32(rep.Refusals),
		}}
	case *conformpb.ControlOp_StopRuntime:
		id := op.StopRuntime.GetRuntime()
		c.runtimes.mu.Lock()
		rt, ok := c.runtimes.m[id]
		delete(c.runtimes.m, id)
		c.runtimes.mu.Unlock()
		if !ok {
			return nil, fmt.Errorf("stop_runtime: no runtime %d", id)
		}
		rt.Close()
		res.Result = &conformpb.ControlResult_RuntimeStopped{RuntimeStopped: &conformpb.RuntimeStopped{}}
	default:
		return nil, &UnimplementedError{Detail: fmt.Sprintf("control op %T", op)}
	}
	return res, nil
}

func (c *ControlParts) startRuntime(ctx context.Context, op *conformpb.StartRuntime) (*conformpb.RuntimeStarted, error) {
	if op.GetHeartbeatPeriodMs() == 0 {
		return nil, fmt.Errorf("start_runtime: heartbeat_period_ms is 0")
	}
	cfg := live.RuntimeConfig{
		Token:     op.GetToken(),
		Heartbeat: time.Duration(op.GetHeartbeatPeriodMs()) * time.Millisecond,
	}
	for _, n := range op.GetNodes() {
		g := live.GraphNode{ID: n.GetNodeId(), Ports: n.GetPorts(), DeclaredPorts: n.GetDeclaredPorts()}
		for _, in := range n.GetInputs() {
			g.Inputs = append(g.Inputs, live.GraphInput{Port: in.GetPort(), StreamName: in.GetStreamName()})
		}
		cfg.Nodes = append(cfg.Nodes, g)
	}
	c.runtimes.mu.Lock()
	defer c.runtimes.mu.Unlock()
	if len(c.runtimes.m) >= maxRuntimes {
		return nil, fmt.Errorf("start_runtime: %d runtimes are running; stop one first", len(c.runtimes.m))
	}
	rt, err := c.NewRuntime(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("start_runtime: %w", err)
	}
	c.runtimes.next++
	c.runtimes.m[c.runtimes.next] = rt
	return &conformpb.RuntimeStarted{Runtime: c.runtimes.next, Address: rt.Addr()}, nil
}

func (c *ControlParts) runtime(id uint32) (ControlRuntime, error) {
	c.runtimes.mu.Lock()
	defer c.runtimes.mu.Unlock()
	rt, ok := c.runtimes.m[id]
	if !ok {
		return nil, fmt.Errorf("no runtime %d", id)
	}
	return rt, nil
}
