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
// (each vector cites the section) and the project's pins (the requirements
// index's reconstructed§ entries), never from running the reference.
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

// VectorSpec returns the section v enforces.
func (v *GraphVector) VectorSpec() string { return v.Spec }

// VectorTitle returns what v shows, in one line.
func (v *GraphVector) VectorTitle() string { return v.Title }

// GraphCaller is a named caller: Kind is local or remote; a remote caller's
// operations arrive over Link.
type GraphCaller struct {
	Name string `json:"name"`
	Kind string `json:"kind"`
	Link string `json:"link,omitempty"`
}

// GraphStep is one operation and, when Expect is set, what it must answer.
// Op is one of register, handler (a vertex that retains nothing; Value is
// the TLV its on_read serves, none for no on_read), write, read, await,
// subscribe (append Value, or SUBSCRIBER{PATH target} when Value is empty,
// to the path's :subscribers[]), assign, propagate, fold (propagate with the
// FOLD emission), retire, evict, mode, depth (make the vertex a STREAM of
// Keep entries), acl (install the vertex's ACL: Rights for every principal,
// Grants by name), declare (install the vertex's app-field table) and fwd
// (apply the FWD frame Value at its terminus as the caller, a remote one).
type GraphStep struct {
	Op     string `json:"op"`
	Caller string `json:"caller,omitempty"`
	// Path is the vertex, or for write, read and await the address (a path and
	// an optional field selector).
	Path   string `json:"path,omitempty"`
	Value  Bytes  `json:"value,omitempty"`
	Target string `json:"target,omitempty"`
	// Mode is if_newer, unconditional or explicit; Link names a link to evict.
	Mode string `json:"mode,omitempty"`
	Link string `json:"link,omitempty"`
	// Keep is a depth step's history depth.
	Keep uint32 `json:"keep,omitempty"`
	// Rights and Grants are an acl step's ACL, as conform.v1's GraphSetAcl
	// carries rights (reconstructed§graph-acl#1: 1 READ, 2 WRITE,
	// 4 SUBSCRIBE, 8 CREATE, 16 DELETE, 32 ADMIN).
	Rights uint32            `json:"rights,omitempty"`
	Grants map[string]uint32 `json:"grants,omitempty"`
	// Fields are a declare step's field descriptor table.
	Fields []GraphAppField `json:"fields,omitempty"`
	Expect *GraphExpect    `json:"expect,omitempty"`
}

// GraphAppField is one entry of a field descriptor table: the name below
// settings.app., its access for callers (ro, rw or wo), its descriptor
// bytes and its optional initial value.
type GraphAppField struct {
	Name       string `json:"name"`
	Access     string `json:"access"`
	Descriptor Bytes  `json:"descriptor,omitempty"`
	Initial    Bytes  `json:"initial,omitempty"`
}

// GraphExpect is what a step must answer: its status ("ok", "0xNNNN name",
// StatusRefused or StatusAny), the TLV it serves when Value is set (compared as Match says), and
// exactly the deliveries listed (none when the list is empty), in any order.
type GraphExpect struct {
	Status string `json:"status"`
	Value  Bytes  `json:"value,omitempty"`
	// Match says how a served Value is compared (see the Match constants);
	// empty is MatchExact.
	Match      string          `json:"match,omitempty"`
	Deliveries []GraphDelivery `json:"deliveries"`
	// Wakes lists the await steps this step completes (none when empty).
	Wakes []GraphWakeExpect `json:"wakes,omitempty"`
	// Count, when set, is an evict step's count of edges evicted.
	Count *uint64 `json:"count,omitempty"`
}

// How a vector compares a TLV a SUT serves with the one it expects.
const (
	// MatchExact: byte for byte. For what the SUT stores and serves as
	// written: a value, a SUBSCRIBER record, an app field.
	MatchExact = "exact"
	// MatchTLV: the same TLV tree — types, PL bits, payloads and children
	// in order — whatever length form each header takes. For a TLV the SUT
	// synthesizes: the 4-byte header is a SHOULD (reconstructed§tlv-header#3)
	// and a reader accepts the 6-byte one (reconstructed§tlv-header#4).
	MatchTLV = "tlv"
	// MatchList: any structured (PL) container whose children are the
	// expected container's children, in any order, each compared as
	// MatchTLV: the list reads, whose container type and order are the
	// implementation's (reconstructed§tlv-lists#4).
	MatchList = "list"
	// MatchPairs: a structured TLV of the expected type whose children,
	// taken two at a time, are the expected pairs in any order, each
	// compared as MatchTLV: the ACL record (reconstructed§graph-acl#4).
	MatchPairs = "pairs"
)

