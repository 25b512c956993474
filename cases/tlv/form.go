package tlv

import (
	"bytes"
	"encoding/binary"
	"fmt"
)

// A header a SUT writes or rebuilds may take either form: a reader MUST
// accept the 6-byte LL header for any length (reconstructed§tlv-header#4),
// and only a SHOULD asks an originator for the 4-byte one whenever the length
// fits 16 bits (#3). The helpers here compare what a SUT wrote with what a
// case expects while ignoring the form of the headers the SUT chose, so that
// MUST cases fail on what a MUST breaks and nothing else; the SHOULD cases
// compare bytes. (A whole answer is compared through the declaration of
// meaning, whose forms make the same distinction.)

// optLL is the LL bit of an opt byte (reconstructed§tlv-opt-bits#2).
const optLL = 0x02

// splitHeader reads the header b begins with, in either form, and returns
// its type, its opt byte and the bytes its length claims, with the bytes
// after them; it says what is wrong when b holds no whole header or payload.
func splitHeader(b []byte) (typ, opt uint8, body, rest []byte, err error) {
	if len(b) < 4 {
		return 0, 0, nil, nil, fmt.Errorf("%d bytes left, too few for a header", len(b))
	}
	typ, opt = b[0], b[1]
	var n uint64
	size := 4
	if opt&optLL != 0 {
		if len(b) < 6 {
			return 0, 0, nil, nil, fmt.Errorf("%d bytes left, too few for an LL header", len(b))
		}
		n, size = uint64(binary.LittleEndian.Uint32(b[2:])), 6
	} else {
		n = uint64(binary.LittleEndian.Uint16(b[2:]))
	}
	if n > uint64(len(b)-size) {
		return 0, 0, nil, nil, fmt.Errorf("a header of type 0x%02x claims %d bytes, %d follow it", typ, n, len(b)-size)
	}
	return typ, opt, b[size : size+int(n)], b[size+int(n):], nil
}

// A built is a TLV a SUT builds from parts, for a case to compare with what
// the SUT wrote: a structured TLV whose header the SUT writes (typ, opt and
// its children), a TLV the SUT re-emits as it received it (raw), or, where a
// case judges none of it, any opaque TLV of type typ (any).
type built struct {
	raw  []byte
	typ  uint8
	opt  uint8
	kids []built
	any  bool
}

// asReceived is a TLV re-emitted byte for byte.
func asReceived(b []byte) built { return built{raw: b} }

// minimal returns b's bytes with every header the SUT writes in the 4-byte
// form whenever the length fits 16 bits, the form the SHOULD asks for.
func (b built) minimal() []byte {
	if b.raw != nil || b.any {
		return b.raw
	}
	var body []byte
	for _, k := range b.kids {
		body = append(body, k.minimal()...)
	}
	return append(header(b.typ, b.opt, len(body)), body...)
}

// match reports how got, which a SUT wrote for b, differs from it: a TLV
// re-emitted must be the bytes received, and a TLV built must have b's type
// and opt (LL aside) and a length that holds exactly its children, each
// matched in turn. It returns "" when got matches.
func (b built) match(got []byte) string {
	rest, why := b.matchPrefix(got)
	if why == "" && len(rest) > 0 {
		why = fmt.Sprintf("%d bytes follow the TLV", len(rest))
	}
	return why
}

func (b built) matchPrefix(got []byte) ([]byte, string) {
	if b.raw != nil {
		if !bytes.HasPrefix(got, b.raw) {
			return nil, fmt.Sprintf("a TLV received as %s is re-emitted as %s", hexOf(b.raw), hexOf(got[:min(len(got), len(b.raw))]))
		}
		return got[len(b.raw):], ""
	}
	typ, opt, body, rest, err := splitHeader(got)
	switch {
	case err != nil:
		return nil, err.Error()
	case typ != b.typ || opt&^optLL != b.opt&^optLL:
		return nil, fmt.Sprintf("a header of type 0x%02x, opt 0x%02x where type 0x%02x, opt 0x%02x (LL either way) is due", typ, opt, b.typ, b.opt&^optLL)
	case b.any:
		return rest, ""
	}
	for i, k := range b.kids {
		var why string
		if body, why = k.matchPrefix(body); why != "" {
			return nil, fmt.Sprintf("child %d of a 0x%02x: %s", i, b.typ, why)
		}
	}
	if len(body) > 0 {
		return nil, fmt.Sprintf("a 0x%02x holds %d bytes after its %d children", b.typ, len(body), len(b.kids))
	}
	return rest, ""
}
