// Package evidence builds the evidence of a failed check in the protocol's
// terms: from what a case (or the fuzz oracle) expected and what the SUT
// answered, it names every field that differs — by its conform.v1 JSON
// name when the values are protobuf messages — and shows bytes as hex with
// the offset of their first difference.
//
// A check that compares two values builds its evidence with Compare:
//
//	if e, differ := evidence.Compare("a vector one byte per read", want, got); differ {
//		e.Input = input // what was sent, as the case writes it
//		t.Fail(e)
//	}
//
// The evidence then reads, for two conform.v1 ReadOutput answers:
//
//	expected: {"end":"READ_END_TRUNCATED"}
//	got:      {"yields":[{"frames":[{"length":2,"bytes":"01 02"}]}],"end":"READ_END_CLOSED"}
//	diff:     - yields: (absent)
//	          + yields: [{"frames":[{"length":2,"bytes":"01 02"}]}]
//	          - end: READ_END_TRUNCATED
//	          + end: READ_END_CLOSED
//
// never Go type names, and never identical expected and got with no diff:
// a field set on one side and absent on the other (a proto3 optional
// Data.length a shim omits) is named even where both render alike.
//
// Values may be protobuf messages (compared field by field through
// protoreflect, named by JSON name, enums by value name, bytes as hex,
// rendered whole as meaning.Render writes them),
// []byte, strings, numbers, booleans, and structs, slices, maps and
// pointers of them. A struct field is named by its json tag, or else by
// its Go name with a lower-case first letter; unexported fields are not
// compared. An empty slice or map equals a nil one, and NaN equals NaN, as
// the JSON mapping cannot tell them apart.
//
// Diff returns the differences as values, for callers that classify them
// (the fuzz oracle builds a finding's signature from the paths); Format
// renders them as Compare does.
//
// A check that compares a whole conform.v1 answer (or part of one) with the
// answer it expects does not use Compare, which compares every field: it
// judges through the declaration of meaning (meaning.Diff), so that a field
// the documents leave open is never judged, and builds its evidence with
// Judged.
package evidence

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/conform-suite/conform/proto/conform/v1/meaning"
	"github.com/conform-suite/conform/reports"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Absent is how a side renders when it has no value at a path: an unset
// field, a missing list element or map entry, a nil pointer.
const Absent = "(absent)"

// MaxDifferences bounds the differences Diff returns; the last one then
// says how many more there were (its Path is "…").
const MaxDifferences = 32

// maxLeaf bounds one rendered value in a difference.
const maxLeaf = 512

// Difference is one place where two values differ.
type Difference struct {
	// Path names the place: field names joined by dots — a protobuf
	// field's JSON name (conform.v1's lowerCamelCase), a struct field's
	// json tag or lower-cased Go name — list indices and map keys in
	// brackets, such as "frames[1].data"; "" for the values themselves.
	Path string
	// Want and Got render each side's value there, in protocol terms;
	// Absent where a side has none.
	Want, Got string
	// Offset is, where both sides are bytes, the offset of the first byte
	// that differs (or the length of the shorter side, when one is a
	// prefix of the other); -1 otherwise.
	Offset int
}

// String renders d on one line: "path: expected X, got Y".
func (d Difference) String() string {
	p := d.Path
	if p == "" {
		p = "value"
	}
	s := fmt.Sprintf("%s: expected %s, got %s", p, d.Want, d.Got)
	if d.Offset >= 0 {
		s += fmt.Sprintf(" (first difference at byte %d)", d.Offset)
	}
	return s
}

// Compare returns the evidence of a check that expected want and got got,
// and whether they differ. The evidence's Message is message; Expected and
// Got render the two values in protocol terms (Render); Diff names every
// differing field (Format of Diff). When the values are equal, Compare
// returns the zero Evidence and false.
func Compare(message string, want, got any) (reports.Evidence, bool) {
	ds := Diff(want, got)
	if len(ds) == 0 {
		return reports.Evidence{}, false
	}
	return reports.Evidence{Message: message, Expected: Render(want), Got: Render(got), Diff: Format(ds)}, true
}

