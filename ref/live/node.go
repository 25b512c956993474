package live

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"sort"
	"sync"
	"time"

	controlpb "github.com/conform-suite/conform/proto/ranvier/control/v1"
	messagepb "github.com/conform-suite/conform/proto/ranvier/message/v1"
	"github.com/conform-suite/conform/ref/streams"
	"github.com/conform-suite/conform/ref/wire"
	"google.golang.org/protobuf/proto"
)

// Protocol is the control-plane protocol version a node registers with
// (ranvier-wire §5.2, §7.1).
const Protocol = 1

// DefaultHeartbeat is a node's heartbeat period when no Bind has named one,
// or a Bind named 0 (ranvier-wire §5.2).
const DefaultHeartbeat = 2 * time.Second

// The four variables a runtime puts into a node's environment
// (ranvier-wire §3.2).
const (
	EnvControl = "RANVIER_CONTROL"
	EnvToken   = "RANVIER_TOKEN"
	EnvNodeID  = "RANVIER_NODE_ID"
	EnvParams  = "RANVIER_PARAMS"
)

// RefusedError reports that the runtime refused the node (ranvier-wire §5.2).
// The node does not redial; a program running it should report the error and
// exit non-zero.
type RefusedError struct {
	Reason controlpb.RefuseReason
	Detail string
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("live node: refused by the runtime: %v: %q", e.Reason, e.Detail)
}

// NodeConfig configures a Node.
type NodeConfig struct {
	// Control is the runtime's listener, host:port (RANVIER_CONTROL).
	// Empty means the node is run by hand (ranvier-wire §3.2): it makes no
	// control connection and runs on its own until its context ends.
	Control string
	// Token and NodeID are sent in Register (RANVIER_TOKEN,
	// RANVIER_NODE_ID).
	Token  string
	NodeID string
	// Params is RANVIER_PARAMS, a JSON object, by key.
	Params map[string]json.RawMessage
	// AcceptsTransport is declared in Register. Without it every Transport
	// message is ignored (ranvier-wire §5.2).
	AcceptsTransport bool
	// Publish names the streams the node produces. When non-empty the node
	// brings up a Publisher, opens one stream per name, and reports the
	// endpoints in Listening.
	Publish []string
	// Heartbeat is the period before any Bind names one, and when a Bind
	// names 0; 0 means DefaultHeartbeat. Tests shorten it.
	Heartbeat time.Duration
	// NoRedial ends Run when the control connection is lost, instead of
	// redialling on the heartbeat period (ranvier-wire §5.2 MAY).
	NoRedial bool
	// Publisher configures the node's publisher.
	Publisher PublisherConfig
	// Events, when set, is called with every event the node reports, from
	// the node's goroutine. It must not block.
	Events func(NodeEvent)
}

// NodeConfigFromEnv reads the four RANVIER_* variables through getenv
// (ranvier-wire §3.2). RANVIER_CONTROL unset leaves Control empty: the node
// is run by hand. RANVIER_BINDINGS is never read: bindings arrive as Bind
// messages. RANVIER_PARAMS, when set, must be a JSON object; the optional keys
// "publish" (a list of stream names) and "accepts_transport" (a boolean) are
// this suite's choice and fill NodeConfig.Publish and AcceptsTransport.
func NodeConfigFromEnv(getenv func(string) string) (NodeConfig, error) {
	cfg := NodeConfig{
		Control: getenv(EnvControl),
		Token:   getenv(EnvToken),
		NodeID:  getenv(EnvNodeID),
		Params:  map[string]json.RawMessage{},
	}
	if raw := getenv(EnvParams); raw != "" {
		if err := json.Unmarshal([]byte(raw), &cfg.Params); err != nil {
			return cfg, fmt.Errorf("live node: %s is not a JSON object: %w", EnvParams, err)
		}
		if cfg.Params == nil {
			cfg.Params = map[string]json.RawMessage{}
		}
	}
	if v, ok := cfg.Params["publish"]; ok {
		if err := json.Unmarshal(v, &cfg.Publish); err != nil {
			return cfg, fmt.Errorf("live node: %s key \"publish\": %w", EnvParams, err)
		}
	}
	if v, ok := cfg.Params["accepts_transport"]; ok {
		if err := json.Unmarshal(v, &cfg.AcceptsTransport); err != nil {
			return cfg, fmt.Errorf("live node: %s key \"accepts_transport\": %w", EnvParams, err)
		}
	}
	return cfg, nil
}

// NodeEventKind names what a node reports.
type NodeEventKind string

