package mutant

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"hash/crc64"
	"math"
	"math/bits"
	"strings"
	"time"

	"github.com/conform-suite/conform/ref/tlv"
	"github.com/conform-suite/conform/sut/impl"
)

// tlvMutants are every tlv mutant: the ones issue 5 lists, then the further
// failure modes that give each remaining MUST case a bug to catch.
var tlvMutants = append(append([]Mutant(nil), tlvListed...), tlvFurther...)

// tlvListed are the failure modes issue 5 lists, drawn from the graph model
// and the reconstructed§tlv-* pins.
var tlvListed = []Mutant{
	decoderMutant("header-assumed-contiguous", "reads a TLV header from one segment, refusing a header that straddles a rope boundary (libtracer-graph-model §the-two-compositions-storage-and-meaning)",
		func(d *tlv.Decoder, frame tlv.Rope) {
			d.Checks = append([]tlv.HeaderCheck{headerInOneView(frame)}, tlv.HeaderChecks()...)
		}),
	{
		Name: "record-length-contiguous", Suite: "tlv",
		Bug: "reads a PATH record's text from the segment holding its length byte, refusing a record whose text starts in the next segment (libtracer-graph-model §the-two-compositions-storage-and-meaning)",
		apply: func(im *impl.Impl) {
			next := im.TLV.ValidatePath
			im.TLV.ValidatePath = func(r tlv.Rope) ([]string, error) {
				segs, err := next(r)
				if err != nil {
					return nil, err
				}
				ends := viewEnds(r)
				at := 0 // each record's length byte
				for _, s := range segs {
					if ends[at+1] && at+1 < r.Len() {
						return nil, &tlv.DecodeError{Status: tlv.StatusPathInvalid, Offset: int64(at),
							Reason: fmt.Sprintf("a record of %d bytes runs past the end of its segment", len(s))}
					}
					at += 1 + len(s)
				}
				return segs, nil
			}
		},
	},
	decoderMutant("ll-ignored", "ignores opt.LL and always reads a 4-byte header with a 16-bit length (reconstructed§tlv-header#1)",
		func(d *tlv.Decoder, _ tlv.Rope) { d.Header = shortHeaderOnly{} }),
	{
		Name: "length-counts-header", Suite: "tlv",
		Bug: "counts the header in the length field, on read and on write (reconstructed§tlv-header#2: the length counts the payload alone)",
		apply: func(im *impl.Impl) {
			withDecoder(im, func(d *tlv.Decoder, _ tlv.Rope) { d.Header = lengthCountsHeader{} })
			withEncoder(im, tlv.Encoder{Header: lengthCountsHeader{}})
		},
	},
	treeMutant("trailer-attached-at-rest", "leaves the frame's trailer attached (TS and CRC bits set, trailer bytes kept) on the tree at rest (libtracer-graph-model §payload-invariance-across-boundaries)",
		func(frame tlv.Rope, t *impl.Tree, _ *tlv.Trailer) {
			b := frame.Bytes()
			t.Opt = b[1]
			t.Trailer = b[len(b)-tlv.Opt(b[1]).TrailerSize():]
		}),
	decoderMutant("crc-not-checked", "strips a CRC trailer without checking it (reconstructed§tlv-trailer#6)",
		func(d *tlv.Decoder, _ tlv.Rope) { d.Verify = func(tlv.TrailerCheck) error { return nil } }),
	{
		Name: "crc-over-payload-only", Suite: "tlv",
		Bug: "computes the CRC over the payload alone, not header, payload and timestamp, on read and at egress (reconstructed§tlv-trailer#3)",
		apply: func(im *impl.Impl) {
			withDecoder(im, func(d *tlv.Decoder, _ tlv.Rope) {
				d.Verify = func(c tlv.TrailerCheck) error {
					c.Covered = c.Payload()
					return tlv.VerifyCheck(c)
				}
			})
			next := im.TLV.Egress
			im.TLV.Egress = func(n *tlv.Node, e tlv.Egress) ([]byte, error) {
				b, err := next(n, e)
				if err == nil && e.CRC != tlv.CRCNone {
					putCheck(b, tlv.Checksum(e.CRC, n.Payload().Bytes()))
				}
				return b, err
			}
		},
	},
	decoderMutant("reserved-opt-bits-ignored", "accepts a header with opt bits 6-7 set (reconstructed§tlv-opt-bits#5: a reader must refuse them)",
		func(d *tlv.Decoder, _ tlv.Rope) { d.Checks = []tlv.HeaderCheck{tlv.CheckType, tlv.CheckCRCCode} }),
	depthMutant("no-depth-bound", "recurses into PL payloads without a depth bound, whatever it declares (libtracer-graph-model §structured-tlv-as-abstraction-memory-as-rope)",
		func(int) int { return math.MaxInt }),
	{
		Name: "trailing-slash-kept", Suite: "tlv",
		Bug: "does not canonicalize a trailing slash: \"/a/\" gets an empty record after \"a\" (reconstructed§tlv-path#2; libtracer-graph-model §dispatch-keyed-on-canonical-path-tlv-bytes)",
		apply: func(im *impl.Impl) {
			next := im.TLV.Canonicalize
			im.TLV.Canonicalize = func(s string) ([]byte, error) {
				b, err := next(s)
				if err == nil && len(s) > 1 && strings.HasSuffix(s, "/") {
					b = append(b, 0)
				}
				return b, err
			}
		},
	},
	hopMutant("hop-strips-one-segment", "a forward hop strips one dst segment instead of the whole mount run net/<module>/<name>[/<peer>] (libtracer-graph-model §the-shedding-rule-mandatory; reconstructed§contradictions#3)",
		func(fwd *tlv.Node, res tlv.HopResult, _ []string, _ int) (tlv.HopResult, error) {
			if res.Terminus {
				return res, nil
			}
			dst := fwd.Children()[1].Payload().Bytes()
			kids := res.Frame.Children()
			return forwardAs(res, kids[0], reframedLeaf(kids[1], dst[1+int(dst[0]):]), kids[2], kids[3])
		}),
	hopMutant("hop-reencodes-payload", "a forward hop decodes and re-encodes the frame with minimal headers, dropping inner trailers, instead of re-emitting the bytes it received (libtracer-graph-model §the-shedding-rule-mandatory)",
		func(_ *tlv.Node, res tlv.HopResult, _ []string, _ int) (tlv.HopResult, error) {
			if res.Terminus {
				return res, nil
			}
			n, err := impl.NodeOf(impl.TreeOf(res.Frame))
			res.Frame = n
			return res, err
		}),
}

