package graph_test

import (
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/conform-suite/conform/ref/graph"
	"github.com/conform-suite/conform/ref/tlv"
)

// modelPolicy sets every decision to the graph model's own, which also puts
// the graph on the paths a replaced decision takes: every sweep walks its
// whole subtree (Includes) and every vertex keeps what was assigned since its
// last flush (Flush).
var modelPolicy = graph.Policy{
	Requires: graph.ModelRequires,
	Plan:     graph.ModelPlan,
	Includes: graph.ModelIncludes,
	Flush:    graph.ModelFlush,
	Wakes:    graph.ModelWakes,
	Append:   graph.ModelAppend,
	Branch:   graph.ModelBranch,
	Retire:   graph.ModelRetire,
}

// twin drives the same operations through two graphs and fails at the first
// answer, delivery or await completion in which they differ.
type twin struct {
	t      *rapid.T
	a, b   *graph.Graph
	awaits [][2]*graph.Waiter
	step   int
}

// answer renders what an operation answered: its status and value.
func answer(v *tlv.Node, err error) string {
	st, _ := graph.StatusOf(err)
	if err != nil && st == 0 {
		return "error " + err.Error()
	}
	if v == nil {
		return fmt.Sprint(st)
	}
	return fmt.Sprintf("%v %x", st, v.Bytes())
}

func (tw *twin) same(op string, a, b string) {
	tw.step++
	if a != b {
		tw.t.Fatalf("step %d, %s: the model policy answers %s, the zero policy %s", tw.step, op, b, a)
	}
	da, db := brief(tw.a.TakeDeliveries()), brief(tw.b.TakeDeliveries())
	if !slices.Equal(da, db) {
		tw.t.Fatalf("step %d, %s: the model policy delivers\n%v\nthe zero policy\n%v", tw.step, op, db, da)
	}
	for i, w := range tw.awaits {
		if ra, rb := waited(w[0]), waited(w[1]); ra != rb {
			tw.t.Fatalf("step %d, %s: await %d: the model policy %s, the zero policy %s", tw.step, op, i, rb, ra)
		}
	}
	if pa, pb := strings.Join(tw.a.Paths(), " "), strings.Join(tw.b.Paths(), " "); pa != pb {
		tw.t.Fatalf("step %d, %s: live vertices differ: %s / %s", tw.step, op, pb, pa)
	}
	if pa, pb := strings.Join(tw.a.Pending(), " "), strings.Join(tw.b.Pending(), " "); pa != pb {
		tw.t.Fatalf("step %d, %s: pending vertices differ: %s / %s", tw.step, op, pb, pa)
	}
}

func waited(w *graph.Waiter) string {
	if w == nil {
		return "none"
	}
	if !w.Done() {
		return "pending"
	}
	return answer(w.Result())
}

func (tw *twin) err(op string, f func(g *graph.Graph) error) {
	tw.same(op, answer(nil, f(tw.a)), answer(nil, f(tw.b)))
}

func (tw *twin) node(op string, f func(g *graph.Graph) (*tlv.Node, error)) {
	tw.same(op, answer(f(tw.a)), answer(f(tw.b)))
}

