package corpus_test

import (
	"encoding/binary"
	"strings"
	"testing"
	"time"

	"github.com/conform-suite/conform/corpus"
	"github.com/conform-suite/conform/ref/tlv"
	"github.com/google/go-cmp/cmp"
)

// TestReferenceReproducesTLVVectors proves that the tlv oracle agrees with
// every golden vector: the tree and trailer a frame decodes to, every refusal
// and its status, the canonical form of every path, the verdict on every
// received PATH payload, and what one forward hop makes of every FWD. The
// vectors were written from the specification, so a disagreement is a bug in
// one or the other, never something to regenerate.
func TestReferenceReproducesTLVVectors(t *testing.T) {
	set, err := corpus.TLV()
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range set.All() {
		t.Run(v.ID, func(t *testing.T) {
			switch v.Kind {
			case corpus.TLVFrame:
				checkTLVFrame(t, v)
			case corpus.TLVPath:
				checkTLVPath(t, v)
			case corpus.TLVPathPayload:
				checkTLVPathPayload(t, v)
			case corpus.TLVHop:
				checkTLVHop(t, v)
			default:
				t.Fatalf("kind %q is none of frame, path, path-payload, hop", v.Kind)
			}
		})
	}
}

// TestTLVCorpusCoversTheIssue names the vectors issue 5 requires: the printed
// vectors, nesting one to four levels deep, every trailer combination, the LL
// boundaries, malformed headers and FWD frames before and after a hop; and
// those issue 15 adds: the CRC check values, FWDs of every op, a REPLY
// carrying an answer.
func TestTLVCorpusCoversTheIssue(t *testing.T) {
	set, err := corpus.TLV()
	if err != nil {
		t.Fatal(err)
	}
	names := []string{"path-alpha", "status-empty", "path-sensor-temp", "canon-alpha", "canon-sensor-temp",
		"nested-depth-1", "nested-depth-2", "nested-depth-3", "nested-depth-4",
		"ll-ffff-short", "ll-10000-long", "ll-nonminimal",
		"type-zero", "reserved-bit-6", "reserved-bit-7", "crc-code-3", "length-beyond-input",
		"hop-strips-mount-run", "hop-terminus", "crc32c-check-value", "crc64xz-check-value",
		"hop-op-read", "hop-op-await", "hop-op-subscribe", "record-fwd-reply-result"}
	for _, ts := range []string{"0", "4", "6", "8"} {
		for _, crc := range []string{"none", "crc32c", "crc64xz"} {
			if ts != "0" || crc != "none" {
				names = append(names, "trailer-ts"+ts+"-"+crc)
			}
		}
	}
	for _, name := range names {
		if _, ok := set.Lookup(corpus.TLVVersion + "/" + name); !ok {
			t.Errorf("vector %s is missing", name)
		}
	}
}

// TestTLVPrintedVectors pins the bytes the sources print, so that a vector
// file cannot drift from them.
func TestTLVPrintedVectors(t *testing.T) {
	set, err := corpus.TLV()
	if err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]string{
		"path-alpha":       "06 00 06 00 05 61 6c 70 68 61",
		"status-empty":     "09 00 00 00",
		"path-sensor-temp": "06 00 0c 00 06 73 65 6e 73 6f 72 04 74 65 6d 70",
	} {
		if got := corpus.FormatHex(set.Get(corpus.TLVVersion + "/" + id).Input); got != want {
			t.Errorf("%s: input %s, the source prints %s", id, got, want)
		}
	}
}

// TestTLVCheckValueVectors: the two check-value vectors carry, as their
// trailer's check, the catalogued check value of "123456789" for CRC-32C and
// CRC-64/XZ (reconstructed§tlv-trailer#4, #5), and their payload ends with
// "123456789"; TestReferenceReproducesTLVVectors checks the rest.
func TestTLVCheckValueVectors(t *testing.T) {
	set, err := corpus.TLV()
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]uint64{"crc32c-check-value": 0xE3069283, "crc64xz-check-value": 0x995DC9BBDF1939FA} {
		v := set.Get(corpus.TLVVersion + "/" + name)
		if v.Trailer == nil || v.Trailer.Check != want {
			t.Errorf("%s: trailer %+v, want the check 0x%X", name, v.Trailer, want)
		}
		if !strings.HasSuffix(string(v.Tree.Payload), "123456789") {
			t.Errorf("%s: payload %s does not end with \"123456789\"", name, corpus.FormatHex(v.Tree.Payload))
		}
	}
}

