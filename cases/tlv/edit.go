package tlv

import (
	"fmt"
	"strings"

	"github.com/conform-suite/conform/cases"
	"github.com/conform-suite/conform/corpus"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/proto/conform/v1/meaning"
	"github.com/conform-suite/conform/reports"
	"github.com/conform-suite/conform/reports/evidence"
)

// The starting TLVs: structured vectors at rest with minimal headers, which
// edits take apart and put together, and TLVs inserted whole as children.
var (
	editContainers = []string{"nested-depth-1", "nested-depth-2", "nested-depth-3", "nested-depth-4", "nested-siblings", "unknown-types", "child-trailer-kept"}
	editChildren   = []string{"value-one-byte", "path-alpha", "status-empty", "ll-nonminimal", "ll-nonminimal-nested"}
)

// editStart holds the starting TLVs a case's definition fetched, by name.
type editStart map[string]*corpus.TLVVector

func fetchStart(vs *vectors, names ...string) editStart {
	s := editStart{}
	for _, n := range names {
		s[n] = vs.Get(n)
	}
	return s
}

// editPlan is one edit input and the fresh-buffer model of its list: each
// TLV a starting TLV as received, or a container an edit built, whose
// children are received TLVs and earlier results.
type editPlan struct {
	in     *conformpb.TlvEditInput
	inputs [][]byte // the starting TLVs' bytes
	list   []built
	start  int
	steps  []string
}

// newPlan starts an edit input from vectors, each given to the SUT as a rope
// of up to three segments split at seeded points. A container's children are
// modelled one by one, so that edits can take them apart.
func (s editStart) newPlan(t *cases.T, containers, children []string) *editPlan {
	p := &editPlan{in: &conformpb.TlvEditInput{}}
	add := func(v *corpus.TLVVector, it built) {
		b := v.Input
		r := ropeOf(b)
		if len(b) >= 3 {
			i := 1 + t.Rand().IntN(len(b)-2)
			j := i + 1 + t.Rand().IntN(len(b)-i-1)
			r = ropeOf(b[:i], b[i:j], b[j:])
		}
		p.in.Tlvs = append(p.in.Tlvs, r)
		p.inputs = append(p.inputs, b)
		p.list = append(p.list, it)
		p.steps = append(p.steps, fmt.Sprintf("#%d = %s", len(p.list)-1, strings.TrimPrefix(v.ID, corpus.TLVVersion+"/")))
	}
	for _, name := range containers {
		v := s[name]
		it := built{typ: v.Tree.Type, opt: 0x01}
		for _, c := range childBytes(v) {
			it.kids = append(it.kids, asReceived(c))
		}
		add(v, it)
	}
	for _, name := range children {
		v := s[name]
		add(v, asReceived(v.Input))
	}
	p.start = len(p.list)
	return p
}

// asChild is how the TLV at index i of the list goes into a container: a
// starting TLV whole, as received; an edit's result as the container it is.
func (p *editPlan) asChild(i int) built {
	if i < p.start {
		return asReceived(p.inputs[i])
	}
	return p.list[i]
}

func (p *editPlan) concat(a, b int) {
	x, y := p.list[a], p.list[b]
	kids := append(append([]built(nil), x.kids...), y.kids...)
	p.list = append(p.list, built{typ: x.typ, opt: 0x01, kids: kids})
	p.in.Edits = append(p.in.Edits, &conformpb.TlvEditStep{Edit: &conformpb.TlvEditStep_Concat{Concat: &conformpb.TlvConcat{First: uint32(a), Second: uint32(b)}}})
	p.steps = append(p.steps, fmt.Sprintf("#%d = concat(#%d, #%d)", len(p.list)-1, a, b))
}

func (p *editPlan) split(c, k int) {
	x := p.list[c]
	head := built{typ: x.typ, opt: 0x01, kids: append([]built(nil), x.kids[:k]...)}
	tail := built{typ: x.typ, opt: 0x01, kids: append([]built(nil), x.kids[k:]...)}
	p.list = append(p.list, head, tail)
	p.in.Edits = append(p.in.Edits, &conformpb.TlvEditStep{Edit: &conformpb.TlvEditStep_Split{Split: &conformpb.TlvSplit{Container: uint32(c), At: uint32(k)}}})
	p.steps = append(p.steps, fmt.Sprintf("#%d, #%d = split(#%d, %d)", len(p.list)-2, len(p.list)-1, c, k))
}

func (p *editPlan) insert(c, k, child int) {
	x := p.list[c]
	kids := append(append(append([]built(nil), x.kids[:k]...), p.asChild(child)), x.kids[k:]...)
	p.list = append(p.list, built{typ: x.typ, opt: 0x01, kids: kids})
	p.in.Edits = append(p.in.Edits, &conformpb.TlvEditStep{Edit: &conformpb.TlvEditStep_Insert{Insert: &conformpb.TlvInsert{Container: uint32(c), At: uint32(k), Child: uint32(child)}}})
	p.steps = append(p.steps, fmt.Sprintf("#%d = insert(#%d, %d, #%d)", len(p.list)-1, c, k, child))
}

// containers returns the indexes of the list's containers.
func (p *editPlan) containers() []int {
	var out []int
	for i, it := range p.list {
		if it.raw == nil {
			out = append(out, i)
		}
	}
	return out
}