// TestModelPolicyIsTheZeroPolicy: a Policy whose every field is the graph
// model's decision makes a graph no script can tell from one with the zero
// Policy — so each Model function states exactly what the graph does by
// default, and the paths a replaced decision takes (the whole-subtree sweep,
// the values kept since a flush) change nothing by themselves.
func TestModelPolicyIsTheZeroPolicy(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		clock := time.Unix(0, 0)
		now := func() time.Time { return clock }
		tw := &twin{
			t: t,
			a: graph.New(graph.Config{Now: now}),
			b: graph.New(graph.Config{Now: now, Policy: modelPolicy}),
		}
		// Few paths, so that operations collide.
		vertex := rapid.SampledFrom([]string{"/a", "/b", "/a/a", "/a/b", "/b/a/c"})
		callers := []graph.Caller{graph.Owner(), graph.Local("app"), graph.Peer("peer", "/net/tcp/l0"), graph.Peer("peer", "/net/tcp/l1")}
		caller := func(t *rapid.T) graph.Caller { return rapid.SampledFrom(callers).Draw(t, "caller") }
		n := 0
		value := func(t *rapid.T) *tlv.Node {
			n++
			v := fmt.Sprint(n)
			switch rapid.IntRange(0, 5).Draw(t, "kind") {
			case 0:
				return tlv.StatusNode(tlv.StatusPathNotFound)
			case 1:
				return pnode(point("x", val(v), point("a", val(v+"a")), point("b", nil, point("c", val(v+"c")))))
			case 2:
				return pnode(point("x", nil, point(rapid.SampledFrom([]string{"a", "b"}).Draw(t, "seg"), val(v))))
			}
			return val(v)
		}
		fields := []string{
			"subscribers[]", "subscribers[0]", "subscribers[1]", "subscribers[*]", "subscribers[0].x",
			"settings", "settings.app", "settings.app.ro", "settings.app.rw", "settings.app.wo", "settings.app.none",
			"settings.reliability", "settings.mod.f", "liveness.heartbeat_hz", "schema", "acl", "children[]", "identity",
		}
		addr := func(t *rapid.T) string {
			p := spell(t, vertex.Draw(t, "path"))
			if rapid.IntRange(0, 2).Draw(t, "field?") == 0 {
				return p + ":" + rapid.SampledFrom(fields).Draw(t, "field")
			}
			return p
		}
		subscriber := func(t *rapid.T) *tlv.Node {
			switch rapid.IntRange(0, 3).Draw(t, "payload") {
			case 0:
				return tlv.StatusNode(tlv.StatusOK)
			case 1:
				return val("not a subscriber")
			}
			return sub(t, "/obs", rapid.Bool().Draw(t, "durable"))
		}
		t.Repeat(map[string]func(*rapid.T){
			"write": func(t *rapid.T) {
				c, a, v := caller(t), addr(t), value(t)
				tw.err("write "+a, func(g *graph.Graph) error { return g.Write(c, a, v) })
			},
			"edge": func(t *rapid.T) {
				c, p, v := caller(t), spell(t, vertex.Draw(t, "path")), subscriber(t)
				f := rapid.SampledFrom(fields[:5]).Draw(t, "field")
				tw.err("edge "+p+":"+f, func(g *graph.Graph) error { return g.Write(c, p+":"+f, v) })
			},
			"subscribe": func(t *rapid.T) {
				c, p := caller(t), spell(t, rapid.SampledFrom([]string{"/", "/a", "/b", "/a/b"}).Draw(t, "path"))
				v := sub(t, "/obs", rapid.Bool().Draw(t, "durable"))
				tw.err("subscribe "+p, func(g *graph.Graph) error { return g.Write(c, p+":subscribers[]", v) })
			},
			"assign": func(t *rapid.T) {
				p, v := spell(t, vertex.Draw(t, "path")), value(t)
				tw.err("assign "+p, func(g *graph.Graph) error { return g.Assign(p, v) })
			},
			"propagate": func(t *rapid.T) {
				p := rapid.SampledFrom([]string{"/", "/a", "/b", "/a/b", "/b/a"}).Draw(t, "root")
				e := graph.Emission(rapid.IntRange(0, 1).Draw(t, "emission"))
				tw.err("propagate "+p, func(g *graph.Graph) error { return g.Propagate(p, e) })
			},
			"read": func(t *rapid.T) {
				c, a := caller(t), addr(t)
				tw.node("read "+a, func(g *graph.Graph) (*tlv.Node, error) { return g.Read(c, a) })
			},
			"await": func(t *rapid.T) {
				c, a, d := caller(t), addr(t), time.Duration(rapid.IntRange(0, 2).Draw(t, "timeout"))
				var ws [2]*graph.Waiter
				var answers [2]string
				for i, g := range []*graph.Graph{tw.a, tw.b} {
					w, err := g.Await(c, a, d)
					ws[i], answers[i] = w, answer(nil, err)
				}
				tw.awaits = append(tw.awaits, ws)
				tw.same("await "+a, answers[0], answers[1])
			},
			"expire": func(t *rapid.T) {
				clock = clock.Add(time.Nanosecond)
				tw.same("expire", fmt.Sprint(tw.a.Expire()), fmt.Sprint(tw.b.Expire()))
			},
			"register": func(t *rapid.T) {
				p := vertex.Draw(t, "path")
				var h *graph.Handler
				if rapid.Bool().Draw(t, "handler") {
					h = &graph.Handler{OnRead: func() *tlv.Node { return val("h") }}
				}
				tw.err("register "+p, func(g *graph.Graph) error { return g.Register(p, h) })
			},
			"declare": func(t *rapid.T) {
				p := vertex.Draw(t, "path")
				fs := []graph.AppField{{Name: "ro", Access: graph.ReadOnly, Initial: val("0")}, {Name: "rw", Access: graph.ReadWrite}, {Name: "wo", Access: graph.WriteOnly}}
				tw.err("declare "+p, func(g *graph.Graph) error { return g.DeclareAppFields(p, fs) })
			},
			"acl": func(t *rapid.T) {
				p := rapid.SampledFrom([]string{"/", "/a", "/a/b"}).Draw(t, "path")
				acl := &graph.ACL{Default: graph.AllRights, Grants: map[string]graph.Rights{
					"app": graph.Rights(rapid.IntRange(0, 63).Draw(t, "app")), "peer": graph.Rights(rapid.IntRange(0, 63).Draw(t, "peer")),
				}}
				tw.err("acl "+p, func(g *graph.Graph) error { return g.SetACL(p, acl) })
			},
			"mode": func(t *rapid.T) {
				p, m := vertex.Draw(t, "path"), graph.DeliveryMode(rapid.IntRange(0, 2).Draw(t, "mode"))
				tw.err("mode "+p, func(g *graph.Graph) error { return g.SetDeliveryMode(p, m) })
			},
			"depth": func(t *rapid.T) {
				p, k := vertex.Draw(t, "path"), rapid.IntRange(0, 2).Draw(t, "keep")
				tw.err("depth "+p, func(g *graph.Graph) error { return g.SetHistoryDepth(p, k) })
			},
			"retire": func(t *rapid.T) {
				c, p := caller(t), spell(t, rapid.SampledFrom([]string{"/", "/a", "/b", "/a/b", "/a/a"}).Draw(t, "path"))
				tw.err("retire "+p, func(g *graph.Graph) error { return g.Retire(c, p) })
			},
			"evict": func(t *rapid.T) {
				link := rapid.SampledFrom(append([]string{""}, links...)).Draw(t, "link")
				tw.same("evict "+link, fmt.Sprint(tw.a.EvictLinkEdges(link)), fmt.Sprint(tw.b.EvictLinkEdges(link)))
			},
			"fwd": func(t *rapid.T) {
				c := rapid.SampledFrom(callers[2:]).Draw(t, "caller")
				p := vertex.Draw(t, "path")
				dst, _ := tlv.CanonicalPath(p)
				f := tlv.Fwd{Op: tlv.Op(rapid.IntRange(1, 4).Draw(t, "op")), Dst: tlv.NewRope(dst), Src: tlv.NewRope([]byte("\x04back")), Payload: value(t)}
				if f.Op == tlv.OpSubscribe {
					f.Payload = subscriber(t)
				}
				frame := f.Node()
				var ws [2]*graph.Waiter
				var answers [2]string
				for i, g := range []*graph.Graph{tw.a, tw.b} {
					reply, w, err := g.ApplyFwd(c, frame)
					ws[i], answers[i] = w, answer(reply, err)
				}
				tw.awaits = append(tw.awaits, ws)
				tw.same(fmt.Sprintf("fwd %d %s", f.Op, p), answers[0], answers[1])
			},
		})
	})
}

