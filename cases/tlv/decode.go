package tlv

import (
	"fmt"

	"github.com/conform-suite/conform/cases"
	"github.com/conform-suite/conform/corpus"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
)

// ropes is graph model §The two compositions: a rope is storage, blind to
// TLV structure, and a view boundary may fall anywhere, so a conforming
// decoder link-walks the rope and decodes every rope over the same bytes to
// the same tree.
func ropes(k *cases.Kit, vs *vectors) []cases.Case {
	return []cases.Case{
		k.Must(func() cases.Case {
			alpha := vs.Get("path-alpha")
			return cases.Case{
				ID:    "tlv/the-two-compositions-storage-and-meaning/printed-header-split",
				Title: "PATH /alpha split as the graph model draws it, [06 00 06] [00 05 61 6c 70 68 61], decodes as the contiguous frame does",
				Spec:  "libtracer-graph-model §the-two-compositions-storage-and-meaning",
				Requirements: []string{
					"libtracer-graph-model§the-two-compositions-storage-and-meaning#1",
					"libtracer-graph-model§the-two-compositions-storage-and-meaning#2",
				},
				Run: func(t *cases.T) {
					drawn := func(_ *cases.T, b []byte) []*conformpb.TlvRope {
						return []*conformpb.TlvRope{ropeOf(b[:3], b[3:]), ropeOf(b[:3], b[3:4], b[4:])}
					}
					decodeEach(t, "the frame whose header straddles segments A and B", []*corpus.TLVVector{alpha}, false, drawn)
				},
			}
		}),
		k.Must(func() cases.Case {
			all := decodable(vs)
			return cases.Case{
				ID:    "tlv/the-two-compositions-storage-and-meaning/every-two-segment-split",
				Title: "Every decodable vector split into two segments at every point decodes to the same tree as the contiguous frame",
				Spec:  "libtracer-graph-model §the-two-compositions-storage-and-meaning, §structured-tlv-as-abstraction-memory-as-rope",
				Requirements: []string{
					"libtracer-graph-model§the-two-compositions-storage-and-meaning#1",
					"libtracer-graph-model§structured-tlv-as-abstraction-memory-as-rope#5",
				},
				Run: func(t *cases.T) { decodeEach(t, "a frame split into two segments", all, false, twoSplits) },
			}
		}),
		k.Must(func() cases.Case {
			all := decodable(vs)
			return cases.Case{
				ID:    "tlv/the-two-compositions-storage-and-meaning/three-segment-splits",
				Title: "Every decodable vector split into three segments at sampled points decodes to the same tree as the contiguous frame",
				Spec:  "libtracer-graph-model §the-two-compositions-storage-and-meaning, §structured-tlv-as-abstraction-memory-as-rope",
				Requirements: []string{
					"libtracer-graph-model§the-two-compositions-storage-and-meaning#1",
					"libtracer-graph-model§structured-tlv-as-abstraction-memory-as-rope#5",
				},
				Run: func(t *cases.T) { decodeEach(t, "a frame split into three segments", all, false, threeSplitsOf) },
			}
		}),
		k.Must(func() cases.Case {
			all := decodable(vs)
			return cases.Case{
				ID:    "tlv/the-two-compositions-storage-and-meaning/one-byte-per-segment",
				Title: "Every decodable vector given as one byte per segment decodes to the same tree as the contiguous frame",
				Spec:  "libtracer-graph-model §the-two-compositions-storage-and-meaning, §structured-tlv-as-abstraction-memory-as-rope",
				Requirements: []string{
					"libtracer-graph-model§the-two-compositions-storage-and-meaning#1",
					"libtracer-graph-model§structured-tlv-as-abstraction-memory-as-rope#5",
				},
				Run: func(t *cases.T) {
					decodeEach(t, "a frame given one byte per segment", all, false,
						func(_ *cases.T, b []byte) []*conformpb.TlvRope { return []*conformpb.TlvRope{bytewise(b)} })
				},
			}
		}),
		k.Must(func() cases.Case {
			bad := refused(vs)
			return cases.Case{
				ID:    "tlv/the-two-compositions-storage-and-meaning/refusals-whatever-the-split",
				Title: "A frame that must be refused is refused with the same status however its bytes are split",
				Spec:  "libtracer-graph-model §the-two-compositions-storage-and-meaning",
				Requirements: []string{
					"libtracer-graph-model§the-two-compositions-storage-and-meaning#1",
					"reconstructed§tlv-status#2",
				},
				Run: func(t *cases.T) { decodeEach(t, "a refused frame presented in segments", bad, false, everySplitting) },
			}
		}),
		k.Must(func() cases.Case {
			payloads := ofKind(vs, corpus.TLVPathPayload, nil)
			return cases.Case{
				ID:    "tlv/the-two-compositions-storage-and-meaning/path-record-split",
				Title: "A received PATH payload gets the same verdict and segments wherever a record's length byte and its text are split",
				Spec:  "libtracer-graph-model §the-two-compositions-storage-and-meaning",
				Requirements: []string{
					"libtracer-graph-model§the-two-compositions-storage-and-meaning#3",
					"reconstructed§tlv-path#4",
				},
				Run: func(t *cases.T) {
					checkPathPayloads(t, "a PATH payload presented in segments", payloads, everySplitting)
				},
			}
		}),
	}
}

