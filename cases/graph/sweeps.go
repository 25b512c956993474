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
func sweeps(k *cases.Kit) []cases.Case {
	return []cases.Case{
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "graph/assign-propagate-and-the-coalescing-sweep/assign-sends-nothing",
				Title:        "assign replaces the value and sends nothing; propagate then delivers the stored value",
				Spec:         "libtracer-graph-model §assign-propagate-and-the-coalescing-sweep",
				Requirements: []string{"libtracer-graph-model§assign-propagate-and-the-coalescing-sweep#1", "libtracer-graph-model§assign-propagate-and-the-coalescing-sweep#2", "libtracer-graph-model§assign-propagate-and-the-coalescing-sweep#3"},
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
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "graph/assign-propagate-and-the-coalescing-sweep/await-observes-assign-not-propagate",
				Title:        "an await completes on an assign at its vertex with the value, and a propagate alone wakes nothing",
				Spec:         "libtracer-graph-model §assign-propagate-and-the-coalescing-sweep",
				Requirements: []string{"libtracer-graph-model§assign-propagate-and-the-coalescing-sweep#2", "libtracer-graph-model§assign-propagate-and-the-coalescing-sweep#4"},
				Run: func(t *cases.T) {
					sc := newScript()
					sc.write("", "/a", value("0"))
					aw := sc.await("", "/a")
					p := sc.propagate("/a")
					a := sc.assign("/a", value("1"))
					r := run1(t, sc)
					r.ok(aw, "the await")
					if n := len(r.wakes(p)); n != 0 {
						r.failAt(at(p, "wakes"), "a propagate completed an await", "no await completed", fmt.Sprintf("%d", n))
					}
					r.wake(a, aw, value("1"), "the assign")
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "graph/assign-propagate-and-the-coalescing-sweep/handler-vertex-refuses-assign-and-propagate",
				Title:        "assign and propagate at a vertex that retains nothing answer SCHEMA_NOT_FOUND; only the sweep root is judged, so a sweep from a retaining ancestor walks past it",
				Spec:         "libtracer-graph-model §assign-propagate-and-the-coalescing-sweep",
				Requirements: []string{"libtracer-graph-model§assign-propagate-and-the-coalescing-sweep#10", "libtracer-graph-model§assign-propagate-and-the-coalescing-sweep#9"},
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
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "graph/assign-propagate-and-the-coalescing-sweep/handler-write-delivers-eagerly",
				Title:        "a write at a handler vertex dispatches the seam and delivers the written TLV eagerly; a read serves its on_read",
				Spec:         "libtracer-graph-model §assign-propagate-and-the-coalescing-sweep",
				Requirements: []string{"libtracer-graph-model§assign-propagate-and-the-coalescing-sweep#11"},
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
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "graph/assign-propagate-and-the-coalescing-sweep/handler-await-serves-the-read-contract",
				Title:        "an await at a handler vertex is woken by a write and answers what a read serves: the on_read value, or NOT_FOUND when it has no on_read",
				Spec:         "libtracer-graph-model §assign-propagate-and-the-coalescing-sweep",
				Requirements: []string{"libtracer-graph-model§assign-propagate-and-the-coalescing-sweep#5", "libtracer-graph-model§assign-propagate-and-the-coalescing-sweep#6", "reconstructed§graph-statuses#6"},
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
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "graph/the-write-sequence-and-pending-vertices/sweep-flushes-only-pending",
				Title:        "a sweep selects only its subtree's pending vertices: a quiet subtree with one touched leaf flushes that leaf and nothing else",
				Spec:         "libtracer-graph-model §the-write-sequence-and-pending-vertices; §delivery-mode",
				Requirements: []string{"libtracer-graph-model§assign-propagate-and-the-coalescing-sweep#3", "libtracer-graph-model§delivery-mode#2", "libtracer-graph-model§the-write-sequence-and-pending-vertices#2"},
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
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "graph/the-write-sequence-and-pending-vertices/overlapping-sweeps-miss-nothing",
				Title:        "a sweep clears what it delivered, so an overlapping sweep at an ancestor delivers the rest once and the cleared vertex not again",
				Spec:         "libtracer-graph-model §the-write-sequence-and-pending-vertices",
				Requirements: []string{"libtracer-graph-model§the-write-sequence-and-pending-vertices#2", "libtracer-graph-model§the-write-sequence-and-pending-vertices#3", "libtracer-graph-model§the-write-sequence-and-pending-vertices#4"},
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
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "graph/the-write-sequence-and-pending-vertices/k-assigns-to-each-leaf-flush-once",
				Title:        "k assigns to each of several leaves between two sweeps deliver each leaf once, with its latest value, to every observer",
				Spec:         "libtracer-graph-model §the-write-sequence-and-pending-vertices",
				Requirements: []string{"libtracer-graph-model§subtree-subscriptions-branch-writes-and-write-creates#20", "libtracer-graph-model§the-write-sequence-and-pending-vertices#5"},
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
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "graph/assign-propagate-and-the-coalescing-sweep/branch-await-serves-its-own-value",
				Title:        "an await at a branch vertex is woken by an assign there and answers the branch's own last-known value, never the composed subtree fold a plain read serves",
				Spec:         "libtracer-graph-model §assign-propagate-and-the-coalescing-sweep",
				Requirements: []string{"libtracer-graph-model§assign-propagate-and-the-coalescing-sweep#7", "libtracer-graph-model§assign-propagate-and-the-coalescing-sweep#4"},
				Run: func(t *cases.T) {
					sc := newScript()
					sc.write("", "/b", value("0"))
					sc.write("", "/b/c", value("c"))
					aw := sc.await("", "/b")
					wc := sc.write("", "/b/c", value("d"))
					a := sc.assign("/b", value("1"))
					aw2 := sc.await("", "/b")
					w := sc.write("", "/b", value("2"))
					rd := sc.read("", "/b")
					r := run1(t, sc)
					r.noWakes(wc, "a write at the child /b/c")
					r.wake(a, aw, value("1"), "the assign at the branch /b")
					r.wake(w, aw2, value("2"), "the write at the branch /b")
					r.same(rd, point("b", value("2"), point("c", value("d"))), "the plain read of the branch /b")
				},
			}
		}),
	}
}

