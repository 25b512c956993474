package impl

import (
	"context"
	"fmt"
	"time"

	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/ref/graph"
	"github.com/conform-suite/conform/ref/tlv"
)

// GraphParts are the swappable parts of the libtracer graph model (profile
// graph). A script drives one GraphModel; the reference's is a *graph.Graph.
type GraphParts struct {
	// New returns a fresh graph holding only its root, whose policy grants
	// every right to every principal; each script runs on its own.
	New func() GraphModel
}

// A GraphModel is the graph a script drives: every operation a step performs,
// each with the meaning ref/graph documents for *graph.Graph. A mutant
// wraps the reference's (sut/mutant), so that what a step answers or
// delivers is transformed outside the reference.
type GraphModel interface {
	Register(path string, h *graph.Handler) error
	Write(c graph.Caller, addr string, value *tlv.Node) error
	Read(c graph.Caller, addr string) (*tlv.Node, error)
	Await(c graph.Caller, addr string, timeout time.Duration) (*graph.Waiter, error)
	Assign(path string, value *tlv.Node) error
	Propagate(path string, e graph.Emission) error
	Retire(c graph.Caller, path string) error
	EvictLinkEdges(link string) int
	SetDeliveryMode(path string, m graph.DeliveryMode) error
	SetHistoryDepth(path string, keep int) error
	DeclareAppFields(path string, fields []graph.AppField) error
	SetACL(path string, a *graph.ACL) error
	ApplyFwd(c graph.Caller, frame *tlv.Node) (*tlv.Node, *graph.Waiter, error)
	TakeDeliveries() []graph.Delivery
}

// referenceGraph returns the reference's graph parts and declares the profile.
func referenceGraph(im *Impl) GraphParts {
	im.Profiles = append(im.Profiles, "graph")
	return GraphParts{New: func() GraphModel { return graph.New(graph.Config{}) }}
}

// MaxGraphSteps bounds the steps of one script, so that a corrupt request
// cannot keep the reference busy without limit.
const MaxGraphSteps = 4096

// graph answers one graph op.
func (im *Impl) graph(ctx context.Context, op *conformpb.GraphOp) (*conformpb.GraphResult, error) {
	switch o := op.GetOp().(type) {
	case *conformpb.GraphOp_Run:
		r := &conformpb.GraphRunResult{}
		for _, s := range o.Run.GetScripts() {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			r.Outputs = append(r.Outputs, im.runGraphScript(s))
		}
		return &conformpb.GraphResult{Result: &conformpb.GraphResult_Run{Run: r}}, nil
	}
	return nil, &UnimplementedError{Detail: fmt.Sprintf("graph op %T", op.GetOp())}
}

// graphAwait is an await a script registered, until it completes.
type graphAwait struct {
	step int
	w    *graph.Waiter
	fwd  *tlv.Fwd // the FWD{AWAIT} it answers, for a fwd step
}

// graphRun is one script running on its graph.
type graphRun struct {
	g       GraphModel
	callers map[string]graph.Caller
	awaits  []graphAwait
}

// runGraphScript runs one script on a fresh graph.
func (im *Impl) runGraphScript(s *conformpb.GraphScript) *conformpb.GraphScriptOutput {
	out := &conformpb.GraphScriptOutput{}
	if len(s.GetSteps()) > MaxGraphSteps {
		out.Error = fmt.Sprintf("%d steps exceed the %d-step limit", len(s.GetSteps()), MaxGraphSteps)
		return out
	}
	r := &graphRun{g: im.Graph.New(), callers: map[string]graph.Caller{"": graph.Owner()}}
	for _, c := range s.GetCallers() {
		if _, dup := r.callers[c.GetName()]; dup {
			out.Error = fmt.Sprintf("caller %q named twice (the empty name is the owner)", c.GetName())
			return out
		}
		switch c.GetKind() {
		case conformpb.GraphCallerKind_GRAPH_CALLER_OWNER:
			r.callers[c.GetName()] = graph.Owner()
		case conformpb.GraphCallerKind_GRAPH_CALLER_LOCAL:
			r.callers[c.GetName()] = graph.Local(c.GetName())
		case conformpb.GraphCallerKind_GRAPH_CALLER_REMOTE:
			r.callers[c.GetName()] = graph.Peer(c.GetName(), c.GetLink())
		default:
			out.Error = fmt.Sprintf("caller %q: unknown kind %d", c.GetName(), c.GetKind())
			return out
		}
	}
	for i, st := range s.GetSteps() {
		reply, err := r.step(i, st)
		if err != nil {
			out.Error = fmt.Sprintf("step %d: %v", i, err)
			return out
		}
		for _, d := range r.g.TakeDeliveries() {
			reply.Deliveries = append(reply.Deliveries, &conformpb.GraphDelivery{
				Vertex: d.Vertex, Slot: uint32(d.Slot), Target: d.Target, Tlv: d.TLV})
		}
		reply.Wakes = r.completed()
		out.Replies = append(out.Replies, reply)
	}
	return out
}

