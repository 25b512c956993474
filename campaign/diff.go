package campaign

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/conform-suite/conform/proto/conform/v1/meaning"
	"github.com/conform-suite/conform/reports"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Answers are compared field by field, and what differs is named the way a
// binding author reads conform.v1: by the fields' JSON names
// ("yields[0].frames[1].payload"). A field's path with its list positions
// erased ("yields[].frames[].payload") says what differed and not where;
// the set of those is what a finding's signature is made of.

// Limits on what a comparison collects. maxPaths bounds the distinct erased
// paths, as before; maxEvidenceLines the concrete differences a finding
// shows; maxValueBytes a value shown in one of them.
const (
	maxPaths         = 32
	maxEvidenceLines = 24
	maxValueBytes    = 256
	// maxEvidenceInput bounds the rendering of the input in evidence.
	maxEvidenceInput = 4 << 10
)

// A difference is one field where two answers differ: its value, its
// presence, or (for a list) its length.
type difference struct {
	path     string // with positions: yields[0].frames[1].payload
	what     int    // diffValue, diffPresence, diffLen
	ref, sut protoreflect.Message
	fd       protoreflect.FieldDescriptor
	index    int // the list position of a differing element, or -1
}

const (
	diffValue = iota
	diffPresence
	diffLen
)

// differ walks two answers and collects where they differ.
type differ struct {
	erased map[string]bool
	diffs  []difference
}

