package tlv_test

import (
	"bytes"
	"runtime"
	"testing"

	"github.com/conform-suite/conform/ref/tlv"
)

// decodeVectors are frames at rest (no top-level trailer): each decodes to the
// tree rendered in want, from every rope over its bytes, and re-encodes to the
// same bytes.
var decodeVectors = []struct {
	name, ref string
	in        []byte
	want      string
}{
	{"PATH /alpha", "reconstructed§tlv-header (pinned vector); graph model §The two compositions",
		hx(`06 00 06 00 05 "alpha"`), "PATH[05616c706861]"},
	{"empty STATUS", "reconstructed§tlv-header (pinned vector)",
		hx("09 00 00 00"), "STATUS[]"},
	{"PATH /sensor/temp", "reconstructed§tlv-path (pinned vector)",
		hx(`06 00 0c 00 06 "sensor" 04 "temp"`), "PATH[0673656e736f720474656d70]"},
	{"nesting 1: a leaf", "graph model §Nested TLV structure",
		hx("01 00 01 00 2a"), "VALUE[2a]"},
	{"nesting 2: POINT{NAME, VALUE}", "graph model §Nested TLV structure; reconstructed§tlv-records",
		hx(`07 01 0a 00 02 00 01 00 "a" 01 00 01 00 2a`), "POINT<PL>{NAME[61] VALUE[2a]}"},
	{"nesting 3: POINT{NAME, POINT{NAME, VALUE}}", "graph model §Nested TLV structure",
		hx(`07 01 13 00 02 00 01 00 "r" 07 01 0a 00 02 00 01 00 "a" 01 00 01 00 2a`),
		"POINT<PL>{NAME[72] POINT<PL>{NAME[61] VALUE[2a]}}"},
	{"nesting 4: SUBSCRIBER{PATH, SETTINGS{NAME, RESULT{VALUE}}}", "graph model §Nested TLV structure",
		hx(`04 01 1c 00 06 00 02 00 01 "a" 0b 01 12 00 02 00 03 00 "key" 0c 01 07 00 01 00 03 00 01 02 03`),
		"SUBSCRIBER<PL>{PATH[0161] SETTINGS<PL>{NAME[6b6579] RESULT<PL>{VALUE[010203]}}}"},
	{"empty structured TLV", "graph model §Nested TLV structure",
		hx("0b 01 00 00"), "SETTINGS<PL>{}"},
	{"non-minimal LL is accepted", "the TLV pins (docs/requirements.md): a reader MUST accept a non-minimal LL = 1 header",
		hx("01 02 01 00 00 00 2a"), "VALUE<LL>[2a]"},
	{"non-minimal LL child", "the TLV pins (docs/requirements.md)",
		hx("0b 01 07 00 01 02 01 00 00 00 2a"), "SETTINGS<PL>{VALUE<LL>[2a]}"},
	{"unknown type is opaque", "reconstructed§tlv-type-codes: unknown codes decode as opaque TLVs",
		hx("7e 00 02 00 01 00"), "TYPE(0x7e)[0100]"},
	{"unknown type follows PL", "reconstructed§tlv-type-codes: their PL bit still governs recursion",
		hx("7e 01 05 00 01 00 01 00 2a"), "TYPE(0x7e)<PL>{VALUE[2a]}"},
	{"ROUTER decodes", "reconstructed§tlv-type-codes: 0x0D reserved, decodable",
		hx("0d 00 00 00"), "ROUTER[]"},
	{"child keeps its own trailer", "graph model §Nested TLV structure: a child MAY carry its own trailer",
		append(hx("0b 01 0d 00"), withTrailer(hx("01 00 01 00 2a"), 4, 1, 0x11223344)...),
		"SETTINGS<PL>{VALUE<TS4|CRC32C>[2a]+trailer[443322111dc7e93d]}"},
}