// runEdits sends every plan and judges each TLV an edit produced against the
// same edits on a fresh buffer: children as received, in the order the edits
// give, in a container whose header the SUT writes in either form.
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
			f.record(false, reports.Evidence{Input: input, Expected: "the edits applied",
				Got:  fmt.Sprintf("edit %d refused: %s: %s", out.GetRefusedEdit(), statusText(r.GetStatus()), r.GetReason()),
				Diff: evidence.Format(evidence.DiffAt("refusal", evidence.Absent, meaning.Render(r)))})
			continue
		}
		if len(out.GetTlvs()) != len(p.list) {
			f.record(false, reports.Evidence{Input: input, Expected: fmt.Sprintf("%d TLVs in the list after the edits", len(p.list)),
				Got:  fmt.Sprintf("%d TLVs", len(out.GetTlvs())),
				Diff: evidence.Format(evidence.DiffAt("tlvs (entries)", len(p.list), len(out.GetTlvs())))})
			continue
		}
		for k := p.start; k < len(p.list); k++ {
			got := out.GetTlvs()[k]
			why := p.list[k].match(got)
			f.record(why == "", reports.Evidence{
				Message:  what + ": " + why,
				Input:    fmt.Sprintf("#%d after %s", k, input),
				Expected: "the container's header in either form (LL set or not), then its children as received, for instance " + hexOf(p.list[k].minimal()),
				Got:      hexOf(got),
				Diff:     evidence.Format(evidence.DiffAt(fmt.Sprintf("tlvs[%d] (against the 4-byte-header instance)", k), p.list[k].minimal(), got)),
			})
		}
	}
	f.done()
}

// edits is graph model §Spec-level proof obligation: any sequence of edits on
// a view tree, then serialization, gives the same bytes as the same
// mutations applied to a fresh buffer. The edits are those of §Structured TLV
// as abstraction, memory as rope: concat, split and insert. A container an
// edit builds gets a header its builder writes, in either form.
func edits(k *cases.Kit, vs *vectors) []cases.Case {
	spec := "libtracer-graph-model §spec-level-proof-obligation, §structured-tlv-as-abstraction-memory-as-rope"
	return []cases.Case{
		k.Must(func() cases.Case {
			s := fetchStart(vs, editContainers...)
			return cases.Case{
				ID:    "tlv/spec-level-proof-obligation/concat-as-a-fresh-buffer",
				Title: "concat(C1, C2) serializes as a fresh container of C1's type holding C1's children then C2's",
				Spec:  spec,
				Requirements: []string{
					"libtracer-graph-model§spec-level-proof-obligation#1",
					"libtracer-graph-model§structured-tlv-as-abstraction-memory-as-rope#1",
					"libtracer-graph-model§structured-tlv-as-abstraction-memory-as-rope#2",
				},
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
			}
		}),
		k.Must(func() cases.Case {
			s := fetchStart(vs, editContainers...)
			return cases.Case{
				ID:    "tlv/spec-level-proof-obligation/split-as-a-fresh-buffer",
				Title: "split(C, K) serializes as two fresh containers of C's type holding children [0, K) and [K, end)",
				Spec:  spec,
				Requirements: []string{
					"libtracer-graph-model§spec-level-proof-obligation#1",
					"libtracer-graph-model§structured-tlv-as-abstraction-memory-as-rope#1",
					"libtracer-graph-model§structured-tlv-as-abstraction-memory-as-rope#3",
				},
				Run: func(t *cases.T) {
					var plans []*editPlan
					for _, c := range editContainers {
						for k := range len(s[c].Tree.Children) + 1 {
							p := s.newPlan(t, []string{c}, nil)
							p.split(0, k)
							plans = append(plans, p)
						}
					}
					runEdits(t, "split, then serialize", plans)
				},
			}
		}),
		k.Must(func() cases.Case {
			s := fetchStart(vs, append(append([]string(nil), editContainers...), editChildren...)...)
			return cases.Case{
				ID:    "tlv/spec-level-proof-obligation/insert-as-a-fresh-buffer",
				Title: "insert(C, K, child) serializes as a fresh container holding C[0..K-1], the child's bytes as received, then C[K..]",
				Spec:  spec,
				Requirements: []string{
					"libtracer-graph-model§spec-level-proof-obligation#1",
					"libtracer-graph-model§structured-tlv-as-abstraction-memory-as-rope#1",
					"libtracer-graph-model§structured-tlv-as-abstraction-memory-as-rope#4",
				},
				Run: func(t *cases.T) {
					var plans []*editPlan
					for _, c := range editContainers {
						for k := range len(s[c].Tree.Children) + 1 {
							p := s.newPlan(t, []string{c}, editChildren)
							for child := 1; child < p.start; child++ {
								p.insert(0, k, child)
							}
							plans = append(plans, p)
						}
					}
					runEdits(t, "insert, then serialize", plans)
				},
			}
		}),
		k.Must(func() cases.Case {
			s := fetchStart(vs, append(append([]string(nil), editContainers...), editChildren...)...)
			return cases.Case{
				ID:    "tlv/spec-level-proof-obligation/edit-sequences-as-a-fresh-buffer",
				Title: "Seeded sequences of concat, split and insert, each using earlier results, serialize as the same edits applied to a fresh buffer",
				Spec:  spec,
				Requirements: []string{
					"libtracer-graph-model§spec-level-proof-obligation#1",
					"libtracer-graph-model§structured-tlv-as-abstraction-memory-as-rope#1",
					"libtracer-graph-model§structured-tlv-as-abstraction-memory-as-rope#2",
					"libtracer-graph-model§structured-tlv-as-abstraction-memory-as-rope#3",
					"libtracer-graph-model§structured-tlv-as-abstraction-memory-as-rope#4",
				},
				Run: func(t *cases.T) {
					var plans []*editPlan
					for range 24 {
						p := s.newPlan(t, editContainers, editChildren)
						for range 4 + t.Rand().IntN(8) {
							cs := p.containers()
							c := cs[t.Rand().IntN(len(cs))]
							op := t.Rand().IntN(3)
							if len(p.list[c].minimal()) > 8192 {
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
			}
		}),
	}
}
