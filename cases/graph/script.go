package graph

import (
	"fmt"
	"sort"
	"strings"

	"github.com/conform-suite/conform/cases"
	"github.com/conform-suite/conform/corpus"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/proto/conform/v1/meaning"
	"github.com/conform-suite/conform/reports"
	"github.com/conform-suite/conform/reports/evidence"
)

// The ACL rights a script grants, as conform.v1 carries them
// (reconstructed§graph-acl#1: the rights' names are the document's, the bits
// this project's).
const (
	rRead      = 1
	rWrite     = 2
	rSubscribe = 4
	rCreate    = 8
	rDelete    = 16
	rAll       = 63
)

// A script is a graph script under construction: the callers, the steps, and
// a line of text per step for the evidence.
type script struct {
	pb    *conformpb.GraphScript
	lines []string
}

func newScript() *script { return &script{pb: &conformpb.GraphScript{}} }

// local adds a local caller named name.
func (s *script) local(name string) *script {
	s.pb.Callers = append(s.pb.Callers, &conformpb.GraphCaller{Name: name, Kind: conformpb.GraphCallerKind_GRAPH_CALLER_LOCAL})
	s.lines = append(s.lines, "caller "+name+" (local)")
	return s
}

// remote adds a remote caller named name whose operations arrive over link.
func (s *script) remote(name, link string) *script {
	s.pb.Callers = append(s.pb.Callers, &conformpb.GraphCaller{Name: name, Kind: conformpb.GraphCallerKind_GRAPH_CALLER_REMOTE, Link: link})
	s.lines = append(s.lines, "caller "+name+" (remote over "+link+")")
	return s
}

// add appends a step and returns its index.
func (s *script) add(text string, st *conformpb.GraphStep) int {
	s.pb.Steps = append(s.pb.Steps, st)
	s.lines = append(s.lines, fmt.Sprintf("%d: %s", len(s.pb.Steps)-1, text))
	return len(s.pb.Steps) - 1
}

func who(c string) string {
	if c == "" {
		return "owner"
	}
	return c
}

func (s *script) register(path string) int {
	return s.add("register "+path, &conformpb.GraphStep{Step: &conformpb.GraphStep_Register{Register: &conformpb.GraphRegister{Path: path}}})
}

// handler registers a handler vertex that retains nothing; onRead nil means
// it has no on_read.
func (s *script) handler(path string, onRead []byte) int {
	return s.add(fmt.Sprintf("register %s as a handler (on_read %s)", path, show(onRead)),
		&conformpb.GraphStep{Step: &conformpb.GraphStep_Register{Register: &conformpb.GraphRegister{Path: path, Handler: true, OnRead: onRead}}})
}

func (s *script) write(caller, addr string, v []byte) int {
	return s.add(fmt.Sprintf("%s writes %s = %s", who(caller), addr, show(v)),
		&conformpb.GraphStep{Step: &conformpb.GraphStep_Write{Write: &conformpb.GraphWrite{Caller: caller, Address: addr, Value: v}}})
}

func (s *script) read(caller, addr string) int {
	return s.add(fmt.Sprintf("%s reads %s", who(caller), addr),
		&conformpb.GraphStep{Step: &conformpb.GraphStep_Read{Read: &conformpb.GraphRead{Caller: caller, Address: addr}}})
}

func (s *script) await(caller, addr string) int {
	return s.add(fmt.Sprintf("%s awaits %s", who(caller), addr),
		&conformpb.GraphStep{Step: &conformpb.GraphStep_Await{Await: &conformpb.GraphAwait{Caller: caller, Address: addr}}})
}

// subscribe appends SUBSCRIBER{PATH target} to path's :subscribers[].
func (s *script) subscribe(caller, path, target string) int {
	return s.subscribeWith(caller, path, subscriber(target))
}

func (s *script) subscribeWith(caller, path string, sub []byte) int {
	return s.add(fmt.Sprintf("%s subscribes at %s with %s", who(caller), path, show(sub)),
		&conformpb.GraphStep{Step: &conformpb.GraphStep_Subscribe{Subscribe: &conformpb.GraphSubscribe{Caller: caller, Path: path, Subscriber: sub}}})
}