// completed returns the awaits that have completed since the last call, in
// the order they were registered.
func (r *graphRun) completed() []*conformpb.GraphWake {
	var wakes []*conformpb.GraphWake
	kept := r.awaits[:0]
	for _, a := range r.awaits {
		if !a.w.Done() {
			kept = append(kept, a)
			continue
		}
		v, err := a.w.Result()
		wake := &conformpb.GraphWake{Step: uint32(a.step)}
		if a.fwd != nil {
			wake.Value = graph.ReplyFrame(*a.fwd, v, err).Bytes()
		} else {
			wake.Status, wake.Value = statusReply(v, err)
		}
		wakes = append(wakes, wake)
	}
	r.awaits = kept
	return wakes
}

// statusReply turns an answer into a reply's status and value.
func statusReply(v *tlv.Node, err error) (uint32, []byte) {
	if err != nil {
		st, ok := graph.StatusOf(err)
		if !ok || st == tlv.StatusOK {
			st = tlv.StatusMalformed
		}
		return uint32(st), nil
	}
	if v == nil {
		return 0, nil
	}
	return 0, v.Bytes()
}

func (r *graphRun) caller(name string) (graph.Caller, error) {
	c, ok := r.callers[name]
	if !ok {
		return graph.Caller{}, fmt.Errorf("caller %q is not one of the script's", name)
	}
	return c, nil
}

// tlvArg decodes a step's TLV argument; bytes that are not one TLV are the
// step's refusal, tr::tlv::malformed or the decoder's status.
func tlvArg(b []byte) (*tlv.Node, error) {
	n, err := tlv.Decode(tlv.NewRope(b))
	if err != nil {
		return nil, err
	}
	return n, nil
}

