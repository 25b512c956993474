package peer

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"sort"
	"time"

	controlpb "github.com/conform-suite/conform/proto/ranvier/control/v1"
	messagepb "github.com/conform-suite/conform/proto/ranvier/message/v1"
	"google.golang.org/protobuf/proto"
)

// MarkRequest labels the mark PeerSubscriber.SendRequest makes just before it
// sends the Request.
const MarkRequest = "request"

// PeerPublisher plays a data-plane publisher: it listens on loopback and the
// implementation under test dials it as a subscriber (ranvier-wire §3.3).
type PeerPublisher struct {
	a *acceptor
}

// ListenPublisher listens on 127.0.0.1 on an ephemeral port.
func ListenPublisher(ctx context.Context, limits Limits) (*PeerPublisher, error) {
	a, err := listen(ctx, limits)
	if err != nil {
		return nil, err
	}
	return &PeerPublisher{a: a}, nil
}

// Addr returns the address the subscriber under test dials, host:port.
func (p *PeerPublisher) Addr() string { return p.a.ln.Addr().String() }

// Accept returns the next subscriber connection. Its transcript records what
// the subscriber sends: its Request, and anything it should not send.
func (p *PeerPublisher) Accept(ctx context.Context) (*Conn, error) { return p.a.accept(ctx) }

// Close stops listening, closes every accepted connection, and waits for
// their goroutines.
func (p *PeerPublisher) Close() error { return p.a.close() }

// RequestCheck is what a subscriber sent on a connection, judged against
// ranvier-wire §4.1: one Request as the first frame, and nothing else.
type RequestCheck struct {
	// Arrived reports that a first frame arrived; At is when.
	Arrived bool
	At      time.Time
	// Payload is the first frame's payload.
	Payload []byte
	// Request is the first frame decoded as a Request; DecodeErr is set when
	// it did not decode.
	Request   *messagepb.Request
	DecodeErr error
	// ExtraFrames counts frames after the first; ExtraBytes counts every
	// byte after the first frame, whole frames or not.
	ExtraFrames int
	ExtraBytes  int64
}

// Request judges the transcript of a subscriber connection: the first frame
// as a Request, and whatever followed it.
func (t Transcript) Request() RequestCheck {
	var rc RequestCheck
	if len(t.Frames) == 0 {
		return rc
	}
	f := t.Frames[0]
	rc.Arrived, rc.At, rc.Payload = true, f.At, f.Payload
	req := new(messagepb.Request)
	if err := proto.Unmarshal(f.Payload, req); err != nil {
		rc.DecodeErr = err
	} else {
		rc.Request = req
	}
	rc.ExtraFrames = t.FrameCount - 1
	rc.ExtraBytes = t.Bytes - int64(4+len(f.Payload))
	return rc
}

// WaitRequest waits for the subscriber's first frame and returns the check
// of it as it stands then.
func (c *Conn) WaitRequest(ctx context.Context) (RequestCheck, error) {
	t, err := c.WaitFrames(ctx, 1)
	if err != nil {
		return t.Request(), fmt.Errorf("peer: waiting for the Request: %w", err)
	}
	return t.Request(), nil
}

// DataFrame is one data-plane frame decoded.
type DataFrame struct {
	Frame
	// Msg is the decoded Frame; Err is set when the payload did not decode.
	Msg *messagepb.Frame
	Err error
}

// DataFrames decodes every kept frame as a ranvier.message.v1.Frame.
func (t Transcript) DataFrames() []DataFrame {
	out := make([]DataFrame, 0, len(t.Frames))
	for _, f := range t.Frames {
		m := new(messagepb.Frame)
		df := DataFrame{Frame: f}
		if err := proto.Unmarshal(f.Payload, m); err != nil {
			df.Err = err
		} else {
			df.Msg = m
		}
		out = append(out, df)
	}
	return out
}

// ControlMessage is one ToRuntime frame decoded.
type ControlMessage struct {
	Frame
	// Msg is the decoded ToRuntime; Err is set when the payload did not
	// decode.
	Msg *controlpb.ToRuntime
	Err error
}

// ControlMessages decodes every kept frame as a ranvier.control.v1.ToRuntime.
func (t Transcript) ControlMessages() []ControlMessage {
	out := make([]ControlMessage, 0, len(t.Frames))
	for _, f := range t.Frames {
		m := new(controlpb.ToRuntime)
		cm := ControlMessage{Frame: f}
		if err := proto.Unmarshal(f.Payload, m); err != nil {
			cm.Err = err
		} else {
			cm.Msg = m
		}
		out = append(out, cm)
	}
	return out
}

// PeerSubscriber plays a data-plane subscriber: it dials the publisher under
// test and records everything it sends, from the moment of the dial, so that
// anything sent before the Request shows.
type PeerSubscriber struct {
	*Conn
}

// DialPublisher dials the publisher at addr and starts recording. It sends
// nothing until SendRequest. readBuffer, when positive, sets the socket's
// receive buffer before the connection is made (on Unix), so that a paused
// reader pushes back on the publisher after little data.
func DialPublisher(ctx context.Context, addr string, readBuffer int, limits Limits) (*PeerSubscriber, error) {
	var d net.Dialer
	if readBuffer > 0 {
		d.Control = setReadBuffer(readBuffer)
	}
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("peer: dial publisher %s: %w", addr, err)
	}
	return &PeerSubscriber{Conn: newConn(nc.(*net.TCPConn), limits)}, nil
}

