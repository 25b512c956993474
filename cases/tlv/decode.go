package tlv

import (
	"fmt"

	"github.com/conform-suite/conform/cases"
	"github.com/conform-suite/conform/corpus"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/reports"
)

// ropes is graph model §The two compositions: a rope is storage, blind to
// TLV structure, and a view boundary may fall anywhere, so a conforming
// decoder link-walks the rope and decodes every rope over the same bytes to
// the same tree.
func (s *suite) ropes() []cases.Case {
	rs := spec(secCompositions, "RECONSTRUCTED §2 Header")
	return []cases.Case{
		must(cases.Case{
			ID:      "tlv/" + secCompositions + "/printed-header-split",
			Title:   "PATH /alpha split as the graph model draws it, [06 00 06] [00 05 61 6c 70 68 61], decodes as the contiguous frame does",
			Spec:    spec(secCompositions),
			Vectors: ids("path-alpha"),
			Run: func(t *cases.T) {
				v := s.vec("path-alpha")
				drawn := func(_ *cases.T, b []byte) []*conformpb.TlvRope {
					return []*conformpb.TlvRope{ropeOf(b[:3], b[3:]), ropeOf(b[:3], b[3:4], b[4:])}
				}
				decodeEach(t, "the frame whose header straddles segments A and B", []*corpus.TLVVector{v}, false, drawn)
			},
		}),
		must(cases.Case{
			ID:      "tlv/" + secCompositions + "/every-two-segment-split",
			Title:   "Every decodable vector split into two segments at every point decodes to the same tree as the contiguous frame",
			Spec:    rs,
			Vectors: idsOf(s.decodable()),
			Run: func(t *cases.T) {
				decodeEach(t, "a frame split into two segments", s.decodable(), false, twoSplits)
			},
		}),
		must(cases.Case{
			ID:      "tlv/" + secCompositions + "/three-segment-splits",
			Title:   "Every decodable vector split into three segments at sampled points decodes to the same tree as the contiguous frame",
			Spec:    rs,
			Vectors: idsOf(s.decodable()),
			Run: func(t *cases.T) {
				decodeEach(t, "a frame split into three segments", s.decodable(), false, threeSplitsOf)
			},
		}),
		must(cases.Case{
			ID:      "tlv/" + secCompositions + "/one-byte-per-segment",
			Title:   "Every decodable vector given as one byte per segment decodes to the same tree as the contiguous frame",
			Spec:    rs,
			Vectors: idsOf(s.decodable()),
			Run: func(t *cases.T) {
				decodeEach(t, "a frame given one byte per segment", s.decodable(), false,
					func(_ *cases.T, b []byte) []*conformpb.TlvRope { return []*conformpb.TlvRope{bytewise(b)} })
			},
		}),
		reconstructed(must(cases.Case{
			ID:      "tlv/" + secCompositions + "/refusals-whatever-the-split",
			Title:   "A frame that must be refused is refused with the same status however its bytes are split",
			Spec:    rs,
			Vectors: idsOf(s.refused()),
			Run: func(t *cases.T) {
				decodeEach(t, "a refused frame presented in segments", s.refused(), false, everySplitting)
			},
		})),
		reconstructed(must(cases.Case{
			ID:      "tlv/" + secCompositions + "/path-record-split",
			Title:   "A received PATH payload gets the same verdict and segments wherever a record's length byte and its text are split",
			Spec:    spec(secCompositions, "RECONSTRUCTED §2 PATH payload"),
			Vectors: idsOf(s.kind(corpus.TLVPathPayload, nil)),
			Run: func(t *cases.T) {
				checkPathPayloads(t, "a PATH payload presented in segments", s.kind(corpus.TLVPathPayload, nil), everySplitting)
			},
		})),
	}
}

