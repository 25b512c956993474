package mutant

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	controlpb "github.com/conform-suite/conform/proto/ranvier/control/v1"
	"github.com/conform-suite/conform/ref/live"
	"github.com/conform-suite/conform/ref/wire"
	"github.com/conform-suite/conform/sut/impl"
	"google.golang.org/protobuf/proto"
)

// controlMutants break the reference's control parts (sut/impl/controlops.go).
// The node mutants run as the child process the Hello's node_command starts
// (conform reference node --mutant NAME), so each swaps ControlParts.RunNode.
var controlMutants = []Mutant{
	{
		Name:    "node-redials-after-refusal",
		Suite:   "live",
		Profile: "ranvier-node",
		Bug:     "a refused node redials the runtime instead of exiting (ranvier-wire §5.2)",
		apply: func(im *impl.Impl) {
			run := im.Control.RunNode
			im.Control.RunNode = func(ctx context.Context, getenv func(string) string) error {
				for {
					err := run(ctx, getenv)
					var refused *live.RefusedError
					if !errors.As(err, &refused) {
						return err
					}
					select {
					case <-ctx.Done():
						return err
					case <-time.After(100 * time.Millisecond):
					}
				}
			}
		},
	},
	{
		Name:    "node-reads-ranvier-bindings",
		Suite:   "live",
		Profile: "ranvier-node",
		Bug:     "the node takes bindings from RANVIER_BINDINGS and dials them (ranvier-wire §3.2)",
		apply: func(im *impl.Impl) {
			run := im.Control.RunNode
			im.Control.RunNode = func(ctx context.Context, getenv func(string) string) error {
				var bindings []struct {
					Port       string `json:"port"`
					StreamName string `json:"stream_name"`
					From       string `json:"from"`
				}
				if raw := getenv("RANVIER_BINDINGS"); raw != "" {
					if err := json.Unmarshal([]byte(raw), &bindings); err != nil {
						return fmt.Errorf("RANVIER_BINDINGS: %w", err)
					}
				}
				sub := live.NewSubscriber(live.SubscriberConfig{})
				defer sub.Close()
				for _, b := range bindings {
					if b.From != "" {
						go sub.Subscribe(ctx, b.From, b.StreamName)
					}
				}
				return run(ctx, getenv)
			}
		},
	},
	{
		Name:    "runtime-accepts-any-token",
		Suite:   "live",
		Profile: "ranvier-runtime",
		Bug:     "the runtime admits a Register whose token is not the session's (ranvier-wire §5.2)",
		apply: func(im *impl.Impl) {
			im.Control.NewRuntime = func(ctx context.Context, cfg live.RuntimeConfig) (impl.ControlRuntime, error) {
				token := cfg.Token
				cfg.Admit = func(reg *controlpb.Register, admit func(*controlpb.Register) *controlpb.Refuse) *controlpb.Refuse {
					if reg.GetToken() != token {
						reg = &controlpb.Register{Protocol: reg.GetProtocol(), NodeId: reg.GetNodeId(), Token: token, AcceptsTransport: reg.GetAcceptsTransport()}
					}
					return admit(reg)
				}
				return live.ListenRuntime(ctx, cfg)
			}
		},
	},
	{
		Name:    "runtime-gone-after-one-period",
		Suite:   "live",
		Profile: "ranvier-runtime",
		Bug:     "the runtime declares a node gone after one silent heartbeat period, not three (ranvier-wire §6.5)",
		apply: func(im *impl.Impl) {
			im.Control.NewRuntime = func(ctx context.Context, cfg live.RuntimeConfig) (impl.ControlRuntime, error) {
				cfg.Misses = 1
				return live.ListenRuntime(ctx, cfg)
			}
		},
	},
	{
		Name:    "node-ignores-heartbeat-period",
		Suite:   "live",
		Profile: "ranvier-node",
		Bug:     "the node beats on its 2 s default whatever period the Bind names (ranvier-wire §5.2)",
		apply: nodeBehindRelay(func() relayFilter {
			return relayFilter{fromRuntime: rewriteBind(func(b *controlpb.Bind) { b.HeartbeatPeriodMs = 0 })}
		}),
	},
	{
		Name:    "node-zero-period-means-silence",
		Suite:   "live",
		Profile: "ranvier-node",
		Bug:     "a heartbeat_period_ms of 0 stops the node's Alive instead of leaving it on the 2 s default (ranvier-wire §5.2)",
		apply: nodeBehindRelay(func() relayFilter {
			return relayFilter{fromRuntime: rewriteBind(func(b *controlpb.Bind) {
				if b.HeartbeatPeriodMs == 0 {
					b.HeartbeatPeriodMs = 3_600_000
				}
			})}
		}),
	},
	{
		Name:    "node-keeps-stale-bindings",
		Suite:   "live",
		Profile: "ranvier-node",
		Bug:     "a Bind adds to the node's bindings instead of replacing them: a binding left out stays up (ranvier-wire §5.2)",
		apply: nodeBehindRelay(func() relayFilter {
			held := map[string]*controlpb.BindingInfo{}
			return relayFilter{fromRuntime: rewriteBind(func(b *controlpb.Bind) {
				for _, x := range b.Bindings {
					held[x.GetPort()] = x
				}
				b.Bindings = b.Bindings[:0]
				for _, x := range held {
					b.Bindings = append(b.Bindings, x)
				}
			})}
		}),
	},
	{
		Name:    "node-registers-twice",
		Suite:   "live",
		Profile: "ranvier-node",
		Bug:     "the node sends its Register again when the first Bind arrives (ranvier-wire §5.2)",
		apply: nodeBehindRelay(func() relayFilter {
			var mu sync.Mutex
			var register []byte
			again := true
			return relayFilter{
				fromNode: func(c *relayConn, p []byte) {
					if m := decodeToRuntime(p); m.GetRegister() != nil {
						mu.Lock()
						register = p
						mu.Unlock()
					}
					c.toRuntime(p)
				},
				fromRuntime: func(c *relayConn, p []byte) {
					c.toNode(p)
					mu.Lock()
					defer mu.Unlock()
					if m := decodeToNode(p); m.GetBind() != nil && again && register != nil {
						again = false
						c.toRuntime(register)
					}
				},
			}
		}),
	},
	{
		Name:    "node-wrong-protocol",
		Suite:   "live",
		Profile: "ranvier-node",
		Bug:     "the node registers with protocol 2 (ranvier-wire §5.2, §7.1)",
		apply: nodeBehindRelay(func() relayFilter {
			return relayFilter{fromNode: func(c *relayConn, p []byte) {
				if m := decodeToRuntime(p); m.GetRegister() != nil {
					m.GetRegister().Protocol = 2
					p = encode(m)
				}
				c.toRuntime(p)
			}}
		}),
	},
	{
		Name:    "node-closes-on-empty-message",
		Suite:   "live",
		Profile: "ranvier-node",
		Bug:     "the node treats a ToNode with no variant as an error and drops the connection (ranvier-wire §6.4, §7.3)",
		apply: nodeBehindRelay(func() relayFilter {
			return relayFilter{fromRuntime: func(c *relayConn, p []byte) {
				if m := decodeToNode(p); m != nil && m.GetMessage() == nil {
					c.end()
					return
				}
				c.toNode(p)
			}}
		}),
	},
	{
		Name:    "node-closes-on-undecodable",
		Suite:   "live",
		Profile: "ranvier-node",
		Bug:     "the node treats a payload that fails to decode as a framing error and drops the connection (ranvier-wire §6.3)",
		apply: nodeBehindRelay(func() relayFilter {
			return relayFilter{fromRuntime: func(c *relayConn, p []byte) {
				if decodeToNode(p) == nil {
					c.end()
					return
				}
				c.toNode(p)
			}}
		}),
	},
	{
		Name:    "node-obeys-unaccepted-transport",
		Suite:   "live",
		Profile: "ranvier-node",
		Bug:     "a node that did not set accepts_transport pauses on Transport and stops beating (ranvier-wire §5.2)",
		apply: nodeBehindRelay(func() relayFilter {
			var paused atomic.Bool
			return relayFilter{
				fromRuntime: func(c *relayConn, p []byte) {
					if m := decodeToNode(p); m.GetTransport() != nil {
						paused.Store(m.GetTransport().GetAction() == controlpb.TransportAction_TRANSPORT_ACTION_PAUSE)
					}
					c.toNode(p)
				},
				fromNode: func(c *relayConn, p []byte) {
					if m := decodeToRuntime(p); m.GetAlive() != nil && paused.Load() {
						return
					}
					c.toRuntime(p)
				},
			}
		}),
	},
	runtimeAdmitsDespite("runtime-accepts-any-protocol", controlpb.RefuseReason_REFUSE_REASON_PROTOCOL, "the runtime admits a Register whose protocol is not 1 (ranvier-wire §5.2, §7.1)"),
	runtimeAdmitsDespite("runtime-admits-unknown-node", controlpb.RefuseReason_REFUSE_REASON_UNKNOWN_NODE, "the runtime admits a node that is not in the graph (ranvier-wire §5.2)"),
	runtimeAdmitsDespite("runtime-ignores-port-drift", controlpb.RefuseReason_REFUSE_REASON_PORT_DRIFT, "the runtime admits a node whose declared ports drifted from the graph (ranvier-wire §5.2)"),
	{
		Name:    "runtime-waits-for-register",
		Suite:   "live",
		Profile: "ranvier-runtime",
		Bug:     "the runtime ignores messages before Register instead of closing the connection (ranvier-wire §5.2)",
		apply: runtimeBehindRelay(func() relayFilter {
			var registered atomic.Bool
			return relayFilter{fromNode: func(c *relayConn, p []byte) {
				if m := decodeToRuntime(p); m.GetRegister() != nil {
					registered.Store(true)
				} else if !registered.Load() {
					return
				}
				c.toRuntime(p)
			}}
		}),
	},
	{
		Name:    "runtime-refuses-without-closing",
		Suite:   "live",
		Profile: "ranvier-runtime",
		Bug:     "the runtime sends Refuse and leaves the connection open (ranvier-wire §5.2)",
		apply: runtimeBehindRelay(func() relayFilter {
			return relayFilter{fromRuntime: func(c *relayConn, p []byte) {
				if m := decodeToNode(p); m.GetRefuse() != nil {
					c.holdNode.Store(true)
				}
				c.toNode(p)
			}}
		}),
	},
	{
		Name:    "runtime-closes-after-bind",
		Suite:   "live",
		Profile: "ranvier-runtime",
		Bug:     "the runtime closes a node's connection once it has sent Bind, as if registration were one request and one reply (ranvier-wire §5.2)",
		apply: runtimeBehindRelay(func() relayFilter {
			return relayFilter{fromRuntime: func(c *relayConn, p []byte) {
				c.toNode(p)
				if m := decodeToNode(p); m.GetBind() != nil {
					c.end()
				}
			}}
		}),
	},
	{
		Name:    "runtime-closes-on-empty-message",
		Suite:   "live",
		Profile: "ranvier-runtime",
		Bug:     "the runtime treats a ToRuntime with no variant as an error and closes the connection (ranvier-wire §6.4)",
		apply: runtimeBehindRelay(func() relayFilter {
			return relayFilter{fromNode: func(c *relayConn, p []byte) {
				if m := decodeToRuntime(p); m != nil && m.GetMessage() == nil {
					c.end()
					return
				}
				c.toRuntime(p)
			}}
		}),
	},
}

