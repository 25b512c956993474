package tlv

import (
	"fmt"
	"strings"

	"github.com/conform-suite/conform/cases"
	"github.com/conform-suite/conform/corpus"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
)

// pathVerdict is what a SUT said of a received PATH payload, rendered.
type pathVerdict struct {
	Status   string   `json:",omitempty"`
	Segments []string `json:",omitempty"`
}

func showPathVerdict(x any) string {
	v := x.(pathVerdict)
	if v.Status != "" {
		return v.Status
	}
	return fmt.Sprintf("valid, segments %q", v.Segments)
}

func gotPathVerdict(o *conformpb.TlvPathVerdict) pathVerdict {
	if o.GetRefusal() != nil {
		return pathVerdict{Status: statusText(o.GetRefusal().GetStatus())}
	}
	v := pathVerdict{}
	for _, s := range o.GetSegments() {
		v.Segments = append(v.Segments, string(s))
	}
	return v
}

func wantPathVerdict(v *corpus.TLVVector) pathVerdict {
	if v.Refusal != 0 {
		return pathVerdict{Status: statusText(uint32(v.Refusal))}
	}
	return pathVerdict{Segments: append([]string(nil), v.Segments...)}
}

// checkPathPayloads presents each path-payload vector in every splitting the
// split function gives, and judges each verdict.
func checkPathPayloads(t *cases.T, what string, vs []*corpus.TLVVector, split func(*cases.T, []byte) []*conformpb.TlvRope) {
	var ropes []*conformpb.TlvRope
	var wants []pathVerdict
	for _, v := range vs {
		for _, r := range split(t, v.Input) {
			ropes = append(ropes, r)
			wants = append(wants, wantPathVerdict(v))
		}
	}
	f := newFailures(t, what)
	for i, out := range validatePath(t, ropes) {
		f.check(showRope(ropes[i]), wants[i], gotPathVerdict(out), showPathVerdict)
	}
	f.done()
}

// canonical is what a SUT said of a path string, rendered.
type canonical struct {
	Status  string `json:",omitempty"`
	Payload string
}

func showCanonical(x any) string {
	c := x.(canonical)
	if c.Status != "" {
		return c.Status
	}
	if c.Payload == "" {
		return "the empty payload (the root)"
	}
	return c.Payload
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
		want := canonical{}
		if vs[i].Refusal != 0 {
			want.Status = statusText(uint32(vs[i].Refusal))
		} else {
			want.Payload = corpus.FormatHex(*vs[i].Canonical)
		}
		got := canonical{Payload: corpus.FormatHex(out.GetPayload())}
		if out.GetRefusal() != nil {
			got = canonical{Status: statusText(out.GetRefusal().GetStatus())}
		}
		f.check(fmt.Sprintf("%q", paths[i]), want, got, showCanonical)
	}
	f.done()
}

