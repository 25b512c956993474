package mutant

import (
	"strconv"
	"strings"
	"time"

	"github.com/conform-suite/conform/ref/graph"
	"github.com/conform-suite/conform/ref/tlv"
)

// graphMutants break the reference graph (ref/graph), each in one behaviour
// and from outside it, one of two ways. A wrapper (graphWrapped, graphwrap.go)
// transforms what the reference's operations answer or deliver. Where the
// behaviour is a decision made inside one operation, a graph.Policy
// (graphPolicy) replaces that decision and hands every other input to the
// graph model's. The ones issue 8 lists come first, then the further failure
// modes that give every remaining MUST case of the suite a bug to catch, then
// those of the rules issue 15 found with no case (graphrules.go).
var graphMutants = append(append(append([]Mutant(nil), graphListed...), graphFurther...), graphRules...)

// graphListed are the failure modes issue 8 lists from the graph model.
var graphListed = []Mutant{
	graphWrapped("subscribers-index-clears-any-payload",
		"clears :subscribers[N] whatever the payload, answering success (graph model §An indexed :subscribers[N] write treated as an unconditional clear)",
		func(w *graphWrap) {
			// Every indexed write becomes the empty-STATUS sentinel, after
			// the same gate and slot checks.
			w.write = func(c graph.Caller, a graph.Address, v *tlv.Node) error {
				if _, ok := slotIndex(a); ok && v != nil {
					v = tlv.StatusNode(tlv.StatusOK)
				}
				return w.Graph.WriteAddr(c, a, v)
			}
		}),
	graphWrapped("subscribers-wildcard-as-index-0",
		"reads :subscribers[*] on a write as index 0 instead of INVALID_PATH (graph model §An indexed :subscribers[N] write…, \"A second route\")",
		func(w *graphWrap) {
			w.write = func(c graph.Caller, a graph.Address, v *tlv.Node) error {
				if a.HasField && a.Field == "subscribers[*]" {
					a.Field = "subscribers[0]"
				}
				return w.Graph.WriteAddr(c, a, v)
			}
		}),
	graphPolicy("subscribers-replace-through-write-gate",
		"admits a :subscribers[N] replace through the WRITE gate instead of SUBSCRIBE (graph model §An indexed :subscribers[N] write…, \"A third\")",
		func(p *graph.Policy) {
			p.Requires = func(a graph.Act) graph.Rights {
				if a == graph.ActReplaceEdge {
					return graph.RightWrite
				}
				return graph.ModelRequires(a)
			}
		}),
	graphWrapped("subscribers-member-as-index",
		"lets :subscribers[N].<anything> fall into the indexed arm instead of answering SCHEMA_NOT_FOUND (graph model §A multi-step selector under :subscribers)",
		func(w *graphWrap) {
			// The trailing steps are dropped; a [] or [*] before them
			// leaves the index unset, so slot 0.
			w.write = func(c graph.Caller, a graph.Address, v *tlv.Node) error {
				if a.HasField {
					if sel, _, ok := cutMember(a.Field); ok {
						a.Field = sel
					}
				}
				return w.Graph.WriteAddr(c, a, v)
			}
		}),
	graphWrapped("removed-knob-accepted",
		"stores and serves the removed flat :settings knobs instead of answering SCHEMA_NOT_FOUND (graph model §Core writable fields, RFC-0022)",
		func(w *graphWrap) { serveFields(w, isRemovedKnob) }),
	graphWrapped("app-name-before-acl",
		"resolves an app field's name before the WRITE right, so a denied caller can probe names (graph model §Owner-declared application fields)",
		func(w *graphWrap) {
			// An undeclared name answers SCHEMA_NOT_FOUND first, whoever
			// writes; the owner reads every declared field, so its read
			// answers SCHEMA_NOT_FOUND exactly for an undeclared one.
			w.write = func(c graph.Caller, a graph.Address, v *tlv.Node) error {
				if _, ok := appFieldName(a); ok && v != nil && isLive(w.Graph, a) {
					if _, err := w.Graph.ReadAddr(graphOwner, a); statusOf(err) == tlv.StatusSchemaNotFound {
						return refusal("write", a, tlv.StatusSchemaNotFound, "no app field of that name")
					}
				}
				return w.Graph.WriteAddr(c, a, v)
			}
		}),
	graphPolicy("field-write-wakes-await",
		"wakes a vertex's awaits on a field write (graph model §Owner-declared application fields, change notification)",
		func(p *graph.Policy) {
			p.Wakes = func(e graph.Event) graph.Wake {
				if e.Kind == graph.EventFieldWrite {
					return graph.Wake{Complete: true, Serve: true}
				}
				return graph.ModelWakes(e)
			}
		}),
	graphWrapped("remote-write-creates",
		"lets a remote FWD{WRITE} create its missing target (graph model §Subtree subscriptions…, RFC-0005 §D amendment 1)",
		func(w *graphWrap) {
			// A remote data write is judged as its principal's local one,
			// which creates (gated by CREATE); its edges keep the link.
			w.write = func(c graph.Caller, a graph.Address, v *tlv.Node) error {
				if !a.HasField {
					c.Remote = false
				}
				return w.Graph.WriteAddr(c, a, v)
			}
		}),
	graphWrapped("retired-child-listed",
		"keeps a retired child in its parent's :children[] (graph model §Retirement notification)",
		func(w *graphWrap) {
			gone := map[string]bool{}
			w.retire = func(c graph.Caller, path string) error {
				return retired(w.Graph, c, path, func(p string) { gone[p] = true })
			}
			w.read = func(c graph.Caller, a graph.Address) (*tlv.Node, error) {
				n, err := w.Graph.ReadAddr(c, a)
				if err != nil || !a.HasField || a.Field != "children[]" {
					return n, err
				}
				parent := vertexPath(a)
				var names []string
				for _, k := range n.Children() {
					names = append(names, string(k.Payload().Bytes()))
				}
				for p := range gone {
					if pp, _ := parentPath(p); pp == parent && !w.Exists(p) {
						names = append(names, p[strings.LastIndexByte(p, '/')+1:])
					}
				}
				sortNames(names)
				kids := make([]*tlv.Node, len(names))
				for i, name := range names {
					kids[i] = tlv.NameNode(name)
				}
				return tlv.NewStruct(n.Type(), kids...), nil
			}
		}),
	graphWrapped("tombstone-on-retire",
		"delivers a STATUS{not_found} tombstone when a vertex is retired (graph model §Retirement notification)",
		func(w *graphWrap) {
			// Along the retired vertex's edges and its ancestors', as they
			// stood before the retirement took its own.
			w.retire = func(c graph.Caller, path string) error {
				var tombs []graph.Delivery
				if p := vertexPathOf(path); p != "" && p != "/" && w.Exists(p) {
					tombs = edgesUp(w.Graph, p, tlv.StatusNode(tlv.StatusPathNotFound))
				}
				err := w.Graph.Retire(c, path)
				if err == nil {
					w.emit(tombs...)
				}
				return err
			}
		}),
	graphWrapped("sweep-capped-at-root",
		"delivers a swept descendant only to subscribers at or below the sweep root (graph model §The write sequence and pending vertices)",
		func(w *graphWrap) {
			w.deliver = func(root string, ds []graph.Delivery) []graph.Delivery {
				if root == "" {
					return ds
				}
				var kept []graph.Delivery
				for _, d := range ds {
					swept := d.Source != root && under(d.Source, root)
					above := d.Vertex != root && under(root, d.Vertex)
					if swept && above {
						continue
					}
					kept = append(kept, d)
				}
				return kept
			}
		}),
	graphPolicy("coalescing-sends-every-assign",
		"sends every assign made between two sweeps instead of the latest once (graph model §The write sequence…, \"Coalescing is free\")",
		func(p *graph.Policy) {
			p.Flush = func(q graph.FlushQuery) graph.Flushed {
				if !q.Stream && !q.Fold && len(q.Since) > 0 {
					return graph.Flushed{Values: q.Since}
				}
				return graph.ModelFlush(q)
			}
		}),
	graphPolicy("explicit-in-ancestor-sweep",
		"includes a pending EXPLICIT vertex in an ancestor's sweep (graph model §Delivery mode)",
		func(p *graph.Policy) {
			p.Includes = func(q graph.ModeQuery) bool {
				if q.At == graph.AtDescendant && q.Mode == graph.Explicit {
					return q.Pending
				}
				return graph.ModelIncludes(q)
			}
		}),
}

