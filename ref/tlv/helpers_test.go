package tlv_test

import (
	"encoding/binary"
	"encoding/hex"
	"hash/crc32"
	"hash/crc64"
	"strconv"
	"strings"

	"github.com/conform-suite/conform/ref/tlv"
)

// hx parses test bytes written the way the spec prints them: hex pairs
// separated by spaces, and "quoted" text for its UTF-8 bytes.
func hx(s string) []byte {
	var out []byte
	for s = strings.TrimSpace(s); s != ""; s = strings.TrimSpace(s) {
		if s[0] == '"' {
			end := strings.IndexByte(s[1:], '"') + 1
			out = append(out, s[1:end]...)
			s = s[end+1:]
			continue
		}
		tok, rest, _ := strings.Cut(s, " ")
		b, err := hex.DecodeString(tok)
		if err != nil {
			panic("hx: " + err.Error())
		}
		out = append(out, b...)
		s = rest
	}
	return out
}

// cut returns a rope over b split at the given offsets, which are ascending.
func cut(b []byte, at ...int) tlv.Rope {
	var segs [][]byte
	prev := 0
	for _, a := range at {
		segs = append(segs, b[prev:a])
		prev = a
	}
	return tlv.NewRope(append(segs, b[prev:])...)
}

// bytewise returns a rope with one byte per segment, each segment its own
// allocation so no view can run into its neighbour.
func bytewise(b []byte) tlv.Rope {
	segs := make([][]byte, len(b))
	for i := range b {
		segs[i] = []byte{b[i]}
	}
	return tlv.NewRope(segs...)
}

// ropes returns every rope over b the spec's split rule calls for: one segment,
// every split into two, a sample of splits into three, and one byte per segment.
func ropes(b []byte) map[string]tlv.Rope {
	out := map[string]tlv.Rope{"flat": tlv.NewRope(b), "bytewise": bytewise(b)}
	for i := 0; i <= len(b); i++ {
		out["2@"+strconv.Itoa(i)] = cut(b, i)
	}
	for i := 0; i <= len(b); i += 3 {
		for j := i; j <= len(b); j += 5 {
			out["3@"+strconv.Itoa(i)+","+strconv.Itoa(j)] = cut(b, i, j)
		}
	}
	return out
}

// header writes a TLV header independently of the package, as the fresh-buffer
// oracle of the edit and round-trip tests.
func header(typ, opt byte, n int) []byte {
	if opt&0x02 != 0 {
		return binary.LittleEndian.AppendUint32([]byte{typ, opt}, uint32(n))
	}
	return binary.LittleEndian.AppendUint16([]byte{typ, opt}, uint16(n))
}

// tlvBytes builds a minimal TLV from a type and payload, independently of the package.
func tlvBytes(typ byte, pl bool, payload ...[]byte) []byte {
	var body []byte
	for _, p := range payload {
		body = append(body, p...)
	}
	opt := byte(0)
	if pl {
		opt |= 0x01
	}
	if len(body) > 0xFFFF {
		opt |= 0x02
	}
	return append(header(typ, opt, len(body)), body...)
}

var (
	testCRC32C = crc32.MakeTable(crc32.Castagnoli)
	testCRC64  = crc64.MakeTable(crc64.ECMA)
)

// withTrailer appends a trailer to frame (whose opt must be clear of TS and CRC)
// by the TLV pins (docs/requirements.md), independently of the package: it sets the opt bits, then
// appends the timestamp and the check over everything before it.
func withTrailer(frame []byte, ts int, crc int, stamp uint64) []byte {
	out := append([]byte(nil), frame...)
	code := map[int]byte{0: 0, 4: 1, 6: 2, 8: 3}[ts]
	out[1] |= code<<2 | byte(crc)<<4
	out = append(out, binary.LittleEndian.AppendUint64(nil, stamp)[:ts]...)
	switch crc {
	case 1:
		out = binary.LittleEndian.AppendUint32(out, crc32.Checksum(out, testCRC32C))
	case 2:
		out = binary.LittleEndian.AppendUint64(out, crc64.Checksum(out, testCRC64))
	}
	return out
}

// fataler is what both *testing.T and *rapid.T offer.
type fataler interface {
	Helper()
	Fatalf(format string, args ...any)
}

func mustDecode(t fataler, r tlv.Rope) *tlv.Node {
	t.Helper()
	n, err := tlv.Decode(r)
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	return n
}

// wantStatus checks that err carries status want.
func wantStatus(t fataler, err error, want tlv.Status) {
	t.Helper()
	got, ok := tlv.StatusOf(err)
	if !ok || got != want {
		t.Fatalf("error %v: want status %s", err, want)
	}
}
