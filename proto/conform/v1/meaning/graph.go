package meaning

import (
	"bytes"
	"encoding/binary"
	"sort"
	"strings"

	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/ref/tlv"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// canonPath writes a path in string form as its canonical string: "/" and
// the non-empty segments. Dot segments are kept: they are not a spelling of
// another vertex.
func canonPath(p string) string {
	var segs []string
	for _, s := range strings.Split(p, "/") {
		if s != "" {
			segs = append(segs, s)
		}
	}
	return "/" + strings.Join(segs, "/")
}

// splitAddress splits an address into its canonical path and its field
// selector ("" when none).
func splitAddress(a string) (string, string) {
	p, sel, _ := strings.Cut(a, ":")
	return canonPath(p), sel
}

// under reports whether vertex is path or below it.
func under(vertex, path string) bool {
	return vertex == path || path == "/" || strings.HasPrefix(vertex, path+"/")
}

// A graphPlan is what the documents leave open in a script's replies.
type graphPlan struct {
	// cut is the first step from which the replies are open (the slot an
	// append took is the SUT's choice once a slot was freed), or -1.
	cut int
	// openAt[i] lists the vertices whose deliveries step i makes are open:
	// a branch write's root and its ancestors.
	openAt map[int]string
	// openStep marks steps all of whose deliveries are open: a direct
	// propagate of a STREAM whose drain is empty.
	openStep map[int]bool
	// rootRetire marks the retirement of the root, whose status is open.
	rootRetire map[int]bool
	// lists marks the read steps that serve a list: "children" (order and
	// container open) or "subscribers" (container open).
	lists map[int]string
	// listed is the path a list read names.
	listed map[int]string
	// paths are every path the script names, canonical.
	paths []string
}

// deeper returns the names a :children[] read of parent may list beyond
// its children: the segments, and the relative paths, of every path the
// script names two or more levels below it (graph model: ":children[]
// returns the subtree members"; whether grandchildren are listed is open,
// docs/findings.md).
func (p graphPlan) deeper(parent string) map[string]bool {
	out := map[string]bool{}
	for _, q := range p.paths {
		if q == parent || !under(q, parent) {
			continue
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(q, parent), "/")
		segs := strings.Split(rel, "/")
		for k := 1; k < len(segs); k++ {
			out[segs[k]] = true
			out[strings.Join(segs[:k+1], "/")] = true
		}
	}
	return out
}

var emptyStatus = []byte{byte(tlv.TypeStatus), 0, 0, 0}

// planGraph reads a script for the points graph model §… leaves open.
func planGraph(s *conformpb.GraphScript) graphPlan {
	p := graphPlan{cut: -1, openAt: map[int]string{}, openStep: map[int]bool{}, rootRetire: map[int]bool{}, lists: map[int]string{}, listed: map[int]string{}}
	seen := map[string]bool{}
	name := func(path string) {
		if path = canonPath(path); !seen[path] {
			seen[path] = true
			p.paths = append(p.paths, path)
		}
	}
	for _, st := range s.GetSteps() {
		m := st.ProtoReflect()
		m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
			op := v.Message()
			for _, n := range []protoreflect.Name{"path", "address"} {
				if f := op.Descriptor().Fields().ByName(n); f != nil && f.Kind() == protoreflect.StringKind {
					a, _, _ := strings.Cut(op.Get(f).String(), ":")
					name(a)
				}
			}
			return true
		})
	}
	freed, reuse := false, false
	streams := map[string]bool{}
	pendingStream := map[string]bool{} // a STREAM written since its last flush
	wrote := func(path string) {
		for st := range streams {
			if st == path {
				pendingStream[st] = true
			}
		}
	}
	for i, st := range s.GetSteps() {
		touchesSlots := false
		switch x := st.GetStep().(type) {
		case *conformpb.GraphStep_Write:
			path, sel := splitAddress(x.Write.GetAddress())
			switch {
			case sel == "subscribers[]":
				reuse = reuse || freed
			case strings.HasPrefix(sel, "subscribers["):
				touchesSlots = true
				if bytes.Equal(x.Write.GetValue(), emptyStatus) {
					freed = true
				}
			case sel == "":
				wrote(path)
				if isBranch(x.Write.GetValue()) {
					p.openAt[i] = path
				}
			}
		case *conformpb.GraphStep_Subscribe:
			reuse = reuse || freed
		case *conformpb.GraphStep_Read:
			path, sel := splitAddress(x.Read.GetAddress())
			switch sel {
			case "children[]":
				p.lists[i], p.listed[i] = "children", path
			case "subscribers[]":
				p.lists[i], p.listed[i] = "subscribers", path
			}
			touchesSlots = strings.HasPrefix(sel, "subscribers")
		case *conformpb.GraphStep_Await:
			_, sel := splitAddress(x.Await.GetAddress())
			touchesSlots = strings.HasPrefix(sel, "subscribers")
		case *conformpb.GraphStep_Assign:
			wrote(canonPath(x.Assign.GetPath()))
		case *conformpb.GraphStep_Propagate:
			path := canonPath(x.Propagate.GetPath())
			if streams[path] && !pendingStream[path] {
				p.openStep[i] = true
			}
			for st := range pendingStream {
				if under(st, path) {
					delete(pendingStream, st)
				}
			}
		case *conformpb.GraphStep_SetHistoryDepth:
			if x.SetHistoryDepth.GetKeep() > 0 {
				streams[canonPath(x.SetHistoryDepth.GetPath())] = true
			}
		case *conformpb.GraphStep_Retire:
			freed = true
			if canonPath(x.Retire.GetPath()) == "/" {
				p.rootRetire[i] = true
			}
		case *conformpb.GraphStep_Evict:
			freed = true
		case *conformpb.GraphStep_Fwd:
			op, sel, payload, ok := fwdOf(x.Fwd.GetFrame())
			switch {
			case !ok:
			case op == tlv.OpSubscribe || op == tlv.OpWrite && sel == "subscribers[]":
				reuse = reuse || freed
			case strings.HasPrefix(sel, "subscribers"):
				touchesSlots = true
				if op == tlv.OpWrite && bytes.Equal(payload, emptyStatus) {
					freed = true
				}
			}
		}
		if reuse && touchesSlots && p.cut < 0 {
			p.cut = i
		}
	}
	return p
}

