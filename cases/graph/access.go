package graph

import (
	"github.com/conform-suite/conform/cases"
	"github.com/conform-suite/conform/corpus"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
)

// access is the ACL: the right each operation needs, and the :acl field
// (§Core writable fields; §Subtree subscriptions…; §Owner-declared application
// fields; §Retirement notification; the rights as reconstructed§graph-acl
// pins them).
func access(k *cases.Kit, vecs *cases.Vectors[*corpus.GraphVector]) []cases.Case {
	return []cases.Case{
		k.Must(func() cases.Case {
			v := vecs.Get("acl-read-and-admin-write")
			return vectorCase(v, "graph/core-writable-fields/acl-read-and-admin-write",
				"libtracer-graph-model§core-writable-fields#6",
				"reconstructed§graph-acl#1",
				"reconstructed§graph-acl#2",
				"reconstructed§graph-acl#3",
				"reconstructed§graph-acl#4",
				"reconstructed§graph-choices#10")
		}),
		k.Must(func() cases.Case {
			v := vecs.Get("acl-write-type-checked")
			return vectorCase(v, "graph/core-writable-fields/acl-write-type-checked",
				"libtracer-graph-model§core-writable-fields#6",
				"reconstructed§graph-acl#4",
				"reconstructed§graph-choices#10",
				"reconstructed§tlv-status#2")
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "graph/core-writable-fields/read-right-gates-field-reads",
				Title:        "a caller without READ on a vertex is denied every field read there — :schema, :subscribers, :children[], :settings, :acl, :identity — and its data read",
				Spec:         "libtracer-graph-model §core-writable-fields; §subtree-subscriptions-branch-writes-and-write-creates",
				Requirements: []string{"reconstructed§graph-acl#1", "reconstructed§graph-acl#3", "reconstructed§tlv-status#2"},
				Run: func(t *cases.T) {
					sc := newScript().local("w")
					sc.write("", "/v/c", value("1"))
					sc.subscribe("", "/v", "/o")
					sc.appFields("/v", appField("g", rw, value("1")))
					sc.acl("/v", rWrite|rSubscribe, nil)
					var reads []int
					for _, a := range []string{"/v:schema", "/v:subscribers[]", "/v:subscribers[0]", "/v:children[]", "/v:settings", "/v:settings.app", "/v:acl", "/v:identity", "/v", "/v/c"} {
						reads = append(reads, sc.read("w", a))
					}
					sc.acl("/v", rRead, nil)
					ok := sc.read("w", "/v:identity")
					r := run1(t, sc)
					for _, i := range reads {
						r.status(i, stDenied, "a read by a caller without READ")
					}
					r.tree(ok, pathTLV("/v"), "the :identity read once READ is granted")
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "graph/owner-declared-application-fields/read-right-gates-app-field-reads",
				Title:        "a caller's read of an app field, or of the app container, needs the vertex's READ right; the owner's does not",
				Spec:         "libtracer-graph-model §owner-declared-application-fields",
				Requirements: []string{"libtracer-graph-model§owner-declared-application-fields#11", "reconstructed§graph-acl#1", "reconstructed§graph-acl#3", "reconstructed§tlv-status#2"},
				Run: func(t *cases.T) {
					sc := newScript().local("w")
					sc.register("/v")
					sc.appFields("/v", appField("g", rw, value("1")))
					sc.acl("/v", rWrite, nil)
					d1 := sc.read("w", "/v:settings.app.g")
					d2 := sc.read("w", "/v:settings.app")
					own := sc.read("", "/v:settings.app.g")
					sc.acl("/v", rRead|rWrite, nil)
					ok := sc.read("w", "/v:settings.app.g")
					r := run1(t, sc)
					r.status(d1, stDenied, "w's read of the app field without READ")
					r.status(d2, stDenied, "w's read of :settings.app without READ")
					r.value(own, value("1"), "the owner's read of the app field")
					r.value(ok, value("1"), "w's read of the app field with READ")
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "graph/assign-propagate-and-the-coalescing-sweep/await-needs-the-read-right",
				Title:        "an await, the readiness form of a data read, needs the READ right: a caller without it is denied and is never woken",
				Spec:         "libtracer-graph-model §assign-propagate-and-the-coalescing-sweep",
				Requirements: []string{"reconstructed§graph-acl#1", "reconstructed§graph-acl#3", "reconstructed§tlv-status#2"},
				Run: func(t *cases.T) {
					sc := newScript().local("w")
					sc.write("", "/v", value("0"))
					sc.acl("/v", rWrite, nil)
					denied := sc.await("w", "/v")
					w1 := sc.write("", "/v", value("1"))
					sc.acl("/v", rRead|rWrite, nil)
					aw := sc.await("w", "/v")
					w2 := sc.write("", "/v", value("2"))
					r := run1(t, sc)
					r.status(denied, stDenied, "w's await without READ")
					r.noWakes(w1, "a write after the refused await")
					r.pending(aw, "w's await with READ")
					r.wake(w2, aw, value("2"), "the write after it")
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "graph/subtree-subscriptions-branch-writes-and-write-creates/data-write-needs-the-write-right",
				Title:        "a data write needs the WRITE right, local or remote, leaf or branch: a caller without it is denied, nothing is stored and nothing delivered",
				Spec:         "libtracer-graph-model §subtree-subscriptions-branch-writes-and-write-creates",
				Requirements: []string{"reconstructed§graph-acl#1", "reconstructed§graph-acl#3", "reconstructed§tlv-status#2"},
				Run: func(t *cases.T) {
					sc := newScript().local("r").remote("peer", peerLink)
					sc.write("", "/v", value("0"))
					sc.subscribe("", "/v", "/o")
					sc.acl("/v", rRead|rSubscribe, nil)
					w1 := sc.write("r", "/v", value("1"))
					w2 := sc.write("peer", "/v", value("2"))
					w3 := sc.write("r", "/v", point("v", value("3")))
					f := sc.fwd("peer", fwd(opWrite, "/v", "/net/tcp/l0/stm", value("4")))
					rd := sc.read("", "/v")
					r := run1(t, sc)
					r.status(w1, stDenied, "r's write without WRITE")
					r.none(w1, "r's refused write")
					r.status(w2, stDenied, "peer's write without WRITE")
					r.none(w2, "peer's refused write")
					r.status(w3, stDenied, "r's branch write without WRITE")
					r.none(w3, "r's refused branch write")
					r.tree(f, reply("/net/tcp/l0/stm", status(stDenied)), "peer's FWD{WRITE} without WRITE")
					r.none(f, "peer's refused FWD{WRITE}")
					r.value(rd, value("0"), "the read after them")
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "graph/retirement-notification/delete-gates-retirement",
				Title:        "the DELETE bit gates who may retire a vertex: a caller without it is denied and the subtree stays; with it the subtree is retired",
				Spec:         "libtracer-graph-model §retirement-notification",
				Requirements: []string{"libtracer-graph-model§retirement-notification#2", "reconstructed§graph-acl#1", "reconstructed§graph-acl#3", "reconstructed§tlv-status#2"},
				Run: func(t *cases.T) {
					sc := newScript().local("k")
					sc.write("", "/r", value("1"))
					sc.write("", "/r/c", value("2"))
					sc.acl("/r", rRead|rWrite, map[string]uint32{"k": rRead | rWrite | rCreate})
					denied := sc.retire("k", "/r")
					kept := sc.read("", "/r/c")
					sc.acl("/r", rRead|rWrite, map[string]uint32{"k": rRead | rWrite | rDelete})
					ok := sc.retire("k", "/r")
					gone := sc.read("", "/r/c")
					r := run1(t, sc)
					r.status(denied, stDenied, "k's retirement without DELETE")
					r.value(kept, value("2"), "the read of /r/c after it")
					r.ok(ok, "k's retirement with DELETE")
					r.status(gone, stNotFound, "the read of /r/c after it")
				},
			}
		}),
		k.Must(func() cases.Case {
			v := vecs.Get("write-create-needs-create-and-write")
			return vectorCase(v, "graph/subtree-subscriptions-branch-writes-and-write-creates/write-create-needs-create-and-write",
				"libtracer-graph-model§subtree-subscriptions-branch-writes-and-write-creates#11",
				"reconstructed§graph-acl#1",
				"reconstructed§graph-acl#3",
				"reconstructed§graph-choices#1",
				"reconstructed§tlv-lists#1")
		}),
		k.Must(func() cases.Case {
			v := vecs.Get("every-subscribers-write-needs-subscribe")
			return vectorCase(v, "graph/the-payload-discriminating-subscribers-write/every-subscribers-write-needs-subscribe",
				"libtracer-graph-model§the-payload-discriminating-subscribers-write#3",
				"reconstructed§graph-acl#1",
				"reconstructed§graph-acl#3",
				"reconstructed§graph-choices#5")
		}),
	}
}

// The app-field accesses.
const (
	ro = conformpb.GraphAppAccess_GRAPH_APP_RO
	rw = conformpb.GraphAppAccess_GRAPH_APP_RW
	wo = conformpb.GraphAppAccess_GRAPH_APP_WO
)
