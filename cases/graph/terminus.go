package graph

import (
	"github.com/conform-suite/conform/cases"
	"github.com/conform-suite/conform/corpus"
)

// peerSrc is the src route a FWD from the script's remote peer carries: the
// peer's link, then the peer (a return route, reconstructed§tlv-records#6).
const peerSrc = peerLink + "/stm"

// terminus is the FWD at its terminus: every op applied as the document
// applies a WRITE, the reply retracing the src route, and what a terminus
// never applies (§The shedding rule; §Assign, propagate…; §Vertex
// lifecycle).
func terminus(k *cases.Kit, vecs *cases.Vectors[*corpus.GraphVector]) []cases.Case {
	return []cases.Case{
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "graph/the-shedding-rule-mandatory/terminus-answers-a-read",
				Title:        "a FWD{READ} at its terminus is answered with a FWD{REPLY} to its src carrying a RESULT that holds what the read serves, or a STATUS with the refusal",
				Spec:         "libtracer-graph-model §the-shedding-rule-mandatory",
				Requirements: []string{"libtracer-graph-model§the-shedding-rule-mandatory#8", "libtracer-graph-model§the-shedding-rule-mandatory#9", "reconstructed§tlv-records#6", "reconstructed§tlv-records#7", "reconstructed§tlv-records#8"},
				Run: func(t *cases.T) {
					sc := newScript().remote("peer", peerLink)
					sc.write("", "/v", value("7"))
					f1 := sc.fwd("peer", fwd(opRead, "/v", peerSrc, value("")))
					f2 := sc.fwd("peer", fwd(opRead, "/nope", peerSrc, value("")))
					r := run1(t, sc)
					r.tree(f1, reply(peerSrc, resultOf(value("7"))), "the FWD{READ} of /v")
					r.none(f1, "the FWD{READ} of /v")
					r.tree(f2, reply(peerSrc, status(stNotFound)), "the FWD{READ} of /nope")
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "graph/the-shedding-rule-mandatory/terminus-installs-a-subscription",
				Title:        "a FWD{SUBSCRIBE} at its terminus installs its SUBSCRIBER as an edge of the dst vertex and is answered with an empty RESULT; a later write is delivered along it",
				Spec:         "libtracer-graph-model §the-shedding-rule-mandatory",
				Requirements: []string{"libtracer-graph-model§the-shedding-rule-mandatory#9", "reconstructed§tlv-records#7", "reconstructed§tlv-records#8"},
				Run: func(t *cases.T) {
					sc := newScript().remote("peer", peerLink)
					sc.write("", "/v", value("7"))
					f := sc.fwd("peer", fwd(opSubscribe, "/v", peerSrc, subscriber("/obs")))
					ls := sc.read("", "/v:subscribers[]")
					w := sc.write("", "/v", value("8"))
					r := run1(t, sc)
					r.tree(f, reply(peerSrc, resultOf()), "the FWD{SUBSCRIBE} of /v")
					r.entries(ls, "the :subscribers[] read after it", subscriber("/obs"))
					r.deliveries(w, "a write after it", dl{"/v", "/obs", value("8")})
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "graph/the-shedding-rule-mandatory/terminus-answers-an-await-when-woken",
				Title:        "a FWD{AWAIT} at its terminus is outstanding until the next assign at its vertex, then answered with a FWD{REPLY} carrying a RESULT with the value",
				Spec:         "libtracer-graph-model §the-shedding-rule-mandatory; §assign-propagate-and-the-coalescing-sweep",
				Requirements: []string{"libtracer-graph-model§the-shedding-rule-mandatory#9", "libtracer-graph-model§assign-propagate-and-the-coalescing-sweep#4", "reconstructed§tlv-records#8"},
				Run: func(t *cases.T) {
					sc := newScript().remote("peer", peerLink)
					sc.write("", "/v", value("7"))
					f := sc.fwd("peer", fwd(opAwait, "/v", peerSrc, value("")))
					p := sc.propagate("/v")
					w := sc.write("", "/v", value("8"))
					r := run1(t, sc)
					r.pending(f, "the FWD{AWAIT} of /v")
					r.noWakes(p, "a propagate of /v")
					r.wakeTree(w, f, reply(peerSrc, resultOf(value("8"))), "the write of /v")
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "graph/assign-propagate-and-the-coalescing-sweep/fwd-await-at-a-handler-is-answered",
				Title:        "a FWD{AWAIT} at a handler terminus is answered, once a write wakes it, with a FWD{REPLY} carrying a RESULT with the on_read value, not an error",
				Spec:         "libtracer-graph-model §assign-propagate-and-the-coalescing-sweep; §the-shedding-rule-mandatory",
				Requirements: []string{"libtracer-graph-model§assign-propagate-and-the-coalescing-sweep#8", "reconstructed§tlv-records#8"},
				Run: func(t *cases.T) {
					sc := newScript().remote("peer", peerLink)
					sc.handler("/h", value("r"))
					f := sc.fwd("peer", fwd(opAwait, "/h", peerSrc, value("")))
					w := sc.write("", "/h", value("1"))
					r := run1(t, sc)
					r.pending(f, "the FWD{AWAIT} of the handler /h")
					r.wakeTree(w, f, reply(peerSrc, resultOf(value("r"))), "the write of /h")
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "graph/vertex-lifecycle-write-creates-retirement-revival/fwd-subscribe-edge-evicted-with-its-link",
				Title:        "an edge a FWD{SUBSCRIBE} installed is bound to the link it arrived over: evicting that link clears it and leaves local edges",
				Spec:         "libtracer-graph-model §vertex-lifecycle-write-creates-retirement-revival",
				Requirements: []string{"libtracer-graph-model§vertex-lifecycle-write-creates-retirement-revival#14", "libtracer-graph-model§vertex-lifecycle-write-creates-retirement-revival#16"},
				Run: func(t *cases.T) {
					sc := newScript().remote("peer", peerLink)
					sc.write("", "/v", value("0"))
					f := sc.fwd("peer", fwd(opSubscribe, "/v", peerSrc, subscriber("/remote")))
					sc.subscribe("", "/v", "/local")
					e := sc.evict(peerLink)
					w := sc.write("", "/v", value("1"))
					r := run1(t, sc)
					r.tree(f, reply(peerSrc, resultOf()), "the FWD{SUBSCRIBE}")
					r.evicted(e, 1, "the eviction of the peer's link")
					r.deliveries(w, "a write after the eviction", dl{"/v", "/local", value("1")})
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "graph/vertex-lifecycle-write-creates-retirement-revival/evicting-no-link-evicts-nothing",
				Title:        "evicting the edges of the empty link name evicts nothing: a local edge is bound to no link",
				Spec:         "libtracer-graph-model §vertex-lifecycle-write-creates-retirement-revival",
				Requirements: []string{"libtracer-graph-model§vertex-lifecycle-write-creates-retirement-revival#14"},
				Run: func(t *cases.T) {
					sc := newScript().remote("peer", peerLink)
					sc.write("", "/v", value("0"))
					sc.subscribe("", "/v", "/local")
					sc.subscribe("peer", "/v", "/remote")
					e := sc.evict("")
					w := sc.write("", "/v", value("1"))
					r := run1(t, sc)
					r.evicted(e, 0, "the eviction of the empty link name")
					r.deliveries(w, "a write after it", dl{"/v", "/local", value("1")}, dl{"/v", "/remote", value("1")})
				},
			}
		}),
		k.Must(func() cases.Case {
			v := vecs.Get("terminus-applies-no-reply-and-subscribes-no-field")
			return vectorCase(v, "graph/the-shedding-rule-mandatory/terminus-applies-no-reply-and-subscribes-no-field",
				"reconstructed§graph-choices#11",
				"reconstructed§tlv-records#6",
				"reconstructed§tlv-records#8",
				"reconstructed§tlv-status#2")
		}),
		k.Must(func() cases.Case {
			v := vecs.Get("selector-rides-in-the-last-record")
			return vectorCase(v, "graph/the-shedding-rule-mandatory/selector-rides-in-the-last-record",
				"libtracer-graph-model§the-shedding-rule-mandatory#9",
				"reconstructed§graph-address#3",
				"reconstructed§tlv-records#8",
				"reconstructed§tlv-status#2")
		}),
	}
}
