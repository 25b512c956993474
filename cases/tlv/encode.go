package tlv

import (
	"strconv"

	"github.com/conform-suite/conform/cases"
	"github.com/conform-suite/conform/corpus"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
)

// checkEncode asks the SUT to encode each tree and judges the frame it
// wrote against want. The declaration compares a frame with its headers in
// their minimal form at MUST and byte for byte at SHOULD (an originator
// SHOULD write the 4-byte header whenever the length fits 16 bits), so a
// MUST case (should false) fails only on what the MUST breaks.
func checkEncode(t *cases.T, what string, trees []*conformpb.TlvNode, wants [][]byte, should bool) {
	f := newFailures(t, what)
	f.should = should
	for i, out := range encode(t, trees) {
		f.answer(nodeOfPB(trees[i]).String(), &conformpb.TlvEncodeInput{Tree: trees[i]}, &conformpb.TlvEncodeOutput{Frame: wants[i]}, out, "frame", "refusal")
	}
	f.done()
}

// checkEncodeAnyForm asks the SUT to encode each vector's tree and judges
// the frame it wrote as the tree it holds, each header in either form.
func checkEncodeAnyForm(t *cases.T, what string, vs []*corpus.TLVVector) {
	var trees [][]byte
	var ns []*conformpb.TlvNode
	for _, v := range vs {
		ns = append(ns, pbOfVector(v.Tree))
		trees = append(trees, v.Input)
	}
	checkEncode(t, what, ns, trees, false)
}

// encoding is the originator's side of the header (reconstructed§tlv-header)
// and the walk from a tree to the flat wire form (graph model §Nested TLV
// structure).
func encoding(k *cases.Kit, vs *vectors) []cases.Case {
	exact := []string{"path-alpha", "status-empty", "path-sensor-temp", "value-one-byte",
		"nested-depth-1", "nested-depth-2", "nested-depth-3", "nested-depth-4", "nested-siblings", "unknown-types"}
	return []cases.Case{
		k.Must(func() cases.Case {
			printed := vs.List(exact...)
			return cases.Case{
				ID: "tlv/nested-tlv-structure/encode-printed-and-nested",
				// The form of each header is the writer's choice at this level:
				// encode-minimal-ll judges the SHOULD that picks the 4-byte one.
				Title: "Encoding a tree writes each header as type, opt and a little-endian length of the payload alone, children end to end: the printed and nested vectors' trees, each header in either form",
				Spec:  "libtracer-graph-model §nested-tlv-structure, §the-structured-tlv-in-memory",
				Requirements: []string{
					"libtracer-graph-model§nested-tlv-structure#1",
					"libtracer-graph-model§the-structured-tlv-in-memory#1",
					"reconstructed§tlv-header#1",
					"reconstructed§tlv-header#2",
				},
				Run: func(t *cases.T) { checkEncodeAnyForm(t, "encoding a tree", printed) },
			}
		}),
		k.Must(func() cases.Case {
			long := vs.Get("ll-10000-long")
			return cases.Case{
				ID:    "tlv/nested-tlv-structure/encode-ll-when-the-length-needs-it",
				Title: "Encoding a payload of 0x10000 bytes sets LL and writes the 6-byte header with a u32 little-endian length",
				Spec:  "libtracer-graph-model §nested-tlv-structure",
				Requirements: []string{
					"reconstructed§tlv-header#1",
					"reconstructed§tlv-opt-bits#2",
				},
				Run: func(t *cases.T) {
					checkEncode(t, "encoding a 0x10000-byte payload", []*conformpb.TlvNode{pbOfVector(long.Tree)}, [][]byte{long.Input}, false)
				},
			}
		}),
		k.Should(func() cases.Case {
			all := vs.List(append([]string{"ll-ffff-short", "ll-nonminimal", "ll-nonminimal-nested"}, exact...)...)
			return cases.Case{
				ID:           "tlv/nested-tlv-structure/encode-minimal-ll",
				Title:        "A node originating a frame uses the 4-byte header whenever the length is at most 0xFFFF, even for a tree received with LL headers",
				Spec:         "libtracer-graph-model §nested-tlv-structure",
				Requirements: []string{"reconstructed§tlv-header#3"},
				Run: func(t *cases.T) {
					var trees []*conformpb.TlvNode
					var wants [][]byte
					for _, v := range all {
						trees = append(trees, pbOfVector(v.Tree))
						wants = append(wants, minimalForm(v.Tree))
					}
					checkEncode(t, "encoding with lengths that fit 16 bits", trees, wants, true)
				},
			}
		}),
	}
}

