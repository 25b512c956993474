package graph

import (
	"fmt"

	"github.com/conform-suite/conform/cases"
)

// branches are the branch write, the composed branch read, the FOLD emission
// and the FWD at its terminus (§Subtree subscriptions…, §Wire mapping, §The
// shedding rule).
func branches(k *cases.Kit) []cases.Case {
	tree := point("a", nil, point("b", value("b1")), point("c", value("c1")))
	return []cases.Case{
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "graph/subtree-subscriptions-branch-writes-and-write-creates/branch-write-decomposes",
				Title:        "a POINT tree written at a vertex lands each value at the corresponding descendant, creating the missing vertices",
				Spec:         "libtracer-graph-model §subtree-subscriptions-branch-writes-and-write-creates",
				Requirements: []string{"libtracer-graph-model§subtree-subscriptions-branch-writes-and-write-creates#15", "libtracer-graph-model§subtree-subscriptions-branch-writes-and-write-creates#6", "reconstructed§tlv-records#5"},
				Run: func(t *cases.T) {
					sc := newScript().local("app")
					sc.register("/a")
					w := sc.write("app", "/a", tree)
					rb := sc.read("", "/a/b")
					rc := sc.read("", "/a/c")
					r := run1(t, sc)
					r.ok(w, "the branch write")
					r.value(rb, value("b1"), "the read of /a/b")
					r.value(rc, value("c1"), "the read of /a/c")
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "graph/subtree-subscriptions-branch-writes-and-write-creates/branch-write-notifies-each-point-once",
				Title:        "a branch write notifies each covered subscription point below its root once, with a slice carrying its value",
				Spec:         "libtracer-graph-model §subtree-subscriptions-branch-writes-and-write-creates",
				Requirements: []string{"libtracer-graph-model§subtree-subscriptions-branch-writes-and-write-creates#7"},
				Run: func(t *cases.T) {
					sc := newScript()
					sc.register("/a/b")
					sc.register("/a/c")
					sc.subscribe("", "/a/b", "/ob")
					sc.subscribe("", "/a/c", "/oc")
					w := sc.write("", "/a", tree)
					r := run1(t, sc)
					for _, leaf := range []struct{ at, target, v string }{{"/a/b", "/ob", "b1"}, {"/a/c", "/oc", "c1"}} {
						got := r.to(w, leaf.at, leaf.target)
						if len(got) != 1 {
							r.failAt(at(w, "deliveries"), fmt.Sprintf("the subscriber of %s was notified %d times", leaf.at, len(got)), "once", fmt.Sprint(dlsOf(r.reply(w))))
							continue
						}
						if !contains(got[0], value(leaf.v)) {
							r.failAt(at(w, "deliveries"), fmt.Sprintf("the notification at %s does not carry its value", leaf.at), render(value(leaf.v)), render(got[0]))
						}
					}
				},
			}
		}),
		k.Info(func() cases.Case {
			return cases.Case{
				ID:           "graph/subtree-subscriptions-branch-writes-and-write-creates/branch-write-ancestor-notification",
				Title:        "what the branch root and its ancestors receive for one branch write: the frame once, or one delivery per touched vertex (the document states both)",
				Spec:         "libtracer-graph-model §subtree-subscriptions-branch-writes-and-write-creates; §the-write-sequence-and-pending-vertices (\"one propagate at the branch root then flushes exactly the touched set\")",
				Requirements: []string{"reconstructed§graph-choices#3", "libtracer-graph-model§the-write-sequence-and-pending-vertices#7"},
				Run: func(t *cases.T) {
					sc := newScript()
					sc.register("/a")
					sc.subscribe("", "/", "/root")
					sc.subscribe("", "/a", "/oa")
					w := sc.write("", "/a", tree)
					r := run1(t, sc)
					for _, at := range []struct{ at, target string }{{"/", "/root"}, {"/a", "/oa"}} {
						var shapes []string
						for _, b := range r.to(w, at.at, at.target) {
							shapes = append(shapes, render(b))
						}
						t.Note("the subscriber of %s received %d deliveries: %v", at.at, len(shapes), shapes)
					}
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "graph/subtree-subscriptions-branch-writes-and-write-creates/branch-admission-all-or-nothing",
				Title:        "branch-write admission is all-or-nothing: a leaf the caller may not write refuses the whole write, and no other leaf lands",
				Spec:         "libtracer-graph-model §subtree-subscriptions-branch-writes-and-write-creates",
				Requirements: []string{"libtracer-graph-model§retirement-notification#4", "libtracer-graph-model§subtree-subscriptions-branch-writes-and-write-creates#8", "reconstructed§graph-acl#1", "reconstructed§graph-statuses#6", "reconstructed§tlv-status#2"},
				Run: func(t *cases.T) {
					sc := newScript().local("app")
					sc.register("/a/b")
					sc.register("/a/lock")
					sc.acl("/a/lock", rRead, nil)
					w := sc.write("app", "/a", point("a", nil, point("b", value("b1")), point("lock", value("l1"))))
					rb := sc.read("", "/a/b")
					rl := sc.read("", "/a/lock")
					r := run1(t, sc)
					r.status(w, stDenied, "the branch write touching /a/lock")
					r.status(rb, stNotFound, "the read of /a/b, never written")
					r.status(rl, stNotFound, "the read of /a/lock, never written")
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "graph/subtree-subscriptions-branch-writes-and-write-creates/composed-branch-read",
				Title:        "a plain read of a branch serves the folded POINT tree of its subtree, each node's stored TLV verbatim; a value-free branch reads as a names-only tree",
				Spec:         "libtracer-graph-model §subtree-subscriptions-branch-writes-and-write-creates",
				Requirements: []string{"libtracer-graph-model§subtree-subscriptions-branch-writes-and-write-creates#14", "libtracer-graph-model§subtree-subscriptions-branch-writes-and-write-creates#17", "libtracer-graph-model§subtree-subscriptions-branch-writes-and-write-creates#19", "reconstructed§tlv-records#5"},
				Run: func(t *cases.T) {
					sc := newScript()
					sc.write("", "/t/x", value("1"))
					sc.write("", "/t/y/z", value("2"))
					rd := sc.read("", "/t")
					sc.register("/n/a")
					sc.register("/n/b")
					rn := sc.read("", "/n")
					r := run1(t, sc)
					r.same(rd, point("t", nil, point("x", value("1")), point("y", nil, point("z", value("2")))), "the read of the branch /t")
					r.same(rn, point("n", nil, point("a", nil), point("b", nil)), "the read of the value-free branch /n")
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "graph/subtree-subscriptions-branch-writes-and-write-creates/composed-read-prunes-read-denied-subtrees",
				Title:        "the composed branch read prunes the subtrees the caller may not READ",
				Spec:         "libtracer-graph-model §subtree-subscriptions-branch-writes-and-write-creates",
				Requirements: []string{"libtracer-graph-model§subtree-subscriptions-branch-writes-and-write-creates#18", "reconstructed§graph-acl#1", "reconstructed§graph-acl#2"},
				Run: func(t *cases.T) {
					sc := newScript().local("app")
					sc.write("", "/t/x", value("1"))
					sc.write("", "/t/secret/k", value("s"))
					sc.acl("/t/secret", 0, nil)
					rd := sc.read("app", "/t")
					r := run1(t, sc)
					r.same(rd, point("t", nil, point("x", value("1"))), "app's read of /t")
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "graph/wire-mapping/fold-emits-one-frame",
				Title:        "propagate with the FOLD emission delivers one branch-write frame for the swept subtree, the root carrying its own NAME, where the default emits one per vertex",
				Spec:         "libtracer-graph-model §wire-mapping",
				Requirements: []string{"libtracer-graph-model§wire-mapping#4", "libtracer-graph-model§wire-mapping#5", "libtracer-graph-model§wire-mapping#7", "reconstructed§tlv-records#5"},
				Run: func(t *cases.T) {
					sc := newScript()
					sc.register("/f/a")
					sc.register("/f/b")
					sc.subscribe("", "/", "/obs")
					sc.assign("/f/a", value("1"))
					sc.assign("/f/b", value("2"))
					p := sc.fold("/f")
					r := run1(t, sc)
					r.ok(p, "the FOLD propagate")
					got := r.to(p, "/", "/obs")
					want := point("f", nil, point("a", value("1")), point("b", value("2")))
					if len(got) != 1 {
						r.failAt(at(p, "deliveries"), fmt.Sprintf("the FOLD propagate made %d deliveries to the root's subscriber", len(got)), "one frame "+render(want), fmt.Sprint(dlsOf(r.reply(p))))
						return
					}
					if render(got[0]) != render(want) {
						r.failAt(at(p, "deliveries"), "the folded frame is not the swept subtree's POINT tree", render(want), render(got[0]))
					}
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "graph/wire-mapping/fold-refusal-consumes-nothing",
				Title:        "the fold refuses a selected vertex whose value is not a single VALUE with tr::schema::type_mismatch before delivering anything, and a default propagate then delivers every selected vertex",
				Spec:         "libtracer-graph-model §wire-mapping",
				Requirements: []string{"libtracer-graph-model§wire-mapping#10", "libtracer-graph-model§wire-mapping#5", "libtracer-graph-model§wire-mapping#8", "reconstructed§tlv-status#2"},
				Run: func(t *cases.T) {
					sc := newScript()
					sc.register("/f/a")
					sc.register("/f/b")
					sc.subscribe("", "/", "/obs")
					sc.assign("/f/a", status(0x0041))
					sc.assign("/f/b", value("2"))
					p := sc.fold("/f")
					p2 := sc.propagate("/f")
					r := run1(t, sc)
					r.status(p, stTypeMismatch, "the FOLD propagate over a STATUS")
					r.none(p, "the refused FOLD propagate")
					r.deliveries(p2, "the default propagate after it", dl{"/", "/obs", status(0x0041)}, dl{"/", "/obs", value("2")})
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "graph/wire-mapping/fold-refuses-a-stream",
				Title:        "the fold refuses a selected STREAM vertex with tr::schema::type_mismatch, delivering nothing",
				Spec:         "libtracer-graph-model §wire-mapping; §stream-drain-semantics",
				Requirements: []string{"libtracer-graph-model§wire-mapping#9", "reconstructed§tlv-status#2"},
				Run: func(t *cases.T) {
					sc := newScript()
					sc.register("/f/s")
					sc.depth("/f/s", 4)
					sc.subscribe("", "/", "/obs")
					sc.assign("/f/s", value("1"))
					p := sc.fold("/f")
					r := run1(t, sc)
					r.status(p, stTypeMismatch, "the FOLD propagate over a STREAM")
					r.none(p, "the refused FOLD propagate")
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "graph/wire-mapping/directed-write-always-lands",
				Title:        "a FWD{WRITE} at its terminus is delivered whatever the vertex's delivery mode: the terminus is the argument of the propagate",
				Spec:         "libtracer-graph-model §wire-mapping; §delivery-mode",
				Requirements: []string{"libtracer-graph-model§wire-mapping#2"},
				Run: func(t *cases.T) {
					sc := newScript().remote("peer", peerLink)
					sc.register("/e")
					sc.mode("/e", explicit)
					sc.subscribe("", "/", "/obs")
					w := sc.write("peer", "/e", value("d"))
					r := run1(t, sc)
					r.ok(w, "the remote write")
					r.deliveries(w, "the remote write to the EXPLICIT /e", dl{"/", "/obs", value("d")})
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "graph/the-shedding-rule-mandatory/terminus-sheds-the-envelope",
				Title:        "at the terminus a FWD{WRITE} is applied with its envelope shed: subscribers and reads see the bare payload TLV, and the reply is a FWD{REPLY} to the request's src carrying a RESULT",
				Spec:         "libtracer-graph-model §the-shedding-rule-mandatory",
				Requirements: []string{"libtracer-graph-model§a-worked-sequence#2", "libtracer-graph-model§consequences#1", "libtracer-graph-model§definitions#5", "libtracer-graph-model§graph-data-vs-in-flight-messages-the-fwd-envelope#1", "libtracer-graph-model§graph-data-vs-in-flight-messages-the-fwd-envelope#2", "libtracer-graph-model§the-shedding-rule-mandatory#6", "libtracer-graph-model§the-shedding-rule-mandatory#7", "libtracer-graph-model§the-shedding-rule-mandatory#8", "libtracer-graph-model§wire-mapping#1", "reconstructed§tlv-records#6", "reconstructed§tlv-records#7", "reconstructed§tlv-records#8", "reconstructed§tlv-type-codes#1"},
				Run: func(t *cases.T) {
					src := "/net/tcp/l0/stm"
					sc := newScript().remote("peer", peerLink)
					sc.register("/wheel/left")
					sc.subscribe("", "/wheel", "/obs")
					f := sc.fwd("peer", fwd(opWrite, "/wheel/left", src, value("42")))
					rd := sc.read("", "/wheel/left")
					r := run1(t, sc)
					r.deliveries(f, "the FWD{WRITE}", dl{"/wheel", "/obs", value("42")})
					r.value(rd, value("42"), "the read of /wheel/left")
					r.reply5(f, src, tResult, nil)
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "graph/the-shedding-rule-mandatory/terminus-reply-carries-not-found",
				Title:        "a FWD{WRITE} whose dst resolves to nothing is answered with a FWD{REPLY} carrying STATUS tr::path::not_found, and creates nothing",
				Spec:         "libtracer-graph-model §the-shedding-rule-mandatory; §subtree-subscriptions-branch-writes-and-write-creates",
				Requirements: []string{"libtracer-graph-model§subtree-subscriptions-branch-writes-and-write-creates#12", "libtracer-graph-model§the-shedding-rule-mandatory#8", "reconstructed§tlv-records#7", "reconstructed§tlv-records#8", "reconstructed§tlv-records#9"},
				Run: func(t *cases.T) {
					src := "/net/tcp/l0/stm"
					sc := newScript().remote("peer", peerLink)
					f := sc.fwd("peer", fwd(opWrite, "/ghost", src, value("42")))
					rd := sc.read("", "/ghost")
					r := run1(t, sc)
					r.reply5(f, src, tStatus, status(stNotFound))
					r.status(rd, stNotFound, "the read of /ghost after it")
				},
			}
		}),
	}
}

// reply5 checks that step i served a FWD{REPLY} whose dst is src and whose
// last child has type last (and, when want is set, those bytes).
func (r *result) reply5(i int, src string, last byte, want []byte) {
	rep := r.reply(i)
	n, err := parse(rep.GetValue())
	if rep.GetStatus() != stOK || err != nil || n.typ != tFwd || len(n.kids) != 4 {
		r.failAt(at(i, "value"), fmt.Sprintf("step %d (the FWD) was not answered with a FWD{OP, dst, src, payload}", i), "a FWD{REPLY}", fmt.Sprintf("%s, %s", statusText(rep.GetStatus()), render(rep.GetValue())))
		return
	}
	if op := n.kids[0]; op.typ != tOp || string(op.payload) != string([]byte{opReply}) {
		r.failAt(at(i, "value")+" (the FWD's OP)", "the reply's OP is not REPLY", render(leaf(tOp, []byte{opReply})), op.render())
	}
	if dst := n.kids[1]; dst.typ != tPath || string(dst.payload) != string(pathPayload(src)) {
		r.failAt(at(i, "value")+" (the FWD's dst)", "the reply's dst is not the request's src", render(pathTLV(src)), dst.render())
	}
	p := n.kids[3]
	if p.typ != last || (want != nil && p.render() != render(want)) {
		exp := fmt.Sprintf("a payload of type %#02x", last)
		if want != nil {
			exp = render(want)
		}
		r.failAt(at(i, "value")+" (the FWD's payload)", "the reply's payload", exp, p.render())
	}
}
