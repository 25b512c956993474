package mutant

import (
	"bytes"
	"strconv"
	"strings"
	"time"

	"github.com/conform-suite/conform/ref/graph"
	"github.com/conform-suite/conform/ref/tlv"
)

// graphRules break the rules issue 15 found the graph reference implementing
// with no case to judge them: the :acl and :identity fields, the right each
// operation needs, the FWD terminus's other ops, the address grammar, the
// branch write's shape and slices, STREAM rings, owner-side declarations and
// the awaits a retirement or a branch completes. Each is built like every
// graph mutant: a wrapper around the reference, or one decision of its
// graph.Policy replaced.
var graphRules = []Mutant{
	graphWrapped("acl-read-own-only",
		"reads a vertex's own ACL record at :acl, an empty one when it has none, instead of its effective ACL (graph model §Core writable fields)",
		func(w *graphWrap) {
			own := map[string]bool{"/": true} // the root always holds one
			w.setACL = func(path string, a *graph.ACL) error {
				err := w.Graph.SetACL(path, a)
				if p := vertexPathOf(path); err == nil && p != "" {
					own[p] = a != nil || p == "/"
				}
				return err
			}
			w.write = func(c graph.Caller, a graph.Address, v *tlv.Node) error {
				err := w.Graph.WriteAddr(c, a, v)
				if err == nil && a.HasField && a.Field == "acl" {
					own[vertexPath(a)] = true
				}
				return err
			}
			w.retire = func(c graph.Caller, path string) error {
				return retired(w.Graph, c, path, func(p string) { delete(own, p) })
			}
			w.read = func(c graph.Caller, a graph.Address) (*tlv.Node, error) {
				n, err := w.Graph.ReadAddr(c, a)
				if err == nil && a.HasField && a.Field == "acl" && !own[vertexPath(a)] {
					return tlv.NewStruct(tlv.TypeACL), nil
				}
				return n, err
			}
		}),
	graphPolicy("acl-write-through-write-gate",
		"admits an :acl write on the WRITE right instead of ADMIN (graph model §Core writable fields: writable \"with permission\")",
		func(p *graph.Policy) {
			p.Requires = func(a graph.Act) graph.Rights {
				if a == graph.ActAdminister {
					return graph.RightWrite
				}
				return graph.ModelRequires(a)
			}
		}),
	graphWrapped("acl-write-unchecked",
		"answers success to an :acl write of a TLV that is no ACL record, or a malformed one, changing nothing (graph model §Core writable fields)",
		func(w *graphWrap) {
			w.write = func(c graph.Caller, a graph.Address, v *tlv.Node) error {
				err := w.Graph.WriteAddr(c, a, v)
				if st := statusOf(err); a.HasField && a.Field == "acl" && (st == tlv.StatusSchemaTypeMismatch || st == tlv.StatusMalformed) {
					return nil
				}
				return err
			}
		}),
	graphWrapped("identity-unimplemented",
		"answers :identity SCHEMA_NOT_FOUND, as if it were one of the ⚠️ rows (graph model §Core writable fields: the implemented set includes identity)",
		func(w *graphWrap) {
			w.read = func(c graph.Caller, a graph.Address) (*tlv.Node, error) {
				n, err := w.Graph.ReadAddr(c, a)
				if err == nil && a.HasField && a.Field == "identity" {
					return nil, refusal("read", a, tlv.StatusSchemaNotFound, "no identity field")
				}
				return n, err
			}
		}),
	graphWrapped("cleared-slot-hidden",
		"leaves a cleared slot out of :subscribers[] and answers it INVALID_PATH, so the list's entries lose their N (reconstructed§tlv-lists#3)",
		func(w *graphWrap) {
			w.read = func(c graph.Caller, a graph.Address) (*tlv.Node, error) {
				n, err := w.Graph.ReadAddr(c, a)
				if err != nil || !a.HasField {
					return n, err
				}
				if _, ok := slotIndex(a); ok && isEmptyStatus(n) {
					return nil, refusal("read", a, tlv.StatusPathInvalid, "no such slot")
				}
				if a.Field != "subscribers[]" && a.Field != "subscribers[*]" {
					return n, err
				}
				var kids []*tlv.Node
				for _, k := range n.Children() {
					if !isEmptyStatus(k) {
						kids = append(kids, k)
					}
				}
				return tlv.NewStruct(n.Type(), kids...), nil
			}
		}),
	graphWrapped("read-only-fields-writable",
		"accepts and serves a write of :children[], :identity, :settings and :settings.app (reconstructed§graph-statuses#4)",
		func(w *graphWrap) {
			readOnly := map[string]bool{"children[]": true, "identity": true, "settings": true, "settings.app": true}
			written := map[string]map[string]*tlv.Node{} // by vertex path, then selector
			w.write = func(c graph.Caller, a graph.Address, v *tlv.Node) error {
				if !a.HasField || !readOnly[a.Field] || v == nil || !isLive(w.Graph, a) {
					return w.Graph.WriteAddr(c, a, v)
				}
				p := vertexPath(a)
				if written[p] == nil {
					written[p] = map[string]*tlv.Node{}
				}
				written[p][a.Field] = v
				return nil
			}
			w.read = func(c graph.Caller, a graph.Address) (*tlv.Node, error) {
				n, err := w.Graph.ReadAddr(c, a)
				if v := written[vertexPath(a)][a.Field]; err == nil && a.HasField && v != nil {
					return v, nil
				}
				return n, err
			}
			w.retire = func(c graph.Caller, path string) error {
				return retired(w.Graph, c, path, func(p string) { delete(written, p) })
			}
		}),
	graphWrapped("empty-selector-names-the-vertex",
		"reads an address ending in an empty selector (\"/v:\") as the vertex itself instead of INVALID_PATH (reconstructed§graph-address#2)",
		func(w *graphWrap) {
			w.path = func(s string) string {
				if p, sel, ok := strings.Cut(s, ":"); ok && sel == "" {
					return p
				}
				return s
			}
		}),
	graphWrapped("bare-list-selectors-accepted",
		"reads and writes :subscribers and :children, without brackets, as :subscribers[] and :children[] (reconstructed§graph-address#5)",
		func(w *graphWrap) {
			w.path = func(s string) string {
				if p, sel, ok := strings.Cut(s, ":"); ok && (sel == "subscribers" || sel == "children") {
					return p + ":" + sel + "[]"
				}
				return s
			}
		}),
	graphWrapped("create-without-write",
		"lets a local write-create through on CREATE alone, without WRITE on the ACL the new vertex inherits (reconstructed§graph-choices#1)",
		func(w *graphWrap) {
			w.write = func(c graph.Caller, a graph.Address, v *tlv.Node) error {
				err := w.Graph.WriteAddr(c, a, v)
				if a.HasField || c.Remote || c.IsOwner() || isLive(w.Graph, a) || statusOf(err) != tlv.StatusAccessDenied {
					return err
				}
				anc := nearestLivePath(w.Graph, vertexPath(a))
				aa, _ := graph.ParseAddress(anc)
				if need := graph.ModelRequires(graph.ActCreate); rights(w.Graph, c, aa)&need == need {
					return w.Graph.WriteAddr(graphOwner, a, v)
				}
				return err
			}
		}),
	graphWrapped("remote-branch-creates",
		"lets a remote branch write create the missing vertices its POINT tree reaches (reconstructed§graph-choices#2)",
		func(w *graphWrap) {
			w.write = func(c graph.Caller, a graph.Address, v *tlv.Node) error {
				err := w.Graph.WriteAddr(c, a, v)
				if c.Remote && !a.HasField && v != nil && v.Type() == tlv.TypePoint && isLive(w.Graph, a) && statusOf(err) == tlv.StatusPathNotFound {
					c.Remote = false
					return w.Graph.WriteAddr(c, a, v)
				}
				return err
			}
		}),
	graphPolicy("slot-write-through-write-gate",
		"admits a clear or mistyped write of :subscribers[N] on the WRITE right instead of SUBSCRIBE (reconstructed§graph-choices#5)",
		func(p *graph.Policy) {
			p.Requires = func(a graph.Act) graph.Rights {
				if a == graph.ActSlotWrite {
					return graph.RightWrite
				}
				return graph.ModelRequires(a)
			}
		}),
	graphWrapped("assign-creates",
		"creates the vertex an assign or a propagate names when it does not exist (reconstructed§graph-choices#7)",
		func(w *graphWrap) {
			create := func(path string) {
				if p := vertexPathOf(path); p != "" && !w.Exists(p) {
					_ = w.Graph.Register(p, nil)
				}
			}
			w.assign = func(path string, v *tlv.Node) error {
				create(path)
				return w.Graph.Assign(path, v)
			}
			w.propagate = func(path string, e graph.Emission) error {
				create(path)
				return w.Graph.Propagate(path, e)
			}
		}),
	graphPolicy("retire-leaves-awaits-pending",
		"leaves an await on a retired vertex outstanding for ever instead of completing it not_found (reconstructed§graph-choices#9)",
		func(p *graph.Policy) {
			p.Wakes = func(e graph.Event) graph.Wake {
				if e.Kind == graph.EventRetire {
					return graph.Wake{}
				}
				return graph.ModelWakes(e)
			}
		}),
	graphWrapped("fwd-reply-applied",
		"applies a FWD{REPLY} arriving at a terminus as a write of its answer to the dst (reconstructed§graph-choices#11)",
		func(w *graphWrap) {
			w.fwd = func(c graph.Caller, frame *tlv.Node) (*tlv.Node, *graph.Waiter, error) {
				if f, err := tlv.DecodeFwd(frame); err == nil && f.Op == tlv.OpReply {
					if r, err := tlv.DecodeReply(f.Payload); err == nil && r.Answer != nil {
						f.Op, f.Payload = tlv.OpWrite, r.Answer
						frame = f.Node()
					}
				}
				return graph.Terminus(w, c, frame)
			}
		}),
	graphWrapped("subscribe-to-field-subscribes-the-vertex",
		"installs a FWD{SUBSCRIBE} whose dst names a field as a subscription of the vertex, instead of answering SCHEMA_NOT_FOUND (reconstructed§graph-choices#11)",
		func(w *graphWrap) {
			w.fwd = func(c graph.Caller, frame *tlv.Node) (*tlv.Node, *graph.Waiter, error) {
				if f, err := tlv.DecodeFwd(frame); err == nil && f.Op == tlv.OpSubscribe {
					if segs, err := tlv.PathSegments(f.Dst); err == nil && len(segs) > 0 {
						last, _, _ := strings.Cut(segs[len(segs)-1], ":")
						segs[len(segs)-1] = last
						if dst, ok := records(segs); ok {
							f.Dst = dst
							frame = f.Node()
						}
					}
				}
				return graph.Terminus(w, c, frame)
			}
		}),
	graphWrapped("selector-in-any-record",
		"takes a field selector from any record of a FWD dst, not only the last (reconstructed§graph-address#3)",
		func(w *graphWrap) {
			w.fwd = func(c graph.Caller, frame *tlv.Node) (*tlv.Node, *graph.Waiter, error) {
				f, err := tlv.DecodeFwd(frame)
				if err != nil {
					return graph.Terminus(w, c, frame)
				}
				segs, err := tlv.PathSegments(f.Dst)
				if err != nil || len(segs) < 2 {
					return graph.Terminus(w, c, frame)
				}
				sel := ""
				for i, s := range segs[:len(segs)-1] {
					if name, field, ok := strings.Cut(s, ":"); ok && sel == "" {
						segs[i], sel = name, field
					}
				}
				if sel != "" && !strings.Contains(segs[len(segs)-1], ":") {
					segs[len(segs)-1] += ":" + sel
					if dst, ok := records(segs); ok {
						f.Dst = dst
						frame = f.Node()
					}
				}
				return graph.Terminus(w, c, frame)
			}
		}),
	graphWrapped("field-reads-ungated",
		"serves a field read to a caller without READ on the vertex (reconstructed§graph-acl#3; graph model §Owner-declared application fields)",
		func(w *graphWrap) {
			w.read = func(c graph.Caller, a graph.Address) (*tlv.Node, error) {
				n, err := w.Graph.ReadAddr(c, a)
				if a.HasField && statusOf(err) == tlv.StatusAccessDenied {
					return w.Graph.ReadAddr(graphOwner, a)
				}
				return n, err
			}
		}),
	graphWrapped("await-ungated",
		"registers an await for a caller without READ on the vertex (reconstructed§graph-acl#3)",
		func(w *graphWrap) {
			w.await = func(c graph.Caller, a graph.Address, timeout time.Duration) (*graph.Waiter, error) {
				aw, err := w.Graph.AwaitAddr(c, a, timeout)
				if statusOf(err) == tlv.StatusAccessDenied {
					return w.Graph.AwaitAddr(graphOwner, a, timeout)
				}
				return aw, err
			}
		}),
	graphPolicy("data-write-ungated",
		"lets a caller without WRITE write a vertex's value or an app field (reconstructed§graph-acl#3)",
		func(p *graph.Policy) {
			p.Requires = func(a graph.Act) graph.Rights {
				if a == graph.ActWrite {
					return 0
				}
				return graph.ModelRequires(a)
			}
		}),
	graphPolicy("retire-ungated",
		"lets a caller without DELETE retire a vertex (graph model §Retirement notification)",
		func(p *graph.Policy) {
			p.Requires = func(a graph.Act) graph.Rights {
				if a == graph.ActRetire {
					return 0
				}
				return graph.ModelRequires(a)
			}
		}),
	graphWrapped("fwd-read-answers-empty",
		"answers a FWD{READ} with an empty RESULT instead of the value read (graph model §The shedding rule)",
		func(w *graphWrap) {
			w.fwd = func(c graph.Caller, frame *tlv.Node) (*tlv.Node, *graph.Waiter, error) {
				rep, aw, err := graph.Terminus(w, c, frame)
				if f, ferr := tlv.DecodeFwd(frame); ferr == nil && f.Op == tlv.OpRead && rep != nil {
					if r, rerr := tlv.DecodeReply(rep.Children()[3]); rerr == nil && r.Answer != nil {
						return graph.ReplyFrame(f, nil, nil), aw, err
					}
				}
				return rep, aw, err
			}
		}),
	graphWrapped("fwd-op-ignored",
		"applies every FWD at its terminus as a WRITE of its payload, whatever its op (graph model §The shedding rule)",
		func(w *graphWrap) {
			w.fwd = func(c graph.Caller, frame *tlv.Node) (*tlv.Node, *graph.Waiter, error) {
				if f, err := tlv.DecodeFwd(frame); err == nil && f.Op != tlv.OpWrite && f.Op != tlv.OpReply {
					f.Op = tlv.OpWrite
					frame = f.Node()
				}
				return graph.Terminus(w, c, frame)
			}
		}),
	graphWrapped("fwd-subscribe-edge-unbound",
		"binds an edge a FWD{SUBSCRIBE} installs to no link, so evicting the link it arrived over leaves it (graph model §Vertex lifecycle)",
		func(w *graphWrap) {
			w.fwd = func(c graph.Caller, frame *tlv.Node) (*tlv.Node, *graph.Waiter, error) {
				if f, err := tlv.DecodeFwd(frame); err == nil && f.Op == tlv.OpSubscribe {
					c.Link = ""
				}
				return graph.Terminus(w, c, frame)
			}
		}),
	graphWrapped("evict-empty-link-clears-everything",
		"takes the empty link name as every edge's link and evicts them all (graph model §Vertex lifecycle)",
		func(w *graphWrap) {
			w.evict = func(link string) int {
				if link != "" {
					return w.Graph.EvictLinkEdges(link)
				}
				return clearEverySlot(w.Graph)
			}
		}),
	graphWrapped("branch-shape-lenient",
		"lands what it can of an ill-formed branch, dropping the nodes the POINT layout forbids, instead of refusing it whole (graph model §Subtree subscriptions…)",
		func(w *graphWrap) {
			w.write = func(c graph.Caller, a graph.Address, v *tlv.Node) error {
				err := w.Graph.WriteAddr(c, a, v)
				st := statusOf(err)
				if a.HasField || v == nil || v.Type() != tlv.TypePoint || (st != tlv.StatusMalformed && st != tlv.StatusPathInvalid) {
					return err
				}
				if fixed, ok := lenientPoint(v); ok {
					return w.Graph.WriteAddr(c, a, fixed)
				}
				return err
			}
		}),
	graphWrapped("branch-skips-handler-nodes",
		"drops the value of a branch node that lands at a handler vertex: its seam, subscribers and awaits never see it (graph model §Subtree subscriptions…)",
		func(w *graphWrap) {
			w.write = func(c graph.Caller, a graph.Address, v *tlv.Node) error {
				if a.HasField || v == nil || v.Type() != tlv.TypePoint {
					return w.Graph.WriteAddr(c, a, v)
				}
				if info, _ := w.Vertex(vertexPath(a)); info.Handler {
					return w.Graph.WriteAddr(c, a, v)
				}
				p, err := tlv.DecodePoint(v)
				if err != nil {
					return w.Graph.WriteAddr(c, a, v)
				}
				var strip func(pt *tlv.Point, at string) bool
				strip = func(pt *tlv.Point, at string) bool {
					changed := false
					for i := range pt.Children {
						child := at + "/" + pt.Children[i].Name
						if at == "/" {
							child = "/" + pt.Children[i].Name
						}
						if info, _ := w.Vertex(child); info.Live && info.Handler && pt.Children[i].Value != nil {
							pt.Children[i].Value, changed = nil, true
						}
						changed = strip(&pt.Children[i], child) || changed
					}
					return changed
				}
				if strip(&p, vertexPath(a)) {
					v = p.Node()
				}
				return w.Graph.WriteAddr(c, a, v)
			}
		}),
	graphWrapped("covered-point-gets-its-node",
		"notifies a covered point below a branch root with its own POINT node instead of the smallest subview covering its values (graph model §Subtree subscriptions…; §Wire mapping)",
		func(w *graphWrap) {
			w.write = func(c graph.Caller, a graph.Address, v *tlv.Node) error {
				err := w.Graph.WriteAddr(c, a, v)
				if err == nil && !a.HasField && v != nil && v.Type() == tlv.TypePoint {
					w.out = append(w.out, nodesForSlices(vertexPath(a), v, w.Graph.TakeDeliveries())...)
				}
				return err
			}
			w.propagate = func(path string, e graph.Emission) error {
				err := w.Graph.Propagate(path, e)
				root := vertexPathOf(path)
				if err != nil || e != graph.EmitFold || root == "" {
					return err
				}
				ds := w.Graph.TakeDeliveries()
				for _, d := range ds {
					// The folded frame is what the root and its ancestors
					// are delivered, with the root as its source.
					if d.Source == root && under(root, d.Vertex) {
						if frame, ferr := tlv.Decode(tlv.NewRope(d.TLV)); ferr == nil {
							ds = nodesForSlices(root, frame, ds)
						}
						break
					}
				}
				w.out = append(w.out, ds...)
				return nil
			}
		}),
	graphWrapped("on-change-filter",
		"skips an assign of the very bytes already stored, so the vertex does not become pending (graph model §The write sequence…; §Delivery mode: no byte comparison)",
		func(w *graphWrap) {
			w.assign = func(path string, v *tlv.Node) error {
				if info, ok := w.Vertex(vertexPathOf(path)); ok && info.Live && !info.Handler && info.Value != nil && v != nil && bytes.Equal(info.Value.Bytes(), v.Bytes()) {
					return nil
				}
				return w.Graph.Assign(path, v)
			}
		}),
	graphWrapped("stream-keeps-twice-its-depth",
		"keeps twice a STREAM's declared history depth before shedding its oldest entries (graph model §Stream drain semantics)",
		func(w *graphWrap) {
			w.setDepth = func(path string, keep int) error { return w.Graph.SetHistoryDepth(path, 2*keep) }
		}),
	graphWrapped("declarations-inherited",
		"applies a delivery mode, history depth or app-field table to the vertex's live descendants too (graph model §Storage is declared owner-side, and nothing is inherited)",
		func(w *graphWrap) {
			below := func(path string, f func(p string) error) error {
				if err := f(path); err != nil {
					return err
				}
				root := vertexPathOf(path)
				for _, p := range liveUnder(w.Graph, root) {
					if p != root {
						if info, _ := w.Vertex(p); !info.Handler {
							_ = f(p)
						}
					}
				}
				return nil
			}
			w.setMode = func(path string, m graph.DeliveryMode) error {
				return below(path, func(p string) error { return w.Graph.SetDeliveryMode(p, m) })
			}
			w.setDepth = func(path string, keep int) error {
				return below(path, func(p string) error { return w.Graph.SetHistoryDepth(p, keep) })
			}
			w.declare = func(path string, fields []graph.AppField) error {
				return below(path, func(p string) error { return w.Graph.DeclareAppFields(p, fields) })
			}
		}),
	graphWrapped("subscriber-policy-dropped",
		"stores a SUBSCRIBER without its SETTINGS, so its delivery policy is not read back (graph model §Subscriber delivery policy)",
		func(w *graphWrap) {
			w.write = func(c graph.Caller, a graph.Address, v *tlv.Node) error {
				if isSubscribers(a) && v != nil && v.Type() == tlv.TypeSubscriber {
					if sub, err := tlv.DecodeSubscriber(v); err == nil && sub.HasSettings {
						if _, perr := sub.Policy(); perr == nil {
							v = tlv.Subscriber{Target: sub.Target}.Node()
						}
					}
				}
				return w.Graph.WriteAddr(c, a, v)
			}
		}),
	graphWrapped("malformed-subscriber-accepted",
		"answers success to a :subscribers write of a SUBSCRIBER it cannot decode, installing nothing (graph model §The payload-discriminating :subscribers[N] write)",
		func(w *graphWrap) {
			w.write = func(c graph.Caller, a graph.Address, v *tlv.Node) error {
				err := w.Graph.WriteAddr(c, a, v)
				st := statusOf(err)
				if isSubscribers(a) && v != nil && v.Type() == tlv.TypeSubscriber && (st == tlv.StatusMalformed || st == tlv.StatusPathInvalid) && !readableSubscriber(v) {
					return nil
				}
				return err
			}
		}),
	graphWrapped("owner-cannot-read-write-only",
		"refuses the owner its own wo app fields, as it refuses callers (graph model §Owner-declared application fields)",
		func(w *graphWrap) {
			wo := map[string]map[string]bool{} // wo fields by vertex path
			w.declare = func(path string, fields []graph.AppField) error {
				err := w.Graph.DeclareAppFields(path, fields)
				if err == nil {
					m := map[string]bool{}
					for _, f := range fields {
						m[f.Name] = f.Access == graph.WriteOnly
					}
					wo[vertexPathOf(path)] = m
				}
				return err
			}
			w.retire = func(c graph.Caller, path string) error {
				return retired(w.Graph, c, path, func(p string) { delete(wo, p) })
			}
			w.read = func(c graph.Caller, a graph.Address) (*tlv.Node, error) {
				if name, ok := appFieldName(a); ok && c.IsOwner() && wo[vertexPath(a)][name] && isLive(w.Graph, a) {
					return nil, refusal("read", a, tlv.StatusSchemaNotFound, "a wo field has no read surface")
				}
				return w.Graph.ReadAddr(c, a)
			}
		}),
	graphWrapped("branch-await-serves-the-fold",
		"answers an await at a branch vertex with the composed subtree fold instead of the branch's own value (graph model §Assign, propagate…)",
		func(w *graphWrap) {
			type proxied struct {
				own, answer *graph.Waiter
				at          graph.Address
			}
			var outstanding []proxied
			w.await = func(c graph.Caller, a graph.Address, timeout time.Duration) (*graph.Waiter, error) {
				own, err := w.Graph.AwaitAddr(c, a, timeout)
				if err != nil {
					return own, err
				}
				p := proxied{own: own, answer: graph.NewWaiter(a.String()), at: a}
				outstanding = append(outstanding, p)
				return p.answer, nil
			}
			w.settle = func() {
				kept := outstanding[:0]
				for _, p := range outstanding {
					if !p.own.Done() {
						kept = append(kept, p)
						continue
					}
					v, err := p.own.Result()
					if info, _ := w.Vertex(vertexPath(p.at)); err == nil && info.Live && info.Branch {
						v, err = w.Graph.ReadAddr(graphOwner, p.at)
					}
					p.answer.Complete(v, err)
				}
				outstanding = kept
			}
		}),
}

