package campaign

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"strings"
	"sync"

	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/ref/doppler"
	"github.com/conform-suite/conform/ref/tlv"
	"github.com/conform-suite/conform/ref/wire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Bounds on what a generator or a mutation builds, so that an input stays
// small enough to batch by the hundred: lists, bytes and nesting.
const (
	maxGenList  = 6
	maxGenBytes = 96
	maxGenDepth = 5
	// maxInputBytes bounds an input's literal bytes after mutation; a
	// mutation that would exceed it is dropped. Large payloads are described
	// with a Blob fill instead.
	maxInputBytes = 64 << 10
)

// gen is a deterministic source of inputs for one target.
type gen struct {
	r *rand.Rand
	t *Target
	// paths are the vertices the graph script being generated registered,
	// which its later steps name more often than others.
	paths []string
}

// interesting are the integer values at the edges of the formats' fields.
var interesting = []uint64{
	0, 1, 2, 3, 4, 7, 8, 15, 16, 23, 24, 63, 64, 65, 87, 88, 127, 128, 255, 256,
	0x7FFF, 0xFFFF, 0x10000, 0xFFFFFF, wire.MaxPayload - 1, wire.MaxPayload, wire.MaxPayload + 1,
	0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 1 << 32, 1<<63 - 1, 1 << 63, math.MaxUint64,
}

func (g *gen) intn(n int) int        { return g.r.IntN(n) }
func (g *gen) chance(p float64) bool { return g.r.Float64() < p }

