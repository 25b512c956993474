package meaning

import (
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Vary rewrites answer, an answer to in (an op's input entry, or nil when
// unknown), in place into another answer a conforming implementation could
// give: every field the declaration leaves open where it stands — recorded
// fields, fields whose condition fails, and judged fields within what
// their form allows (JSON re-indented, an encoding's fields reordered, a
// NaN with other bits, a sender's clock stamped from a real one) — takes
// another value. Fields named in keep are left alone: a handle or an
// address the harness sends back or dials.
//
// A comparison by the declaration must find a varied answer equal to the
// original; a test that runs a SUT varying its answers this way proves that
// the oracle and the cases compare nothing the documents leave open.
func Vary(in, answer proto.Message, r Rand, keep ...protoreflect.FullName) {
	kept := map[protoreflect.FullName]bool{}
	for _, k := range keep {
		kept[k] = true
	}
	orig := proto.Clone(answer).ProtoReflect()
	c := newContext(in, Options{})
	varyOpen(c, orig, answer.ProtoReflect(), nil, -1, r, kept)
	varyForms(c, answer.ProtoReflect(), nil, -1, r, kept)
}

// varyOpen perturbs in m the fields that are open where they stand, reading
// conditions on o, the original m.
func varyOpen(c *Context, o, m protoreflect.Message, via protoreflect.FieldDescriptor, idx int, r Rand, kept map[protoreflect.FullName]bool) {
	c.push(frame{want: o, got: o, via: via, index: idx})
	defer c.pop()
	fields := m.Descriptor().Fields()
	for i := 0; i < fields.Len(); i++ {
		fd := fields.Get(i)
		if kept[fd.FullName()] {
			continue
		}
		d := index[fd.FullName()]
		if d != nil && d.Kind == Recorded {
			perturb(m, fd, r)
			continue
		}
		if d != nil && d.When != nil && !d.When.Holds(c) {
			// A value the condition would then judge (a "0: not
			// reported" made a report) is no legal variation: keep it.
			had, saved := m.Has(fd), m.Get(fd)
			if had && (fd.IsList() || fd.Kind() == protoreflect.MessageKind) {
				// Lists and messages are perturbed in place: keep a copy.
				cp := m.New()
				cp.Set(fd, saved)
				saved = proto.Clone(cp.Interface()).ProtoReflect().Get(fd)
			}
			perturb(m, fd, r)
			c.path[len(c.path)-1].got = m
			holds := d.When.Holds(c)
			c.path[len(c.path)-1].got = o
			if holds {
				if had {
					m.Set(fd, saved)
				} else {
					m.Clear(fd)
				}
			}
			continue
		}
		if fd.Kind() != protoreflect.MessageKind || fd.IsMap() || !m.Has(fd) {
			continue
		}
		if fd.IsList() {
			lo, lm := o.Get(fd).List(), m.Get(fd).List()
			for j := 0; j < lm.Len(); j++ {
				varyOpen(c, lo.Get(j).Message(), lm.Get(j).Message(), fd, j, r, kept)
			}
			continue
		}
		varyOpen(c, o.Get(fd).Message(), m.Get(fd).Message(), fd, -1, r, kept)
	}
}

// varyForms applies the forms' own variations, holders first.
func varyForms(c *Context, m protoreflect.Message, via protoreflect.FieldDescriptor, idx int, r Rand, kept map[protoreflect.FullName]bool) {
	c.push(frame{want: m, got: m, via: via, index: idx})
	defer c.pop()
	fields := m.Descriptor().Fields()
	for i := 0; i < fields.Len(); i++ {
		fd := fields.Get(i)
		if d := index[fd.FullName()]; d != nil && d.Kind == Judged && d.Form != nil && d.Form.Vary != nil && !kept[fd.FullName()] &&
			(d.When == nil || d.When.Holds(c)) {
			d.Form.Vary(c, m, r)
		}
	}
	for i := 0; i < fields.Len(); i++ {
		fd := fields.Get(i)
		if fd.Kind() != protoreflect.MessageKind || fd.IsMap() || !m.Has(fd) {
			continue
		}
		if fd.IsList() {
			l := m.Get(fd).List()
			for j := 0; j < l.Len(); j++ {
				varyForms(c, l.Get(j).Message(), fd, j, r, kept)
			}
			continue
		}
		varyForms(c, m.Get(fd).Message(), fd, -1, r, kept)
	}
}

// perturb gives m's field fd another value of its kind: a number moved, a
// flag flipped, an enum another declared value, non-empty text or bytes
// changed (empty ones stay empty: a worded field is set exactly when its
// verdict says why), a message's every field perturbed, an absent message
// present.
func perturb(m protoreflect.Message, fd protoreflect.FieldDescriptor, r Rand) {
	switch {
	case fd.IsMap():
		return
	case fd.IsList():
		if !m.Has(fd) {
			return
		}
		l := m.Mutable(fd).List()
		for j := 0; j < l.Len(); j++ {
			if fd.Kind() == protoreflect.MessageKind {
				perturbAll(l.Get(j).Message(), r)
			} else {
				l.Set(j, perturbed(fd, l.Get(j), r))
			}
		}
	case fd.Kind() == protoreflect.MessageKind:
		if !m.Has(fd) {
			m.Set(fd, protoreflect.ValueOfMessage(m.NewField(fd).Message()))
			return
		}
		perturbAll(m.Mutable(fd).Message(), r)
	default:
		if fd.HasPresence() && !m.Has(fd) {
			return
		}
		m.Set(fd, perturbed(fd, m.Get(fd), r))
	}
}

func perturbAll(m protoreflect.Message, r Rand) {
	fields := m.Descriptor().Fields()
	for i := 0; i < fields.Len(); i++ {
		fd := fields.Get(i)
		if fd.ContainingOneof() != nil && !fd.ContainingOneof().IsSynthetic() && !m.Has(fd) {
			continue
		}
		perturb(m, fd, r)
	}
}

func perturbed(fd protoreflect.FieldDescriptor, v protoreflect.Value, r Rand) protoreflect.Value {
	step := uint64(1 + r.IntN(1000))
	switch fd.Kind() {
	case protoreflect.BoolKind:
		return protoreflect.ValueOfBool(!v.Bool())
	case protoreflect.EnumKind:
		vals := fd.Enum().Values()
		for k := 0; k < vals.Len(); k++ {
			if n := vals.Get((k + 1 + r.IntN(vals.Len())) % vals.Len()).Number(); n != v.Enum() {
				return protoreflect.ValueOfEnum(n)
			}
		}
		return v
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return protoreflect.ValueOfInt32(int32(v.Int()) + int32(step))
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return protoreflect.ValueOfInt64(v.Int() + int64(step))
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return protoreflect.ValueOfUint32(uint32(v.Uint() + step))
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return protoreflect.ValueOfUint64(v.Uint() + step)
	case protoreflect.FloatKind:
		return protoreflect.ValueOfFloat32(float32(v.Float()) + 1)
	case protoreflect.DoubleKind:
		return protoreflect.ValueOfFloat64(v.Float() + 1)
	case protoreflect.StringKind:
		if v.String() == "" {
			return v
		}
		return protoreflect.ValueOfString("varied: " + v.String())
	case protoreflect.BytesKind:
		if len(v.Bytes()) == 0 {
			return v
		}
		return protoreflect.ValueOfBytes(append(append([]byte(nil), v.Bytes()...), byte(step)))
	}
	return v
}
