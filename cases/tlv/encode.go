package tlv

import (
	"strconv"

	"github.com/conform-suite/conform/cases"
	"github.com/conform-suite/conform/corpus"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
)

// framed is bytes a SUT produced, or its refusal, rendered.
type framed struct {
	Status string `json:",omitempty"`
	Bytes  string
}

func showFramed(x any) string {
	f := x.(framed)
	if f.Status != "" {
		return f.Status
	}
	return f.Bytes
}

func gotFramed(b []byte, r *conformpb.TlvRefusal) framed {
	if r != nil {
		return framed{Status: statusText(r.GetStatus())}
	}
	return framed{Bytes: hexOf(b)}
}

// checkEncode asks the SUT to encode each tree and judges the bytes.
func checkEncode(t *cases.T, what string, trees []*conformpb.TlvNode, wants [][]byte) {
	f := newFailures(t, what)
	for i, out := range encode(t, trees) {
		f.check(nodeOfPB(trees[i]).String(), framed{Bytes: hexOf(wants[i])}, gotFramed(out.GetFrame(), out.GetRefusal()), showFramed)
	}
	f.done()
}

// encoding is the originator's side of the header (RECONSTRUCTED §2 Header)
// and the walk from a tree to the flat wire form (graph model §Nested TLV
// structure).
func (s *suite) encoding() []cases.Case {
	exact := []string{"path-alpha", "status-empty", "path-sensor-temp", "value-one-byte",
		"nested-depth-1", "nested-depth-2", "nested-depth-3", "nested-depth-4", "nested-siblings", "unknown-types"}
	return []cases.Case{
		must(cases.Case{
			ID:      "tlv/" + secNested + "/encode-printed-and-nested",
			Title:   "Encoding a tree writes each header as type, opt and a u16 little-endian payload length, children end to end: the printed and nested vectors' bytes",
			Spec:    spec(secNested, "RECONSTRUCTED §2 Header"),
			Vectors: ids(exact...),
			Run: func(t *cases.T) {
				var trees []*conformpb.TlvNode
				var wants [][]byte
				for _, v := range s.vecs(exact...) {
					trees = append(trees, pbOfVector(v.Tree))
					wants = append(wants, v.Input)
				}
				checkEncode(t, "encoding a tree", trees, wants)
			},
		}),
		reconstructed(must(cases.Case{
			ID:      "tlv/" + secNested + "/encode-ll-when-the-length-needs-it",
			Title:   "Encoding a payload of 0x10000 bytes sets LL and writes the 6-byte header with a u32 little-endian length",
			Spec:    spec(secNested, "RECONSTRUCTED §2 Header"),
			Vectors: ids("ll-10000-long"),
			Run: func(t *cases.T) {
				v := s.vec("ll-10000-long")
				checkEncode(t, "encoding a 0x10000-byte payload", []*conformpb.TlvNode{pbOfVector(v.Tree)}, [][]byte{v.Input})
			},
		})),
		reconstructed(should(cases.Case{
			ID:      "tlv/" + secNested + "/encode-minimal-ll",
			Title:   "A node originating a frame uses the 4-byte header whenever the length is at most 0xFFFF",
			Spec:    spec(secNested, "RECONSTRUCTED §2 Header"),
			Vectors: ids("ll-ffff-short", "ll-nonminimal", "ll-nonminimal-nested"),
			Run: func(t *cases.T) {
				var trees []*conformpb.TlvNode
				var wants [][]byte
				for _, v := range s.vecs("ll-ffff-short", "ll-nonminimal", "ll-nonminimal-nested") {
					trees = append(trees, pbOfVector(v.Tree))
					wants = append(wants, minimalForm(v.Tree))
				}
				checkEncode(t, "encoding with a length that fits 16 bits", trees, wants)
			},
		})),
	}
}

// minimalForm writes a vector tree as an originator does: minimal headers,
// no trailers.
func minimalForm(n *corpus.TLVTree) []byte {
	payload := n.Payload
	if n.Opt&0x01 != 0 {
		payload = nil
		for _, c := range n.Children {
			payload = append(payload, minimalForm(c)...)
		}
	}
	return append(header(n.Type, n.Opt&0x01, len(payload)), payload...)
}

