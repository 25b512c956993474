package live

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"sort"
	"sync"
	"time"

	controlpb "github.com/conform-suite/conform/proto/ranvier/control/v1"
	"github.com/conform-suite/conform/ref/wire"
	"google.golang.org/protobuf/proto"
)

// Misses is how many heartbeat periods of silence a runtime waits before it
// declares a node gone (ranvier-wire §5.2, §6.5).
const Misses = 3

// GraphNode is one node of the graph a Runtime serves.
type GraphNode struct {
	// ID is the node's identity (RANVIER_NODE_ID, Register.node_id).
	ID string
	// Ports are the ports the graph wires for the node; DeclaredPorts the
	// ports the node's own declaration names. When the two sets differ the
	// node has drifted from the graph and is refused with
	// REFUSE_REASON_PORT_DRIFT. Both empty is no drift.
	Ports, DeclaredPorts []string
	// Inputs are the node's input bindings, sent in its Bind.
	Inputs []GraphInput
}

// GraphInput binds an input port to a stream name.
type GraphInput struct {
	Port, StreamName string
}

// RuntimeConfig configures a Runtime.
type RuntimeConfig struct {
	// Token is the session's connection token (RANVIER_TOKEN).
	Token string
	// Heartbeat is the period named in every Bind and the unit of silence;
	// 0 means DefaultHeartbeat.
	Heartbeat time.Duration
	// Nodes is the graph.
	Nodes []GraphNode
	// Misses is how many silent periods declare a node gone; 0 means
	// Misses, the three of ranvier-wire §6.5.
	Misses int
	// Admit decides a Register: it is given the Register and the
	// specified admission (§5.2), and returns the Refuse to send, or nil to
	// accept. Nil means the specified admission. A runtime that admits
	// otherwise, such as a conform mutant, is built with one.
	Admit func(reg *controlpb.Register, admit func(*controlpb.Register) *controlpb.Refuse) *controlpb.Refuse
}

// RuntimeReport is what a Runtime has concluded so far.
type RuntimeReport struct {
	// Registered are the node identities holding an accepted registration,
	// sorted.
	Registered []string
	// Gone are the node identities declared gone and not heard from
	// since, sorted.
	Gone []string
	// Refusals counts the Refuse messages sent.
	Refusals int
}

// Runtime is the reference control-plane runtime (ranvier-wire §3.2, §5): it
// listens on loopback, admits or refuses each node's Register for one of the
// five reasons, binds each admitted node's inputs to the addresses other
// nodes' Listening named, and declares a node gone after Misses silent
// heartbeat periods — a report that changes nothing on the data plane
// (§6.5). It spawns no process: a node is whatever dials it.
type Runtime struct {
	cfg   RuntimeConfig
	ln    net.Listener
	graph map[string]GraphNode
	quit  chan struct{}
	wg    sync.WaitGroup
	once  sync.Once

	mu        sync.Mutex
	sessions  map[string]*rtSession // registered node ID → its connection
	conns     map[net.Conn]bool
	endpoints map[string]string // stream name → the address a Listening named
	gone      map[string]bool
	refusals  int
}

// rtSession is one admitted node's connection.
type rtSession struct {
	node      string
	nc        net.Conn
	writeMu   sync.Mutex
	lastHeard time.Time
	lastBind  []*controlpb.BindingInfo
}

// ListenRuntime binds a loopback listener on an ephemeral port and serves
// cfg's graph on it until Close.
func ListenRuntime(ctx context.Context, cfg RuntimeConfig) (*Runtime, error) {
	if cfg.Heartbeat <= 0 {
		cfg.Heartbeat = DefaultHeartbeat
	}
	if cfg.Misses <= 0 {
		cfg.Misses = Misses
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", DefaultAddr)
	if err != nil {
		return nil, fmt.Errorf("live runtime: listen: %w", err)
	}
	r := &Runtime{
		cfg: cfg, ln: ln, graph: make(map[string]GraphNode), quit: make(chan struct{}),
		sessions: make(map[string]*rtSession), conns: make(map[net.Conn]bool),
		endpoints: make(map[string]string), gone: make(map[string]bool),
	}
	for _, n := range cfg.Nodes {
		r.graph[n.ID] = n
	}
	r.wg.Add(2)
	go r.acceptLoop()
	go r.watch()
	return r, nil
}

// Addr returns the listener's address, host:port: what RANVIER_CONTROL
// carries.
func (r *Runtime) Addr() string { return r.ln.Addr().String() }

// Report returns what the runtime has concluded so far.
func (r *Runtime) Report() RuntimeReport {
	r.mu.Lock()
	defer r.mu.Unlock()
	rep := RuntimeReport{Refusals: r.refusals}
	for id := range r.sessions {
		rep.Registered = append(rep.Registered, id)
	}
	for id := range r.gone {
		rep.Gone = append(rep.Gone, id)
	}
	sort.Strings(rep.Registered)
	sort.Strings(rep.Gone)
	return rep
}

// Close stops listening, closes every connection and waits for the
// runtime's goroutines.
func (r *Runtime) Close() error {
	var err error
	r.once.Do(func() {
		close(r.quit)
		err = r.ln.Close()
		r.mu.Lock()
		for nc := range r.conns {
			nc.Close()
		}
		r.mu.Unlock()
		r.wg.Wait()
	})
	return err
}

func (r *Runtime) acceptLoop() {
	defer r.wg.Done()
	for {
		nc, err := r.ln.Accept()
		if err != nil {
			return
		}
		r.mu.Lock()
		select {
		case <-r.quit:
			r.mu.Unlock()
			nc.Close()
			return
		default:
		}
		r.conns[nc] = true
		r.mu.Unlock()
		if tc, ok := nc.(*net.TCPConn); ok {
			tc.SetNoDelay(true)
		}
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			r.serve(nc)
		}()
	}
}

