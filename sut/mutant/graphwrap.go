package mutant

import (
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/conform-suite/conform/ref/graph"
	"github.com/conform-suite/conform/ref/tlv"
	"github.com/conform-suite/conform/sut/impl"
)

// graphMutant returns a graph mutant whose scripts run on the graphs build
// returns.
func graphMutant(name, bug string, build func() impl.GraphModel) Mutant {
	return Mutant{Name: name, Suite: "graph", Bug: bug, apply: func(im *impl.Impl) {
		im.Graph.New = build
	}}
}

// graphPolicy returns a graph mutant whose graphs are the reference built
// with one decision of the graph model replaced: set fills one field of a
// graph.Policy, and the replacement delegates to the model's decision (the
// graph.Model… function) for every input but the ones its bug is about.
func graphPolicy(name, bug string, set func(*graph.Policy)) Mutant {
	return graphMutant(name, bug, func() impl.GraphModel {
		var p graph.Policy
		set(&p)
		return graph.New(graph.Config{Policy: p})
	})
}

// graphWrapped returns a graph mutant whose graphs are the reference wrapped
// by a graphWrap that set fills with hooks.
func graphWrapped(name, bug string, set func(*graphWrap)) Mutant {
	return graphMutant(name, bug, func() impl.GraphModel {
		w := &graphWrap{}
		set(w)
		w.Graph = graph.New(graph.Config{Policy: w.policy})
		return w
	})
}

// A graphWrap is the reference graph with some of its operations replaced, the
// way a graph mutant changes what a script step answers or delivers without
// touching the reference. Each hook, when set, replaces one operation and
// reaches the reference through the embedded *graph.Graph; an unset hook
// leaves the operation as it is. Every operation that takes an address parses
// it and runs through the …Addr hooks, and a FWD's op is applied through
// them too (graph.Terminus with the wrapper as the endpoint), so one hook
// covers every way a step can reach the operation.
type graphWrap struct {
	*graph.Graph
	// policy is what the wrapped graph is built with; a wrapper that needs
	// to observe a decision sets one field.
	policy graph.Policy

	path      func(s string) string // rewrites every path and address string before it is parsed
	write     func(c graph.Caller, a graph.Address, v *tlv.Node) error
	read      func(c graph.Caller, a graph.Address) (*tlv.Node, error)
	await     func(c graph.Caller, a graph.Address, timeout time.Duration) (*graph.Waiter, error)
	assign    func(path string, v *tlv.Node) error
	propagate func(path string, e graph.Emission) error
	retire    func(c graph.Caller, path string) error
	evict     func(link string) int
	declare   func(path string, fields []graph.AppField) error
	setMode   func(path string, m graph.DeliveryMode) error
	setDepth  func(path string, keep int) error
	setACL    func(path string, a *graph.ACL) error
	fwd       func(c graph.Caller, frame *tlv.Node) (*tlv.Node, *graph.Waiter, error)
	// settle runs once after each operation, before its deliveries are taken
	// and its completed awaits read: where a wrapper completes the awaits it
	// answers itself (graph.NewWaiter).
	settle func()
	// deliver transforms what one operation delivered; root is the path of
	// the vertex its data write or propagate targeted, "" for any other
	// operation.
	deliver func(root string, ds []graph.Delivery) []graph.Delivery

	out []graph.Delivery // delivered, transformed, not yet taken
}

func (w *graphWrap) rewrite(s string) string {
	if w.path != nil {
		return w.path(s)
	}
	return s
}

// collect takes what the reference delivered during one operation through
// the deliver hook.
func (w *graphWrap) collect(root string) {
	ds := w.Graph.TakeDeliveries()
	if w.deliver != nil && len(ds) > 0 {
		ds = w.deliver(root, ds)
	}
	w.out = append(w.out, ds...)
}

// emit adds deliveries the wrapper makes itself, after the reference's so far.
func (w *graphWrap) emit(ds ...graph.Delivery) {
	w.collect("")
	w.out = append(w.out, ds...)
}

func (w *graphWrap) TakeDeliveries() []graph.Delivery {
	if w.settle != nil {
		w.settle()
	}
	w.collect("")
	out := w.out
	w.out = nil
	return out
}

func (w *graphWrap) Register(path string, h *graph.Handler) error {
	return w.Graph.Register(w.rewrite(path), h)
}

func (w *graphWrap) Write(c graph.Caller, addr string, v *tlv.Node) error {
	a, err := graph.ParseAddress(w.rewrite(addr))
	if err != nil {
		return err
	}
	return w.WriteAddr(c, a, v)
}

func (w *graphWrap) WriteAddr(c graph.Caller, a graph.Address, v *tlv.Node) error {
	var err error
	if w.write != nil {
		err = w.write(c, a, v)
	} else {
		err = w.Graph.WriteAddr(c, a, v)
	}
	root := ""
	if !a.HasField {
		root = a.String()
	}
	w.collect(root)
	return err
}