// runtimeAdmitsDespite is the runtime mutant that admits a Register it
// should refuse for reason.
func runtimeAdmitsDespite(name string, reason controlpb.RefuseReason, bug string) Mutant {
	return Mutant{Name: name, Suite: "live", Profile: "ranvier-runtime", Bug: bug, apply: func(im *impl.Impl) {
		im.Control.NewRuntime = func(ctx context.Context, cfg live.RuntimeConfig) (impl.ControlRuntime, error) {
			cfg.Admit = func(reg *controlpb.Register, admit func(*controlpb.Register) *controlpb.Refuse) *controlpb.Refuse {
				if r := admit(reg); r.GetReason() != reason {
					return r
				}
				return nil
			}
			return live.ListenRuntime(ctx, cfg)
		}
	}}
}

// RunNode runs, from the environment getenv reads, the control-plane node of
// the reference (name empty) or of the mutant called name: what
// conform reference node [--mutant NAME] does in its child process.
func RunNode(ctx context.Context, name string, getenv func(string) string) error {
	im := impl.Reference()
	if name != "" {
		m, ok := Lookup(name)
		if !ok {
			return fmt.Errorf("no such mutant %q (conform mutants lists them)", name)
		}
		im = m.Impl()
	}
	return im.Control.RunNode(ctx, getenv)
}

