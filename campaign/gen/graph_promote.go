package gen

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/conform-suite/conform/corpus"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/ref/tlv"
	"google.golang.org/protobuf/proto"
)

// graphModeNames are corpus.GraphStep's mode spellings.
var graphModeNames = map[conformpb.GraphDeliveryMode]string{
	conformpb.GraphDeliveryMode_GRAPH_DELIVERY_IF_NEWER:      "if_newer",
	conformpb.GraphDeliveryMode_GRAPH_DELIVERY_UNCONDITIONAL: "unconditional",
	conformpb.GraphDeliveryMode_GRAPH_DELIVERY_EXPLICIT:      "explicit",
}

// PromoteGraphRun writes a graph.run input as a graph vector
// (corpus/graph/v1) when every step of its script has a vector spelling.
func PromoteGraphRun(in proto.Message, v Vector, answer Answer) (any, error) {
	run, ok := in.(*conformpb.GraphRun)
	if !ok || len(run.GetScripts()) != 1 {
		return nil, fmt.Errorf("a graph vector holds one script, not %T", in)
	}
	out, err := answer(in)
	if err != nil {
		return nil, err
	}
	gv, err := promoteGraph(run.Scripts[0], out.(*conformpb.GraphScriptOutput))
	if err != nil {
		return nil, err
	}
	gv.ID, gv.Spec, gv.Title, gv.Tags = v.ID, v.Spec, v.Title, []string{"fuzz"}
	return gv, nil
}

// promoteGraph writes a graph script as a graph vector: its callers, its
// steps, and what the reference answered to each as the step's expectation.
// The vector format (corpus/graph.go) has no spelling for ACLs, app-field
// tables, history depths, FWD frames, or a subscription with settings; a
// script that uses one is refused, naming the step, so that the vector
// never says less than the finding.
func promoteGraph(in *conformpb.GraphScript, out *conformpb.GraphScriptOutput) (*corpus.GraphVector, error) {
	if out.GetError() != "" {
		return nil, fmt.Errorf("the reference could not run the script (%s); it makes no vector", out.GetError())
	}
	if len(out.GetReplies()) != len(in.GetSteps()) {
		return nil, fmt.Errorf("the reference answered %d replies for %d steps", len(out.GetReplies()), len(in.GetSteps()))
	}
	v := &corpus.GraphVector{}
	for _, c := range in.GetCallers() {
		kind := "local"
		switch c.GetKind() {
		case conformpb.GraphCallerKind_GRAPH_CALLER_REMOTE:
			kind = "remote"
		case conformpb.GraphCallerKind_GRAPH_CALLER_OWNER:
			return nil, fmt.Errorf("caller %q is an owner by kind; a graph vector's callers are local or remote", c.GetName())
		}
		v.Callers = append(v.Callers, corpus.GraphCaller{Name: c.GetName(), Kind: kind, Link: c.GetLink()})
	}
	for i, st := range in.GetSteps() {
		var s corpus.GraphStep
		switch x := st.GetStep().(type) {
		case *conformpb.GraphStep_Register:
			s = corpus.GraphStep{Op: "register", Path: x.Register.GetPath()}
			if x.Register.GetHandler() {
				s.Op, s.Value = "handler", x.Register.GetOnRead()
			} else if len(x.Register.GetOnRead()) > 0 {
				return nil, fmt.Errorf("step %d: an on_read on a vertex that is not a handler has no vector spelling", i)
			}
		case *conformpb.GraphStep_Write:
			s = corpus.GraphStep{Op: "write", Caller: x.Write.GetCaller(), Path: x.Write.GetAddress(), Value: x.Write.GetValue()}
		case *conformpb.GraphStep_Read:
			s = corpus.GraphStep{Op: "read", Caller: x.Read.GetCaller(), Path: x.Read.GetAddress()}
		case *conformpb.GraphStep_Await:
			s = corpus.GraphStep{Op: "await", Caller: x.Await.GetCaller(), Path: x.Await.GetAddress()}
		case *conformpb.GraphStep_Subscribe:
			target, ok := plainSubscriber(x.Subscribe.GetSubscriber())
			if !ok {
				return nil, fmt.Errorf("step %d: a vector subscribes with SUBSCRIBER{PATH target} only, not %x", i, x.Subscribe.GetSubscriber())
			}
			s = corpus.GraphStep{Op: "subscribe", Caller: x.Subscribe.GetCaller(), Path: x.Subscribe.GetPath(), Target: target}
		case *conformpb.GraphStep_Assign:
			s = corpus.GraphStep{Op: "assign", Path: x.Assign.GetPath(), Value: x.Assign.GetValue()}
		case *conformpb.GraphStep_Propagate:
			s = corpus.GraphStep{Op: "propagate", Path: x.Propagate.GetPath()}
			if x.Propagate.GetFold() {
				s.Op = "fold"
			}
		case *conformpb.GraphStep_Retire:
			s = corpus.GraphStep{Op: "retire", Caller: x.Retire.GetCaller(), Path: x.Retire.GetPath()}
		case *conformpb.GraphStep_Evict:
			s = corpus.GraphStep{Op: "evict", Link: x.Evict.GetLink()}
		case *conformpb.GraphStep_SetMode:
			m, ok := graphModeNames[x.SetMode.GetMode()]
			if !ok {
				return nil, fmt.Errorf("step %d: delivery mode %d has no vector spelling", i, x.SetMode.GetMode())
			}
			s = corpus.GraphStep{Op: "mode", Path: x.SetMode.GetPath(), Mode: m}
		default:
			return nil, fmt.Errorf("step %d: a %T step has no graph vector spelling (corpus/graph.go)", i, st.GetStep())
		}
		s.Expect = graphExpect(out.GetReplies()[i])
		v.Steps = append(v.Steps, s)
	}
	if _, err := v.Script(); err != nil {
		return nil, fmt.Errorf("the vector does not read back: %w", err)
	}
	return v, nil
}

func graphExpect(r *conformpb.GraphReply) *corpus.GraphExpect {
	e := &corpus.GraphExpect{Status: "ok", Value: r.GetValue(), Deliveries: []corpus.GraphDelivery{}}
	if r.GetStatus() != 0 {
		e.Status = fmt.Sprintf("0x%04x", r.GetStatus())
	}
	for _, d := range r.GetDeliveries() {
		e.Deliveries = append(e.Deliveries, corpus.GraphDelivery{At: d.GetVertex(), Target: d.GetTarget(), TLV: d.GetTlv()})
	}
	for _, w := range r.GetWakes() {
		e.Wakes = append(e.Wakes, corpus.GraphWakeExpect{Step: int(w.GetStep()), Value: w.GetValue()})
	}
	return e
}

// plainSubscriber returns the target of b when b is exactly the
// SUBSCRIBER{PATH target} a vector's subscribe step sends.
func plainSubscriber(b []byte) (string, bool) {
	n, err := tlv.Decode(tlv.NewRope(b))
	if err != nil {
		return "", false
	}
	sub, err := tlv.DecodeSubscriber(n)
	if err != nil || sub.HasSettings {
		return "", false
	}
	target, err := tlv.PathString(sub.Target)
	if err != nil || strings.Contains(target, "\x00") {
		return "", false
	}
	return target, bytes.Equal(corpus.SubscriberTo(target), b)
}