// SendRequest marks MarkRequest in the transcript, then sends
// Request{stream_name: name} followed, in the same write, by extra — bytes a
// publisher must never read (ranvier-wire §4.1). extra may be nil.
func (s *PeerSubscriber) SendRequest(ctx context.Context, name string, extra []byte) error {
	b, err := EncodeFrame(&messagepb.Request{StreamName: name})
	if err != nil {
		return err
	}
	s.Mark(MarkRequest)
	return s.Send(ctx, append(b, extra...))
}

// Runtime plays a control-plane runtime: it listens on loopback, produces
// the environment a node is launched with, and accepts the node's
// connections (ranvier-wire §3.2, §5).
type Runtime struct {
	a             *acceptor
	token, nodeID string
	params        string
	extra         map[string]string
}

// RuntimeConfig configures a Runtime. Empty fields take defaults.
type RuntimeConfig struct {
	// Token is RANVIER_TOKEN; empty means 16 random bytes in hex.
	Token string
	// NodeID is RANVIER_NODE_ID; empty means "node".
	NodeID string
	// Params is RANVIER_PARAMS, a JSON object; empty means "{}".
	Params string
	// ExtraEnv is added to the environment as is, such as a decoy
	// RANVIER_BINDINGS a node must ignore.
	ExtraEnv map[string]string
	// Limits bound each connection's transcript.
	Limits Limits
}

// ListenRuntime listens on 127.0.0.1 on an ephemeral port.
func ListenRuntime(ctx context.Context, cfg RuntimeConfig) (*Runtime, error) {
	if cfg.Token == "" {
		var b [16]byte
		rand.Read(b[:])
		cfg.Token = hex.EncodeToString(b[:])
	}
	if cfg.NodeID == "" {
		cfg.NodeID = "node"
	}
	if cfg.Params == "" {
		cfg.Params = "{}"
	}
	a, err := listen(ctx, cfg.Limits)
	if err != nil {
		return nil, err
	}
	return &Runtime{a: a, token: cfg.Token, nodeID: cfg.NodeID, params: cfg.Params, extra: cfg.ExtraEnv}, nil
}

// Addr returns the runtime's listener, host:port.
func (r *Runtime) Addr() string { return r.a.ln.Addr().String() }

// Token returns the connection token a node must present.
func (r *Runtime) Token() string { return r.token }

// NodeID returns the node identity the runtime hands out.
func (r *Runtime) NodeID() string { return r.nodeID }

// Vars returns the four RANVIER_* variables (ranvier-wire §3.2) and any
// extra ones.
func (r *Runtime) Vars() map[string]string {
	v := map[string]string{
		"RANVIER_CONTROL": r.Addr(),
		"RANVIER_TOKEN":   r.token,
		"RANVIER_NODE_ID": r.nodeID,
		"RANVIER_PARAMS":  r.params,
	}
	for k, x := range r.extra {
		v[k] = x
	}
	return v
}

// Env returns Vars as KEY=value strings, sorted, ready to append to a
// process's environment.
func (r *Runtime) Env() []string {
	var out []string
	for k, v := range r.Vars() {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// Getenv looks a variable up in Vars, in the shape of os.Getenv.
func (r *Runtime) Getenv(key string) string { return r.Vars()[key] }

// Accept returns the next node connection. Its transcript records every
// ToRuntime frame with its arrival time; read it with ControlMessages.
func (r *Runtime) Accept(ctx context.Context) (*Conn, error) { return r.a.accept(ctx) }

// Close stops listening, closes every accepted connection, and waits for
// their goroutines.
func (r *Runtime) Close() error { return r.a.close() }

// Bind returns the framed ToNode{bind}.
func Bind(heartbeatMs uint32, bindings ...*controlpb.BindingInfo) []byte {
	return MustFrame(&controlpb.ToNode{Message: &controlpb.ToNode_Bind{Bind: &controlpb.Bind{
		Bindings: bindings, HeartbeatPeriodMs: heartbeatMs,
	}}})
}

// Refuse returns the framed ToNode{refuse}.
func Refuse(reason controlpb.RefuseReason, detail string) []byte {
	return MustFrame(&controlpb.ToNode{Message: &controlpb.ToNode_Refuse{Refuse: &controlpb.Refuse{Reason: reason, Detail: detail}}})
}

// Transport returns the framed ToNode{transport}.
func Transport(action controlpb.TransportAction) []byte {
	return MustFrame(&controlpb.ToNode{Message: &controlpb.ToNode_Transport{Transport: &controlpb.Transport{Action: action}}})
}

// Stop returns the framed ToNode{stop}.
func Stop(deadlineMs uint32) []byte {
	return MustFrame(&controlpb.ToNode{Message: &controlpb.ToNode_Stop{Stop: &controlpb.Stop{DeadlineMs: deadlineMs}}})
}

// Announce returns the framed Frame{announce}.
func Announce(info *messagepb.StreamInfo) []byte {
	return MustFrame(&messagepb.Frame{Payload: &messagepb.Frame_Announce{Announce: info}})
}

// Sample returns the framed Frame{sample}.
func Sample(s *messagepb.Sample) []byte {
	return MustFrame(&messagepb.Frame{Payload: &messagepb.Frame_Sample{Sample: s}})
}

// Garbage returns a well-framed payload that is not a valid protobuf message:
// a field 1 of wire type 2 whose length runs past the end (ranvier-wire §6.3,
// §7.5).
func Garbage() []byte { return RawFrame([]byte{0x0a, 0x05, 0x01}) }
