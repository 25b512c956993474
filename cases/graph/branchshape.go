package graph

import (
	"fmt"
	"strings"

	"github.com/conform-suite/conform/cases"
)

// An illFormed is a POINT tree with one node the layout forbids
// (reconstructed§tlv-records#5: NAME, then optionally one VALUE and one TIME,
// then child POINTs), and what is wrong with it.
type illFormed struct {
	what string
	tree []byte
}

// illFormedTrees are branches to write at /a, each with a well-formed leaf b
// that must not land when the tree is refused.
func illFormedTrees() []illFormed {
	b := point("b", value("1"))
	return []illFormed{
		{"a node with two VALUEs", point("a", nil, b, node(tPoint, name("c"), value("1"), value("2")))},
		{"a node without its leading NAME", point("a", nil, b, node(tPoint, value("2")))},
		{"a child that is no POINT", point("a", nil, b, node(tSettings, name("c"), value("2")))},
		{"a child named by something that is not a path segment (\"x/y\")", point("a", nil, b, point("x/y", value("2")))},
		{"a child named \"..\"", point("a", nil, b, point("..", value("2")))},
		{"a child named by a field selector (\"c:schema\")", point("a", nil, b, point("c:schema", value("2")))},
		{"two sibling POINTs of one name", point("a", nil, b, point("c", value("2")), point("c", value("3")))},
		{"a VALUE after the child POINTs", node(tPoint, name("a"), b, value("2"))},
	}
}

