package corpus

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	conformpb "github.com/conform-suite/conform/proto/conform/v1"
)

// GraphVersion is the version of the graph vectors the cases use.
const GraphVersion = "graph/v1"

// GraphVector is one golden vector of the graph suite: a script of graph
// operations run on a fresh graph, with what some of its steps must answer
// and deliver. The expectations were written from the graph model's words
// (each vector cites the section) and RECONSTRUCTED §2's layouts, never from
// running the reference.
type GraphVector struct {
	// ID is the vector's stable name, for example graph/v1/write-bubbles-up.
	ID    string   `json:"id"`
	Spec  string   `json:"spec"`
	Title string   `json:"title"`
	Tags  []string `json:"tags,omitempty"`
	// Callers are the script's named callers; the empty name is the owner.
	Callers []GraphCaller `json:"callers,omitempty"`
	Steps   []GraphStep   `json:"steps"`
}

// VectorID returns v's ID.
func (v *GraphVector) VectorID() string { return v.ID }

// GraphCaller is a named caller: Kind is local or remote; a remote caller's
// operations arrive over Link.
type GraphCaller struct {
	Name string `json:"name"`
	Kind string `json:"kind"`
	Link string `json:"link,omitempty"`
}

// GraphStep is one operation and, when Expect is set, what it must answer.
// Op is one of register, handler (a vertex that retains nothing), write,
// read, await, subscribe (append SUBSCRIBER{PATH target} to the path's
// :subscribers[]), assign, propagate, fold (propagate with the FOLD
// emission), retire, evict and mode.
type GraphStep struct {
	Op     string `json:"op"`
	Caller string `json:"caller,omitempty"`
	// Path is the vertex, or for write, read and await the address (a path and
	// an optional field selector).
	Path   string `json:"path,omitempty"`
	Value  Bytes  `json:"value,omitempty"`
	Target string `json:"target,omitempty"`
	// Mode is if_newer, unconditional or explicit; Link names a link to evict.
	Mode   string       `json:"mode,omitempty"`
	Link   string       `json:"link,omitempty"`
	Expect *GraphExpect `json:"expect,omitempty"`
}

// GraphExpect is what a step must answer: its status ("ok" or "0xNNNN
// name"), the bytes it serves when Value is set, and exactly the deliveries
// listed (none when the list is empty), in any order.
type GraphExpect struct {
	Status     string          `json:"status"`
	Value      Bytes           `json:"value,omitempty"`
	Deliveries []GraphDelivery `json:"deliveries"`
	// Wakes lists the await steps this step completes (none when empty).
	Wakes []GraphWakeExpect `json:"wakes,omitempty"`
}

// StatusCode returns the expected status, 0 for ok.
func (e *GraphExpect) StatusCode() (uint32, error) {
	if e.Status == "ok" {
		return 0, nil
	}
	code, _, _ := strings.Cut(e.Status, " ")
	n, err := strconv.ParseUint(code, 0, 16)
	if err != nil || n == 0 {
		return 0, fmt.Errorf("bad status %q: want ok or \"0xNNNN name\"", e.Status)
	}
	return uint32(n), nil
}

// GraphDelivery is a delivery: the vertex holding the edge, the edge's
// target, and the TLV.
type GraphDelivery struct {
	At     string `json:"at"`
	Target string `json:"target"`
	TLV    Bytes  `json:"tlv"`
}

// GraphWakeExpect is an await completed: the await's step, and its value.
type GraphWakeExpect struct {
	Step  int   `json:"step"`
	Value Bytes `json:"value"`
}

// Graph loads the graph vectors and checks that each converts to a script.
func Graph() (*Set[*GraphVector], error) {
	s, err := Load[*GraphVector](GraphVersion)
	if err != nil {
		return nil, err
	}
	for _, v := range s.All() {
		if _, err := v.Script(); err != nil {
			return nil, fmt.Errorf("corpus %s: %w", v.ID, err)
		}
	}
	return s, nil
}