// Judged returns the evidence of a check that judged got, a SUT's answer,
// against want, the answer expected, through the declaration of what every
// conform.v1 field means: ds are the differences meaning.Diff found there
// (kept to the fields and the level the check judges). The evidence's
// Message is message; Expected and Got render the two answers in protocol
// terms (Render); Diff names each difference by its JSON path (Format of
// FromMeaning). The caller sets Input.
func Judged(message string, want, got proto.Message, ds meaning.Differences) reports.Evidence {
	return reports.Evidence{Message: message, Expected: Render(want), Got: Render(got), Diff: Format(FromMeaning(ds))}
}

// FromMeaning returns the differences meaning.Diff found as Differences,
// at most MaxDifferences of them.
func FromMeaning(ds meaning.Differences) []Difference {
	var out []Difference
	for i, d := range ds {
		if i == MaxDifferences {
			out = append(out, Difference{Path: "…", Want: fmt.Sprintf("%d more difference(s)", len(ds)-i), Got: "not shown", Offset: -1})
			break
		}
		out = append(out, Difference{Path: d.Path, Want: absent(d.Want), Got: absent(d.Got), Offset: d.Offset})
	}
	return out
}

// absent renders meaning's word for a side with no value as Diff does.
func absent(s string) string {
	if s == "absent" {
		return Absent
	}
	return s
}

// goNotation matches what a user must never read in evidence: a Go type
// name before a literal (wire.readView{), go-cmp's and protocmp's words, Go's
// %+v of a struct ({Frames:[] End:…}), a pointer to one, a Go slice or map
// type, a fmt verb error.
var goNotation = regexp.MustCompile(`\b[a-z]+\.[A-Za-z]+\{|protocmp|cmp\.|Inverse\(|\bstruct ?\{|\[\][a-z0-9]+\{|&\{|\{[A-Z][A-Za-z]*:|map\[[a-z]|%!`)

// Check reports what is wrong with e as evidence a user reads: Go notation
// in any field (a Go type name, go-cmp's diff, a struct printed by %+v),
// or an expected and a got shown with no differing field named. Tests of
// the cases run it over every evidence their failures give.
func Check(e reports.Evidence) error {
	for _, f := range []struct{ name, v string }{{"message", e.Message}, {"input", e.Input}, {"expected", e.Expected}, {"got", e.Got}, {"diff", e.Diff}} {
		if m := goNotation.FindString(f.v); m != "" {
			return fmt.Errorf("its %s holds Go notation %q", f.name, m)
		}
	}
	if e.Expected != "" && e.Got != "" && e.Diff == "" {
		return errors.New("it shows what was expected and what was got and names no field that differs")
	}
	return nil
}

// Equal reports whether Diff finds no difference between want and got.
func Equal(want, got any) bool { return len(Diff(want, got)) == 0 }

// Diff returns where want and got differ, in path order, at most
// MaxDifferences of them. Two values of different types differ as wholes.
func Diff(want, got any) []Difference {
	d := &differ{}
	d.any("", want, got)
	if d.more > 0 {
		d.out = append(d.out, Difference{Path: "…", Want: fmt.Sprintf("%d more difference(s)", d.more), Got: "not shown", Offset: -1})
	}
	return d.out
}

// DiffAt is Diff for two values that stand at path in a larger answer (a
// check that judges one field, "replies[3].value"): every difference's
// path is prefixed with it.
func DiffAt(path string, want, got any) []Difference {
	ds := Diff(want, got)
	for i := range ds {
		switch {
		case ds[i].Path == "…":
		case ds[i].Path == "":
			ds[i].Path = path
		case strings.HasPrefix(ds[i].Path, "["):
			ds[i].Path = path + ds[i].Path
		default:
			ds[i].Path = join(path, ds[i].Path)
		}
	}
	return ds
}

// Named returns e with its Diff naming the field at path as the one that
// differs, expected and got as e shows them: for a check that observes one
// field (of an answer, or of a message it read off the wire) and words what
// it expected. A Diff e already has is kept.
func Named(path string, e reports.Evidence) reports.Evidence {
	if e.Diff == "" {
		e.Diff = Format(DiffAt(path, e.Expected, e.Got))
	}
	return e
}

