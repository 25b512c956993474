package graph

import (
	"fmt"
	"strings"

	"github.com/conform-suite/conform/cases"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
)

// streams are the write sequence's indifference to bytes, STREAM rings, and
// the owner's declarations (§The write sequence and pending vertices;
// §Delivery mode; §Stream drain semantics; §Storage is declared owner-side,
// and nothing is inherited).
func streams(k *cases.Kit) []cases.Case {
	// drained renders what step i delivered at vertex at to target, in order.
	drained := func(r *result, i int, at, target string) []string {
		var out []string
		for _, b := range r.to(i, at, target) {
			out = append(out, render(b))
		}
		return out
	}
	values := func(vs ...string) []string {
		var out []string
		for _, v := range vs {
			out = append(out, render(value(v)))
		}
		return out
	}
	return []cases.Case{
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "graph/the-write-sequence-and-pending-vertices/identical-bytes-are-pending-again",
				Title:        "an assign of the very bytes already stored advances the write sequence, so the next sweep delivers it: the runtime never compares values to decide delivery",
				Spec:         "libtracer-graph-model §the-write-sequence-and-pending-vertices; §delivery-mode",
				Requirements: []string{"libtracer-graph-model§the-write-sequence-and-pending-vertices#1", "libtracer-graph-model§delivery-mode#9"},
				Run: func(t *cases.T) {
					sc := newScript()
					sc.write("", "/a", value("v"))
					sc.subscribe("", "/", "/obs")
					quiet := sc.propagate("/")
					sc.assign("/a", value("v"))
					p := sc.propagate("/")
					w := sc.write("", "/a", value("v"))
					r := run1(t, sc)
					r.none(quiet, "a sweep with nothing pending")
					r.deliveries(p, "the sweep after an assign of the same bytes", dl{"/", "/obs", value("v")})
					r.deliveries(w, "a write of the same bytes again", dl{"/", "/obs", value("v")})
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "graph/stream-drain-semantics/ring-sheds-its-oldest-beyond-its-depth",
				Title:        "a STREAM ring keeps its newest entries up to its declared depth, shedding the oldest, and a depth lowered before a flush sheds the oldest down to it",
				Spec:         "libtracer-graph-model §stream-drain-semantics; §storage-is-declared-owner-side-and-nothing-is-inherited",
				Requirements: []string{"libtracer-graph-model§stream-drain-semantics#6"},
				Run: func(t *cases.T) {
					sc := newScript()
					sc.register("/s")
					sc.register("/t")
					sc.depth("/s", 2)
					sc.depth("/t", 4)
					sc.subscribe("", "/", "/obs")
					for _, v := range []string{"1", "2", "3", "4"} {
						sc.assign("/s", value(v))
					}
					ps := sc.propagate("/s")
					for _, v := range []string{"1", "2", "3"} {
						sc.assign("/t", value(v))
					}
					sc.depth("/t", 2)
					pt := sc.propagate("/t")
					r := run1(t, sc)
					if got, want := drained(r, ps, "/", "/obs"), values("3", "4"); fmt.Sprint(got) != fmt.Sprint(want) {
						r.failAt(at(ps, "deliveries"), "the drain of /s, depth 2, after four assigns", fmt.Sprint(want), fmt.Sprint(got))
					}
					if got, want := drained(r, pt, "/", "/obs"), values("2", "3"); fmt.Sprint(got) != fmt.Sprint(want) {
						r.failAt(at(pt, "deliveries"), "the drain of /t, three assigns at depth 4 then depth 2", fmt.Sprint(want), fmt.Sprint(got))
					}
				},
			}
		}),
		k.Info(func() cases.Case {
			return cases.Case{
				ID:    "graph/stream-drain-semantics/made-a-stream-while-pending",
				Title: "what a vertex made a STREAM while its stored value is pending delivers on the next sweeps (the document does not say; the reference drains that value once)",
				Spec:  "libtracer-graph-model §stream-drain-semantics; §the-write-sequence-and-pending-vertices",
				Run: func(t *cases.T) {
					sc := newScript()
					sc.register("/s")
					sc.subscribe("", "/", "/obs")
					sc.assign("/s", value("1"))
					sc.depth("/s", 4)
					p1 := sc.propagate("/")
					p2 := sc.propagate("/")
					r := run1(t, sc)
					t.Note("the first sweep delivered %v, the second %v", drained(r, p1, "/", "/obs"), drained(r, p2, "/", "/obs"))
				},
			}
		}),
		k.May(func() cases.Case {
			return cases.Case{
				ID:           "graph/stream-drain-semantics/unconditional-stream-with-an-empty-drain",
				Title:        "what an UNCONDITIONAL STREAM whose drain is empty delivers in an ancestor's sweep (open; the reference delivers its latest value)",
				Spec:         "libtracer-graph-model §stream-drain-semantics; §delivery-mode",
				Requirements: []string{"reconstructed§graph-choices#8"},
				Run: func(t *cases.T) {
					sc := newScript()
					sc.register("/u/s")
					sc.depth("/u/s", 4)
					sc.mode("/u/s", unconditional)
					sc.subscribe("", "/", "/obs")
					sc.assign("/u/s", value("1"))
					p1 := sc.propagate("/u")
					p2 := sc.propagate("/u")
					r := run1(t, sc)
					got := drained(r, p2, "/", "/obs")
					switch fmt.Sprint(got) {
					case fmt.Sprint(values("1")):
						t.Note("the second sweep delivered the latest value again, as the reference does (the first delivered %v)", drained(r, p1, "/", "/obs"))
					default:
						t.Note("the second sweep delivered %v where the reference delivers the latest value again (the first delivered %v)", got, drained(r, p1, "/", "/obs"))
					}
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "graph/storage-is-declared-owner-side-and-nothing-is-inherited/declarations-reach-one-vertex",
				Title:        "a declaration — history depth, delivery mode, app fields — reaches exactly the vertex it names: a child of an EXPLICIT STREAM with app fields is an IF_NEWER stored-value vertex with none",
				Spec:         "libtracer-graph-model §storage-is-declared-owner-side-and-nothing-is-inherited",
				Requirements: []string{"libtracer-graph-model§storage-is-declared-owner-side-and-nothing-is-inherited#2"},
				Run: func(t *cases.T) {
					sc := newScript()
					sc.register("/s/c")
					sc.depth("/s", 8)
					sc.mode("/s", explicit)
					sc.appFields("/s", appField("g", rw, value("1")))
					sc.subscribe("", "/", "/obs")
					for _, v := range []string{"1", "2", "3"} {
						sc.assign("/s/c", value(v))
					}
					p := sc.propagate("/")
					f := sc.read("", "/s/c:settings.app.g")
					st := sc.read("", "/s/c:settings")
					r := run1(t, sc)
					r.deliveries(p, "a sweep at the root after three assigns to /s/c", dl{"/", "/obs", value("3")})
					r.status(f, stSchema, "the read of /s/c:settings.app.g")
					r.same(st, node(tSettings), "the read of /s/c:settings")
				},
			}
		}),
		k.Info(func() cases.Case {
			return cases.Case{
				ID:    "graph/storage-is-declared-owner-side-and-nothing-is-inherited/owner-declaration-refusals",
				Title: "what the owner's declarations answer when they cannot apply: a history depth at a handler vertex, an unknown delivery mode, an app-field table naming a field twice or with no name (host-API calls the document gives no status)",
				Spec:  "libtracer-graph-model §storage-is-declared-owner-side-and-nothing-is-inherited",
				Run: func(t *cases.T) {
					sc := newScript()
					sc.handler("/h", value("r"))
					sc.register("/v")
					steps := map[string]int{
						"a history depth at a handler vertex":  sc.depth("/h", 4),
						"delivery mode 7, which names no mode": sc.mode("/v", conformpb.GraphDeliveryMode(7)),
						"a table naming g twice":               sc.appFields("/v", appField("g", rw, nil), appField("g", ro, nil)),
						"a table with an unnamed field":        sc.appFields("/v", appField("", rw, nil)),
					}
					r := run1(t, sc)
					var seen []string
					for _, what := range sortedKeys(steps) {
						seen = append(seen, fmt.Sprintf("%s: %s", what, r.statusOf(steps[what])))
					}
					t.Note("the declarations answered (the reference: tr::schema::not_found for the handler, tr::schema::type_mismatch for the rest):\n%s", strings.Join(seen, "\n"))
				},
			}
		}),
	}
}
