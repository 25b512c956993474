package gen

import (
	"math"
	"math/rand/v2"
	"strings"

	"github.com/conform-suite/conform/ref/wire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Bounds on what a generator or a mutation builds, so that an input stays
// small enough to batch by the hundred: lists, bytes and nesting.
const (
	maxGenList  = 6
	maxGenBytes = 96
	// MaxDepth is how deep the generic generator nests messages.
	MaxDepth = 5
	// MaxInputBytes bounds an input's literal bytes after mutation; a
	// mutation that would exceed it is dropped. Large payloads are described
	// with a Blob fill instead.
	MaxInputBytes = 64 << 10
)

// A G is a deterministic source of random choices for one input of a
// target, and the builders of the formats inputs hold. The same G (the same
// generator state) builds the same input: a campaign's input i is a pure
// function of its seed and i. A G is used by one goroutine at a time.
type G struct {
	r      *rand.Rand
	format Format
	// paths are the vertices the graph script being generated registered,
	// which its later steps name more often than others.
	paths []string
}

// New returns a G drawing from r that builds bytes in format f.
func New(r *rand.Rand, f Format) *G { return &G{r: r, format: f} }

// IntN returns a number in [0, n).
func (g *G) IntN(n int) int { return g.r.IntN(n) }

// Chance reports true with probability p.
func (g *G) Chance(p float64) bool { return g.r.Float64() < p }

// Uint32 returns any 32-bit number.
func (g *G) Uint32() uint32 { return g.r.Uint32() }

// Pick returns one of s.
func (g *G) Pick(s []string) string { return s[g.IntN(len(s))] }

// interesting are the integer values at the edges of the formats' fields.
var interesting = []uint64{
	0, 1, 2, 3, 4, 7, 8, 15, 16, 23, 24, 63, 64, 65, 87, 88, 127, 128, 255, 256,
	0x7FFF, 0xFFFF, 0x10000, 0xFFFFFF, wire.MaxPayload - 1, wire.MaxPayload, wire.MaxPayload + 1,
	0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 1 << 32, 1<<63 - 1, 1 << 63, math.MaxUint64,
}

// Edge returns an integer near a format edge (0, 64, 0xFFFF, 16 MiB,
// 2³²…, give or take one), or a small one.
func (g *G) Edge() uint64 {
	if g.Chance(0.5) {
		return uint64(g.IntN(70))
	}
	v := interesting[g.IntN(len(interesting))]
	switch g.IntN(4) {
	case 0:
		v++
	case 1:
		v--
	}
	return v
}

var dictionary = []string{
	"", "/", "a", "/a", "a/", "/a/b", "//", "/./", "/../", ".", "..", "/a//b", "x",
	"ranvier.message.v1.Frame", "ranvier.message.v1.Sample", "ranvier.message.v1.StreamInfo",
	"ranvier.message.v1.Request", "/net/eth/link", "/net/eth/link/peer", "/net/bus/n1/p2",
	"é", "\x00", "\xff\xfe", "sensor/temp", "delivery_policy",
}

// Fill fills m with random fields, recursing at most depth levels: the
// generic generator, which knows an op only by its schema.
func (g *G) Fill(m protoreflect.Message, depth int) {
	fields := m.Descriptor().Fields()
	for i := 0; i < fields.Len(); i++ {
		fd := fields.Get(i)
		if fd.ContainingOneof() != nil && !fd.ContainingOneof().IsSynthetic() {
			continue
		}
		if !g.Chance(0.6) {
			continue
		}
		g.SetField(m, fd, depth)
	}
	oos := m.Descriptor().Oneofs()
	for i := 0; i < oos.Len(); i++ {
		oo := oos.Get(i)
		if oo.IsSynthetic() {
			continue
		}
		g.SetField(m, oo.Fields().Get(g.IntN(oo.Fields().Len())), depth)
	}
}

// SetField gives field fd of m a random value: a list of up to six
// elements, a message filled depth-1 levels deep, or a scalar.
func (g *G) SetField(m protoreflect.Message, fd protoreflect.FieldDescriptor, depth int) {
	switch {
	case fd.IsMap():
		return
	case fd.IsList():
		if depth <= 0 {
			return
		}
		l := m.Mutable(fd).List()
		for n := g.IntN(maxGenList + 1); n > 0; n-- {
			if fd.Kind() == protoreflect.MessageKind {
				e := l.NewElement()
				g.Fill(e.Message(), depth-1)
				l.Append(e)
			} else {
				l.Append(g.Scalar(fd))
			}
		}
	case fd.Kind() == protoreflect.MessageKind:
		if depth <= 0 {
			return
		}
		sub := m.Mutable(fd).Message()
		g.Fill(sub, depth-1)
	default:
		m.Set(fd, g.Scalar(fd))
	}
}

// Generate returns a fresh input of op from its schema: the op-level fields
// now and then, and one entry in its batched list.
func (g *G) Generate(op Op) proto.Message {
	in := op.Type.New().Interface()
	m := in.ProtoReflect()
	fields := m.Descriptor().Fields()
	for i := 0; i < fields.Len(); i++ {
		if fd := fields.Get(i); fd != op.List && g.Chance(0.5) {
			g.SetField(m, fd, MaxDepth)
		}
	}
	l := m.Mutable(op.List).List()
	if op.List.Kind() == protoreflect.MessageKind {
		e := l.NewElement()
		g.Fill(e.Message(), MaxDepth)
		l.Append(e)
	} else {
		l.Append(g.Scalar(op.List))
	}
	return in
}

// Scalar returns a random value of a scalar field: integers at the edges,
// enum values (now and then an unknown one), floats among 0, ±∞, NaN and
// the like, strings from a dictionary of paths and names, bytes in the
// target's format.
func (g *G) Scalar(fd protoreflect.FieldDescriptor) protoreflect.Value {
	switch fd.Kind() {
	case protoreflect.BoolKind:
		return protoreflect.ValueOfBool(g.Chance(0.5))
	case protoreflect.EnumKind:
		vals := fd.Enum().Values()
		if g.Chance(0.05) {
			return protoreflect.ValueOfEnum(protoreflect.EnumNumber(g.IntN(100)))
		}
		return protoreflect.ValueOfEnum(vals.Get(g.IntN(vals.Len())).Number())
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return protoreflect.ValueOfInt32(int32(g.Edge()))
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return protoreflect.ValueOfInt64(int64(g.Edge()))
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		v := g.Edge()
		if g.Chance(0.7) {
			v %= 300
		}
		return protoreflect.ValueOfUint32(uint32(v))
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		v := g.Edge()
		if g.Chance(0.5) {
			v %= 300
		}
		return protoreflect.ValueOfUint64(v)
	case protoreflect.FloatKind:
		return protoreflect.ValueOfFloat32(float32(g.Float()))
	case protoreflect.DoubleKind:
		return protoreflect.ValueOfFloat64(g.Float())
	case protoreflect.StringKind:
		return protoreflect.ValueOfString(g.Text())
	case protoreflect.BytesKind:
		return protoreflect.ValueOfBytes(g.Bytes())
	}
	return fd.Default()
}

// Float returns one of the floats at the edges: 0, ±1, ±∞, NaN, the
// largest, a tiny one, common sample rates.
func (g *G) Float() float64 {
	vals := []float64{0, 1, -1, 0.5, 1e6, 48000, 1e-300, math.Inf(1), math.Inf(-1), math.NaN(), math.MaxFloat64}
	return vals[g.IntN(len(vals))]
}

// Text returns valid UTF-8: a word or path of the dictionary, two joined,
// or random bytes made valid.
func (g *G) Text() string {
	if g.Chance(0.7) {
		return strings.ToValidUTF8(dictionary[g.IntN(len(dictionary))], "\uFFFD")
	}
	s := dictionary[g.IntN(len(dictionary))] + "/" + dictionary[g.IntN(len(dictionary))]
	if g.Chance(0.3) {
		s = string(g.Bytes())
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// Bytes returns bytes in the target's format.
func (g *G) Bytes() []byte {
	switch g.format {
	case Frames:
		return g.Frames()
	case TLV:
		return g.TLVFrame()
	case Path:
		return g.PathPayload()
	case Doppler:
		return g.DopplerMessage()
	case Proto:
		return g.RanvierMessage()
	}
	return g.Raw(maxGenBytes)
}

// Raw returns up to max random bytes.
func (g *G) Raw(max int) []byte {
	b := make([]byte, g.IntN(max+1))
	for i := range b {
		b[i] = byte(g.r.Uint32())
	}
	return b
}

// Split cuts b at random points: whole, byte at a time, or a few cuts.
func (g *G) Split(b []byte) [][]byte {
	switch g.IntN(4) {
	case 0:
		return [][]byte{b}
	case 1:
		if len(b) <= 64 {
			out := make([][]byte, len(b))
			for i := range b {
				out[i] = b[i : i+1]
			}
			return out
		}
	}
	var out [][]byte
	for len(b) > 0 {
		n := g.IntN(min(len(b), 9) + 1)
		out = append(out, b[:n])
		b = b[n:]
	}
	return out
}