// isBranch reports whether a written TLV is a POINT tree with child POINTs:
// a branch write.
func isBranch(b []byte) bool {
	n, ok := parseTLV(b)
	if !ok || n.typ != byte(tlv.TypePoint) {
		return false
	}
	for _, k := range n.kids {
		if k.typ == byte(tlv.TypePoint) {
			return true
		}
	}
	return false
}

func graphPlanOf(c *Context) (graphPlan, bool) {
	s, ok := c.Input.(*conformpb.GraphScript)
	if !ok {
		return graphPlan{}, false
	}
	return c.memoize("graph-plan", func() any { return planGraph(s) }).(graphPlan), true
}

// A tnode is a TLV parsed from contiguous bytes.
type tnode struct {
	typ, opt byte
	header   []byte // as received
	payload  []byte // opaque payload
	kids     []*tnode
	trailer  []byte
}

// parseTLV parses b as exactly one TLV, children and trailers included.
func parseTLV(b []byte) (*tnode, bool) {
	n, end, ok := parseAt(b, 0, len(b), 0)
	return n, ok && end == len(b)
}

func parseAt(b []byte, off, limit, depth int) (*tnode, int, bool) {
	if limit-off < 4 || depth > 256 {
		return nil, 0, false
	}
	opt := b[off+1]
	hdr, length := 4, int(binary.LittleEndian.Uint16(b[off+2:]))
	if opt&optLL != 0 {
		if limit-off < 6 {
			return nil, 0, false
		}
		hdr, length = 6, int(binary.LittleEndian.Uint32(b[off+2:]))
	}
	if (opt&optCRC)>>4 == 3 || length < 0 {
		return nil, 0, false
	}
	tr := []int{0, 4, 6, 8}[(opt&optTS)>>2] + []int{0, 4, 8}[(opt&optCRC)>>4]
	end := off + hdr + length + tr
	if end > limit || end < off {
		return nil, 0, false
	}
	n := &tnode{typ: b[off], opt: opt, header: b[off : off+hdr], payload: b[off+hdr : off+hdr+length], trailer: b[off+hdr+length : end]}
	if opt&optPL != 0 {
		for pos := off + hdr; pos < off+hdr+length; {
			k, next, ok := parseAt(b, pos, off+hdr+length, depth+1)
			if !ok {
				return nil, 0, false
			}
			n.kids = append(n.kids, k)
			pos = next
		}
	}
	return n, end, true
}

// bytes writes n back, with its header as received.
func (n *tnode) bytes() []byte {
	out := append([]byte(nil), n.header...)
	if n.opt&optPL != 0 {
		for _, k := range n.kids {
			out = append(out, k.bytes()...)
		}
	} else {
		out = append(out, n.payload...)
	}
	return append(out, n.trailer...)
}

