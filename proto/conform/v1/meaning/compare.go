package meaning

import (
	"bytes"
	"fmt"
	"math"
	"sort"
	"strings"
	"unicode/utf8"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Options adjust a comparison to the SUT being judged.
type Options struct {
	// TLVDepth is the TLV nesting depth the SUT declared in its Hello
	// (Bounds.tlv_max_depth). Zero means it declared the reference's bound.
	TLVDepth int
}

// A Context is where a declaration is read: the input the compared answers
// answer, and the messages holding the field on either side.
type Context struct {
	// Input is the op's input the answers answer: the ReadInput of a
	// ReadOutput, the GraphScript of a GraphScriptOutput. Nil when unknown;
	// a condition that needs it then holds.
	Input proto.Message
	opts  Options
	path  []frame
	memo  map[string]any
	// orig maps each copy a comparison rewrites to the message it copies.
	orig map[proto.Message]protoreflect.Message
}

// Original returns the message m, a copy a form is rewriting, was copied
// from: the answer as the SUT or the reference gave it, before any field
// was cleared. It returns m when it is no such copy.
func (c *Context) Original(m protoreflect.Message) protoreflect.Message {
	if !valid(m) {
		return m
	}
	if o, ok := c.orig[m.Interface()]; ok {
		return o
	}
	return m
}

// frame is one message on the way from the compared answers to a field's
// holder: the two sides' messages, the field that led to them, and their
// position in that field's list (-1 for a singular field).
type frame struct {
	want, got protoreflect.Message
	via       protoreflect.FieldDescriptor
	index     int
}

// Want returns the message holding the field in the expected answer (the
// reference's), invalid when that side has none.
func (c *Context) Want() protoreflect.Message { return c.path[len(c.path)-1].want }

// Got returns the message holding the field in the answer judged (the
// SUT's), invalid when that side has none.
func (c *Context) Got() protoreflect.Message { return c.path[len(c.path)-1].got }

// Index returns the holder's position in the list that holds it, or -1.
func (c *Context) Index() int { return c.path[len(c.path)-1].index }

// Outer returns the frame n levels above the holder (Outer(0) is the
// holder's own): the two sides' messages and their position in their list.
func (c *Context) Outer(n int) (want, got protoreflect.Message, index int) {
	if n >= len(c.path) {
		return nil, nil, -1
	}
	f := c.path[len(c.path)-1-n]
	return f.want, f.got, f.index
}

// Within reports whether the holder was reached through the field named
// name at any level: conform.v1.QueueOutput.read, say.
func (c *Context) Within(name protoreflect.FullName) bool {
	for _, f := range c.path {
		if f.via != nil && f.via.FullName() == name {
			return true
		}
	}
	return false
}

// Options returns the comparison's options.
func (c *Context) Options() Options { return c.opts }

// memoize returns the value computed once per comparison under key.
func (c *Context) memoize(key string, f func() any) any {
	if v, ok := c.memo[key]; ok {
		return v
	}
	v := f()
	c.memo[key] = v
	return v
}

func (c *Context) push(f frame) { c.path = append(c.path, f) }
func (c *Context) pop()         { c.path = c.path[:len(c.path)-1] }

func newContext(in proto.Message, opts Options) *Context {
	return &Context{Input: in, opts: opts, memo: map[string]any{}, orig: map[proto.Message]protoreflect.Message{}}
}

// valid reports whether m is a message a side has, rather than a nil or
// invalid one standing for its absence.
func valid(m protoreflect.Message) bool { return m != nil && m.IsValid() }

// Canonical returns copies of want and got, two answers to in, in which
// everything a verdict may not rest on is made equal: recorded fields and
// fields whose condition fails are cleared on both sides, and judged fields
// with a form are rewritten to it. What still differs is what the documents
// fix. A form whose exact value is also judged (Field.Strict) is not
// applied, so that the exact value is compared. This is the comparison the
// fuzz oracle makes.
func Canonical(in, want, got proto.Message, opts Options) (proto.Message, proto.Message) {
	w, g := proto.Clone(want), proto.Clone(got)
	c := newContext(in, opts)
	clearOpen(c, want.ProtoReflect(), got.ProtoReflect(), w.ProtoReflect(), g.ProtoReflect(), nil, -1)
	applyForms(c, w.ProtoReflect(), g.ProtoReflect(), nil, -1, false)
	return w, g
}

// clearOpen walks the original answers (ow, og) and their copies (w, g)
// together, clearing in the copies every recorded field and every field
// whose condition fails where it stands.
func clearOpen(c *Context, ow, og, w, g protoreflect.Message, via protoreflect.FieldDescriptor, idx int) {
	if !valid(ow) && !valid(og) {
		return
	}
	c.push(frame{want: ow, got: og, via: via, index: idx})
	defer c.pop()
	if valid(w) {
		c.orig[w.Interface()] = ow
	}
	if valid(g) {
		c.orig[g.Interface()] = og
	}
	md := descriptorOf(ow, og)
	fields := md.Fields()
	for i := 0; i < fields.Len(); i++ {
		fd := fields.Get(i)
		d := index[fd.FullName()]
		if d != nil && (d.Kind == Recorded || d.When != nil && !d.When.Holds(c)) {
			clearField(w, fd)
			clearField(g, fd)
			continue
		}
		if fd.Kind() != protoreflect.MessageKind && fd.Kind() != protoreflect.GroupKind || fd.IsMap() {
			continue
		}
		if fd.IsList() {
			lw, lg := listOf(ow, fd), listOf(og, fd)
			cw, cg := listOf(w, fd), listOf(g, fd)
			for j := 0; j < max(lenOf(lw), lenOf(lg)); j++ {
				clearOpen(c, elem(lw, j), elem(lg, j), elem(cw, j), elem(cg, j), fd, j)
			}
			continue
		}
		clearOpen(c, sub(ow, fd), sub(og, fd), sub(w, fd), sub(g, fd), fd, -1)
	}
}

// applyForms rewrites every judged field with a form, holders before the
// fields they hold. Without all, a form whose field is also judged exactly
// (Field.Strict) is skipped.
func applyForms(c *Context, w, g protoreflect.Message, via protoreflect.FieldDescriptor, idx int, all bool) {
	if !valid(w) && !valid(g) {
		return
	}
	c.push(frame{want: w, got: g, via: via, index: idx})
	defer c.pop()
	md := descriptorOf(w, g)
	fields := md.Fields()
	for i := 0; i < fields.Len(); i++ {
		fd := fields.Get(i)
		if d := index[fd.FullName()]; d != nil && d.Kind == Judged && d.Form != nil && d.Form.Apply != nil && (all || d.Strict == "") {
			d.Form.Apply(c, w, g)
		}
	}
	for i := 0; i < fields.Len(); i++ {
		fd := fields.Get(i)
		if fd.Kind() != protoreflect.MessageKind || fd.IsMap() {
			continue
		}
		if fd.IsList() {
			lw, lg := listOf(w, fd), listOf(g, fd)
			for j := 0; j < max(lenOf(lw), lenOf(lg)); j++ {
				applyForms(c, elem(lw, j), elem(lg, j), fd, j, all)
			}
			continue
		}
		applyForms(c, sub(w, fd), sub(g, fd), fd, -1, all)
	}
}

func descriptorOf(a, b protoreflect.Message) protoreflect.MessageDescriptor {
	if valid(a) {
		return a.Descriptor()
	}
	return b.Descriptor()
}

func clearField(m protoreflect.Message, fd protoreflect.FieldDescriptor) {
	if valid(m) && m.Has(fd) {
		m.Clear(fd)
	}
}

func listOf(m protoreflect.Message, fd protoreflect.FieldDescriptor) protoreflect.List {
	if !valid(m) || !m.Has(fd) {
		return nil
	}
	return m.Get(fd).List()
}

func lenOf(l protoreflect.List) int {
	if l == nil {
		return 0
	}
	return l.Len()
}

func elem(l protoreflect.List, j int) protoreflect.Message {
	if l == nil || j >= l.Len() {
		return nil
	}
	return l.Get(j).Message()
}

func sub(m protoreflect.Message, fd protoreflect.FieldDescriptor) protoreflect.Message {
	if !valid(m) || !m.Has(fd) {
		return nil
	}
	return m.Get(fd).Message()
}

// A Difference is one place where two answers differ in what the
// declaration judges.
type Difference struct {
	// Path names the field by its conform.v1 JSON names, with list
	// positions: "yields[2].frames[0].bytes". A list whose lengths differ is
	// named alone ("yields").
	Path string
	// Field is the field's full protobuf name.
	Field protoreflect.FullName
	// Level is the level at which the difference may fail a case.
	Level Level
	// Want and Got are the two values in conform.v1's terms: as its JSON
	// mapping writes them (enum values by name, messages as JSON), but bytes
	// as space-separated hex, around the first difference when they are
	// long; "absent" for a message or optional field not set; for a list of
	// another length, its count and the entries past the shorter list.
	Want, Got string
	// Offset is, for a bytes field, the offset of the first byte that
	// differs (the length of the shorter side when one is a prefix of the
	// other); -1 for any other field.
	Offset int
}

func (d Difference) String() string {
	s := fmt.Sprintf("%s: want %s, got %s (%s)", d.Path, d.Want, d.Got, d.Level)
	if d.Offset >= 0 {
		s = fmt.Sprintf("%s: want %s, got %s, first difference at byte %d (%s)", d.Path, d.Want, d.Got, d.Offset, d.Level)
	}
	return s
}

// Differences are the places two answers differ, in field order.
type Differences []Difference

func (ds Differences) String() string {
	lines := make([]string, len(ds))
	for i, d := range ds {
		lines[i] = d.String()
	}
	return strings.Join(lines, "\n")
}

// At returns the differences at level l.
func (ds Differences) At(l Level) Differences {
	var out Differences
	for _, d := range ds {
		if d.Level == l {
			out = append(out, d)
		}
	}
	return out
}

// Under returns the differences in the fields named by JSON paths without
// positions ("end", "yields.frames"), and in the fields below them: the part
// of an answer a case judges.
func (ds Differences) Under(paths ...string) Differences {
	var out Differences
	for _, d := range ds {
		p := ErasePositions(d.Path)
		for _, q := range paths {
			if p == q || strings.HasPrefix(p, q+".") {
				out = append(out, d)
				break
			}
		}
	}
	return out
}

// Without returns the differences except those in the fields named by JSON
// paths without positions, and below them: a case that judges a list's
// entries ("events", its length included) but one of their fields apart
// ("events.frameJson") leaves that field out.
func (ds Differences) Without(paths ...string) Differences {
	var out Differences
	for _, d := range ds {
		if len((Differences{d}).Under(paths...)) == 0 {
			out = append(out, d)
		}
	}
	return out
}

// ErasePositions drops the list positions from a difference's path:
// "yields[2].frames[0].bytes" becomes "yields.frames.bytes". A fuzz
// finding's signature is made of such paths, so that one bug is one finding
// wherever in a list it strikes.
func ErasePositions(path string) string {
	var b strings.Builder
	skip := false
	for _, r := range path {
		switch {
		case r == '[':
			skip = true
		case r == ']':
			skip = false
		case !skip:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Diff returns where got, the answer judged, differs from want, the
// expected answer, both answers to in, in what the declaration judges: each
// difference with the level at which it may fail a case. A field judged
// through a form is compared in its form at its level, and, where it is also
// judged exactly (Field.Strict), exactly at that level.
func Diff(in, want, got proto.Message, opts Options) Differences {
	w, g := proto.Clone(want), proto.Clone(got)
	c := newContext(in, opts)
	clearOpen(c, want.ProtoReflect(), got.ProtoReflect(), w.ProtoReflect(), g.ProtoReflect(), nil, -1)
	var out Differences
	// Exact differences in the fields also judged exactly, before forms.
	diffMessages(w.ProtoReflect(), g.ProtoReflect(), nil, &out, true)
	seen := map[string]int{}
	for i, d := range out {
		seen[d.Path] = i
	}
	applyForms(c, w.ProtoReflect(), g.ProtoReflect(), nil, -1, true)
	var formed Differences
	diffMessages(w.ProtoReflect(), g.ProtoReflect(), nil, &formed, false)
	for _, d := range formed {
		if i, ok := seen[d.Path]; ok {
			// The form differs too: the difference stands at the form's level.
			out[i] = d
			continue
		}
		out = append(out, d)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// Equal reports whether got and want, two answers to in, agree in
// everything the declaration judges, at every level.
func Equal(in, want, got proto.Message, opts Options) bool {
	return len(Diff(in, want, got, opts)) == 0
}

// A fieldPath is where diffMessages stands: a field's JSON name, or a list
// position, below its parent. It is written out only for a difference, so
// that walking a tree thousands of levels deep (a TLV nested to the bound a
// SUT declares) costs time in its depth, not its square.
type fieldPath struct {
	parent *fieldPath
	name   string // the field's JSON name, or "" for a list position
	index  int
}

func (p *fieldPath) field(name string) *fieldPath { return &fieldPath{parent: p, name: name} }
func (p *fieldPath) at(i int) *fieldPath          { return &fieldPath{parent: p, index: i} }

// String writes the path as a Difference names it: "yields[2].frames[0].bytes".
func (p *fieldPath) String() string {
	var nodes []*fieldPath
	for q := p; q != nil; q = q.parent {
		nodes = append(nodes, q)
	}
	var b strings.Builder
	for i := len(nodes) - 1; i >= 0; i-- {
		switch n := nodes[i]; {
		case n.name == "":
			fmt.Fprintf(&b, "[%d]", n.index)
		case b.Len() > 0:
			b.WriteString("." + n.name)
		default:
			b.WriteString(n.name)
		}
	}
	return b.String()
}

// diffMessages appends the differences between a and b below at (nil: the
// answers themselves). With strictOnly, only fields judged exactly beside
// their form are compared (and their level is Strict).
func diffMessages(a, b protoreflect.Message, at *fieldPath, out *Differences, strictOnly bool) {
	if !valid(a) && !valid(b) {
		return
	}
	md := descriptorOf(a, b)
	fields := md.Fields()
	for i := 0; i < fields.Len(); i++ {
		fd := fields.Get(i)
		d := index[fd.FullName()]
		level := MUST
		if d != nil {
			level = d.Level
		}
		compareHere := true
		if strictOnly {
			compareHere = d != nil && d.Strict != ""
			level = ""
			if d != nil {
				level = d.Strict
			}
		}
		p := at.field(fd.JSONName())
		ha, hb := valid(a) && a.Has(fd), valid(b) && b.Has(fd)
		add := func(path *fieldPath, wv, gv string) {
			*out = append(*out, Difference{Path: path.String(), Field: fd.FullName(), Level: level, Want: wv, Got: gv, Offset: -1})
		}
		addValues := func(path *fieldPath, va, vb protoreflect.Value) {
			if fd.Kind() != protoreflect.BytesKind {
				add(path, render(fd, va), render(fd, vb))
				return
			}
			off := firstDifference(va.Bytes(), vb.Bytes())
			*out = append(*out, Difference{Path: path.String(), Field: fd.FullName(), Level: level,
				Want: HexAround(va.Bytes(), off), Got: HexAround(vb.Bytes(), off), Offset: off})
		}
		switch {
		case fd.IsMap():
			if compareHere && (ha || hb) && !proto.Equal(a.Interface(), b.Interface()) {
				add(p, "a map", "another map")
			}
		case fd.IsList():
			la, lb := listOf(a, fd), listOf(b, fd)
			na, nb := lenOf(la), lenOf(lb)
			if compareHere && na != nb {
				add(p, entries(fd, la, nb), entries(fd, lb, na))
			}
			for j := 0; j < min(na, nb); j++ {
				q := p.at(j)
				if fd.Kind() == protoreflect.MessageKind {
					if strictOnly && compareHere {
						if !proto.Equal(la.Get(j).Message().Interface(), lb.Get(j).Message().Interface()) {
							add(q, render(fd, la.Get(j)), render(fd, lb.Get(j)))
						}
						continue
					}
					diffMessages(la.Get(j).Message(), lb.Get(j).Message(), q, out, strictOnly)
				} else if compareHere && !scalarEqual(fd, la.Get(j), lb.Get(j)) {
					addValues(q, la.Get(j), lb.Get(j))
				}
			}
		case fd.Kind() == protoreflect.MessageKind:
			if ha != hb {
				if compareHere {
					add(p, presence(fd, a, ha), presence(fd, b, hb))
				}
				continue
			}
			if ha {
				if strictOnly && compareHere {
					if !proto.Equal(a.Get(fd).Message().Interface(), b.Get(fd).Message().Interface()) {
						add(p, render(fd, a.Get(fd)), render(fd, b.Get(fd)))
					}
					continue
				}
				diffMessages(a.Get(fd).Message(), b.Get(fd).Message(), p, out, strictOnly)
			}
		default:
			if !compareHere {
				continue
			}
			if fd.HasPresence() && ha != hb {
				add(p, presence(fd, a, ha), presence(fd, b, hb))
				continue
			}
			va, vb := fd.Default(), fd.Default()
			if valid(a) {
				va = a.Get(fd)
			}
			if valid(b) {
				vb = b.Get(fd)
			}
			if !scalarEqual(fd, va, vb) {
				addValues(p, va, vb)
			}
		}
	}
}

// maxExtra bounds the entries past the shorter list that a difference in
// a list's length shows.
const maxExtra = 4

// entries renders list l of field fd, whose other side has other entries:
// its count, and the entries the other side lacks.
func entries(fd protoreflect.FieldDescriptor, l protoreflect.List, other int) string {
	n := lenOf(l)
	s := fmt.Sprintf("%d entries", n)
	if n == 1 {
		s = "1 entry"
	}
	if n <= other {
		return s
	}
	var extra []string
	for j := other; j < n && j < other+maxExtra; j++ {
		extra = append(extra, fmt.Sprintf("[%d] %s", j, render(fd, l.Get(j))))
	}
	if n > other+maxExtra {
		extra = append(extra, fmt.Sprintf("… %d more", n-other-maxExtra))
	}
	return s + ": " + strings.Join(extra, ", ")
}

func presence(fd protoreflect.FieldDescriptor, m protoreflect.Message, has bool) string {
	if !has {
		return "absent"
	}
	return render(fd, m.Get(fd))
}

// scalarEqual compares two values of a scalar field as the wire carries
// them: NaN equals NaN whatever its bits (JSON cannot carry them), and an
// absent bytes field equals an empty one.
func scalarEqual(fd protoreflect.FieldDescriptor, a, b protoreflect.Value) bool {
	switch fd.Kind() {
	case protoreflect.BytesKind:
		return bytes.Equal(a.Bytes(), b.Bytes())
	case protoreflect.FloatKind, protoreflect.DoubleKind:
		x, y := a.Float(), b.Float()
		return x == y && math.Signbit(x) == math.Signbit(y) || math.IsNaN(x) && math.IsNaN(y)
	}
	return a.Equal(b)
}

// render writes a value as conform.v1's JSON mapping does, but bytes as hex,
// cut to a length a person reads.
func render(fd protoreflect.FieldDescriptor, v protoreflect.Value) string {
	var s string
	switch fd.Kind() {
	case protoreflect.MessageKind, protoreflect.GroupKind:
		r := &renderer{limit: 480}
		r.message(v.Message())
		s = r.String()
	case protoreflect.EnumKind:
		if ev := fd.Enum().Values().ByNumber(v.Enum()); ev != nil {
			s = string(ev.Name())
		} else {
			s = fmt.Sprint(int32(v.Enum()))
		}
	case protoreflect.BytesKind:
		s = HexAround(v.Bytes(), 0)
	case protoreflect.StringKind:
		s = quoteJSON(v.String())
	default:
		s = fmt.Sprint(v.Interface())
	}
	if len(s) > 240 {
		cut := 240
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + fmt.Sprintf("…[%d bytes dropped]", len(s)-cut)
	}
	return s
}
