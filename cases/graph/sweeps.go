package graph

import (
	"fmt"

	"github.com/conform-suite/conform/cases"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
)

const (
	ifNewer       = conformpb.GraphDeliveryMode_GRAPH_DELIVERY_IF_NEWER
	unconditional = conformpb.GraphDeliveryMode_GRAPH_DELIVERY_UNCONDITIONAL
	explicit      = conformpb.GraphDeliveryMode_GRAPH_DELIVERY_EXPLICIT
)

// sweeps are assign, propagate and the coalescing sweep (§Assign, propagate,
// and the coalescing sweep; §The write sequence and pending vertices).
func (s *suite) sweeps() []cases.Case {
	return []cases.Case{
		must(cases.Case{
			ID:    "graph/" + secAssign + "/assign-sends-nothing",
			Title: "assign replaces the value and sends nothing; propagate then delivers the stored value",
			Spec:  spec(secAssign),
			Run: func(t *cases.T) {
				sc := newScript()
				sc.register("/a")
				sc.subscribe("", "/", "/obs")
				a := sc.assign("/a", value("1"))
				rd := sc.read("", "/a")
				p := sc.propagate("/a")
				r := run1(t, sc)
				r.ok(a, "the assign")
				r.none(a, "the assign")
				r.value(rd, value("1"), "the read after the assign")
				r.deliveries(p, "the propagate", dl{"/", "/obs", value("1")})
			},
		}),
		must(cases.Case{
			ID:    "graph/" + secAssign + "/await-observes-assign-not-propagate",
			Title: "an await completes on an assign at its vertex with the value, and a propagate alone wakes nothing",
			Spec:  spec(secAssign),
			Run: func(t *cases.T) {
				sc := newScript()
				sc.write("", "/a", value("0"))
				aw := sc.await("", "/a")
				p := sc.propagate("/a")
				a := sc.assign("/a", value("1"))
				r := run1(t, sc)
				r.ok(aw, "the await")
				if n := len(r.wakes(p)); n != 0 {
					r.fail("a propagate completed an await", "no await completed", fmt.Sprintf("%d", n))
				}
				r.wake(a, aw, value("1"), "the assign")
			},
		}),
		must(cases.Case{
			ID:    "graph/" + secAssign + "/handler-vertex-refuses-assign-and-propagate",
			Title: "assign and propagate at a vertex that retains nothing answer SCHEMA_NOT_FOUND; only the sweep root is judged, so a sweep from a retaining ancestor walks past it",
			Spec:  spec(secAssign),
			Run: func(t *cases.T) {
				sc := newScript()
				sc.handler("/h", value("r"))
				sc.write("", "/k", value("k"))
				a := sc.assign("/h", value("1"))
				p := sc.propagate("/h")
				p2 := sc.propagate("/")
				r := run1(t, sc)
				r.status(a, stSchema, "assign at the handler vertex")
				r.status(p, stSchema, "propagate at the handler vertex")
				r.ok(p2, "propagate at the root, above the handler vertex")
			},
		}),
		must(cases.Case{
			ID:    "graph/" + secAssign + "/handler-write-delivers-eagerly",
			Title: "a write at a handler vertex dispatches the seam and delivers the written TLV eagerly; a read serves its on_read",
			Spec:  spec(secAssign),
			Run: func(t *cases.T) {
				sc := newScript()
				sc.handler("/h", value("composed"))
				sc.subscribe("", "/h", "/obs")
				w := sc.write("", "/h", value("1"))
				rd := sc.read("", "/h")
				r := run1(t, sc)
				r.ok(w, "the write at the handler vertex")
				r.deliveries(w, "the write at the handler vertex", dl{"/h", "/obs", value("1")})
				r.value(rd, value("composed"), "the read of the handler vertex")
			},
		}),
		reconstructed(must(cases.Case{
			ID:    "graph/" + secAssign + "/handler-await-serves-the-read-contract",
			Title: "an await at a handler vertex is woken by a write and answers what a read serves: the on_read value, or NOT_FOUND when it has no on_read",
			Spec:  spec(secAssign, "RECONSTRUCTED §2 (NOT_FOUND as tr::path::not_found)"),
			Run: func(t *cases.T) {
				sc := newScript()
				sc.handler("/h", value("composed"))
				sc.handler("/bare", nil)
				aw := sc.await("", "/h")
				aw2 := sc.await("", "/bare")
				w := sc.write("", "/h", value("1"))
				w2 := sc.write("", "/bare", value("2"))
				r := run1(t, sc)
				r.wake(w, aw, value("composed"), "the write at /h")
				r.wakeStatus(w2, aw2, stNotFound, "the write at /bare")
			},
		})),
		must(cases.Case{
			ID:    "graph/" + secSequence + "/sweep-flushes-only-pending",
			Title: "a sweep selects only its subtree's pending vertices: a quiet subtree with one touched leaf flushes that leaf and nothing else",
			Spec:  spec(secSequence, "§"+secMode),
			Run: func(t *cases.T) {
				sc := newScript()
				for _, p := range []string{"/q/a", "/q/b", "/q/c"} {
					sc.write("", p, value("old"))
				}
				sc.subscribe("", "/q", "/obs")
				sc.assign("/q/b", value("new"))
				p := sc.propagate("/q")
				r := run1(t, sc)
				r.deliveries(p, "the sweep at /q", dl{"/q", "/obs", value("new")})
			},
		}),
		must(cases.Case{
			ID:    "graph/" + secSequence + "/overlapping-sweeps-miss-nothing",
			Title: "a sweep clears what it delivered, so an overlapping sweep at an ancestor delivers the rest once and the cleared vertex not again",
			Spec:  spec(secSequence),
			Run: func(t *cases.T) {
				sc := newScript()
				sc.register("/m/a")
				sc.register("/m/b")
				sc.subscribe("", "/", "/obs")
				sc.assign("/m/a", value("a"))
				sc.assign("/m/b", value("b"))
				p1 := sc.propagate("/m/a")
				p2 := sc.propagate("/")
				r := run1(t, sc)
				r.deliveries(p1, "the sweep at /m/a", dl{"/", "/obs", value("a")})
				r.deliveries(p2, "the sweep at the root after it", dl{"/", "/obs", value("b")})
			},
		}),
		must(cases.Case{
			ID:    "graph/" + secSequence + "/k-assigns-to-each-leaf-flush-once",
			Title: "k assigns to each of several leaves between two sweeps deliver each leaf once, with its latest value, to every observer",
			Spec:  spec(secSequence),
			Run: func(t *cases.T) {
				sc := newScript()
				sc.register("/k/a")
				sc.register("/k/b")
				sc.subscribe("", "/k", "/ok")
				sc.subscribe("", "/k/a", "/oa")
				for i := range 5 {
					sc.assign("/k/a", value(fmt.Sprint("a", i)))
					sc.assign("/k/b", value(fmt.Sprint("b", i)))
				}
				p := sc.propagate("/")
				r := run1(t, sc)
				r.deliveries(p, "the sweep at the root", dl{"/k", "/ok", value("a4")}, dl{"/k/a", "/oa", value("a4")}, dl{"/k", "/ok", value("b4")})
			},
		}),
	}
}