// TestVertexInfo: what the owner sees of a vertex host-side.
func TestVertexInfo(t *testing.T) {
	g := graph.New(graph.Config{})
	must(t, g.Write(graph.Owner(), "/a", val("1")))
	must(t, g.Write(graph.Owner(), "/a/b", val("2")))
	must(t, g.Register("/h", &graph.Handler{OnRead: func() *tlv.Node { return val("h") }}))
	must(t, g.SetDeliveryMode("/a/b", graph.Explicit))
	must(t, g.SetHistoryDepth("/a/b", 3))
	must(t, g.Register("/gone", nil))
	must(t, g.Retire(graph.Owner(), "/gone"))
	for _, tc := range []struct {
		path   string
		want   graph.VertexInfo
		wantOK bool
		value  string
	}{
		{path: "/a", want: graph.VertexInfo{Live: true, Branch: true}, wantOK: true, value: "1"},
		{path: "a//b/", want: graph.VertexInfo{Live: true, Mode: graph.Explicit, HistoryDepth: 3}, wantOK: true, value: "2"},
		{path: "/h", want: graph.VertexInfo{Live: true, Handler: true}, wantOK: true, value: "h"},
		{path: "/gone", want: graph.VertexInfo{}, wantOK: true},
		{path: "/never", wantOK: false},
		{path: "/a:schema", wantOK: false},
	} {
		got, ok := g.Vertex(tc.path)
		if ok != tc.wantOK {
			t.Errorf("Vertex(%q) ok = %v, want %v", tc.path, ok, tc.wantOK)
			continue
		}
		gotValue := ""
		if got.Value != nil {
			gotValue = string(got.Value.Payload().Bytes())
		}
		got.Value = nil
		if got != tc.want || gotValue != tc.value {
			t.Errorf("Vertex(%q) = %+v value %q, want %+v value %q", tc.path, got, gotValue, tc.want, tc.value)
		}
	}
}