// Format renders ds as an evidence diff: for each difference a line
// "- path: expected" and a line "+ path: got", and for bytes a third
// saying where they first differ. A step repeated along a path four times
// or more is written once with its count ("children[0]{×4095}").
func Format(ds []Difference) string {
	var b strings.Builder
	for _, d := range ds {
		p := compactPath(d.Path)
		if p == "" {
			p = "value"
		}
		if p == "…" {
			fmt.Fprintf(&b, "  … %s\n", d.Want)
			continue
		}
		fmt.Fprintf(&b, "- %s: %s\n+ %s: %s\n", p, d.Want, p, d.Got)
		if d.Offset >= 0 {
			fmt.Fprintf(&b, "  %s: first difference at byte %d\n", p, d.Offset)
		}
	}
	return b.String()
}

// compactPath writes a run of four or more identical steps of a path once,
// with its count: a difference at the leaf of a TLV nested 4096 deep reads
// "root.children[0]{×4095}.payload", not 60 KB of path.
func compactPath(p string) string {
	segs := strings.Split(p, ".")
	if len(segs) < 4 {
		return p
	}
	var out []string
	for i := 0; i < len(segs); {
		j := i + 1
		for j < len(segs) && segs[j] == segs[i] {
			j++
		}
		if n := j - i; n >= 4 {
			out = append(out, fmt.Sprintf("%s{×%d}", segs[i], n))
		} else {
			out = append(out, segs[i:j]...)
		}
		i = j
	}
	return strings.Join(out, ".")
}

// Render renders v in protocol terms: a protobuf message as its JSON
// mapping with bytes in hex (meaning.Render), bytes as space-separated
// hex (long ones cut around their start, with their length), a string quoted as JSON quotes it, a struct as JSON with the field
// names Diff uses (a zero field tagged omitempty left out), nil as Absent.
func Render(v any) string {
	if v == nil {
		return Absent
	}
	if m, ok := v.(proto.Message); ok {
		return renderMessage(m)
	}
	if b, ok := v.([]byte); ok {
		return hexAround(b, 0)
	}
	return reports.Clip(string(renderValue(reflect.ValueOf(v))), meaning.MaxRender)
}

// Hex renders b as space-separated hex pairs ("00 00 00 05 01"), the way
// the cases write inputs.
func Hex(b []byte) string { return meaning.Hex(b) }

// FirstDifference returns the offset of the first byte where want and got
// differ, the length of the shorter when one is a prefix of the other, or
// -1 when they are equal.
func FirstDifference(want, got []byte) int {
	n := min(len(want), len(got))
	for i := range n {
		if want[i] != got[i] {
			return i
		}
	}
	if len(want) == len(got) {
		return -1
	}
	return n
}

// differ accumulates differences.
type differ struct {
	out  []Difference
	more int
}

func (d *differ) add(path, want, got string, offset int) {
	if len(d.out) >= MaxDifferences {
		d.more++
		return
	}
	d.out = append(d.out, Difference{Path: path, Want: reports.Clip(want, maxLeaf), Got: reports.Clip(got, maxLeaf), Offset: offset})
}

func (d *differ) any(path string, want, got any) {
	wm, wok := want.(proto.Message)
	gm, gok := got.(proto.Message)
	if wok && gok {
		d.message(path, wm.ProtoReflect(), gm.ProtoReflect())
		return
	}
	d.value(path, reflect.ValueOf(want), reflect.ValueOf(got))
}

// message compares two messages field by field.
func (d *differ) message(path string, w, g protoreflect.Message) {
	// A nil message reads as an empty one (protoreflect allows reading an
	// invalid message); presence of a message field is judged by its
	// parent, through Has.
	if w.Descriptor().FullName() != g.Descriptor().FullName() {
		d.add(path, renderMessageOrAbsent(w), renderMessageOrAbsent(g), -1)
		return
	}
	fields := w.Descriptor().Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		p := join(path, fd.JSONName())
		wh, gh := w.Has(fd), g.Has(fd)
		switch {
		case !wh && !gh:
		case !wh:
			d.add(p, Absent, renderField(fd, g.Get(fd)), -1)
		case !gh:
			d.add(p, renderField(fd, w.Get(fd)), Absent, -1)
		default:
			d.field(p, fd, w.Get(fd), g.Get(fd))
		}
	}
	if wu, gu := w.GetUnknown(), g.GetUnknown(); !bytes.Equal(wu, gu) {
		d.bytes(join(path, "(unknown fields)"), wu, gu)
	}
}