// modes are the delivery modes and stream drains (§Delivery mode, §Stream
// drain semantics).
func (s *suite) modes() []cases.Case {
	return []cases.Case{
		must(cases.Case{
			ID:    "graph/" + secMode + "/unconditional-on-every-covering-sweep",
			Title: "an UNCONDITIONAL vertex is included, with its current value, in every covering sweep, pending or not",
			Spec:  spec(secMode),
			Run: func(t *cases.T) {
				sc := newScript()
				sc.write("", "/u/k", value("keepalive"))
				sc.mode("/u/k", unconditional)
				sc.write("", "/u/quiet", value("q"))
				sc.subscribe("", "/u", "/obs")
				p1 := sc.propagate("/u")
				p2 := sc.propagate("/u")
				r := run1(t, sc)
				r.deliveries(p1, "the first sweep at /u", dl{"/u", "/obs", value("keepalive")})
				r.deliveries(p2, "the second sweep at /u", dl{"/u", "/obs", value("keepalive")})
			},
		}),
		must(cases.Case{
			ID:    "graph/" + secMode + "/direct-propagate-always-delivers",
			Title: "a direct propagate always delivers its argument, pending or not, whatever its mode",
			Spec:  spec(secMode),
			Run: func(t *cases.T) {
				sc := newScript()
				sc.write("", "/d", value("v"))
				sc.write("", "/x", value("x"))
				sc.mode("/x", explicit)
				sc.subscribe("", "/", "/obs")
				p1 := sc.propagate("/d")
				p2 := sc.propagate("/x")
				r := run1(t, sc)
				r.deliveries(p1, "the propagate of /d, not pending", dl{"/", "/obs", value("v")})
				r.deliveries(p2, "the propagate of the EXPLICIT /x", dl{"/", "/obs", value("x")})
			},
		}),
		must(cases.Case{
			ID:    "graph/" + secMode + "/assign-is-never-gated",
			Title: "whatever the mode, assign swaps the value, advances the sequence and wakes an await",
			Spec:  spec(secMode, "§"+secAssign),
			Run: func(t *cases.T) {
				sc := newScript()
				sc.register("/x")
				sc.mode("/x", explicit)
				aw := sc.await("", "/x")
				a := sc.assign("/x", value("1"))
				rd := sc.read("", "/x")
				r := run1(t, sc)
				r.wake(a, aw, value("1"), "the assign at the EXPLICIT /x")
				r.value(rd, value("1"), "the read after it")
			},
		}),
		must(cases.Case{
			ID:    "graph/" + secStream + "/stream-drains-in-order",
			Title: "a STREAM vertex's propagation drains every entry appended since the previous flush, in order, to each observer",
			Spec:  spec(secStream),
			Run: func(t *cases.T) {
				sc := newScript()
				sc.register("/s")
				sc.depth("/s", 8)
				sc.subscribe("", "/s", "/obs")
				sc.subscribe("", "/", "/root")
				for _, v := range []string{"1", "2", "3"} {
					sc.assign("/s", value(v))
				}
				p := sc.propagate("/s")
				r := run1(t, sc)
				for _, o := range []struct{ at, target string }{{"/s", "/obs"}, {"/", "/root"}} {
					got := r.to(p, o.at, o.target)
					var g []string
					for _, b := range got {
						g = append(g, render(b))
					}
					want := []string{render(value("1")), render(value("2")), render(value("3"))}
					if fmt.Sprint(g) != fmt.Sprint(want) {
						r.fail(fmt.Sprintf("the drain to the subscriber of %s", o.at), fmt.Sprint(want), fmt.Sprint(g))
					}
				}
			},
		}),
		info(cases.Case{
			ID:    "graph/" + secStream + "/propagate-of-an-empty-drain",
			Title: "what a direct propagate of a STREAM whose drain is empty delivers (the document does not say)",
			Spec:  spec(secStream, "§"+secMode),
			Run: func(t *cases.T) {
				sc := newScript()
				sc.register("/s")
				sc.depth("/s", 8)
				sc.subscribe("", "/s", "/obs")
				sc.assign("/s", value("1"))
				sc.propagate("/s")
				p := sc.propagate("/s")
				r := run1(t, sc)
				t.Note("status %s, deliveries %v", statusText(r.reply(p).GetStatus()), dlsOf(r.reply(p)))
			},
		}),
	}
}