// graphFurther are the further failure modes, one for each MUST case the
// listed ones leave without a bug to catch.
var graphFurther = []Mutant{
	graphWrapped("string-keyed-vertices",
		"keys a vertex on its path's string form, so two spellings reach two vertices (graph model §Dispatch keyed on canonical PATH TLV bytes)",
		func(w *graphWrap) {
			// A path spelled other than canonically becomes one segment of
			// its own text ('/' read as '|'): a vertex of its own.
			w.path = func(s string) string {
				p, sel, hasField := strings.Cut(s, ":")
				canon := vertexPathOf(p)
				raw := strings.ReplaceAll(p, "/", "|")
				if p == "" || canon == "" || canon == p || len(raw) > 255 {
					return s
				}
				if hasField {
					return "/" + raw + ":" + sel
				}
				return "/" + raw
			}
		}),
	graphWrapped("double-delivery-at-own-vertex",
		"delivers a write twice along the written vertex's own edges (graph model §Subtree subscriptions…, once per subscriber)",
		func(w *graphWrap) {
			// Each run of deliveries along the edges of the vertex the value
			// was written or stored at is sent twice.
			w.deliver = func(_ string, ds []graph.Delivery) []graph.Delivery {
				var out []graph.Delivery
				for i := 0; i < len(ds); {
					d := ds[i]
					if d.Latched || d.Vertex != d.Source {
						out = append(out, d)
						i++
						continue
					}
					j := i + 1
					for j < len(ds) && !ds[j].Latched && ds[j].Vertex == d.Vertex && ds[j].Source == d.Source &&
						string(ds[j].TLV) == string(d.TLV) && ds[j].Slot > ds[j-1].Slot {
						j++
					}
					out = append(append(out, ds[i:j]...), ds[i:j]...)
					i = j
				}
				return out
			}
		}),
	graphWrapped("delivery-reencoded",
		"re-encodes a delivered TLV with minimal headers instead of carrying it as-is (graph model §Subtree subscriptions…)",
		func(w *graphWrap) {
			w.deliver = func(_ string, ds []graph.Delivery) []graph.Delivery {
				for i := range ds {
					if n, err := tlv.Decode(tlv.NewRope(ds[i].TLV)); err == nil {
						ds[i].TLV = reencode(n).Bytes()
					}
				}
				return ds
			}
		}),
	graphPolicy("create-gate-ignored",
		"lets a write-create through on WRITE alone, without CREATE on the nearest live ancestor (graph model §Subtree subscriptions…)",
		func(p *graph.Policy) {
			p.Requires = func(a graph.Act) graph.Rights {
				if a == graph.ActCreate {
					return 0
				}
				return graph.ModelRequires(a)
			}
		}),
	graphPolicy("appearance-silent",
		"does not deliver the write that creates a vertex (graph model §Observing structural change)",
		func(p *graph.Policy) {
			p.Plan = func(d graph.DataWrite) graph.WritePlan {
				plan := graph.ModelPlan(d)
				if d.Creates {
					plan.Propagate = false
				}
				return plan
			}
		}),
	graphPolicy("remote-write-not-propagated",
		"makes a remote FWD{WRITE} an assign alone, delivering nothing (graph model §Wire mapping)",
		func(p *graph.Policy) {
			p.Plan = func(d graph.DataWrite) graph.WritePlan {
				plan := graph.ModelPlan(d)
				if d.Remote && !d.Handler {
					plan.Propagate = false
				}
				return plan
			}
		}),
	graphPolicy("directed-write-honours-mode",
		"skips the propagate of a write to an EXPLICIT vertex (graph model §Wire mapping: a directed write always lands)",
		func(p *graph.Policy) {
			p.Plan = func(d graph.DataWrite) graph.WritePlan {
				plan := graph.ModelPlan(d)
				if d.Mode == graph.Explicit && !d.Handler {
					plan.Propagate = false
				}
				return plan
			}
		}),
	graphPolicy("status-write-not-delivered",
		"stores a written STATUS without delivering it (graph model §Stale and invalid values)",
		func(p *graph.Policy) {
			p.Plan = func(d graph.DataWrite) graph.WritePlan {
				plan := graph.ModelPlan(d)
				if d.Value.Type() == tlv.TypeStatus && !d.Handler {
					plan.Propagate = false
				}
				return plan
			}
		}),
	graphWrapped("read-serves-last-flush",
		"serves the last value a sweep delivered instead of the latest stored one (graph model §Subtree subscriptions…)",
		func(w *graphWrap) {
			// The graph's sweep decision is observed, not changed: what it
			// flushes is remembered, and a leaf read serves that.
			flushed := map[string]*tlv.Node{}
			w.policy.Flush = func(q graph.FlushQuery) graph.Flushed {
				f := graph.ModelFlush(q)
				if !q.Fold && len(f.Values) > 0 {
					flushed[q.Path] = q.Value
				}
				return f
			}
			w.retire = func(c graph.Caller, path string) error {
				return retired(w.Graph, c, path, func(p string) { delete(flushed, p) })
			}
			w.read = func(c graph.Caller, a graph.Address) (*tlv.Node, error) {
				n, err := w.Graph.ReadAddr(c, a)
				if err != nil || a.HasField {
					return n, err
				}
				if info, _ := w.Vertex(vertexPath(a)); info.Branch || info.Handler {
					return n, err
				}
				if v := flushed[vertexPath(a)]; v != nil {
					return v, nil
				}
				return nil, refusal("read", a, tlv.StatusPathNotFound, "never flushed")
			}
		}),
	graphPolicy("branch-stored-whole",
		"stores a POINT written at a vertex whole instead of decomposing it (graph model §Subtree subscriptions…)",
		func(p *graph.Policy) {
			p.Plan = func(d graph.DataWrite) graph.WritePlan {
				plan := graph.ModelPlan(d)
				plan.Branch = false
				return plan
			}
		}),
	graphPolicy("branch-admission-per-leaf",
		"lands the leaves admitted before a refused one instead of refusing the branch whole (graph model §Subtree subscriptions…)",
		func(p *graph.Policy) {
			p.Branch = func(b *graph.BranchWrite) error {
				for i := 0; i < b.Len(); i++ {
					if err := b.Admit(i); err != nil {
						for j := 0; j < i; j++ {
							if b.Node(j).Value != nil {
								b.Land(j)
							}
						}
						return err
					}
				}
				return graph.ModelBranch(b)
			}
		}),
	graphWrapped("branch-read-not-composed",
		"answers a branch's plain read with its own value instead of the composed branch read (graph model §Subtree subscriptions…, RFC-0016)",
		func(w *graphWrap) {
			w.read = func(c graph.Caller, a graph.Address) (*tlv.Node, error) {
				n, err := w.Graph.ReadAddr(c, a)
				if err != nil || a.HasField {
					return n, err
				}
				info, _ := w.Vertex(vertexPath(a))
				switch {
				case !info.Branch:
					return n, err
				case info.Value == nil:
					return nil, refusal("read", a, tlv.StatusPathNotFound, "never written")
				}
				return info.Value, nil
			}
		}),
	graphWrapped("composed-read-unpruned",
		"keeps READ-denied subtrees in the composed branch read (graph model §Subtree subscriptions…)",
		func(w *graphWrap) {
			// A caller who may read the branch gets what the owner reads.
			w.read = func(c graph.Caller, a graph.Address) (*tlv.Node, error) {
				n, err := w.Graph.ReadAddr(c, a)
				if err != nil || a.HasField {
					return n, err
				}
				if info, _ := w.Vertex(vertexPath(a)); info.Branch {
					return w.Graph.ReadAddr(graphOwner, a)
				}
				return n, err
			}
		}),
	graphWrapped("assign-delivers",
		"delivers on assign (graph model §Assign, propagate, and the coalescing sweep)",
		func(w *graphWrap) {
			w.assign = func(path string, v *tlv.Node) error {
				err := w.Graph.Assign(path, v)
				if err == nil {
					w.emit(edgesUp(w.Graph, vertexPathOf(path), v)...)
				}
				return err
			}
		}),
	graphPolicy("propagate-wakes-await",
		"wakes awaits on a propagate (graph model §Assign, propagate…: await is independent of propagation)",
		func(p *graph.Policy) {
			p.Wakes = func(e graph.Event) graph.Wake {
				if e.Kind == graph.EventPropagate {
					return graph.Wake{Complete: true, Serve: true}
				}
				return graph.ModelWakes(e)
			}
		}),
	graphWrapped("handler-assign-accepted",
		"accepts assign and propagate at a vertex that retains nothing instead of SCHEMA_NOT_FOUND (graph model §Assign, propagate…)",
		func(w *graphWrap) {
			atHandler := func(path string, err error) error {
				if info, _ := w.Vertex(path); info.Live && info.Handler && statusOf(err) == tlv.StatusSchemaNotFound {
					return nil
				}
				return err
			}
			w.assign = func(path string, v *tlv.Node) error { return atHandler(path, w.Graph.Assign(path, v)) }
			w.propagate = func(path string, e graph.Emission) error { return atHandler(path, w.Graph.Propagate(path, e)) }
		}),
	graphPolicy("handler-write-silent",
		"delivers nothing for a write at a handler vertex (graph model §Assign, propagate…)",
		func(p *graph.Policy) {
			p.Plan = func(d graph.DataWrite) graph.WritePlan {
				plan := graph.ModelPlan(d)
				if d.Handler {
					plan.Propagate = false
				}
				return plan
			}
		}),
	graphPolicy("handler-await-not-found",
		"answers an await at a handler vertex NOT_FOUND after the write (graph model §Assign, propagate…, RFC-0008 Amendment 2)",
		func(p *graph.Policy) {
			p.Wakes = func(e graph.Event) graph.Wake {
				wake := graph.ModelWakes(e)
				if e.Handler {
					wake.Serve = false
				}
				return wake
			}
		}),
	graphPolicy("sweep-whole-subtree",
		"includes every valued descendant in a sweep, pending or not (graph model §The write sequence and pending vertices)",
		func(p *graph.Policy) {
			p.Includes = func(q graph.ModeQuery) bool {
				if q.At == graph.AtDescendant && q.Mode == graph.IfNewer {
					return true
				}
				return graph.ModelIncludes(q)
			}
		}),
	graphPolicy("explicit-gates-assign",
		"lets the EXPLICIT mode gate assign (graph model §Delivery mode: assign is never gated)",
		func(p *graph.Policy) {
			p.Includes = func(q graph.ModeQuery) bool {
				if q.At == graph.AtAssign && q.Mode == graph.Explicit {
					return false
				}
				return graph.ModelIncludes(q)
			}
		}),
	graphPolicy("direct-propagate-only-pending",
		"delivers a propagate's own argument only when it is pending (graph model §Delivery mode)",
		func(p *graph.Policy) {
			p.Includes = func(q graph.ModeQuery) bool {
				if q.At == graph.AtRoot {
					return q.Pending
				}
				return graph.ModelIncludes(q)
			}
		}),
	graphPolicy("unconditional-as-if-newer",
		"treats UNCONDITIONAL as IF_NEWER (graph model §Delivery mode)",
		func(p *graph.Policy) {
			p.Includes = func(q graph.ModeQuery) bool {
				if q.Mode == graph.Unconditional {
					q.Mode = graph.IfNewer
				}
				return graph.ModelIncludes(q)
			}
		}),
	graphWrapped("fold-emits-each",
		"ignores the FOLD emission and emits one frame per vertex (graph model §Wire mapping)",
		func(w *graphWrap) {
			w.propagate = func(path string, e graph.Emission) error {
				if e == graph.EmitFold {
					e = graph.EmitEach
				}
				return w.Graph.Propagate(path, e)
			}
		}),
	graphPolicy("fold-accepts-stream",
		"folds a STREAM's latest value instead of refusing it (graph model §Wire mapping)",
		func(p *graph.Policy) {
			p.Flush = func(q graph.FlushQuery) graph.Flushed {
				f := graph.ModelFlush(q)
				if q.Fold && q.Stream && len(f.Values) > 0 {
					return graph.Flushed{Values: []*tlv.Node{q.Value}}
				}
				return f
			}
		}),
	graphPolicy("stream-flushes-latest-only",
		"flushes a STREAM's latest entry instead of draining every entry in order (graph model §Stream drain semantics)",
		func(p *graph.Policy) {
			p.Flush = func(q graph.FlushQuery) graph.Flushed {
				f := graph.ModelFlush(q)
				if q.Stream && len(f.Values) > 0 {
					f.Values = []*tlv.Node{q.Value}
				}
				return f
			}
		}),
	graphWrapped("fwd-envelope-applied",
		"applies a FWD{WRITE} with its envelope instead of the bare payload (graph model §The shedding rule)",
		func(w *graphWrap) {
			// The terminus gets a FWD{WRITE} whose payload is the whole
			// frame it received: same op, same routes, same reply.
			w.fwd = func(c graph.Caller, frame *tlv.Node) (*tlv.Node, *graph.Waiter, error) {
				if f, err := tlv.DecodeFwd(frame); err == nil && f.Op == tlv.OpWrite {
					f.Payload = frame
					frame = f.Node()
				}
				return graph.Terminus(w, c, frame)
			}
		}),
	graphWrapped("settings-absent-when-empty",
		"answers the bare :settings read SCHEMA_NOT_FOUND instead of SETTINGS{} (graph model §Core writable fields)",
		func(w *graphWrap) {
			w.read = func(c graph.Caller, a graph.Address) (*tlv.Node, error) {
				n, err := w.Graph.ReadAddr(c, a)
				if err == nil && a.HasField && a.Field == "settings" && len(n.Children()) == 0 {
					return nil, refusal("read", a, tlv.StatusSchemaNotFound, "no knobs")
				}
				return n, err
			}
		}),
	graphWrapped("liveness-rows-served",
		"serves and accepts the ⚠️ liveness and description rows (graph model §Core writable fields)",
		func(w *graphWrap) { serveFields(w, isLivenessRow) }),
	graphWrapped("module-field-accepted",
		"serves and accepts :settings.<module>.<field> (graph model §Module-namespaced extension fields)",
		func(w *graphWrap) { serveFields(w, isModuleField) }),
	graphWrapped("schema-omits-empty-settings",
		"omits the empty SETTINGS from :schema (graph model §Definitions, RFC-0022)",
		func(w *graphWrap) {
			w.read = func(c graph.Caller, a graph.Address) (*tlv.Node, error) {
				n, err := w.Graph.ReadAddr(c, a)
				if err != nil || !a.HasField || a.Field != "schema" {
					return n, err
				}
				var kids []*tlv.Node
				for _, k := range n.Children() {
					if k.Type() == tlv.TypeSettings && len(k.Children()) == 0 {
						continue
					}
					kids = append(kids, k)
				}
				return tlv.NewStruct(n.Type(), kids...), nil
			}
		}),
	graphWrapped("schema-writable",
		"accepts and serves a write of :schema (graph model §Definitions: read-only)",
		func(w *graphWrap) {
			// Stored without a right; served to a caller who may read it.
			written := map[string]*tlv.Node{}
			w.write = func(c graph.Caller, a graph.Address, v *tlv.Node) error {
				if a.HasField && a.Field == "schema" && v != nil && isLive(w.Graph, a) {
					written[vertexPath(a)] = v
					return nil
				}
				return w.Graph.WriteAddr(c, a, v)
			}
			w.read = func(c graph.Caller, a graph.Address) (*tlv.Node, error) {
				n, err := w.Graph.ReadAddr(c, a)
				if v := written[vertexPath(a)]; err == nil && a.HasField && a.Field == "schema" && v != nil {
					return v, nil
				}
				return n, err
			}
			w.retire = func(c graph.Caller, path string) error {
				return retired(w.Graph, c, path, func(p string) { delete(written, p) })
			}
		}),
	graphWrapped("children-valued-only",
		"leaves a child holding no value (registered, or a branch) out of :children[] (graph model §Observing structural change)",
		func(w *graphWrap) {
			w.read = func(c graph.Caller, a graph.Address) (*tlv.Node, error) {
				n, err := w.Graph.ReadAddr(c, a)
				if err != nil || !a.HasField || a.Field != "children[]" {
					return n, err
				}
				parent := vertexPath(a)
				if parent == "/" {
					parent = ""
				}
				var kids []*tlv.Node
				for _, k := range n.Children() {
					info, _ := w.Vertex(parent + "/" + string(k.Payload().Bytes()))
					if info.Handler || info.Value == nil {
						continue
					}
					kids = append(kids, k)
				}
				return tlv.NewStruct(n.Type(), kids...), nil
			}
		}),
	graphWrapped("await-field-accepted",
		"takes an await with a :field selector as an await of the vertex (graph model §Owner-declared application fields, #585)",
		func(w *graphWrap) {
			w.await = func(c graph.Caller, a graph.Address, timeout time.Duration) (*graph.Waiter, error) {
				a.Field, a.HasField = "", false
				return w.Graph.AwaitAddr(c, a, timeout)
			}
		}),
	graphWrapped("unwritten-app-field-schema-not-found",
		"answers a declared, never-written app field SCHEMA_NOT_FOUND instead of NOT_FOUND (graph model §Owner-declared application fields)",
		func(w *graphWrap) {
			w.read = func(c graph.Caller, a graph.Address) (*tlv.Node, error) {
				n, err := w.Graph.ReadAddr(c, a)
				if _, ok := appFieldName(a); ok && statusOf(err) == tlv.StatusPathNotFound && isLive(w.Graph, a) {
					return nil, refusal("read", a, tlv.StatusSchemaNotFound, "the app field was never written")
				}
				return n, err
			}
		}),
	graphWrapped("field-write-creates",
		"lets a field write create its missing vertex (graph model §Owner-declared application fields)",
		func(w *graphWrap) {
			// The vertex is created as a registration would, unjudged, and
			// the write is then judged on it.
			w.write = func(c graph.Caller, a graph.Address, v *tlv.Node) error {
				if a.HasField && a.Field != "subscribers[*]" && v != nil && !isLive(w.Graph, a) {
					if err := w.Graph.Register(vertexPath(a), nil); err != nil {
						return err
					}
				}
				return w.Graph.WriteAddr(c, a, v)
			}
		}),
	graphWrapped("read-only-app-field-writable",
		"lets callers write ro app fields (graph model §Owner-declared application fields)",
		func(w *graphWrap) {
			// A caller the reference refused as for an undeclared field,
			// after the WRITE right, wrote a declared one: a ro field.
			w.write = func(c graph.Caller, a graph.Address, v *tlv.Node) error {
				err := w.Graph.WriteAddr(c, a, v)
				if _, ok := appFieldName(a); ok && !c.IsOwner() && statusOf(err) == tlv.StatusSchemaNotFound {
					if _, oerr := w.Graph.ReadAddr(graphOwner, a); statusOf(oerr) != tlv.StatusSchemaNotFound {
						return w.Graph.WriteAddr(graphOwner, a, v)
					}
				}
				return err
			}
		}),
	graphWrapped("app-value-validated",
		"refuses an app field value that is not a VALUE (graph model §Owner-declared application fields: stored verbatim)",
		func(w *graphWrap) {
			// The check runs last, on a write the reference would store:
			// the vertex live, the WRITE right, the field declared and, for
			// a caller other than the owner, not ro.
			access := map[string]map[string]graph.Access{} // declared fields by vertex path
			w.declare = func(path string, fields []graph.AppField) error {
				err := w.Graph.DeclareAppFields(path, fields)
				if err == nil {
					m := map[string]graph.Access{}
					for _, f := range fields {
						m[f.Name] = f.Access
					}
					access[vertexPathOf(path)] = m
				}
				return err
			}
			w.retire = func(c graph.Caller, path string) error {
				return retired(w.Graph, c, path, func(p string) { delete(access, p) })
			}
			w.write = func(c graph.Caller, a graph.Address, v *tlv.Node) error {
				name, ok := appFieldName(a)
				if ok && v != nil && v.Type() != tlv.TypeValue && isLive(w.Graph, a) {
					need := graph.ModelRequires(graph.ActWrite)
					acc, declared := access[vertexPath(a)][name]
					if rights(w.Graph, c, a)&need == need && declared && (c.IsOwner() || acc != graph.ReadOnly) {
						return refusal("write", a, tlv.StatusSchemaTypeMismatch, "an app field takes a VALUE")
					}
				}
				return w.Graph.WriteAddr(c, a, v)
			}
		}),
	graphWrapped("write-only-app-field-readable",
		"serves wo app fields back to callers (graph model §Owner-declared application fields)",
		func(w *graphWrap) {
			// A caller refused as for an undeclared field, after the READ
			// right, read a declared one: a wo field. It gets the owner's
			// answer.
			w.read = func(c graph.Caller, a graph.Address) (*tlv.Node, error) {
				n, err := w.Graph.ReadAddr(c, a)
				if _, ok := appFieldName(a); ok && !c.IsOwner() && statusOf(err) == tlv.StatusSchemaNotFound {
					if on, oerr := w.Graph.ReadAddr(graphOwner, a); statusOf(oerr) != tlv.StatusSchemaNotFound {
						return on, oerr
					}
				}
				return n, err
			}
		}),
	graphWrapped("durability-request-ignored",
		"never sends the latched last value on join (graph model §Subscriber delivery policy)",
		func(w *graphWrap) {
			w.deliver = func(_ string, ds []graph.Delivery) []graph.Delivery {
				var kept []graph.Delivery
				for _, d := range ds {
					if !d.Latched {
						kept = append(kept, d)
					}
				}
				return kept
			}
		}),
	graphWrapped("reserved-policy-bits-rejected",
		"refuses a delivery policy with bits 8-15 set (graph model §Subscriber delivery policy)",
		func(w *graphWrap) {
			// The reference refuses an unreadable delivery policy with
			// tr::tlv::malformed after every other check of the write. A
			// SUBSCRIBER whose readable policy sets bits 8-15 is handed to it
			// with an unreadable one instead, so the write answers what a
			// graph refusing those bits at that point would.
			w.write = func(c graph.Caller, a graph.Address, v *tlv.Node) error {
				if isSubscribers(a) && v != nil {
					if sub, ok := reservedPolicyBits(v); ok {
						v = unreadablePolicy(sub)
					}
				}
				return w.Graph.WriteAddr(c, a, v)
			}
		}),
	graphWrapped("subscribers-index-grows",
		"grows the slot vector to reach a wire-supplied index (graph model §The payload-discriminating :subscribers[N] write)",
		func(w *graphWrap) {
			// An index past the vector, refused by the reference only for
			// that, is reached by growing the vector with empty slots (the
			// owner fills every slot up to it and clears what it filled),
			// and the write is tried again.
			w.write = func(c graph.Caller, a graph.Address, v *tlv.Node) error {
				err := w.Graph.WriteAddr(c, a, v)
				n, ok := slotIndex(a)
				have := len(slots(w.Graph, vertexPath(a)))
				if !ok || statusOf(err) != tlv.StatusPathInvalid || n < have || n >= 1<<16 {
					return err
				}
				growSlots(w.Graph, a, n+1)
				return w.Graph.WriteAddr(c, a, v)
			}
		}),
	graphPolicy("subscribers-append-at-front",
		"inserts an appended edge at slot 0, renumbering the rest (graph model §The payload-discriminating :subscribers[N] write)",
		func(p *graph.Policy) {
			p.Append = func(slots []*graph.Edge, e *graph.Edge) ([]*graph.Edge, int) {
				return append([]*graph.Edge{e}, slots...), 0
			}
		}),
	graphPolicy("subscribers-append-through-write-gate",
		"admits a :subscribers[] append through WRITE instead of SUBSCRIBE (graph model §The payload-discriminating :subscribers[N] write)",
		func(p *graph.Policy) {
			p.Requires = func(a graph.Act) graph.Rights {
				if a == graph.ActAppendEdge {
					return graph.RightWrite
				}
				return graph.ModelRequires(a)
			}
		}),
	graphWrapped("evict-every-link",
		"evicts every edge, local ones too, whatever the link (graph model §Vertex lifecycle)",
		func(w *graphWrap) {
			w.evict = func(string) int {
				n := 0
				for _, p := range w.Paths() {
					a, _ := graph.ParseAddress(p)
					for i, s := range slots(w.Graph, p) {
						if s.Type() == tlv.TypeSubscriber {
							_ = w.Graph.WriteAddr(graphOwner, field(a, "subscribers["+strconv.Itoa(i)+"]"), tlv.StatusNode(tlv.StatusOK))
							n++
						}
					}
				}
				return n
			}
		}),
	graphPolicy("retire-shallow",
		"retires the vertex alone, leaving its subtree live (graph model §Vertex lifecycle)",
		func(p *graph.Policy) {
			p.Retire = func(r *graph.Retirement) {
				r.Take(0)
				r.Free(0)
			}
		}),
	graphWrapped("retire-twice-not-found",
		"answers a retirement of a retired or unregistered path not_found instead of doing nothing (graph model §Vertex lifecycle)",
		func(w *graphWrap) {
			w.retire = func(c graph.Caller, path string) error {
				if p := vertexPathOf(path); p != "" && p != "/" && !w.Exists(p) {
					a, _ := graph.ParseAddress(path)
					return refusal("retire", a, tlv.StatusPathNotFound, "no live vertex")
				}
				return w.Graph.Retire(c, path)
			}
		}),
	graphWrapped("root-retirable",
		"retires everything below the root when asked to retire the root (graph model §Vertex lifecycle)",
		func(w *graphWrap) {
			// Judged on the root's DELETE right; the root itself stays live.
			w.retire = func(c graph.Caller, path string) error {
				if vertexPathOf(path) != "/" {
					return w.Graph.Retire(c, path)
				}
				a, _ := graph.ParseAddress(path)
				if need := graph.ModelRequires(graph.ActRetire); rights(w.Graph, c, a)&need != need {
					return refusal("retire", a, tlv.StatusAccessDenied, "the caller lacks DELETE")
				}
				for _, p := range w.Paths() {
					if pp, ok := parentPath(p); ok && pp == "/" {
						if err := w.Graph.Retire(graphOwner, p); err != nil {
							return err
						}
					}
				}
				return nil
			}
		}),
	graphPolicy("revival-keeps-state",
		"revives a vertex with its retired self's value, edges, ACL and fields (graph model §Vertex lifecycle)",
		func(p *graph.Policy) {
			p.Retire = func(r *graph.Retirement) {
				for i := 0; i < r.Len(); i++ {
					r.Take(i)
				}
			}
		}),
	graphWrapped("local-write-no-revive",
		"answers a local write to a retired path not_found instead of reviving it (graph model §Vertex lifecycle)",
		func(w *graphWrap) {
			w.write = func(c graph.Caller, a graph.Address, v *tlv.Node) error {
				if info, ok := w.Vertex(vertexPath(a)); ok && !info.Live && !a.HasField && !c.Remote && v != nil {
					return refusal("write", a, tlv.StatusPathNotFound, "the path was retired")
				}
				return w.Graph.WriteAddr(c, a, v)
			}
		}),
}