// tlvFurther give each remaining MUST case of the tlv suite a bug to catch.
var tlvFurther = []Mutant{
	decoderMutant("unknown-types-opaque", "never recurses into a TLV of an unknown type, whatever its PL bit says (reconstructed§tlv-type-codes#3)",
		func(d *tlv.Decoder, _ tlv.Rope) {
			d.Walk = func(t tlv.Type, opt tlv.Opt) bool { return opt.PL() && knownTypes[t] }
		}),
	decoderMutant("type-zero-accepted", "decodes a TLV of type 0x00 (reconstructed§tlv-header#6: 0x00 is invalid)",
		func(d *tlv.Decoder, _ tlv.Rope) {
			d.Checks = []tlv.HeaderCheck{tlv.CheckReservedBits, tlv.CheckCRCCode}
		}),
	{
		Name: "crc-code-3-accepted", Suite: "tlv",
		Bug: "reads CRC code 3 as no check instead of refusing it (reconstructed§tlv-opt-bits#6)",
		apply: func(im *impl.Impl) {
			// Code 3 has no check bytes, so unrefused it verifies nothing.
			withDecoder(im, func(d *tlv.Decoder, _ tlv.Rope) { d.Checks = []tlv.HeaderCheck{tlv.CheckType, tlv.CheckReservedBits} })
			withTree(im, func(_ tlv.Rope, _ *impl.Tree, tr *tlv.Trailer) {
				if tr.CRC == tlv.CRCReserved {
					tr.CRC = tlv.CRCNone
				}
			})
		},
	},
	decoderMutant("short-payload-clamped", "clamps a length that claims more bytes than are present to what is there, instead of refusing the frame (reconstructed§tlv-header#7)",
		func(d *tlv.Decoder, _ tlv.Rope) { d.Header = clampedLength{} }),
	treeMutant("child-trailer-stripped", "strips children's own trailers as well as the frame's, changing the parent's payload (libtracer-graph-model §nested-tlv-structure)",
		func(_ tlv.Rope, t *impl.Tree, _ *tlv.Trailer) {
			var strip func(*impl.Tree)
			strip = func(t *impl.Tree) {
				for _, c := range t.Children {
					c.Opt &^= uint8(tlv.OptTS | tlv.OptCRC)
					c.Trailer = nil
					strip(c)
				}
			}
			strip(t)
		}),
	depthMutant("depth-bound-off-by-one", "refuses nesting one level short of the depth it declares (libtracer-graph-model §structured-tlv-as-abstraction-memory-as-rope)",
		func(declared int) int { return declared - 1 }),
	{
		Name: "timestamp-big-endian", Suite: "tlv",
		Bug: "reads and writes the trailer timestamp big-endian (reconstructed§tlv-trailer#1: both little-endian)",
		apply: func(im *impl.Impl) {
			withTree(im, func(_ tlv.Rope, _ *impl.Tree, tr *tlv.Trailer) { tr.Timestamp = reversed(tr.Timestamp, tr.TSWidth) })
			next := im.TLV.Egress
			im.TLV.Egress = func(n *tlv.Node, e tlv.Egress) ([]byte, error) {
				// A clock whose reading's low bytes, written little-endian,
				// are the real reading's written big-endian.
				if clock, w := e.Clock, e.TSWidth; clock != nil && w > 0 {
					e.Clock = func() time.Time { return time.Unix(0, int64(reversed(uint64(clock().UnixNano()), w))) }
				}
				return next(n, e)
			}
		},
	},
	{
		Name: "encode-length-wraps", Suite: "tlv",
		Bug:   "never sets LL when encoding, so a payload over 0xFFFF bytes gets its length cut to 16 bits (reconstructed§tlv-header#1)",
		apply: func(im *impl.Impl) { withEncoder(im, tlv.Encoder{Header: shortHeaderOnly{}}) },
	},
	{
		Name: "serialize-first-view-only", Suite: "tlv",
		Bug: "serializes a TLV by copying its payload's first view, as if the rope were one contiguous buffer (libtracer-graph-model §spec-level-proof-obligation)",
		apply: func(im *impl.Impl) {
			im.TLV.Serialize = func(n *tlv.Node) []byte {
				out := n.Header()
				for v := range n.Payload().Views() {
					out = append(out, v...)
					break
				}
				return append(out, n.Trailer().Bytes()...)
			}
		},
	},
	{
		Name: "split-off-by-one", Suite: "tlv",
		Bug: "split(C, K) partitions after child K instead of before it (libtracer-graph-model §structured-tlv-as-abstraction-memory-as-rope)",
		apply: func(im *impl.Impl) {
			next := im.TLV.Split
			im.TLV.Split = func(n *tlv.Node, k int) (*tlv.Node, *tlv.Node, error) {
				if k < len(n.Children()) {
					k++
				}
				return next(n, k)
			}
		},
	},
	{
		Name: "insert-appends", Suite: "tlv",
		Bug: "insert(C, K, child) appends the child after the last child, whatever K (libtracer-graph-model §structured-tlv-as-abstraction-memory-as-rope)",
		apply: func(im *impl.Impl) {
			next := im.TLV.Insert
			im.TLV.Insert = func(n *tlv.Node, _ int, c *tlv.Node) (*tlv.Node, error) { return next(n, len(n.Children()), c) }
		},
	},
	{
		Name: "leading-slash-segment", Suite: "tlv",
		Bug: "keeps the empty segment before a leading slash: \"/a\" gets an empty record before \"a\" (reconstructed§tlv-path#2)",
		apply: func(im *impl.Impl) {
			next := im.TLV.Canonicalize
			im.TLV.Canonicalize = func(s string) ([]byte, error) {
				b, err := next(s)
				if err == nil && strings.HasPrefix(s, "/") {
					b = append([]byte{0}, b...)
				}
				return b, err
			}
		},
	},
	{
		Name: "dot-segments-accepted", Suite: "tlv",
		Bug: "canonicalizes \".\" and \"..\" as ordinary segments (reconstructed§tlv-path#3)",
		apply: func(im *impl.Impl) {
			next := im.TLV.Canonicalize
			im.TLV.Canonicalize = func(s string) ([]byte, error) {
				// Each segment canonicalized alone, as the path of one
				// segment, except the two the reference refuses.
				var out []byte
				for _, seg := range strings.Split(s, "/") {
					if seg == "." || seg == ".." {
						out = append(append(out, byte(len(seg))), seg...)
						continue
					}
					b, err := next(seg)
					if err != nil {
						return nil, err
					}
					out = append(out, b...)
				}
				return out, nil
			}
		},
	},
	{
		Name: "slash-in-record-accepted", Suite: "tlv",
		Bug: "accepts a received PATH record that contains 0x2F (reconstructed§tlv-path#4)",
		apply: func(im *impl.Impl) {
			next := im.TLV.ValidatePath
			im.TLV.ValidatePath = func(r tlv.Rope) ([]string, error) {
				// Where the reference refuses a record only for its 0x2F
				// bytes, they are read as another byte and put back after.
				orig := r.Bytes()
				b := bytes.Clone(orig)
				for {
					segs, err := next(tlv.NewRope(b))
					var de *tlv.DecodeError
					if err == nil {
						at := 0
						for i, s := range segs {
							segs[i] = string(orig[at+1 : at+1+len(s)])
							at += 1 + len(s)
						}
						return segs, nil
					}
					if !errors.As(err, &de) || !slashOnly(b, int(de.Offset)) {
						return nil, err
					}
					rec := b[de.Offset+1 : de.Offset+1+int64(b[de.Offset])]
					copy(rec, bytes.ReplaceAll(rec, []byte{'/'}, []byte{'_'}))
				}
			}
		},
	},
	hopMutant("src-run-appended", "a forward hop appends the inbound link's mount run to src instead of prepending it (libtracer-graph-model §the-shedding-rule-mandatory)",
		func(fwd *tlv.Node, res tlv.HopResult, links []string, inbound int) (tlv.HopResult, error) {
			if res.Terminus {
				return res, nil
			}
			run, err := tlv.CanonicalPath(links[inbound])
			if err != nil {
				return res, err
			}
			src := append(fwd.Children()[2].Payload().Bytes(), run...)
			kids := res.Frame.Children()
			return forwardAs(res, kids[0], kids[1], reframedLeaf(kids[2], src), kids[3])
		}),
	hopMutant("identity-vertex-forwarded", "forwards a FWD whose dst is exactly a link's mount run, with an empty dst, instead of treating it as the terminus (reconstructed§tlv-forward-hop#3)",
		func(fwd *tlv.Node, res tlv.HopResult, links []string, inbound int) (tlv.HopResult, error) {
			if !res.Terminus {
				return res, nil
			}
			kids := fwd.Children()
			dst := kids[1].Payload().Bytes()
			for i, l := range links {
				run, err := tlv.CanonicalPath(l)
				if err != nil || !bytes.Equal(run, dst) {
					continue
				}
				in, _ := tlv.CanonicalPath(links[inbound])
				src := append(in, kids[2].Payload().Bytes()...)
				return forwardAs(tlv.HopResult{Link: i, Frame: fwd}, kids[0], reframedLeaf(kids[1], nil), reframedLeaf(kids[2], src), kids[3])
			}
			return res, nil
		}),
	hopMutant("forwarded-on-inbound-link", "a forward hop sends the frame back on the link it arrived on instead of the link its dst names (libtracer-graph-model §the-shedding-rule-mandatory)",
		func(_ *tlv.Node, res tlv.HopResult, _ []string, inbound int) (tlv.HopResult, error) {
			if !res.Terminus {
				res.Link = inbound
			}
			return res, nil
		}),
	{
		Name: "envelope-stored", Suite: "tlv",
		Bug: "at the terminus stores the whole FWD, envelope and routes, instead of the bare payload TLV (libtracer-graph-model §graph-data-vs-in-flight-messages-the-fwd-envelope)",
		apply: func(im *impl.Impl) {
			im.TLV.Store = func(fwd *tlv.Node) ([]byte, error) { return tlv.Egress{}.AppendTo(nil, fwd) }
		},
	},
	{
		Name: "policy-priority-at-bit-3", Suite: "tlv",
		Bug: "packs and reads the delivery policy's priority at bits 3-5 instead of 2-4 (libtracer-graph-model §subscriber-delivery-policy)",
		apply: func(im *impl.Impl) {
			nextPack, nextRead := im.TLV.PackPolicy, im.TLV.ReadPolicy
			im.TLV.PackPolicy = func(p tlv.DeliveryPolicy) (uint16, error) {
				v, err := nextPack(p)
				return v&^(0x7<<2) | uint16(p.Priority&0x7)<<3, err
			}
			im.TLV.ReadPolicy = func(n *tlv.Node) (tlv.DeliveryPolicy, error) {
				p, err := nextRead(n)
				if err != nil {
					return p, err
				}
				v, _ := p.Pack() // bits 0-7 as received: every one is a field's
				p.Priority = uint8(v>>3) & 0x7
				return p, nil
			}
		},
	},
	checkMutant("crc32c-computed-as-crc32", "computes the CRC-32C check with CRC-32's IEEE polynomial, on read and at egress (reconstructed§tlv-trailer#4)",
		tlv.CRC32C, func() func([]byte) uint64 {
			return func(b []byte) uint64 { return uint64(crc32.ChecksumIEEE(b)) }
		}),
	checkMutant("crc64xz-computed-as-crc64-iso", "computes the CRC-64/XZ check with the ISO polynomial in its place, on read and at egress (reconstructed§tlv-trailer#5)",
		tlv.CRC64XZ, func() func([]byte) uint64 {
			iso := crc64.MakeTable(crc64.ISO)
			return func(b []byte) uint64 { return crc64.Checksum(b, iso) }
		}),
	hopMutant("hop-forwards-writes-only", "a forward hop forwards only WRITE and REPLY and takes a FWD of any other op for one that reached its terminus (libtracer-graph-model §the-shedding-rule-mandatory: a hop does not interpret the op)",
		func(fwd *tlv.Node, res tlv.HopResult, _ []string, _ int) (tlv.HopResult, error) {
			op := fwd.Children()[0].Payload().Bytes()
			if !res.Terminus && len(op) == 1 && tlv.Op(op[0]) != tlv.OpWrite && tlv.Op(op[0]) != tlv.OpReply {
				return tlv.HopResult{Terminus: true}, nil
			}
			return res, nil
		}),
	{
		Name: "hop-trailer-carried-over", Suite: "tlv",
		Bug: "a forward hop re-emits the trailer the FWD arrived with, its timestamp and check as received, instead of the egress link's fresh one (libtracer-graph-model §the-shedding-rule-mandatory)",
		apply: func(im *impl.Impl) {
			im.TLV.Forward = func(frame *tlv.Node, arrived tlv.Trailer, _ tlv.Egress) ([]byte, error) {
				// The arrived trailer's widths, its timestamp as the low bytes
				// of the clock, then its check written over the fresh one.
				stale := tlv.Egress{TSWidth: arrived.TSWidth, CRC: arrived.CRC,
					Clock: func() time.Time { return time.Unix(0, int64(arrived.Timestamp)) }}
				b, err := im.TLV.Egress(frame, stale)
				if err == nil && arrived.CRC != tlv.CRCNone {
					putCheck(b, arrived.Check)
				}
				return b, err
			}
		},
	},
	policyMutant("policy-reserved-refused", "refuses a delivery policy with any of bits 8-15 set (libtracer-graph-model §subscriber-delivery-policy: ignored on read, never rejected)",
		func(v uint16, found bool) error {
			if found && v&0xFF00 != 0 {
				return fmt.Errorf("reserved policy bits 0x%04x", v&0xFF00)
			}
			return nil
		}),
	policyMutant("absent-policy-refused", "refuses a SUBSCRIBER that carries no delivery_policy instead of reading the all-zero policy (libtracer-graph-model §subscriber-delivery-policy)",
		func(_ uint16, found bool) error {
			if !found {
				return errors.New("no delivery_policy")
			}
			return nil
		}),
}