// bitwiseCRC is a table-less reflected CRC, independent of hash/crc32 and
// hash/crc64 and of ref/tlv, to check the vectors' trailers.
func bitwiseCRC(b []byte, width int, poly uint64) uint64 {
	mask := uint64(1)<<width - 1
	if width == 64 {
		mask = ^uint64(0)
	}
	crc := mask
	for _, c := range b {
		crc ^= uint64(c)
		for range 8 {
			if crc&1 != 0 {
				crc = crc>>1 ^ poly
			} else {
				crc >>= 1
			}
		}
	}
	return crc ^ mask
}

const (
	crc32cReflected  = 0x82F63B78         // 0x1EDC6F41 reflected
	crc64xzReflected = 0xC96C5795D7870F42 // 0x42F0E1EBA9EA3693 reflected
)

func TestBitwiseCRCCheckValues(t *testing.T) {
	if got := bitwiseCRC([]byte("123456789"), 32, crc32cReflected); got != 0xE3069283 {
		t.Errorf("CRC-32C check 0x%x", got)
	}
	if got := bitwiseCRC([]byte("123456789"), 64, crc64xzReflected); got != 0x995DC9BBDF1939FA {
		t.Errorf("CRC-64/XZ check 0x%x", got)
	}
}

var crcKinds = map[string]tlv.CRC{"none": tlv.CRCNone, "crc32c": tlv.CRC32C, "crc64xz": tlv.CRC64XZ}

type treeView struct {
	Type, Opt uint8
	Payload   string
	Children  []treeView
	Trailer   string
}

func viewNode(n *tlv.Node) treeView {
	v := treeView{Type: uint8(n.Type()), Opt: uint8(n.Opt()), Trailer: corpus.FormatHex(n.Trailer().Bytes())}
	if !n.Opt().PL() {
		v.Payload = corpus.FormatHex(n.Payload().Bytes())
	}
	for _, c := range n.Children() {
		v.Children = append(v.Children, viewNode(c))
	}
	return v
}

func viewTree(n *corpus.TLVTree) treeView {
	v := treeView{Type: n.Type, Opt: n.Opt, Payload: corpus.FormatHex(n.Payload), Trailer: corpus.FormatHex(n.Trailer)}
	for _, c := range n.Children {
		v.Children = append(v.Children, viewTree(c))
	}
	return v
}

func checkTLVFrame(t *testing.T, v *corpus.TLVVector) {
	if (v.Tree == nil) == (v.Refusal == 0) {
		t.Fatal("a frame vector has exactly one of tree and refusal")
	}
	n, tr, err := (&tlv.Decoder{}).DecodeFrame(tlv.NewRope(v.Input))
	if v.Refusal != 0 {
		if s, _ := tlv.StatusOf(err); err == nil || s != tlv.Status(v.Refusal) {
			t.Fatalf("decoding %s: error %v, want status 0x%04x", corpus.FormatHex(v.Input), err, uint16(v.Refusal))
		}
		return
	}
	if err != nil {
		t.Fatalf("decoding %s: %v", corpus.FormatHex(v.Input), err)
	}
	if d := cmp.Diff(viewTree(v.Tree), viewNode(n)); d != "" {
		t.Errorf("tree (-vector +reference):\n%s", d)
	}
	want := tlv.Trailer{}
	if v.Trailer != nil {
		want = tlv.Trailer{TSWidth: v.Trailer.TSWidth, Timestamp: v.Trailer.Timestamp, CRC: crcKinds[v.Trailer.CRC], Check: v.Trailer.Check}
		checkTrailerIndependently(t, v)
		// Egress with the vector's clock gives the input back.
		clock := time.Unix(0, int64(v.Clock))
		got, err := tlv.Egress{TSWidth: want.TSWidth, CRC: want.CRC, Clock: func() time.Time { return clock }}.AppendTo(nil, n)
		if err != nil || !cmp.Equal(got, []byte(v.Input)) {
			t.Errorf("egress: %s %v, want %s", corpus.FormatHex(got), err, corpus.FormatHex(v.Input))
		}
	}
	if tr != want {
		t.Errorf("trailer %+v, want %+v", tr, want)
	}
}