func TestDecodeVectors(t *testing.T) {
	for _, v := range decodeVectors {
		t.Run(v.name, func(t *testing.T) {
			flat := mustDecode(t, tlv.NewRope(v.in))
			if got := flat.String(); got != v.want {
				t.Fatalf("%s: tree %s, want %s", v.ref, got, v.want)
			}
			if got := flat.Bytes(); !bytes.Equal(got, v.in) {
				t.Fatalf("%s: re-encoded % x, want % x", v.ref, got, v.in)
			}
			// graph model §The two compositions: the same tree for every rope.
			for name, r := range ropes(v.in) {
				n, err := tlv.Decode(r)
				if err != nil {
					t.Fatalf("rope %s: %v", name, err)
				}
				if !n.Equal(flat) {
					t.Fatalf("rope %s: tree %s, flat %s", name, n, flat)
				}
				if got := n.Rope().Bytes(); !bytes.Equal(got, v.in) {
					t.Fatalf("rope %s: re-encoded % x", name, got)
				}
			}
		})
	}
}

// The graph model's drawing: the PATH header split 3 | 1 across two segments.
func TestDecodeHeaderStraddlesSegments(t *testing.T) {
	r := tlv.NewRope(hx("06 00 06"), hx(`00 05 "alpha"`))
	n := mustDecode(t, r)
	if n.Type() != tlv.TypePath || !n.Payload().EqualBytes(hx(`05 "alpha"`)) {
		t.Fatalf("got %s", n)
	}
}

// Views, not copies: a decoded payload's views alias the input's memory.
func TestDecodeViewsIntoInput(t *testing.T) {
	in := hx(`07 01 0a 00 02 00 01 00 "a" 01 00 01 00 2a`)
	n := mustDecode(t, tlv.NewRope(in))
	for v := range n.Children()[1].Payload().Views() {
		if &v[0] != &in[len(in)-1] {
			t.Fatal("VALUE payload is a copy, not a view of the input")
		}
	}
}

var malformedVectors = []struct {
	name, ref string
	in        []byte
	status    tlv.Status
	offset    int64
}{
	{"empty input", "reconstructed§tlv-header: 4 bytes", nil, tlv.StatusMalformed, 0},
	{"3-byte header", "reconstructed§tlv-header", hx("06 00 06"), tlv.StatusMalformed, 0},
	{"type 0x00", "reconstructed§tlv-type-codes: 0x00 is invalid", hx("00 00 00 00"), tlv.StatusMalformed, 0},
	{"reserved opt bit 6", "the TLV pins (docs/requirements.md) opt: a reserved bit set is refused", hx("01 40 00 00"), tlv.StatusMalformed, 1},
	{"reserved opt bit 7", "the TLV pins (docs/requirements.md) opt", hx("01 80 00 00"), tlv.StatusMalformed, 1},
	{"CRC code 3", "the TLV pins (docs/requirements.md) opt: CRC code 3 is refused", hx("01 30 00 00 00 00 00 00 00 00 00 00"), tlv.StatusMalformed, 1},
	{"LL header cut at 5 bytes", "reconstructed§tlv-header: 6 bytes with LL", hx("01 02 00 00 00"), tlv.StatusMalformed, 0},
	{"length beyond the bytes", "the TLV pins (docs/requirements.md): length counts the payload", hx(`06 00 07 00 05 "alpha"`), tlv.StatusMalformed, 0},
	{"length counting the header", "the TLV pins (docs/requirements.md): not the header", hx(`06 00 0a 00 05 "alpha"`), tlv.StatusMalformed, 0},
	{"LL claims 4 GiB", "issue 5: a claimed length beyond the bytes present is malformed", hx("01 02 ff ff ff ff 00"), tlv.StatusMalformed, 0},
	{"bytes after the frame", "the TLV pins (docs/requirements.md): a frame is header + payload + trailer", hx("09 00 00 00 00"), tlv.StatusMalformed, 4},
	{"child overruns its parent", "graph model §Nested TLV structure", hx("0b 01 05 00 01 00 02 00 2a"), tlv.StatusMalformed, 4},
	{"child header cut by its parent", "graph model §Nested TLV structure", hx("0b 01 02 00 01 00"), tlv.StatusMalformed, 4},
	{"child of type 0x00", "reconstructed§tlv-type-codes", hx("0b 01 04 00 00 00 00 00"), tlv.StatusMalformed, 4},
	{"child with a reserved bit", "the TLV pins (docs/requirements.md) opt", hx("0b 01 04 00 01 80 00 00"), tlv.StatusMalformed, 5},
	{"trailer announced, absent", "reconstructed§tlv-trailer", hx("09 10 00 00"), tlv.StatusMalformed, 0},
	{"CRC-32C mismatch", "reconstructed§tlv-trailer: the CRC covers every byte before it", hx("09 10 00 00 00 00 00 00"), tlv.StatusCRCMismatch, 4},
}