// Two expected statuses name no one code.
const (
	// StatusRefused: any status but 0, where the document requires a
	// refusal and gives it no code.
	StatusRefused = "refused"
	// StatusAny: the status is not judged, where the document leaves it
	// open and the step's other effects are what is judged.
	StatusAny = "any"
)

// StatusCode returns the expected status, 0 for ok; StatusRefused and
// StatusAny return 0 too, since they name no one code.
func (e *GraphExpect) StatusCode() (uint32, error) {
	if e.Status == StatusRefused || e.Status == StatusAny {
		return 0, nil
	}
	if e.Status == "" {
		return 0, fmt.Errorf("no status: want ok or \"0xNNNN name\"")
	}
	return statusCode(e.Status)
}

// statusCode reads "ok" (or nothing) as 0 and "0xNNNN name" as NNNN.
func statusCode(s string) (uint32, error) {
	if s == "ok" || s == "" {
		return 0, nil
	}
	code, _, _ := strings.Cut(s, " ")
	n, err := strconv.ParseUint(code, 0, 16)
	if err != nil || n == 0 {
		return 0, fmt.Errorf("bad status %q: want ok or \"0xNNNN name\"", s)
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

// GraphWakeExpect is an await completed: the await's step and its answer,
// a status ("ok" when empty) and the value, compared as Match says.
type GraphWakeExpect struct {
	Step   int    `json:"step"`
	Status string `json:"status,omitempty"`
	Value  Bytes  `json:"value"`
	Match  string `json:"match,omitempty"`
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

var graphAccess = map[string]conformpb.GraphAppAccess{
	"ro": conformpb.GraphAppAccess_GRAPH_APP_RO,
	"rw": conformpb.GraphAppAccess_GRAPH_APP_RW,
	"wo": conformpb.GraphAppAccess_GRAPH_APP_WO,
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
			sub := []byte(st.Value)
			if len(sub) == 0 {
				sub = SubscriberTo(st.Target)
			}
			ps = &conformpb.GraphStep{Step: &conformpb.GraphStep_Subscribe{Subscribe: &conformpb.GraphSubscribe{Caller: st.Caller, Path: st.Path, Subscriber: sub}}}
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
		case "depth":
			ps = &conformpb.GraphStep{Step: &conformpb.GraphStep_SetHistoryDepth{SetHistoryDepth: &conformpb.GraphSetHistoryDepth{Path: st.Path, Keep: st.Keep}}}
		case "acl":
			a := &conformpb.GraphSetAcl{Path: st.Path, DefaultRights: st.Rights}
			names := make([]string, 0, len(st.Grants))
			for p := range st.Grants {
				names = append(names, p)
			}
			sort.Strings(names)
			for _, p := range names {
				a.Grants = append(a.Grants, &conformpb.GraphGrant{Principal: p, Rights: st.Grants[p]})
			}
			ps = &conformpb.GraphStep{Step: &conformpb.GraphStep_SetAcl{SetAcl: a}}
		case "declare":
			d := &conformpb.GraphDeclareAppFields{Path: st.Path}
			for _, f := range st.Fields {
				acc, ok := graphAccess[f.Access]
				if !ok {
					return nil, fmt.Errorf("step %d: field %q: access %q is not ro, rw or wo", i, f.Name, f.Access)
				}
				d.Fields = append(d.Fields, &conformpb.GraphAppField{Name: f.Name, Access: acc, FieldDescriptor: f.Descriptor, Initial: f.Initial})
			}
			ps = &conformpb.GraphStep{Step: &conformpb.GraphStep_DeclareAppFields{DeclareAppFields: d}}
		case "fwd":
			ps = &conformpb.GraphStep{Step: &conformpb.GraphStep_Fwd{Fwd: &conformpb.GraphFwd{Caller: st.Caller, Frame: st.Value}}}
		default:
			return nil, fmt.Errorf("step %d: unknown op %q", i, st.Op)
		}
		if e := st.Expect; e != nil {
			if _, err := e.StatusCode(); err != nil {
				return nil, fmt.Errorf("step %d: %w", i, err)
			}
			if err := checkMatch(e.Match, e.Value); err != nil {
				return nil, fmt.Errorf("step %d: %w", i, err)
			}
			for _, w := range e.Wakes {
				if w.Step < 0 || w.Step >= i || (v.Steps[w.Step].Op != "await" && v.Steps[w.Step].Op != "fwd") {
					return nil, fmt.Errorf("step %d: wake of step %d, which is no earlier await or fwd", i, w.Step)
				}
				if _, err := statusCode(w.Status); err != nil {
					return nil, fmt.Errorf("step %d: wake of step %d: %w", i, w.Step, err)
				}
				if err := checkMatch(w.Match, w.Value); err != nil {
					return nil, fmt.Errorf("step %d: wake of step %d: %w", i, w.Step, err)
				}
			}
		}
		s.Steps = append(s.Steps, ps)
	}
	return s, nil
}

// SubscriberTo returns SUBSCRIBER{PATH target} with target's canonical PATH
// payload (reconstructed§tlv-records#4: a SUBSCRIBER is its PATH target, then an
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
// and returns every mismatch: a step's status, the TLV it serves (as its
// Match says), its deliveries (as a multiset of vertex, target and TLV
// bytes; slots are the SUT's choice), the awaits it completed and an
// evict's count.
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
		switch e.Status {
		case StatusAny:
		case StatusRefused:
			if r.GetStatus() == 0 {
				ms = append(ms, GraphMismatch{i, "status", "a refusal (any status but 0)", "0x0000"})
			}
		default:
			if want, _ := e.StatusCode(); r.GetStatus() != want {
				ms = append(ms, GraphMismatch{i, "status", fmt.Sprintf("0x%04x", want), fmt.Sprintf("0x%04x", r.GetStatus())})
			}
		}
		if e.Value != nil && !MatchTLVs(e.Match, e.Value, r.GetValue()) {
			ms = append(ms, GraphMismatch{i, "value (" + matchName(e.Match) + ")", FormatHex(e.Value), FormatHex(r.GetValue())})
		}
		if e.Count != nil && r.GetCount() != *e.Count {
			ms = append(ms, GraphMismatch{i, "count", fmt.Sprint(*e.Count), fmt.Sprint(r.GetCount())})
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
		ms = append(ms, checkWakes(i, e.Wakes, r.GetWakes())...)
	}
	return ms
}

