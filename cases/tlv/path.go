package tlv

import (
	"fmt"
	"strings"

	"github.com/conform-suite/conform/cases"
	"github.com/conform-suite/conform/corpus"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
)

// wantPathVerdict is what a path-payload vector says a validation answers:
// its segments, or its refusal.
func wantPathVerdict(v *corpus.TLVVector) *conformpb.TlvPathVerdict {
	if v.Refusal != 0 {
		return &conformpb.TlvPathVerdict{Refusal: refusal(uint32(v.Refusal))}
	}
	return segmentsVerdict(v.Segments)
}

// segmentsVerdict is a validation that read the segments.
func segmentsVerdict(segs []string) *conformpb.TlvPathVerdict {
	out := &conformpb.TlvPathVerdict{}
	for _, s := range segs {
		out.Segments = append(out.Segments, []byte(s))
	}
	return out
}

// checkPathPayloads presents each path-payload vector in every splitting the
// split function gives, and judges each verdict.
func checkPathPayloads(t *cases.T, what string, vs []*corpus.TLVVector, split func(*cases.T, []byte) []*conformpb.TlvRope) {
	var ropes []*conformpb.TlvRope
	var wants []*conformpb.TlvPathVerdict
	for _, v := range vs {
		for _, r := range split(t, v.Input) {
			ropes = append(ropes, r)
			wants = append(wants, wantPathVerdict(v))
		}
	}
	f := newFailures(t, what)
	for i, out := range validatePath(t, ropes) {
		f.answer(showRope(ropes[i]), nil, wants[i], out)
	}
	f.done()
}

// wantCanonical is what a path vector says canonicalizing its string
// answers: the canonical payload, or the refusal.
func wantCanonical(v *corpus.TLVVector) *conformpb.TlvCanonicalOutput {
	if v.Refusal != 0 {
		return &conformpb.TlvCanonicalOutput{Refusal: refusal(uint32(v.Refusal))}
	}
	return &conformpb.TlvCanonicalOutput{Payload: *v.Canonical}
}

// checkCanonical asks for the canonical form of each path vector's string
// and judges it against the vector.
func checkCanonical(t *cases.T, what string, vs []*corpus.TLVVector) {
	var paths [][]byte
	for _, v := range vs {
		paths = append(paths, v.PathBytes())
	}
	f := newFailures(t, what)
	for i, out := range canonicalize(t, paths) {
		f.answer(fmt.Sprintf("%q", paths[i]), nil, wantCanonical(vs[i]), out)
	}
	f.done()
}

