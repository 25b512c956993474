package graph

import (
	"fmt"
	"sort"

	"github.com/conform-suite/conform/cases"
)

// subscribers are the :subscribers field and its pitfalls (§The
// payload-discriminating :subscribers[N] write, §An indexed :subscribers[N]
// write treated as an unconditional clear, §A multi-step selector under
// :subscribers, §Subscriber delivery policy) and link-edge eviction.
func subscribers(k *cases.Kit) []cases.Case {
	return []cases.Case{
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "graph/the-payload-discriminating-subscribers-write/append-and-list",
				Title:        "write :subscribers[] appends a new slot, read :subscribers[] lists every record, and read :subscribers[N] serves record N whole, an earlier slot keeping its N",
				Spec:         "libtracer-graph-model §the-payload-discriminating-subscribers-write",
				Requirements: []string{"libtracer-graph-model§core-writable-fields#1", "libtracer-graph-model§core-writable-fields#2", "libtracer-graph-model§the-payload-discriminating-subscribers-write#9", "reconstructed§graph-address#1", "reconstructed§graph-address#4", "reconstructed§tlv-lists#2", "reconstructed§tlv-lists#4", "reconstructed§tlv-path#5", "reconstructed§tlv-records#4"},
				Run: func(t *cases.T) {
					a, b := subscriber("/obs/a"), subscriber("/obs/b")
					sc := newScript()
					sc.register("/v")
					w1 := sc.write("", "/v:subscribers[]", a)
					r0 := sc.read("", "/v:subscribers[0]")
					w2 := sc.write("", "/v:subscribers[]", b)
					ls := sc.read("", "/v:subscribers[]")
					r0b := sc.read("", "/v:subscribers[0]")
					r1 := sc.read("", "/v:subscribers[1]")
					r := run1(t, sc)
					r.ok(w1, "the first append")
					r.value(r0, a, "the read of slot 0 after the first append")
					r.ok(w2, "the second append")
					r.entries(ls, "the list", a, b)
					r.value(r0b, a, "the read of slot 0 after the second append (a slot keeps its N)")
					r.value(r1, b, "the read of slot 1, the new slot")
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "graph/the-payload-discriminating-subscribers-write/append-passes-the-subscribe-gate",
				Title:        "an append installs an edge, so it passes the SUBSCRIBE gate: a caller who may only read and write values is refused and installs nothing",
				Spec:         "libtracer-graph-model §the-payload-discriminating-subscribers-write",
				Requirements: []string{"libtracer-graph-model§the-payload-discriminating-subscribers-write#4", "reconstructed§graph-acl#1", "reconstructed§graph-acl#3", "reconstructed§tlv-status#2"},
				Run: func(t *cases.T) {
					sc := newScript().local("writer")
					sc.register("/v")
					sc.acl("/v", rRead|rWrite, nil)
					w := sc.write("writer", "/v:subscribers[]", subscriber("/evil"))
					d := sc.write("", "/v", value("1"))
					r := run1(t, sc)
					r.status(w, stDenied, "the append by a caller without SUBSCRIBE")
					r.none(d, "a write after the refused append")
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "graph/the-payload-discriminating-subscribers-write/a-status-with-a-code-is-not-the-sentinel",
				Title:        "only the empty STATUS clears: a STATUS carrying a code is \"anything else\", TYPE_MISMATCH with the slot untouched",
				Spec:         "libtracer-graph-model §the-payload-discriminating-subscribers-write",
				Requirements: []string{"libtracer-graph-model§the-payload-discriminating-subscribers-write#5", "reconstructed§tlv-status#1", "reconstructed§tlv-status#2"},
				Run: func(t *cases.T) {
					old := subscriber("/obs/old")
					sc := newScript()
					sc.register("/v")
					sc.write("", "/v:subscribers[]", old)
					w := sc.write("", "/v:subscribers[0]", status(stNotFound))
					rd := sc.read("", "/v:subscribers[0]")
					d := sc.write("", "/v", value("1"))
					r := run1(t, sc)
					r.status(w, stTypeMismatch, "the STATUS{not_found} written to slot 0")
					r.value(rd, old, "slot 0 after it")
					r.deliveries(d, "a write after it", dl{"/v", "/obs/old", value("1")})
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "graph/the-payload-discriminating-subscribers-write/an-index-never-grows-the-vector",
				Title:        "an N no slot answers to is INVALID_PATH, whatever the payload, and the slot vector is never grown to reach it",
				Spec:         "libtracer-graph-model §the-payload-discriminating-subscribers-write",
				Requirements: []string{"libtracer-graph-model§the-payload-discriminating-subscribers-write#6", "reconstructed§tlv-lists#2", "reconstructed§tlv-status#2"},
				Run: func(t *cases.T) {
					a := subscriber("/obs/a")
					sc := newScript()
					sc.register("/v")
					sc.write("", "/v:subscribers[]", a)
					w1 := sc.write("", "/v:subscribers[3]", subscriber("/obs/far"))
					w2 := sc.write("", "/v:subscribers[3]", emptyStatus())
					ls := sc.read("", "/v:subscribers[]")
					r := run1(t, sc)
					r.status(w1, stPathInvalid, "a SUBSCRIBER written to slot 3 of 1")
					r.status(w2, stPathInvalid, "the empty STATUS written to slot 3 of 1")
					r.entries(ls, "the list after them", a)
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "graph/an-indexed-subscribers-write-treated-as-an-unconditional-clear/a-mistyped-write-keeps-the-third-party",
				Title:        "a VALUE written to :subscribers[N] neither clears slot N nor reports success: its holder keeps receiving",
				Spec:         "libtracer-graph-model §an-indexed-subscribers-write-treated-as-an-unconditional-clear",
				Requirements: []string{"libtracer-graph-model§an-indexed-subscribers-write-treated-as-an-unconditional-clear#1", "libtracer-graph-model§the-payload-discriminating-subscribers-write#5", "reconstructed§tlv-status#2"},
				Run: func(t *cases.T) {
					sc := newScript()
					sc.register("/v")
					sc.subscribe("", "/v", "/victim")
					sc.subscribe("", "/v", "/other")
					w := sc.write("", "/v:subscribers[1]", value("oops"))
					d := sc.write("", "/v", value("1"))
					r := run1(t, sc)
					r.status(w, stTypeMismatch, "a VALUE written to slot 1")
					r.deliveries(d, "a write after it", dl{"/v", "/victim", value("1")}, dl{"/v", "/other", value("1")})
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "graph/an-indexed-subscribers-write-treated-as-an-unconditional-clear/a-replace-passes-the-subscribe-gate",
				Title:        "a replace installs a new edge, so it passes the SUBSCRIBE gate: a caller holding WRITE alone is refused and the slot keeps its edge",
				Spec:         "libtracer-graph-model §an-indexed-subscribers-write-treated-as-an-unconditional-clear; §the-payload-discriminating-subscribers-write",
				Requirements: []string{"libtracer-graph-model§an-indexed-subscribers-write-treated-as-an-unconditional-clear#3", "libtracer-graph-model§the-payload-discriminating-subscribers-write#3", "reconstructed§graph-acl#1", "reconstructed§tlv-status#2"},
				Run: func(t *cases.T) {
					sc := newScript().local("writer")
					sc.register("/v")
					sc.subscribe("", "/v", "/owner-edge")
					sc.acl("/v", rRead|rWrite, nil)
					w := sc.write("writer", "/v:subscribers[0]", subscriber("/evil"))
					d := sc.write("writer", "/v", value("1"))
					r := run1(t, sc)
					r.status(w, stDenied, "the replace by a caller holding WRITE without SUBSCRIBE")
					r.deliveries(d, "a write after it", dl{"/v", "/owner-edge", value("1")})
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "graph/an-indexed-subscribers-write-treated-as-an-unconditional-clear/a-wildcard-write-clears-nothing",
				Title:        ":subscribers[*] on a write is INVALID_PATH whatever it carries, and slot 0 keeps its edge",
				Spec:         "libtracer-graph-model §an-indexed-subscribers-write-treated-as-an-unconditional-clear",
				Requirements: []string{"libtracer-graph-model§an-indexed-subscribers-write-treated-as-an-unconditional-clear#2", "libtracer-graph-model§the-payload-discriminating-subscribers-write#7", "reconstructed§graph-address#4", "reconstructed§tlv-status#2"},
				Run: func(t *cases.T) {
					sc := newScript()
					sc.register("/v")
					sc.subscribe("", "/v", "/slot0")
					w := sc.write("", "/v:subscribers[*]", subscriber("/evil"))
					d := sc.write("", "/v", value("1"))
					r := run1(t, sc)
					r.status(w, stPathInvalid, "a SUBSCRIBER written to :subscribers[*]")
					r.deliveries(d, "a write after it", dl{"/v", "/slot0", value("1")})
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "graph/a-multi-step-selector-under-subscribers/a-member-selector-names-nothing",
				Title:        ":subscribers[N].<anything> answers SCHEMA_NOT_FOUND on write and on read, and slot N keeps its edge",
				Spec:         "libtracer-graph-model §a-multi-step-selector-under-subscribers; §the-payload-discriminating-subscribers-write",
				Requirements: []string{"libtracer-graph-model§a-multi-step-selector-under-subscribers#1", "libtracer-graph-model§module-namespaced-extension-fields#8", "libtracer-graph-model§the-payload-discriminating-subscribers-write#8"},
				Run: func(t *cases.T) {
					sc := newScript()
					sc.register("/v")
					sc.subscribe("", "/v", "/live")
					w1 := sc.write("", "/v:subscribers[0].liveness.last_seen_ns", emptyStatus())
					w2 := sc.write("", "/v:subscribers[0].settings.transport_tcp.send_buf_kb", value("8"))
					rd := sc.read("", "/v:subscribers[0].x")
					d := sc.write("", "/v", value("1"))
					r := run1(t, sc)
					r.status(w1, stSchema, "the empty STATUS written to :subscribers[0].liveness.last_seen_ns")
					r.status(w2, stSchema, "a VALUE written to :subscribers[0].settings.transport_tcp.send_buf_kb")
					r.status(rd, stSchema, "the read of :subscribers[0].x")
					r.deliveries(d, "a write after them", dl{"/v", "/live", value("1")})
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "graph/a-multi-step-selector-under-subscribers/the-shape-is-resolved-before-the-acl",
				Title:        "a selector under :subscribers that names nothing answers SCHEMA_NOT_FOUND even to a caller with no rights: it is not an access question",
				Spec:         "libtracer-graph-model §a-multi-step-selector-under-subscribers",
				Requirements: []string{"libtracer-graph-model§a-multi-step-selector-under-subscribers#2", "reconstructed§graph-acl#1"},
				Run: func(t *cases.T) {
					sc := newScript().local("nobody")
					sc.register("/v")
					sc.subscribe("", "/v", "/live")
					sc.acl("/v", 0, nil)
					w := sc.write("nobody", "/v:subscribers[0].x", emptyStatus())
					rd := sc.read("nobody", "/v:subscribers[0].x")
					r := run1(t, sc)
					r.status(w, stSchema, "nobody's write of :subscribers[0].x")
					r.status(rd, stSchema, "nobody's read of :subscribers[0].x")
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "graph/subscriber-delivery-policy/durability-request-latches-on-join",
				Title:        "a SUBSCRIBER whose delivery policy sets durability_request is delivered the vertex's last value when it joins; one without it is not",
				Spec:         "libtracer-graph-model §subscriber-delivery-policy",
				Requirements: []string{"libtracer-graph-model§subscriber-delivery-policy#4", "libtracer-graph-model§subscriber-delivery-policy#8", "libtracer-graph-model§subscriber-delivery-policy#9", "reconstructed§tlv-records#2"},
				Run: func(t *cases.T) {
					sc := newScript()
					sc.write("", "/v", value("last"))
					plain := sc.subscribe("", "/v", "/plain")
					durable := sc.subscribeWith("", "/v", subscriberPolicy("/durable", 1<<5))
					r := run1(t, sc)
					r.none(plain, "the join without durability_request")
					r.deliveries(durable, "the join with durability_request", dl{"/v", "/durable", value("last")})
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "graph/subscriber-delivery-policy/reserved-policy-bits-never-rejected",
				Title:        "a delivery policy with bits 8-15 set is admitted, never rejected, and the edge delivers",
				Spec:         "libtracer-graph-model §subscriber-delivery-policy",
				Requirements: []string{"libtracer-graph-model§subscriber-delivery-policy#7", "reconstructed§delivery-policy#1", "reconstructed§tlv-records#2"},
				Run: func(t *cases.T) {
					sc := newScript()
					sc.register("/v")
					j := sc.subscribeWith("", "/v", subscriberPolicy("/obs", 0xFF00))
					w := sc.write("", "/v", value("1"))
					r := run1(t, sc)
					r.ok(j, "the append of a SUBSCRIBER with reserved policy bits set")
					r.deliveries(w, "a write after it", dl{"/v", "/obs", value("1")})
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "graph/vertex-lifecycle-write-creates-retirement-revival/link-eviction-keeps-the-vertices",
				Title:        "evicting a link's edges clears every edge admitted over it, returns the count, and leaves the vertices and other edges live",
				Spec:         "libtracer-graph-model §vertex-lifecycle-write-creates-retirement-revival",
				Requirements: []string{"libtracer-graph-model§vertex-lifecycle-write-creates-retirement-revival#14", "libtracer-graph-model§vertex-lifecycle-write-creates-retirement-revival#15"},
				Run: func(t *cases.T) {
					sc := newScript().remote("peer", peerLink)
					sc.write("", "/v", value("0"))
					sc.subscribe("peer", "/v", "/remote/a")
					sc.subscribe("peer", "/", "/remote/b")
					sc.subscribe("", "/v", "/local")
					e := sc.evict(peerLink)
					w := sc.write("", "/v", value("1"))
					rd := sc.read("", "/v")
					r := run1(t, sc)
					if n := r.reply(e).GetCount(); n != 2 {
						r.failAt(at(e, "count"), "the eviction's count", "2", fmt.Sprint(n))
					}
					r.deliveries(w, "a write after the eviction", dl{"/v", "/local", value("1")})
					r.value(rd, value("1"), "the read of /v after the eviction")
				},
			}
		}),
	}
}

// entries checks that step i served a list holding exactly want's entries,
// each compared as a TLV tree, in any order, in any structured container
// (reconstructed§tlv-lists#4: the container's type and the order are the
// implementation's). Where an entry sits is judged through :subscribers[N]
// reads, never through the list's order.
func (r *result) entries(i int, what string, want ...[]byte) {
	rep := r.reply(i)
	var w []string
	for _, b := range want {
		w = append(w, render(b))
	}
	sort.Strings(w)
	n, err := parse(rep.GetValue())
	if rep.GetStatus() != stOK || err != nil || n.opt&optPL == 0 {
		r.failAt(at(i, "value"), fmt.Sprintf("step %d (%s) served no list", i, what), "a structured container of "+fmt.Sprint(w), fmt.Sprintf("%s %s", statusText(rep.GetStatus()), render(rep.GetValue())))
		return
	}
	var g []string
	for _, k := range n.kids {
		g = append(g, k.render())
	}
	sort.Strings(g)
	if fmt.Sprint(g) != fmt.Sprint(w) {
		r.failAt(at(i, "value"), fmt.Sprintf("step %d (%s) listed other entries (compared in any order)", i, what), fmt.Sprint(w), fmt.Sprint(g))
	}
}