func (w *graphWrap) Read(c graph.Caller, addr string) (*tlv.Node, error) {
	a, err := graph.ParseAddress(w.rewrite(addr))
	if err != nil {
		return nil, err
	}
	return w.ReadAddr(c, a)
}

func (w *graphWrap) ReadAddr(c graph.Caller, a graph.Address) (*tlv.Node, error) {
	if w.read != nil {
		return w.read(c, a)
	}
	return w.Graph.ReadAddr(c, a)
}

func (w *graphWrap) Await(c graph.Caller, addr string, timeout time.Duration) (*graph.Waiter, error) {
	a, err := graph.ParseAddress(w.rewrite(addr))
	if err != nil {
		return nil, err
	}
	return w.AwaitAddr(c, a, timeout)
}

func (w *graphWrap) AwaitAddr(c graph.Caller, a graph.Address, timeout time.Duration) (*graph.Waiter, error) {
	if w.await != nil {
		return w.await(c, a, timeout)
	}
	return w.Graph.AwaitAddr(c, a, timeout)
}

func (w *graphWrap) Assign(path string, v *tlv.Node) error {
	path = w.rewrite(path)
	var err error
	if w.assign != nil {
		err = w.assign(path, v)
	} else {
		err = w.Graph.Assign(path, v)
	}
	w.collect("")
	return err
}

func (w *graphWrap) Propagate(path string, e graph.Emission) error {
	path = w.rewrite(path)
	var err error
	if w.propagate != nil {
		err = w.propagate(path, e)
	} else {
		err = w.Graph.Propagate(path, e)
	}
	w.collect(vertexPathOf(path))
	return err
}

func (w *graphWrap) Retire(c graph.Caller, path string) error {
	path = w.rewrite(path)
	var err error
	if w.retire != nil {
		err = w.retire(c, path)
	} else {
		err = w.Graph.Retire(c, path)
	}
	w.collect("")
	return err
}

func (w *graphWrap) EvictLinkEdges(link string) int {
	if w.evict != nil {
		return w.evict(link)
	}
	return w.Graph.EvictLinkEdges(link)
}

func (w *graphWrap) SetDeliveryMode(path string, m graph.DeliveryMode) error {
	path = w.rewrite(path)
	if w.setMode != nil {
		return w.setMode(path, m)
	}
	return w.Graph.SetDeliveryMode(path, m)
}

func (w *graphWrap) SetHistoryDepth(path string, keep int) error {
	path = w.rewrite(path)
	if w.setDepth != nil {
		return w.setDepth(path, keep)
	}
	return w.Graph.SetHistoryDepth(path, keep)
}

func (w *graphWrap) SetACL(path string, a *graph.ACL) error {
	path = w.rewrite(path)
	if w.setACL != nil {
		return w.setACL(path, a)
	}
	return w.Graph.SetACL(path, a)
}

func (w *graphWrap) DeclareAppFields(path string, fields []graph.AppField) error {
	path = w.rewrite(path)
	if w.declare != nil {
		return w.declare(path, fields)
	}
	return w.Graph.DeclareAppFields(path, fields)
}

func (w *graphWrap) ApplyFwd(c graph.Caller, frame *tlv.Node) (*tlv.Node, *graph.Waiter, error) {
	if w.fwd != nil {
		return w.fwd(c, frame)
	}
	return graph.Terminus(w, c, frame)
}

// What a wrapper asks of the reference: through the reference's own answers
// to the owner, never through its internals.

var graphOwner = graph.Owner()

// statusOf returns the status err carries, and 0 for nil.
func statusOf(err error) tlv.Status {
	st, _ := graph.StatusOf(err)
	return st
}

// refusal is a graph refusal a wrapper answers itself.
func refusal(op string, a graph.Address, st tlv.Status, reason string) error {
	return &graph.Error{Op: op, Addr: a.String(), Status: st, Reason: reason}
}

// vertexPath returns the path of the vertex a names, without its field.
func vertexPath(a graph.Address) string { return graph.Address{Path: a.Path}.String() }

// vertexPathOf returns the canonical path of the vertex path names, or "" when
// path is not a vertex address.
func vertexPathOf(path string) string {
	a, err := graph.ParseAddress(path)
	if err != nil || a.HasField {
		return ""
	}
	return a.String()
}

// field returns a's address of the field f on the same vertex.
func field(a graph.Address, f string) graph.Address {
	return graph.Address{Path: a.Path, Field: f, HasField: true}
}

// isLive reports whether the vertex a names is live.
func isLive(g *graph.Graph, a graph.Address) bool {
	info, ok := g.Vertex(vertexPath(a))
	return ok && info.Live
}

