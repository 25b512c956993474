package mutant

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"hash/crc64"
	"strings"
	"unicode/utf8"

	"github.com/conform-suite/conform/ref/tlv"
	"github.com/conform-suite/conform/sut/impl"
)

// tlvMutants are every tlv mutant: the ones issue 5 lists, then the further
// failure modes that give each remaining MUST case a bug to catch.
var tlvMutants = append(append([]Mutant(nil), tlvListed...), tlvFurther...)

// tlvListed are the failure modes issue 5 lists, drawn from the graph model
// and RECONSTRUCTED §2.
var tlvListed = []Mutant{
	decoderMutant("header-assumed-contiguous", "reads a TLV header from one segment, refusing a header that straddles a rope boundary (graph model §The two compositions)",
		bugDecoder{contiguousHeader: true}),
	{
		Name: "record-length-contiguous", Suite: "tlv",
		Bug: "reads a PATH record's text from the segment holding its length byte, refusing a record whose text starts in the next segment (graph model §The two compositions)",
		apply: func(im *impl.Impl) {
			im.TLV.ValidatePath = func(r tlv.Rope) ([]string, error) {
				if err := recordLengthContiguous(r); err != nil {
					return nil, err
				}
				return tlv.PathSegments(r)
			}
		},
	},
	decoderMutant("ll-ignored", "ignores opt.LL and always reads a 4-byte header with a 16-bit length (RECONSTRUCTED §2 Header)",
		bugDecoder{ignoreLL: true}),
	{
		Name: "length-counts-header", Suite: "tlv",
		Bug: "counts the header in the length field, on read and on write (RECONSTRUCTED §2 Header: the length counts the payload alone)",
		apply: func(im *impl.Impl) {
			im.TLV.Decode = bugDecoder{lengthCountsHeader: true}.decode
			im.TLV.Encode = bugEncoder{lengthCountsHeader: true}.encode
		},
	},
	decoderMutant("trailer-attached-at-rest", "leaves the frame's trailer attached (TS and CRC bits set, trailer bytes kept) on the tree at rest (graph model §Payload invariance)",
		bugDecoder{keepTrailer: true}),
	decoderMutant("crc-not-checked", "strips a CRC trailer without checking it (RECONSTRUCTED §2 Trailer)",
		bugDecoder{noCRC: true}),
	{
		Name: "crc-over-payload-only", Suite: "tlv",
		Bug: "computes the CRC over the payload alone, not header, payload and timestamp, on read and at egress (RECONSTRUCTED §2 Trailer)",
		apply: func(im *impl.Impl) {
			im.TLV.Decode = bugDecoder{crcPayloadOnly: true}.decode
			im.TLV.Egress = bugEgress{crcPayloadOnly: true}.egress
		},
	},
	decoderMutant("reserved-opt-bits-ignored", "accepts a header with opt bits 6-7 set (RECONSTRUCTED §2: a reader must refuse them)",
		bugDecoder{reservedIgnored: true}),
	decoderMutant("no-depth-bound", "recurses into PL payloads without a depth bound, whatever it declares (graph model §Structured TLV as abstraction, memory as rope)",
		bugDecoder{noDepthBound: true}),
	{
		Name: "trailing-slash-kept", Suite: "tlv",
		Bug: "does not canonicalize a trailing slash: \"/a/\" gets an empty record after \"a\" (RECONSTRUCTED §2 PATH payload; graph model §Dispatch keyed on canonical PATH TLV bytes)",
		apply: func(im *impl.Impl) {
			im.TLV.Canonicalize = func(s string) ([]byte, error) {
				b, err := tlv.CanonicalPath(s)
				if err == nil && len(s) > 1 && strings.HasSuffix(s, "/") {
					b = append(b, 0)
				}
				return b, err
			}
		},
	},
	hopMutant("hop-strips-one-segment", "a forward hop strips one dst segment instead of the whole mount run net/<module>/<name>[/<peer>] (graph model §The shedding rule; RECONSTRUCTED §4)",
		func(fwd *tlv.Node, res tlv.HopResult, _ []string, _ int) (tlv.HopResult, error) {
			if res.Terminus {
				return res, nil
			}
			dst := fwd.Children()[1].Payload().Bytes()
			kids := res.Frame.Children()
			res.Frame = tlv.NewStruct(tlv.TypeFwd, kids[0], tlv.NewLeaf(tlv.TypePath, dst[1+int(dst[0]):]), kids[2], kids[3])
			return res, nil
		}),
	hopMutant("hop-reencodes-payload", "a forward hop decodes and re-encodes the frame with minimal headers, dropping inner trailers, instead of re-emitting the bytes it received (graph model §The shedding rule)",
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
	decoderMutant("unknown-types-opaque", "never recurses into a TLV of an unknown type, whatever its PL bit says (RECONSTRUCTED §2 Type codes)",
		bugDecoder{unknownOpaque: true}),
	decoderMutant("type-zero-accepted", "decodes a TLV of type 0x00 (RECONSTRUCTED §2: 0x00 is invalid)",
		bugDecoder{typeZeroOK: true}),
	decoderMutant("crc-code-3-accepted", "reads CRC code 3 as no check instead of refusing it (RECONSTRUCTED §2)",
		bugDecoder{crc3OK: true}),
	decoderMutant("short-payload-clamped", "clamps a length that claims more bytes than are present to what is there, instead of refusing the frame (RECONSTRUCTED §2)",
		bugDecoder{clampShort: true}),
	decoderMutant("child-trailer-stripped", "strips children's own trailers as well as the frame's, changing the parent's payload (graph model §Nested TLV structure)",
		bugDecoder{stripChildTrailers: true}),
	decoderMutant("depth-bound-off-by-one", "refuses nesting one level short of the depth it declares (graph model §Structured TLV as abstraction, memory as rope)",
		bugDecoder{depthOffByOne: true}),
	{
		Name: "timestamp-big-endian", Suite: "tlv",
		Bug: "reads and writes the trailer timestamp big-endian (RECONSTRUCTED §2 Trailer: both little-endian)",
		apply: func(im *impl.Impl) {
			im.TLV.Decode = bugDecoder{timestampBE: true}.decode
			im.TLV.Egress = bugEgress{timestampBE: true}.egress
		},
	},
	{
		Name: "encode-length-wraps", Suite: "tlv",
		Bug:   "never sets LL when encoding, so a payload over 0xFFFF bytes gets its length cut to 16 bits (RECONSTRUCTED §2 Header)",
		apply: func(im *impl.Impl) { im.TLV.Encode = bugEncoder{neverLL: true}.encode },
	},
	{
		Name: "serialize-first-view-only", Suite: "tlv",
		Bug: "serializes a TLV by copying its payload's first view, as if the rope were one contiguous buffer (graph model §Spec-level proof obligation)",
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
		Bug: "split(C, K) partitions after child K instead of before it (graph model §Structured TLV as abstraction, memory as rope)",
		apply: func(im *impl.Impl) {
			im.TLV.Split = func(n *tlv.Node, k int) (*tlv.Node, *tlv.Node, error) {
				if k < len(n.Children()) {
					k++
				}
				return n.Split(k)
			}
		},
	},
	{
		Name: "insert-appends", Suite: "tlv",
		Bug: "insert(C, K, child) appends the child after the last child, whatever K (graph model §Structured TLV as abstraction, memory as rope)",
		apply: func(im *impl.Impl) {
			im.TLV.Insert = func(n *tlv.Node, _ int, c *tlv.Node) (*tlv.Node, error) { return n.Insert(len(n.Children()), c) }
		},
	},
	{
		Name: "leading-slash-segment", Suite: "tlv",
		Bug: "keeps the empty segment before a leading slash: \"/a\" gets an empty record before \"a\" (RECONSTRUCTED §2 PATH payload)",
		apply: func(im *impl.Impl) {
			im.TLV.Canonicalize = func(s string) ([]byte, error) {
				b, err := tlv.CanonicalPath(s)
				if err == nil && strings.HasPrefix(s, "/") {
					b = append([]byte{0}, b...)
				}
				return b, err
			}
		},
	},
	{
		Name: "dot-segments-accepted", Suite: "tlv",
		Bug: "canonicalizes \".\" and \"..\" as ordinary segments (RECONSTRUCTED §2 PATH payload)",
		apply: func(im *impl.Impl) {
			im.TLV.Canonicalize = func(s string) ([]byte, error) {
				var out []byte
				for _, seg := range strings.Split(s, "/") {
					if seg == "." || seg == ".." {
						out = append(append(out, byte(len(seg))), seg...)
						continue
					}
					b, err := tlv.CanonicalPath(seg)
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
		Bug: "accepts a received PATH record that contains 0x2F (RECONSTRUCTED §2 PATH payload)",
		apply: func(im *impl.Impl) {
			im.TLV.ValidatePath = func(r tlv.Rope) ([]string, error) {
				b := r.Bytes()
				var segs []string
				for i := 0; i < len(b); {
					n := int(b[i])
					if n == 0 || i+1+n > len(b) || !utf8.Valid(b[i+1:i+1+n]) {
						return nil, &tlv.DecodeError{Status: tlv.StatusPathInvalid, Offset: int64(i), Reason: "invalid record"}
					}
					segs = append(segs, string(b[i+1:i+1+n]))
					i += 1 + n
				}
				return segs, nil
			}
		},
	},
	hopMutant("src-run-appended", "a forward hop appends the inbound link's mount run to src instead of prepending it (graph model §The shedding rule)",
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
			res.Frame = tlv.NewStruct(tlv.TypeFwd, kids[0], kids[1], tlv.NewLeaf(tlv.TypePath, src), kids[3])
			return res, nil
		}),
	hopMutant("identity-vertex-forwarded", "forwards a FWD whose dst is exactly a link's mount run, with an empty dst, instead of treating it as the terminus (RECONSTRUCTED §2 The forward hop)",
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
				return tlv.HopResult{Link: i, Frame: tlv.NewStruct(tlv.TypeFwd, kids[0], tlv.NewLeaf(tlv.TypePath, nil),
					tlv.NewLeaf(tlv.TypePath, src), kids[3])}, nil
			}
			return res, nil
		}),
	hopMutant("forwarded-on-inbound-link", "a forward hop sends the frame back on the link it arrived on instead of the link its dst names (graph model §The shedding rule)",
		func(_ *tlv.Node, res tlv.HopResult, _ []string, inbound int) (tlv.HopResult, error) {
			if !res.Terminus {
				res.Link = inbound
			}
			return res, nil
		}),
	{
		Name: "envelope-stored", Suite: "tlv",
		Bug: "at the terminus stores the whole FWD, envelope and routes, instead of the bare payload TLV (graph model §Graph data vs in-flight messages)",
		apply: func(im *impl.Impl) {
			im.TLV.Store = func(fwd *tlv.Node) ([]byte, error) { return tlv.Egress{}.AppendTo(nil, fwd) }
		},
	},
	{
		Name: "policy-priority-at-bit-3", Suite: "tlv",
		Bug: "packs and reads the delivery policy's priority at bits 3-5 instead of 2-4 (graph model §Subscriber delivery policy)",
		apply: func(im *impl.Impl) {
			im.TLV.PackPolicy = func(p tlv.DeliveryPolicy) (uint16, error) {
				v, err := p.Pack()
				return v&^(0x7<<2) | uint16(p.Priority&0x7)<<3, err
			}
			im.TLV.ReadPolicy = policyReader(func(v uint16, _ bool) (tlv.DeliveryPolicy, error) {
				p := tlv.UnpackDeliveryPolicy(v)
				p.Priority = uint8(v>>3) & 0x7
				return p, nil
			})
		},
	},
	{
		Name: "policy-reserved-refused", Suite: "tlv",
		Bug: "refuses a delivery policy with any of bits 8-15 set (graph model §Subscriber delivery policy: ignored on read, never rejected)",
		apply: func(im *impl.Impl) {
			im.TLV.ReadPolicy = policyReader(func(v uint16, _ bool) (tlv.DeliveryPolicy, error) {
				if v&0xFF00 != 0 {
					return tlv.DeliveryPolicy{}, fmt.Errorf("reserved policy bits 0x%04x", v&0xFF00)
				}
				return tlv.UnpackDeliveryPolicy(v), nil
			})
		},
	},
	{
		Name: "absent-policy-refused", Suite: "tlv",
		Bug: "refuses a SUBSCRIBER that carries no delivery_policy instead of reading the all-zero policy (graph model §Subscriber delivery policy)",
		apply: func(im *impl.Impl) {
			im.TLV.ReadPolicy = policyReader(func(v uint16, found bool) (tlv.DeliveryPolicy, error) {
				if !found {
					return tlv.DeliveryPolicy{}, errors.New("no delivery_policy")
				}
				return tlv.UnpackDeliveryPolicy(v), nil
			})
		},
	},
}

func decoderMutant(name, bug string, d bugDecoder) Mutant {
	return Mutant{Name: name, Suite: "tlv", Bug: bug, apply: func(im *impl.Impl) { im.TLV.Decode = d.decode }}
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

// policyReader reads a SUBSCRIBER's delivery_policy value as the reference
// does, then unpacks it with unpack (found is false when it is absent).
func policyReader(unpack func(v uint16, found bool) (tlv.DeliveryPolicy, error)) func(*tlv.Node) (tlv.DeliveryPolicy, error) {
	return func(n *tlv.Node) (tlv.DeliveryPolicy, error) {
		s, err := tlv.DecodeSubscriber(n)
		if err != nil {
			return tlv.DeliveryPolicy{}, err
		}
		for _, set := range s.Settings {
			if set.Key == tlv.KeyDeliveryPolicy && set.Value.Payload().Len() == 2 {
				return unpack(binary.LittleEndian.Uint16(set.Value.Payload().Bytes()), true)
			}
		}
		return unpack(0, false)
	}
}

// recordLengthContiguous refuses a PATH payload in which a record's length
// byte ends one view of the rope and its text starts the next, as a walker
// that reads a record off a pointer into the length byte's view would.
func recordLengthContiguous(r tlv.Rope) error {
	var ends []int // the offset just past each view
	off := 0
	for v := range r.Views() {
		off += len(v)
		ends = append(ends, off)
	}
	b := r.Bytes()
	for i := 0; i < len(b); {
		n := int(b[i])
		for _, e := range ends {
			if e == i+1 && n > 0 && e < len(b) {
				return &tlv.DecodeError{Status: tlv.StatusPathInvalid, Offset: int64(i),
					Reason: "a record of " + fmt.Sprint(n) + " bytes runs past the end of its segment"}
			}
		}
		i += 1 + n
	}
	return nil
}

// bugDecoder is a TLV decoder with switchable bugs. With every switch off it
// decodes as the reference does: same trees, same trailers, same refusal
// statuses. It works on the flat bytes and remembers where the rope's views
// end, which the contiguous-header bug needs.
type bugDecoder struct {
	contiguousHeader   bool // a header straddling a view boundary is refused
	ignoreLL           bool // opt.LL is ignored: always a 4-byte header
	lengthCountsHeader bool // the length field counts the header too
	keepTrailer        bool // the root's trailer stays attached at rest
	noCRC              bool // checks are never verified
	crcPayloadOnly     bool // checks cover the payload alone
	reservedIgnored    bool // opt bits 6-7 are ignored
	noDepthBound       bool // nesting is never refused
	depthOffByOne      bool // nesting is refused at the bound itself
	unknownOpaque      bool // unknown types are never recursed into
	typeZeroOK         bool // type 0x00 is accepted
	crc3OK             bool // CRC code 3 reads as no check
	clampShort         bool // a length beyond the bytes present is cut to them
	stripChildTrailers bool // children's trailers are dropped too
	timestampBE        bool // the trailer timestamp is big-endian
}

var knownTypes = map[uint8]bool{0x01: true, 0x02: true, 0x03: true, 0x04: true, 0x05: true, 0x06: true, 0x07: true,
	0x08: true, 0x09: true, 0x0A: true, 0x0B: true, 0x0C: true, 0x0D: true, 0x0F: true, 0x80: true}

var (
	bugCRC32 = crc32.MakeTable(crc32.Castagnoli)
	bugCRC64 = crc64.MakeTable(crc64.ECMA)
)

type bugFrame struct {
	buf    []byte
	bounds map[int]bool // offsets where one view ends and the next begins
	max    int
}

func bugMalformed(at int, reason string) error {
	return &tlv.DecodeError{Status: tlv.StatusMalformed, Offset: int64(at), Reason: reason}
}

func (d bugDecoder) decode(r tlv.Rope, maxDepth int) (*impl.Tree, tlv.Trailer, error) {
	f := bugFrame{buf: r.Bytes(), bounds: map[int]bool{}, max: maxDepth}
	off := 0
	for v := range r.Views() {
		off += len(v)
		f.bounds[off] = true
	}
	t, end, tr, err := d.node(&f, 0, len(f.buf), 1)
	if err != nil {
		return nil, tlv.Trailer{}, err
	}
	if end != len(f.buf) {
		return nil, tlv.Trailer{}, bugMalformed(end, "bytes follow the frame")
	}
	if !d.keepTrailer {
		t.Opt &^= uint8(tlv.OptTS | tlv.OptCRC)
		t.Trailer = nil
	}
	return t, tr, nil
}

// node decodes the TLV at f.buf[at:], which must end by limit, at the given
// depth, and returns it, where it ends, and its trailer.
func (d bugDecoder) node(f *bugFrame, at, limit, depth int) (*impl.Tree, int, tlv.Trailer, error) {
	var tr tlv.Trailer
	if limit-at < 4 {
		return nil, 0, tr, bugMalformed(at, "a header needs 4 bytes")
	}
	typ, opt := f.buf[at], f.buf[at+1]
	ll := opt&uint8(tlv.OptLL) != 0 && !d.ignoreLL
	hs := 4
	if ll {
		hs = 6
	}
	if d.contiguousHeader {
		for i := at + 1; i < at+hs; i++ {
			if f.bounds[i] {
				return nil, 0, tr, bugMalformed(at, "the header is cut short by the end of its buffer")
			}
		}
	}
	crc := (opt >> 4) & 3
	switch {
	case typ == 0 && !d.typeZeroOK:
		return nil, 0, tr, bugMalformed(at, "type 0x00")
	case opt&uint8(tlv.OptReserved) != 0 && !d.reservedIgnored:
		return nil, 0, tr, bugMalformed(at+1, "reserved opt bits")
	case crc == 3 && !d.crc3OK:
		return nil, 0, tr, bugMalformed(at+1, "CRC code 3")
	case crc == 3:
		crc = 0
	}
	if limit-at < hs {
		return nil, 0, tr, bugMalformed(at, "an LL header needs 6 bytes")
	}
	var length int
	if ll {
		length = int(binary.LittleEndian.Uint32(f.buf[at+2:]))
	} else {
		length = int(binary.LittleEndian.Uint16(f.buf[at+2:]))
	}
	if d.lengthCountsHeader {
		if length < hs {
			return nil, 0, tr, bugMalformed(at, "a length shorter than the header")
		}
		length -= hs
	}
	tr.TSWidth = [4]int{0, 4, 6, 8}[(opt>>2)&3]
	tr.CRC = tlv.CRC(crc)
	cw := [4]int{0, 4, 8, 0}[crc]
	if at+hs+length+tr.TSWidth+cw > limit {
		if !d.clampShort || limit-at-hs-tr.TSWidth-cw < 0 {
			return nil, 0, tr, bugMalformed(at, "a length beyond the bytes present")
		}
		length = limit - at - hs - tr.TSWidth - cw
	}
	pstart, pend := at+hs, at+hs+length
	end := pend + tr.TSWidth + cw
	ts := f.buf[pend : pend+tr.TSWidth]
	for i := range ts {
		if d.timestampBE {
			tr.Timestamp = tr.Timestamp<<8 | uint64(ts[i])
		} else {
			tr.Timestamp |= uint64(ts[i]) << (8 * i)
		}
	}
	if cw > 0 {
		var cb [8]byte
		copy(cb[:], f.buf[end-cw:end])
		tr.Check = binary.LittleEndian.Uint64(cb[:])
		covered := f.buf[at : end-cw]
		if d.crcPayloadOnly {
			covered = f.buf[pstart:pend]
		}
		want := uint64(crc32.Checksum(covered, bugCRC32))
		if crc == 2 {
			want = crc64.Checksum(covered, bugCRC64)
		}
		if want != tr.Check && !d.noCRC {
			return nil, 0, tr, &tlv.DecodeError{Status: tlv.StatusCRCMismatch, Offset: int64(end - cw), Reason: "check mismatch"}
		}
	}
	t := &impl.Tree{Type: typ, Opt: opt, Trailer: append([]byte(nil), f.buf[pend:end]...)}
	if opt&uint8(tlv.OptPL) == 0 || (d.unknownOpaque && !knownTypes[typ]) {
		t.Payload = append([]byte{}, f.buf[pstart:pend]...)
		return t, end, tr, nil
	}
	for c := pstart; c < pend; {
		bound := f.max
		if d.depthOffByOne {
			bound--
		}
		if depth+1 > bound && !d.noDepthBound {
			return nil, 0, tr, &tlv.DecodeError{Status: tlv.StatusNestingTooDeep, Offset: int64(c), Reason: "too deep"}
		}
		kid, next, _, err := d.node(f, c, pend, depth+1)
		if err != nil {
			return nil, 0, tr, err
		}
		if d.stripChildTrailers {
			kid.Opt &^= uint8(tlv.OptTS | tlv.OptCRC)
			kid.Trailer = nil
		}
		t.Children = append(t.Children, kid)
		c = next
	}
	return t, end, tr, nil
}

// bugEncoder is an originator's encoder with switchable bugs; with every
// switch off it writes what the reference writes.
type bugEncoder struct {
	lengthCountsHeader bool // the length field counts the header too
	neverLL            bool // the 4-byte header always, the length cut to 16 bits
}

func (e bugEncoder) encode(t *impl.Tree) ([]byte, error) {
	if t == nil || t.Type == 0 {
		return nil, &tlv.DecodeError{Status: tlv.StatusMalformed, Reason: "no tree or type 0x00"}
	}
	payload := t.Payload
	opt := t.Opt & uint8(tlv.OptPL)
	if opt != 0 {
		payload = nil
		for _, c := range t.Children {
			b, err := e.encode(c)
			if err != nil {
				return nil, err
			}
			payload = append(payload, b...)
		}
	}
	n := len(payload)
	if n > 0xFFFF && !e.neverLL {
		opt |= uint8(tlv.OptLL)
	}
	out := []byte{t.Type, opt}
	if opt&uint8(tlv.OptLL) != 0 {
		if e.lengthCountsHeader {
			n += 6
		}
		out = binary.LittleEndian.AppendUint32(out, uint32(n))
	} else {
		if e.lengthCountsHeader {
			n += 4
		}
		out = binary.LittleEndian.AppendUint16(out, uint16(n))
	}
	return append(out, payload...), nil
}

// bugEgress attaches a trailer with switchable bugs; with every switch off
// it writes what the reference's Egress writes.
type bugEgress struct {
	crcPayloadOnly bool // the check covers the payload alone
	timestampBE    bool // the timestamp is written big-endian
}

func (b bugEgress) egress(n *tlv.Node, e tlv.Egress) ([]byte, error) {
	code := map[int]tlv.Opt{0: 0, 4: 1, 6: 2, 8: 3}
	tsCode, ok := code[e.TSWidth]
	if !ok || e.CRC > tlv.CRC64XZ || (e.TSWidth > 0 && e.Clock == nil) {
		return nil, fmt.Errorf("egress %+v cannot be written", e)
	}
	opt := n.Opt()&^(tlv.OptTS|tlv.OptCRC) | tsCode<<2 | tlv.Opt(e.CRC)<<4
	head := n.Header()
	head[1] = byte(opt)
	payload := n.Payload().Bytes()
	out := append(append([]byte(nil), head...), payload...)
	if w := e.TSWidth; w > 0 {
		var ts [8]byte
		binary.LittleEndian.PutUint64(ts[:], uint64(e.Clock().UnixNano()))
		t := ts[:w]
		if b.timestampBE {
			t = reverse(t)
		}
		out = append(out, t...)
	}
	covered := out
	if b.crcPayloadOnly {
		covered = payload
	}
	switch e.CRC {
	case tlv.CRC32C:
		out = binary.LittleEndian.AppendUint32(out, crc32.Checksum(covered, bugCRC32))
	case tlv.CRC64XZ:
		out = binary.LittleEndian.AppendUint64(out, crc64.Checksum(covered, bugCRC64))
	}
	return out, nil
}

func reverse(b []byte) []byte {
	out := make([]byte, len(b))
	for i, c := range b {
		out[len(b)-1-i] = c
	}
	return out
}