// sortPoints orders every POINT's child POINTs by their bytes: the order
// of a branch's children is not a property of the branch (the cases compare
// branches up to it).
func sortPoints(n *tnode) {
	for _, k := range n.kids {
		sortPoints(k)
	}
	if n.typ != byte(tlv.TypePoint) {
		return
	}
	var idx []int
	var pts []*tnode
	for i, k := range n.kids {
		if k.typ == byte(tlv.TypePoint) {
			idx = append(idx, i)
			pts = append(pts, k)
		}
	}
	sort.SliceStable(pts, func(a, b int) bool { return bytes.Compare(pts[a].bytes(), pts[b].bytes()) < 0 })
	for j, i := range idx {
		n.kids[i] = pts[j]
	}
}

// canonGraphValue rewrites a TLV a graph served: POINT children in a fixed
// order; for a list read, the container's type and header (the
// implementation's choice, the TLV pins) fixed, and for :children[] the
// entries sorted (a list's order is unspecified).
func canonGraphValue(b []byte, list string) []byte {
	n, ok := parseTLV(b)
	if !ok {
		return b
	}
	sortPoints(n)
	if list != "" && n.opt&optPL != 0 {
		if list == "children" {
			sort.SliceStable(n.kids, func(i, j int) bool { return bytes.Compare(n.kids[i].bytes(), n.kids[j].bytes()) < 0 })
		}
		var kids []byte
		for _, k := range n.kids {
			kids = append(kids, k.bytes()...)
		}
		out := []byte{byte(tlv.TypeBatch), optPL}
		if len(kids) > 0xFFFF {
			out[1] |= optLL
			out = binary.LittleEndian.AppendUint32(out, uint32(len(kids)))
		} else {
			out = binary.LittleEndian.AppendUint16(out, uint16(len(kids)))
		}
		return append(out, kids...)
	}
	return n.bytes()
}

// graphValueForm canonicalizes a TLV field of a graph answer.
func graphValueForm(name protoreflect.Name, replyLevel int) *Form {
	return &Form{
		Doc: "as a TLV: a POINT's child POINTs in any order; a list read's container type free (the TLV pins) and :children[] in any order",
		Apply: func(c *Context, w, g protoreflect.Message) {
			list := ""
			if p, ok := graphPlanOf(c); ok && replyLevel >= 0 {
				if _, _, i := c.Outer(replyLevel); i >= 0 {
					list = p.lists[i]
				}
			}
			if list == "children" && valid(w) && valid(g) {
				_, _, i := c.Outer(replyLevel)
				p, _ := graphPlanOf(c)
				dropDeeper(field(w, name), w, g, p.deeper(p.listed[i]))
			}
			sides(w, g, func(m protoreflect.Message) {
				setBytes(m, name, func(b []byte) []byte { return canonGraphValue(b, list) })
			})
		},
	}
}

// dropDeeper removes from g's list TLV the NAME entries that w's does not
// hold and that name a path deeper than a child: whether a :children[]
// read lists them is open.
func dropDeeper(fd protoreflect.FieldDescriptor, w, g protoreflect.Message, deeper map[string]bool) {
	wn, ok1 := parseTLV(w.Get(fd).Bytes())
	gn, ok2 := parseTLV(g.Get(fd).Bytes())
	if !ok1 || !ok2 || wn.opt&optPL == 0 || gn.opt&optPL == 0 {
		return
	}
	have := map[string]bool{}
	for _, k := range wn.kids {
		have[string(k.bytes())] = true
	}
	var kept []*tnode
	for _, k := range gn.kids {
		if !have[string(k.bytes())] && k.typ == byte(tlv.TypeName) && deeper[string(k.payload)] {
			continue
		}
		kept = append(kept, k)
	}
	gn.kids = kept
	var kids []byte
	for _, k := range kept {
		kids = append(kids, k.bytes()...)
	}
	// The container's header is rewritten by canonGraphValue.
	g.Set(fd, protoreflect.ValueOfBytes(append([]byte{gn.typ, gn.opt &^ optLL, 0, 0}, kids...)))
	b := g.Get(fd).Bytes()
	if len(kids) > 0xFFFF {
		b = append([]byte{gn.typ, gn.opt | optLL, 0, 0, 0, 0}, kids...)
		binary.LittleEndian.PutUint32(b[2:], uint32(len(kids)))
	} else {
		binary.LittleEndian.PutUint16(b[2:], uint16(len(kids)))
	}
	g.Set(fd, protoreflect.ValueOfBytes(b))
}

// repliesForm: the replies up to the first step from which the script's
// answers are open.
var repliesForm = &Form{
	Doc: "one per step; from the first step that names or lists subscriber slots after an append that followed a freed slot, the replies are not compared (the slot an append takes is the SUT's choice: graph model §:subscribers[])",
	Apply: func(c *Context, w, g protoreflect.Message) {
		p, ok := graphPlanOf(c)
		if !ok || p.cut < 0 {
			return
		}
		sides(w, g, func(m protoreflect.Message) {
			if has(m, "replies") {
				l := m.Mutable(field(m, "replies")).List()
				if l.Len() > p.cut {
					l.Truncate(p.cut)
				}
			}
		})
	},
}