// checkMutant is the mutant that computes the check of one kind with sum,
// which newSum makes, instead of the catalogued CRC: its decode op verifies
// such a trailer with it, and its egress writes it.
func checkMutant(name, bug string, kind tlv.CRC, newSum func() func([]byte) uint64) Mutant {
	return Mutant{Name: name, Suite: "tlv", Bug: bug, apply: func(im *impl.Impl) {
		sum := newSum()
		withDecoder(im, func(d *tlv.Decoder, _ tlv.Rope) {
			d.Verify = func(c tlv.TrailerCheck) error {
				if c.Kind != kind {
					return tlv.VerifyCheck(c)
				}
				if want := sum(c.Covered.Bytes()); c.Check != want {
					return &tlv.DecodeError{Status: tlv.StatusCRCMismatch, Offset: c.At, Reason: fmt.Sprintf("%s is 0x%x, the bytes give 0x%x", c.Kind, c.Check, want)}
				}
				return nil
			}
		})
		next := im.TLV.Egress
		im.TLV.Egress = func(n *tlv.Node, e tlv.Egress) ([]byte, error) {
			b, err := next(n, e)
			if err == nil && e.CRC == kind {
				putCheck(b, sum(b[:len(b)-checkWidth(b)]))
			}
			return b, err
		}
	}}
}