// The events a node reports.
const (
	EventConnected        NodeEventKind = "connected"         // dialled the runtime and sent Register
	EventDialFailed       NodeEventKind = "dial-failed"       // could not reach the runtime
	EventBound            NodeEventKind = "bound"             // applied a Bind
	EventIgnored          NodeEventKind = "ignored"           // an empty, unknown or undecodable ToNode (§6.3, §6.4)
	EventTransportIgnored NodeEventKind = "transport-ignored" // a Transport without accepts_transport (§5.2)
	EventTransport        NodeEventKind = "transport"         // a Transport acted on
	EventLost             NodeEventKind = "lost"              // the control connection was lost
	EventStopping         NodeEventKind = "stopping"          // Stop received, Stopping sent
	EventRefused          NodeEventKind = "refused"           // Refuse received
)

// NodeEvent is one thing a node reports.
type NodeEvent struct {
	Kind   NodeEventKind
	Detail string
}

// BindingState is one port's binding as the node holds it.
type BindingState struct {
	Port, StreamName, From string
	// Dialled reports whether the node dialled From; a binding with an
	// empty From is up and not dialled (ranvier-wire §5.2).
	Dialled bool
	// Conn is the subscriber connection, when the dial succeeded.
	Conn streams.ConnID
	// Err is why the dial failed.
	Err error
}

// Node is the reference control-plane node (ranvier-wire §3.2, §5). It dials
// the runtime, registers once per connection, applies each Bind as its
// complete binding set, sends Alive on the heartbeat period, and answers Stop
// with Stopping. Inputs are subscribed with a Subscriber; outputs are served
// by a Publisher. Run it once.
type Node struct {
	cfg  NodeConfig
	sub  *Subscriber
	pub  *Publisher
	outs map[string]*PublishedStream
	wg   sync.WaitGroup

	mu       sync.Mutex
	bindings map[string]*binding
	paused   bool
}

type binding struct {
	BindingState
	cancel context.CancelFunc
}

// NewNode returns a node for cfg. It brings up its publisher, if it has
// outputs, so that Listening can name real addresses; Run closes it.
func NewNode(ctx context.Context, cfg NodeConfig) (*Node, error) {
	if cfg.Heartbeat <= 0 {
		cfg.Heartbeat = DefaultHeartbeat
	}
	n := &Node{
		cfg:      cfg,
		sub:      NewSubscriber(SubscriberConfig{}),
		outs:     make(map[string]*PublishedStream),
		bindings: make(map[string]*binding),
	}
	if len(cfg.Publish) > 0 {
		pub, err := NewPublisher(ctx, cfg.Publisher)
		if err != nil {
			return nil, fmt.Errorf("live node: %w", err)
		}
		n.pub = pub
		for _, name := range cfg.Publish {
			s, err := pub.Open(&messagepb.StreamInfo{Name: name, Node: cfg.NodeID})
			if err != nil {
				pub.Close()
				return nil, fmt.Errorf("live node: %w", err)
			}
			n.outs[name] = s
		}
	}
	return n, nil
}

// Stream returns the output stream published under name, or nil.
func (n *Node) Stream(name string) *PublishedStream { return n.outs[name] }

// Publisher returns the node's publisher, nil when it has no outputs.
func (n *Node) Publisher() *Publisher { return n.pub }

// Subscriber returns the subscriber the node's bindings dial with.
func (n *Node) Subscriber() *Subscriber { return n.sub }

// Paused reports whether an accepted Transport paused the node.
func (n *Node) Paused() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.paused
}

// Bindings returns the bindings the node holds, sorted by port.
func (n *Node) Bindings() []BindingState {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := make([]BindingState, 0, len(n.bindings))
	for _, b := range n.bindings {
		out = append(out, b.BindingState)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Port < out[j].Port })
	return out
}

// errStopped ends a session after Stop.
var errStopped = errors.New("stopped")

// Run runs the node until Stop (nil), a Refuse (a *RefusedError), or the end
// of ctx (ctx's error). A lost control connection is redialled on the
// heartbeat period unless NoRedial is set, in which case Run returns the
// loss. A node with no Control is run by hand (ranvier-wire §3.2): it dials
// nothing, keeps its publisher serving, and returns nil when ctx ends. Run
// closes the node's publisher and subscriber before it returns.
func (n *Node) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer func() {
		cancel()
		n.wg.Wait()
		n.sub.Close()
		if n.pub != nil {
			n.pub.Close()
		}
	}()
	if n.cfg.Control == "" {
		<-ctx.Done()
		return nil
	}
	period := n.cfg.Heartbeat
	for {
		err := n.session(ctx, &period)
		var refused *RefusedError
		switch {
		case errors.Is(err, errStopped):
			return nil
		case errors.As(err, &refused):
			return err
		case ctx.Err() != nil:
			return fmt.Errorf("live node: %w", ctx.Err())
		case n.cfg.NoRedial:
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("live node: %w", ctx.Err())
		case <-time.After(period):
		}
	}
}