func (s *script) assign(path string, v []byte) int {
	return s.add(fmt.Sprintf("assign %s = %s", path, show(v)),
		&conformpb.GraphStep{Step: &conformpb.GraphStep_Assign{Assign: &conformpb.GraphAssign{Path: path, Value: v}}})
}

func (s *script) propagate(path string) int {
	return s.add("propagate "+path, &conformpb.GraphStep{Step: &conformpb.GraphStep_Propagate{Propagate: &conformpb.GraphPropagate{Path: path}}})
}

func (s *script) fold(path string) int {
	return s.add("propagate "+path+" with FOLD emission", &conformpb.GraphStep{Step: &conformpb.GraphStep_Propagate{Propagate: &conformpb.GraphPropagate{Path: path, Fold: true}}})
}

func (s *script) retire(caller, path string) int {
	return s.add(fmt.Sprintf("%s retires %s", who(caller), path),
		&conformpb.GraphStep{Step: &conformpb.GraphStep_Retire{Retire: &conformpb.GraphRetire{Caller: caller, Path: path}}})
}

func (s *script) evict(link string) int {
	return s.add("evict the edges of link "+link, &conformpb.GraphStep{Step: &conformpb.GraphStep_Evict{Evict: &conformpb.GraphEvict{Link: link}}})
}

func (s *script) mode(path string, m conformpb.GraphDeliveryMode) int {
	return s.add(fmt.Sprintf("set the delivery mode of %s to %s", path, strings.TrimPrefix(m.String(), "GRAPH_DELIVERY_")),
		&conformpb.GraphStep{Step: &conformpb.GraphStep_SetMode{SetMode: &conformpb.GraphSetMode{Path: path, Mode: m}}})
}

func (s *script) depth(path string, keep uint32) int {
	return s.add(fmt.Sprintf("make %s a STREAM of depth %d", path, keep),
		&conformpb.GraphStep{Step: &conformpb.GraphStep_SetHistoryDepth{SetHistoryDepth: &conformpb.GraphSetHistoryDepth{Path: path, Keep: keep}}})
}

// appField is one entry of a field descriptor table.
func appField(name string, access conformpb.GraphAppAccess, initial []byte) *conformpb.GraphAppField {
	return &conformpb.GraphAppField{Name: name, Access: access, FieldDescriptor: []byte("d:" + name), Initial: initial}
}

func (s *script) appFields(path string, fields ...*conformpb.GraphAppField) int {
	var names []string
	for _, f := range fields {
		names = append(names, f.GetName()+" "+strings.TrimPrefix(f.GetAccess().String(), "GRAPH_APP_"))
	}
	return s.add(fmt.Sprintf("declare the app fields of %s: %s", path, strings.Join(names, ", ")),
		&conformpb.GraphStep{Step: &conformpb.GraphStep_DeclareAppFields{DeclareAppFields: &conformpb.GraphDeclareAppFields{Path: path, Fields: fields}}})
}

// acl installs the ACL of path: def for every principal, grants by name.
func (s *script) acl(path string, def uint32, grants map[string]uint32) int {
	a := &conformpb.GraphSetAcl{Path: path, DefaultRights: def}
	var text []string
	for _, p := range sortedKeys(grants) {
		a.Grants = append(a.Grants, &conformpb.GraphGrant{Principal: p, Rights: grants[p]})
		text = append(text, fmt.Sprintf("%s=%s", p, rights(grants[p])))
	}
	return s.add(fmt.Sprintf("set the ACL of %s: default %s %s", path, rights(def), strings.Join(text, " ")),
		&conformpb.GraphStep{Step: &conformpb.GraphStep_SetAcl{SetAcl: a}})
}

func (s *script) fwd(caller string, frame []byte) int {
	return s.add(fmt.Sprintf("%s's FWD arrives: %s", caller, show(frame)),
		&conformpb.GraphStep{Step: &conformpb.GraphStep_Fwd{Fwd: &conformpb.GraphFwd{Caller: caller, Frame: frame}}})
}

