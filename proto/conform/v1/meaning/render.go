package meaning

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Render writes m in conform.v1's terms, for a person reading evidence: as
// its JSON mapping writes it (fields by their JSON names, enum values by
// name, a field at its default left out), compact, except that bytes are
// written as space-separated hex ("00 00 00 05"), the way the cases write
// inputs, and 64-bit integers as plain numbers. A nil message renders as
// "absent". What a SUT sent may be huge: the rendering stops after
// MaxRender bytes and says so.
func Render(m proto.Message) string {
	if m == nil {
		return "absent"
	}
	msg := m.ProtoReflect()
	if !msg.IsValid() {
		return "absent"
	}
	r := &renderer{limit: MaxRender}
	r.message(msg)
	return r.String()
}

// MaxRender bounds a rendering: past it Render stops, so that an answer of
// megabytes (bytes in hex take three times their size) costs a bounded
// string.
const MaxRender = 16 << 10

// Hex writes b as space-separated hex pairs: "00 00 00 05 01".
func Hex(b []byte) string {
	const digits = "0123456789abcdef"
	out := make([]byte, 0, 3*len(b))
	for i, c := range b {
		if i > 0 {
			out = append(out, ' ')
		}
		out = append(out, digits[c>>4], digits[c&15])
	}
	return string(out)
}

// hexWindow is how many bytes around a first difference long bytes show.
const hexWindow = 24

// HexAround writes b as hex, "(empty)" when it is empty, and long bytes as
// the bytes around offset off (the first difference), with their range and
// length: "… 00 01 02 … (bytes 100 to 147 of 4096)".
func HexAround(b []byte, off int) string {
	if len(b) == 0 {
		return "(empty)"
	}
	if len(b) <= 3*hexWindow {
		return Hex(b)
	}
	lo := max(0, min(off, len(b))-hexWindow/2)
	hi := min(len(b), lo+2*hexWindow)
	s := Hex(b[lo:hi])
	if lo > 0 {
		s = "… " + s
	}
	if hi < len(b) {
		s += " …"
	}
	return fmt.Sprintf("%s (bytes %d to %d of %d)", s, lo, hi-1, len(b))
}

// firstDifference returns the offset of the first byte where a and b
// differ, the length of the shorter when one is a prefix of the other, or
// -1 when they are equal.
func firstDifference(a, b []byte) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	if len(a) == len(b) {
		return -1
	}
	return n
}

// renderer writes a rendering up to its limit.
type renderer struct {
	b     strings.Builder
	limit int
	cut   bool
}

// full reports whether the rendering reached its limit, and marks it cut.
func (r *renderer) full() bool {
	if r.b.Len() >= r.limit {
		r.cut = true
	}
	return r.cut
}

func (r *renderer) String() string {
	if r.cut {
		return r.b.String() + fmt.Sprintf("…[rendering stopped at %d bytes]", r.limit)
	}
	return r.b.String()
}

// room returns how many more bytes the rendering may take.
func (r *renderer) room() int { return max(r.limit-r.b.Len(), 0) }

func (r *renderer) message(m protoreflect.Message) {
	b := &r.b
	b.WriteByte('{')
	fields := m.Descriptor().Fields()
	n := 0
	for i := 0; i < fields.Len(); i++ {
		fd := fields.Get(i)
		if !m.Has(fd) {
			continue
		}
		if r.full() {
			return
		}
		if n > 0 {
			b.WriteByte(',')
		}
		n++
		b.WriteString(strconv.Quote(fd.JSONName()))
		b.WriteByte(':')
		v := m.Get(fd)
		switch {
		case fd.IsList():
			b.WriteByte('[')
			for j := 0; j < v.List().Len(); j++ {
				if r.full() {
					return
				}
				if j > 0 {
					b.WriteByte(',')
				}
				r.value(fd, v.List().Get(j))
			}
			b.WriteByte(']')
		case fd.IsMap():
			type entry struct {
				k string
				v protoreflect.Value
			}
			var es []entry
			v.Map().Range(func(k protoreflect.MapKey, mv protoreflect.Value) bool {
				es = append(es, entry{fmt.Sprint(k.Interface()), mv})
				return true
			})
			slices.SortFunc(es, func(a, b entry) int { return strings.Compare(a.k, b.k) })
			b.WriteByte('{')
			for j, e := range es {
				if r.full() {
					return
				}
				if j > 0 {
					b.WriteByte(',')
				}
				b.WriteString(quoteJSON(e.k))
				b.WriteByte(':')
				r.value(fd.MapValue(), e.v)
			}
			b.WriteByte('}')
		default:
			r.value(fd, v)
		}
	}
	if u := m.GetUnknown(); len(u) > 0 && !r.full() {
		if n > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"(unknown fields)":`)
		r.bytes(u)
	}
	b.WriteByte('}')
}

// bytes writes b as a quoted hex string, cut to the rendering's room.
func (r *renderer) bytes(b []byte) {
	if n := r.room()/3 + 1; len(b) > n {
		r.b.WriteString(quoteJSON(Hex(b[:n]) + fmt.Sprintf(" …(%d bytes)", len(b))))
		r.cut = true
		return
	}
	r.b.WriteString(quoteJSON(Hex(b)))
}

func (r *renderer) value(fd protoreflect.FieldDescriptor, v protoreflect.Value) {
	b := &r.b
	switch fd.Kind() {
	case protoreflect.MessageKind, protoreflect.GroupKind:
		r.message(v.Message())
	case protoreflect.EnumKind:
		if ev := fd.Enum().Values().ByNumber(v.Enum()); ev != nil {
			b.WriteString(strconv.Quote(string(ev.Name())))
		} else {
			b.WriteString(strconv.Itoa(int(v.Enum())))
		}
	case protoreflect.BytesKind:
		r.bytes(v.Bytes())
	case protoreflect.StringKind:
		s := v.String()
		if n := r.room() + 1; len(s) > n {
			for n > 0 && !utf8.RuneStart(s[n]) {
				n--
			}
			s = s[:n] + fmt.Sprintf("…(%d bytes)", len(v.String()))
			r.cut = true
		}
		b.WriteString(quoteJSON(s))
	case protoreflect.FloatKind, protoreflect.DoubleKind:
		f := v.Float()
		switch {
		case math.IsNaN(f):
			b.WriteString(`"NaN"`)
		case math.IsInf(f, 1):
			b.WriteString(`"Infinity"`)
		case math.IsInf(f, -1):
			b.WriteString(`"-Infinity"`)
		default:
			bits := 64
			if fd.Kind() == protoreflect.FloatKind {
				bits = 32
			}
			b.WriteString(strconv.FormatFloat(f, 'g', -1, bits))
		}
	default:
		fmt.Fprint(b, v.Interface())
	}
}

// quoteJSON quotes s as JSON does, without escaping HTML characters;
// invalid UTF-8 is written as Go quotes it.
func quoteJSON(s string) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if enc.Encode(s) != nil {
		return strconv.Quote(s)
	}
	return strings.TrimSuffix(b.String(), "\n")
}
