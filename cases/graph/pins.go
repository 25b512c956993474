package graph

import (
	"github.com/conform-suite/conform/cases"
	"github.com/conform-suite/conform/corpus"
)

// pins are the rules that rest on a choice this project made where the
// document is silent (the requirements index's reconstructed§graph-… and
// §tlv-lists entries), each judged by a fixed vector of the corpus at the
// level its pin gives.
func pins(k *cases.Kit, vecs *cases.Vectors[*corpus.GraphVector]) []cases.Case {
	return []cases.Case{
		k.Must(func() cases.Case {
			v := vecs.Get("identity-reads-the-path")
			return vectorCase(v, "graph/core-writable-fields/identity-reads-the-path",
				"libtracer-graph-model§core-writable-fields#8",
				"reconstructed§graph-choices#4")
		}),
		k.Must(func() cases.Case {
			v := vecs.Get("read-only-fields-refuse-writes")
			return vectorCase(v, "graph/core-writable-fields/read-only-fields-refuse-writes",
				"libtracer-graph-model§core-writable-fields#10",
				"reconstructed§graph-statuses#4",
				"reconstructed§graph-statuses#6",
				"reconstructed§tlv-lists#1",
				"reconstructed§tlv-records#3")
		}),
		k.Must(func() cases.Case {
			v := vecs.Get("malformed-addresses-are-path-invalid")
			return vectorCase(v, "graph/core-writable-fields/malformed-addresses-are-path-invalid",
				"reconstructed§graph-address#2",
				"reconstructed§tlv-path#3",
				"reconstructed§tlv-status#2")
		}),
		k.Must(func() cases.Case {
			v := vecs.Get("list-selectors-need-their-brackets")
			return vectorCase(v, "graph/core-writable-fields/list-selectors-need-their-brackets",
				"reconstructed§graph-address#4",
				"reconstructed§graph-address#5",
				"reconstructed§tlv-lists#2")
		}),
		k.Must(func() cases.Case {
			v := vecs.Get("cleared-slot-reads-the-empty-status")
			return vectorCase(v, "graph/the-payload-discriminating-subscribers-write/cleared-slot-reads-the-empty-status",
				"libtracer-graph-model§the-payload-discriminating-subscribers-write#1",
				"reconstructed§tlv-lists#2",
				"reconstructed§tlv-lists#3",
				"reconstructed§tlv-lists#4")
		}),
		k.Must(func() cases.Case {
			v := vecs.Get("remote-branch-write-creates-nothing")
			return vectorCase(v, "graph/subtree-subscriptions-branch-writes-and-write-creates/remote-branch-write-creates-nothing",
				"libtracer-graph-model§subtree-subscriptions-branch-writes-and-write-creates#12",
				"reconstructed§graph-choices#2",
				"reconstructed§tlv-lists#1")
		}),
		k.Must(func() cases.Case {
			v := vecs.Get("assign-and-propagate-of-a-missing-path")
			return vectorCase(v, "graph/assign-propagate-and-the-coalescing-sweep/assign-and-propagate-of-a-missing-path",
				"reconstructed§graph-choices#7",
				"reconstructed§tlv-lists#1")
		}),
		k.Must(func() cases.Case {
			v := vecs.Get("await-on-a-retired-vertex")
			return vectorCase(v, "graph/vertex-lifecycle-write-creates-retirement-revival/await-on-a-retired-vertex",
				"reconstructed§graph-choices#9")
		}),
	}
}