// recorder is an Endpoint wrapping a graph that notes every op a terminus
// applies through it.
type recorder struct {
	*graph.Graph
	ops []string
}

func (r *recorder) WriteAddr(c graph.Caller, a graph.Address, v *tlv.Node) error {
	r.ops = append(r.ops, fmt.Sprintf("write %s remote=%v %x", a, c.Remote, v.Bytes()))
	return r.Graph.WriteAddr(c, a, v)
}

func (r *recorder) ReadAddr(c graph.Caller, a graph.Address) (*tlv.Node, error) {
	r.ops = append(r.ops, "read "+a.String())
	return r.Graph.ReadAddr(c, a)
}

func (r *recorder) AwaitAddr(c graph.Caller, a graph.Address, d time.Duration) (*graph.Waiter, error) {
	r.ops = append(r.ops, "await "+a.String())
	return r.Graph.AwaitAddr(c, a, d)
}

// TestTerminusAppliesThroughTheEndpoint: a terminus sheds the envelope and
// applies each op through the endpoint it is given, as a remote operation.
func TestTerminusAppliesThroughTheEndpoint(t *testing.T) {
	r := &recorder{Graph: graph.New(graph.Config{})}
	must(t, r.Graph.Write(graph.Owner(), "/v", val("0")))
	dst, _ := tlv.CanonicalPath("/v")
	for _, op := range []tlv.Op{tlv.OpWrite, tlv.OpRead, tlv.OpAwait, tlv.OpSubscribe} {
		payload := val("1")
		if op == tlv.OpSubscribe {
			payload = sub(t, "/obs", false)
		}
		f := tlv.Fwd{Op: op, Dst: tlv.NewRope(dst), Src: tlv.NewRope([]byte("\x04back")), Payload: payload}
		if _, _, err := graph.Terminus(r, graph.Owner(), f.Node()); err != nil {
			t.Fatalf("op %d: %v", op, err)
		}
	}
	want := []string{
		"write /v remote=true " + hex.EncodeToString(val("1").Bytes()),
		"read /v",
		"await /v",
		"write /v:subscribers[] remote=true " + hex.EncodeToString(sub(t, "/obs", false).Bytes()),
	}
	if !slices.Equal(r.ops, want) {
		t.Errorf("ops\n got %q\nwant %q", r.ops, want)
	}
}

