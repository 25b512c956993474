package doppler

import (
	"fmt"
	"strings"

	"github.com/conform-suite/conform/cases"
	"github.com/conform-suite/conform/corpus"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	dp "github.com/conform-suite/conform/ref/doppler"
)

// Byte orders, as conform.v1 names them.
const (
	little = conformpb.DopplerByteOrder_DOPPLER_BYTE_ORDER_LITTLE_ENDIAN
	big    = conformpb.DopplerByteOrder_DOPPLER_BYTE_ORDER_BIG_ENDIAN
)

// do sends one doppler op and returns its result.
func do(t *cases.T, op *conformpb.DopplerOp) *conformpb.DopplerResult {
	return t.Do(&conformpb.Request{Op: &conformpb.Request_Doppler{Doppler: op}}).GetDoppler()
}

// check runs the SUT's header checks on inputs, as a receiver of order o.
func check(t *cases.T, o conformpb.DopplerByteOrder, inputs []*conformpb.DopplerCheckInput) []*conformpb.DopplerCheckOutput {
	return cases.Batched(t, "doppler check", inputs, func(b []*conformpb.DopplerCheckInput) ([]*conformpb.DopplerCheckOutput, bool) {
		r := do(t, &conformpb.DopplerOp{Op: &conformpb.DopplerOp_Check{Check: &conformpb.DopplerCheck{Order: o, Inputs: b}}}).GetCheck()
		return r.GetOutputs(), r != nil
	})
}

// reassemble feeds each input's messages to a fresh receiver of order o.
func reassemble(t *cases.T, o conformpb.DopplerByteOrder, inputs []*conformpb.DopplerReassembleInput) []*conformpb.DopplerReassembleOutput {
	return cases.Batched(t, "doppler reassemble", inputs, func(b []*conformpb.DopplerReassembleInput) ([]*conformpb.DopplerReassembleOutput, bool) {
		r := do(t, &conformpb.DopplerOp{Op: &conformpb.DopplerOp_Reassemble{Reassemble: &conformpb.DopplerReassemble{Order: o, Inputs: b}}}).GetReassemble()
		return r.GetOutputs(), r != nil
	})
}

// chunk asks the SUT to cut each frame, writing in order o.
func chunk(t *cases.T, o conformpb.DopplerByteOrder, inputs []*conformpb.DopplerChunkInput) []*conformpb.DopplerChunkOutput {
	return cases.Batched(t, "doppler chunk", inputs, func(b []*conformpb.DopplerChunkInput) ([]*conformpb.DopplerChunkOutput, bool) {
		r := do(t, &conformpb.DopplerOp{Op: &conformpb.DopplerOp_Chunk{Chunk: &conformpb.DopplerChunk{Order: o, Inputs: b}}}).GetChunk()
		return r.GetOutputs(), r != nil
	})
}

// pushCheck asks whether PUSH may send each frame size.
func pushCheck(t *cases.T, inputs []*conformpb.DopplerPushInput) []*conformpb.DopplerPushOutput {
	return cases.Batched(t, "doppler push_check", inputs, func(b []*conformpb.DopplerPushInput) ([]*conformpb.DopplerPushOutput, bool) {
		r := do(t, &conformpb.DopplerOp{Op: &conformpb.DopplerOp_PushCheck{PushCheck: &conformpb.DopplerPushCheck{Inputs: b}}}).GetPushCheck()
		return r.GetOutputs(), r != nil
	})
}

// encodeHeader asks the SUT for the header a sender writes.
func encodeHeader(t *cases.T, inputs []*conformpb.DopplerEncodeInput) []*conformpb.DopplerEncodeOutput {
	return cases.Batched(t, "doppler encode_header", inputs, func(b []*conformpb.DopplerEncodeInput) ([]*conformpb.DopplerEncodeOutput, bool) {
		r := do(t, &conformpb.DopplerOp{Op: &conformpb.DopplerOp_EncodeHeader{EncodeHeader: &conformpb.DopplerEncodeHeader{Inputs: b}}}).GetEncodeHeader()
		return r.GetOutputs(), r != nil
	})
}