// serveFields makes w store and serve, on every live vertex and for every
// caller, the field selectors names accepts — selectors the reference
// answers tr::schema::not_found, since no row of the core table spells them.
// A retirement drops them with the vertex.
func serveFields(w *graphWrap, names func(field string) bool) {
	stored := map[string]map[string]*tlv.Node{} // by vertex path, then selector
	w.write = func(c graph.Caller, a graph.Address, v *tlv.Node) error {
		if !a.HasField || !names(a.Field) || v == nil || !isLive(w.Graph, a) {
			return w.Graph.WriteAddr(c, a, v)
		}
		p := vertexPath(a)
		if stored[p] == nil {
			stored[p] = map[string]*tlv.Node{}
		}
		stored[p][a.Field] = v
		return nil
	}
	w.read = func(c graph.Caller, a graph.Address) (*tlv.Node, error) {
		if !a.HasField || !names(a.Field) || !isLive(w.Graph, a) {
			return w.Graph.ReadAddr(c, a)
		}
		if v := stored[vertexPath(a)][a.Field]; v != nil {
			return v, nil
		}
		return nil, refusal("read", a, tlv.StatusPathNotFound, "the field was never written")
	}
	w.retire = func(c graph.Caller, path string) error {
		return retired(w.Graph, c, path, func(p string) { delete(stored, p) })
	}
}