// minimalForm writes a vector tree as an originator should: minimal headers,
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
// are never touched; reconstructed§tlv-trailer gives its layout and checks.
func trailers(k *cases.Kit, vs *vectors) []cases.Case {
	withTrailer := func() []*corpus.TLVVector {
		return ofKind(vs, corpus.TLVFrame, func(v *corpus.TLVVector) bool { return v.Trailer != nil })
	}
	return []cases.Case{
		k.Must(func() cases.Case {
			all := withTrailer()
			return cases.Case{
				ID:    "tlv/payload-invariance-across-boundaries/trailer-stripped-at-ingress",
				Title: "At ingress the trailer is validated and stripped: the tree at rest has TS and CRC clear, no trailer, and the payload bytes as sent",
				Spec:  "libtracer-graph-model §payload-invariance-across-boundaries, §nested-tlv-structure",
				Requirements: []string{
					"libtracer-graph-model§payload-invariance-across-boundaries#1",
					"libtracer-graph-model§payload-invariance-across-boundaries#2",
					"libtracer-graph-model§payload-invariance-across-boundaries#4",
					"libtracer-graph-model§payload-invariance-across-boundaries#7",
					"libtracer-graph-model§payload-invariance-across-boundaries#8",
					"libtracer-graph-model§nested-tlv-structure#5",
					"reconstructed§contradictions#4",
					"reconstructed§tlv-header#2",
					"reconstructed§tlv-opt-bits#3",
					"reconstructed§tlv-opt-bits#4",
					"reconstructed§tlv-trailer#4",
					"reconstructed§tlv-trailer#5",
					"reconstructed§tlv-trailer#7",
				},
				Run: func(t *cases.T) { decodeEach(t, "a frame received with a trailer", all, false, whole) },
			}
		}),
		k.Must(func() cases.Case {
			all := withTrailer()
			return cases.Case{
				ID:    "tlv/payload-invariance-across-boundaries/trailer-timestamp-then-check",
				Title: "The trailer holds the timestamp first, then the check, both little-endian, in the widths opt.TS and opt.CRC give",
				Spec:  "libtracer-graph-model §payload-invariance-across-boundaries, §nested-tlv-structure",
				Requirements: []string{
					"libtracer-graph-model§nested-tlv-structure#5",
					"reconstructed§tlv-opt-bits#3",
					"reconstructed§tlv-opt-bits#4",
					"reconstructed§tlv-trailer#1",
				},
				Run: func(t *cases.T) { decodeEach(t, "the trailer a frame carried", all, true, whole) },
			}
		}),
		k.Must(func() cases.Case {
			bad := vs.List("crc32c-mismatch", "crc64xz-payload-flipped", "crc32c-timestamp-covered", "crc32c-over-payload-only", "child-trailer-bad-crc")
			return cases.Case{
				ID:    "tlv/payload-invariance-across-boundaries/crc-checked-at-ingress",
				Title: "A check that does not match header, payload and timestamp, at the root or in a child, refuses the frame with tr::tlv::crc_mismatch",
				Spec:  "libtracer-graph-model §payload-invariance-across-boundaries, §nested-tlv-structure",
				Requirements: []string{
					"libtracer-graph-model§nested-tlv-structure#4",
					"libtracer-graph-model§nested-tlv-structure#6",
					"libtracer-graph-model§payload-invariance-across-boundaries#4",
					"reconstructed§tlv-opt-bits#4",
					"reconstructed§tlv-status#2",
					"reconstructed§tlv-trailer#3",
					"reconstructed§tlv-trailer#6",
				},
				Run: func(t *cases.T) { decodeEach(t, "a frame whose check does not match", bad, false, whole) },
			}
		}),
		k.Must(func() cases.Case {
			checks := vs.List("crc32c-check-value", "crc64xz-check-value")
			return cases.Case{
				ID: "tlv/payload-invariance-across-boundaries/crc-check-values",
				Title: "The checks are CRC-32C and CRC-64/XZ as catalogued: a frame whose check is the check value of \"123456789\" " +
					"(0xE3069283, 0x995DC9BBDF1939FA) decodes with that check, and egress writes it",
				Spec: "libtracer-graph-model §payload-invariance-across-boundaries",
				Requirements: []string{
					"reconstructed§tlv-trailer#4",
					"reconstructed§tlv-trailer#5",
				},
				Run: func(t *cases.T) {
					decodeEach(t, "a frame whose check is a check value", checks, true, whole)
					var ins []*conformpb.TlvEgressInput
					var wants [][]byte
					for _, v := range checks {
						ins = append(ins, &conformpb.TlvEgressInput{Frame: ropeOf(atRest(v)), Trailer: egressOf(v.Trailer.TSWidth, v.Trailer.CRC, v.Clock)})
						wants = append(wants, v.Input)
					}
					checkEgress(t, "a frame at rest sent with a check", ins, wants)
				},
			}
		}),
		k.Must(func() cases.Case {
			all := withTrailer()
			return cases.Case{
				ID: "tlv/payload-invariance-across-boundaries/egress-attaches-trailer",
				// Egress only appends: the header is the one the frame holds,
				// LL as it is, with TS and CRC set.
				Title: "At egress the trailer is appended after the untouched header and payload: TS and CRC set in opt, the injected clock truncated, the check over every byte before it",
				Spec:  "libtracer-graph-model §payload-invariance-across-boundaries, §nested-tlv-structure",
				Requirements: []string{
					"libtracer-graph-model§nested-tlv-structure#6",
					"libtracer-graph-model§payload-invariance-across-boundaries#1",
					"libtracer-graph-model§payload-invariance-across-boundaries#3",
					"libtracer-graph-model§payload-invariance-across-boundaries#7",
					"reconstructed§tlv-trailer#2",
					"reconstructed§tlv-trailer#3",
					"reconstructed§tlv-trailer#4",
					"reconstructed§tlv-trailer#5",
					"reconstructed§tlv-trailer#7",
				},
				Run: func(t *cases.T) {
					var ins []*conformpb.TlvEgressInput
					var wants [][]byte
					for _, v := range all {
						ins = append(ins, &conformpb.TlvEgressInput{Frame: ropeOf(atRest(v)), Trailer: egressOf(v.Trailer.TSWidth, v.Trailer.CRC, v.Clock)})
						wants = append(wants, v.Input)
					}
					checkEgress(t, "a frame at rest sent with a trailer", ins, wants)
				},
			}
		}),
		k.Must(func() cases.Case {
			from := vs.Get("trailer-ts8-crc64xz")
			to := vs.List("trailer-ts4-crc32c", "trailer-ts6-none")
			bare := vs.Get("path-alpha")
			return cases.Case{
				ID:    "tlv/payload-invariance-across-boundaries/egress-replaces-trailer",
				Title: "A frame that arrived with one trailer leaves with the egress link's own, or with none, and the same payload bytes",
				Spec:  "libtracer-graph-model §payload-invariance-across-boundaries",
				Requirements: []string{
					"libtracer-graph-model§payload-invariance-across-boundaries#1",
					"libtracer-graph-model§payload-invariance-across-boundaries#5",
					"reconstructed§tlv-trailer#7",
				},
				Run: func(t *cases.T) {
					var ins []*conformpb.TlvEgressInput
					var wants [][]byte
					for _, v := range to {
						ins = append(ins, &conformpb.TlvEgressInput{Frame: ropeOf(from.Input), Trailer: egressOf(v.Trailer.TSWidth, v.Trailer.CRC, v.Clock)})
						wants = append(wants, v.Input)
					}
					ins = append(ins, &conformpb.TlvEgressInput{Frame: ropeOf(from.Input), Trailer: &conformpb.TlvEgressTrailer{}})
					wants = append(wants, bare.Input)
					checkEgress(t, "a received frame sent on with another trailer", ins, wants)
				},
			}
		}),
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
		f.answer(showEgressInput(ins[i]), ins[i], &conformpb.TlvEgressOutput{Frame: wants[i]}, out, "frame", "refusal")
	}
	f.done()
}

func itoa[T ~uint32 | ~uint64](v T) string { return strconv.FormatUint(uint64(v), 10) }
