package graph

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"
)

// The TLVs the cases send and expect are built here from the layouts the
// project pins (reconstructed§tlv-header#1, reconstructed§tlv-records#1 to #9),
// never by the reference: a 4-byte header (type, opt, u16 little-endian
// payload length) or, above 0xFFFF, the 6-byte one with opt.LL; opt bit 0 is
// PL.

// The type codes (reconstructed§tlv-type-codes#1; VALUE, PATH, POINT,
// STATUS, SETTINGS, FWD and BATCH are the document's, the rest this
// project's).
const (
	tValue      = 0x01
	tName       = 0x02
	tSubscriber = 0x04
	tACL        = 0x05
	tPath       = 0x06
	tPoint      = 0x07
	tStatus     = 0x09
	tOp         = 0x0A
	tSettings   = 0x0B
	tResult     = 0x0C
	tFwd        = 0x0F
	tBatch      = 0x80
)

const optPL = 0x01

// The FWD op codes (reconstructed§tlv-records#7).
const (
	opWrite     = 1
	opRead      = 2
	opAwait     = 3
	opSubscribe = 4
	opReply     = 5
)

// The statuses (reconstructed§tlv-status#2): not_found and schema::not_found
// are the document's, the rest this project's.
const (
	stOK           = 0x0000
	stDenied       = 0x0010
	stNotFound     = 0x0020
	stPathInvalid  = 0x0021
	stTypeMismatch = 0x0030
	stSchema       = 0x0031
	stTimeout      = 0x0041
	stMalformed    = 0x0051
)

var statusNames = map[uint32]string{
	stOK: "success", stDenied: "tr::access::denied", stNotFound: "tr::path::not_found",
	stPathInvalid: "tr::path::invalid", stTypeMismatch: "tr::schema::type_mismatch",
	stSchema: "tr::schema::not_found", stTimeout: "tr::flow::timeout", stMalformed: "tr::tlv::malformed",
}

func statusText(s uint32) string {
	if n, ok := statusNames[s]; ok {
		if s == stOK {
			return n
		}
		return fmt.Sprintf("0x%04x %s", s, n)
	}
	return fmt.Sprintf("0x%04x", s)
}

func header(typ, opt byte, n int) []byte {
	if n > 0xFFFF {
		return binary.LittleEndian.AppendUint32([]byte{typ, opt | 0x02}, uint32(n))
	}
	return binary.LittleEndian.AppendUint16([]byte{typ, opt}, uint16(n))
}

func leaf(typ byte, payload []byte) []byte {
	return append(header(typ, 0, len(payload)), payload...)
}

func node(typ byte, kids ...[]byte) []byte {
	var body []byte
	for _, k := range kids {
		body = append(body, k...)
	}
	return append(header(typ, optPL, len(body)), body...)
}

func value(s string) []byte { return leaf(tValue, []byte(s)) }
func name(s string) []byte  { return leaf(tName, []byte(s)) }

// pathPayload is the canonical PATH payload of a normalized path such as
// "/a/b": one [u8 len][text] record per segment (pinned).
func pathPayload(p string) []byte {
	var out []byte
	for _, s := range strings.Split(p, "/") {
		if s != "" {
			out = append(out, byte(len(s)))
			out = append(out, s...)
		}
	}
	return out
}

func pathTLV(p string) []byte { return leaf(tPath, pathPayload(p)) }

// subscriber is SUBSCRIBER{PATH target}.
func subscriber(target string) []byte { return node(tSubscriber, pathTLV(target)) }

// subscriberPolicy is SUBSCRIBER{PATH target, SETTINGS{NAME "delivery_policy",
// VALUE u16le}}.
func subscriberPolicy(target string, policy uint16) []byte {
	return node(tSubscriber, pathTLV(target),
		node(tSettings, name("delivery_policy"), leaf(tValue, binary.LittleEndian.AppendUint16(nil, policy))))
}

// emptyStatus is the OK / unsubscribe sentinel, 09 00 00 00 (pinned).
func emptyStatus() []byte { return leaf(tStatus, nil) }

func status(code uint16) []byte { return leaf(tStatus, binary.LittleEndian.AppendUint16(nil, code)) }

// point is POINT{NAME name, [VALUE], child POINTs…}; val nil for none.
func point(nm string, val []byte, kids ...[]byte) []byte {
	all := [][]byte{name(nm)}
	if val != nil {
		all = append(all, val)
	}
	return node(tPoint, append(all, kids...)...)
}

// fwd is FWD{OP op, PATH dst, PATH src, payload}.
func fwd(op byte, dst, src string, payload []byte) []byte {
	return node(tFwd, leaf(tOp, []byte{op}), pathTLV(dst), pathTLV(src), payload)
}

// reply is the FWD{REPLY} a terminus answers a request from src with: dst
// the request's src, an empty src, then the answer (reconstructed§tlv-records#8).
func reply(src string, answer []byte) []byte {
	return node(tFwd, leaf(tOp, []byte{opReply}), pathTLV(src), pathTLV(""), answer)
}