var graphModes = map[string]conformpb.GraphDeliveryMode{
	"if_newer":      conformpb.GraphDeliveryMode_GRAPH_DELIVERY_IF_NEWER,
	"unconditional": conformpb.GraphDeliveryMode_GRAPH_DELIVERY_UNCONDITIONAL,
	"explicit":      conformpb.GraphDeliveryMode_GRAPH_DELIVERY_EXPLICIT,
}

// Script returns the vector as a conform.v1 graph script.
func (v *GraphVector) Script() (*conformpb.GraphScript, error) {
	s := &conformpb.GraphScript{}
	for _, c := range v.Callers {
		pc := &conformpb.GraphCaller{Name: c.Name, Link: c.Link}
		switch c.Kind {
		case "local":
			pc.Kind = conformpb.GraphCallerKind_GRAPH_CALLER_LOCAL
		case "remote":
			pc.Kind = conformpb.GraphCallerKind_GRAPH_CALLER_REMOTE
		default:
			return nil, fmt.Errorf("caller %q: kind %q is neither local nor remote", c.Name, c.Kind)
		}
		s.Callers = append(s.Callers, pc)
	}
	for i, st := range v.Steps {
		var ps *conformpb.GraphStep
		switch st.Op {
		case "register":
			ps = &conformpb.GraphStep{Step: &conformpb.GraphStep_Register{Register: &conformpb.GraphRegister{Path: st.Path}}}
		case "handler":
			ps = &conformpb.GraphStep{Step: &conformpb.GraphStep_Register{Register: &conformpb.GraphRegister{Path: st.Path, Handler: true, OnRead: st.Value}}}
		case "write":
			ps = &conformpb.GraphStep{Step: &conformpb.GraphStep_Write{Write: &conformpb.GraphWrite{Caller: st.Caller, Address: st.Path, Value: st.Value}}}
		case "read":
			ps = &conformpb.GraphStep{Step: &conformpb.GraphStep_Read{Read: &conformpb.GraphRead{Caller: st.Caller, Address: st.Path}}}
		case "await":
			ps = &conformpb.GraphStep{Step: &conformpb.GraphStep_Await{Await: &conformpb.GraphAwait{Caller: st.Caller, Address: st.Path}}}
		case "subscribe":
			ps = &conformpb.GraphStep{Step: &conformpb.GraphStep_Subscribe{Subscribe: &conformpb.GraphSubscribe{Caller: st.Caller, Path: st.Path, Subscriber: SubscriberTo(st.Target)}}}
		case "assign":
			ps = &conformpb.GraphStep{Step: &conformpb.GraphStep_Assign{Assign: &conformpb.GraphAssign{Path: st.Path, Value: st.Value}}}
		case "propagate", "fold":
			ps = &conformpb.GraphStep{Step: &conformpb.GraphStep_Propagate{Propagate: &conformpb.GraphPropagate{Path: st.Path, Fold: st.Op == "fold"}}}
		case "retire":
			ps = &conformpb.GraphStep{Step: &conformpb.GraphStep_Retire{Retire: &conformpb.GraphRetire{Caller: st.Caller, Path: st.Path}}}
		case "evict":
			ps = &conformpb.GraphStep{Step: &conformpb.GraphStep_Evict{Evict: &conformpb.GraphEvict{Link: st.Link}}}
		case "mode":
			m, ok := graphModes[st.Mode]
			if !ok {
				return nil, fmt.Errorf("step %d: mode %q", i, st.Mode)
			}
			ps = &conformpb.GraphStep{Step: &conformpb.GraphStep_SetMode{SetMode: &conformpb.GraphSetMode{Path: st.Path, Mode: m}}}
		default:
			return nil, fmt.Errorf("step %d: unknown op %q", i, st.Op)
		}
		if st.Expect != nil {
			if _, err := st.Expect.StatusCode(); err != nil {
				return nil, fmt.Errorf("step %d: %w", i, err)
			}
			for _, w := range st.Expect.Wakes {
				if w.Step < 0 || w.Step >= i || v.Steps[w.Step].Op != "await" {
					return nil, fmt.Errorf("step %d: wake of step %d, which is no earlier await", i, w.Step)
				}
			}
		}
		s.Steps = append(s.Steps, ps)
	}
	return s, nil
}