// branchShapes are the shape rules of a branch write (§Subtree
// subscriptions…: "admission (shape + ACL) is all-or-nothing").
func branchShapes(k *cases.Kit) []cases.Case {
	// shapeScripts writes each ill-formed tree at /a, under a subscriber of
	// the root, then reads /a/b.
	shapeScripts := func() ([]*script, []illFormed) {
		trees := illFormedTrees()
		var out []*script
		for _, f := range trees {
			sc := newScript()
			sc.register("/a/b")
			sc.subscribe("", "/", "/o")
			sc.write("", "/a", f.tree)
			sc.read("", "/a/b")
			sc.read("", "/a:children[]")
			out = append(out, sc)
		}
		return out, trees
	}
	return []cases.Case{
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "graph/subtree-subscriptions-branch-writes-and-write-creates/branch-shape-admission-all-or-nothing",
				Title:        "a branch write whose POINT tree has one ill-formed node — two VALUEs, no NAME, a child of another type, a name that is no path segment, duplicate siblings — is refused whole: no leaf lands, nothing is created or delivered",
				Spec:         "libtracer-graph-model §subtree-subscriptions-branch-writes-and-write-creates",
				Requirements: []string{"libtracer-graph-model§subtree-subscriptions-branch-writes-and-write-creates#9", "reconstructed§tlv-records#5", "reconstructed§tlv-lists#1"},
				Run: func(t *cases.T) {
					scs, trees := shapeScripts()
					for i, r := range run(t, scs...) {
						r.refused(2, "the branch write with "+trees[i].what)
						r.none(2, "the refused branch write with "+trees[i].what)
						r.status(3, stNotFound, "the read of /a/b after the branch write with "+trees[i].what)
						r.names(4, "the :children[] read of /a after the branch write with "+trees[i].what, []string{"b"})
					}
				},
			}
		}),
		k.Info(func() cases.Case {
			return cases.Case{
				ID:    "graph/subtree-subscriptions-branch-writes-and-write-creates/branch-shape-refusal-statuses",
				Title: "the status an ill-formed branch write is refused with (the document requires a refusal and names no status; the reference answers tr::path::invalid for a name that is no path segment, tr::tlv::malformed otherwise)",
				Spec:  "libtracer-graph-model §subtree-subscriptions-branch-writes-and-write-creates",
				Run: func(t *cases.T) {
					scs, trees := shapeScripts()
					var seen []string
					for i, r := range run(t, scs...) {
						seen = append(seen, fmt.Sprintf("%s: %s", trees[i].what, r.statusOf(2)))
					}
					t.Note("an ill-formed branch write answered:\n%s", strings.Join(seen, "\n"))
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "graph/subtree-subscriptions-branch-writes-and-write-creates/branch-write-create-gated-by-create-right",
				Title:        "a branch write reaching missing vertices creates them only for a caller holding CREATE on the nearest live ancestor; without it the whole write is refused and no leaf lands",
				Spec:         "libtracer-graph-model §subtree-subscriptions-branch-writes-and-write-creates",
				Requirements: []string{"libtracer-graph-model§subtree-subscriptions-branch-writes-and-write-creates#11", "libtracer-graph-model§subtree-subscriptions-branch-writes-and-write-creates#6", "reconstructed§graph-acl#1", "reconstructed§graph-acl#3", "reconstructed§tlv-status#2"},
				Run: func(t *cases.T) {
					tree := point("a", nil, point("b", value("1")), point("new", nil, point("leaf", value("2"))))
					sc := newScript().local("c")
					sc.register("/a/b")
					sc.acl("/a", rRead|rWrite, nil)
					denied := sc.write("c", "/a", tree)
					rb := sc.read("", "/a/b")
					rn := sc.read("", "/a/new")
					sc.acl("/a", rRead|rWrite|rCreate, nil)
					ok := sc.write("c", "/a", tree)
					rl := sc.read("", "/a/new/leaf")
					r := run1(t, sc)
					r.status(denied, stDenied, "c's branch write reaching /a/new without CREATE")
					r.status(rb, stNotFound, "the read of /a/b after it")
					r.status(rn, stNotFound, "the read of /a/new after it")
					r.ok(ok, "c's branch write with CREATE")
					r.value(rl, value("2"), "the read of the created /a/new/leaf")
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "graph/subtree-subscriptions-branch-writes-and-write-creates/branch-lands-at-a-handler",
				Title:        "a branch node landing at a handler vertex is a write there: its seam takes the value, its subscriber is notified with the slice, its await is woken with the on_read value, and it stores nothing",
				Spec:         "libtracer-graph-model §subtree-subscriptions-branch-writes-and-write-creates; §assign-propagate-and-the-coalescing-sweep",
				Requirements: []string{"libtracer-graph-model§assign-propagate-and-the-coalescing-sweep#5", "libtracer-graph-model§assign-propagate-and-the-coalescing-sweep#11", "libtracer-graph-model§subtree-subscriptions-branch-writes-and-write-creates#6", "libtracer-graph-model§subtree-subscriptions-branch-writes-and-write-creates#7"},
				Run: func(t *cases.T) {
					sc := newScript()
					sc.register("/a")
					sc.handler("/a/h", value("r"))
					sc.subscribe("", "/a/h", "/oh")
					aw := sc.await("", "/a/h")
					w := sc.write("", "/a", point("a", nil, point("h", value("x")), point("s", value("y"))))
					rh := sc.read("", "/a/h")
					rs := sc.read("", "/a/s")
					r := run1(t, sc)
					r.ok(w, "the branch write")
					if got := r.to(w, "/a/h", "/oh"); len(got) != 1 || string(got[0]) != string(value("x")) {
						r.failAt(at(w, "deliveries"), "the subscriber of the handler /a/h was not notified once with its slice", render(value("x"))+" once", fmt.Sprint(dlsOf(r.reply(w))))
					}
					r.wake(w, aw, value("r"), "the branch write")
					r.value(rh, value("r"), "the read of the handler /a/h")
					r.value(rs, value("y"), "the read of /a/s")
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "graph/subtree-subscriptions-branch-writes-and-write-creates/smallest-subview-of-a-deeper-value",
				Title:        "a covered subscription point whose only value sits deeper in the branch is notified with the smallest subview covering it: that VALUE, byte-identical to what a write of the leaf alone would bring it",
				Spec:         "libtracer-graph-model §subtree-subscriptions-branch-writes-and-write-creates; §wire-mapping",
				Requirements: []string{"libtracer-graph-model§subtree-subscriptions-branch-writes-and-write-creates#7"},
				Run: func(t *cases.T) {
					sc := newScript()
					sc.register("/a/b")
					sc.subscribe("", "/a/b", "/ob")
					w := sc.write("", "/a", point("a", nil, point("b", nil, point("c", nil, point("d", value("1"))))))
					rd := sc.read("", "/a/b/c/d")
					r := run1(t, sc)
					r.ok(w, "the branch write")
					if got := r.to(w, "/a/b", "/ob"); len(got) != 1 || string(got[0]) != string(value("1")) {
						r.failAt(at(w, "deliveries"), "the subscriber of /a/b, whose only value is /a/b/c/d's, was not notified once with that VALUE", fmt.Sprintf("% x once", value("1")), fmt.Sprint(dlsOf(r.reply(w))))
					}
					r.value(rd, value("1"), "the read of /a/b/c/d")
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "graph/wire-mapping/fold-leaf-sees-the-default-bytes",
				Title:        "under the FOLD emission a subscriber of a covered leaf below the sweep root receives the bytes the default emission gives it, once, while the root's subscriber receives one folded frame",
				Spec:         "libtracer-graph-model §wire-mapping",
				Requirements: []string{"libtracer-graph-model§wire-mapping#4", "libtracer-graph-model§wire-mapping#6"},
				Run: func(t *cases.T) {
					sc := newScript()
					sc.register("/f/a")
					sc.register("/f/b")
					sc.subscribe("", "/f/a", "/oa")
					sc.subscribe("", "/", "/root")
					sc.assign("/f/a", value("1"))
					sc.assign("/f/b", value("2"))
					p := sc.fold("/f")
					r := run1(t, sc)
					r.ok(p, "the FOLD propagate")
					if got := r.to(p, "/f/a", "/oa"); len(got) != 1 || string(got[0]) != string(value("1")) {
						r.failAt(at(p, "deliveries"), "the subscriber of the covered leaf /f/a", fmt.Sprintf("% x once", value("1")), fmt.Sprint(dlsOf(r.reply(p))))
					}
					want := point("f", nil, point("a", value("1")), point("b", value("2")))
					if got := r.to(p, "/", "/root"); len(got) != 1 || render(got[0]) != render(want) {
						r.failAt(at(p, "deliveries"), "the root's subscriber", "one frame "+render(want), fmt.Sprint(dlsOf(r.reply(p))))
					}
				},
			}
		}),
	}
}