// paths is graph model §Dispatch keyed on canonical PATH TLV bytes: the
// vertex map is keyed on the PATH payload's bytes, so two paths naming one
// vertex must canonicalize to byte-identical payloads; the rules are
// reconstructed§tlv-path's, in place of the absent 03-addressing.md.
func paths(k *cases.Kit, vs *vectors) []cases.Case {
	canon := func(id, title string, reqs []string, names ...string) cases.Case {
		return k.Must(func() cases.Case {
			ps := vs.List(names...)
			return cases.Case{
				ID: id, Title: title, Spec: "libtracer-graph-model §dispatch-keyed-on-canonical-path-tlv-bytes", Requirements: reqs,
				Run: func(t *cases.T) { checkCanonical(t, title, ps) },
			}
		})
	}
	return []cases.Case{
		canon("tlv/dispatch-keyed-on-canonical-path-tlv-bytes/printed-paths",
			"\"/alpha\" canonicalizes to 05 \"alpha\" and \"/sensor/temp\" to 06 \"sensor\" 04 \"temp\", as the sources print",
			[]string{
				"libtracer-graph-model§dispatch-keyed-on-canonical-path-tlv-bytes#2",
				"reconstructed§tlv-path#1",
			}, "canon-alpha", "canon-sensor-temp"),
		canon("tlv/dispatch-keyed-on-canonical-path-tlv-bytes/one-vertex-one-payload",
			"Strings naming /sensor/temp with no leading slash, a trailing slash or doubled slashes canonicalize to its exact bytes",
			[]string{
				"libtracer-graph-model§dispatch-keyed-on-canonical-path-tlv-bytes#3",
				"libtracer-graph-model§dispatch-keyed-on-canonical-path-tlv-bytes#5",
				"reconstructed§tlv-path#2",
			}, "canon-sensor-temp", "canon-no-leading-slash", "canon-trailing-slash", "canon-double-slash"),
		canon("tlv/dispatch-keyed-on-canonical-path-tlv-bytes/root-is-the-empty-payload",
			"\"/\" and \"///\" name the root, whose canonical payload is empty",
			[]string{
				"libtracer-graph-model§dispatch-keyed-on-canonical-path-tlv-bytes#5",
				"reconstructed§tlv-path#1",
				"reconstructed§tlv-path#2",
			}, "canon-root", "canon-root-slashes"),
		canon("tlv/dispatch-keyed-on-canonical-path-tlv-bytes/segment-length-in-bytes",
			"A record's length counts UTF-8 bytes; a 255-byte segment fits, a 256-byte one is tr::path::invalid",
			[]string{
				"reconstructed§tlv-path#3",
				"reconstructed§tlv-status#2",
			}, "canon-utf8", "canon-255", "canon-256"),
		canon("tlv/dispatch-keyed-on-canonical-path-tlv-bytes/invalid-segments-refused",
			"A segment \".\" or \"..\", one holding NUL, or one not valid UTF-8 makes the path tr::path::invalid",
			[]string{
				"reconstructed§tlv-path#3",
				"reconstructed§tlv-status#2",
			}, "canon-dot", "canon-dotdot", "canon-nul", "canon-bad-utf8"),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:    "tlv/dispatch-keyed-on-canonical-path-tlv-bytes/one-vertex-one-payload-generated",
				Title: "Seeded spellings of one path, with and without leading, trailing and doubled slashes, all canonicalize to identical bytes",
				Spec:  "libtracer-graph-model §dispatch-keyed-on-canonical-path-tlv-bytes",
				Requirements: []string{
					"libtracer-graph-model§dispatch-keyed-on-canonical-path-tlv-bytes#5",
					"reconstructed§tlv-path#2",
				},
				Run: func(t *cases.T) {
					f := newFailures(t, "spellings of one path")
					for range 16 {
						n := 1 + t.Rand().IntN(6)
						var segs []string
						for range n {
							segs = append(segs, fmt.Sprintf("s%d", t.Rand().IntN(1000)))
						}
						want := &conformpb.TlvCanonicalOutput{Payload: segmentRecords(segs)}
						var spellings [][]byte
						for range 6 {
							spellings = append(spellings, []byte(spell(t, segs)))
						}
						for i, out := range canonicalize(t, spellings) {
							f.answer(fmt.Sprintf("%q", spellings[i]), nil, want, out)
						}
					}
					f.done()
				},
			}
		}),
		k.Must(func() cases.Case {
			payloads := ofKind(vs, corpus.TLVPathPayload, nil)
			return cases.Case{
				ID:    "tlv/dispatch-keyed-on-canonical-path-tlv-bytes/received-payload-checked",
				Title: "A received PATH payload is invalid when a record has length 0, holds 0x2F, is not UTF-8 or runs past the end; else its segments are read",
				Spec:  "libtracer-graph-model §dispatch-keyed-on-canonical-path-tlv-bytes",
				Requirements: []string{
					"reconstructed§tlv-path#1",
					"reconstructed§tlv-path#4",
					"reconstructed§tlv-status#2",
				},
				Run: func(t *cases.T) { checkPathPayloads(t, "a received PATH payload", payloads, whole) },
			}
		}),
		k.Must(func() cases.Case {
			valid := ofKind(vs, corpus.TLVPath, func(v *corpus.TLVVector) bool { return v.Canonical != nil })
			return cases.Case{
				ID:    "tlv/dispatch-keyed-on-canonical-path-tlv-bytes/canonical-bytes-reparse",
				Title: "The canonical payload of every valid path vector is itself a valid PATH payload holding the string's non-empty segments",
				Spec:  "libtracer-graph-model §dispatch-keyed-on-canonical-path-tlv-bytes",
				Requirements: []string{
					"libtracer-graph-model§dispatch-keyed-on-canonical-path-tlv-bytes#5",
					"reconstructed§tlv-path#1",
				},
				Run: func(t *cases.T) {
					var paths [][]byte
					for _, v := range valid {
						paths = append(paths, v.PathBytes())
					}
					outs := canonicalize(t, paths)
					var ropes []*conformpb.TlvRope
					var wants []*conformpb.TlvPathVerdict
					for i, o := range outs {
						if o.GetRefusal() != nil {
							t.Failf("canonicalizing %q was refused (%s); the path is valid", paths[i], statusText(o.GetRefusal().GetStatus()))
							continue
						}
						ropes = append(ropes, ropeOf(o.GetPayload()))
						var segs []string
						for _, seg := range strings.Split(string(paths[i]), "/") {
							if seg != "" {
								segs = append(segs, seg)
							}
						}
						wants = append(wants, segmentsVerdict(segs))
					}
					f := newFailures(t, "re-reading a canonical payload the SUT produced")
					for i, out := range validatePath(t, ropes) {
						f.answer(showRope(ropes[i]), nil, wants[i], out)
					}
					f.done()
				},
			}
		}),
	}
}

// segmentRecords packs segments as [u8 len][bytes] records.
func segmentRecords(segs []string) []byte {
	var b []byte
	for _, s := range segs {
		b = append(append(b, byte(len(s))), s...)
	}
	return b
}

// spell writes segs as a path string with seeded leading, doubled and
// trailing slashes.
func spell(t *cases.T, segs []string) string {
	var sb strings.Builder
	sb.WriteString(strings.Repeat("/", t.Rand().IntN(3)))
	for i, s := range segs {
		if i > 0 {
			sb.WriteString(strings.Repeat("/", 1+t.Rand().IntN(2)))
		}
		sb.WriteString(s)
	}
	sb.WriteString(strings.Repeat("/", t.Rand().IntN(3)))
	return sb.String()
}