// NodeCommand returns the node_command that runs RunNode for name through
// self, the command that runs conform: self reference node [--mutant NAME].
func NodeCommand(self []string, name string) []string {
	argv := append(slices.Clone(self), "reference", "node")
	if name != "" {
		argv = append(argv, "--mutant", name)
	}
	return argv
}

// A relay sits on the control connection between a node and its runtime and
// passes every frame through a filter: the node mutants below are the
// reference node behind a relay whose filter gives it one named bug as seen
// from the runtime, and the runtime mutants the reference runtime behind
// one. The reference itself is never edited.
type relay struct {
	ln        net.Listener
	upstream  string
	newFilter func() relayFilter
	wg        sync.WaitGroup
	mu        sync.Mutex
	conns     map[*relayConn]bool
	closed    bool
}

// relayFilter is one connection's filter. Each function is given every
// payload that side sends, in order, and delivers what it likes with the
// connection's toNode, toRuntime and end. A nil function passes payloads
// through.
type relayFilter struct {
	fromNode, fromRuntime func(c *relayConn, p []byte)
}

// relayConn is one relayed control connection.
type relayConn struct {
	node, runtime net.Conn
	nodeMu, rtMu  sync.Mutex
	once          sync.Once
	// holdNode keeps the node's side open when the runtime's side ends.
	holdNode atomic.Bool
}