// resultOf is RESULT{answer}; RESULT{} for none.
func resultOf(answer ...[]byte) []byte { return node(tResult, answer...) }

// aclRecord is the ACL record: NAME "*", VALUE def, then NAME p, VALUE
// rights per grant (reconstructed§graph-acl#4).
func aclRecord(def byte, grants map[string]byte) []byte {
	kids := [][]byte{name("*"), leaf(tValue, []byte{def})}
	for _, p := range sortedKeys(grants) {
		kids = append(kids, name(p), leaf(tValue, []byte{grants[p]}))
	}
	return node(tACL, kids...)
}

// A tnode is a TLV a SUT answered, parsed for inspection.
type tnode struct {
	typ     byte
	opt     byte
	payload []byte
	kids    []*tnode
	raw     []byte
}

// parse reads exactly one TLV at rest (no trailer).
func parse(b []byte) (*tnode, error) {
	n, rest, err := parseOne(b, 0)
	if err != nil {
		return nil, err
	}
	if len(rest) != 0 {
		return nil, fmt.Errorf("%d bytes after the TLV", len(rest))
	}
	return n, nil
}

func parseOne(b []byte, depth int) (*tnode, []byte, error) {
	if depth > 64 {
		return nil, nil, fmt.Errorf("nesting deeper than 64")
	}
	if len(b) < 4 {
		return nil, nil, fmt.Errorf("a header needs 4 bytes, %d left", len(b))
	}
	typ, opt := b[0], b[1]
	var n, h int
	if opt&0x02 != 0 {
		if len(b) < 6 {
			return nil, nil, fmt.Errorf("an LL header needs 6 bytes")
		}
		n, h = int(binary.LittleEndian.Uint32(b[2:6])), 6
	} else {
		n, h = int(binary.LittleEndian.Uint16(b[2:4])), 4
	}
	if opt&0x3C != 0 {
		return nil, nil, fmt.Errorf("a TLV at rest carries trailer bits (opt %#02x)", opt)
	}
	if n > len(b)-h {
		return nil, nil, fmt.Errorf("length %d runs past the %d bytes left", n, len(b)-h)
	}
	t := &tnode{typ: typ, opt: opt, payload: b[h : h+n], raw: b[:h+n]}
	if opt&optPL != 0 {
		rest := t.payload
		for len(rest) > 0 {
			k, r, err := parseOne(rest, depth+1)
			if err != nil {
				return nil, nil, err
			}
			t.kids = append(t.kids, k)
			rest = r
		}
	}
	return t, b[h+n:], nil
}

// render prints a TLV for comparison and evidence. A POINT's child POINTs are
// sorted, because the graph model gives a composed tree no child order.
func render(b []byte) string {
	t, err := parse(b)
	if err != nil {
		return "undecodable " + hex.EncodeToString(b) + " (" + err.Error() + ")"
	}
	return t.render()
}

func (t *tnode) render() string {
	if t.opt&optPL == 0 {
		switch t.typ {
		case tValue:
			return fmt.Sprintf("VALUE %q", t.payload)
		case tName:
			return fmt.Sprintf("NAME %q", t.payload)
		case tStatus:
			if len(t.payload) == 0 {
				return "STATUS{}"
			}
			if len(t.payload) == 2 {
				return "STATUS " + statusText(uint32(binary.LittleEndian.Uint16(t.payload)))
			}
		case tPath:
			return "PATH " + pathText(t.payload)
		}
		return fmt.Sprintf("%02x[%s]", t.typ, hex.EncodeToString(t.payload))
	}
	var kids []string
	var points []string
	for _, k := range t.kids {
		if t.typ == tPoint && k.typ == tPoint {
			points = append(points, k.render())
			continue
		}
		kids = append(kids, k.render())
	}
	sort.Strings(points)
	kids = append(kids, points...)
	label := map[byte]string{tPoint: "POINT", tSettings: "SETTINGS", tSubscriber: "SUBSCRIBER", tFwd: "FWD", tResult: "RESULT", tACL: "ACL", tBatch: "BATCH"}[t.typ]
	if label == "" {
		label = fmt.Sprintf("%02x", t.typ)
	}
	return label + "{" + strings.Join(kids, ", ") + "}"
}

// contains reports whether needle's bytes occur in b.
func contains(b, needle []byte) bool { return strings.Contains(string(b), string(needle)) }

// pathText renders a PATH payload as "/a/b" when its records are well formed,
// else as hex.
func pathText(p []byte) string {
	var segs []string
	for i := 0; i < len(p); {
		n := int(p[i])
		if n == 0 || i+1+n > len(p) {
			return hex.EncodeToString(p)
		}
		segs = append(segs, string(p[i+1:i+1+n]))
		i += 1 + n
	}
	return "/" + strings.Join(segs, "/")
}