// watch declares gone every registered node silent for Misses periods. It
// looks four times a period, so a declaration lands within a quarter period
// of the exact figure.
func (r *Runtime) watch() {
	defer r.wg.Done()
	tick := time.NewTicker(r.cfg.Heartbeat / 4)
	defer tick.Stop()
	limit := time.Duration(r.cfg.Misses) * r.cfg.Heartbeat
	for {
		select {
		case <-r.quit:
			return
		case now := <-tick.C:
			r.mu.Lock()
			for id, s := range r.sessions {
				if now.Sub(s.lastHeard) > limit {
					// §6.5: a report, and nothing more: no Bind, no Stop,
					// no closed connection.
					r.gone[id] = true
				}
			}
			r.mu.Unlock()
		}
	}
}

// errClosing ends a connection the runtime closes on purpose.
var errClosing = errors.New("closing")

// serve runs one control connection until it ends or the runtime closes it.
func (r *Runtime) serve(nc net.Conn) {
	var sess *rtSession
	defer func() {
		nc.Close()
		r.mu.Lock()
		delete(r.conns, nc)
		if sess != nil && r.sessions[sess.node] == sess {
			delete(r.sessions, sess.node)
		}
		r.mu.Unlock()
	}()
	var rd wire.Reader
	buf := make([]byte, 32<<10)
	for {
		n, err := nc.Read(buf)
		rd.Write(buf[:n])
		for {
			payload, ok, ferr := rd.Next()
			if ferr != nil {
				return // §6.2: the connection ends
			}
			if !ok {
				break
			}
			m := new(controlpb.ToRuntime)
			if proto.Unmarshal(payload, m) != nil {
				return // §6.3: a node speaking something else
			}
			var herr error
			sess, herr = r.handle(nc, sess, m)
			if herr != nil {
				return
			}
		}
		if err != nil {
			return // end of stream or a read error: the connection is over
		}
	}
}

// handle acts on one message. sess is the connection's admitted session,
// nil before an accepted Register; handle returns it, updated.
func (r *Runtime) handle(nc net.Conn, sess *rtSession, m *controlpb.ToRuntime) (*rtSession, error) {
	switch v := m.GetMessage().(type) {
	case nil:
		// §6.4: a message with no variant (or one this build does not know,
		// §7.3) does nothing.
		if sess != nil {
			r.heard(sess)
		}
		return sess, nil
	case *controlpb.ToRuntime_Register:
		if sess != nil {
			return sess, errClosing // §5.2: a second Register closes the connection
		}
		return r.register(nc, v.Register)
	}
	if sess == nil {
		return nil, errClosing // §5.2: the first message must be a Register
	}
	r.heard(sess)
	if l, ok := m.GetMessage().(*controlpb.ToRuntime_Listening); ok {
		r.listening(l.Listening)
	}
	return sess, nil
}

func (r *Runtime) heard(s *rtSession) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s.lastHeard = time.Now()
	if r.sessions[s.node] == s {
		delete(r.gone, s.node)
	}
}