func TestDecodeMalformed(t *testing.T) {
	for _, v := range malformedVectors {
		t.Run(v.name, func(t *testing.T) {
			for name, r := range ropes(v.in) {
				_, err := tlv.Decode(r)
				de, ok := err.(*tlv.DecodeError)
				if !ok {
					t.Fatalf("%s: rope %s: error %v, want a *DecodeError", v.ref, name, err)
				}
				if de.Status != v.status || de.Offset != v.offset {
					t.Fatalf("%s: rope %s: %v, want %s at %d", v.ref, name, err, v.status, v.offset)
				}
			}
		})
	}
}

// Truncation at every byte of every vector, trailers included, is malformed
// (the TLV pins (docs/requirements.md): length counts the payload; a frame is header + payload +
// trailer).
func TestDecodeTruncatedAtEveryByte(t *testing.T) {
	var inputs [][]byte
	for _, v := range decodeVectors {
		inputs = append(inputs, v.in)
	}
	inputs = append(inputs, withTrailer(decodeVectors[4].in, 8, 2, 1))
	for _, in := range inputs {
		for n := range len(in) {
			_, err := tlv.Decode(tlv.NewRope(in[:n]))
			wantStatus(t, err, tlv.StatusMalformed)
			_, err = tlv.Decode(bytewise(in[:n]))
			wantStatus(t, err, tlv.StatusMalformed)
		}
	}
}

// An untrusted length is checked against the bytes present before anything is
// allocated for it (issue 5; DESIGN §Fuzzing "no allocation on an untrusted length").
func TestDecodeHugeClaimAllocatesNothingForIt(t *testing.T) {
	in := tlv.NewRope(hx("0b 03 ff ff ff ff 01 02 ff ff ff 7f"))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 100 {
		if _, err := tlv.Decode(in); err == nil {
			t.Fatal("a 4 GiB claim over 12 bytes decoded")
		}
	}
	runtime.ReadMemStats(&after)
	if per := (after.TotalAlloc - before.TotalAlloc) / 100; per > 4096 { // a constant overhead; the claim would show as gigabytes
		t.Fatalf("%d bytes allocated per refused decode", per)
	}
}

// chain returns depth nested TLVs: depth-1 structured containers around a
// VALUE. It writes the headers outside in, so a deep chain costs linear time.
func chain(depth int) []byte {
	leaf := hx("01 00 01 00 2a")
	heads := make([][]byte, depth-1)
	size := len(leaf)
	for i := depth - 2; i >= 0; i-- {
		opt := byte(0x01)
		if size > 0xFFFF {
			opt |= 0x02
		}
		heads[i] = header(0x7e, opt, size)
		size += len(heads[i])
	}
	out := make([]byte, 0, size)
	for _, h := range heads {
		out = append(out, h...)
	}
	return append(out, leaf...)
}