// relayWriteWait bounds a relayed write, so that a peer that stops reading
// cannot hold the relay forever.
const relayWriteWait = 5 * time.Second

func writeFrame(mu *sync.Mutex, c net.Conn, p []byte) {
	b, err := wire.AppendFrame(nil, p)
	if err != nil {
		return
	}
	mu.Lock()
	defer mu.Unlock()
	c.SetWriteDeadline(time.Now().Add(relayWriteWait))
	c.Write(b)
}

func (c *relayConn) toNode(p []byte)    { writeFrame(&c.nodeMu, c.node, p) }
func (c *relayConn) toRuntime(p []byte) { writeFrame(&c.rtMu, c.runtime, p) }

// end closes both sides.
func (c *relayConn) end() {
	c.once.Do(func() {
		c.node.Close()
		c.runtime.Close()
	})
}

// startRelay listens on loopback and relays each connection to upstream.
func startRelay(upstream string, newFilter func() relayFilter) (*relay, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r := &relay{ln: ln, upstream: upstream, newFilter: newFilter, conns: make(map[*relayConn]bool)}
	r.wg.Add(1)
	go r.accept()
	return r, nil
}

func (r *relay) addr() string { return r.ln.Addr().String() }

func (r *relay) accept() {
	defer r.wg.Done()
	for {
		nc, err := r.ln.Accept()
		if err != nil {
			return
		}
		up, err := net.DialTimeout("tcp", r.upstream, relayWriteWait)
		if err != nil {
			nc.Close()
			continue
		}
		c := &relayConn{node: nc, runtime: up}
		r.mu.Lock()
		if r.closed {
			r.mu.Unlock()
			c.end()
			return
		}
		r.conns[c] = true
		r.mu.Unlock()
		f := r.newFilter()
		pass := func(deliver func([]byte)) func(*relayConn, []byte) {
			return func(_ *relayConn, p []byte) { deliver(p) }
		}
		if f.fromNode == nil {
			f.fromNode = pass(c.toRuntime)
		}
		if f.fromRuntime == nil {
			f.fromRuntime = pass(c.toNode)
		}
		r.wg.Add(2)
		go r.pump(c, c.node, f.fromNode)
		go r.pump(c, c.runtime, f.fromRuntime)
	}
}