// TestBecomingAStreamStartsAFreshDrain: a vertex that becomes a STREAM while
// pending drains its value once, whether or not the graph kept what was
// assigned to it before (it does when Policy.Flush is set); the kept values
// of a stored-value vertex are not a drain (reconstructed.go).
func TestBecomingAStreamStartsAFreshDrain(t *testing.T) {
	for _, tc := range []struct {
		name   string
		policy graph.Policy
	}{{"zero policy", graph.Policy{}}, {"model policy", modelPolicy}} {
		g := graph.New(graph.Config{Policy: tc.policy})
		must(t, g.Write(graph.Owner(), "/a", val("0")))
		subscribe(t, g, "/a", "/obs")
		must(t, g.Assign("/a", val("1")))
		must(t, g.Assign("/a", val("2")))
		must(t, g.SetHistoryDepth("/a", 2))
		must(t, g.Propagate("/a", graph.EmitEach))
		if got, want := brief(g.TakeDeliveries()), []string{"/a#0<-/a=" + hexOf(val("2"))}; !slices.Equal(got, want) {
			t.Errorf("%s: the drain of a vertex made a STREAM while pending: %v, want %v", tc.name, got, want)
		}
	}
}

// TestRetirementIsAnEvent: the awaits on a retired vertex see the retirement
// through Policy.Wakes: the model completes them with tr::path::not_found,
// and a policy that does not complete them leaves them outstanding.
func TestRetirementIsAnEvent(t *testing.T) {
	for _, tc := range []struct {
		name string
		wake func(graph.Event) graph.Wake
		done bool
	}{
		{"zero policy", nil, true},
		{"model", graph.ModelWakes, true},
		{"retirement ignored", func(e graph.Event) graph.Wake {
			if e.Kind == graph.EventRetire {
				return graph.Wake{}
			}
			return graph.ModelWakes(e)
		}, false},
	} {
		g := graph.New(graph.Config{Policy: graph.Policy{Wakes: tc.wake}})
		must(t, g.Write(graph.Owner(), "/r/x", val("1")))
		w, err := g.Await(graph.Owner(), "/r/x", 0)
		must(t, err)
		must(t, g.Retire(graph.Owner(), "/r"))
		if w.Done() != tc.done {
			t.Errorf("%s: the await on the retired /r/x done = %v, want %v", tc.name, w.Done(), tc.done)
			continue
		}
		if tc.done {
			_, err := w.Result()
			wantStatus(t, err, tlv.StatusPathNotFound)
		}
	}
}

// TestNewWaiter: a waiter its maker completes is outstanding until the first
// Complete, whose answer it keeps.
func TestNewWaiter(t *testing.T) {
	w := graph.NewWaiter("/v")
	if _, err := w.Result(); w.Done() || err != graph.ErrPending {
		t.Fatalf("a new waiter: done %v, %v", w.Done(), err)
	}
	w.Complete(val("1"), nil)
	w.Complete(val("2"), nil)
	if v, err := w.Result(); !w.Done() || err != nil || hexOf(v) != hexOf(val("1")) {
		t.Errorf("after Complete: done %v, %v %v", w.Done(), v, err)
	}
}
