package graph

import (
	"github.com/conform-suite/conform/cases"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
)

// The seven flat :settings knobs RFC-0022 removed, and the ⚠️ rows (graph
// model §Core writable fields).
var (
	removedKnobs = []string{"reliability", "priority", "durability", "deadline_ns", "queue_max_bytes", "history_keep_last", "store_ref_min_bytes"}
	warningRows  = []string{"liveness.heartbeat_hz", "liveness.last_seen_ns", "liveness.missed_deadlines", "description"}
)

// everyone adds a local caller with every right, one with none (once the case
// installs its ACL), and a remote caller, and returns their names with the
// owner's: "caller-independently".
func everyone(sc *script) []string {
	sc.local("app").local("nobody").remote("peer", peerLink)
	return []string{"", "app", "nobody", "peer"}
}

// fields are the core field discipline (§Core writable fields, §Definitions,
// §Module-namespaced extension fields, the await rule of §Owner-declared
// application fields).
func fields(k *cases.Kit) []cases.Case {
	// notFoundEverywhere checks that reading and writing each selector at /v
	// answers SCHEMA_NOT_FOUND whoever asks.
	notFoundEverywhere := func(t *cases.T, selectors []string, anyCaller bool) {
		sc := newScript()
		callers := everyone(sc)
		if !anyCaller {
			callers = []string{"", "app", "peer"}
		}
		sc.register("/v")
		sc.acl("/v", rAll, map[string]uint32{"nobody": 0})
		var reads, writes []int
		for _, sel := range selectors {
			for _, c := range callers {
				reads = append(reads, sc.read(c, "/v:"+sel))
				writes = append(writes, sc.write(c, "/v:"+sel, value("\x01")))
			}
		}
		r := run1(t, sc)
		for _, i := range reads {
			r.status(i, stSchema, "a read")
		}
		for _, i := range writes {
			r.status(i, stSchema, "a write")
		}
	}
	return []cases.Case{
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "graph/core-writable-fields/unimplemented-rows-answer-schema-not-found",
				Title:        "a read or a write of the ⚠️ :liveness.* and :description rows answers tr::schema::not_found, whoever asks",
				Spec:         "libtracer-graph-model §core-writable-fields",
				Requirements: []string{"libtracer-graph-model§core-writable-fields#4", "libtracer-graph-model§core-writable-fields#7", "reconstructed§graph-statuses#7", "reconstructed§tlv-status#2"},
				Run:          func(t *cases.T) { notFoundEverywhere(t, warningRows, false) },
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "graph/core-writable-fields/removed-knobs-answer-schema-not-found",
				Title:        "all seven removed flat :settings knobs answer SCHEMA_NOT_FOUND on read and on write, caller-independently",
				Spec:         "libtracer-graph-model §core-writable-fields",
				Requirements: []string{"libtracer-graph-model§core-writable-fields#7", "libtracer-graph-model§core-writable-fields#9", "libtracer-graph-model§module-namespaced-extension-fields#7", "libtracer-graph-model§storage-is-declared-owner-side-and-nothing-is-inherited#1", "reconstructed§graph-address#1"},
				Run: func(t *cases.T) {
					var sels []string
					for _, k := range removedKnobs {
						sels = append(sels, "settings."+k)
					}
					notFoundEverywhere(t, sels, true)
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "graph/module-namespaced-extension-fields/module-fields-answer-schema-not-found",
				Title:        "no module-namespaced field is implemented: :settings.<module>.<field> answers tr::schema::not_found on read and on write, whoever asks",
				Spec:         "libtracer-graph-model §module-namespaced-extension-fields",
				Requirements: []string{"libtracer-graph-model§core-writable-fields#7", "libtracer-graph-model§module-namespaced-extension-fields#6", "libtracer-graph-model§module-namespaced-extension-fields#7", "reconstructed§graph-statuses#7"},
				Run: func(t *cases.T) {
					notFoundEverywhere(t, []string{"settings.transport_tcp.send_buf_kb", "settings.transport_can.bitrate"}, true)
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "graph/core-writable-fields/bare-settings-read",
				Title:        "the bare :settings read is SETTINGS{} on a vertex declaring no app fields, and SETTINGS{NAME \"app\" SETTINGS{…}} on one that does",
				Spec:         "libtracer-graph-model §core-writable-fields",
				Requirements: []string{"libtracer-graph-model§core-writable-fields#10", "reconstructed§graph-address#4", "reconstructed§tlv-records#1", "reconstructed§tlv-records#3"},
				Run: func(t *cases.T) {
					sc := newScript()
					sc.register("/plain")
					sc.register("/app")
					sc.appFields("/app", appField("gain", conformpb.GraphAppAccess_GRAPH_APP_RW, value("7")))
					r1 := sc.read("", "/plain:settings")
					r2 := sc.read("", "/app:settings")
					r := run1(t, sc)
					r.same(r1, node(tSettings), "the :settings read of /plain")
					r.same(r2, node(tSettings, name("app"), node(tSettings, name("gain"), value("7"))), "the :settings read of /app")
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "graph/definitions/schema-carries-the-app-part",
				Title:        ":schema is POINT{NAME <vertex name>, SETTINGS{} (the protocol knobs: none), NAME \"app\", SETTINGS{…} (the descriptor table)} when a table is installed",
				Spec:         "libtracer-graph-model §definitions",
				Requirements: []string{"libtracer-graph-model§definitions#1", "libtracer-graph-model§definitions#3", "reconstructed§tlv-records#3"},
				Run: func(t *cases.T) {
					sc := newScript()
					sc.register("/dev/motor")
					sc.appFields("/dev/motor", appField("speed", conformpb.GraphAppAccess_GRAPH_APP_RW, nil), appField("model", conformpb.GraphAppAccess_GRAPH_APP_RO, nil))
					rd := sc.read("", "/dev/motor:schema")
					r := run1(t, sc)
					rep := r.reply(rd)
					n, err := parse(rep.GetValue())
					if rep.GetStatus() != stOK || err != nil || n.typ != tPoint || len(n.kids) != 4 {
						r.failAt(at(rd, "value"), "the :schema is not a POINT of four children", "POINT{NAME \"motor\", SETTINGS{}, NAME \"app\", SETTINGS{…}}", statusText(rep.GetStatus())+" "+render(rep.GetValue()))
						return
					}
					k := n.kids
					if k[0].render() != render(name("motor")) || k[1].render() != render(node(tSettings)) || k[2].render() != render(name("app")) || k[3].typ != tSettings || k[3].opt&optPL == 0 {
						r.failAt(at(rd, "value"), "the :schema's children", "NAME \"motor\", SETTINGS{}, NAME \"app\", SETTINGS{…}", render(rep.GetValue()))
					}
					for _, f := range []string{"speed", "model"} {
						if !contains(k[3].raw, []byte(f)) {
							r.failAt(at(rd, "value")+" (the app part)", "the app part does not name a declared field", f, render(k[3].raw))
						}
					}
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "graph/definitions/schema-is-read-only",
				Title:        "the :schema is read-only: a write is refused and the schema is unchanged",
				Spec:         "libtracer-graph-model §definitions; §core-writable-fields",
				Requirements: []string{"libtracer-graph-model§core-writable-fields#5", "libtracer-graph-model§definitions#2", "reconstructed§graph-address#4", "reconstructed§graph-statuses#3", "reconstructed§tlv-path#5"},
				Run: func(t *cases.T) {
					sc := newScript()
					sc.register("/sensor/temp")
					w := sc.write("", "/sensor/temp:schema", point("temp", nil))
					rd := sc.read("", "/sensor/temp:schema")
					r := run1(t, sc)
					r.refused(w, "the write of :schema")
					r.same(rd, node(tPoint, name("temp"), node(tSettings)), "the :schema after it")
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "graph/owner-declared-application-fields/await-with-a-field-selector-answers-schema-not-found",
				Title:        "an await carrying any :field selector, including :subscribers and :acl, answers tr::schema::not_found",
				Spec:         "libtracer-graph-model §owner-declared-application-fields",
				Requirements: []string{"libtracer-graph-model§owner-declared-application-fields#21"},
				Run: func(t *cases.T) {
					sc := newScript()
					sc.register("/v")
					sc.appFields("/v", appField("g", conformpb.GraphAppAccess_GRAPH_APP_RW, nil))
					var aws []int
					for _, sel := range []string{"subscribers[]", "acl", "settings.app.g", "schema", "settings"} {
						aws = append(aws, sc.await("", "/v:"+sel))
					}
					w := sc.write("", "/v", value("1"))
					r := run1(t, sc)
					for _, i := range aws {
						r.status(i, stSchema, "an await with a field selector")
					}
					if len(r.wakes(w)) != 0 {
						r.failAt(at(w, "wakes"), "a refused await completed later", "no await completed", "an await completed")
					}
				},
			}
		}),
	}
}