// isEmptyStatus reports whether n is the empty STATUS, an empty slot.
func isEmptyStatus(n *tlv.Node) bool {
	return n != nil && n.Type() == tlv.TypeStatus && !n.Opt().PL() && n.Payload().Len() == 0
}

// nearestLivePath returns p or its nearest live ancestor; the root is
// always live.
func nearestLivePath(g *graph.Graph, p string) string {
	for {
		if g.Exists(p) {
			return p
		}
		up, ok := parentPath(p)
		if !ok {
			return "/"
		}
		p = up
	}
}

// records returns the PATH payload of segs, one record each, and false when
// a record does not fit its length byte.
func records(segs []string) (tlv.Rope, bool) {
	var out []byte
	for _, s := range segs {
		if s == "" || len(s) > 255 {
			return tlv.Rope{}, false
		}
		out = append(append(out, byte(len(s))), s...)
	}
	return tlv.NewRope(out), true
}

// clearEverySlot clears every edge of every live vertex, as the owner, and
// returns how many it cleared.
func clearEverySlot(g *graph.Graph) int {
	n := 0
	for _, p := range g.Paths() {
		a, _ := graph.ParseAddress(p)
		for i, s := range slots(g, p) {
			if s.Type() == tlv.TypeSubscriber {
				_ = g.WriteAddr(graphOwner, field(a, "subscribers["+strconv.Itoa(i)+"]"), tlv.StatusNode(tlv.StatusOK))
				n++
			}
		}
	}
	return n
}