// trailers is graph model §Payload invariance across boundaries: the trailer
// is append-only at egress and strip-only at ingress, and the payload bytes
// are never touched; RECONSTRUCTED §2 Trailer gives its layout and checks.
func (s *suite) trailers() []cases.Case {
	ts := spec(secInvariance, "RECONSTRUCTED §2 Trailer")
	withTrailer := s.kind(corpus.TLVFrame, func(v *corpus.TLVVector) bool { return v.Trailer != nil })
	mismatches := []string{"crc32c-mismatch", "crc64xz-payload-flipped", "crc32c-timestamp-covered", "crc32c-over-payload-only", "child-trailer-bad-crc"}
	return []cases.Case{
		reconstructed(must(cases.Case{
			ID:      "tlv/" + secInvariance + "/trailer-stripped-at-ingress",
			Title:   "At ingress the trailer is validated and stripped: the tree at rest has TS and CRC clear, no trailer, and the payload bytes as sent",
			Spec:    ts,
			Vectors: idsOf(withTrailer),
			Run: func(t *cases.T) {
				decodeEach(t, "a frame received with a trailer", withTrailer, false, whole)
			},
		})),
		reconstructed(must(cases.Case{
			ID:      "tlv/" + secInvariance + "/trailer-timestamp-then-check",
			Title:   "The trailer holds the timestamp first, then the check, both little-endian, in the widths opt.TS and opt.CRC give",
			Spec:    ts,
			Vectors: idsOf(withTrailer),
			Run: func(t *cases.T) {
				decodeEach(t, "the trailer a frame carried", withTrailer, true, whole)
			},
		})),
		reconstructed(must(cases.Case{
			ID:      "tlv/" + secInvariance + "/crc-checked-at-ingress",
			Title:   "A check that does not match header, payload and timestamp, at the root or in a child, refuses the frame with tr::tlv::crc_mismatch",
			Spec:    ts,
			Vectors: ids(mismatches...),
			Run: func(t *cases.T) {
				decodeEach(t, "a frame whose check does not match", s.vecs(mismatches...), false, whole)
			},
		})),
		reconstructed(must(cases.Case{
			ID:      "tlv/" + secInvariance + "/egress-attaches-trailer",
			Title:   "At egress the trailer is appended after the untouched payload: TS and CRC set in opt, the injected clock truncated, the check over every byte before it",
			Spec:    ts,
			Vectors: idsOf(withTrailer),
			Run: func(t *cases.T) {
				var ins []*conformpb.TlvEgressInput
				var wants [][]byte
				for _, v := range withTrailer {
					ins = append(ins, &conformpb.TlvEgressInput{Frame: ropeOf(atRest(v)), Trailer: egressOf(v.Trailer.TSWidth, v.Trailer.CRC, v.Clock)})
					wants = append(wants, v.Input)
				}
				checkEgress(t, "a frame at rest sent with a trailer", ins, wants)
			},
		})),
		reconstructed(must(cases.Case{
			ID:      "tlv/" + secInvariance + "/egress-replaces-trailer",
			Title:   "A frame that arrived with one trailer leaves with the egress link's own, or with none, and the same payload bytes",
			Spec:    ts,
			Vectors: ids("trailer-ts8-crc64xz", "trailer-ts4-crc32c", "trailer-ts6-none", "path-alpha"),
			Run: func(t *cases.T) {
				from := s.vec("trailer-ts8-crc64xz")
				var ins []*conformpb.TlvEgressInput
				var wants [][]byte
				for _, to := range s.vecs("trailer-ts4-crc32c", "trailer-ts6-none") {
					ins = append(ins, &conformpb.TlvEgressInput{Frame: ropeOf(from.Input), Trailer: egressOf(to.Trailer.TSWidth, to.Trailer.CRC, to.Clock)})
					wants = append(wants, to.Input)
				}
				ins = append(ins, &conformpb.TlvEgressInput{Frame: ropeOf(from.Input), Trailer: &conformpb.TlvEgressTrailer{}})
				wants = append(wants, s.vec("path-alpha").Input)
				checkEgress(t, "a received frame sent on with another trailer", ins, wants)
			},
		})),
	}
}

func egressOf(width int, crc string, clock uint64) *conformpb.TlvEgressTrailer {
	return &conformpb.TlvEgressTrailer{TsWidth: uint32(width), Crc: crcOf(crc), ClockUnixNs: clock}
}

func showEgressInput(in *conformpb.TlvEgressInput) string {
	tr := in.GetTrailer()
	return showRope(in.GetFrame()) + "; egress ts_width " + itoa(tr.GetTsWidth()) + ", crc " + tr.GetCrc().String() + ", clock " + itoa(tr.GetClockUnixNs())
}

func checkEgress(t *cases.T, what string, ins []*conformpb.TlvEgressInput, wants [][]byte) {
	f := newFailures(t, what)
	for i, out := range egress(t, ins) {
		f.check(showEgressInput(ins[i]), framed{Bytes: hexOf(wants[i])}, gotFramed(out.GetFrame(), out.GetRefusal()), showFramed)
	}
	f.done()
}

func itoa[T ~uint32 | ~uint64](v T) string { return strconv.FormatUint(uint64(v), 10) }
