package graph

import (
	"github.com/conform-suite/conform/cases"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
)

const (
	ro = conformpb.GraphAppAccess_GRAPH_APP_RO
	rw = conformpb.GraphAppAccess_GRAPH_APP_RW
	wo = conformpb.GraphAppAccess_GRAPH_APP_WO
)

// apps are the owner-declared application fields and the silence of the
// property plane (§Owner-declared application fields).
func (s *suite) apps() []cases.Case {
	return []cases.Case{
		must(cases.Case{
			ID:    "graph/" + secApp + "/values-are-stored-verbatim",
			Title: "a declared rw field written by a caller with WRITE is stored verbatim, with no dtype validation, and read back byte-identical",
			Spec:  spec(secApp),
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
		}),
		reconstructed(must(cases.Case{
			ID:    "graph/" + secApp + "/write-right-is-checked-before-the-name",
			Title: "a caller without WRITE is denied before any name under settings.app. is resolved, so a declared and an undeclared name answer it identically",
			Spec:  spec(secApp, "RECONSTRUCTED §2 (tr::access::denied); graph.proto (the ACL mask)"),
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
		})),
		must(cases.Case{
			ID:    "graph/" + secApp + "/undeclared-and-ro-answer-schema-not-found",
			Title: "an admitted caller writing an undeclared name or a ro field gets SCHEMA_NOT_FOUND; the owner writes its ro field, which callers then read",
			Spec:  spec(secApp),
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
		}),
		reconstructed(must(cases.Case{
			ID:    "graph/" + secApp + "/write-only-never-reads-back",
			Title: "a wo field has no read surface: a read answers SCHEMA_NOT_FOUND and the :settings.app container leaves it out",
			Spec:  spec(secApp, "RECONSTRUCTED §2 (the SETTINGS layout)"),
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
				r.value(rc, node(tSettings, name("gain"), value("3")), "app's read of :settings.app")
			},
		})),
		reconstructed(must(cases.Case{
			ID:    "graph/" + secApp + "/declared-but-unwritten-reads-not-found",
			Title: "a declared field never written reads NOT_FOUND (not SCHEMA_NOT_FOUND) and is omitted from container reads",
			Spec:  spec(secApp, "RECONSTRUCTED §2 (tr::path::not_found as NOT_FOUND; the SETTINGS layout)"),
			Run: func(t *cases.T) {
				sc := newScript()
				sc.register("/v")
				sc.appFields("/v", appField("later", rw, nil))
				rd := sc.read("", "/v:settings.app.later")
				rc := sc.read("", "/v:settings.app")
				r := run1(t, sc)
				r.status(rd, stNotFound, "the read of the unwritten field")
				r.value(rc, node(tSettings), "the read of :settings.app")
			},
		})),
		must(cases.Case{
			ID:    "graph/" + secApp + "/field-writes-are-silent",
			Title: "field writes — app, :subscribers, by owner and caller — wake no await, advance no write sequence and propagate nothing",
			Spec:  spec(secApp),
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
						r.fail("a field write completed the await", "the await still pending", "completed")
					}
				}
				r.none(p, "a sweep at the root after the field writes (nothing is pending)")
				if len(r.wakes(p)) != 0 {
					r.fail("the sweep completed the await", "the await still pending", "completed")
				}
				_ = aw
			},
		}),
		must(cases.Case{
			ID:    "graph/" + secApp + "/field-writes-do-not-create",
			Title: "a field write to a nonexistent vertex does not create it",
			Spec:  spec(secApp),
			Run: func(t *cases.T) {
				sc := newScript().local("app")
				w := sc.write("app", "/nope:settings.app.g", value("1"))
				rd := sc.read("", "/nope")
				r := run1(t, sc)
				r.status(w, stNotFound, "the field write to /nope")
				r.status(rd, stNotFound, "the read of /nope after it")
			},
		}),
	}
}