// removedKnobs are the seven flat :settings names RFC-0022 removed (graph
// model §Core writable fields).
var removedKnobs = map[string]bool{
	"reliability": true, "priority": true, "durability": true, "deadline_ns": true,
	"queue_max_bytes": true, "history_keep_last": true, "store_ref_min_bytes": true,
}

func isRemovedKnob(f string) bool {
	knob, ok := strings.CutPrefix(f, "settings.")
	return ok && removedKnobs[knob]
}

// isModuleField reports whether f is :settings.<module>.<field…> for a module
// other than app, whose fields the core table does spell.
func isModuleField(f string) bool {
	rest, ok := strings.CutPrefix(f, "settings.")
	if !ok || !strings.Contains(rest, ".") {
		return false
	}
	app, isApp := strings.CutPrefix(rest, "app.")
	return !isApp || app == ""
}

// isLivenessRow reports whether f is one of the ⚠️ rows of the core table.
func isLivenessRow(f string) bool {
	return strings.HasPrefix(f, "liveness.") || f == "description"
}

// cutMember splits :subscribers[X].<anything> into the indexed selector it
// reads as when the trailing steps are ignored — X's index, 0 for [] and
// [*] — and the steps.
func cutMember(sel string) (indexed, steps string, ok bool) {
	inner, ok := strings.CutPrefix(sel, "subscribers[")
	if !ok {
		return "", "", false
	}
	inner, steps, ok = strings.Cut(inner, "].")
	if !ok {
		return "", "", false
	}
	if inner == "" || inner == "*" {
		inner = "0"
	}
	return "subscribers[" + inner + "]", steps, true
}