// checkWidth is the width of the check that ends frame, as its opt byte
// gives it.
func checkWidth(frame []byte) int {
	opt := tlv.Opt(frame[1])
	return opt.TrailerSize() - opt.TSWidth()
}

// putCheck writes sum over the check that ends frame, little-endian.
func putCheck(frame []byte, sum uint64) {
	w := checkWidth(frame)
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], sum)
	copy(frame[len(frame)-w:], b[:w])
}

// decoderMutant is the mutant whose decode op decodes with the reference
// decoder as set sets it for the frame.
func decoderMutant(name, bug string, set func(d *tlv.Decoder, frame tlv.Rope)) Mutant {
	return Mutant{Name: name, Suite: "tlv", Bug: bug, apply: func(im *impl.Impl) { withDecoder(im, set) }}
}

// withDecoder makes im's decode op decode with the reference decoder as set
// sets it for the frame.
func withDecoder(im *impl.Impl, set func(d *tlv.Decoder, frame tlv.Rope)) {
	im.TLV.Decode = func(frame tlv.Rope, maxDepth int) (*impl.Tree, tlv.Trailer, error) {
		d := tlv.Decoder{MaxDepth: maxDepth}
		set(&d, frame)
		return impl.DecodeTree(d, frame)
	}
}

// depthMutant is the mutant whose decode op bounds nesting at bound's
// change of the depth the Hello declares.
func depthMutant(name, bug string, bound func(declared int) int) Mutant {
	return Mutant{Name: name, Suite: "tlv", Bug: bug, apply: func(im *impl.Impl) {
		next := im.TLV.Decode
		im.TLV.Decode = func(frame tlv.Rope, maxDepth int) (*impl.Tree, tlv.Trailer, error) {
			return next(frame, bound(maxDepth))
		}
	}}
}

