package gen

import (
	"encoding/binary"
	"fmt"

	"github.com/conform-suite/conform/corpus"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/ref/tlv"
	"google.golang.org/protobuf/proto"
)

// The tlv suite's inputs: TLV frames and PATH payloads.

// TLVFrame returns a TLV frame: a random tree, encoded, sometimes with a
// trailer, sometimes with a 6-byte header.
func (g *G) TLVFrame() []byte {
	var b []byte
	if g.Chance(0.7) {
		b = tlvAppend(nil, g.tlvTree(3), g.Chance(0.15))
	} else {
		b = g.Raw(24)
	}
	if g.Chance(0.3) && len(b) >= 4 {
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

func (g *G) tlvTree(depth int) *tlvGenNode {
	n := &tlvGenNode{typ: tlvTypes[g.IntN(len(tlvTypes))]}
	if depth > 0 && g.Chance(0.5) {
		n.pl = true
		for k := g.IntN(4); k > 0; k-- {
			n.children = append(n.children, g.tlvTree(depth-1))
		}
		return n
	}
	if n.typ == byte(tlv.TypePath) {
		n.payload = g.PathPayload()
	} else {
		n.payload = g.Raw(12)
	}
	return n
}

// tlvAppend encodes n as the TLV pins (docs/requirements.md) lay a TLV out: type, opt, a
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
func (g *G) tlvTrailer(b []byte) []byte {
	tsCode := g.IntN(4) // 0, 4, 6, 8 bytes
	crcCode := g.IntN(3)
	b = append([]byte(nil), b...)
	b[1] = b[1]&^0x3C | byte(tsCode)<<2 | byte(crcCode)<<4
	widths := []int{0, 4, 6, 8}
	ts := make([]byte, widths[tsCode])
	for i := range ts {
		ts[i] = byte(g.Uint32())
	}
	b = append(b, ts...)
	switch crcCode {
	case 1:
		b = binary.LittleEndian.AppendUint32(b, uint32(tlv.Checksum(tlv.CRC32C, b)))
	case 2:
		b = binary.LittleEndian.AppendUint64(b, tlv.Checksum(tlv.CRC64XZ, b))
	}
	if g.Chance(0.1) {
		b[len(b)-1] ^= 1
	}
	return b
}

// PathPayload returns PATH records: [u8 len][text], with now and then an
// empty record, a slash, a dot segment or invalid UTF-8.
func (g *G) PathPayload() []byte {
	var b []byte
	segs := []string{"a", "sensor", "temp", ".", "..", "a/b", "", "\xff", "é", "net", "eth", "link"}
	for n := g.IntN(4); n > 0; n-- {
		s := segs[g.IntN(len(segs))]
		b = append(b, byte(len(s)))
		b = append(b, s...)
	}
	if g.Chance(0.1) {
		b = append(b, byte(g.IntN(256)))
	}
	return b
}

// TLVDecode generates an input of tlv.decode: a TLV frame cut into rope
// segments.
func TLVDecode(g *G) proto.Message {
	return &conformpb.TlvDecode{Inputs: []*conformpb.TlvDecodeInput{{Frame: &conformpb.TlvRope{Segments: g.Split(g.TLVFrame())}}}}
}

// TLVVectors returns the bytes of the tlv corpus vectors that have bytes.
func TLVVectors() ([]Raw, error) {
	ts, err := corpus.TLV()
	if err != nil {
		return nil, err
	}
	var out []Raw
	for _, v := range ts.All() {
		if len(v.Input) > 0 {
			out = append(out, Raw{"vector:" + v.ID, v.Input})
		}
	}
	return out, nil
}

// PromoteTLVDecode writes a rope-decoding input as a tlv vector of kind
// frame (corpus/tlv/v1): the bytes, and the tree and trailer the reference
// decoded, or its refusal.
func PromoteTLVDecode(in proto.Message, v Vector, answer Answer) (any, error) {
	op, ok := in.(*conformpb.TlvDecode)
	if !ok || len(op.GetInputs()) != 1 {
		return nil, fmt.Errorf("a tlv vector holds one TlvDecodeInput, not %T", in)
	}
	out, err := answer(in)
	if err != nil {
		return nil, err
	}
	o := out.(*conformpb.TlvDecodeOutput)
	tv := &corpus.TLVVector{ID: v.ID, Spec: v.Spec, Title: v.Title, Tags: []string{"fuzz"}, Kind: corpus.TLVFrame,
		Input: joinRope(op.Inputs[0].GetFrame())}
	if o.Refusal != nil {
		tv.Refusal = corpus.Status(o.Refusal.Status)
		return tv, nil
	}
	tv.Tree = tlvTree(o.Root)
	if tr := o.Trailer; tr != nil && (tr.TsWidth != 0 || tr.Crc != conformpb.TlvCrc_TLV_CRC_NONE) {
		tv.Trailer = &corpus.TLVTrailer{TSWidth: int(tr.TsWidth), Timestamp: tr.Timestamp, Check: tr.Check,
			CRC: map[conformpb.TlvCrc]string{conformpb.TlvCrc_TLV_CRC_NONE: "none", conformpb.TlvCrc_TLV_CRC_32C: "crc32c", conformpb.TlvCrc_TLV_CRC_64_XZ: "crc64xz"}[tr.Crc]}
	}
	return tv, nil
}

// PromoteCanonicalize writes a path-canonicalization input as a tlv vector
// of kind path: the path, and its canonical payload or the refusal.
func PromoteCanonicalize(in proto.Message, v Vector, answer Answer) (any, error) {
	op, ok := in.(*conformpb.TlvCanonicalize)
	if !ok || len(op.GetPaths()) != 1 {
		return nil, fmt.Errorf("a tlv vector holds one path, not %T", in)
	}
	out, err := answer(in)
	if err != nil {
		return nil, err
	}
	o := out.(*conformpb.TlvCanonicalOutput)
	tv := &corpus.TLVVector{ID: v.ID, Spec: v.Spec, Title: v.Title, Tags: []string{"fuzz"}, Kind: corpus.TLVPath}
	if s := string(op.Paths[0]); isPrintableUTF8(s) {
		tv.Path = &s
	} else {
		tv.PathHex = op.Paths[0]
	}
	if o.Refusal != nil {
		tv.Refusal = corpus.Status(o.Refusal.Status)
	} else {
		c := corpus.Bytes(o.Payload)
		tv.Canonical = &c
	}
	return tv, nil
}

// PromoteValidatePath writes a PATH-payload validation input as a tlv
// vector of kind path-payload: the bytes, and the segments or the refusal.
func PromoteValidatePath(in proto.Message, v Vector, answer Answer) (any, error) {
	op, ok := in.(*conformpb.TlvValidatePath)
	if !ok || len(op.GetPayloads()) != 1 {
		return nil, fmt.Errorf("a tlv vector holds one PATH payload, not %T", in)
	}
	out, err := answer(in)
	if err != nil {
		return nil, err
	}
	o := out.(*conformpb.TlvPathVerdict)
	tv := &corpus.TLVVector{ID: v.ID, Spec: v.Spec, Title: v.Title, Tags: []string{"fuzz"}, Kind: corpus.TLVPathPayload, Input: joinRope(op.Payloads[0])}
	if o.Refusal != nil {
		tv.Refusal = corpus.Status(o.Refusal.Status)
	} else {
		for _, s := range o.Segments {
			tv.Segments = append(tv.Segments, string(s))
		}
	}
	return tv, nil
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

func isPrintableUTF8(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == 0x7f || r == 0xFFFD {
			return false
		}
	}
	return true
}
