package graph

import (
	"github.com/conform-suite/conform/cases"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
)

// lifecycle is retirement, revival and the retirement silence (§Vertex
// lifecycle: write-creates, retirement, revival; §Retirement notification).
func lifecycle(k *cases.Kit) []cases.Case {
	return []cases.Case{
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "graph/vertex-lifecycle-write-creates-retirement-revival/retired-subtree-reads-not-found",
				Title:        "retiring a vertex retires its subtree: each retired path reads tr::path::not_found, like a path that never existed",
				Spec:         "libtracer-graph-model §vertex-lifecycle-write-creates-retirement-revival",
				Requirements: []string{"libtracer-graph-model§vertex-lifecycle-write-creates-retirement-revival#3", "libtracer-graph-model§vertex-lifecycle-write-creates-retirement-revival#4", "reconstructed§tlv-status#2"},
				Run: func(t *cases.T) {
					sc := newScript()
					sc.write("", "/r/a/b", value("1"))
					sc.write("", "/r/c", value("2"))
					sc.write("", "/keep", value("k"))
					rt := sc.retire("", "/r")
					var reads []int
					for _, p := range []string{"/r", "/r/a", "/r/a/b", "/r/c", "/r:schema"} {
						reads = append(reads, sc.read("", p))
					}
					rk := sc.read("", "/keep")
					r := run1(t, sc)
					r.ok(rt, "the retirement of /r")
					for _, i := range reads {
						r.status(i, stNotFound, "a read under the retired /r")
					}
					r.value(rk, value("k"), "the read of /keep, outside it")
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "graph/vertex-lifecycle-write-creates-retirement-revival/the-root-cannot-be-retired",
				Title:        "the root cannot be retired: after an attempt the graph still holds and delivers its vertices",
				Spec:         "libtracer-graph-model §vertex-lifecycle-write-creates-retirement-revival",
				Requirements: []string{"libtracer-graph-model§vertex-lifecycle-write-creates-retirement-revival#8", "reconstructed§graph-statuses#1"},
				Run: func(t *cases.T) {
					sc := newScript()
					sc.write("", "/k", value("v"))
					sc.retire("", "/")
					rd := sc.read("", "/k")
					j := sc.subscribe("", "/", "/obs")
					w := sc.write("", "/k", value("w"))
					r := run1(t, sc)
					r.value(rd, value("v"), "the read of /k after the attempt")
					r.ok(j, "a subscription at the root after the attempt")
					r.deliveries(w, "a write after the attempt", dl{"/", "/obs", value("w")})
				},
			}
		}),
		k.Info(func() cases.Case {
			return cases.Case{
				ID:           "graph/vertex-lifecycle-write-creates-retirement-revival/what-retiring-the-root-answers",
				Title:        "the status an attempt to retire the root answers (the document says only that it cannot be)",
				Spec:         "libtracer-graph-model §vertex-lifecycle-write-creates-retirement-revival",
				Requirements: []string{"reconstructed§graph-statuses#2"},
				Run: func(t *cases.T) {
					sc := newScript()
					rt := sc.retire("", "/")
					r := run1(t, sc)
					t.Note("retiring the root answered %s", statusText(r.reply(rt).GetStatus()))
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "graph/vertex-lifecycle-write-creates-retirement-revival/retiring-twice-is-a-no-op",
				Title:        "retiring an already-retired or an unregistered path is a no-op: it succeeds and delivers nothing",
				Spec:         "libtracer-graph-model §vertex-lifecycle-write-creates-retirement-revival",
				Requirements: []string{"libtracer-graph-model§vertex-lifecycle-write-creates-retirement-revival#9"},
				Run: func(t *cases.T) {
					sc := newScript()
					sc.subscribe("", "/", "/obs")
					sc.write("", "/r", value("1"))
					sc.retire("", "/r")
					again := sc.retire("", "/r")
					never := sc.retire("", "/never/was")
					r := run1(t, sc)
					r.ok(again, "retiring /r again")
					r.none(again, "retiring /r again")
					r.ok(never, "retiring an unregistered path")
					r.none(never, "retiring an unregistered path")
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "graph/vertex-lifecycle-write-creates-retirement-revival/revival-inherits-nothing",
				Title:        "a revived path takes its live ancestor's ACL, never the retired one's, and holds none of the retired owner's value, edges or fields",
				Spec:         "libtracer-graph-model §vertex-lifecycle-write-creates-retirement-revival",
				Requirements: []string{"libtracer-graph-model§retirement-notification#4", "libtracer-graph-model§vertex-lifecycle-write-creates-retirement-revival#11", "libtracer-graph-model§vertex-lifecycle-write-creates-retirement-revival#13", "reconstructed§graph-acl#1", "reconstructed§graph-acl#2", "reconstructed§graph-acl#3", "reconstructed§graph-statuses#6", "reconstructed§tlv-status#2"},
				Run: func(t *cases.T) {
					sc := newScript().local("app")
					sc.write("", "/v/c", value("old"))
					sc.subscribe("", "/v/c", "/stale-edge")
					sc.appFields("/v/c", appField("g", conformpb.GraphAppAccess_GRAPH_APP_RW, value("1")))
					sc.acl("/v/c", 0, nil)
					denied := sc.read("app", "/v/c")
					sc.retire("", "/v/c")
					rv := sc.register("/v/c")
					rd := sc.read("app", "/v/c")
					rf := sc.read("app", "/v/c:settings.app.g")
					w := sc.write("app", "/v/c", value("new"))
					r := run1(t, sc)
					r.status(denied, stDenied, "app's read of /v/c under its own ACL, before retirement")
					r.ok(rv, "the revival by registration")
					r.status(rd, stNotFound, "app's read of the revived /v/c (never written since)")
					r.status(rf, stSchema, "app's read of the retired owner's app field")
					r.ok(w, "app's write of the revived /v/c")
					r.none(w, "the write of the revived /v/c (the retired edge is gone)")
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "graph/vertex-lifecycle-write-creates-retirement-revival/local-write-revives",
				Title:        "a local write-create revives a retired path, which then reads the new value",
				Spec:         "libtracer-graph-model §vertex-lifecycle-write-creates-retirement-revival",
				Requirements: []string{"libtracer-graph-model§vertex-lifecycle-write-creates-retirement-revival#11"},
				Run: func(t *cases.T) {
					sc := newScript().local("app")
					sc.write("", "/r/x", value("1"))
					sc.retire("", "/r")
					w := sc.write("app", "/r/x", value("2"))
					rd := sc.read("", "/r/x")
					r := run1(t, sc)
					r.ok(w, "the local write to the retired /r/x")
					r.value(rd, value("2"), "the read after it")
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "graph/retirement-notification/a-retired-subtree-is-silent",
				Title:        "retiring a subtree delivers nothing to any subscriber — no tombstone, no STATUS, no NOT_FOUND — at any level",
				Spec:         "libtracer-graph-model §retirement-notification",
				Requirements: []string{"libtracer-graph-model§retirement-notification#1", "libtracer-graph-model§stale-and-invalid-values#3", "libtracer-graph-model§vertex-lifecycle-write-creates-retirement-revival#3"},
				Run: func(t *cases.T) {
					sc := newScript()
					sc.write("", "/p/a/b", value("1"))
					sc.write("", "/p/c", value("2"))
					sc.subscribe("", "/", "/root")
					sc.subscribe("", "/p", "/p")
					sc.subscribe("", "/p/a", "/pa")
					sc.subscribe("", "/p/a/b", "/pab")
					rt := sc.retire("", "/p/a")
					p := sc.propagate("/")
					r := run1(t, sc)
					r.none(rt, "the retirement of /p/a")
					r.none(p, "a sweep at the root after it")
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "graph/retirement-notification/a-retired-child-is-not-listed",
				Title:        "a retired child does not appear in read(<parent>:children[]), exactly as a child never created",
				Spec:         "libtracer-graph-model §retirement-notification",
				Requirements: []string{"libtracer-graph-model§retirement-notification#3", "reconstructed§tlv-lists#1"},
				Run: func(t *cases.T) {
					sc := newScript()
					sc.write("", "/p/c1", value("1"))
					sc.write("", "/p/c2", value("2"))
					sc.write("", "/p/c3/deep", value("3"))
					sc.retire("", "/p/c1")
					sc.retire("", "/p/c3")
					rd := sc.read("", "/p:children[]")
					r := run1(t, sc)
					r.names(rd, "the :children[] read after retiring c1 and c3", []string{"c2"})
				},
			}
		}),
	}
}