// treeMutant is the mutant whose decode op reports the reference's tree and
// trailer as change changes them.
func treeMutant(name, bug string, change func(frame tlv.Rope, t *impl.Tree, tr *tlv.Trailer)) Mutant {
	return Mutant{Name: name, Suite: "tlv", Bug: bug, apply: func(im *impl.Impl) { withTree(im, change) }}
}

// withTree makes im's decode op report its tree and trailer as change
// changes them.
func withTree(im *impl.Impl, change func(frame tlv.Rope, t *impl.Tree, tr *tlv.Trailer)) {
	next := im.TLV.Decode
	im.TLV.Decode = func(frame tlv.Rope, maxDepth int) (*impl.Tree, tlv.Trailer, error) {
		t, tr, err := next(frame, maxDepth)
		if err == nil {
			change(frame, t, &tr)
		}
		return t, tr, err
	}
}

// withEncoder makes im's encode op build the reference's tree and write it
// with e.
func withEncoder(im *impl.Impl, e tlv.Encoder) {
	im.TLV.Encode = func(t *impl.Tree) ([]byte, error) {
		n, err := impl.NodeOf(t)
		if err != nil {
			return nil, err
		}
		return e.AppendTo(nil, n), nil
	}
}

// viewEnds returns the offsets at which one of r's views ends and another
// begins.
func viewEnds(r tlv.Rope) map[int]bool {
	ends := map[int]bool{}
	off := 0
	for v := range r.Views() {
		off += len(v)
		ends[off] = true
	}
	return ends
}

