package gen

import (
	"fmt"
	"strings"

	"github.com/conform-suite/conform/corpus"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/ref/doppler"
	"google.golang.org/protobuf/proto"
)

// The doppler suite's inputs: doppler messages.

// DopplerMessage returns a doppler message: a header a conforming sender
// writes, with a payload, sometimes chunked, sometimes in the other byte
// order.
func (g *G) DopplerMessage() []byte {
	if g.Chance(0.1) {
		return g.Raw(80)
	}
	order := doppler.LittleEndian
	if g.Chance(0.2) {
		order = doppler.BigEndian
	}
	types := []doppler.Type{doppler.TypeCI8, doppler.TypeCI16, doppler.TypeCI32, doppler.TypeCF32, doppler.TypeCF64, doppler.TypeRaw, doppler.TypeTLM}
	typ := types[g.IntN(len(types))]
	h := doppler.NewHeader(typ, order)
	elem, _ := doppler.ElemSize(h.Kind, h.Format)
	if elem == 0 {
		elem = 1
	}
	n := g.IntN(6)
	payload := make([]byte, n*elem)
	for i := range payload {
		payload[i] = byte(i)
	}
	h.Sequence = uint64(g.IntN(4))
	h.NumSamples = uint64(n)
	h.PayloadBytes = uint64(len(payload))
	var b []byte
	if g.Chance(0.3) {
		h.Flags |= doppler.FlagChunked
		b = doppler.AppendHeader(nil, order, h)
		count := uint32(1 + g.IntN(3))
		b = doppler.AppendChunkBlock(b, order, doppler.ChunkBlock{
			Index: uint32(g.IntN(int(count) + 1)), Count: count,
			TotalSamples: uint64(n) * uint64(count), TotalBytes: uint64(len(payload)) * uint64(count),
		})
	} else {
		b = doppler.AppendHeader(nil, order, h)
	}
	return append(b, payload...)
}

// Reassemble generates an input of doppler.reassemble (and of the live
// SUB target, which plays the same messages on a subject): one to four
// messages.
func Reassemble(g *G) proto.Message {
	in := &conformpb.DopplerReassembleInput{}
	for n := 1 + g.IntN(4); n > 0; n-- {
		in.Messages = append(in.Messages, g.DopplerMessage())
	}
	return &conformpb.DopplerReassemble{Inputs: []*conformpb.DopplerReassembleInput{in}}
}

// DopplerVectors returns the doppler corpus vectors' messages.
func DopplerVectors() ([]Raw, error) {
	ds, err := corpus.Doppler()
	if err != nil {
		return nil, err
	}
	var out []Raw
	for _, v := range ds.All() {
		if len(v.Message) > 0 {
			out = append(out, Raw{"vector:" + v.ID, v.Message})
		}
	}
	return out, nil
}

// PromoteCheck writes a header-check input as a doppler vector
// (corpus/doppler/v1): the message, the transport length, and the verdict
// with the header and chunk block the reference read.
func PromoteCheck(in proto.Message, v Vector, answer Answer) (any, error) {
	op, ok := in.(*conformpb.DopplerCheck)
	if !ok || len(op.GetInputs()) != 1 {
		return nil, fmt.Errorf("a doppler vector holds one DopplerCheckInput, not %T", in)
	}
	out, err := answer(in)
	if err != nil {
		return nil, err
	}
	ci := op.Inputs[0]
	o := out.(*conformpb.DopplerCheckOutput)
	dv := &corpus.DopplerVector{ID: v.ID, Spec: v.Spec, Title: v.Title, Tags: []string{"fuzz"}, Message: ci.Message, TransportLength: ci.TransportLength,
		Verdict: strings.ReplaceAll(strings.ToLower(strings.TrimPrefix(o.Verdict.String(), "DOPPLER_VERDICT_")), "_", "-")}
	if op.Order == conformpb.DopplerByteOrder_DOPPLER_BYTE_ORDER_BIG_ENDIAN {
		dv.Order = "big-endian"
	}
	if h := o.Header; h != nil {
		dv.Header = &corpus.DopplerHeaderFields{Magic: h.Magic, VersionMajor: uint16(h.VersionMajor), VersionMinor: uint16(h.VersionMinor),
			Flags: h.Flags, Kind: uint16(h.Kind), Format: formatChars(h.Format), DataRep: string(h.DataRep),
			Sequence: h.Sequence, TimestampNs: h.TimestampNs, NumSamples: h.NumSamples, PayloadBytes: h.PayloadBytes, SampleRateHz: h.SampleRateHz}
	}
	if c := o.Chunk; c != nil {
		dv.ChunkBlock = &corpus.DopplerChunkFields{ChunkIndex: c.ChunkIndex, ChunkCount: c.ChunkCount, TotalSamples: c.TotalSamples, TotalBytes: c.TotalBytes}
	}
	return dv, nil
}

func formatChars(code uint32) string {
	if code == 0 {
		return ""
	}
	return string([]byte{byte(code), byte(code >> 8)})
}
