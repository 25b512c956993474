package meaning

import (
	"bytes"
	"encoding/binary"
	"strings"

	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/ref/tlv"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// The TLV header's opt bits (the TLV pins), as the reference declares
// them.
const (
	optPL       = byte(tlv.OptPL)
	optLL       = byte(tlv.OptLL)
	optTS       = byte(tlv.OptTS)
	optCRC      = byte(tlv.OptCRC)
	optReserved = byte(tlv.OptReserved)
)

// faults is the set of statuses the faults of a frame call for.
type faults map[uint32]bool

// census returns the statuses of every fault a TLV frame holds, as far as
// its structure can be followed: a reader may find them in any order, and
// which refusal wins when a frame holds several is open (docs/findings.md).
// depth is the nesting bound (the root is depth 1).
func census(b []byte, depth int) faults {
	f := faults{}
	end, ok := walkTLV(b, 0, len(b), 1, depth, f)
	if ok && end != len(b) {
		f[uint32(tlv.StatusMalformed)] = true
	}
	return f
}

// walkTLV follows the TLV at off within limit, recording faults; it returns
// where the TLV (trailer included) ends, and false when its extent cannot
// be known.
func walkTLV(b []byte, off, limit, d, bound int, f faults) (int, bool) {
	malformed := uint32(tlv.StatusMalformed)
	if d > bound {
		f[uint32(tlv.StatusNestingTooDeep)] = true
	}
	if limit-off < 4 {
		f[malformed] = true
		return 0, false
	}
	typ, opt := b[off], b[off+1]
	if typ == 0 || opt&optReserved != 0 {
		f[malformed] = true
	}
	crc := (opt & optCRC) >> 4
	if crc == 3 {
		f[malformed] = true
		return 0, false
	}
	hdr, length := 4, uint64(binary.LittleEndian.Uint16(b[off+2:]))
	if opt&optLL != 0 {
		if limit-off < 6 {
			f[malformed] = true
			return 0, false
		}
		hdr, length = 6, uint64(binary.LittleEndian.Uint32(b[off+2:]))
	}
	tsWidth := []int{0, 4, 6, 8}[(opt&optTS)>>2]
	crcWidth := []int{0, 4, 8}[crc]
	need := uint64(hdr) + length + uint64(tsWidth+crcWidth)
	if need > uint64(limit-off) {
		f[malformed] = true
		return 0, false
	}
	end := off + int(need)
	if crcWidth > 0 {
		kind := tlv.CRC32C
		if crc == 2 {
			kind = tlv.CRC64XZ
		}
		var got uint64
		for i := crcWidth - 1; i >= 0; i-- {
			got = got<<8 | uint64(b[end-crcWidth+i])
		}
		if tlv.Checksum(kind, b[off:end-crcWidth]) != got {
			f[uint32(tlv.StatusCRCMismatch)] = true
		}
	}
	if opt&optPL != 0 {
		pos, stop := off+hdr, off+hdr+int(length)
		for pos < stop {
			next, ok := walkTLV(b, pos, stop, d+1, bound, f)
			if !ok {
				break
			}
			pos = next
		}
	}
	return end, true
}

// refBound is the reference decoder's nesting bound.
const refBound = tlv.DefaultMaxDepth

func joined(r *conformpb.TlvRope) []byte { return bytes.Join(r.GetSegments(), nil) }

// inputFaults returns the statuses the faults of a TLV input call for, and
// whether a refusal's status is open beyond them (a record layout or route
// fault, whose status no source pins).
func inputFaults(c *Context) (faults, bool) {
	type result struct {
		f    faults
		open bool
	}
	bound := refBound
	if d := c.Options().TLVDepth; d > 0 {
		bound = min(bound, d)
	}
	// A path's refusal is always tr::path::invalid: nothing to choose.
	if ow, og, _ := c.Outer(1); holderIs(ow, og, "conform.v1.TlvPathVerdict") || holderIs(ow, og, "conform.v1.TlvCanonicalOutput") {
		return faults{}, false
	}
	r := c.memoize("tlv-faults", func() any {
		switch in := c.Input.(type) {
		case *conformpb.TlvDecodeInput:
			return result{f: census(joined(in.GetFrame()), bound)}
		case *conformpb.TlvEgressInput:
			return result{f: census(joined(in.GetFrame()), bound)}
		case *conformpb.TlvHopInput:
			// A frame that decodes may still be no FWD, or carry a route
			// that does not parse: those statuses are the hop's choice.
			f := census(joined(in.GetFrame()), bound)
			return result{f: f, open: len(f) == 0}
		case *conformpb.TlvRope: // read_policy (validate_path answers 0x0021 only)
			f := census(joined(in), bound)
			return result{f: f, open: len(f) == 0}
		case *conformpb.TlvEditInput:
			f := faults{}
			for _, t := range in.GetTlvs() {
				for s := range census(joined(t), bound) {
					f[s] = true
				}
			}
			return result{f: f}
		}
		return result{f: faults{}}
	}).(result)
	return r.f, r.open
}

// statusForm: a refusal of an input holding faults that call for several
// statuses may carry any of them; an edit's own refusal, and a refusal for a
// record layout or a route, carry a status no source pins.
var statusForm = &Form{
	Doc: "exactly, except that an input holding several faults may be refused with the status of any of them (which refusal wins is open: docs/findings.md), and that the status of a refused edit, record layout or route is not pinned",
	Apply: func(c *Context, w, g protoreflect.Message) {
		f, open := inputFaults(c)
		if !open {
			// An edit refused by an edit rather than a starting TLV.
			ow, og, _ := c.Outer(1)
			open = editRefused(ow) && editRefused(og)
		}
		if !open && len(f) < 2 {
			return
		}
		fits := func(m protoreflect.Message) bool {
			return valid(m) && (open || f[uint32(get(m, "status").Uint())])
		}
		if fits(w) && fits(g) {
			w.Set(field(w, "status"), protoreflect.ValueOfUint32(0))
			g.Set(field(g, "status"), protoreflect.ValueOfUint32(0))
		}
	},
	Vary: func(c *Context, m protoreflect.Message, r Rand) {
		f, open := inputFaults(c)
		if open || len(f) < 2 || !valid(m) {
			return
		}
		for s := range f {
			if s != uint32(get(m, "status").Uint()) {
				m.Set(field(m, "status"), protoreflect.ValueOfUint32(s))
				return
			}
		}
	},
}

func editRefused(m protoreflect.Message) bool {
	return valid(m) && m.Descriptor().FullName() == "conform.v1.TlvEditOutput" && get(m, "refused_edit").Int() >= 0
}

// depthOf returns how deeply a TLV frame nests, the root counting one, as
// far as its structure can be followed.
func depthOf(b []byte) int {
	deepest := 0
	var walk func(off, limit, d int) (int, bool)
	walk = func(off, limit, d int) (int, bool) {
		deepest = max(deepest, d)
		if limit-off < 4 || d > 4096 {
			return 0, false
		}
		opt := b[off+1]
		hdr, length := 4, int(binary.LittleEndian.Uint16(b[off+2:]))
		if opt&optLL != 0 {
			if limit-off < 6 {
				return 0, false
			}
			hdr, length = 6, int(binary.LittleEndian.Uint32(b[off+2:]))
		}
		if length < 0 || (opt&optCRC)>>4 == 3 {
			return 0, false
		}
		tr := []int{0, 4, 6, 8}[(opt&optTS)>>2] + []int{0, 4, 8}[(opt&optCRC)>>4]
		end := off + hdr + length + tr
		if end > limit || end < off {
			return 0, false
		}
		if opt&optPL != 0 {
			for pos := off + hdr; pos < off+hdr+length; {
				next, ok := walk(pos, off+hdr+length, d+1)
				if !ok {
					break
				}
				pos = next
			}
		}
		return end, true
	}
	walk(0, len(b), 1)
	return deepest
}

// withinBounds holds for a decode input nested no deeper than both the
// reference's bound and the one the SUT declared, or deeper than both: in
// between, each decoder answers by its own bound (the TLV pins: depth
// is bounded by the receiver).
var withinBounds = &Condition{
	Doc: "unless the frame nests deeper than one of the two decoders' bounds and not the other's (the bound is the receiver's, in the TLV pins; the SUT's is the one its Hello declares)",
	Holds: func(c *Context) bool {
		in, ok := c.Input.(*conformpb.TlvDecodeInput)
		d := c.Options().TLVDepth
		if !ok || d == 0 || d == refBound {
			return true
		}
		n := depthOf(joined(in.GetFrame()))
		return n <= min(d, refBound) || n > max(d, refBound)
	},
}

// EncodeTreeDefined reports whether tlv.proto defines the frame a tree
// encodes to: every type code's low byte is not 0x00, a node with PL set
// carries no payload bytes and one with PL clear no children.
func EncodeTreeDefined(n *conformpb.TlvNode) bool {
	if n == nil || byte(n.GetType()) == 0 {
		return false
	}
	pl := byte(n.GetOpt())&optPL != 0
	if pl && len(n.GetPayload()) > 0 || !pl && len(n.GetChildren()) > 0 {
		return false
	}
	for _, k := range n.GetChildren() {
		if !EncodeTreeDefined(k) {
			return false
		}
	}
	return true
}

var encodeTreeDefined = &Condition{
	Doc: "when the tree is one tlv.proto describes (no type 0x00, no payload bytes under PL, no children without it)",
	Holds: func(c *Context) bool {
		in, ok := c.Input.(*conformpb.TlvEncodeInput)
		return !ok || EncodeTreeDefined(in.GetTree())
	},
}

// HopDefined reports whether tlv.proto defines a hop's answer: every link
// is a mount run "/net/<module>/<name>" or "/net/<module>/<name>/<peer>",
// and inbound names one of them.
func HopDefined(in *conformpb.TlvHopInput) bool {
	if int(in.GetInbound()) >= len(in.GetLinks()) {
		return false
	}
	for _, l := range in.GetLinks() {
		segs := strings.Split(strings.TrimPrefix(l, "/"), "/")
		if !strings.HasPrefix(l, "/") || len(segs) < 3 || len(segs) > 4 || segs[0] != "net" {
			return false
		}
		for _, s := range segs {
			if s == "" || s == "." || s == ".." || len(s) > 255 || strings.ContainsRune(s, 0) {
				return false
			}
		}
	}
	return true
}

// hopAnswered holds where the hop's input is defined and neither answer
// refused it.
var hopAnswered = &Condition{
	Doc:   "when every link is a mount run and inbound names one of them, unless refused",
	Holds: func(c *Context) bool { return hopDefined.Holds(c) && unrefused.Holds(c) },
}

var hopDefined = &Condition{
	Doc: "when every link is a mount run and inbound names one of them (tlv.proto)",
	Holds: func(c *Context) bool {
		in, ok := c.Input.(*conformpb.TlvHopInput)
		return !ok || HopDefined(in)
	},
}

// minimal rewrites TLV bytes with every header, from depth first to depth
// last (all: every level; else the outermost only), in its minimal form:
// LL set exactly when the length needs 32 bits. Bytes that do not parse as
// one TLV are left as they are.
func minimal(b []byte, all bool) []byte {
	out, end, ok := minimalAt(b, 0, len(b), all)
	if !ok || end != len(b) {
		return b
	}
	return out
}

func minimalAt(b []byte, off, limit int, all bool) ([]byte, int, bool) {
	if limit-off < 4 {
		return nil, 0, false
	}
	typ, opt := b[off], b[off+1]
	hdr, length := 4, int(binary.LittleEndian.Uint16(b[off+2:]))
	if opt&optLL != 0 {
		if limit-off < 6 {
			return nil, 0, false
		}
		hdr, length = 6, int(binary.LittleEndian.Uint32(b[off+2:]))
	}
	if (opt&optCRC)>>4 == 3 {
		return nil, 0, false
	}
	tr := []int{0, 4, 6, 8}[(opt&optTS)>>2] + []int{0, 4, 8}[(opt&optCRC)>>4]
	end := off + hdr + length + tr
	if length < 0 || end > limit || end < off {
		return nil, 0, false
	}
	payload := b[off+hdr : off+hdr+length]
	if all && opt&optPL != 0 {
		var kids []byte
		for pos := off + hdr; pos < off+hdr+length; {
			k, next, ok := minimalAt(b, pos, off+hdr+length, true)
			if !ok {
				kids = nil
				break
			}
			kids = append(kids, k...)
			pos = next
		}
		if kids != nil {
			payload = kids
		}
	}
	out := []byte{typ, opt &^ optLL}
	if len(payload) > 0xFFFF {
		out[1] |= optLL
		out = binary.LittleEndian.AppendUint32(out, uint32(len(payload)))
	} else {
		out = binary.LittleEndian.AppendUint16(out, uint16(len(payload)))
	}
	out = append(out, payload...)
	out = append(out, b[off+hdr+length:end]...)
	return out, end, true
}

// nonMinimal rewrites the outermost header of TLV bytes with LL set, as a
// writer that does not minimise would.
func nonMinimal(b []byte) []byte {
	if len(b) < 4 || b[1]&optLL != 0 || b[1]&optTS != 0 || b[1]&optCRC != 0 {
		return b
	}
	out := []byte{b[0], b[1] | optLL}
	out = binary.LittleEndian.AppendUint32(out, uint32(binary.LittleEndian.Uint16(b[2:])))
	return append(out, b[4:]...)
}

var encodeFrameForm = &Form{
	Doc: "with every header in its minimal form (a node originating a frame SHOULD use LL = 0 whenever the length fits 16 bits, the TLV pins)",
	Apply: func(c *Context, w, g protoreflect.Message) {
		sides(w, g, func(m protoreflect.Message) { setBytes(m, "frame", func(b []byte) []byte { return minimal(b, true) }) })
	},
}

var editTLVsForm = &Form{
	Doc: "the edits' new containers with their header in its minimal form (SHOULD, the TLV pins); every starting TLV and every child exactly",
	Apply: func(c *Context, w, g protoreflect.Message) {
		in, ok := c.Input.(*conformpb.TlvEditInput)
		if !ok {
			return
		}
		start := len(in.GetTlvs())
		sides(w, g, func(m protoreflect.Message) {
			if !has(m, "tlvs") {
				return
			}
			l := m.Mutable(field(m, "tlvs")).List()
			for i := start; i < l.Len(); i++ {
				l.Set(i, protoreflect.ValueOfBytes(minimal(l.Get(i).Bytes(), false)))
			}
		})
	},
}

// holderIs reports whether the message on either side is of type name.
func holderIs(w, g protoreflect.Message, name protoreflect.FullName) bool {
	return valid(w) && w.Descriptor().FullName() == name || valid(g) && g.Descriptor().FullName() == name
}