// headerInOneView is a header check that refuses a header a view boundary
// of frame cuts, as a reader that takes the header from one buffer would.
func headerInOneView(frame tlv.Rope) tlv.HeaderCheck {
	ends := viewEnds(frame)
	return func(h tlv.HeaderAt) error {
		for i := h.Offset + 1; i < h.Offset+int64(h.Opt.HeaderSize()); i++ {
			if ends[int(i)] {
				return &tlv.DecodeError{Status: tlv.StatusMalformed, Offset: h.Offset, Reason: "the header is cut short by the end of its buffer"}
			}
		}
		return nil
	}
}

// shortHeaderOnly is the standard header format with LL ignored: every
// header is the 4-byte form with a 16-bit length.
type shortHeaderOnly struct{ tlv.StandardHeader }

func (shortHeaderOnly) Size(opt tlv.Opt) int { return tlv.StandardHeader{}.Size(opt &^ tlv.OptLL) }

func (shortHeaderOnly) Length(h []byte, room int) (uint64, error) {
	h[1] &^= byte(tlv.OptLL)
	return tlv.StandardHeader{}.Length(h, room)
}

func (shortHeaderOnly) Append(dst []byte, t tlv.Type, opt tlv.Opt, length int) []byte {
	return tlv.StandardHeader{}.Append(dst, t, opt&^tlv.OptLL, length)
}