// pump reads frames from src and hands each to filter until src ends; then
// the whole connection ends.
func (r *relay) pump(c *relayConn, src net.Conn, filter func(*relayConn, []byte)) {
	defer r.wg.Done()
	defer func() {
		if src == c.runtime && c.holdNode.Load() {
			src.Close()
			return // the node's side lives on until the node or the relay closes it
		}
		c.end()
		r.mu.Lock()
		delete(r.conns, c)
		r.mu.Unlock()
	}()
	var rd wire.Reader
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		rd.Write(buf[:n])
		for {
			p, ok, ferr := rd.Next()
			if ferr != nil {
				return
			}
			if !ok {
				break
			}
			filter(c, p)
		}
		if err != nil {
			return
		}
	}
}

func (r *relay) close() {
	r.mu.Lock()
	r.closed = true
	for c := range r.conns {
		c.end()
	}
	r.mu.Unlock()
	r.ln.Close()
	r.wg.Wait()
}

// nodeBehindRelay makes im's node dial its runtime through a relay with
// newFilter.
func nodeBehindRelay(newFilter func() relayFilter) func(*impl.Impl) {
	return func(im *impl.Impl) {
		run := im.Control.RunNode
		im.Control.RunNode = func(ctx context.Context, getenv func(string) string) error {
			upstream := getenv(live.EnvControl)
			if upstream == "" {
				return run(ctx, getenv)
			}
			r, err := startRelay(upstream, newFilter)
			if err != nil {
				return err
			}
			defer r.close()
			return run(ctx, func(k string) string {
				if k == live.EnvControl {
					return r.addr()
				}
				return getenv(k)
			})
		}
	}
}

// relayedRuntime is a runtime reached through a relay.
type relayedRuntime struct {
	*live.Runtime
	r *relay
}

func (rr relayedRuntime) Addr() string { return rr.r.addr() }

func (rr relayedRuntime) Close() error {
	rr.r.close()
	return rr.Runtime.Close()
}

// runtimeBehindRelay makes im's runtimes reachable only through a relay with
// newFilter.
func runtimeBehindRelay(newFilter func() relayFilter) func(*impl.Impl) {
	return func(im *impl.Impl) {
		im.Control.NewRuntime = func(ctx context.Context, cfg live.RuntimeConfig) (impl.ControlRuntime, error) {
			rt, err := live.ListenRuntime(ctx, cfg)
			if err != nil {
				return nil, err
			}
			r, err := startRelay(rt.Addr(), newFilter)
			if err != nil {
				rt.Close()
				return nil, err
			}
			return relayedRuntime{Runtime: rt, r: r}, nil
		}
	}
}

// decodeToNode and decodeToRuntime decode a payload; nil when it does not
// decode.
func decodeToNode(p []byte) *controlpb.ToNode {
	m := new(controlpb.ToNode)
	if proto.Unmarshal(p, m) != nil {
		return nil
	}
	return m
}

func decodeToRuntime(p []byte) *controlpb.ToRuntime {
	m := new(controlpb.ToRuntime)
	if proto.Unmarshal(p, m) != nil {
		return nil
	}
	return m
}

func encode(m proto.Message) []byte {
	b, err := wire.Encode(m)
	if err != nil {
		panic(err) // a message this file built
	}
	return b
}

// rewriteBind returns a filter from the runtime that rewrites each Bind with
// edit and passes everything else.
func rewriteBind(edit func(*controlpb.Bind)) func(c *relayConn, p []byte) {
	return func(c *relayConn, p []byte) {
		if m := decodeToNode(p); m.GetBind() != nil {
			edit(m.GetBind())
			p = encode(m)
		}
		c.toNode(p)
	}
}
