package graph

import (
	"github.com/conform-suite/conform/cases"
)

// apps are the owner-declared application fields and the silence of the
// property plane (§Owner-declared application fields).
func apps(k *cases.Kit) []cases.Case {
	return []cases.Case{
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "graph/owner-declared-application-fields/values-are-stored-verbatim",
				Title:        "a declared rw field written by a caller with WRITE is stored verbatim, with no dtype validation, and read back byte-identical",
				Spec:         "libtracer-graph-model §owner-declared-application-fields",
				Requirements: []string{"libtracer-graph-model§core-writable-fields#11", "libtracer-graph-model§core-writable-fields#3", "libtracer-graph-model§owner-declared-application-fields#10", "libtracer-graph-model§owner-declared-application-fields#8"},
				Run: func(t *cases.T) {
					odd := node(tSettings, name("any"), leaf(0x42, []byte("opaque")))
					sc := newScript().local("app")
					sc.register("/v")
					sc.appFields("/v", appField("g", rw, nil))
					w := sc.write("app", "/v:settings.app.g", odd)
					rd := sc.read("app", "/v:settings.app.g")
					r := run1(t, sc)
					r.ok(w, "the write of the rw field")
					r.value(rd, odd, "the read of the rw field")
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "graph/owner-declared-application-fields/write-right-is-checked-before-the-name",
				Title:        "a caller without WRITE is denied before any name under settings.app. is resolved, so a declared and an undeclared name answer it identically",
				Spec:         "libtracer-graph-model §owner-declared-application-fields",
				Requirements: []string{"libtracer-graph-model§owner-declared-application-fields#6", "reconstructed§graph-acl#1", "reconstructed§graph-acl#3", "reconstructed§tlv-status#2"},
				Run: func(t *cases.T) {
					sc := newScript().local("reader")
					sc.register("/v")
					sc.appFields("/v", appField("g", rw, nil))
					sc.acl("/v", rRead, nil)
					w1 := sc.write("reader", "/v:settings.app.g", value("1"))
					w2 := sc.write("reader", "/v:settings.app.nope", value("1"))
					r := run1(t, sc)
					r.status(w1, stDenied, "reader's write of the declared field")
					r.status(w2, stDenied, "reader's write of an undeclared name")
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "graph/owner-declared-application-fields/undeclared-and-ro-answer-schema-not-found",
				Title:        "an admitted caller writing an undeclared name or a ro field gets SCHEMA_NOT_FOUND; the owner writes its ro field, which callers then read",
				Spec:         "libtracer-graph-model §owner-declared-application-fields",
				Requirements: []string{"libtracer-graph-model§core-writable-fields#3", "libtracer-graph-model§owner-declared-application-fields#2", "libtracer-graph-model§owner-declared-application-fields#3", "libtracer-graph-model§owner-declared-application-fields#4", "libtracer-graph-model§owner-declared-application-fields#7"},
				Run: func(t *cases.T) {
					sc := newScript().local("app")
					sc.register("/v")
					sc.appFields("/v", appField("model", ro, nil))
					w1 := sc.write("app", "/v:settings.app.nope", value("1"))
					w2 := sc.write("app", "/v:settings.app.model", value("x"))
					w3 := sc.write("", "/v:settings.app.model", value("m1"))
					rd := sc.read("app", "/v:settings.app.model")
					rd2 := sc.read("app", "/v:settings.app.nope")
					r := run1(t, sc)
					r.status(w1, stSchema, "app's write of an undeclared name")
					r.status(w2, stSchema, "app's write of the ro field")
					r.ok(w3, "the owner's write of its ro field")
					r.value(rd, value("m1"), "app's read of the ro field")
					r.status(rd2, stSchema, "app's read of an undeclared name")
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "graph/owner-declared-application-fields/write-only-never-reads-back",
				Title:        "a wo field has no read surface: a read answers SCHEMA_NOT_FOUND and the :settings.app container leaves it out",
				Spec:         "libtracer-graph-model §owner-declared-application-fields",
				Requirements: []string{"libtracer-graph-model§core-writable-fields#11", "libtracer-graph-model§core-writable-fields#3", "libtracer-graph-model§owner-declared-application-fields#12", "libtracer-graph-model§owner-declared-application-fields#14", "reconstructed§graph-address#4", "reconstructed§tlv-records#3"},
				Run: func(t *cases.T) {
					sc := newScript().local("app")
					sc.register("/v")
					sc.appFields("/v", appField("secret", wo, nil), appField("gain", rw, nil))
					sc.write("app", "/v:settings.app.secret", value("pw"))
					sc.write("app", "/v:settings.app.gain", value("3"))
					rd := sc.read("app", "/v:settings.app.secret")
					rc := sc.read("app", "/v:settings.app")
					r := run1(t, sc)
					r.status(rd, stSchema, "app's read of the wo field")
					r.same(rc, node(tSettings, name("gain"), value("3")), "app's read of :settings.app")
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "graph/owner-declared-application-fields/declared-but-unwritten-reads-not-found",
				Title:        "a declared field never written reads NOT_FOUND (not SCHEMA_NOT_FOUND) and is omitted from container reads",
				Spec:         "libtracer-graph-model §owner-declared-application-fields",
				Requirements: []string{"libtracer-graph-model§owner-declared-application-fields#13", "libtracer-graph-model§owner-declared-application-fields#14", "reconstructed§graph-statuses#6", "reconstructed§tlv-records#3"},
				Run: func(t *cases.T) {
					sc := newScript()
					sc.register("/v")
					sc.appFields("/v", appField("later", rw, nil))
					rd := sc.read("", "/v:settings.app.later")
					rc := sc.read("", "/v:settings.app")
					r := run1(t, sc)
					r.status(rd, stNotFound, "the read of the unwritten field")
					r.same(rc, node(tSettings), "the read of :settings.app")
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "graph/owner-declared-application-fields/field-writes-are-silent",
				Title:        "field writes — app, :subscribers, by owner and caller — wake no await, advance no write sequence and propagate nothing",
				Spec:         "libtracer-graph-model §owner-declared-application-fields",
				Requirements: []string{"libtracer-graph-model§owner-declared-application-fields#16", "libtracer-graph-model§owner-declared-application-fields#17", "libtracer-graph-model§owner-declared-application-fields#18"},
				Run: func(t *cases.T) {
					sc := newScript().local("app")
					sc.write("", "/v", value("0"))
					sc.appFields("/v", appField("g", rw, nil))
					sc.subscribe("", "/", "/root")
					aw := sc.await("", "/v")
					f1 := sc.write("app", "/v:settings.app.g", value("1"))
					f2 := sc.write("", "/v:settings.app.g", value("2"))
					f3 := sc.write("app", "/v:subscribers[]", subscriber("/late"))
					p := sc.propagate("/")
					r := run1(t, sc)
					for _, f := range []int{f1, f2, f3} {
						r.ok(f, "a field write")
						r.none(f, "a field write")
						if len(r.wakes(f)) != 0 {
							r.failAt(at(f, "wakes"), "a field write completed the await", "the await still pending", "completed")
						}
					}
					r.none(p, "a sweep at the root after the field writes (nothing is pending)")
					if len(r.wakes(p)) != 0 {
						r.failAt(at(p, "wakes"), "the sweep completed the await", "the await still pending", "completed")
					}
					_ = aw
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "graph/owner-declared-application-fields/field-writes-do-not-create",
				Title:        "a field write to a nonexistent vertex does not create it",
				Spec:         "libtracer-graph-model §owner-declared-application-fields",
				Requirements: []string{"libtracer-graph-model§owner-declared-application-fields#9", "libtracer-graph-model§subtree-subscriptions-branch-writes-and-write-creates#13"},
				Run: func(t *cases.T) {
					sc := newScript().local("app")
					w := sc.write("app", "/nope:settings.app.g", value("1"))
					rd := sc.read("", "/nope")
					r := run1(t, sc)
					r.status(w, stNotFound, "the field write to /nope")
					r.status(rd, stNotFound, "the read of /nope after it")
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "graph/owner-declared-application-fields/owner-reads-its-write-only-field",
				Title:        "the owner reads its own declared fields whatever their access: a wo field a caller cannot read back reads, for the owner, the value written",
				Spec:         "libtracer-graph-model §owner-declared-application-fields",
				Requirements: []string{"libtracer-graph-model§owner-declared-application-fields#5", "libtracer-graph-model§owner-declared-application-fields#12"},
				Run: func(t *cases.T) {
					sc := newScript().local("app")
					sc.register("/v")
					sc.appFields("/v", appField("secret", wo, nil))
					w := sc.write("app", "/v:settings.app.secret", value("pw"))
					own := sc.read("", "/v:settings.app.secret")
					theirs := sc.read("app", "/v:settings.app.secret")
					sc.write("", "/v:settings.app.secret", value("pw2"))
					own2 := sc.read("", "/v:settings.app.secret")
					r := run1(t, sc)
					r.ok(w, "app's write of the wo field")
					r.value(own, value("pw"), "the owner's read of the wo field")
					r.status(theirs, stSchema, "app's read of the wo field")
					r.value(own2, value("pw2"), "the owner's read after its own write")
				},
			}
		}),
	}
}