// checkWakes compares the awaits a step completed with the ones expected, in
// any order.
func checkWakes(i int, want []GraphWakeExpect, got []*conformpb.GraphWake) []GraphMismatch {
	describe := func(step int, status uint32, value []byte) string {
		if status != 0 {
			return fmt.Sprintf("await of step %d: status 0x%04x", step, status)
		}
		return fmt.Sprintf("await of step %d: %s", step, FormatHex(value))
	}
	var ww, gw []string
	for _, w := range want {
		st, _ := statusCode(w.Status)
		ww = append(ww, describe(w.Step, st, w.Value))
	}
	for _, g := range got {
		gw = append(gw, describe(int(g.GetStep()), g.GetStatus(), g.GetValue()))
	}
	ok := len(want) == len(got)
	used := make([]bool, len(got))
	for _, w := range want {
		st, _ := statusCode(w.Status)
		found := false
		for k, g := range got {
			if !used[k] && int(g.GetStep()) == w.Step && g.GetStatus() == st && (st != 0 || MatchTLVs(w.Match, w.Value, g.GetValue())) {
				used[k], found = true, true
				break
			}
		}
		ok = ok && found
	}
	if ok {
		return nil
	}
	sort.Strings(ww)
	sort.Strings(gw)
	return []GraphMismatch{{i, "awaits completed (in any order)", strings.Join(ww, "\n"), strings.Join(gw, "\n")}}
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

// Describe renders the step in one line, its TLV in hex, for evidence and
// conform explain: "<caller> <op> <path> …".
func (st GraphStep) Describe() string {
	parts := []string{st.Op}
	if st.Caller != "" {
		parts = []string{st.Caller, st.Op}
	}
	if st.Path != "" {
		parts = append(parts, st.Path)
	}
	if st.Target != "" {
		parts = append(parts, "->", st.Target)
	}
	if st.Mode != "" {
		parts = append(parts, st.Mode)
	}
	if st.Op == "evict" {
		parts = append(parts, fmt.Sprintf("%q", st.Link))
	}
	if st.Op == "depth" {
		parts = append(parts, fmt.Sprint(st.Keep))
	}
	if st.Op == "acl" {
		parts = append(parts, fmt.Sprintf("default %d", st.Rights))
		names := make([]string, 0, len(st.Grants))
		for p := range st.Grants {
			names = append(names, p)
		}
		sort.Strings(names)
		for _, p := range names {
			parts = append(parts, fmt.Sprintf("%s=%d", p, st.Grants[p]))
		}
	}
	for _, f := range st.Fields {
		d := f.Name + "(" + f.Access + ")"
		if len(f.Initial) > 0 {
			d += "=" + FormatHex(f.Initial)
		}
		parts = append(parts, d)
	}
	if len(st.Value) > 0 {
		parts = append(parts, "=", FormatHex(st.Value))
	}
	return strings.Join(parts, " ")
}
