package gen

import (
	"encoding/binary"
	"strings"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Mutate changes in (in place) with one mutation chosen at random among
// those the input's structure allows: a field regenerated, a list element
// dropped, duplicated, swapped or spliced in from other (another input of
// the same op, or nil), a bytes field mutated knowing its format, or a list
// of byte chunks re-cut. Half of the time structured, the target's own
// mutation when it has one, is tried first.
func (g *G) Mutate(in, other proto.Message, structured func(g *G, in, other proto.Message) bool) {
	if structured != nil && g.Chance(0.5) && structured(g, in, other) {
		return
	}
	s, ok := g.pickSite(in.ProtoReflect(), 0)
	if !ok {
		return
	}
	g.mutateSite(s, other)
}

// pickSite walks from m to a random field, preferring populated ones and
// descending into messages more often than not.
func (g *G) pickSite(m protoreflect.Message, depth int) (site, bool) {
	fields := m.Descriptor().Fields()
	if fields.Len() == 0 {
		return site{}, false
	}
	fd := fields.Get(g.IntN(fields.Len()))
	for tries := 0; tries < 3 && !m.Has(fd); tries++ {
		fd = fields.Get(g.IntN(fields.Len()))
	}
	if fd.IsMap() {
		return site{}, false
	}
	if fd.Kind() == protoreflect.MessageKind && m.Has(fd) && depth < 8 && g.Chance(0.6) {
		if fd.IsList() {
			if l := m.Get(fd).List(); l.Len() > 0 {
				if s, ok := g.pickSite(l.Get(g.IntN(l.Len())).Message(), depth+1); ok {
					return s, true
				}
			}
		} else if s, ok := g.pickSite(m.Get(fd).Message(), depth+1); ok {
			return s, true
		}
	}
	return site{m, fd}, true
}

// A site is one place a mutation can act: a field of a message.
type site struct {
	m  protoreflect.Message
	fd protoreflect.FieldDescriptor
}

func collect(m protoreflect.Message, out *[]site, depth int) {
	if depth > 8 {
		return
	}
	fields := m.Descriptor().Fields()
	for i := 0; i < fields.Len(); i++ {
		fd := fields.Get(i)
		if fd.IsMap() {
			continue
		}
		*out = append(*out, site{m, fd})
		if fd.Kind() != protoreflect.MessageKind || !m.Has(fd) {
			continue
		}
		if fd.IsList() {
			l := m.Get(fd).List()
			for j := 0; j < l.Len(); j++ {
				collect(l.Get(j).Message(), out, depth+1)
			}
		} else {
			collect(m.Get(fd).Message(), out, depth+1)
		}
	}
}

func (g *G) mutateSite(s site, other proto.Message) {
	m, fd := s.m, s.fd
	if fd.IsList() {
		l := m.Mutable(fd).List()
		switch k := g.IntN(7); {
		case k == 0 && l.Len() > 0: // drop one
			i := g.IntN(l.Len())
			for j := i; j+1 < l.Len(); j++ {
				l.Set(j, l.Get(j+1))
			}
			l.Truncate(l.Len() - 1)
		case k == 1 && l.Len() > 0 && l.Len() < 256: // duplicate one
			v := l.Get(g.IntN(l.Len()))
			if fd.Kind() == protoreflect.MessageKind {
				v = protoreflect.ValueOfMessage(proto.Clone(v.Message().Interface()).ProtoReflect())
			}
			l.Append(v)
		case k == 2 && l.Len() > 1: // swap two
			i, j := g.IntN(l.Len()), g.IntN(l.Len())
			vi, vj := l.Get(i), l.Get(j)
			l.Set(i, vj)
			l.Set(j, vi)
		case k == 3 && fd.Kind() == protoreflect.BytesKind, k == 3 && IsBlob(fd):
			g.recut(l, fd)
		case k == 4 && other != nil: // splice an element from the other input
			var others []site
			collect(other.ProtoReflect(), &others, 0)
			for _, o := range others {
				if o.fd.FullName() == fd.FullName() && o.m.Has(o.fd) {
					ol := o.m.Get(o.fd).List()
					if ol.Len() > 0 && l.Len() < 256 {
						v := ol.Get(g.IntN(ol.Len()))
						if fd.Kind() == protoreflect.MessageKind {
							v = protoreflect.ValueOfMessage(proto.Clone(v.Message().Interface()).ProtoReflect())
						}
						l.Append(v)
					}
					return
				}
			}
			fallthrough
		default: // mutate or add an element
			if l.Len() > 0 && fd.Kind() != protoreflect.MessageKind {
				i := g.IntN(l.Len())
				l.Set(i, g.mutateScalar(fd, l.Get(i)))
				return
			}
			if fd.Kind() == protoreflect.MessageKind {
				e := l.NewElement()
				g.Fill(e.Message(), 3)
				l.Append(e)
			} else {
				l.Append(g.Scalar(fd))
			}
		}
		return
	}
	if fd.Kind() == protoreflect.MessageKind {
		switch {
		case m.Has(fd) && g.Chance(0.2):
			m.Clear(fd)
		case !m.Has(fd) || g.Chance(0.3):
			sub := m.Mutable(fd).Message()
			g.Fill(sub, 3)
		}
		return
	}
	if fd.HasPresence() && m.Has(fd) && g.Chance(0.15) {
		m.Clear(fd)
		return
	}
	m.Set(fd, g.mutateScalar(fd, m.Get(fd)))
}

// IsBlob reports whether fd holds conform.v1 Blobs: bytes given literally
// or as a fill.
func IsBlob(fd protoreflect.FieldDescriptor) bool {
	return fd.Kind() == protoreflect.MessageKind && fd.Message().Name() == "Blob"
}

// recut joins a list of byte chunks (bytes, or Blobs given as data), mutates
// the whole knowing its format, and cuts it again at other points: the same
// bytes arriving in other reads.
func (g *G) recut(l protoreflect.List, fd protoreflect.FieldDescriptor) {
	var all []byte
	for i := 0; i < l.Len(); i++ {
		if fd.Kind() == protoreflect.BytesKind {
			all = append(all, l.Get(i).Bytes()...)
			continue
		}
		blob := l.Get(i).Message()
		data := blob.Descriptor().Fields().ByName("data")
		if blob.Has(blob.Descriptor().Fields().ByName("fill")) {
			return // a described payload is not cut
		}
		all = append(all, blob.Get(data).Bytes()...)
	}
	if g.Chance(0.5) {
		all = g.MutateBytes(all)
	}
	l.Truncate(0)
	for _, s := range g.Split(all) {
		s = append([]byte(nil), s...)
		if fd.Kind() == protoreflect.BytesKind {
			l.Append(protoreflect.ValueOfBytes(s))
			continue
		}
		e := l.NewElement()
		e.Message().Set(e.Message().Descriptor().Fields().ByName("data"), protoreflect.ValueOfBytes(s))
		l.Append(e)
	}
}

func (g *G) mutateScalar(fd protoreflect.FieldDescriptor, v protoreflect.Value) protoreflect.Value {
	switch fd.Kind() {
	case protoreflect.BytesKind:
		return protoreflect.ValueOfBytes(g.MutateBytes(append([]byte(nil), v.Bytes()...)))
	case protoreflect.StringKind:
		if g.Chance(0.5) {
			return protoreflect.ValueOfString(strings.ToValidUTF8(string(g.mutateRaw([]byte(v.String()))), "\uFFFD"))
		}
		return g.Scalar(fd)
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return protoreflect.ValueOfUint32(uint32(g.nudge(uint64(v.Uint()))))
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return protoreflect.ValueOfUint64(g.nudge(v.Uint()))
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return protoreflect.ValueOfInt32(int32(g.nudge(uint64(v.Int()))))
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return protoreflect.ValueOfInt64(int64(g.nudge(uint64(v.Int()))))
	}
	return g.Scalar(fd)
}

// nudge moves an integer by a little, or to an edge.
func (g *G) nudge(v uint64) uint64 {
	switch g.IntN(4) {
	case 0:
		return v + 1
	case 1:
		return v - 1
	case 2:
		return v ^ 1<<uint(g.IntN(64))
	}
	return g.Edge()
}

// MutateBytes applies one mutation: most of the time one that knows the
// format (a length field pushed to an edge, a header bit flipped), else a
// generic one (bit flip, byte set, insert, delete, duplicate a range).
func (g *G) MutateBytes(b []byte) []byte {
	if fields := g.fieldsOf(b); len(fields) > 0 && g.Chance(0.6) {
		f := fields[g.IntN(len(fields))]
		if f.flip {
			b[f.off] ^= 1 << uint(g.IntN(8))
			return b
		}
		v := g.Edge()
		switch {
		case g.Chance(0.4):
			v = f.get(b) + uint64(g.IntN(3)) - 1 // off by one
		case g.Chance(0.3):
			v = f.get(b) + 64
		}
		f.put(b, v)
		return b
	}
	return g.mutateRaw(b)
}

func (g *G) mutateRaw(b []byte) []byte {
	switch k := g.IntN(6); {
	case k == 0 && len(b) > 0:
		b[g.IntN(len(b))] ^= 1 << uint(g.IntN(8))
	case k == 1 && len(b) > 0:
		b[g.IntN(len(b))] = byte(interesting[g.IntN(len(interesting))])
	case k == 2 && len(b) < MaxInputBytes:
		i := g.IntN(len(b) + 1)
		ins := g.Raw(8)
		b = append(b[:i], append(ins, b[i:]...)...)
	case k == 3 && len(b) > 0:
		i := g.IntN(len(b))
		j := i + g.IntN(len(b)-i+1)
		b = append(b[:i], b[j:]...)
	case k == 4 && len(b) > 0 && len(b) < MaxInputBytes/2:
		i := g.IntN(len(b))
		j := i + g.IntN(len(b)-i+1)
		b = append(b[:j], append(append([]byte(nil), b[i:j]...), b[j:]...)...)
	default:
		if len(b) > 0 {
			b = b[:g.IntN(len(b))]
		} else {
			b = g.Raw(8)
		}
	}
	return b
}

// A field is one integer field found in bytes of a known format.
type field struct {
	off, size int
	big       bool
	flip      bool // a flag byte: flip bits rather than set a value
}

func (f field) get(b []byte) uint64 {
	switch {
	case f.size == 1:
		return uint64(b[f.off])
	case f.size == 2 && f.big:
		return uint64(binary.BigEndian.Uint16(b[f.off:]))
	case f.size == 2:
		return uint64(binary.LittleEndian.Uint16(b[f.off:]))
	case f.size == 4 && f.big:
		return uint64(binary.BigEndian.Uint32(b[f.off:]))
	case f.size == 4:
		return uint64(binary.LittleEndian.Uint32(b[f.off:]))
	case f.big:
		return binary.BigEndian.Uint64(b[f.off:])
	}
	return binary.LittleEndian.Uint64(b[f.off:])
}

func (f field) put(b []byte, v uint64) {
	switch {
	case f.size == 1:
		b[f.off] = byte(v)
	case f.size == 2 && f.big:
		binary.BigEndian.PutUint16(b[f.off:], uint16(v))
	case f.size == 2:
		binary.LittleEndian.PutUint16(b[f.off:], uint16(v))
	case f.size == 4 && f.big:
		binary.BigEndian.PutUint32(b[f.off:], uint32(v))
	case f.size == 4:
		binary.LittleEndian.PutUint32(b[f.off:], uint32(v))
	case f.big:
		binary.BigEndian.PutUint64(b[f.off:], v)
	default:
		binary.LittleEndian.PutUint64(b[f.off:], v)
	}
}

// fieldsOf finds the length fields and flag bytes of b in the target's
// format.
func (g *G) fieldsOf(b []byte) []field {
	var out []field
	switch g.format {
	case Frames:
		for off := 0; off+4 <= len(b) && len(out) < 64; {
			out = append(out, field{off: off, size: 4, big: true})
			off += 4 + int(binary.BigEndian.Uint32(b[off:]))
		}
	case Path:
		for off := 0; off < len(b) && len(out) < 64; off += 1 + int(b[off]) {
			out = append(out, field{off: off, size: 1})
		}
	case TLV:
		tlvFields(b, 0, 0, &out)
	case Doppler:
		if len(b) >= 64 {
			big := b[0] == 'M' // the magic written big-endian
			for _, f := range []field{
				{off: 0, size: 8}, {off: 8, size: 2}, {off: 10, size: 2}, {off: 12, size: 4},
				{off: 16, size: 2}, {off: 18, size: 2}, {off: 20, size: 4, flip: true},
				{off: 24, size: 8}, {off: 40, size: 8}, {off: 48, size: 8}, {off: 12, size: 1, flip: true},
			} {
				f.big = big
				out = append(out, f)
			}
			if len(b) >= 88 {
				for _, f := range []field{{off: 64, size: 4}, {off: 68, size: 4}, {off: 72, size: 8}, {off: 80, size: 8}} {
					f.big = big
					out = append(out, f)
				}
			}
		}
	}
	return out
}

// tlvFields walks TLV headers: the type and opt bytes and the length, then
// the children of a structured payload.
func tlvFields(b []byte, off, depth int, out *[]field) {
	for off+4 <= len(b) && depth < 8 && len(*out) < 64 {
		opt := b[off+1]
		*out = append(*out, field{off: off, size: 1, flip: true}, field{off: off + 1, size: 1, flip: true})
		hdr, n := 4, int(binary.LittleEndian.Uint16(b[off+2:]))
		if opt&2 != 0 {
			if off+6 > len(b) {
				return
			}
			hdr, n = 6, int(binary.LittleEndian.Uint32(b[off+2:]))
			*out = append(*out, field{off: off + 2, size: 4})
		} else {
			*out = append(*out, field{off: off + 2, size: 2})
		}
		if n < 0 || off+hdr+n > len(b) {
			return
		}
		if opt&1 != 0 {
			tlvFields(b[:off+hdr+n], off+hdr, depth+1, out)
		}
		off += hdr + n
		if depth == 0 {
			return // a frame is one TLV; what follows is its trailer
		}
	}
}

// PlaceBytes puts b in in's first bytes field, in the order of its schema:
// a bytes field, a list of bytes or of Blobs (then b is its one element).
// It reports false when in has no such field, and b is then only the
// entropy in was generated from.
func PlaceBytes(in proto.Message, b []byte) bool {
	var sites []site
	collect(in.ProtoReflect(), &sites, 0)
	for _, s := range sites {
		switch {
		case s.fd.Kind() == protoreflect.BytesKind && s.fd.IsList():
			l := s.m.Mutable(s.fd).List()
			l.Truncate(0)
			l.Append(protoreflect.ValueOfBytes(append([]byte(nil), b...)))
			return true
		case s.fd.Kind() == protoreflect.BytesKind:
			s.m.Set(s.fd, protoreflect.ValueOfBytes(append([]byte(nil), b...)))
			return true
		case IsBlob(s.fd) && s.fd.IsList():
			l := s.m.Mutable(s.fd).List()
			l.Truncate(0)
			e := l.NewElement()
			e.Message().Set(e.Message().Descriptor().Fields().ByName("data"), protoreflect.ValueOfBytes(append([]byte(nil), b...)))
			l.Append(e)
			return true
		}
	}
	return false
}