// headers is the TLV header: 4 bytes, or 6 with opt.LL, type, opt and a
// little-endian length counting the payload alone (graph model §Nested TLV
// structure; RECONSTRUCTED §2 Header, from the printed vectors).
func (s *suite) headers() []cases.Case {
	hs := spec(secNested, "RECONSTRUCTED §2 Header")
	refuse := func(id, title string, names ...string) cases.Case {
		return reconstructed(must(cases.Case{
			ID: "tlv/" + secNested + "/" + id, Title: title, Spec: hs, Vectors: ids(names...),
			Run: func(t *cases.T) { decodeEach(t, title, s.vecs(names...), false, whole) },
		}))
	}
	return []cases.Case{
		must(cases.Case{
			ID:      "tlv/" + secNested + "/printed-vectors-decode",
			Title:   "The printed frames decode as printed: byte 0 the type, byte 1 opt, then a u16 little-endian length counting the payload alone",
			Spec:    hs,
			Vectors: ids("path-alpha", "status-empty", "path-sensor-temp", "value-one-byte"),
			Run: func(t *cases.T) {
				decodeEach(t, "a printed frame", s.vecs("path-alpha", "status-empty", "path-sensor-temp", "value-one-byte"), false, whole)
			},
		}),
		reconstructed(must(cases.Case{
			ID:      "tlv/" + secNested + "/ll-length-boundaries",
			Title:   "A payload of 0xFFFF bytes fits the 4-byte header and one of 0x10000 bytes is read through the 6-byte LL header's u32 length",
			Spec:    hs,
			Vectors: ids("ll-ffff-short", "ll-10000-long"),
			Run: func(t *cases.T) {
				decodeEach(t, "a frame at the LL boundary", s.vecs("ll-ffff-short", "ll-10000-long"), false, whole)
			},
		})),
		reconstructed(must(cases.Case{
			ID:      "tlv/" + secNested + "/non-minimal-ll-accepted",
			Title:   "A reader accepts a non-minimal LL header (a short length in the 6-byte form) and keeps LL in the TLV's opt",
			Spec:    hs,
			Vectors: ids("ll-nonminimal", "ll-nonminimal-nested", "trailer-ll-structured"),
			Run: func(t *cases.T) {
				decodeEach(t, "a frame with a non-minimal LL header", s.vecs("ll-nonminimal", "ll-nonminimal-nested", "trailer-ll-structured"), false, whole)
			},
		})),
		refuse("reserved-opt-bits-refused", "A reader refuses a TLV with opt bit 6 or 7 set, at the root or in a child", "reserved-bit-6", "reserved-bit-7", "reserved-bit-child"),
		refuse("crc-code-3-refused", "A reader refuses a TLV whose opt CRC field is the reserved code 3", "crc-code-3", "crc-code-3-with-bytes"),
		refuse("type-zero-refused", "A reader refuses a TLV of type 0x00, at the root or in a child", "type-zero", "type-zero-child"),
		refuse("length-beyond-bytes-refused", "A length or trailer that claims more bytes than the frame or parent holds, or bytes after the frame, is tr::tlv::malformed",
			"length-beyond-input", "length-ll-max", "child-overruns-parent", "child-header-cut", "child-trailer-overruns", "header-short", "bytes-after-frame"),
		reconstructed(must(cases.Case{
			ID:      "tlv/" + secNested + "/truncated-at-every-byte",
			Title:   "Every decodable vector cut short at every byte is refused as tr::tlv::malformed, never read past its end",
			Spec:    hs,
			Vectors: idsOf(s.decodable()),
			Run: func(t *cases.T) {
				var ropes []*conformpb.TlvRope
				for _, v := range s.decodable() {
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
				want := decoded{Status: statusText(0x0051)}
				f := newFailures(t, "a truncated frame")
				for i, out := range decode(t, ropes) {
					f.check(showRope(ropes[i]), want, gotDecoded(out, false), showDecoded)
				}
				f.done()
			},
		})),
	}
}

// nesting is graph model §Nested TLV structure and §Structured TLV as
// abstraction: a PL payload is children end to end, any of which may nest
// further, and nesting is bounded by the receiver, which refuses a deeper
// frame with tr::tlv::nesting_too_deep.
func (s *suite) nesting() []cases.Case {
	nested := []string{"nested-depth-1", "nested-depth-2", "nested-depth-3", "nested-depth-4", "nested-siblings"}
	return []cases.Case{
		must(cases.Case{
			ID:      "tlv/" + secNested + "/children-end-to-end",
			Title:   "A PL payload decodes as child TLVs end to end, each with its own header, recursively, one to four levels deep",
			Spec:    spec(secNested),
			Vectors: ids(nested...),
			Run:     func(t *cases.T) { decodeEach(t, "a nested frame", s.vecs(nested...), false, whole) },
		}),
		reconstructed(must(cases.Case{
			ID:      "tlv/" + secNested + "/unknown-types-follow-pl",
			Title:   "A TLV of an unknown type is recursed into exactly when its PL bit is set",
			Spec:    spec(secNested, "RECONSTRUCTED §2 Type codes"),
			Vectors: ids("unknown-types", "unknown-opaque-not-walked"),
			Run: func(t *cases.T) {
				decodeEach(t, "a frame with unknown type codes", s.vecs("unknown-types", "unknown-opaque-not-walked"), false, whole)
			},
		})),
		reconstructed(must(cases.Case{
			ID:      "tlv/" + secNested + "/child-trailer-kept",
			Title:   "A child's own trailer is validated and kept verbatim inside its parent, with its TS and CRC bits",
			Spec:    spec(secNested, "RECONSTRUCTED §2 Trailer"),
			Vectors: ids("child-trailer-kept"),
			Run: func(t *cases.T) {
				decodeEach(t, "a child carrying its own trailer", s.vecs("child-trailer-kept"), false, whole)
			},
		})),
		reconstructed(must(cases.Case{
			ID:    "tlv/" + secRope + "/nesting-to-the-declared-bound",
			Title: "A frame nested exactly as deep as the depth the SUT declares in its Hello decodes, whole and split",
			Spec:  spec(secRope, "RECONSTRUCTED §2 Decoder resources"),
			Run: func(t *cases.T) {
				bound := declaredDepth(t)
				b := chain(bound)
				ropes := []*conformpb.TlvRope{ropeOf(b), ropeOf(b[:len(b)/2], b[len(b)/2:]), bytewise(b)}
				want := decoded{Tree: chainTree(bound).lines()}
				f := newFailures(t, fmt.Sprintf("a frame nested %d deep, the declared bound", bound))
				for i, out := range decode(t, ropes) {
					f.check(showRope(ropes[i]), want, gotDecoded(out, false), showDecoded)
				}
				f.done()
			},
		})),
		reconstructed(must(cases.Case{
			ID:    "tlv/" + secRope + "/nesting-beyond-the-bound-refused",
			Title: "A frame nested deeper than the declared bound is refused with tr::tlv::nesting_too_deep, never decoded or crashed on",
			Spec:  spec(secRope, "RECONSTRUCTED §2 Decoder resources"),
			Run: func(t *cases.T) {
				bound := declaredDepth(t)
				var ropes []*conformpb.TlvRope
				for _, d := range []int{bound + 1, bound + 2, max(4096, 2*bound)} {
					b := chain(d)
					ropes = append(ropes, ropeOf(b), ropeOf(b[:len(b)/2], b[len(b)/2:]))
				}
				want := decoded{Status: statusText(0x0050)}
				f := newFailures(t, fmt.Sprintf("a frame nested deeper than the declared bound of %d", bound))
				for i, out := range decode(t, ropes) {
					f.check(showRope(ropes[i]), want, gotDecoded(out, false), showDecoded)
				}
				f.done()
			},
		})),
	}
}

// declaredDepth returns the depth bound the SUT declares, skipping the case
// when it declares none.
func declaredDepth(t *cases.T) int {
	d := int(t.Hello().GetBounds().GetTlvMaxDepth())
	if d == 0 {
		panic(&cases.Abort{Outcome: reports.Skip, Message: "the SUT declares no tlv_max_depth in its Hello"})
	}
	if d > 1<<16 {
		panic(&cases.Abort{Outcome: reports.Skip, Message: fmt.Sprintf("the declared tlv_max_depth %d is too deep to probe", d)})
	}
	return d
}

// chain returns a frame nested depth deep: depth-1 structured SETTINGS, one
// inside the other, around a VALUE 2a, which is at depth depth (the root is
// depth 1). Headers are minimal.
func chain(depth int) []byte {
	b := []byte{0x01, 0x00, 0x01, 0x00, 0x2a}
	for range depth - 1 {
		b = append(header(0x0b, 0x01, len(b)), b...)
	}
	return b
}

// chainTree is the tree chain(depth) decodes to.
func chainTree(depth int) node {
	n := node{Type: "0x01", Opt: "0x00", Payload: "2a"}
	size := 5
	for range depth - 1 {
		opt := "0x01"
		if size > 0xFFFF {
			opt = "0x03"
		}
		n = node{Type: "0x0b", Opt: opt, Children: []node{n}}
		size += len(header(0x0b, 0x01, size))
	}
	return n
}
