package tlv

import (
	"fmt"
	"strings"

	"github.com/conform-suite/conform/cases"
	"github.com/conform-suite/conform/corpus"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/reports"
)

// item is the fresh-buffer model of one TLV in an edit input's list: a
// container (its type and its children's wire bytes) or, for a TLV that is
// never edited, its wire bytes whole.
type item struct {
	container bool
	typ       uint8
	kids      [][]byte
	whole     []byte
}

// bytes serializes the model into a fresh buffer: a container's header as
// its originator writes it, then its children's bytes end to end.
func (it item) bytes() []byte {
	if !it.container {
		return it.whole
	}
	var body []byte
	for _, k := range it.kids {
		body = append(body, k...)
	}
	return append(header(it.typ, 0x01, len(body)), body...)
}

// editPlan is one edit input and the fresh-buffer model of its list.
type editPlan struct {
	in    *conformpb.TlvEditInput
	list  []item
	start int
	steps []string
}

// The starting TLVs: structured vectors at rest with minimal headers, which
// edits take apart and put together, and TLVs inserted whole as children.
var (
	editContainers = []string{"nested-depth-1", "nested-depth-2", "nested-depth-3", "nested-depth-4", "nested-siblings", "unknown-types", "child-trailer-kept"}
	editChildren   = []string{"value-one-byte", "path-alpha", "status-empty", "ll-nonminimal", "ll-nonminimal-nested"}
)

// newPlan starts an edit input from vectors, each given to the SUT as a rope
// of up to three segments split at seeded points.
func (s *suite) newPlan(t *cases.T, containers, children []string) *editPlan {
	p := &editPlan{in: &conformpb.TlvEditInput{}}
	add := func(v *corpus.TLVVector, it item) {
		b := v.Input
		r := ropeOf(b)
		if len(b) >= 3 {
			i := 1 + t.Rand().IntN(len(b)-2)
			j := i + 1 + t.Rand().IntN(len(b)-i-1)
			r = ropeOf(b[:i], b[i:j], b[j:])
		}
		p.in.Tlvs = append(p.in.Tlvs, r)
		p.list = append(p.list, it)
		p.steps = append(p.steps, fmt.Sprintf("#%d = %s", len(p.list)-1, strings.TrimPrefix(v.ID, corpus.TLVVersion+"/")))
	}
	for _, name := range containers {
		v := s.vec(name)
		add(v, item{container: true, typ: v.Tree.Type, kids: childBytes(v)})
	}
	for _, name := range children {
		v := s.vec(name)
		add(v, item{whole: v.Input})
	}
	p.start = len(p.list)
	return p
}

func (p *editPlan) concat(a, b int) {
	x, y := p.list[a], p.list[b]
	kids := append(append([][]byte(nil), x.kids...), y.kids...)
	p.list = append(p.list, item{container: true, typ: x.typ, kids: kids})
	p.in.Edits = append(p.in.Edits, &conformpb.TlvEditStep{Edit: &conformpb.TlvEditStep_Concat{Concat: &conformpb.TlvConcat{First: uint32(a), Second: uint32(b)}}})
	p.steps = append(p.steps, fmt.Sprintf("#%d = concat(#%d, #%d)", len(p.list)-1, a, b))
}

func (p *editPlan) split(c, k int) {
	x := p.list[c]
	head := item{container: true, typ: x.typ, kids: append([][]byte(nil), x.kids[:k]...)}
	tail := item{container: true, typ: x.typ, kids: append([][]byte(nil), x.kids[k:]...)}
	p.list = append(p.list, head, tail)
	p.in.Edits = append(p.in.Edits, &conformpb.TlvEditStep{Edit: &conformpb.TlvEditStep_Split{Split: &conformpb.TlvSplit{Container: uint32(c), At: uint32(k)}}})
	p.steps = append(p.steps, fmt.Sprintf("#%d, #%d = split(#%d, %d)", len(p.list)-2, len(p.list)-1, c, k))
}

func (p *editPlan) insert(c, k, child int) {
	x := p.list[c]
	kids := append(append(append([][]byte(nil), x.kids[:k]...), p.list[child].bytes()), x.kids[k:]...)
	p.list = append(p.list, item{container: true, typ: x.typ, kids: kids})
	p.in.Edits = append(p.in.Edits, &conformpb.TlvEditStep{Edit: &conformpb.TlvEditStep_Insert{Insert: &conformpb.TlvInsert{Container: uint32(c), At: uint32(k), Child: uint32(child)}}})
	p.steps = append(p.steps, fmt.Sprintf("#%d = insert(#%d, %d, #%d)", len(p.list)-1, c, k, child))
}

// containers returns the indexes of the list's containers.
func (p *editPlan) containers() []int {
	var out []int
	for i, it := range p.list {
		if it.container {
			out = append(out, i)
		}
	}
	return out
}