// headers is the TLV header: 4 bytes, or 6 with opt.LL, type, opt and a
// little-endian length counting the payload alone (graph model §Nested TLV
// structure; reconstructed§tlv-header and §tlv-opt-bits, from the printed
// vectors).
func headers(k *cases.Kit, vs *vectors) []cases.Case {
	refuse := func(id, title string, reqs []string, names ...string) cases.Case {
		return k.Must(func() cases.Case {
			bad := vs.List(names...)
			return cases.Case{
				ID: id, Title: title, Spec: "libtracer-graph-model §nested-tlv-structure", Requirements: reqs,
				Run: func(t *cases.T) { decodeEach(t, title, bad, false, whole) },
			}
		})
	}
	return []cases.Case{
		k.Must(func() cases.Case {
			printed := vs.List("path-alpha", "status-empty", "path-sensor-temp", "value-one-byte")
			return cases.Case{
				ID:    "tlv/nested-tlv-structure/printed-vectors-decode",
				Title: "The printed frames decode as printed: byte 0 the type, byte 1 opt, then a u16 little-endian length counting the payload alone",
				Spec:  "libtracer-graph-model §nested-tlv-structure, §the-two-compositions-storage-and-meaning",
				Requirements: []string{
					"libtracer-graph-model§the-two-compositions-storage-and-meaning#2",
					"libtracer-graph-model§structured-tlv-as-abstraction-memory-as-rope#5",
					"reconstructed§tlv-header#1",
					"reconstructed§tlv-header#2",
				},
				Run: func(t *cases.T) { decodeEach(t, "a printed frame", printed, false, whole) },
			}
		}),
		k.Must(func() cases.Case {
			edge := vs.List("ll-ffff-short", "ll-10000-long")
			return cases.Case{
				ID:    "tlv/nested-tlv-structure/ll-length-boundaries",
				Title: "A payload of 0xFFFF bytes fits the 4-byte header and one of 0x10000 bytes is read through the 6-byte LL header's u32 length",
				Spec:  "libtracer-graph-model §nested-tlv-structure",
				Requirements: []string{
					"reconstructed§tlv-header#1",
					"reconstructed§tlv-opt-bits#2",
				},
				Run: func(t *cases.T) { decodeEach(t, "a frame at the LL boundary", edge, false, whole) },
			}
		}),
		k.Must(func() cases.Case {
			long := vs.List("ll-nonminimal", "ll-nonminimal-nested", "trailer-ll-structured")
			return cases.Case{
				ID:    "tlv/nested-tlv-structure/non-minimal-ll-accepted",
				Title: "A reader accepts a non-minimal LL header (a short length in the 6-byte form) and keeps LL in the TLV's opt",
				Spec:  "libtracer-graph-model §nested-tlv-structure",
				Requirements: []string{
					"libtracer-graph-model§nested-tlv-structure#2",
					"reconstructed§tlv-header#4",
					"reconstructed§tlv-opt-bits#2",
				},
				Run: func(t *cases.T) { decodeEach(t, "a frame with a non-minimal LL header", long, false, whole) },
			}
		}),
		refuse("tlv/nested-tlv-structure/reserved-opt-bits-refused", "A reader refuses a TLV with opt bit 6 or 7 set, at the root or in a child",
			[]string{"reconstructed§tlv-opt-bits#5", "reconstructed§tlv-status#2", "libtracer-graph-model§the-six-layer-model#1"},
			"reserved-bit-6", "reserved-bit-7", "reserved-bit-child"),
		refuse("tlv/nested-tlv-structure/crc-code-3-refused", "A reader refuses a TLV whose opt CRC field is the reserved code 3",
			[]string{"reconstructed§tlv-opt-bits#6", "reconstructed§tlv-status#2"},
			"crc-code-3", "crc-code-3-with-bytes"),
		refuse("tlv/nested-tlv-structure/type-zero-refused", "A reader refuses a TLV of type 0x00, at the root or in a child",
			[]string{"reconstructed§tlv-header#6", "reconstructed§tlv-status#2"},
			"type-zero", "type-zero-child"),
		refuse("tlv/nested-tlv-structure/length-beyond-bytes-refused", "A length or trailer that claims more bytes than the frame or parent holds, or bytes after the frame, is tr::tlv::malformed",
			[]string{"libtracer-graph-model§nested-tlv-structure#1", "reconstructed§tlv-header#7", "reconstructed§tlv-status#2"},
			"length-beyond-input", "length-ll-max", "child-overruns-parent", "child-header-cut", "child-trailer-overruns", "header-short", "bytes-after-frame"),
		k.Must(func() cases.Case {
			all := decodable(vs)
			return cases.Case{
				ID:    "tlv/nested-tlv-structure/truncated-at-every-byte",
				Title: "Every decodable vector cut short at every byte is refused as tr::tlv::malformed, never read past its end",
				Spec:  "libtracer-graph-model §nested-tlv-structure",
				Requirements: []string{
					"reconstructed§tlv-header#7",
					"reconstructed§tlv-status#2",
				},
				Run: func(t *cases.T) {
					var ropes []*conformpb.TlvRope
					for _, v := range all {
						var cuts []int
						if len(v.Input) <= everySplitLimit {
							for i := range len(v.Input) {
								cuts = append(cuts, i)
							}
						} else {
							for i := range 64 {
								cuts = append(cuts, i, len(v.Input)-1-i)
							}
							for range sampledSplits {
								cuts = append(cuts, t.Rand().IntN(len(v.Input)))
							}
						}
						for _, c := range cuts {
							ropes = append(ropes, ropeOf(v.Input[:c]))
						}
					}
					want := &conformpb.TlvDecodeOutput{Refusal: refusal(statusMalformed)}
					f := newFailures(t, "a truncated frame")
					for i, out := range decode(t, ropes) {
						f.answer(showRope(ropes[i]), &conformpb.TlvDecodeInput{Frame: ropes[i]}, want, out, decodeFields(false)...)
					}
					f.done()
				},
			}
		}),
	}
}

