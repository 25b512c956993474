package gen

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"

	"github.com/conform-suite/conform/corpus"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/ref/wire"
	"github.com/conform-suite/conform/sut/impl"
	"google.golang.org/protobuf/proto"
)

// The wire suite's inputs: Ranvier frames and messages.

// Frames returns one to four Ranvier frames, their lengths at the edges:
// empty payloads, payloads that decode as Frames, and now and then a prefix
// past the ceiling or a frame cut short.
func (g *G) Frames() []byte {
	var b []byte
	for n := 1 + g.IntN(4); n > 0; n-- {
		var p []byte
		switch g.IntN(4) {
		case 0:
		case 1:
			p = g.RanvierMessage()
		default:
			p = g.Raw(24)
		}
		b = binary.BigEndian.AppendUint32(b, uint32(len(p)))
		b = append(b, p...)
	}
	switch g.IntN(6) {
	case 0: // a prefix past the ceiling
		b = binary.BigEndian.AppendUint32(b, uint32(g.Edge()))
	case 1: // a frame cut short
		if len(b) > 0 {
			b = b[:g.IntN(len(b))]
		}
	}
	return b
}

// RanvierMessage returns an encoded ranvier message: a Frame holding a
// Sample or a StreamInfo, sometimes with unknown fields, or random bytes.
func (g *G) RanvierMessage() []byte {
	if g.Chance(0.2) {
		return g.Raw(32)
	}
	table := ranvierMessages()
	b := append([]byte(nil), table[g.IntN(len(table))]...)
	if g.Chance(0.2) { // an unknown field, varint, number 9 or 1000
		tag := []byte{9 << 3}
		if g.Chance(0.5) {
			tag = []byte{0xC0, 0x3E}
		}
		b = append(append(b, tag...), byte(g.IntN(128)))
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
	g := New(rand.New(rand.NewPCG(1, 2)), Bytes)
	names := []string{"ranvier.message.v1.Frame", "ranvier.message.v1.Sample", "ranvier.message.v1.StreamInfo"}
	var out [][]byte
	for i := 0; i < 256; i++ {
		mt, err := wire.MessageType(names[i%len(names)])
		if err != nil {
			continue
		}
		m := mt.New()
		g.Fill(m, 3)
		b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m.Interface())
		if err == nil {
			out = append(out, b)
		}
	}
	return out
}

// Chunks cuts b into reads at random points, empty reads included.
func (g *G) Chunks(b []byte) []*conformpb.Blob {
	var out []*conformpb.Blob
	for _, s := range g.Split(b) {
		out = append(out, &conformpb.Blob{Data: s})
	}
	return out
}

// ReadFrames generates an input of wire.read-frames: frames cut into
// reads, the stream ended or not.
func ReadFrames(g *G) proto.Message {
	return &conformpb.ReadFrames{Inputs: []*conformpb.ReadInput{{
		Chunks: g.Chunks(g.Frames()), EndOfStream: g.Chance(0.5),
	}}}
}

// WireVectors returns the wire corpus vectors' bytes.
func WireVectors() ([]Raw, error) {
	ws, err := corpus.Wire()
	if err != nil {
		return nil, err
	}
	var out []Raw
	for _, v := range ws.All() {
		out = append(out, Raw{"vector:" + v.ID, v.Input})
	}
	return out, nil
}

// maxVectorFill bounds the fill a promoted vector expands into literal
// bytes: a vector file is read by people.
const maxVectorFill = 64 << 10

// PromoteReadFrames writes a frame-reading input as a wire vector
// (corpus/wire/v1): the bytes, the frames, the reader's state after them
// and at the end of the stream.
func PromoteReadFrames(in proto.Message, v Vector, answer Answer) (any, error) {
	op, ok := in.(*conformpb.ReadFrames)
	if !ok || len(op.GetInputs()) != 1 {
		return nil, fmt.Errorf("a wire vector holds one ReadInput, not %T", in)
	}
	var all []byte
	for _, c := range op.Inputs[0].GetChunks() {
		if c.GetFill().GetLength() > maxVectorFill {
			return nil, fmt.Errorf("the input describes a %d-byte chunk by a fill pattern; a vector holds literal bytes, at most %d of them", c.GetFill().GetLength(), maxVectorFill)
		}
		b, err := impl.Expand(c)
		if err != nil {
			return nil, err
		}
		all = append(all, b...)
	}
	open, err := answer(&conformpb.ReadFrames{Inputs: []*conformpb.ReadInput{{Chunks: []*conformpb.Blob{{Data: all}}}}})
	if err != nil {
		return nil, err
	}
	closed, err := answer(&conformpb.ReadFrames{Inputs: []*conformpb.ReadInput{{Chunks: []*conformpb.Blob{{Data: all}}, EndOfStream: true}}})
	if err != nil {
		return nil, err
	}
	o, c := open.(*conformpb.ReadOutput), closed.(*conformpb.ReadOutput)
	wv := &corpus.Vector{ID: v.ID, Spec: v.Spec, Title: v.Title, Tags: []string{"fuzz"}, Input: all, Frames: []corpus.Hex{}}
	for _, y := range o.Yields {
		for _, f := range y.Frames {
			if f.Bytes == nil && f.Length > 0 {
				return nil, fmt.Errorf("a frame of %d bytes is too large for a vector", f.Length)
			}
			wv.Frames = append(wv.Frames, corpus.Hex(f.Bytes))
		}
	}
	wv.End = readEnd(o.End)
	if o.End == conformpb.ReadEnd_READ_END_TOO_LARGE {
		wv.Claimed = o.Claimed
	} else {
		wv.AtEOS = readEnd(c.End)
	}
	if o.End == conformpb.ReadEnd_READ_END_WAITING {
		b := o.Buffered
		wv.Buffered = &b
	}
	return wv, nil
}

func readEnd(e conformpb.ReadEnd) string {
	return strings.ToLower(strings.TrimPrefix(e.String(), "READ_END_"))
}