// admit is the reference's admission: the five refusals of ranvier-wire
// §5.2, checked in the order the specification lists them.
func (r *Runtime) admit(reg *controlpb.Register) *controlpb.Refuse {
	refuse := func(reason controlpb.RefuseReason, format string, args ...any) *controlpb.Refuse {
		return &controlpb.Refuse{Reason: reason, Detail: fmt.Sprintf(format, args...)}
	}
	if reg.GetProtocol() != Protocol {
		return refuse(controlpb.RefuseReason_REFUSE_REASON_PROTOCOL, "protocol %d: this runtime speaks %d", reg.GetProtocol(), Protocol)
	}
	if reg.GetToken() != r.cfg.Token {
		return refuse(controlpb.RefuseReason_REFUSE_REASON_TOKEN, "the token is not this session's")
	}
	g, ok := r.graph[reg.GetNodeId()]
	if !ok {
		return refuse(controlpb.RefuseReason_REFUSE_REASON_UNKNOWN_NODE, "node %q is not in the graph", reg.GetNodeId())
	}
	if !samePorts(g.Ports, g.DeclaredPorts) {
		return refuse(controlpb.RefuseReason_REFUSE_REASON_PORT_DRIFT, "node %q declares ports %v; the graph wires %v", g.ID, g.DeclaredPorts, g.Ports)
	}
	r.mu.Lock()
	_, taken := r.sessions[g.ID]
	r.mu.Unlock()
	if taken {
		return refuse(controlpb.RefuseReason_REFUSE_REASON_ALREADY_REGISTERED, "node %q is registered on another connection", g.ID)
	}
	return nil
}

func samePorts(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(slices.Compact(a), slices.Compact(b))
}

// register admits or refuses a Register. A refusal is sent, then the
// connection closes (§5.2).
func (r *Runtime) register(nc net.Conn, reg *controlpb.Register) (*rtSession, error) {
	var refusal *controlpb.Refuse
	if r.cfg.Admit != nil {
		refusal = r.cfg.Admit(reg, r.admit)
	} else {
		refusal = r.admit(reg)
	}
	if refusal != nil {
		r.mu.Lock()
		r.refusals++
		r.mu.Unlock()
		s := &rtSession{nc: nc}
		s.send(&controlpb.ToNode{Message: &controlpb.ToNode_Refuse{Refuse: refusal}}, r.quit)
		return nil, errClosing
	}
	s := &rtSession{node: reg.GetNodeId(), nc: nc, lastHeard: time.Now()}
	r.mu.Lock()
	if _, taken := r.sessions[s.node]; taken {
		// Admitted concurrently on another connection: the first holds.
		r.refusals++
		r.mu.Unlock()
		s.send(&controlpb.ToNode{Message: &controlpb.ToNode_Refuse{Refuse: &controlpb.Refuse{
			Reason: controlpb.RefuseReason_REFUSE_REASON_ALREADY_REGISTERED, Detail: "registered concurrently"}}}, r.quit)
		return nil, errClosing
	}
	r.sessions[s.node] = s
	delete(r.gone, s.node)
	bind := r.bindLocked(s.node)
	s.lastBind = bind.GetBind().GetBindings()
	r.mu.Unlock()
	if err := s.send(bind, r.quit); err != nil {
		return s, err
	}
	return s, nil
}

// bindLocked builds node's Bind: every input, from the address a Listening
// named for its stream, or empty while none has (§5.2).
func (r *Runtime) bindLocked(node string) *controlpb.ToNode {
	b := &controlpb.Bind{HeartbeatPeriodMs: uint32(r.cfg.Heartbeat / time.Millisecond)}
	for _, in := range r.graph[node].Inputs {
		b.Bindings = append(b.Bindings, &controlpb.BindingInfo{Port: in.Port, StreamName: in.StreamName, From: r.endpoints[in.StreamName]})
	}
	return &controlpb.ToNode{Message: &controlpb.ToNode_Bind{Bind: b}}
}

// listening records the endpoints a node named and sends a fresh Bind to
// every registered node whose bindings they change (§5.2).
func (r *Runtime) listening(l *controlpb.Listening) {
	type out struct {
		s *rtSession
		m *controlpb.ToNode
	}
	var outs []out
	r.mu.Lock()
	for _, e := range l.GetEndpoints() {
		r.endpoints[e.GetStreamName()] = e.GetAddress()
	}
	for id, s := range r.sessions {
		m := r.bindLocked(id)
		if bindingsEqual(m.GetBind().GetBindings(), s.lastBind) {
			continue
		}
		s.lastBind = m.GetBind().GetBindings()
		outs = append(outs, out{s, m})
	}
	r.mu.Unlock()
	for _, o := range outs {
		o.s.send(o.m, r.quit)
	}
}

func bindingsEqual(a, b []*controlpb.BindingInfo) bool {
	return slices.EqualFunc(a, b, func(x, y *controlpb.BindingInfo) bool { return proto.Equal(x, y) })
}

// send writes one ToNode, patiently (§6.5).
func (s *rtSession) send(m *controlpb.ToNode, quit <-chan struct{}) error {
	payload, err := wire.Encode(m)
	if err != nil {
		return fmt.Errorf("live runtime: encoding %v: %w", m, err)
	}
	b, err := wire.AppendFrame(nil, payload)
	if err != nil {
		return fmt.Errorf("live runtime: framing: %w", err)
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if err := WritePatient(s.nc, b, DefaultPatience, quit); err != nil {
		return fmt.Errorf("live runtime: sending to node %q: %w", s.node, err)
	}
	return nil
}