// reservedPolicyBits decodes v as a SUBSCRIBER whose delivery policy the
// reference reads, and reports whether it sets any of bits 8-15.
func reservedPolicyBits(v *tlv.Node) (tlv.Subscriber, bool) {
	if v.Type() != tlv.TypeSubscriber {
		return tlv.Subscriber{}, false
	}
	sub, err := tlv.DecodeSubscriber(v)
	if err != nil {
		return sub, false
	}
	if _, err := sub.Policy(); err != nil {
		return sub, false
	}
	for _, st := range sub.Settings {
		if st.Key == tlv.KeyDeliveryPolicy && st.Value != nil {
			b := st.Value.Payload().Bytes()
			return sub, len(b) == 2 && b[1] != 0
		}
	}
	return sub, false
}

// unreadablePolicy returns sub with a delivery policy one byte long.
func unreadablePolicy(sub tlv.Subscriber) *tlv.Node {
	settings := append([]tlv.Setting(nil), sub.Settings...)
	for i := range settings {
		if settings[i].Key == tlv.KeyDeliveryPolicy {
			settings[i].Value = tlv.NewLeaf(tlv.TypeValue, []byte{0})
		}
	}
	sub.Settings = settings
	return sub.Node()
}

// growSlots grows the slot vector of the vertex a names to n slots, leaving
// every slot it adds empty: the owner appends placeholder edges, which fill
// the empty slots first and then new ones, and clears what it filled.
func growSlots(g *graph.Graph, a graph.Address, n int) {
	list := slots(g, vertexPath(a))
	var filled []int
	for i, s := range list {
		if s.Type() != tlv.TypeSubscriber {
			filled = append(filled, i)
		}
	}
	for i := len(list); i < n; i++ {
		filled = append(filled, i)
	}
	placeholder := tlv.Subscriber{Target: tlv.NewRope(a.Path)}.Node()
	for range filled {
		_ = g.WriteAddr(graphOwner, field(a, "subscribers[]"), placeholder)
	}
	for _, i := range filled {
		_ = g.WriteAddr(graphOwner, field(a, "subscribers["+strconv.Itoa(i)+"]"), tlv.StatusNode(tlv.StatusOK))
	}
}