// runEdits sends every plan and judges each TLV an edit produced against its
// fresh-buffer serialization.
func runEdits(t *cases.T, what string, plans []*editPlan) {
	var ins []*conformpb.TlvEditInput
	for _, p := range plans {
		ins = append(ins, p.in)
	}
	f := newFailures(t, what)
	for i, out := range edit(t, ins) {
		p := plans[i]
		input := strings.Join(p.steps, "; ")
		if r := out.GetRefusal(); r != nil {
			f.total++
			f.fail(reports.Evidence{Input: input, Expected: "the edits applied",
				Got: fmt.Sprintf("edit %d refused: %s: %s", out.GetRefusedEdit(), statusText(r.GetStatus()), r.GetReason())})
			continue
		}
		if len(out.GetTlvs()) != len(p.list) {
			f.total++
			f.fail(reports.Evidence{Input: input, Expected: fmt.Sprintf("%d TLVs in the list after the edits", len(p.list)),
				Got: fmt.Sprintf("%d TLVs", len(out.GetTlvs()))})
			continue
		}
		for k := p.start; k < len(p.list); k++ {
			f.check(fmt.Sprintf("#%d after %s", k, input), framed{Bytes: hexOf(p.list[k].bytes())}, framed{Bytes: hexOf(out.GetTlvs()[k])}, showFramed)
		}
	}
	f.done()
}

// edits is graph model §Spec-level proof obligation: any sequence of edits on
// a view tree, then serialization, gives the same bytes as the same
// mutations applied to a fresh buffer. The edits are those of §Structured TLV
// as abstraction, memory as rope: concat, split and insert.
func (s *suite) edits() []cases.Case {
	ps := spec(secProof, "libtracer-graph-model §Structured TLV as abstraction, memory as rope")
	vecs := ids(append(append([]string(nil), editContainers...), editChildren...)...)
	return []cases.Case{
		must(cases.Case{
			ID:      "tlv/" + secProof + "/concat-as-a-fresh-buffer",
			Title:   "concat(C1, C2) serializes as a fresh container of C1's type holding C1's children then C2's",
			Spec:    ps,
			Vectors: ids(editContainers...),
			Run: func(t *cases.T) {
				var plans []*editPlan
				for _, a := range editContainers {
					for _, b := range editContainers {
						p := s.newPlan(t, []string{a, b}, nil)
						p.concat(0, 1)
						plans = append(plans, p)
					}
				}
				runEdits(t, "concat, then serialize", plans)
			},
		}),
		must(cases.Case{
			ID:      "tlv/" + secProof + "/split-as-a-fresh-buffer",
			Title:   "split(C, K) serializes as two fresh containers of C's type holding children [0, K) and [K, end)",
			Spec:    ps,
			Vectors: ids(editContainers...),
			Run: func(t *cases.T) {
				var plans []*editPlan
				for _, c := range editContainers {
					for k := range len(s.vec(c).Tree.Children) + 1 {
						p := s.newPlan(t, []string{c}, nil)
						p.split(0, k)
						plans = append(plans, p)
					}
				}
				runEdits(t, "split, then serialize", plans)
			},
		}),
		must(cases.Case{
			ID:      "tlv/" + secProof + "/insert-as-a-fresh-buffer",
			Title:   "insert(C, K, child) serializes as a fresh container holding C[0..K-1], the child's bytes as received, then C[K..]",
			Spec:    ps,
			Vectors: vecs,
			Run: func(t *cases.T) {
				var plans []*editPlan
				for _, c := range editContainers {
					for k := range len(s.vec(c).Tree.Children) + 1 {
						p := s.newPlan(t, []string{c}, editChildren)
						for child := 1; child < p.start; child++ {
							p.insert(0, k, child)
						}
						plans = append(plans, p)
					}
				}
				runEdits(t, "insert, then serialize", plans)
			},
		}),
		must(cases.Case{
			ID:      "tlv/" + secProof + "/edit-sequences-as-a-fresh-buffer",
			Title:   "Seeded sequences of concat, split and insert, each using earlier results, serialize as the same edits applied to a fresh buffer",
			Spec:    ps,
			Vectors: vecs,
			Run: func(t *cases.T) {
				var plans []*editPlan
				for range 24 {
					p := s.newPlan(t, editContainers, editChildren)
					for range 4 + t.Rand().IntN(8) {
						cs := p.containers()
						c := cs[t.Rand().IntN(len(cs))]
						op := t.Rand().IntN(3)
						if len(p.list[c].bytes()) > 8192 {
							op = 1 // keep the lists small: split what has grown
						}
						switch op {
						case 0:
							p.concat(c, cs[t.Rand().IntN(len(cs))])
						case 1:
							p.split(c, t.Rand().IntN(len(p.list[c].kids)+1))
						default:
							p.insert(c, t.Rand().IntN(len(p.list[c].kids)+1), t.Rand().IntN(len(p.list)))
						}
					}
					plans = append(plans, p)
				}
				runEdits(t, "a sequence of edits, then serialize", plans)
			},
		}),
	}
}