// step performs one step. A refusal by the graph is the reply's status; the
// error is for a step that cannot be performed at all.
func (r *graphRun) step(i int, st *conformpb.GraphStep) (*conformpb.GraphReply, error) {
	reply := &conformpb.GraphReply{}
	answer := func(v *tlv.Node, err error) (*conformpb.GraphReply, error) {
		reply.Status, reply.Value = statusReply(v, err)
		return reply, nil
	}
	g := r.g
	switch s := st.GetStep().(type) {
	case *conformpb.GraphStep_Register:
		var h *graph.Handler
		if s.Register.GetHandler() {
			h = &graph.Handler{}
			if b := s.Register.GetOnRead(); len(b) > 0 {
				n, err := tlvArg(b)
				if err != nil {
					return nil, fmt.Errorf("on_read: %w", err)
				}
				h.OnRead = func() *tlv.Node { return n }
			}
		}
		return answer(nil, g.Register(s.Register.GetPath(), h))
	case *conformpb.GraphStep_Write:
		c, err := r.caller(s.Write.GetCaller())
		if err != nil {
			return nil, err
		}
		v, err := tlvArg(s.Write.GetValue())
		if err != nil {
			return answer(nil, err)
		}
		return answer(nil, g.Write(c, s.Write.GetAddress(), v))
	case *conformpb.GraphStep_Read:
		c, err := r.caller(s.Read.GetCaller())
		if err != nil {
			return nil, err
		}
		return answer(g.Read(c, s.Read.GetAddress()))
	case *conformpb.GraphStep_Await:
		c, err := r.caller(s.Await.GetCaller())
		if err != nil {
			return nil, err
		}
		w, err := g.Await(c, s.Await.GetAddress(), 0)
		if err != nil {
			return answer(nil, err)
		}
		r.awaits = append(r.awaits, graphAwait{step: i, w: w})
		reply.Pending = true
		return reply, nil
	case *conformpb.GraphStep_Subscribe:
		c, err := r.caller(s.Subscribe.GetCaller())
		if err != nil {
			return nil, err
		}
		v, err := tlvArg(s.Subscribe.GetSubscriber())
		if err != nil {
			return answer(nil, err)
		}
		path := s.Subscribe.GetPath()
		a, err := graph.ParseAddress(path)
		if err == nil && a.HasField {
			err = &graph.Error{Op: "subscribe", Addr: path, Status: tlv.StatusPathInvalid, Reason: "a subscribe takes a vertex"}
		}
		if err != nil {
			return answer(nil, err)
		}
		return answer(nil, g.Write(c, path+":subscribers[]", v))
	case *conformpb.GraphStep_Assign:
		v, err := tlvArg(s.Assign.GetValue())
		if err != nil {
			return answer(nil, err)
		}
		return answer(nil, g.Assign(s.Assign.GetPath(), v))
	case *conformpb.GraphStep_Propagate:
		e := graph.EmitEach
		if s.Propagate.GetFold() {
			e = graph.EmitFold
		}
		return answer(nil, g.Propagate(s.Propagate.GetPath(), e))
	case *conformpb.GraphStep_Retire:
		c, err := r.caller(s.Retire.GetCaller())
		if err != nil {
			return nil, err
		}
		return answer(nil, g.Retire(c, s.Retire.GetPath()))
	case *conformpb.GraphStep_Evict:
		reply.Count = uint64(g.EvictLinkEdges(s.Evict.GetLink()))
		return reply, nil
	case *conformpb.GraphStep_SetMode:
		return answer(nil, g.SetDeliveryMode(s.SetMode.GetPath(), graph.DeliveryMode(s.SetMode.GetMode())))
	case *conformpb.GraphStep_SetHistoryDepth:
		keep := s.SetHistoryDepth.GetKeep()
		if keep > 1<<20 {
			return nil, fmt.Errorf("history depth %d exceeds 2^20", keep)
		}
		return answer(nil, g.SetHistoryDepth(s.SetHistoryDepth.GetPath(), int(keep)))
	case *conformpb.GraphStep_DeclareAppFields:
		var fields []graph.AppField
		for _, f := range s.DeclareAppFields.GetFields() {
			af := graph.AppField{Name: f.GetName(), Access: graph.Access(f.GetAccess()), Descriptor: f.GetFieldDescriptor()}
			if b := f.GetInitial(); len(b) > 0 {
				n, err := tlvArg(b)
				if err != nil {
					return nil, fmt.Errorf("app field %q: initial: %w", f.GetName(), err)
				}
				af.Initial = n
			}
			fields = append(fields, af)
		}
		return answer(nil, g.DeclareAppFields(s.DeclareAppFields.GetPath(), fields))
	case *conformpb.GraphStep_SetAcl:
		a := &graph.ACL{Default: graph.Rights(s.SetAcl.GetDefaultRights())}
		for _, gr := range s.SetAcl.GetGrants() {
			if a.Grants == nil {
				a.Grants = map[string]graph.Rights{}
			}
			a.Grants[gr.GetPrincipal()] = graph.Rights(gr.GetRights())
		}
		return answer(nil, g.SetACL(s.SetAcl.GetPath(), a))
	case *conformpb.GraphStep_Fwd:
		c, err := r.caller(s.Fwd.GetCaller())
		if err != nil {
			return nil, err
		}
		if !c.Remote {
			return nil, fmt.Errorf("a fwd step's caller %q is not remote", s.Fwd.GetCaller())
		}
		frame, err := tlvArg(s.Fwd.GetFrame())
		if err != nil {
			return answer(nil, err)
		}
		rep, w, err := g.ApplyFwd(c, frame)
		if err != nil {
			return answer(nil, err)
		}
		if w != nil {
			f, _ := tlv.DecodeFwd(frame)
			r.awaits = append(r.awaits, graphAwait{step: i, w: w, fwd: &f})
			reply.Pending = true
			return reply, nil
		}
		reply.Value = rep.Bytes()
		return reply, nil
	}
	return nil, fmt.Errorf("unknown step %T", st.GetStep())
}