// field compares one field's values, both set.
func (d *differ) field(path string, fd protoreflect.FieldDescriptor, w, g protoreflect.Value) {
	switch {
	case fd.IsList():
		wl, gl := w.List(), g.List()
		for i := range max(wl.Len(), gl.Len()) {
			p := fmt.Sprintf("%s[%d]", path, i)
			switch {
			case i >= wl.Len():
				d.add(p, Absent, renderSingular(fd, gl.Get(i)), -1)
			case i >= gl.Len():
				d.add(p, renderSingular(fd, wl.Get(i)), Absent, -1)
			default:
				d.singular(p, fd, wl.Get(i), gl.Get(i))
			}
		}
	case fd.IsMap():
		wm, gm := w.Map(), g.Map()
		var keys []protoreflect.MapKey
		seen := map[any]bool{}
		for _, m := range []protoreflect.Map{wm, gm} {
			m.Range(func(k protoreflect.MapKey, _ protoreflect.Value) bool {
				if !seen[k.Interface()] {
					seen[k.Interface()] = true
					keys = append(keys, k)
				}
				return true
			})
		}
		slices.SortFunc(keys, func(a, b protoreflect.MapKey) int {
			return strings.Compare(fmt.Sprint(a.Interface()), fmt.Sprint(b.Interface()))
		})
		vd := fd.MapValue()
		for _, k := range keys {
			p := fmt.Sprintf("%s[%v]", path, k.Interface())
			wh, gh := wm.Has(k), gm.Has(k)
			switch {
			case !wh:
				d.add(p, Absent, renderSingular(vd, gm.Get(k)), -1)
			case !gh:
				d.add(p, renderSingular(vd, wm.Get(k)), Absent, -1)
			default:
				d.singular(p, vd, wm.Get(k), gm.Get(k))
			}
		}
	default:
		d.singular(path, fd, w, g)
	}
}

// singular compares one value of a field's kind.
func (d *differ) singular(path string, fd protoreflect.FieldDescriptor, w, g protoreflect.Value) {
	switch fd.Kind() {
	case protoreflect.MessageKind, protoreflect.GroupKind:
		d.message(path, w.Message(), g.Message())
	case protoreflect.BytesKind:
		d.bytes(path, w.Bytes(), g.Bytes())
	case protoreflect.FloatKind, protoreflect.DoubleKind:
		a, b := w.Float(), g.Float()
		if a != b && !(math.IsNaN(a) && math.IsNaN(b)) {
			d.add(path, renderSingular(fd, w), renderSingular(fd, g), -1)
		}
	default:
		if !w.Equal(g) {
			d.add(path, renderSingular(fd, w), renderSingular(fd, g), -1)
		}
	}
}

// bytes compares two byte strings, naming the first differing offset.
func (d *differ) bytes(path string, w, g []byte) {
	off := FirstDifference(w, g)
	if off < 0 {
		return
	}
	d.add(path, hexAround(w, off), hexAround(g, off), off)
}

// hexAround renders b as hex, or for a long b the bytes around off with
// their range.
func hexAround(b []byte, off int) string { return meaning.HexAround(b, off) }