// sequence sends each input's steps through the SUT's sockets and checks
// that each answer has one entry per step.
func sequence(t *cases.T, inputs []*conformpb.DopplerSequenceInput) []*conformpb.DopplerSequenceOutput {
	outs := cases.Batched(t, "doppler sequence", inputs, func(b []*conformpb.DopplerSequenceInput) ([]*conformpb.DopplerSequenceOutput, bool) {
		r := do(t, &conformpb.DopplerOp{Op: &conformpb.DopplerOp_Sequence{Sequence: &conformpb.DopplerSequence{Inputs: b}}}).GetSequence()
		return r.GetOutputs(), r != nil
	})
	for i, o := range outs {
		if len(o.Sent) != len(inputs[i].Steps) {
			t.Protocolf("doppler sequence: %d steps, %d answers", len(inputs[i].Steps), len(o.Sent))
		}
	}
	return outs
}

// orderOf is a vector's byte order in conform.v1's words.
func orderOf(v *corpus.DopplerVector) conformpb.DopplerByteOrder {
	if v.BigEndian() {
		return big
	}
	return little
}

// refOrder is a conform.v1 byte order in the reference's words.
func refOrder(o conformpb.DopplerByteOrder) dp.Order {
	if o == big {
		return dp.BigEndian
	}
	return dp.LittleEndian
}

// orderName names a byte order for evidence.
func orderName(o conformpb.DopplerByteOrder) string { return refOrder(o).String() }

// typeOf returns the conform.v1 frame type a corpus type name names.
func typeOf(name string) conformpb.DopplerFrameType {
	return conformpb.DopplerFrameType(conformpb.DopplerFrameType_value["DOPPLER_FRAME_TYPE_"+name])
}

// verdictOf returns the verdict the corpus spells slug ("cross-endian").
func verdictOf(slug string) conformpb.DopplerVerdict {
	name := "DOPPLER_VERDICT_" + strings.ToUpper(strings.ReplaceAll(slug, "-", "_"))
	v, ok := conformpb.DopplerVerdict_value[name]
	if !ok {
		panic("conform bug: a corpus vector names the verdict " + slug)
	}
	return conformpb.DopplerVerdict(v)
}

// pbHeader is a corpus header as conform.v1 carries it.
func pbHeader(f *corpus.DopplerHeaderFields) *conformpb.DopplerHeader {
	if f == nil {
		return nil
	}
	format, err := f.FormatCode()
	if err != nil {
		panic("conform bug: a corpus header's format: " + err.Error())
	}
	return &conformpb.DopplerHeader{Magic: f.Magic, VersionMajor: uint32(f.VersionMajor), VersionMinor: uint32(f.VersionMinor),
		Flags: f.Flags, Kind: uint32(f.Kind), Format: uint32(format), DataRep: []byte(f.DataRep), Sequence: f.Sequence,
		TimestampNs: f.TimestampNs, NumSamples: f.NumSamples, PayloadBytes: f.PayloadBytes, SampleRateHz: f.SampleRateHz}
}

// verdictSlug spells a verdict as the corpus does: "cross-endian".
func verdictSlug(v conformpb.DopplerVerdict) string {
	s := strings.TrimPrefix(v.String(), "DOPPLER_VERDICT_")
	return strings.ReplaceAll(strings.ToLower(s), "_", "-")
}

// codeName spells a doppler return code with its C name.
func codeName(c int32) string { return fmt.Sprintf("%d (%s)", c, dp.Code(c)) }

// refHeaderFields renders a reference-decoded header the same way.
func refHeaderFields(h dp.Header) *corpus.DopplerHeaderFields {
	f := &corpus.DopplerHeaderFields{
		Magic: h.Magic, VersionMajor: h.VersionMajor, VersionMinor: h.VersionMinor, Flags: h.Flags,
		Kind: uint16(h.Kind), DataRep: string(h.DataRep[:]), Sequence: h.Sequence, TimestampNs: h.TimestampNs,
		NumSamples: h.NumSamples, PayloadBytes: h.PayloadBytes, SampleRateHz: h.SampleRateHz,
	}
	if h.Format != 0 {
		f.Format = string([]byte{byte(h.Format), byte(h.Format >> 8)})
	}
	return f
}

// describeMessages prints messages for evidence, one per line.
func describeMessages(msgs [][]byte) string {
	var sb strings.Builder
	for i, m := range msgs {
		fmt.Fprintf(&sb, "message %d: %s\n", i, corpus.FormatHex(m))
	}
	return strings.TrimSuffix(sb.String(), "\n")
}

// hexes converts corpus hex to byte slices.
func hexes(hs []corpus.Hex) [][]byte {
	out := make([][]byte, len(hs))
	for i, h := range hs {
		out[i] = h
	}
	return out
}