func rights(r uint32) string {
	var b strings.Builder
	for i, c := range "rwscda" {
		if r&(1<<i) != 0 {
			b.WriteRune(c)
		} else {
			b.WriteByte('-')
		}
	}
	return b.String()
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func show(b []byte) string {
	if b == nil {
		return "none"
	}
	return render(b)
}

func (s *script) String() string { return strings.Join(s.lines, "\n") }

// A result is what the SUT answered for one script.
type result struct {
	t   *cases.T
	s   *script
	out *conformpb.GraphScriptOutput
}

// run runs the scripts, batched, and returns their results. A SUT that could
// not run a script, or answered a reply count other than its step count,
// fails the case there.
func run(t *cases.T, scripts ...*script) []*result {
	pbs := make([]*conformpb.GraphScript, len(scripts))
	for i, s := range scripts {
		pbs[i] = s.pb
	}
	outs := cases.Batched(t, "graph run", pbs, func(b []*conformpb.GraphScript) ([]*conformpb.GraphScriptOutput, bool) {
		r := t.Do(&conformpb.Request{Op: &conformpb.Request_Graph{Graph: &conformpb.GraphOp{Op: &conformpb.GraphOp_Run{Run: &conformpb.GraphRun{Scripts: b}}}}}).GetGraph().GetRun()
		return r.GetOutputs(), r != nil
	})
	res := make([]*result, len(scripts))
	for i, o := range outs {
		res[i] = &result{t: t, s: scripts[i], out: o}
		if o.GetError() != "" {
			t.Fatalf("the SUT could not run the script: %s\nscript:\n%s", o.GetError(), scripts[i])
		}
		if len(o.GetReplies()) != len(scripts[i].pb.Steps) {
			t.Protocolf("graph run: %d steps, %d replies", len(scripts[i].pb.Steps), len(o.GetReplies()))
		}
	}
	return res
}

// run1 runs one script.
func run1(t *cases.T, s *script) *result { return run(t, s)[0] }

func (r *result) reply(i int) *conformpb.GraphReply { return r.out.GetReplies()[i] }

// fail records a failed check of a reply: msg, what was expected and got
// in the graph's terms (statuses by name, TLVs rendered), and the differing
// fields by their conform.v1 paths in the script's output.
func (r *result) fail(msg, expected, got string, diff []evidence.Difference) {
	r.t.Fail(reports.Evidence{Message: msg, Input: r.s.String(), Expected: expected, Got: got, Diff: evidence.Format(diff)})
}

// failAt records a failed check whose differing field is at path, the
// expected and got rendered as for fail.
func (r *result) failAt(path, msg, expected, got string) {
	r.fail(msg, expected, got, evidence.DiffAt(path, expected, got))
}

// at names field of step i's reply: "replies[3].value".
func at(i int, field string) string { return fmt.Sprintf("replies[%d].%s", i, field) }

// status checks step i's status.
func (r *result) status(i int, want uint32, what string) bool {
	if got := r.reply(i).GetStatus(); got != want {
		r.fail(fmt.Sprintf("step %d (%s) answered %s", i, what, statusText(got)), statusText(want), statusText(got),
			evidence.DiffAt(at(i, "status"), statusText(want), statusText(got)))
		return false
	}
	return true
}

// ok checks that step i succeeded.
func (r *result) ok(i int, what string) bool { return r.status(i, stOK, what) }

// refused checks that step i answered some refusal, whichever.
func (r *result) refused(i int, what string) bool {
	if r.reply(i).GetStatus() == stOK {
		r.fail(fmt.Sprintf("step %d (%s) succeeded", i, what), "a refusal", "success",
			evidence.DiffAt(at(i, "status"), "a refusal (not 0)", statusText(stOK)))
		return false
	}
	return true
}

// failStatus records that step i answered a refusal where want was due.
func (r *result) failStatus(i int, what string, want []byte) {
	rep := r.reply(i)
	r.fail(fmt.Sprintf("step %d (%s) answered %s", i, what, statusText(rep.GetStatus())), render(want), statusText(rep.GetStatus()),
		evidence.DiffAt(at(i, "status"), statusText(stOK), statusText(rep.GetStatus())))
}

// value checks that step i succeeded with exactly want's bytes.
func (r *result) value(i int, want []byte, what string) bool {
	rep := r.reply(i)
	if rep.GetStatus() != stOK {
		r.failStatus(i, what, want)
		return false
	}
	if string(rep.GetValue()) != string(want) {
		r.fail(fmt.Sprintf("step %d (%s) served other bytes", i, what), render(want), render(rep.GetValue()),
			evidence.DiffAt(at(i, "value"), want, rep.GetValue()))
		return false
	}
	return true
}

// same checks that step i succeeded with a value that renders as want's: the
// same TLV up to the order of a POINT's child POINTs.
func (r *result) same(i int, want []byte, what string) bool {
	rep := r.reply(i)
	if rep.GetStatus() != stOK {
		r.failStatus(i, what, want)
		return false
	}
	if g, w := render(rep.GetValue()), render(want); g != w {
		r.fail(fmt.Sprintf("step %d (%s) served another TLV (a POINT's child POINTs compared in any order)", i, what), w, g,
			evidence.DiffAt(at(i, "value"), want, rep.GetValue()))
		return false
	}
	return true
}

// A dl is a delivery as the cases compare it: the vertex holding the edge,
// the edge's target, and the TLV's bytes. Slots are not compared: where an
// appended edge lands is the SUT's choice.
type dl struct {
	at, target string
	tlv        []byte
}

func (d dl) String() string { return fmt.Sprintf("at %s to %s: %s", d.at, d.target, render(d.tlv)) }

func dlsOf(rep *conformpb.GraphReply) []string {
	var out []string
	for _, d := range rep.GetDeliveries() {
		out = append(out, dl{canon(d.GetVertex()), canon(d.GetTarget()), d.GetTlv()}.String()+" ["+meaning.Hex(d.GetTlv())+"]")
	}
	return out
}

// canon normalizes a path in string form, so that "/a/" and "a" compare as
// "/a".
func canon(p string) string {
	var segs []string
	for _, s := range strings.Split(p, "/") {
		if s != "" {
			segs = append(segs, s)
		}
	}
	return "/" + strings.Join(segs, "/")
}

// deliveries checks that step i made exactly the deliveries want, each once,
// in any order.
func (r *result) deliveries(i int, what string, want ...dl) bool {
	var w []string
	for _, d := range want {
		w = append(w, d.String()+" ["+meaning.Hex(d.tlv)+"]")
	}
	got := dlsOf(r.reply(i))
	sort.Strings(w)
	sort.Strings(got)
	if strings.Join(w, "\n") != strings.Join(got, "\n") {
		r.fail(fmt.Sprintf("step %d (%s) made other deliveries (in any order: each listed sorted, as at VERTEX to TARGET: TLV)", i, what), list(w), list(got),
			evidence.DiffAt(at(i, "deliveries"), w, got))
		return false
	}
	return true
}

// none checks that step i delivered nothing.
func (r *result) none(i int, what string) bool { return r.deliveries(i, what) }

// count returns how many deliveries step i made at vertex at to target.
func (r *result) count(i int, at, target string) int {
	n := 0
	for _, d := range r.reply(i).GetDeliveries() {
		if canon(d.GetVertex()) == canon(at) && canon(d.GetTarget()) == canon(target) {
			n++
		}
	}
	return n
}

// to returns the TLVs step i delivered at vertex at to target, in order.
func (r *result) to(i int, at, target string) [][]byte {
	var out [][]byte
	for _, d := range r.reply(i).GetDeliveries() {
		if canon(d.GetVertex()) == canon(at) && canon(d.GetTarget()) == canon(target) {
			out = append(out, d.GetTlv())
		}
	}
	return out
}

// wakes returns the await completions step i made.
func (r *result) wakes(i int) []*conformpb.GraphWake { return r.reply(i).GetWakes() }

func list(s []string) string {
	if len(s) == 0 {
		return "(none)"
	}
	return strings.Join(s, "\n")
}

// tree checks that step i succeeded with the TLV want as a tree: the same
// types, payloads and children in order, whatever length form each header
// the SUT synthesized takes.
func (r *result) tree(i int, want []byte, what string) bool {
	rep := r.reply(i)
	if rep.GetStatus() != stOK {
		r.failStatus(i, what, want)
		return false
	}
	if !corpus.SameTLV(want, rep.GetValue()) {
		r.fail(fmt.Sprintf("step %d (%s) served another TLV (each header in either form)", i, what), render(want), render(rep.GetValue()),
			evidence.DiffAt(at(i, "value"), want, rep.GetValue()))
		return false
	}
	return true
}

// aclIs checks that step i served the ACL record want: its NAME, VALUE
// pairs in any order (reconstructed§graph-acl#4 gives them no order).
func (r *result) aclIs(i int, want []byte, what string) bool {
	rep := r.reply(i)
	if rep.GetStatus() != stOK {
		r.failStatus(i, what, want)
		return false
	}
	if !corpus.MatchTLVs(corpus.MatchPairs, want, rep.GetValue()) {
		r.fail(fmt.Sprintf("step %d (%s) served another ACL (pairs compared in any order)", i, what), render(want), render(rep.GetValue()),
			evidence.DiffAt(at(i, "value"), want, rep.GetValue()))
		return false
	}
	return true
}

// pending checks that step i, an await or a FWD{AWAIT}, was registered and
// is outstanding.
func (r *result) pending(i int, what string) bool {
	rep := r.reply(i)
	if rep.GetStatus() != stOK || !rep.GetPending() {
		type pend struct {
			Status  string `json:"status"`
			Pending bool   `json:"pending"`
		}
		w, g := pend{statusText(stOK), true}, pend{statusText(rep.GetStatus()), rep.GetPending()}
		r.fail(fmt.Sprintf("step %d (%s) is not an outstanding await", i, what), "pending", fmt.Sprintf("%s, pending %v, value %s", statusText(rep.GetStatus()), rep.GetPending(), show(rep.GetValue())),
			evidence.DiffAt(fmt.Sprintf("replies[%d]", i), w, g))
		return false
	}
	return true
}

// wakeTree checks that step i completed the await of step aw with a value
// that is want as a tree (a FWD{REPLY} the SUT built, say).
func (r *result) wakeTree(i, aw int, want []byte, what string) {
	for _, w := range r.wakes(i) {
		if int(w.GetStep()) != aw {
			continue
		}
		if w.GetStatus() != stOK || !corpus.SameTLV(want, w.GetValue()) {
			r.fail(fmt.Sprintf("step %d (%s) completed the await of step %d with another answer (a TLV's headers in either form)", i, what, aw), render(want), fmt.Sprintf("%s %s", statusText(w.GetStatus()), show(w.GetValue())),
				append(evidence.DiffAt(fmt.Sprintf("replies[%d].wakes[step %d].status", i, aw), statusText(stOK), statusText(w.GetStatus())),
					evidence.DiffAt(fmt.Sprintf("replies[%d].wakes[step %d].value", i, aw), want, w.GetValue())...))
		}
		return
	}
	r.fail(fmt.Sprintf("step %d (%s) did not complete the await of step %d", i, what, aw), "the await completed with "+render(want), "still pending",
		evidence.DiffAt(fmt.Sprintf("replies[%d].wakes[step %d]", i, aw), "a wake", evidence.Absent))
}

// noWakes checks that step i completed no await.
func (r *result) noWakes(i int, what string) {
	if ws := r.wakes(i); len(ws) != 0 {
		var got []string
		for _, w := range ws {
			got = append(got, fmt.Sprintf("step %d: %s %s", w.GetStep(), statusText(w.GetStatus()), show(w.GetValue())))
		}
		r.fail(fmt.Sprintf("step %d (%s) completed an await", i, what), "no await completed", strings.Join(got, "\n"),
			evidence.DiffAt(at(i, "wakes"), []string{}, got))
	}
}

// evicted checks an evict step's count.
func (r *result) evicted(i int, want uint64, what string) {
	if got := r.reply(i).GetCount(); got != want {
		r.fail(fmt.Sprintf("step %d (%s) evicted another count of edges", i, what), fmt.Sprint(want), fmt.Sprint(got),
			evidence.DiffAt(at(i, "count"), want, got))
	}
}

// statusOf returns the status step i answered, for a note.
func (r *result) statusOf(i int) string { return statusText(r.reply(i).GetStatus()) }