// nesting is graph model §Nested TLV structure and §Structured TLV as
// abstraction: a PL payload is children end to end, any of which may nest
// further, and nesting is bounded by the receiver, which refuses a deeper
// frame with tr::tlv::nesting_too_deep.
func nesting(k *cases.Kit, vs *vectors) []cases.Case {
	return []cases.Case{
		k.Must(func() cases.Case {
			nested := vs.List("nested-depth-1", "nested-depth-2", "nested-depth-3", "nested-depth-4", "nested-siblings")
			return cases.Case{
				ID:    "tlv/nested-tlv-structure/children-end-to-end",
				Title: "A PL payload decodes as child TLVs end to end, each with its own header, recursively, one to four levels deep",
				Spec:  "libtracer-graph-model §nested-tlv-structure, §the-structured-tlv-in-memory",
				Requirements: []string{
					"libtracer-graph-model§nested-tlv-structure#1",
					"libtracer-graph-model§nested-tlv-structure#2",
					"libtracer-graph-model§nested-tlv-structure#3",
					"libtracer-graph-model§the-structured-tlv-in-memory#1",
					"reconstructed§contradictions#5",
					"reconstructed§tlv-opt-bits#1",
				},
				Run: func(t *cases.T) { decodeEach(t, "a nested frame", nested, false, whole) },
			}
		}),
		k.Must(func() cases.Case {
			records := vs.List("record-settings-app", "record-acl", "record-fwd-reply-status", "record-fwd-reply-result",
				"record-list-children", "record-list-subscribers")
			return cases.Case{
				ID: "tlv/nested-tlv-structure/records-decode-as-printed",
				Title: "The records the index lays out — SETTINGS holding the app record, an ACL, a FWD{REPLY} carrying a STATUS or a RESULT, " +
					"the :children[] and :subscribers[] lists in a BATCH — decode, whole and one byte per segment, as the trees they print",
				Spec: "libtracer-graph-model §nested-tlv-structure",
				Requirements: []string{
					"libtracer-graph-model§nested-tlv-structure#1",
					"libtracer-graph-model§nested-tlv-structure#3",
					"reconstructed§tlv-opt-bits#1",
					"reconstructed§tlv-lists#4",
				},
				Run: func(t *cases.T) {
					decodeEach(t, "a record", records, false, func(_ *cases.T, b []byte) []*conformpb.TlvRope {
						return []*conformpb.TlvRope{ropeOf(b), bytewise(b)}
					})
				},
			}
		}),
		k.Must(func() cases.Case {
			unknown := vs.List("unknown-types", "unknown-opaque-not-walked")
			return cases.Case{
				ID:    "tlv/nested-tlv-structure/unknown-types-follow-pl",
				Title: "A TLV of an unknown type, and the reserved ROUTER (0x0D), is recursed into exactly when its PL bit is set",
				Spec:  "libtracer-graph-model §nested-tlv-structure, §the-shedding-rule-mandatory",
				Requirements: []string{
					"libtracer-graph-model§nested-tlv-structure#1",
					"libtracer-graph-model§the-shedding-rule-mandatory#11",
					"reconstructed§tlv-opt-bits#1",
					"reconstructed§tlv-type-codes#2",
					"reconstructed§tlv-type-codes#3",
				},
				Run: func(t *cases.T) { decodeEach(t, "a frame with unknown type codes", unknown, false, whole) },
			}
		}),
		k.Must(func() cases.Case {
			kept := vs.Get("child-trailer-kept")
			return cases.Case{
				ID: "tlv/nested-tlv-structure/child-trailer-kept",
				// Each child has its own header "and optional trailer" (graph
				// model §Nested TLV structure): a reader accepts a child's
				// trailer, checks it and keeps it, since it is the parent's
				// payload. Whether a forwarder gives split-out children
				// trailers is the MAY (#7), which no op can observe.
				Title: "A child's own trailer is validated and kept verbatim inside its parent, with its TS and CRC bits",
				Spec:  "libtracer-graph-model §nested-tlv-structure",
				Requirements: []string{
					"libtracer-graph-model§nested-tlv-structure#4",
					"reconstructed§tlv-trailer#3",
					"reconstructed§tlv-trailer#4",
				},
				Run: func(t *cases.T) {
					decodeEach(t, "a child carrying its own trailer", []*corpus.TLVVector{kept}, false, whole)
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:    "tlv/structured-tlv-as-abstraction-memory-as-rope/nesting-to-the-declared-bound",
				Title: "A frame nested exactly as deep as the depth the SUT declares in its Hello decodes, whole and split",
				Spec:  "libtracer-graph-model §structured-tlv-as-abstraction-memory-as-rope",
				Requirements: []string{
					"libtracer-graph-model§nested-tlv-structure#3",
					"libtracer-graph-model§structured-tlv-as-abstraction-memory-as-rope#6",
					"reconstructed§tlv-decoder-depth#2",
				},
				Run: func(t *cases.T) {
					bound := declaredDepth(t)
					b := chain(bound)
					ropes := []*conformpb.TlvRope{ropeOf(b), ropeOf(b[:len(b)/2], b[len(b)/2:]), bytewise(b)}
					want := &conformpb.TlvDecodeOutput{Root: chainTree(bound)}
					f := newFailures(t, fmt.Sprintf("a frame nested %d deep, the declared bound", bound))
					f.own = true
					for i, out := range decode(t, ropes) {
						f.answer(showRope(ropes[i]), &conformpb.TlvDecodeInput{Frame: ropes[i]}, want, out, decodeFields(false)...)
					}
					f.done()
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:    "tlv/structured-tlv-as-abstraction-memory-as-rope/nesting-beyond-the-bound-refused",
				Title: "A frame nested deeper than the declared bound is refused with tr::tlv::nesting_too_deep, never decoded or crashed on",
				Spec:  "libtracer-graph-model §structured-tlv-as-abstraction-memory-as-rope",
				Requirements: []string{
					"libtracer-graph-model§structured-tlv-as-abstraction-memory-as-rope#7",
					"reconstructed§tlv-decoder-depth#1",
					"reconstructed§tlv-decoder-depth#2",
					"reconstructed§tlv-status#2",
				},
				Run: func(t *cases.T) {
					bound := declaredDepth(t)
					var ropes []*conformpb.TlvRope
					for _, d := range []int{bound + 1, bound + 2, max(4096, 2*bound)} {
						b := chain(d)
						ropes = append(ropes, ropeOf(b), ropeOf(b[:len(b)/2], b[len(b)/2:]))
					}
					want := &conformpb.TlvDecodeOutput{Refusal: refusal(statusNestingTooDeep)}
					f := newFailures(t, fmt.Sprintf("a frame nested deeper than the declared bound of %d", bound))
					f.own = true
					for i, out := range decode(t, ropes) {
						f.answer(showRope(ropes[i]), &conformpb.TlvDecodeInput{Frame: ropes[i]}, want, out, decodeFields(false)...)
					}
					f.done()
				},
			}
		}),
	}
}

// declaredDepth returns the depth bound the SUT declares, skipping the case
// when it declares none.
func declaredDepth(t *cases.T) int {
	d := int(t.Hello().GetBounds().GetTlvMaxDepth())
	if d == 0 {
		t.Skipf("the SUT declares no tlv_max_depth in its Hello")
	}
	if d > 1<<16 {
		t.Skipf("the declared tlv_max_depth %d is too deep to probe", d)
	}
	return d
}

// chain returns a frame nested depth deep: depth-1 structured SETTINGS, one
// inside the other, around a VALUE 2a, which is at depth depth (the root is
// depth 1). Headers are minimal.
func chain(depth int) []byte {
	inner := []byte{0x01, 0x00, 0x01, 0x00, 0x2a}
	// The size of each level, innermost first, then the headers written
	// outermost first: linear in the depth, which a SUT's Hello sets (a
	// header prepended level by level copies the frame once per level).
	sizes := make([]int, max(depth, 1))
	sizes[0] = len(inner)
	for d := 1; d < depth; d++ {
		sizes[d] = sizes[d-1] + len(header(0x0b, 0x01, sizes[d-1]))
	}
	b := make([]byte, 0, sizes[len(sizes)-1])
	for d := depth - 1; d >= 1; d-- {
		b = append(b, header(0x0b, 0x01, sizes[d-1])...)
	}
	return append(b, inner...)
}

// chainTree is the tree chain(depth) decodes to.
func chainTree(depth int) *conformpb.TlvNode {
	n := &conformpb.TlvNode{Type: 0x01, Payload: []byte{0x2a}}
	size := 5
	for range depth - 1 {
		opt := uint32(0x01)
		if size > 0xFFFF {
			opt = 0x03
		}
		n = &conformpb.TlvNode{Type: 0x0b, Opt: opt, Children: []*conformpb.TlvNode{n}}
		size += len(header(0x0b, 0x01, size))
	}
	return n
}