// lengthCountsHeader is the standard header format whose length field
// counts the header too.
type lengthCountsHeader struct{ tlv.StandardHeader }

func (lengthCountsHeader) Length(h []byte, room int) (uint64, error) {
	n, err := tlv.StandardHeader{}.Length(h, room)
	hs := uint64(len(h))
	if err == nil && n < hs {
		return 0, &tlv.DecodeError{Status: tlv.StatusMalformed, Reason: "a length shorter than the header"}
	}
	return n - hs, err
}

func (lengthCountsHeader) Append(dst []byte, t tlv.Type, opt tlv.Opt, length int) []byte {
	return tlv.StandardHeader{}.Append(dst, t, opt, length+opt.HeaderSize())
}

// clampedLength is the standard header format that cuts a length claiming
// more than its span holds to what is there.
type clampedLength struct{ tlv.StandardHeader }

func (clampedLength) Length(h []byte, room int) (uint64, error) {
	n, err := tlv.StandardHeader{}.Length(h, room)
	if trailer := uint64(tlv.Opt(h[1]).TrailerSize()); err == nil && n+trailer > uint64(room) && uint64(room) >= trailer {
		n = uint64(room) - trailer
	}
	return n, err
}

// knownTypes are the type codes reconstructed§tlv-type-codes#1 names.
var knownTypes = map[tlv.Type]bool{tlv.TypeValue: true, tlv.TypeName: true, tlv.TypeTime: true, tlv.TypeSubscriber: true,
	tlv.TypeACL: true, tlv.TypePath: true, tlv.TypePoint: true, tlv.TypeSpec: true, tlv.TypeStatus: true, tlv.TypeOp: true,
	tlv.TypeSettings: true, tlv.TypeResult: true, tlv.TypeRouter: true, tlv.TypeFwd: true, tlv.TypeBatch: true}