// lenientPoint rebuilds a POINT tree keeping what its layout allows: each
// node's leading NAME, its first VALUE and TIME, and the child POINTs whose
// names are distinct path segments; a node with no leading NAME is dropped,
// and so the root fails (false).
func lenientPoint(n *tlv.Node) (*tlv.Node, bool) {
	if n.Type() != tlv.TypePoint || !n.Opt().PL() {
		return nil, false
	}
	kids := n.Children()
	if len(kids) == 0 || kids[0].Type() != tlv.TypeName || kids[0].Opt().PL() {
		return nil, false
	}
	out := []*tlv.Node{kids[0]}
	var val, tm *tlv.Node
	var points []*tlv.Node
	names := map[string]bool{}
	for _, k := range kids[1:] {
		switch {
		case k.Type() == tlv.TypeValue && !k.Opt().PL() && val == nil:
			val = k
		case k.Type() == tlv.TypeTime && !k.Opt().PL() && tm == nil && k.Payload().Len() == 8:
			tm = k
		case k.Type() == tlv.TypePoint:
			fixed, ok := lenientPoint(k)
			if !ok {
				continue
			}
			name := string(fixed.Children()[0].Payload().Bytes())
			if !segmentName(name) || names[name] {
				continue
			}
			names[name] = true
			points = append(points, fixed)
		}
	}
	if val != nil {
		out = append(out, val)
	}
	if tm != nil {
		out = append(out, tm)
	}
	return tlv.NewStruct(tlv.TypePoint, append(out, points...)...), true
}