var deliveriesForm = &Form{
	Doc: "as a multiset across edges, in order on each edge (vertex, target); a branch write's deliveries at its root and ancestors, and a propagate of a STREAM whose drain is empty, are open (graph INFO cases)",
	Apply: func(c *Context, w, g protoreflect.Message) {
		p, _ := graphPlanOf(c)
		i := c.Index()
		sides(w, g, func(m protoreflect.Message) {
			r, ok := m.Interface().(*conformpb.GraphReply)
			if !ok {
				return
			}
			var kept []*conformpb.GraphDelivery
			for _, d := range r.Deliveries {
				if p.openStep[i] {
					continue
				}
				if root, ok := p.openAt[i]; ok && under(root, canonPath(d.GetVertex())) {
					continue
				}
				kept = append(kept, d)
			}
			sort.SliceStable(kept, func(a, b int) bool {
				ka := canonPath(kept[a].GetVertex()) + "\x00" + canonPath(kept[a].GetTarget())
				kb := canonPath(kept[b].GetVertex()) + "\x00" + canonPath(kept[b].GetTarget())
				return ka < kb
			})
			r.Deliveries = kept
		})
	},
	Vary: func(c *Context, m protoreflect.Message, r Rand) {
		rep, ok := m.Interface().(*conformpb.GraphReply)
		if !ok || len(rep.Deliveries) < 2 {
			return
		}
		// Another order across edges, each edge's own order kept.
		ds := rep.Deliveries
		sort.SliceStable(ds, func(a, b int) bool {
			ka := canonPath(ds[a].GetVertex()) + "\x00" + canonPath(ds[a].GetTarget())
			kb := canonPath(ds[b].GetVertex()) + "\x00" + canonPath(ds[b].GetTarget())
			return ka > kb
		})
	},
}

var wakesForm = &Form{
	Doc: "as a set of awaits completed, by step (their order is the SUT's)",
	Apply: func(c *Context, w, g protoreflect.Message) {
		sides(w, g, func(m protoreflect.Message) {
			r, ok := m.Interface().(*conformpb.GraphReply)
			if !ok {
				return
			}
			sort.SliceStable(r.Wakes, func(a, b int) bool { return r.Wakes[a].GetStep() < r.Wakes[b].GetStep() })
		})
	},
}

var pathForm = func(name protoreflect.Name) *Form {
	return &Form{
		Doc: "as a path: its canonical string",
		Apply: func(c *Context, w, g protoreflect.Message) {
			sides(w, g, func(m protoreflect.Message) { setString(m, name, canonPath) })
		},
		Vary: func(c *Context, m protoreflect.Message, r Rand) {
			setString(m, name, func(s string) string {
				if s == "/" {
					return "//"
				}
				return s + "/"
			})
		},
	}
}

// rootRetireForm: retiring the root cannot succeed; which status it answers
// is open (graph/…/what-retiring-the-root-answers is INFO).
var statusGraphForm = &Form{
	Doc: "exactly, except that retiring the root answers some refusal whose status is open",
	Apply: func(c *Context, w, g protoreflect.Message) {
		p, ok := graphPlanOf(c)
		if !ok || !p.rootRetire[c.Index()] || !c.Within("conform.v1.GraphScriptOutput.replies") {
			return
		}
		if valid(w) && valid(g) && get(w, "status").Uint() != 0 && get(g, "status").Uint() != 0 {
			w.Set(field(w, "status"), protoreflect.ValueOfUint32(1))
			g.Set(field(g, "status"), protoreflect.ValueOfUint32(1))
		}
	},
}

// fwdOf reads a FWD frame at rest: its op, the field selector of its dst's
// last record, and its payload TLV's bytes.
func fwdOf(b []byte) (tlv.Op, string, []byte, bool) {
	n, err := tlv.Decode(tlv.NewRope(b))
	if err != nil {
		return 0, "", nil, false
	}
	f, err := tlv.DecodeFwd(n)
	if err != nil {
		return 0, "", nil, false
	}
	segs, err := tlv.PathSegments(f.Dst)
	if err != nil {
		return 0, "", nil, false
	}
	sel := ""
	if len(segs) > 0 {
		_, sel, _ = strings.Cut(segs[len(segs)-1], ":")
	}
	var payload []byte
	if f.Payload != nil {
		payload = f.Payload.Bytes()
	}
	return f.Op, sel, payload, true
}