// parentPath returns the parent of a canonical path, and false for the root.
func parentPath(p string) (string, bool) {
	if p == "/" {
		return "", false
	}
	i := strings.LastIndexByte(p, '/')
	if i == 0 {
		return "/", true
	}
	return p[:i], true
}

// under reports whether the canonical path p is root or below it.
func under(p, root string) bool {
	return root == "/" || p == root || strings.HasPrefix(p, root+"/")
}

// liveUnder returns the live vertices at or below the canonical path root.
func liveUnder(g *graph.Graph, root string) []string {
	var out []string
	for _, p := range g.Paths() {
		if under(p, root) {
			out = append(out, p)
		}
	}
	return out
}

// retired wraps retire so that, after a retirement that succeeded, gone is
// called with every path it took out of the graph.
func retired(g *graph.Graph, c graph.Caller, path string, gone func(p string)) error {
	root := vertexPathOf(path)
	var before []string
	if root != "" {
		before = liveUnder(g, root)
	}
	err := g.Retire(c, path)
	if err == nil {
		for _, p := range before {
			if !g.Exists(p) {
				gone(p)
			}
		}
	}
	return err
}

// slots returns the :subscribers[] list of the vertex at the canonical path p
// as the owner reads it: a SUBSCRIBER, or the empty STATUS, per slot.
func slots(g *graph.Graph, p string) []*tlv.Node {
	a, err := graph.ParseAddress(p)
	if err != nil {
		return nil
	}
	n, err := g.ReadAddr(graphOwner, field(a, "subscribers[]"))
	if err != nil {
		return nil
	}
	return n.Children()
}

// edgesUp returns what delivering value, written at the canonical path p,
// along every edge of p and of each of its ancestors sends: p's edges first,
// then upward, each vertex's slots in order. The edges are the ones the
// owner reads in :subscribers[] (their link is not part of a delivery a
// script sees).
func edgesUp(g *graph.Graph, p string, value *tlv.Node) []graph.Delivery {
	var ds []graph.Delivery
	for at, ok := p, true; ok; at, ok = parentPath(at) {
		for i, n := range slots(g, at) {
			if n.Type() != tlv.TypeSubscriber {
				continue
			}
			sub, err := tlv.DecodeSubscriber(n)
			if err != nil {
				continue
			}
			target, err := tlv.PathString(sub.Target)
			if err != nil {
				continue
			}
			ds = append(ds, graph.Delivery{Vertex: at, Slot: i, Target: target, Source: p, TLV: value.Bytes()})
		}
	}
	return ds
}

// rights returns the rights c holds on the vertex a names, from the
// effective ACL the owner reads at :acl; the owner holds every right.
func rights(g *graph.Graph, c graph.Caller, a graph.Address) graph.Rights {
	if c.IsOwner() {
		return graph.AllRights
	}
	n, err := g.ReadAddr(graphOwner, field(a, "acl"))
	if err != nil {
		return 0
	}
	acl, err := graph.DecodeACL(n)
	if err != nil {
		return 0
	}
	return acl.Rights(c.Name)
}

// Field selectors as a wrapper recognises them in a parsed address (the
// reference has already refused every malformed one).

// slotIndex returns N of a :subscribers[N] address.
func slotIndex(a graph.Address) (int, bool) {
	if !a.HasField {
		return 0, false
	}
	inner, ok := strings.CutPrefix(a.Field, "subscribers[")
	if !ok {
		return 0, false
	}
	inner, ok = strings.CutSuffix(inner, "]")
	if !ok || inner == "" || inner == "*" {
		return 0, false
	}
	n, err := strconv.Atoi(inner)
	return n, err == nil
}

// isSubscribers reports whether a addresses :subscribers[] or
// :subscribers[N], the selectors that install an edge.
func isSubscribers(a graph.Address) bool {
	_, indexed := slotIndex(a)
	return indexed || a.HasField && a.Field == "subscribers[]"
}

// appFieldName returns <name> of a :settings.app.<name> address.
func appFieldName(a graph.Address) (string, bool) {
	if !a.HasField {
		return "", false
	}
	name, ok := strings.CutPrefix(a.Field, "settings.app.")
	return name, ok && name != ""
}

// sortNames sorts child names in canonical key order: a shorter name first,
// then by bytes (a segment record's length byte leads).
func sortNames(names []string) {
	sort.Slice(names, func(i, j int) bool {
		if len(names[i]) != len(names[j]) {
			return len(names[i]) < len(names[j])
		}
		return names[i] < names[j]
	})
}

// reencode rebuilds n with minimal headers: no trailer, the short length
// form wherever it fits.
func reencode(n *tlv.Node) *tlv.Node {
	if !n.Opt().PL() {
		return tlv.NewLeaf(n.Type(), n.Payload().Bytes())
	}
	var kids []*tlv.Node
	for _, c := range n.Children() {
		kids = append(kids, reencode(c))
	}
	return tlv.NewStruct(n.Type(), kids...)
}