// wake checks that step i completed the await of step aw with want.
func (r *result) wake(i, aw int, want []byte, what string) {
	for _, w := range r.wakes(i) {
		if int(w.GetStep()) != aw {
			continue
		}
		if w.GetStatus() != stOK || string(w.GetValue()) != string(want) {
			r.fail(fmt.Sprintf("step %d (%s) completed the await of step %d with another answer", i, what, aw), render(want), fmt.Sprintf("%s %s", statusText(w.GetStatus()), show(w.GetValue())))
		}
		return
	}
	r.fail(fmt.Sprintf("step %d (%s) did not complete the await of step %d", i, what, aw), "the await completed with "+render(want), "still pending")
}

// wakeStatus checks that step i completed the await of step aw with status st.
func (r *result) wakeStatus(i, aw int, st uint32, what string) {
	for _, w := range r.wakes(i) {
		if int(w.GetStep()) == aw {
			if w.GetStatus() != st {
				r.fail(fmt.Sprintf("step %d (%s) completed the await of step %d with another status", i, what, aw), statusText(st), statusText(w.GetStatus()))
			}
			return
		}
	}
	r.fail(fmt.Sprintf("step %d (%s) did not complete the await of step %d", i, what, aw), "the await completed with "+statusText(st), "still pending")
}