// segmentName reports whether name is one canonical path segment, with no
// field selector in it.
func segmentName(name string) bool {
	if name == "" || strings.ContainsAny(name, "/:") {
		return false
	}
	p, err := tlv.CanonicalPath(name)
	return err == nil && len(p) == 1+len(name)
}

// nodesForSlices replaces each delivery made below root, along the edges of
// a vertex the branch frame covers, with that vertex's whole POINT node in
// the frame.
func nodesForSlices(root string, frame *tlv.Node, ds []graph.Delivery) []graph.Delivery {
	for i, d := range ds {
		if d.Vertex == root || !under(d.Vertex, root) {
			continue
		}
		rel := strings.TrimPrefix(d.Vertex, root)
		if root == "/" {
			rel = d.Vertex
		}
		n := frame
		for _, seg := range strings.Split(strings.Trim(rel, "/"), "/") {
			var next *tlv.Node
			for _, k := range n.Children() {
				if k.Type() == tlv.TypePoint && len(k.Children()) > 0 && string(k.Children()[0].Payload().Bytes()) == seg {
					next = k
					break
				}
			}
			if next == nil {
				n = nil
				break
			}
			n = next
		}
		if n != nil {
			ds[i].TLV = n.Bytes()
		}
	}
	return ds
}

// readableSubscriber reports whether v decodes as a SUBSCRIBER with a
// readable target and delivery policy.
func readableSubscriber(v *tlv.Node) bool {
	sub, err := tlv.DecodeSubscriber(v)
	if err != nil {
		return false
	}
	if _, err := sub.Policy(); err != nil {
		return false
	}
	_, err = tlv.PathString(sub.Target)
	return err == nil
}