// edge returns an integer near a format edge, or a small one.
func (g *gen) edge() uint64 {
	if g.chance(0.5) {
		return uint64(g.intn(70))
	}
	v := interesting[g.intn(len(interesting))]
	switch g.intn(4) {
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

// message fills m with random fields, recursing at most depth levels.
func (g *gen) message(m protoreflect.Message, depth int) {
	fields := m.Descriptor().Fields()
	for i := 0; i < fields.Len(); i++ {
		fd := fields.Get(i)
		if fd.ContainingOneof() != nil && !fd.ContainingOneof().IsSynthetic() {
			continue
		}
		if !g.chance(0.6) {
			continue
		}
		g.setField(m, fd, depth)
	}
	oos := m.Descriptor().Oneofs()
	for i := 0; i < oos.Len(); i++ {
		oo := oos.Get(i)
		if oo.IsSynthetic() {
			continue
		}
		g.setField(m, oo.Fields().Get(g.intn(oo.Fields().Len())), depth)
	}
}

func (g *gen) setField(m protoreflect.Message, fd protoreflect.FieldDescriptor, depth int) {
	switch {
	case fd.IsMap():
		return
	case fd.IsList():
		if depth <= 0 {
			return
		}
		l := m.Mutable(fd).List()
		for n := g.intn(maxGenList + 1); n > 0; n-- {
			if fd.Kind() == protoreflect.MessageKind {
				e := l.NewElement()
				g.message(e.Message(), depth-1)
				l.Append(e)
			} else {
				l.Append(g.scalar(fd))
			}
		}
	case fd.Kind() == protoreflect.MessageKind:
		if depth <= 0 {
			return
		}
		sub := m.Mutable(fd).Message()
		g.message(sub, depth-1)
	default:
		m.Set(fd, g.scalar(fd))
	}
}

func (g *gen) scalar(fd protoreflect.FieldDescriptor) protoreflect.Value {
	switch fd.Kind() {
	case protoreflect.BoolKind:
		return protoreflect.ValueOfBool(g.chance(0.5))
	case protoreflect.EnumKind:
		vals := fd.Enum().Values()
		if g.chance(0.05) {
			return protoreflect.ValueOfEnum(protoreflect.EnumNumber(g.intn(100)))
		}
		return protoreflect.ValueOfEnum(vals.Get(g.intn(vals.Len())).Number())
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return protoreflect.ValueOfInt32(int32(g.edge()))
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return protoreflect.ValueOfInt64(int64(g.edge()))
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		v := g.edge()
		if g.chance(0.7) {
			v %= 300
		}
		return protoreflect.ValueOfUint32(uint32(v))
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		v := g.edge()
		if g.chance(0.5) {
			v %= 300
		}
		return protoreflect.ValueOfUint64(v)
	case protoreflect.FloatKind:
		return protoreflect.ValueOfFloat32(float32(g.float()))
	case protoreflect.DoubleKind:
		return protoreflect.ValueOfFloat64(g.float())
	case protoreflect.StringKind:
		return protoreflect.ValueOfString(g.str())
	case protoreflect.BytesKind:
		return protoreflect.ValueOfBytes(g.bytes())
	}
	return fd.Default()
}

func (g *gen) float() float64 {
	vals := []float64{0, 1, -1, 0.5, 1e6, 48000, 1e-300, math.Inf(1), math.Inf(-1), math.NaN(), math.MaxFloat64}
	return vals[g.intn(len(vals))]
}

func (g *gen) str() string {
	if g.chance(0.7) {
		return strings.ToValidUTF8(dictionary[g.intn(len(dictionary))], "\uFFFD")
	}
	s := dictionary[g.intn(len(dictionary))] + "/" + dictionary[g.intn(len(dictionary))]
	if g.chance(0.3) {
		s = string(g.bytes())
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// bytes returns bytes in the target's format.
func (g *gen) bytes() []byte {
	switch g.t.format {
	case fmtFrames:
		return g.frames()
	case fmtTLV:
		return g.tlvFrame()
	case fmtPath:
		return g.pathPayload()
	case fmtDoppler:
		return g.dopplerMessage()
	case fmtProto:
		return g.protoMessage()
	}
	return g.raw(maxGenBytes)
}

func (g *gen) raw(max int) []byte {
	b := make([]byte, g.intn(max+1))
	for i := range b {
		b[i] = byte(g.r.Uint32())
	}
	return b
}

// frames returns one to four Ranvier frames, their lengths at the edges:
// empty payloads, payloads that decode as Frames, and now and then a prefix
// past the ceiling or a frame cut short.
func (g *gen) frames() []byte {
	var b []byte
	for n := 1 + g.intn(4); n > 0; n-- {
		var p []byte
		switch g.intn(4) {
		case 0:
		case 1:
			p = g.protoMessage()
		default:
			p = g.raw(24)
		}
		b = binary.BigEndian.AppendUint32(b, uint32(len(p)))
		b = append(b, p...)
	}
	switch g.intn(6) {
	case 0: // a prefix past the ceiling
		b = binary.BigEndian.AppendUint32(b, uint32(g.edge()))
	case 1: // a frame cut short
		if len(b) > 0 {
			b = b[:g.intn(len(b))]
		}
	}
	return b
}

// protoMessage returns an encoded ranvier message: a Frame holding a Sample
// or a StreamInfo, sometimes with unknown fields, or random bytes.
func (g *gen) protoMessage() []byte {
	if g.chance(0.2) {
		return g.raw(32)
	}
	table := ranvierMessages()
	b := append([]byte(nil), table[g.intn(len(table))]...)
	if g.chance(0.2) { // an unknown field, varint, number 9 or 1000
		tag := []byte{9 << 3}
		if g.chance(0.5) {
			tag = []byte{0xC0, 0x3E}
		}
		b = append(append(b, tag...), byte(g.intn(128)))
	}
	return b
}

// ranvierMessages returns encoded ranvier messages (Frames, Samples,
// StreamInfos) with random fields, built once from a fixed seed: building a
// message through reflection for every input would cost a campaign half its
// speed. The table is never written after it is built.
func ranvierMessages() [][]byte {
	ranvierOnce.Do(func() { ranvierTable = buildRanvierMessages() })
	return ranvierTable
}

var (
	ranvierOnce  sync.Once
	ranvierTable [][]byte
)

func buildRanvierMessages() [][]byte {
	g := &gen{r: rand.New(rand.NewPCG(1, 2)), t: &Target{format: fmtRaw}}
	names := []string{"ranvier.message.v1.Frame", "ranvier.message.v1.Sample", "ranvier.message.v1.StreamInfo"}
	var out [][]byte
	for i := 0; i < 256; i++ {
		mt, err := wire.MessageType(names[i%len(names)])
		if err != nil {
			continue
		}
		m := mt.New()
		g.message(m, 3)
		b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m.Interface())
		if err == nil {
			out = append(out, b)
		}
	}
	return out
}

// tlvFrame returns a TLV frame: a random tree, encoded, sometimes with a
// trailer, sometimes with a 6-byte header.
func (g *gen) tlvFrame() []byte {
	var b []byte
	if g.chance(0.7) {
		b = tlvAppend(nil, g.tlvTree(3), g.chance(0.15))
	} else {
		b = g.raw(24)
	}
	if g.chance(0.3) && len(b) >= 4 {
		b = g.tlvTrailer(b)
	}
	return b
}

var tlvTypes = []byte{0x01, 0x02, 0x03, 0x04, 0x06, 0x07, 0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x0F, 0x80, 0x00, 0x42}

type tlvGenNode struct {
	typ      byte
	children []*tlvGenNode
	payload  []byte
	pl       bool
}

func (g *gen) tlvTree(depth int) *tlvGenNode {
	n := &tlvGenNode{typ: tlvTypes[g.intn(len(tlvTypes))]}
	if depth > 0 && g.chance(0.5) {
		n.pl = true
		for k := g.intn(4); k > 0; k-- {
			n.children = append(n.children, g.tlvTree(depth-1))
		}
		return n
	}
	if n.typ == byte(tlv.TypePath) {
		n.payload = g.pathPayload()
	} else {
		n.payload = g.raw(12)
	}
	return n
}

// tlvAppend encodes n as RECONSTRUCTED §2 lays a TLV out: type, opt, a
// 16-bit little-endian length (32-bit with LL), then the payload.
func tlvAppend(dst []byte, n *tlvGenNode, long bool) []byte {
	var payload []byte
	if n.pl {
		for _, c := range n.children {
			payload = tlvAppend(payload, c, false)
		}
	} else {
		payload = n.payload
	}
	opt := byte(0)
	if n.pl {
		opt |= byte(tlv.OptPL)
	}
	if long || len(payload) > 0xFFFF {
		opt |= byte(tlv.OptLL)
		dst = append(dst, n.typ, opt)
		dst = binary.LittleEndian.AppendUint32(dst, uint32(len(payload)))
	} else {
		dst = append(dst, n.typ, opt)
		dst = binary.LittleEndian.AppendUint16(dst, uint16(len(payload)))
	}
	return append(dst, payload...)
}

// tlvTrailer sets a timestamp width and a check kind in the frame's opt
// byte and appends the trailer, with a correct check most of the time.
func (g *gen) tlvTrailer(b []byte) []byte {
	tsCode := g.intn(4) // 0, 4, 6, 8 bytes
	crcCode := g.intn(3)
	b = append([]byte(nil), b...)
	b[1] = b[1]&^0x3C | byte(tsCode)<<2 | byte(crcCode)<<4
	widths := []int{0, 4, 6, 8}
	ts := make([]byte, widths[tsCode])
	for i := range ts {
		ts[i] = byte(g.r.Uint32())
	}
	b = append(b, ts...)
	switch crcCode {
	case 1:
		b = binary.LittleEndian.AppendUint32(b, uint32(tlv.Checksum(tlv.CRC32C, b)))
	case 2:
		b = binary.LittleEndian.AppendUint64(b, tlv.Checksum(tlv.CRC64XZ, b))
	}
	if g.chance(0.1) {
		b[len(b)-1] ^= 1
	}
	return b
}

// pathPayload returns PATH records: [u8 len][text], with now and then an
// empty record, a slash, a dot segment or invalid UTF-8.
func (g *gen) pathPayload() []byte {
	var b []byte
	segs := []string{"a", "sensor", "temp", ".", "..", "a/b", "", "\xff", "é", "net", "eth", "link"}
	for n := g.intn(4); n > 0; n-- {
		s := segs[g.intn(len(segs))]
		b = append(b, byte(len(s)))
		b = append(b, s...)
	}
	if g.chance(0.1) {
		b = append(b, byte(g.intn(256)))
	}
	return b
}

// dopplerMessage returns a doppler message: a header a conforming sender
// writes, with a payload, sometimes chunked, sometimes in the other byte
// order.
func (g *gen) dopplerMessage() []byte {
	if g.chance(0.1) {
		return g.raw(80)
	}
	order := doppler.LittleEndian
	if g.chance(0.2) {
		order = doppler.BigEndian
	}
	types := []doppler.Type{doppler.TypeCI8, doppler.TypeCI16, doppler.TypeCI32, doppler.TypeCF32, doppler.TypeCF64, doppler.TypeRaw, doppler.TypeTLM}
	typ := types[g.intn(len(types))]
	h := doppler.NewHeader(typ, order)
	elem, _ := doppler.ElemSize(h.Kind, h.Format)
	if elem == 0 {
		elem = 1
	}
	n := g.intn(6)
	payload := make([]byte, n*elem)
	for i := range payload {
		payload[i] = byte(i)
	}
	h.Sequence = uint64(g.intn(4))
	h.NumSamples = uint64(n)
	h.PayloadBytes = uint64(len(payload))
	var b []byte
	if g.chance(0.3) {
		h.Flags |= doppler.FlagChunked
		b = doppler.AppendHeader(nil, order, h)
		count := uint32(1 + g.intn(3))
		b = doppler.AppendChunkBlock(b, order, doppler.ChunkBlock{
			Index: uint32(g.intn(int(count) + 1)), Count: count,
			TotalSamples: uint64(n) * uint64(count), TotalBytes: uint64(len(payload)) * uint64(count),
		})
	} else {
		b = doppler.AppendHeader(nil, order, h)
	}
	return append(b, payload...)
}

// structuredGenerators are the targets' structure-aware generators, where
// the generic one builds too few valid inputs.
var structuredGenerators = map[string]func(g *gen) proto.Message{
	"graph.run": generateGraphRun,
	"wire.read-frames": func(g *gen) proto.Message {
		return &conformpb.ReadFrames{Inputs: []*conformpb.ReadInput{{
			Chunks: g.chunks(g.frames()), EndOfStream: g.chance(0.5),
		}}}
	},
	"streams.track": func(g *gen) proto.Message {
		return &conformpb.Track{Inputs: []*conformpb.TrackInput{{Name: "s", Arrivals: g.arrivals()}}}
	},
	"doppler.reassemble": func(g *gen) proto.Message {
		in := &conformpb.DopplerReassembleInput{}
		for n := 1 + g.intn(4); n > 0; n-- {
			in.Messages = append(in.Messages, g.dopplerMessage())
		}
		return &conformpb.DopplerReassemble{Inputs: []*conformpb.DopplerReassembleInput{in}}
	},
	"tlv.decode": func(g *gen) proto.Message {
		return &conformpb.TlvDecode{Inputs: []*conformpb.TlvDecodeInput{{Frame: &conformpb.TlvRope{Segments: g.split(g.tlvFrame())}}}}
	},
}

// chunks cuts b into reads at random points, empty reads included.
func (g *gen) chunks(b []byte) []*conformpb.Blob {
	var out []*conformpb.Blob
	for _, s := range g.split(b) {
		out = append(out, &conformpb.Blob{Data: s})
	}
	return out
}

// split cuts b at random points: whole, byte at a time, or a few cuts.
func (g *gen) split(b []byte) [][]byte {
	switch g.intn(4) {
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
		n := g.intn(min(len(b), 9) + 1)
		out = append(out, b[:n])
		b = b[n:]
	}
	return out
}

// arrivals returns sequences near the reorder window's edges: runs, gaps,
// duplicates, reorders, two connections, zero references and sequences.
func (g *gen) arrivals() []*conformpb.Arrival {
	var out []*conformpb.Arrival
	seq := map[[2]uint64]uint64{}
	for n := g.intn(40); n > 0; n-- {
		conn, ref := uint64(1+g.intn(2)), uint32(1+g.intn(2))
		if g.chance(0.05) {
			ref = 0
		}
		k := [2]uint64{conn, uint64(ref)}
		s := seq[k]
		switch g.intn(8) {
		case 0:
			s += uint64(1 + g.intn(70)) // a gap, perhaps past the window
		case 1:
			if s > 0 {
				s -= uint64(g.intn(int(min(s, 70)))) // late or duplicate
			}
		case 2:
			s = 0
		default:
			s++
		}
		if s > seq[k] {
			seq[k] = s
		}
		out = append(out, &conformpb.Arrival{Connection: conn, StreamRef: ref, Sequence: s, MonotonicTimestampNs: uint64(len(out)) * 1000})
	}
	return out
}