// value compares two Go values that are not both messages.
func (d *differ) value(path string, w, g reflect.Value) {
	w, g = deref(w), deref(g)
	switch {
	case !w.IsValid() && !g.IsValid():
		return
	case !w.IsValid() || !g.IsValid():
		if isEmpty(w) && isEmpty(g) {
			return
		}
		d.add(path, renderOrAbsent(w), renderOrAbsent(g), -1)
		return
	case w.Type() != g.Type():
		if wm, ok := asMessage(w); ok {
			if gm, ok := asMessage(g); ok {
				d.message(path, wm.ProtoReflect(), gm.ProtoReflect())
				return
			}
		}
		d.add(path, renderOrAbsent(w), renderOrAbsent(g), -1)
		return
	}
	if wm, ok := asMessage(w); ok {
		gm, _ := asMessage(g)
		d.message(path, wm.ProtoReflect(), gm.ProtoReflect())
		return
	}
	switch w.Kind() {
	case reflect.Struct:
		t := w.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			name, skip := fieldName(f)
			if skip {
				continue
			}
			d.value(join(path, name), w.Field(i), g.Field(i))
		}
	case reflect.Slice, reflect.Array:
		if w.Type().Elem().Kind() == reflect.Uint8 {
			d.bytes(path, byteSlice(w), byteSlice(g))
			return
		}
		for i := range max(w.Len(), g.Len()) {
			p := fmt.Sprintf("%s[%d]", path, i)
			switch {
			case i >= w.Len():
				d.add(p, Absent, renderOrAbsent(g.Index(i)), -1)
			case i >= g.Len():
				d.add(p, renderOrAbsent(w.Index(i)), Absent, -1)
			default:
				d.value(p, w.Index(i), g.Index(i))
			}
		}
	case reflect.Map:
		keys := append(w.MapKeys(), g.MapKeys()...)
		slices.SortFunc(keys, func(a, b reflect.Value) int { return strings.Compare(fmt.Sprint(a), fmt.Sprint(b)) })
		keys = slices.CompactFunc(keys, func(a, b reflect.Value) bool { return fmt.Sprint(a) == fmt.Sprint(b) })
		for _, k := range keys {
			p := fmt.Sprintf("%s[%v]", path, k)
			wv, gv := w.MapIndex(k), g.MapIndex(k)
			switch {
			case !wv.IsValid():
				d.add(p, Absent, renderOrAbsent(gv), -1)
			case !gv.IsValid():
				d.add(p, renderOrAbsent(wv), Absent, -1)
			default:
				d.value(p, wv, gv)
			}
		}
	case reflect.Float32, reflect.Float64:
		a, b := w.Float(), g.Float()
		if a != b && !(math.IsNaN(a) && math.IsNaN(b)) {
			d.add(path, renderOrAbsent(w), renderOrAbsent(g), -1)
		}
	case reflect.Func, reflect.Chan, reflect.UnsafePointer:
		// Not data: never compared.
	default:
		if w.Comparable() && !w.Equal(g) {
			d.add(path, renderOrAbsent(w), renderOrAbsent(g), -1)
		}
	}
}

// deref follows pointers and interfaces; a nil one becomes the invalid
// Value.
func deref(v reflect.Value) reflect.Value {
	for v.IsValid() && (v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface) {
		if v.IsNil() {
			if v.Kind() == reflect.Pointer && v.CanInterface() {
				if _, ok := v.Interface().(proto.Message); ok {
					return v // a nil message is an empty one
				}
			}
			return reflect.Value{}
		}
		if v.Kind() == reflect.Pointer && v.CanInterface() {
			if _, ok := v.Interface().(proto.Message); ok {
				return v
			}
		}
		v = v.Elem()
	}
	return v
}

// asMessage returns v as a message, when it is one.
func asMessage(v reflect.Value) (proto.Message, bool) {
	if !v.IsValid() || !v.CanInterface() {
		return nil, false
	}
	m, ok := v.Interface().(proto.Message)
	return m, ok
}

// isEmpty reports whether v is invalid, or an empty slice or map, which
// equal a missing one.
func isEmpty(v reflect.Value) bool {
	if !v.IsValid() {
		return true
	}
	switch v.Kind() {
	case reflect.Slice, reflect.Map:
		return v.Len() == 0
	}
	return false
}

func byteSlice(v reflect.Value) []byte {
	if v.Kind() == reflect.Slice {
		return v.Bytes()
	}
	b := make([]byte, v.Len())
	reflect.Copy(reflect.ValueOf(b), v)
	return b
}

// fieldName returns the name a struct field goes by in a path.
func fieldName(f reflect.StructField) (name string, skip bool) {
	if tag, ok := f.Tag.Lookup("json"); ok {
		n, _, _ := strings.Cut(tag, ",")
		if n == "-" {
			return "", true
		}
		if n != "" {
			return n, false
		}
	}
	return lowerFirst(f.Name), false
}

// omitEmpty reports whether f's json tag says omitempty: Render leaves the
// field out when it holds its zero value.
func omitEmpty(f reflect.StructField) bool {
	tag, _ := f.Tag.Lookup("json")
	_, opts, _ := strings.Cut(tag, ",")
	for _, o := range strings.Split(opts, ",") {
		if o == "omitempty" {
			return true
		}
	}
	return false
}