// SubscriberTo returns SUBSCRIBER{PATH target} with target's canonical PATH
// payload (RECONSTRUCTED §2: a SUBSCRIBER is its PATH target, then an
// optional SETTINGS), built from the pinned header and PATH layouts.
func SubscriberTo(target string) []byte {
	var path []byte
	for _, s := range strings.Split(target, "/") {
		if s != "" {
			path = append(path, byte(len(s)))
			path = append(path, s...)
		}
	}
	pathTLV := append([]byte{0x06, 0x00, byte(len(path)), byte(len(path) >> 8)}, path...)
	return append([]byte{0x04, 0x01, byte(len(pathTLV)), byte(len(pathTLV) >> 8)}, pathTLV...)
}

// A GraphMismatch is one way a script's output departs from a vector.
type GraphMismatch struct {
	Step     int // -1 for the script as a whole
	What     string
	Expected string
	Got      string
}

// Check compares what a SUT answered for v's script with v's expectations
// and returns every mismatch: a step's status, the bytes it served, its
// deliveries (as a multiset of vertex, target and TLV; slots are the SUT's
// choice) and the awaits it completed.
func (v *GraphVector) Check(out *conformpb.GraphScriptOutput) []GraphMismatch {
	if out.GetError() != "" {
		return []GraphMismatch{{Step: -1, What: "the script could not be run", Expected: "a reply per step", Got: out.GetError()}}
	}
	if len(out.GetReplies()) != len(v.Steps) {
		return []GraphMismatch{{Step: -1, What: "reply count", Expected: fmt.Sprint(len(v.Steps)), Got: fmt.Sprint(len(out.GetReplies()))}}
	}
	var ms []GraphMismatch
	for i, st := range v.Steps {
		e := st.Expect
		if e == nil {
			continue
		}
		r := out.GetReplies()[i]
		want, _ := e.StatusCode()
		if r.GetStatus() != want {
			ms = append(ms, GraphMismatch{i, "status", fmt.Sprintf("0x%04x", want), fmt.Sprintf("0x%04x", r.GetStatus())})
		}
		if e.Value != nil && string(r.GetValue()) != string(e.Value) {
			ms = append(ms, GraphMismatch{i, "value", FormatHex(e.Value), FormatHex(r.GetValue())})
		}
		var wd, gd []string
		for _, d := range e.Deliveries {
			wd = append(wd, deliveryKey(d.At, d.Target, d.TLV))
		}
		for _, d := range r.GetDeliveries() {
			gd = append(gd, deliveryKey(d.GetVertex(), d.GetTarget(), d.GetTlv()))
		}
		sort.Strings(wd)
		sort.Strings(gd)
		if strings.Join(wd, "\n") != strings.Join(gd, "\n") {
			ms = append(ms, GraphMismatch{i, "deliveries", strings.Join(wd, "\n"), strings.Join(gd, "\n")})
		}
		var ww, gw []string
		for _, w := range e.Wakes {
			ww = append(ww, fmt.Sprintf("await of step %d: %s", w.Step, FormatHex(w.Value)))
		}
		for _, w := range r.GetWakes() {
			s := fmt.Sprintf("await of step %d: %s", w.GetStep(), FormatHex(w.GetValue()))
			if w.GetStatus() != 0 {
				s = fmt.Sprintf("await of step %d: status 0x%04x", w.GetStep(), w.GetStatus())
			}
			gw = append(gw, s)
		}
		if strings.Join(ww, "\n") != strings.Join(gw, "\n") {
			ms = append(ms, GraphMismatch{i, "awaits completed", strings.Join(ww, "\n"), strings.Join(gw, "\n")})
		}
	}
	return ms
}

func deliveryKey(at, target string, b []byte) string {
	return fmt.Sprintf("at %s to %s: %s", normPath(at), normPath(target), FormatHex(b))
}

// normPath normalizes a path's string form for comparison ("a/" is "/a").
func normPath(p string) string {
	var segs []string
	for _, s := range strings.Split(p, "/") {
		if s != "" {
			segs = append(segs, s)
		}
	}
	return "/" + strings.Join(segs, "/")
}