// paths is graph model §Dispatch keyed on canonical PATH TLV bytes: the
// vertex map is keyed on the PATH payload's bytes, so two paths naming one
// vertex must canonicalize to byte-identical payloads; the rules are those
// RECONSTRUCTED §2 gives in place of the absent 03-addressing.md.
func (s *suite) paths() []cases.Case {
	ds := spec(secDispatch, "RECONSTRUCTED §2 PATH payload")
	canon := func(id, title string, names ...string) cases.Case {
		return must(cases.Case{
			ID: "tlv/" + secDispatch + "/" + id, Title: title, Spec: ds, Vectors: ids(names...),
			Run: func(t *cases.T) { checkCanonical(t, title, s.vecs(names...)) },
		})
	}
	return []cases.Case{
		canon("printed-paths", "\"/alpha\" canonicalizes to 05 \"alpha\" and \"/sensor/temp\" to 06 \"sensor\" 04 \"temp\", as the sources print", "canon-alpha", "canon-sensor-temp"),
		reconstructed(canon("one-vertex-one-payload", "Strings naming /sensor/temp with no leading slash, a trailing slash or doubled slashes canonicalize to its exact bytes",
			"canon-sensor-temp", "canon-no-leading-slash", "canon-trailing-slash", "canon-double-slash")),
		reconstructed(canon("root-is-the-empty-payload", "\"/\" and \"///\" name the root, whose canonical payload is empty", "canon-root", "canon-root-slashes")),
		reconstructed(canon("segment-length-in-bytes", "A record's length counts UTF-8 bytes; a 255-byte segment fits, a 256-byte one is tr::path::invalid", "canon-utf8", "canon-255", "canon-256")),
		reconstructed(canon("invalid-segments-refused", "A segment \".\" or \"..\", one holding NUL, or one not valid UTF-8 makes the path tr::path::invalid", "canon-dot", "canon-dotdot", "canon-nul", "canon-bad-utf8")),
		reconstructed(must(cases.Case{
			ID:    "tlv/" + secDispatch + "/one-vertex-one-payload-generated",
			Title: "Seeded spellings of one path, with and without leading, trailing and doubled slashes, all canonicalize to identical bytes",
			Spec:  ds,
			Run: func(t *cases.T) {
				f := newFailures(t, "spellings of one path")
				for range 16 {
					n := 1 + t.Rand().IntN(6)
					var segs []string
					for range n {
						segs = append(segs, fmt.Sprintf("s%d", t.Rand().IntN(1000)))
					}
					want := canonical{Payload: corpus.FormatHex(segmentRecords(segs))}
					var spellings [][]byte
					for range 6 {
						spellings = append(spellings, []byte(spell(t, segs)))
					}
					for i, out := range canonicalize(t, spellings) {
						got := canonical{Payload: corpus.FormatHex(out.GetPayload())}
						if out.GetRefusal() != nil {
							got = canonical{Status: statusText(out.GetRefusal().GetStatus())}
						}
						f.check(fmt.Sprintf("%q", spellings[i]), want, got, showCanonical)
					}
				}
				f.done()
			},
		})),
		reconstructed(must(cases.Case{
			ID:      "tlv/" + secDispatch + "/received-payload-checked",
			Title:   "A received PATH payload is invalid when a record has length 0, holds 0x2F, is not UTF-8 or runs past the end; else its segments are read",
			Spec:    ds,
			Vectors: idsOf(s.kind(corpus.TLVPathPayload, nil)),
			Run: func(t *cases.T) {
				checkPathPayloads(t, "a received PATH payload", s.kind(corpus.TLVPathPayload, nil), whole)
			},
		})),
		reconstructed(must(cases.Case{
			ID:    "tlv/" + secDispatch + "/canonical-bytes-reparse",
			Title: "The canonical payload of every valid path vector is itself a valid PATH payload holding the string's non-empty segments",
			Spec:  ds,
			Vectors: idsOf(s.kind(corpus.TLVPath, func(v *corpus.TLVVector) bool {
				return v.Canonical != nil
			})),
			Run: func(t *cases.T) {
				vs := s.kind(corpus.TLVPath, func(v *corpus.TLVVector) bool { return v.Canonical != nil })
				var paths [][]byte
				for _, v := range vs {
					paths = append(paths, v.PathBytes())
				}
				outs := canonicalize(t, paths)
				var ropes []*conformpb.TlvRope
				var wants []pathVerdict
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
					wants = append(wants, pathVerdict{Segments: segs})
				}
				f := newFailures(t, "re-reading a canonical payload the SUT produced")
				for i, out := range validatePath(t, ropes) {
					f.check(showRope(ropes[i]), wants[i], gotPathVerdict(out), showPathVerdict)
				}
				f.done()
			},
		})),
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
	for i := range t.Rand().IntN(3) {
		_ = i
		sb.WriteByte('/')
	}
	for i, s := range segs {
		if i > 0 {
			sb.WriteString(strings.Repeat("/", 1+t.Rand().IntN(2)))
		}
		sb.WriteString(s)
	}
	sb.WriteString(strings.Repeat("/", t.Rand().IntN(3)))
	return sb.String()
}
