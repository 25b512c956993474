package mutant

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	controlpb "github.com/conform-suite/conform/proto/ranvier/control/v1"
	messagepb "github.com/conform-suite/conform/proto/ranvier/message/v1"
	"github.com/conform-suite/conform/ref/live"
	"github.com/conform-suite/conform/ref/wire"
	"github.com/conform-suite/conform/sut/impl"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// controlMutants break the reference's control parts (sut/impl/controlops.go).
// The node mutants run as the child process the Hello's node_command starts
// (conform reference node --mutant NAME), so each swaps ControlParts.RunNode.
var controlMutants = []Mutant{
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
	{
		Name:    "node-registers-first-connection-only",
		Suite:   "live",
		Profile: "ranvier-node",
		Bug:     "the node sends Register only on the first connection of its life: after a redial it resumes beating without registering (ranvier-wire §5.2)",
		apply: func(im *impl.Impl) {
			run := im.Control.RunNode
			im.Control.RunNode = func(ctx context.Context, getenv func(string) string) error {
				var registered atomic.Bool // once per node, not per connection
				return behindRelay(ctx, run, getenv, func() relayFilter {
					return relayFilter{fromNode: func(c *relayConn, p []byte) {
						if m := decodeToRuntime(p); m.GetRegister() != nil && registered.Swap(true) {
							p = encode(&controlpb.ToRuntime{Message: &controlpb.ToRuntime_Alive{Alive: &controlpb.Alive{}}})
						}
						c.toRuntime(p)
					}}
				})
			}
		},
	},
	{
		Name:    "node-rejects-undeclared-enum",
		Suite:   "live",
		Profile: "ranvier-node",
		Bug:     "the node's decoder rejects a control message carrying an enum value it does not declare, so a Refuse with reason 99 is skipped as undecodable and the close after it is taken for a lost connection (ranvier-wire §7.4)",
		apply: nodeBehindRelay(func() relayFilter {
			return relayFilter{fromRuntime: func(c *relayConn, p []byte) {
				m := decodeToNode(p)
				reason, declared := m.GetRefuse().GetReason(), true
				if m.GetRefuse() != nil {
					_, declared = controlpb.RefuseReason_name[int32(reason)]
				}
				if t := m.GetTransport(); t != nil {
					_, declared = controlpb.TransportAction_name[int32(t.GetAction())]
				}
				if !declared {
					return // undecodable, to this decoder: ignored (§6.3)
				}
				c.toNode(p)
			}}
		}),
	},
	{
		Name:    "node-alive-sequence-stuck",
		Suite:   "live",
		Profile: "ranvier-node",
		Bug:     "the node never fills in Alive.sequence, so every Alive is the empty 1a 00 (ranvier-wire §5.2: a node sends the field)",
		apply: nodeBehindRelay(func() relayFilter {
			return relayFilter{fromNode: func(c *relayConn, p []byte) {
				if m := decodeToRuntime(p); m.GetAlive() != nil {
					m.GetAlive().Sequence = 0
					p = encode(m)
				}
				c.toRuntime(p)
			}}
		}),
	},
	{
		Name:    "node-alive-carries-counts",
		Suite:   "live",
		Profile: "ranvier-node",
		Bug:     "the node's Alive carries a queue depth beside its sequence (ranvier-wire §5.2: Alive carries its sequence and nothing else)",
		apply: nodeBehindRelay(func() relayFilter {
			return relayFilter{fromNode: func(c *relayConn, p []byte) {
				if m := decodeToRuntime(p); m.GetAlive() != nil {
					alive := protowire.AppendTag(nil, 1, protowire.VarintType)
					alive = protowire.AppendVarint(alive, m.GetAlive().GetSequence())
					alive = protowire.AppendTag(alive, 2, protowire.VarintType) // a queue depth
					alive = protowire.AppendVarint(alive, 17)
					p = protowire.AppendBytes(protowire.AppendTag(nil, 3, protowire.BytesType), alive)
				}
				c.toRuntime(p)
			}}
		}),
	},
	{
		Name:    "node-listening-names-port-0",
		Suite:   "live",
		Profile: "ranvier-node",
		Bug:     "the node's Listening names the address its publisher was asked to listen on, port 0, not the port it got (ranvier-wire §5.2)",
		apply: nodeBehindRelay(func() relayFilter {
			return relayFilter{fromNode: func(c *relayConn, p []byte) {
				if m := decodeToRuntime(p); m.GetListening() != nil {
					for _, e := range m.GetListening().GetEndpoints() {
						if host, _, err := net.SplitHostPort(e.GetAddress()); err == nil {
							e.Address = net.JoinHostPort(host, "0")
						}
					}
					p = encode(m)
				}
				c.toRuntime(p)
			}}
		}),
	},
	{
		Name:    "node-announces-on-control",
		Suite:   "live",
		Profile: "ranvier-node",
		Bug:     "the node sends its streams' announcements to the runtime on the control connection as well (ranvier-wire §3.1: no data on the control connection)",
		apply: func(im *impl.Impl) {
			run := im.Control.RunNode
			im.Control.RunNode = func(ctx context.Context, getenv func(string) string) error {
				cfg, _ := live.NodeConfigFromEnv(getenv)
				return behindRelay(ctx, run, getenv, func() relayFilter {
					var once sync.Once
					return relayFilter{fromRuntime: func(c *relayConn, p []byte) {
						c.toNode(p)
						if decodeToNode(p).GetBind() == nil {
							return
						}
						once.Do(func() {
							for i, name := range cfg.Publish {
								c.toRuntime(encode(&messagepb.Frame{Payload: &messagepb.Frame_Announce{Announce: &messagepb.StreamInfo{
									Name: name, Node: cfg.NodeID, StreamRef: uint32(i + 1),
								}}}))
							}
						})
					}}
				})
			}
		},
	},
	{
		Name:    "node-requires-control",
		Suite:   "live",
		Profile: "ranvier-node",
		Bug:     "the node refuses to run without RANVIER_CONTROL and exits non-zero, instead of running on its own (ranvier-wire §3.2)",
		apply: func(im *impl.Impl) {
			run := im.Control.RunNode
			im.Control.RunNode = func(ctx context.Context, getenv func(string) string) error {
				if getenv(live.EnvControl) == "" {
					return fmt.Errorf("%s is unset", live.EnvControl)
				}
				return run(ctx, getenv)
			}
		},
	},
	{
		Name:    "node-waits-for-second-bind",
		Suite:   "live",
		Profile: "ranvier-node",
		Bug:     "a node holding a binding with an empty from waits for the runtime to issue it again at the five-second timeout, and drops the connection when nothing comes (ranvier-wire §5.2)",
		apply: nodeBehindRelay(func() relayFilter {
			var mu sync.Mutex
			var timer *time.Timer
			return relayFilter{fromRuntime: func(c *relayConn, p []byte) {
				if m := decodeToNode(p); m.GetBind() != nil {
					mu.Lock()
					if timer != nil {
						timer.Stop()
						timer = nil
					}
					for _, b := range m.GetBind().GetBindings() {
						if b.GetFrom() == "" {
							timer = time.AfterFunc(notComing, c.end)
							break
						}
					}
					mu.Unlock()
				}
				c.toNode(p)
			}}
		}),
	},
	{
		Name:    "node-resyncs-after-framing-error",
		Suite:   "live",
		Profile: "ranvier-node",
		Bug:     "after a prefix above 16 MiB on the control connection the node scans forward for a plausible frame and reads on (ranvier-wire §6.2)",
		apply: nodeBehindRelay(func() relayFilter {
			return relayFilter{resyncFromRuntime: func(p []byte) bool { return decodeToNode(p).GetMessage() != nil }}
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
	{
		Name:    "runtime-resyncs-after-framing-error",
		Suite:   "live",
		Profile: "ranvier-runtime",
		Bug:     "after a prefix above 16 MiB on a control connection the runtime scans forward for a plausible frame and keeps the connection (ranvier-wire §6.2)",
		apply: runtimeBehindRelay(func() relayFilter {
			return relayFilter{resyncFromNode: func(p []byte) bool { return decodeToRuntime(p).GetMessage() != nil }}
		}),
	},
	{
		Name:    "runtime-ignores-undecodable",
		Suite:   "live",
		Profile: "ranvier-runtime",
		Bug:     "the runtime skips a payload that is not a ToRuntime and keeps the connection, as the node does (ranvier-wire §6.3: the runtime closes)",
		apply: runtimeBehindRelay(func() relayFilter {
			return relayFilter{fromNode: func(c *relayConn, p []byte) {
				if decodeToRuntime(p) == nil {
					return
				}
				c.toRuntime(p)
			}}
		}),
	},
	{
		Name:    "runtime-never-rebinds",
		Suite:   "live",
		Profile: "ranvier-runtime",
		Bug:     "the runtime sends each node one Bind, at registration, and never a fresh one when a publisher's Listening arrives (ranvier-wire §5.2)",
		apply: runtimeBehindRelay(func() relayFilter {
			var bound atomic.Bool
			return relayFilter{fromRuntime: func(c *relayConn, p []byte) {
				if decodeToNode(p).GetBind() != nil && bound.Swap(true) {
					return
				}
				c.toNode(p)
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
	// resyncFromNode and resyncFromRuntime, when set, make the relay's
	// reader of that side resynchronise after a framing error (the bug
	// ranvier-wire §6.2 forbids): it scans forward for an offset whose
	// prefix frames a payload the function finds plausible, and reads on
	// from there.
	resyncFromNode, resyncFromRuntime func(payload []byte) bool
}

// relayConn is one relayed control connection.
type relayConn struct {
	node, runtime net.Conn
	nodeMu, rtMu  sync.Mutex
	once          sync.Once
	// holdNode keeps the node's side open when the runtime's side ends.
	holdNode atomic.Bool
}

// notComing is ranvier-wire §5.2's five-second timeout, after which the
// runtime stops waiting for a publisher's Listening.
const notComing = 5 * time.Second

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
		go r.pump(c, c.node, f.fromNode, f.resyncFromNode)
		go r.pump(c, c.runtime, f.fromRuntime, f.resyncFromRuntime)
	}
}

// pump reads frames from src and hands each to filter until src ends; then
// the whole connection ends. With plausible set, a framing error is not
// the end: the pump scans forward for a plausible frame.
func (r *relay) pump(c *relayConn, src net.Conn, filter func(*relayConn, []byte), plausible func([]byte) bool) {
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
	var buf []byte
	scanning := false
	rd := make([]byte, 32<<10)
	for {
		n, err := src.Read(rd)
		buf = append(buf, rd[:n]...)
		for {
			if scanning {
				i := findPlausible(buf, plausible)
				if i < 0 {
					buf = buf[max(0, len(buf)-relayScanKeep):]
					break
				}
				buf, scanning = buf[i:], false
			}
			if len(buf) < wire.PrefixLen {
				break
			}
			size := binary.BigEndian.Uint32(buf)
			if size > wire.MaxPayload {
				if plausible == nil {
					return // §6.2: the connection ends
				}
				scanning = true
				continue
			}
			if uint64(len(buf)) < uint64(wire.PrefixLen)+uint64(size) {
				break
			}
			filter(c, buf[wire.PrefixLen:wire.PrefixLen+int(size)])
			buf = buf[wire.PrefixLen+int(size):]
		}
		if err != nil {
			return
		}
	}
}

// relayScanKeep bounds what a resynchronising pump keeps while it scans.
const relayScanKeep = 1 << 20

// findPlausible returns the first offset of b at which a whole frame starts
// whose payload plausible accepts, or -1.
func findPlausible(b []byte, plausible func([]byte) bool) int {
	for i := 1; i+wire.PrefixLen <= len(b); i++ {
		size := uint64(binary.BigEndian.Uint32(b[i:]))
		end := uint64(i) + uint64(wire.PrefixLen) + size
		if size <= wire.MaxPayload && end <= uint64(len(b)) && plausible(b[i+wire.PrefixLen:end]) {
			return i
		}
	}
	return -1
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
// newFilter, which makes each connection's filter.
func nodeBehindRelay(newFilter func() relayFilter) func(*impl.Impl) {
	return func(im *impl.Impl) {
		run := im.Control.RunNode
		im.Control.RunNode = func(ctx context.Context, getenv func(string) string) error {
			return behindRelay(ctx, run, getenv, newFilter)
		}
	}
}

// behindRelay runs the node run through a relay to the runtime getenv
// names, with newFilter making each connection's filter. A node run by hand
// (no RANVIER_CONTROL) runs as it is.
func behindRelay(ctx context.Context, run func(context.Context, func(string) string) error, getenv func(string) string, newFilter func() relayFilter) error {
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