func (n *Node) event(k NodeEventKind, format string, args ...any) {
	if n.cfg.Events != nil {
		n.cfg.Events(NodeEvent{Kind: k, Detail: fmt.Sprintf(format, args...)})
	}
}

type inbound struct {
	msg *controlpb.ToNode
	err error // decode error: the frame is ignored
	end error // the connection is over
}

// session is one control connection. period is the node's heartbeat period,
// which outlives the connection so that a redial uses it.
func (n *Node) session(ctx context.Context, period *time.Duration) error {
	dialCtx, cancelDial := context.WithTimeout(ctx, *period)
	var d net.Dialer
	nc, err := d.DialContext(dialCtx, "tcp", n.cfg.Control)
	cancelDial()
	if err != nil {
		n.event(EventDialFailed, "%v", err)
		return fmt.Errorf("live node: dial the runtime at %s: %w", n.cfg.Control, err)
	}
	defer nc.Close()
	stopWatch := context.AfterFunc(ctx, func() { nc.Close() })
	defer stopWatch()

	send := func(m *controlpb.ToRuntime) error {
		payload, err := wire.Encode(m)
		if err != nil {
			return fmt.Errorf("live node: encoding %v: %w", m, err)
		}
		b, err := wire.AppendFrame(nil, payload)
		if err != nil {
			return fmt.Errorf("live node: framing: %w", err)
		}
		if err := WritePatient(nc, b, DefaultPatience, ctx.Done()); err != nil {
			return fmt.Errorf("live node: sending to the runtime: %w", err)
		}
		return nil
	}
	// §5.2: Register first, once per connection.
	if err := send(&controlpb.ToRuntime{Message: &controlpb.ToRuntime_Register{Register: &controlpb.Register{
		Protocol: Protocol, NodeId: n.cfg.NodeID, Token: n.cfg.Token, AcceptsTransport: n.cfg.AcceptsTransport,
	}}}); err != nil {
		return err
	}
	n.event(EventConnected, "%s", n.cfg.Control)

	in := make(chan inbound)
	quit := make(chan struct{})
	readerDone := make(chan struct{})
	defer func() { close(quit); nc.Close(); <-readerDone }()
	go readControl(nc, in, quit, readerDone)

	var (
		alive    uint64 // next Alive sequence, from 0 per connection
		bound    bool
		tick     *time.Ticker
		tickC    <-chan time.Time
		sendBeat = func() error {
			err := send(&controlpb.ToRuntime{Message: &controlpb.ToRuntime_Alive{Alive: &controlpb.Alive{Sequence: alive}}})
			alive++
			return err
		}
	)
	defer func() {
		if tick != nil {
			tick.Stop()
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tickC:
			if err := sendBeat(); err != nil {
				n.event(EventLost, "%v", err)
				return err
			}
		case m := <-in:
			if m.end != nil {
				n.event(EventLost, "%v", m.end)
				return m.end
			}
			if m.err != nil {
				// §6.3: the node ignores a frame it cannot decode.
				n.event(EventIgnored, "undecodable ToNode: %v", m.err)
				continue
			}
			switch v := m.msg.GetMessage().(type) {
			case *controlpb.ToNode_Bind:
				p := time.Duration(v.Bind.GetHeartbeatPeriodMs()) * time.Millisecond
				if p <= 0 {
					p = n.cfg.Heartbeat
				}
				*period = p
				n.applyBind(ctx, v.Bind)
				n.event(EventBound, "%d bindings, heartbeat %v", len(v.Bind.GetBindings()), p)
				// The period runs from this Bind: one Alive now, then one
				// per period, so a shorter period applies at once.
				if tick == nil {
					tick = time.NewTicker(p)
					tickC = tick.C
				} else {
					tick.Reset(p)
				}
				if err := sendBeat(); err != nil {
					return err
				}
				if !bound && n.pub != nil {
					if err := send(n.listening()); err != nil {
						return err
					}
				}
				bound = true
			case *controlpb.ToNode_Refuse:
				n.event(EventRefused, "%v %q", v.Refuse.GetReason(), v.Refuse.GetDetail())
				return &RefusedError{Reason: v.Refuse.GetReason(), Detail: v.Refuse.GetDetail()}
			case *controlpb.ToNode_Transport:
				if !n.cfg.AcceptsTransport {
					n.event(EventTransportIgnored, "%v", v.Transport.GetAction())
					continue
				}
				n.applyTransport(v.Transport.GetAction())
			case *controlpb.ToNode_Stop:
				return n.stop(ctx, v.Stop, send)
			default:
				// §6.4, §7.3: no variant, or one this build does not know.
				n.event(EventIgnored, "ToNode with no known variant")
			}
		}
	}
}

