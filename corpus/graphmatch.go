package corpus

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
)

// MatchTLVs reports whether got is want as match (a Match constant; empty is
// MatchExact) says. Bytes that are not one TLV at rest never match a
// non-exact comparison.
func MatchTLVs(match string, want, got []byte) bool {
	switch match {
	case "", MatchExact:
		return bytes.Equal(want, got)
	case MatchTLV:
		return SameTLV(want, got)
	case MatchList, MatchPairs:
		w, err := parseTLV(want)
		if err != nil {
			return false
		}
		g, err := parseTLV(got)
		if err != nil || !g.pl || (match == MatchPairs && g.typ != w.typ) {
			return false
		}
		group := 1
		if match == MatchPairs {
			group = 2
		}
		return sameMultiset(w.kids, g.kids, group)
	}
	return false
}

// SameTLV reports whether a and b are each one TLV at rest and the same TLV
// tree — types, PL bits, payloads, children in order — whatever length form
// each header takes (4 bytes, or 6 with opt.LL set).
func SameTLV(a, b []byte) bool {
	x, err := parseTLV(a)
	if err != nil {
		return false
	}
	y, err := parseTLV(b)
	return err == nil && bytes.Equal(x.canonical(), y.canonical())
}

// checkMatch says whether a vector's expected value can be compared as match
// says.
func checkMatch(match string, want []byte) error {
	switch match {
	case "", MatchExact:
		return nil
	case MatchTLV, MatchList, MatchPairs:
	default:
		return fmt.Errorf("match %q is none of exact, tlv, list, pairs", match)
	}
	n, err := parseTLV(want)
	if err != nil {
		return fmt.Errorf("match %s: the expected value is not one TLV: %w", match, err)
	}
	if match != MatchTLV && !n.pl {
		return fmt.Errorf("match %s: the expected value is not a structured TLV", match)
	}
	if match == MatchPairs && len(n.kids)%2 != 0 {
		return fmt.Errorf("match pairs: the expected value has %d children", len(n.kids))
	}
	return nil
}

func matchName(m string) string {
	if m == "" {
		return MatchExact
	}
	return m
}

// sameMultiset reports whether want and got hold the same groups of
// consecutive children, each group compared as canonical TLVs, in any
// order.
func sameMultiset(want, got []*tlvNode, group int) bool {
	keys := func(ns []*tlvNode) []string {
		var out []string
		for i := 0; i+group <= len(ns); i += group {
			var k []byte
			for _, n := range ns[i : i+group] {
				k = append(k, n.canonical()...)
			}
			out = append(out, string(k))
		}
		slices.Sort(out)
		return out
	}
	return len(want)%group == 0 && len(got)%group == 0 && slices.Equal(keys(want), keys(got))
}

// tlvNode is one TLV at rest, parsed for comparison. This is the corpus's
// own reading of the header layout (reconstructed§tlv-header#1), so that a
// vector's comparison never rests on the reference it checks.
type tlvNode struct {
	typ     byte
	pl      bool
	payload []byte
	kids    []*tlvNode
}

// maxMatchDepth bounds the nesting a comparison follows.
const maxMatchDepth = 256

var errTrailer = errors.New("a TLV at rest carries trailer or reserved opt bits")

func parseTLV(b []byte) (*tlvNode, error) {
	n, rest, err := parseTLVAt(b, 0)
	if err != nil {
		return nil, err
	}
	if len(rest) != 0 {
		return nil, fmt.Errorf("%d bytes after the TLV", len(rest))
	}
	return n, nil
}

func parseTLVAt(b []byte, depth int) (*tlvNode, []byte, error) {
	if depth > maxMatchDepth {
		return nil, nil, fmt.Errorf("nested deeper than %d", maxMatchDepth)
	}
	if len(b) < 4 {
		return nil, nil, fmt.Errorf("a header needs 4 bytes, %d left", len(b))
	}
	typ, opt := b[0], b[1]
	if opt&^0x03 != 0 {
		return nil, nil, errTrailer
	}
	n, h := int(binary.LittleEndian.Uint16(b[2:4])), 4
	if opt&0x02 != 0 {
		if len(b) < 6 {
			return nil, nil, fmt.Errorf("an LL header needs 6 bytes, %d left", len(b))
		}
		l := binary.LittleEndian.Uint32(b[2:6])
		if uint64(l) > uint64(len(b)-6) {
			return nil, nil, fmt.Errorf("length %d runs past the %d bytes left", l, len(b)-6)
		}
		n, h = int(l), 6
	}
	if n > len(b)-h {
		return nil, nil, fmt.Errorf("length %d runs past the %d bytes left", n, len(b)-h)
	}
	t := &tlvNode{typ: typ, pl: opt&0x01 != 0, payload: b[h : h+n]}
	if t.pl {
		for rest := t.payload; len(rest) > 0; {
			k, r, err := parseTLVAt(rest, depth+1)
			if err != nil {
				return nil, nil, err
			}
			t.kids = append(t.kids, k)
			rest = r
		}
	}
	return t, b[h+n:], nil
}

// canonical is t with every header in its shortest form.
func (t *tlvNode) canonical() []byte {
	body := t.payload
	if t.pl {
		body = nil
		for _, k := range t.kids {
			body = append(body, k.canonical()...)
		}
	}
	opt := byte(0)
	if t.pl {
		opt = 0x01
	}
	var h []byte
	if len(body) > 0xFFFF {
		h = binary.LittleEndian.AppendUint32([]byte{t.typ, opt | 0x02}, uint32(len(body)))
	} else {
		h = binary.LittleEndian.AppendUint16([]byte{t.typ, opt}, uint16(len(body)))
	}
	return append(h, body...)
}