// diffPaths compares two answers structurally and returns the sorted set of
// field paths, in JSON names, where they differ, list positions written []
// so that the paths name what differed and not where:
// "yields[].frames[].payload". A list of another length adds ".len", a
// message or optional field set on one side only ".presence". NaN equals NaN
// and an absent bytes field equals an empty one, as they do on the wire.
func diffPaths(a, b protoreflect.Message) []string {
	d := walk(a, b)
	out := make([]string, 0, len(d.erased))
	for p := range d.erased {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// walk compares ref and sut and returns what differs.
func walk(ref, sut protoreflect.Message) *differ {
	d := &differ{erased: map[string]bool{}}
	d.msg(ref, sut, "", "")
	return d
}

func (d *differ) add(erased string, df difference) {
	d.erased[erased] = true
	if len(d.diffs) < maxEvidenceLines {
		d.diffs = append(d.diffs, df)
	}
}

func (d *differ) msg(a, b protoreflect.Message, prefix, eprefix string) {
	if len(d.erased) > maxPaths {
		return
	}
	fields := a.Descriptor().Fields()
	for i := 0; i < fields.Len(); i++ {
		fd := fields.Get(i)
		name := fd.JSONName()
		p, ep := prefix+name, eprefix+name
		ha, hb := a.Has(fd), b.Has(fd)
		switch {
		case fd.IsList():
			la, lb := a.Get(fd).List(), b.Get(fd).List()
			if la.Len() != lb.Len() {
				d.add(ep+".len", difference{path: p, what: diffLen, ref: a, sut: b, fd: fd, index: -1})
			}
			for j := 0; j < min(la.Len(), lb.Len()); j++ {
				pj := p + "[" + strconv.Itoa(j) + "]"
				if fd.Kind() == protoreflect.MessageKind {
					d.msg(la.Get(j).Message(), lb.Get(j).Message(), pj+".", ep+"[].")
				} else if !scalarEqual(fd, la.Get(j), lb.Get(j)) {
					d.add(ep+"[]", difference{path: pj, what: diffValue, ref: a, sut: b, fd: fd, index: j})
				}
			}
		case fd.IsMap():
			if !mapEqual(a.Get(fd).Map(), b.Get(fd).Map()) {
				d.add(ep, difference{path: p, what: diffValue, ref: a, sut: b, fd: fd, index: -1})
			}
		case fd.Kind() == protoreflect.MessageKind:
			if ha != hb {
				d.add(ep+".presence", difference{path: p, what: diffPresence, ref: a, sut: b, fd: fd, index: -1})
				continue
			}
			if ha {
				d.msg(a.Get(fd).Message(), b.Get(fd).Message(), p+".", ep+".")
			}
		default:
			if fd.HasPresence() && ha != hb {
				d.add(ep+".presence", difference{path: p, what: diffPresence, ref: a, sut: b, fd: fd, index: -1})
				continue
			}
			if !scalarEqual(fd, a.Get(fd), b.Get(fd)) {
				d.add(ep, difference{path: p, what: diffValue, ref: a, sut: b, fd: fd, index: -1})
			}
		}
	}
}

func mapEqual(a, b protoreflect.Map) bool {
	if a.Len() != b.Len() {
		return false
	}
	equal := true
	a.Range(func(k protoreflect.MapKey, v protoreflect.Value) bool {
		w := b.Get(k)
		if !w.IsValid() {
			equal = false
		} else if m, ok := v.Interface().(protoreflect.Message); ok {
			equal = proto.Equal(m.Interface(), w.Message().Interface())
		} else {
			equal = v.Equal(w)
		}
		return equal
	})
	return equal
}

func scalarEqual(fd protoreflect.FieldDescriptor, a, b protoreflect.Value) bool {
	switch fd.Kind() {
	case protoreflect.BytesKind:
		return bytes.Equal(a.Bytes(), b.Bytes())
	case protoreflect.FloatKind, protoreflect.DoubleKind:
		x, y := a.Float(), b.Float()
		return x == y || math.IsNaN(x) && math.IsNaN(y)
	}
	return a.Equal(b)
}

// line renders one difference as a person reads it:
//
//	end: reference "END_CLOSED", SUT "END_TRUNCATED"
//	yields: 1 entry from the reference, 2 from the SUT
//	yields[0].frames[0].payload: reference "Bw==", SUT absent
func (df difference) line() string {
	if df.what == diffLen {
		na, nb := df.ref.Get(df.fd).List().Len(), df.sut.Get(df.fd).List().Len()
		return fmt.Sprintf("%s: %s from the reference, %d from the SUT", df.path, plural(na, "entry", "entries"), nb)
	}
	return fmt.Sprintf("%s: reference %s, SUT %s", df.path, fieldJSON(df.ref, df.fd, df.index), fieldJSON(df.sut, df.fd, df.index))
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// fieldJSON renders field fd of m (its element index, when index ≥ 0) as
// protojson renders it — enums by name, 64-bit integers quoted, bytes in
// base64 — or "absent" when it is not set; long values are cut.
func fieldJSON(m protoreflect.Message, fd protoreflect.FieldDescriptor, index int) string {
	if index < 0 && fd.HasPresence() && !m.Has(fd) {
		return "absent"
	}
	one := m.New()
	v := m.Get(fd)
	if index >= 0 {
		one.Mutable(fd).List().Append(v.List().Get(index))
	} else if m.Has(fd) {
		one.Set(fd, v)
	}
	// Unpopulated fields only when the value itself is one (a zero scalar),
	// so that a message value shows what is set in it and no more.
	raw, ok := jsonField(one, fd, false)
	if !ok {
		raw, _ = jsonField(one, fd, true)
	}
	if index >= 0 {
		var elems []json.RawMessage
		if json.Unmarshal(raw, &elems) == nil && len(elems) == 1 {
			raw = elems[0]
		}
	}
	return reports.Clip(string(compact(raw)), maxValueBytes)
}

// jsonField returns field fd of m as protojson renders m.
func jsonField(m protoreflect.Message, fd protoreflect.FieldDescriptor, unpopulated bool) (json.RawMessage, bool) {
	b, err := protojson.MarshalOptions{EmitUnpopulated: unpopulated}.Marshal(m.Interface())
	if err != nil {
		q, _ := json.Marshal("(not renderable: " + err.Error() + ")")
		return q, true
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(b, &obj) != nil {
		return b, true
	}
	raw, ok := obj[fd.JSONName()]
	return raw, ok
}

// An oracle judges the answers of one target: it compares them field by
// field after canonicalPair (for answers a SUT gave), under the options the
// SUT's Hello sets.
type oracle struct {
	// asBuilt is set for a target whose answers conform builds itself
	// (Target.asBuilt): they are compared as built.
	asBuilt bool
	opts    meaning.Options
}

// oracle returns the oracle of target t against the engine's SUT: the TLV
// nesting bound its Hello declares is the bound its decoder is judged by.
func (e *Engine) oracle(t *Target) oracle {
	return oracle{asBuilt: t.asBuilt(), opts: meaning.Options{TLVDepth: int(e.Client.Hello().GetBounds().GetTlvMaxDepth())}}
}

// canonical returns the two answers to in as they are compared.
func (o oracle) canonical(in, got, want proto.Message) (proto.Message, proto.Message) {
	if o.asBuilt {
		return got, want
	}
	return canonicalPair(in, got, want, o.opts)
}

// compare returns the paths where got and want, two answers to the input
// in, differ in what the spec fixes: after canonicalPair.
func (o oracle) compare(in, got, want proto.Message) []string {
	got, want = o.canonical(in, got, want)
	return diffPaths(want.ProtoReflect(), got.ProtoReflect())
}

// evidence is what a finding shows a person: the input, in conform.v1's
// JSON, and each field where the SUT's answer differs from the reference's
// after canonicalPair, by its JSON path with both values and the level at
// which the declaration judges it (MUST, SHOULD). Nothing in it is Go: no
// type names, no diff notation.
func (o oracle) evidence(inputs []proto.Message, entry, sut, ref proto.Message) string {
	var b strings.Builder
	for i, in := range inputs {
		js, err := protojson.Marshal(in)
		if err != nil {
			continue
		}
		label := "input"
		if len(inputs) > 1 {
			label = fmt.Sprintf("input %d", i)
		}
		fmt.Fprintf(&b, "%s: %s\n", label, reports.Clip(string(compact(js)), maxEvidenceInput))
	}
	if sut == nil || ref == nil {
		return b.String()
	}
	got, want := o.canonical(entry, sut, ref)
	d := walk(want.ProtoReflect(), got.ProtoReflect())
	levels := o.levels(entry, sut, ref)
	for _, df := range d.diffs {
		b.WriteString(df.line())
		if l := levels(df); l != "" {
			fmt.Fprintf(&b, " (%s)", l)
		}
		b.WriteByte('\n')
	}
	if len(d.diffs) == maxEvidenceLines {
		fmt.Fprintf(&b, "(the first %d differences; both answers are in the finding)\n", maxEvidenceLines)
	}
	return b.String()
}

// levels returns, for a difference between two answers to in, the level
// at which the declaration judges it: by meaning.Diff, which knows a field
// judged exactly beside its form (a TLV header's minimal length: SHOULD) from
// its form (the length: MUST), else by the field's own declaration. An
// answer conform built itself is not the SUT's answer the declaration
// speaks of: its differences carry no level.
func (o oracle) levels(in, sut, ref proto.Message) func(difference) meaning.Level {
	if o.asBuilt {
		return func(difference) meaning.Level { return "" }
	}
	byPath := map[string]meaning.Level{}
	for _, d := range meaning.Diff(in, ref, sut, o.opts) {
		byPath[d.Path] = d.Level
	}
	return func(df difference) meaning.Level {
		if l, ok := byPath[df.path]; ok {
			return l
		}
		if d, ok := meaning.Of(df.fd.FullName()); ok && d.Kind == meaning.Judged {
			return d.Level
		}
		return meaning.MUST
	}
}

// sameBytes is the fast path of a comparison: two answers that encode to
// the same bytes are equal.
func sameBytes(a, b proto.Message) bool {
	o := proto.MarshalOptions{Deterministic: true}
	x, err1 := o.Marshal(a)
	y, err2 := o.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}