// modes are the delivery modes and stream drains (§Delivery mode, §Stream
// drain semantics).
func modes(k *cases.Kit) []cases.Case {
	return []cases.Case{
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "graph/delivery-mode/unconditional-on-every-covering-sweep",
				Title:        "an UNCONDITIONAL vertex is included, with its current value, in every covering sweep, pending or not",
				Spec:         "libtracer-graph-model §delivery-mode",
				Requirements: []string{"libtracer-graph-model§delivery-mode#1", "libtracer-graph-model§delivery-mode#3"},
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
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "graph/delivery-mode/direct-propagate-always-delivers",
				Title:        "a direct propagate always delivers its argument, pending or not, whatever its mode",
				Spec:         "libtracer-graph-model §delivery-mode",
				Requirements: []string{"libtracer-graph-model§delivery-mode#6"},
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
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "graph/delivery-mode/assign-is-never-gated",
				Title:        "whatever the mode, assign swaps the value, advances the sequence and wakes an await",
				Spec:         "libtracer-graph-model §delivery-mode; §assign-propagate-and-the-coalescing-sweep",
				Requirements: []string{"libtracer-graph-model§delivery-mode#5"},
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
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "graph/stream-drain-semantics/stream-drains-in-order",
				Title:        "a STREAM vertex's propagation drains every entry appended since the previous flush, in order, to each observer",
				Spec:         "libtracer-graph-model §stream-drain-semantics",
				Requirements: []string{"libtracer-graph-model§assign-propagate-and-the-coalescing-sweep#2", "libtracer-graph-model§stream-drain-semantics#1"},
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
							r.failAt(at(p, "deliveries"), fmt.Sprintf("the drain to the subscriber of %s", o.at), fmt.Sprint(want), fmt.Sprint(g))
						}
					}
				},
			}
		}),
		k.Info(func() cases.Case {
			return cases.Case{
				ID:           "graph/stream-drain-semantics/propagate-of-an-empty-drain",
				Title:        "what a direct propagate of a STREAM whose drain is empty delivers (the document does not say)",
				Spec:         "libtracer-graph-model §stream-drain-semantics; §delivery-mode",
				Requirements: []string{"reconstructed§graph-choices#8"},
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
			}
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
			r.failAt(fmt.Sprintf("replies[%d].wakes[step %d]", i, aw), fmt.Sprintf("step %d (%s) completed the await of step %d with another answer", i, what, aw), render(want), fmt.Sprintf("%s %s", statusText(w.GetStatus()), show(w.GetValue())))
		}
		return
	}
	r.failAt(fmt.Sprintf("replies[%d].wakes[step %d]", i, aw), fmt.Sprintf("step %d (%s) did not complete the await of step %d", i, what, aw), "the await completed with "+render(want), "still pending")
}

// wakeStatus checks that step i completed the await of step aw with status st.
func (r *result) wakeStatus(i, aw int, st uint32, what string) {
	for _, w := range r.wakes(i) {
		if int(w.GetStep()) == aw {
			if w.GetStatus() != st {
				r.failAt(fmt.Sprintf("replies[%d].wakes[step %d].status", i, aw), fmt.Sprintf("step %d (%s) completed the await of step %d with another status", i, what, aw), statusText(st), statusText(w.GetStatus()))
			}
			return
		}
	}
	r.failAt(fmt.Sprintf("replies[%d].wakes[step %d]", i, aw), fmt.Sprintf("step %d (%s) did not complete the await of step %d", i, what, aw), "the await completed with "+statusText(st), "still pending")
}