// Nesting is bounded by the receiver, 64 by default, and exhaustion answers
// tr::tlv::nesting_too_deep (the TLV pins (docs/requirements.md) Decoder resources; graph model
// §The structured TLV in memory).
func TestDecodeDepthBound(t *testing.T) {
	tests := []struct {
		max, depth int
		ok         bool
	}{
		{0, tlv.DefaultMaxDepth, true},
		{0, tlv.DefaultMaxDepth + 1, false},
		{64, 64, true},
		{64, 65, false},
		{1, 1, true},
		{1, 2, false},
		{3, 3, true},
		{3, 4, false},
		{1 << 20, 100000, true}, // iterative: no Go stack grows with depth
	}
	for _, tt := range tests {
		d := tlv.Decoder{MaxDepth: tt.max}
		in := chain(tt.depth)
		n, err := d.Decode(tlv.NewRope(in))
		if tt.ok {
			if err != nil {
				t.Fatalf("max %d depth %d: %v", tt.max, tt.depth, err)
			}
			if !bytes.Equal(n.Bytes(), in) {
				t.Fatalf("max %d depth %d: round trip differs", tt.max, tt.depth)
			}
			continue
		}
		wantStatus(t, err, tlv.StatusNestingTooDeep)
		if tt.depth < 1000 {
			if _, err := d.Decode(bytewise(in)); err == nil {
				t.Fatalf("max %d depth %d: bytewise rope accepted", tt.max, tt.depth)
			}
		}
	}
}

func TestDecodeDepthErrorOffset(t *testing.T) {
	_, err := tlv.Decode(tlv.NewRope(chain(65)))
	de := err.(*tlv.DecodeError)
	if de.Offset != 64*4 {
		t.Fatalf("offset %d, want %d (the 65th header)", de.Offset, 64*4)
	}
}

// LL boundaries: 0xFFFF fits the 4-byte header, 0x10000 needs LL
// (reconstructed§tlv-header: an originator SHOULD use LL = 0 whenever
// length <= 0xFFFF).
func TestLLBoundaries(t *testing.T) {
	tests := []struct {
		n    int
		head []byte
	}{
		{0, hx("01 00 00 00")},
		{0xFFFF, hx("01 00 ff ff")},
		{0x10000, hx("01 02 00 00 01 00")},
		{0x10001, hx("01 02 01 00 01 00")},
	}
	for _, tt := range tests {
		payload := bytes.Repeat([]byte{0xa5}, tt.n)
		b := tlv.NewLeaf(tlv.TypeValue, payload).Bytes()
		if !bytes.HasPrefix(b, tt.head) || len(b) != len(tt.head)+tt.n {
			t.Fatalf("%d bytes: header % x, want % x", tt.n, b[:len(tt.head)], tt.head)
		}
		for i := 0; i <= min(len(tt.head)+1, len(b)); i++ {
			n := mustDecode(t, cut(b, i))
			if n.Payload().Len() != tt.n || !bytes.Equal(n.Bytes(), b) {
				t.Fatalf("%d bytes split at %d: decoded %d bytes", tt.n, i, n.Payload().Len())
			}
		}
	}
	// A structured TLV whose children outgrow 16 bits takes LL; the children keep theirs.
	big := tlv.NewStruct(tlv.TypeSettings, tlv.NewLeaf(tlv.TypeValue, make([]byte, 0xFFFF)))
	if big.Opt()&tlv.OptLL == 0 || big.Children()[0].Opt()&tlv.OptLL != 0 {
		t.Fatalf("opts %s / %s", big.Opt(), big.Children()[0].Opt())
	}
	// A non-minimal 0xFFFF-byte LL header is accepted and re-emitted untouched.
	nonMinimal := append(hx("01 02 ff ff 00 00"), make([]byte, 0xFFFF)...)
	if n := mustDecode(t, tlv.NewRope(nonMinimal)); !bytes.Equal(n.Bytes(), nonMinimal) {
		t.Fatal("non-minimal LL header not re-emitted as received")
	}
	// A 16-bit length one past the bytes present.
	_, err := tlv.Decode(tlv.NewRope(append(hx("01 00 ff ff"), make([]byte, 0xFFFE)...)))
	wantStatus(t, err, tlv.StatusMalformed)
}