// reversed returns the w low bytes of v in the other byte order.
func reversed(v uint64, w int) uint64 {
	if w == 0 {
		return v
	}
	return bits.ReverseBytes64(v) >> (64 - 8*w)
}

// slashOnly reports whether the record at offset at of a PATH payload is
// whole, non-empty and holds a 0x2F.
func slashOnly(b []byte, at int) bool {
	if at < 0 || at >= len(b) {
		return false
	}
	n := int(b[at])
	return n > 0 && at+1+n <= len(b) && bytes.IndexByte(b[at+1:at+1+n], '/') >= 0
}

// hopMutant wraps the reference hop: bend gets the FWD, the reference's
// result, the links and the inbound link, and returns the mutant's result.
func hopMutant(name, bug string, bend func(fwd *tlv.Node, res tlv.HopResult, links []string, inbound int) (tlv.HopResult, error)) Mutant {
	return Mutant{Name: name, Suite: "tlv", Bug: bug, apply: func(im *impl.Impl) {
		ref := im.TLV.Hop
		im.TLV.Hop = func(links []string, inbound int, fwd *tlv.Node) (tlv.HopResult, error) {
			res, err := ref(links, inbound, fwd)
			if err != nil {
				return res, err
			}
			return bend(fwd, res, links, inbound)
		}
	}}
}

// reframed returns a TLV of n's type and header form — its LL kept, set when
// the payload needs it; no trailer — over payload, decoded from the bytes a
// forwarder would write for it, as the reference hop re-emits a route.
func reframed(n *tlv.Node, payload []byte) (*tlv.Node, error) {
	opt := n.Opt() &^ (tlv.OptTS | tlv.OptCRC)
	if len(payload) > 0xFFFF {
		opt |= tlv.OptLL
	}
	b := append(tlv.StandardHeader{}.Append(nil, n.Type(), opt, len(payload)), payload...)
	return tlv.Decode(tlv.NewRope(b))
}

// reframedLeaf is reframed for a route, which cannot fail.
func reframedLeaf(n *tlv.Node, payload []byte) *tlv.Node {
	r, err := reframed(n, payload)
	if err != nil {
		panic(err) // a header this file wrote over a leaf
	}
	return r
}

// forwardAs returns res forwarding a FWD of res.Frame's header form with
// the given children.
func forwardAs(res tlv.HopResult, kids ...*tlv.Node) (tlv.HopResult, error) {
	var body []byte
	for _, k := range kids {
		body = k.AppendTo(body)
	}
	f, err := reframed(res.Frame, body)
	res.Frame = f
	return res, err
}

// policyMutant is the mutant that reads a SUBSCRIBER's delivery policy as
// the reference does, then refuses it where refuse says, given the policy's
// 16 bits as received and whether it was there.
func policyMutant(name, bug string, refuse func(v uint16, found bool) error) Mutant {
	return Mutant{Name: name, Suite: "tlv", Bug: bug, apply: func(im *impl.Impl) {
		next := im.TLV.ReadPolicy
		im.TLV.ReadPolicy = func(n *tlv.Node) (tlv.DeliveryPolicy, error) {
			p, err := next(n)
			if err != nil {
				return p, err
			}
			// The reference took the first delivery_policy setting, a
			// VALUE of two bytes.
			s, _ := tlv.DecodeSubscriber(n)
			var v uint16
			found := false
			for _, set := range s.Settings {
				if set.Key == tlv.KeyDeliveryPolicy {
					v, found = binary.LittleEndian.Uint16(set.Value.Payload().Bytes()), true
					break
				}
			}
			if err := refuse(v, found); err != nil {
				return tlv.DeliveryPolicy{}, err
			}
			return p, nil
		}
	}}
}
