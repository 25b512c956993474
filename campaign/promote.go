package campaign

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/conform-suite/conform/corpus"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/sut/impl"
	"google.golang.org/protobuf/proto"
)

// Promote turns a finding into a golden vector of its suite, in the
// suite's corpus format (corpus/<suite>/v1/<name>.json), with the expected
// outcome the reference gives for the finding's input. specRef is the
// section the vector enforces, which only a person can say; id defaults to
// <suite>/v1/fuzz-<signature hash>. Promoting is for the targets whose
// inputs a corpus vector can hold: wire.read-frames, tlv.decode,
// tlv.canonicalize, tlv.validate-path and doppler.check.
func Promote(f *Finding, specRef, id, title string) ([]byte, error) {
	t, inputs, err := f.ParseInputs()
	if err != nil {
		return nil, err
	}
	if len(inputs) != 1 {
		return nil, fmt.Errorf("finding %s needs %d inputs together; a vector holds one", f.Signature, len(inputs))
	}
	if id == "" {
		id = t.Suite + "/v1/fuzz-" + f.Signature[strings.LastIndexByte(f.Signature, '-')+1:]
	}
	if !regexp.MustCompile(`^` + t.Suite + `/v1/[a-z0-9][a-z0-9-]*$`).MatchString(id) {
		return nil, fmt.Errorf("--id %q: a %s vector's ID is %s/v1/NAME, NAME in lower-case letters, digits and dashes", id, t.Suite, t.Suite)
	}
	if title == "" {
		title = fmt.Sprintf("fuzz finding %s: %s %s", f.Signature, f.Kind, f.Detail)
	}
	ref := impl.Reference()
	answer := func(in proto.Message) (proto.Message, error) {
		outs, ans, msg := t.outputs(ref.Handle(context.Background(), t.request([]proto.Message{in})))
		if ans != answerOK || len(outs) != 1 {
			return nil, fmt.Errorf("the reference cannot answer this input (%s); it makes no vector", msg)
		}
		return outs[0], nil
	}
	var v any
	switch t.Name {
	case "wire.read-frames":
		v, err = promoteFrames(inputs[0].(*conformpb.ReadFrames).Inputs[0], answer)
		if err == nil {
			wv := v.(*corpus.Vector)
			wv.ID, wv.Spec, wv.Title, wv.Tags = id, specRef, title, []string{"fuzz"}
		}
	case "tlv.decode":
		in := inputs[0].(*conformpb.TlvDecode).Inputs[0]
		var out proto.Message
		if out, err = answer(inputs[0]); err == nil {
			o := out.(*conformpb.TlvDecodeOutput)
			tv := &corpus.TLVVector{ID: id, Spec: specRef, Title: title, Tags: []string{"fuzz"}, Kind: corpus.TLVFrame,
				Input: joinRope(in.GetFrame())}
			if o.Refusal != nil {
				tv.Refusal = corpus.Status(o.Refusal.Status)
			} else {
				tv.Tree = tlvTree(o.Root)
				if tr := o.Trailer; tr != nil && (tr.TsWidth != 0 || tr.Crc != conformpb.TlvCrc_TLV_CRC_NONE) {
					tv.Trailer = &corpus.TLVTrailer{TSWidth: int(tr.TsWidth), Timestamp: tr.Timestamp, Check: tr.Check,
						CRC: map[conformpb.TlvCrc]string{conformpb.TlvCrc_TLV_CRC_NONE: "none", conformpb.TlvCrc_TLV_CRC_32C: "crc32c", conformpb.TlvCrc_TLV_CRC_64_XZ: "crc64xz"}[tr.Crc]}
				}
			}
			v = tv
		}
	case "tlv.canonicalize":
		path := inputs[0].(*conformpb.TlvCanonicalize).Paths[0]
		var out proto.Message
		if out, err = answer(inputs[0]); err == nil {
			o := out.(*conformpb.TlvCanonicalOutput)
			tv := &corpus.TLVVector{ID: id, Spec: specRef, Title: title, Tags: []string{"fuzz"}, Kind: corpus.TLVPath}
			if s := string(path); isPrintableUTF8(s) {
				tv.Path = &s
			} else {
				tv.PathHex = path
			}
			if o.Refusal != nil {
				tv.Refusal = corpus.Status(o.Refusal.Status)
			} else {
				c := corpus.Bytes(o.Payload)
				tv.Canonical = &c
			}
			v = tv
		}
	case "tlv.validate-path":
		rope := inputs[0].(*conformpb.TlvValidatePath).Payloads[0]
		var out proto.Message
		if out, err = answer(inputs[0]); err == nil {
			o := out.(*conformpb.TlvPathVerdict)
			tv := &corpus.TLVVector{ID: id, Spec: specRef, Title: title, Tags: []string{"fuzz"}, Kind: corpus.TLVPathPayload, Input: joinRope(rope)}
			if o.Refusal != nil {
				tv.Refusal = corpus.Status(o.Refusal.Status)
			} else {
				for _, s := range o.Segments {
					tv.Segments = append(tv.Segments, string(s))
				}
			}
			v = tv
		}
	case "doppler.check":
		op := inputs[0].(*conformpb.DopplerCheck)
		in := op.Inputs[0]
		var out proto.Message
		if out, err = answer(inputs[0]); err == nil {
			o := out.(*conformpb.DopplerCheckOutput)
			dv := &corpus.DopplerVector{ID: id, Spec: specRef, Title: title, Tags: []string{"fuzz"}, Message: in.Message, TransportLength: in.TransportLength,
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
			v = dv
		}
	case "graph.run":
		var out proto.Message
		if out, err = answer(inputs[0]); err == nil {
			var gv *corpus.GraphVector
			if gv, err = promoteGraph(inputs[0].(*conformpb.GraphRun).Scripts[0], out.(*conformpb.GraphScriptOutput)); err == nil {
				gv.ID, gv.Spec, gv.Title, gv.Tags = id, specRef, title, []string{"fuzz"}
				v = gv
			}
		}
	default:
		return nil, fmt.Errorf("target %s has no corpus vector format; promotable targets are wire.read-frames, tlv.decode, tlv.canonicalize, tlv.validate-path, doppler.check and graph.run", t.Name)
	}
	if err != nil {
		return nil, err
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// promoteFrames writes a frame-reading input as a wire vector: the bytes,
// the frames, the reader's state after them and at the end of the stream.
func promoteFrames(in *conformpb.ReadInput, answer func(proto.Message) (proto.Message, error)) (*corpus.Vector, error) {
	var all []byte
	for _, c := range in.Chunks {
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
	v := &corpus.Vector{Input: all, Frames: []corpus.Hex{}}
	for _, y := range o.Yields {
		for _, f := range y.Frames {
			if f.Bytes == nil && f.Length > 0 {
				return nil, fmt.Errorf("a frame of %d bytes is too large for a vector", f.Length)
			}
			v.Frames = append(v.Frames, corpus.Hex(f.Bytes))
		}
	}
	v.End = readEnd(o.End)
	if o.End == conformpb.ReadEnd_READ_END_TOO_LARGE {
		v.Claimed = o.Claimed
	} else {
		v.AtEOS = readEnd(c.End)
	}
	if o.End == conformpb.ReadEnd_READ_END_WAITING {
		b := o.Buffered
		v.Buffered = &b
	}
	return v, nil
}

// maxVectorFill bounds the fill a promoted vector expands into literal
// bytes: a vector file is read by people.
const maxVectorFill = 64 << 10

func readEnd(e conformpb.ReadEnd) string {
	return strings.ToLower(strings.TrimPrefix(e.String(), "READ_END_"))
}

func joinRope(r *conformpb.TlvRope) []byte {
	var b []byte
	for _, s := range r.GetSegments() {
		b = append(b, s...)
	}
	return b
}

func tlvTree(n *conformpb.TlvNode) *corpus.TLVTree {
	if n == nil {
		return nil
	}
	t := &corpus.TLVTree{Type: uint8(n.Type), Opt: uint8(n.Opt), Payload: n.Payload, Trailer: n.Trailer}
	for _, c := range n.Children {
		t.Children = append(t.Children, tlvTree(c))
	}
	return t
}

func formatChars(code uint32) string {
	if code == 0 {
		return ""
	}
	return string([]byte{byte(code), byte(code >> 8)})
}

func isPrintableUTF8(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == 0x7f || r == 0xFFFD {
			return false
		}
	}
	return true
}
