package graph

import (
	"encoding/binary"
	"fmt"
	"maps"
	"slices"

	"github.com/conform-suite/conform/cases"
)

// headers is the one SHOULD of the TLV header the graph suite judges: a TLV
// the SUT originates — every one it synthesizes for a field read, a
// composed read or a FWD{REPLY} — takes the 4-byte header whenever its
// length fits 16 bits. The MUST cases compare those TLVs whatever their
// header form, since a reader accepts the 6-byte one.
func headers(k *cases.Kit) []cases.Case {
	return []cases.Case{
		k.Should(func() cases.Case {
			return cases.Case{
				ID:           "graph/nested-tlv-structure/synthesized-headers-are-minimal",
				Title:        "every TLV the SUT synthesizes — :schema, :settings, :settings.app, the lists, an empty slot, :acl, :identity, a composed read, a FWD{REPLY} — uses the 4-byte header wherever the length fits 16 bits",
				Spec:         "libtracer-graph-model §nested-tlv-structure; §core-writable-fields",
				Requirements: []string{"reconstructed§tlv-header#3"},
				Run: func(t *cases.T) {
					sc := newScript().remote("peer", peerLink)
					sc.write("", "/v/c", value("1"))
					sc.appFields("/v", appField("g", rw, value("1")))
					sc.subscribe("", "/v", "/a")
					sc.subscribe("", "/v", "/b")
					sc.write("", "/v:subscribers[0]", emptyStatus())
					sc.acl("/v", rAll, map[string]uint32{"x": rRead})
					steps := map[int]string{}
					for _, a := range []string{"/v:schema", "/v:settings", "/v:settings.app", "/v:children[]", "/v:subscribers[]", "/v:subscribers[0]", "/v:acl", "/v:identity", "/v"} {
						steps[sc.read("", a)] = "the read of " + a
					}
					steps[sc.fwd("peer", fwd(opRead, "/v/c", peerSrc, value("")))] = "the FWD{REPLY} to a FWD{READ}"
					steps[sc.fwd("peer", fwd(opWrite, "/nope", peerSrc, value("")))] = "the FWD{REPLY} to a refused FWD{WRITE}"
					r := run1(t, sc)
					for _, i := range slices.Sorted(maps.Keys(steps)) {
						what, rep := steps[i], r.reply(i)
						if rep.GetStatus() != stOK {
							r.failAt(at(i, "status"), fmt.Sprintf("step %d (%s) answered %s", i, what, statusText(rep.GetStatus())), "success", statusText(rep.GetStatus()))
							continue
						}
						if off, n, long := longHeader(rep.GetValue()); long {
							r.failAt(at(i, "value"), fmt.Sprintf("step %d (%s): the header at offset %d takes 6 bytes for a length of %d", i, what, off, n),
								"4-byte headers wherever the length fits 16 bits", fmt.Sprintf("% x", rep.GetValue()))
						}
					}
				},
			}
		}),
	}
}

// longHeader finds the first header in b, one TLV and its children, that
// sets opt.LL for a length that fits 16 bits, and returns its offset and
// length. Bytes it cannot read are no finding of this check.
func longHeader(b []byte) (at, n int, found bool) {
	var walk func(off int, b []byte, depth int) (int, int, bool)
	walk = func(off int, b []byte, depth int) (int, int, bool) {
		for len(b) >= 4 && depth <= 64 {
			opt, h := b[1], 4
			l := int(binary.LittleEndian.Uint16(b[2:4]))
			if opt&0x02 != 0 {
				if len(b) < 6 {
					return 0, 0, false
				}
				l, h = int(binary.LittleEndian.Uint32(b[2:6])), 6
				if l <= 0xFFFF {
					return off, l, true
				}
			}
			if l > len(b)-h {
				return 0, 0, false
			}
			if opt&optPL != 0 {
				if at, n, ok := walk(off+h, b[h:h+l], depth+1); ok {
					return at, n, true
				}
			}
			off, b = off+h+l, b[h+l:]
		}
		return 0, 0, false
	}
	return walk(0, b, 0)
}