// readControl reads ToNode frames from nc until the connection ends or the
// session closes quit.
func readControl(nc net.Conn, in chan<- inbound, quit <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	put := func(m inbound) bool {
		select {
		case in <- m:
			return true
		case <-quit:
			return false
		}
	}
	var r wire.Reader
	buf := make([]byte, 32<<10)
	for {
		n, err := nc.Read(buf)
		r.Write(buf[:n])
		for {
			payload, ok, ferr := r.Next()
			if ferr != nil {
				// §6.2: a framing error is a lost connection.
				put(inbound{end: fmt.Errorf("live node: framing error on the control connection: %w", ferr)})
				return
			}
			if !ok {
				break
			}
			m := new(controlpb.ToNode)
			if derr := proto.Unmarshal(payload, m); derr != nil {
				if !put(inbound{err: derr}) {
					return
				}
				continue
			}
			if !put(inbound{msg: m}) {
				return
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = fmt.Errorf("live node: the runtime closed the control connection: %w", err)
			} else {
				err = fmt.Errorf("live node: reading the control connection: %w", err)
			}
			put(inbound{end: err})
			return
		}
	}
}

func (n *Node) listening() *controlpb.ToRuntime {
	l := &controlpb.Listening{}
	names := slices.Clone(n.cfg.Publish)
	for _, name := range names {
		l.Endpoints = append(l.Endpoints, &controlpb.Endpoint{StreamName: name, Address: n.pub.Addr()})
	}
	return &controlpb.ToRuntime{Message: &controlpb.ToRuntime_Listening{Listening: l}}
}

// applyBind makes bind the node's complete binding set (ranvier-wire §5.2): a
// port not in it is torn down, an unchanged entry is left alone, and a new or
// changed one is brought up — dialled when its from is set, and only brought
// up when from is empty.
func (n *Node) applyBind(ctx context.Context, bind *controlpb.Bind) {
	want := make(map[string]*controlpb.BindingInfo)
	for _, b := range bind.GetBindings() {
		want[b.GetPort()] = b // a port named twice: the last entry holds
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	for port, b := range n.bindings {
		w, ok := want[port]
		if ok && w.GetStreamName() == b.StreamName && w.GetFrom() == b.From {
			continue
		}
		n.teardownLocked(b)
		delete(n.bindings, port)
	}
	for port, w := range want {
		if _, ok := n.bindings[port]; ok {
			continue
		}
		b := &binding{BindingState: BindingState{Port: port, StreamName: w.GetStreamName(), From: w.GetFrom()}}
		n.bindings[port] = b
		if b.From == "" {
			continue // up, and not dialled
		}
		b.Dialled = true
		dctx, cancel := context.WithCancel(ctx)
		b.cancel = cancel
		n.wg.Add(1)
		go func() {
			defer n.wg.Done()
			id, err := n.sub.Subscribe(dctx, b.From, b.StreamName)
			n.mu.Lock()
			defer n.mu.Unlock()
			if n.bindings[port] != b { // replaced while dialling
				if err == nil {
					n.sub.CloseConn(id)
				}
				return
			}
			b.Conn, b.Err = id, err
		}()
	}
}

func (n *Node) teardownLocked(b *binding) {
	if b.cancel != nil {
		b.cancel()
	}
	if b.Conn != 0 {
		n.sub.CloseConn(b.Conn)
	}
}

func (n *Node) applyTransport(a controlpb.TransportAction) {
	n.mu.Lock()
	defer n.mu.Unlock()
	switch a {
	case controlpb.TransportAction_TRANSPORT_ACTION_PAUSE:
		n.paused = true
	case controlpb.TransportAction_TRANSPORT_ACTION_RESUME:
		n.paused = false
	default:
		// §7.4: an undeclared action produces no action at all.
		n.event(EventIgnored, "Transport with action %d", a)
		return
	}
	n.event(EventTransport, "%v", a)
}

// stop answers Stop: drain the publisher for at most half the deadline, send
// Stopping, and end the session (ranvier-wire §5.2).
func (n *Node) stop(ctx context.Context, stop *controlpb.Stop, send func(*controlpb.ToRuntime) error) error {
	deadline := time.Duration(stop.GetDeadlineMs()) * time.Millisecond
	if n.pub != nil {
		if deadline > 0 {
			dctx, cancel := context.WithTimeout(ctx, deadline/2)
			n.pub.Shutdown(dctx)
			cancel()
		} else {
			n.pub.Close()
		}
	}
	err := send(&controlpb.ToRuntime{Message: &controlpb.ToRuntime_Stopping{Stopping: &controlpb.Stopping{}}})
	n.event(EventStopping, "deadline %v", deadline)
	if err != nil {
		return errors.Join(errStopped, err)
	}
	return errStopped
}