// lowerFirst lower-cases a Go name's leading capitals: End → end,
// URLPath → urlPath, ID → id.
func lowerFirst(s string) string {
	r := []rune(s)
	i := 0
	for i < len(r) && unicode.IsUpper(r[i]) {
		i++
	}
	switch {
	case i == 0:
		return s
	case i == len(r) || i == 1:
	default:
		i-- // the last capital starts the next word
	}
	for j := range i {
		r[j] = unicode.ToLower(r[j])
	}
	return string(r)
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// renderMessage renders m in protocol terms: its JSON mapping with bytes
// as hex (meaning.Render).
func renderMessage(m proto.Message) string { return meaning.Render(m) }

func renderMessageOrAbsent(m protoreflect.Message) string {
	if !m.IsValid() {
		return Absent
	}
	return renderMessage(m.Interface())
}

// renderField renders a whole field's value: a list or map as JSON, a
// singular value as renderSingular does.
func renderField(fd protoreflect.FieldDescriptor, v protoreflect.Value) string {
	switch {
	case fd.IsList():
		parts := make([]string, v.List().Len())
		for i := range parts {
			parts[i] = renderSingular(fd, v.List().Get(i))
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case fd.IsMap():
		var parts []string
		v.Map().Range(func(k protoreflect.MapKey, mv protoreflect.Value) bool {
			parts = append(parts, fmt.Sprintf("%v: %s", k.Interface(), renderSingular(fd.MapValue(), mv)))
			return true
		})
		slices.Sort(parts)
		return "{" + strings.Join(parts, ", ") + "}"
	}
	return renderSingular(fd, v)
}

// renderSingular renders one value of fd's kind in protocol terms: enum
// values by name, bytes as hex, strings JSON-quoted, messages as JSON.
func renderSingular(fd protoreflect.FieldDescriptor, v protoreflect.Value) string {
	switch fd.Kind() {
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return renderMessage(v.Message().Interface())
	case protoreflect.EnumKind:
		if ev := fd.Enum().Values().ByNumber(v.Enum()); ev != nil {
			return string(ev.Name())
		}
		return strconv.Itoa(int(v.Enum()))
	case protoreflect.BytesKind:
		return hexAround(v.Bytes(), 0)
	case protoreflect.StringKind:
		return quote(v.String())
	}
	return fmt.Sprint(v.Interface())
}

func renderOrAbsent(v reflect.Value) string {
	v = deref(v)
	if !v.IsValid() {
		return Absent
	}
	return string(renderValue(v))
}

// renderValue renders a Go value as JSON with Diff's field names, bytes as
// hex strings and messages as their canonical JSON.
func renderValue(v reflect.Value) []byte {
	v = deref(v)
	if !v.IsValid() {
		return []byte("null")
	}
	if m, ok := asMessage(v); ok {
		return []byte(renderMessage(m))
	}
	switch v.Kind() {
	case reflect.Struct:
		var b bytes.Buffer
		b.WriteByte('{')
		n := 0
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			name, skip := fieldName(f)
			if skip || omitEmpty(f) && v.Field(i).IsZero() {
				continue
			}
			if n > 0 {
				b.WriteByte(',')
			}
			n++
			b.WriteString(quote(name))
			b.WriteByte(':')
			b.Write(renderValue(v.Field(i)))
		}
		b.WriteByte('}')
		return b.Bytes()
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return []byte(quote(hexAround(byteSlice(v), 0)))
		}
		var b bytes.Buffer
		b.WriteByte('[')
		for i := range v.Len() {
			if i > 0 {
				b.WriteByte(',')
			}
			b.Write(renderValue(v.Index(i)))
		}
		b.WriteByte(']')
		return b.Bytes()
	case reflect.Map:
		keys := v.MapKeys()
		slices.SortFunc(keys, func(a, b reflect.Value) int { return strings.Compare(fmt.Sprint(a), fmt.Sprint(b)) })
		var b bytes.Buffer
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(quote(fmt.Sprint(k)))
			b.WriteByte(':')
			b.Write(renderValue(v.MapIndex(k)))
		}
		b.WriteByte('}')
		return b.Bytes()
	case reflect.String:
		return []byte(quote(v.String()))
	case reflect.Func, reflect.Chan, reflect.UnsafePointer:
		return []byte("null")
	case reflect.Float32, reflect.Float64:
		f := v.Float()
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return []byte(quote(fmt.Sprint(f)))
		}
	}
	if v.CanInterface() {
		if b, err := json.Marshal(v.Interface()); err == nil {
			return b
		}
	}
	return []byte(quote(fmt.Sprint(v)))
}

// quote quotes s as JSON does, without escaping HTML characters.
func quote(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if enc.Encode(s) != nil {
		return strconv.Quote(s)
	}
	return strings.TrimSuffix(b.String(), "\n")
}