// checkTrailerIndependently recomputes a vector's check with bitwiseCRC.
func checkTrailerIndependently(t *testing.T, v *corpus.TLVVector) {
	in := []byte(v.Input)
	switch v.Trailer.CRC {
	case "crc32c":
		body := in[:len(in)-4]
		if got := bitwiseCRC(body, 32, crc32cReflected); got != v.Trailer.Check || uint64(binary.LittleEndian.Uint32(in[len(in)-4:])) != got {
			t.Errorf("CRC-32C of the vector's bytes is 0x%08x, the vector says 0x%08x", got, v.Trailer.Check)
		}
	case "crc64xz":
		body := in[:len(in)-8]
		if got := bitwiseCRC(body, 64, crc64xzReflected); got != v.Trailer.Check || binary.LittleEndian.Uint64(in[len(in)-8:]) != got {
			t.Errorf("CRC-64/XZ of the vector's bytes is 0x%016x, the vector says 0x%016x", got, v.Trailer.Check)
		}
	}
	if w := v.Trailer.TSWidth; w > 0 {
		mask := uint64(1)<<(8*w) - 1
		if w == 8 {
			mask = ^uint64(0)
		}
		if v.Clock&mask != v.Trailer.Timestamp {
			t.Errorf("timestamp 0x%x is not the clock 0x%x truncated to %d bytes", v.Trailer.Timestamp, v.Clock, w)
		}
	}
}

func checkTLVPath(t *testing.T, v *corpus.TLVVector) {
	if (v.Canonical == nil) == (v.Refusal == 0) {
		t.Fatal("a path vector has exactly one of canonical and refusal")
	}
	got, err := tlv.CanonicalPath(string(v.PathBytes()))
	if v.Refusal != 0 {
		if s, _ := tlv.StatusOf(err); err == nil || s != tlv.Status(v.Refusal) {
			t.Fatalf("canonicalizing %q: %x %v, want status 0x%04x", v.PathBytes(), got, err, uint16(v.Refusal))
		}
		return
	}
	if err != nil || !cmp.Equal(got, []byte(*v.Canonical)) {
		t.Fatalf("canonicalizing %q: %s %v, want %s", v.PathBytes(), corpus.FormatHex(got), err, corpus.FormatHex(*v.Canonical))
	}
}

func checkTLVPathPayload(t *testing.T, v *corpus.TLVVector) {
	segs, err := tlv.PathSegments(tlv.NewRope(v.Input))
	if v.Refusal != 0 {
		if s, _ := tlv.StatusOf(err); err == nil || s != tlv.Status(v.Refusal) {
			t.Fatalf("validating %s: %q %v, want status 0x%04x", corpus.FormatHex(v.Input), segs, err, uint16(v.Refusal))
		}
		return
	}
	if err != nil || !cmp.Equal(segs, v.Segments, cmp.Comparer(func(a, b []string) bool { return len(a) == len(b) && (len(a) == 0 || cmp.Equal(a, b)) })) {
		t.Fatalf("validating %s: %q %v, want %q", corpus.FormatHex(v.Input), segs, err, v.Segments)
	}
}

func checkTLVHop(t *testing.T, v *corpus.TLVVector) {
	h := v.Hop
	fwd, err := tlv.Decode(tlv.NewRope(v.Input))
	if err != nil {
		t.Fatal(err)
	}
	r, err := tlv.NewRouter(h.Links...)
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.Hop(fwd, h.Inbound)
	if err != nil {
		t.Fatal(err)
	}
	if res.Terminus != h.Terminus {
		t.Fatalf("terminus %v, want %v", res.Terminus, h.Terminus)
	}
	if h.Terminus {
		kids := fwd.Children()
		got, _ := tlv.Egress{}.AppendTo(nil, kids[len(kids)-1])
		if !cmp.Equal(got, []byte(h.Stored)) {
			t.Errorf("stored %s, want %s", corpus.FormatHex(got), corpus.FormatHex(h.Stored))
		}
		return
	}
	if res.Link != h.Link {
		t.Errorf("link %d, want %d", res.Link, h.Link)
	}
	clock := time.Unix(0, int64(h.Egress.Clock))
	got, err := tlv.Egress{TSWidth: h.Egress.TSWidth, CRC: crcKinds[h.Egress.CRC], Clock: func() time.Time { return clock }}.AppendTo(nil, res.Frame)
	if err != nil || !cmp.Equal(got, []byte(h.Output)) {
		t.Errorf("forwarded %s %v,\nwant      %s", corpus.FormatHex(got), err, corpus.FormatHex(h.Output))
	}
}
