package tlv

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"

	"github.com/conform-suite/conform/cases"
	"github.com/conform-suite/conform/corpus"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/reports"
	"github.com/google/go-cmp/cmp"
)

// maxEvidence bounds the failures a case records one by one; the rest are
// counted, so that a SUT wrong on every split point gives a readable record.
const maxEvidence = 3

// failures records a case's failures, the first few with evidence.
type failures struct {
	t     *cases.T
	what  string
	n     int
	total int
}

func newFailures(t *cases.T, what string) *failures { return &failures{t: t, what: what} }

// check records a failure when want and got differ.
func (f *failures) check(input string, want, got any, show func(any) string) bool {
	f.total++
	if cmp.Equal(want, got) {
		return true
	}
	if f.n < maxEvidence {
		f.fail(reports.Evidence{Message: f.what, Input: input, Expected: show(want), Got: show(got), Diff: clip(cmp.Diff(want, got))})
	} else {
		f.n++
	}
	return false
}

// clip cuts text for the record after 4,000 characters.
func clip(s string) string {
	const limit = 4000
	if len(s) <= limit {
		return s
	}
	return s[:limit] + fmt.Sprintf(" … (%d characters)", len(s))
}

func (f *failures) fail(e reports.Evidence) {
	f.n++
	if f.n <= maxEvidence {
		if e.Message == "" {
			e.Message = f.what
		}
		f.t.Fail(e)
	}
}

// done records how many more failures there were.
func (f *failures) done() {
	if f.n > maxEvidence {
		f.t.Failf("%s: %d more of %d inputs failed the same way", f.what, f.n-maxEvidence, f.total)
	}
}

// hexOf writes bytes as the spec prints them, cut after 256 bytes.
func hexOf(b []byte) string {
	const limit = 256
	if len(b) <= limit {
		return corpus.FormatHex(b)
	}
	return fmt.Sprintf("%s … (%d bytes, sha256 %x)", corpus.FormatHex(b[:limit]), len(b), sha256.Sum256(b))
}

// ropeOf builds a rope from segments.
func ropeOf(segs ...[]byte) *conformpb.TlvRope { return &conformpb.TlvRope{Segments: segs} }

// showRope writes a rope's bytes with " | " at each segment boundary, cut
// after 256 bytes.
func showRope(r *conformpb.TlvRope) string {
	var sb strings.Builder
	n := 0
	for i, s := range r.GetSegments() {
		if i > 0 {
			sb.WriteString(" | ")
		}
		for j, c := range s {
			if n == 256 {
				total := 0
				for _, s := range r.GetSegments() {
					total += len(s)
				}
				fmt.Fprintf(&sb, " … (%d bytes in %d segments)", total, len(r.GetSegments()))
				return sb.String()
			}
			if j > 0 {
				sb.WriteByte(' ')
			}
			fmt.Fprintf(&sb, "%02x", c)
			n++
		}
	}
	return sb.String()
}

// Splittings. A vector is presented whole, at every split point into two
// segments, at sampled split points into three, and as one byte per segment
// (graph model §The two compositions: a view boundary may fall anywhere).
// Above everySplitLimit bytes the two-segment split points are those within
// 64 bytes of either end, where the headers and trailers are, plus a seeded
// sample of the rest.
const (
	everySplitLimit = 1024
	threeSplits     = 24
	sampledSplits   = 64
)

// twoSplits returns b at every split point into two segments.
func twoSplits(t *cases.T, b []byte) []*conformpb.TlvRope {
	var points []int
	if len(b) <= everySplitLimit {
		for i := 1; i < len(b); i++ {
			points = append(points, i)
		}
	} else {
		for i := 1; i <= 64; i++ {
			points = append(points, i, len(b)-i)
		}
		for range sampledSplits {
			points = append(points, 1+t.Rand().IntN(len(b)-1))
		}
	}
	var out []*conformpb.TlvRope
	for _, p := range points {
		out = append(out, ropeOf(b[:p], b[p:]))
	}
	return out
}

// threeSplitsOf returns b at sampled split points into three segments.
func threeSplitsOf(t *cases.T, b []byte) []*conformpb.TlvRope {
	if len(b) < 3 {
		return nil
	}
	var out []*conformpb.TlvRope
	for range threeSplits {
		i := 1 + t.Rand().IntN(len(b)-2)
		j := i + 1 + t.Rand().IntN(len(b)-i-1)
		out = append(out, ropeOf(b[:i], b[i:j], b[j:]))
	}
	return out
}

// bytewise returns b as one byte per segment.
func bytewise(b []byte) *conformpb.TlvRope {
	r := &conformpb.TlvRope{}
	for i := range b {
		r.Segments = append(r.Segments, b[i:i+1])
	}
	return r
}

// everySplitting returns b whole, at every two-segment split, at sampled
// three-segment splits, and one byte per segment.
func everySplitting(t *cases.T, b []byte) []*conformpb.TlvRope {
	out := []*conformpb.TlvRope{ropeOf(b)}
	out = append(out, twoSplits(t, b)...)
	out = append(out, threeSplitsOf(t, b)...)
	return append(out, bytewise(b))
}

// node is a TLV tree rendered for comparison and diffs: codes in hex, and
// long payloads as their length and digest.
type node struct {
	Type, Opt string
	Payload   string `json:",omitempty"`
	Children  []node `json:",omitempty"`
	Trailer   string `json:",omitempty"`
}

func payloadText(b []byte) string {
	if len(b) <= 64 {
		return corpus.FormatHex(b)
	}
	return fmt.Sprintf("%s … (%d bytes, sha256 %x)", corpus.FormatHex(b[:32]), len(b), sha256.Sum256(b))
}

func nodeOfVector(n *corpus.TLVTree) node {
	v := node{Type: fmt.Sprintf("0x%02x", n.Type), Opt: fmt.Sprintf("0x%02x", n.Opt), Payload: payloadText(n.Payload), Trailer: corpus.FormatHex(n.Trailer)}
	for _, c := range n.Children {
		v.Children = append(v.Children, nodeOfVector(c))
	}
	return v
}

func nodeOfPB(n *conformpb.TlvNode) node {
	v := node{Type: fmt.Sprintf("0x%02x", n.GetType()), Opt: fmt.Sprintf("0x%02x", n.GetOpt()), Payload: payloadText(n.GetPayload()), Trailer: corpus.FormatHex(n.GetTrailer())}
	for _, c := range n.GetChildren() {
		v.Children = append(v.Children, nodeOfPB(c))
	}
	return v
}

// String renders a tree as TYPE/OPT[payload] or TYPE/OPT{children}.
func (n node) String() string {
	var sb strings.Builder
	sb.WriteString(n.Type + "/" + n.Opt)
	if isPL(n.Opt) {
		sb.WriteByte('{')
		for i, c := range n.Children {
			if i > 0 {
				sb.WriteByte(' ')
			}
			sb.WriteString(c.String())
		}
		sb.WriteByte('}')
	} else {
		sb.WriteString("[" + n.Payload + "]")
	}
	if n.Trailer != "" {
		sb.WriteString("+trailer[" + n.Trailer + "]")
	}
	return sb.String()
}

func isPL(opt string) bool {
	var o uint8
	fmt.Sscanf(opt, "0x%02x", &o)
	return o&1 != 0
}

// decoded is what a decode answered, rendered: the status of a refusal, or
// the tree, one line per TLV in pre-order with its depth (and, when a case
// judges it, the trailer). Strings keep comparison and diffs cheap on trees
// thousands of levels deep.
type decoded struct {
	Status  string `json:",omitempty"`
	Tree    string `json:",omitempty"`
	Trailer string `json:",omitempty"`
}

// lines renders a tree one TLV a line: depth, type/opt, then the payload of
// an opaque TLV and the trailer of one that carries its own.
func (n node) lines() string {
	var sb strings.Builder
	type item struct {
		n     node
		depth int
	}
	stack := []item{{n, 1}}
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		fmt.Fprintf(&sb, "%d %s/%s", it.depth, it.n.Type, it.n.Opt)
		if isPL(it.n.Opt) {
			fmt.Fprintf(&sb, " {%d children}", len(it.n.Children))
		} else {
			sb.WriteString(" [" + it.n.Payload + "]")
		}
		if it.n.Trailer != "" {
			sb.WriteString(" +trailer[" + it.n.Trailer + "]")
		}
		sb.WriteByte('\n')
		for i := len(it.n.Children) - 1; i >= 0; i-- {
			stack = append(stack, item{it.n.Children[i], it.depth + 1})
		}
	}
	return sb.String()
}

func statusText(s uint32) string {
	return fmt.Sprintf("refused 0x%04x %s", s, statusNames[uint16(s)])
}

// statusNames are the names of the status codes RECONSTRUCTED §2 lists, for
// evidence only; verdicts compare codes from the corpus.
var statusNames = map[uint16]string{
	0x0021: "tr::path::invalid", 0x0050: "tr::tlv::nesting_too_deep",
	0x0051: "tr::tlv::malformed", 0x0052: "tr::tlv::crc_mismatch",
}

func trailerText(tr *conformpb.TlvTrailer) string {
	return fmt.Sprintf("ts_width %d, timestamp 0x%x, crc %s, check 0x%x", tr.GetTsWidth(), tr.GetTimestamp(), tr.GetCrc(), tr.GetCheck())
}

func trailerOfVector(tr *corpus.TLVTrailer) string {
	if tr == nil {
		return trailerText(&conformpb.TlvTrailer{})
	}
	return trailerText(&conformpb.TlvTrailer{TsWidth: uint32(tr.TSWidth), Timestamp: tr.Timestamp, Crc: crcOf(tr.CRC), Check: tr.Check})
}

func crcOf(name string) conformpb.TlvCrc {
	switch name {
	case "crc32c":
		return conformpb.TlvCrc_TLV_CRC_32C
	case "crc64xz":
		return conformpb.TlvCrc_TLV_CRC_64_XZ
	}
	return conformpb.TlvCrc_TLV_CRC_NONE
}

// gotDecoded renders a decode answer; withTrailer adds the trailer read.
func gotDecoded(o *conformpb.TlvDecodeOutput, withTrailer bool) decoded {
	if o.GetRefusal() != nil {
		return decoded{Status: statusText(o.GetRefusal().GetStatus())}
	}
	if o.GetRoot() == nil {
		return decoded{Status: "neither a tree nor a refusal"}
	}
	d := decoded{Tree: nodeOfPB(o.GetRoot()).lines()}
	if withTrailer {
		d.Trailer = trailerText(o.GetTrailer())
	}
	return d
}

// wantDecoded is what a frame vector says a decode answers.
func wantDecoded(v *corpus.TLVVector, withTrailer bool) decoded {
	if v.Refusal != 0 {
		return decoded{Status: statusText(uint32(v.Refusal))}
	}
	d := decoded{Tree: nodeOfVector(v.Tree).lines()}
	if withTrailer {
		d.Trailer = trailerOfVector(v.Trailer)
	}
	return d
}

// showDecoded renders a decoded for evidence.
func showDecoded(x any) string {
	d := x.(decoded)
	var parts []string
	if d.Status != "" {
		parts = append(parts, d.Status)
	}
	if d.Tree != "" {
		parts = append(parts, clip(strings.TrimSuffix(d.Tree, "\n")))
	}
	if d.Trailer != "" {
		parts = append(parts, "trailer "+d.Trailer)
	}
	return strings.Join(parts, "; ")
}

// decodeEach presents each vector in every splitting the split function
// gives, and judges every answer against the vector.
func decodeEach(t *cases.T, what string, vs []*corpus.TLVVector, withTrailer bool, split func(*cases.T, []byte) []*conformpb.TlvRope) {
	var ropes []*conformpb.TlvRope
	var wants []decoded
	for _, v := range vs {
		for _, r := range split(t, v.Input) {
			ropes = append(ropes, r)
			wants = append(wants, wantDecoded(v, withTrailer))
		}
	}
	f := newFailures(t, what)
	for i, out := range decode(t, ropes) {
		f.check(showRope(ropes[i]), wants[i], gotDecoded(out, withTrailer), showDecoded)
	}
	f.done()
}

// whole presents the bytes as one segment.
func whole(_ *cases.T, b []byte) []*conformpb.TlvRope { return []*conformpb.TlvRope{ropeOf(b)} }

// pbOfVector converts a vector's tree to conform.v1.
func pbOfVector(n *corpus.TLVTree) *conformpb.TlvNode {
	out := &conformpb.TlvNode{Type: uint32(n.Type), Opt: uint32(n.Opt), Payload: n.Payload, Trailer: n.Trailer}
	for _, c := range n.Children {
		out.Children = append(out.Children, pbOfVector(c))
	}
	return out
}

// header writes a TLV header as an originator does: LL only when the length
// needs 32 bits (RECONSTRUCTED §2 Header).
func header(typ, opt uint8, n int) []byte {
	if n > 0xFFFF {
		return binary.LittleEndian.AppendUint32([]byte{typ, opt | 0x02}, uint32(n))
	}
	return binary.LittleEndian.AppendUint16([]byte{typ, opt &^ 0x02}, uint16(n))
}

// wireSize returns the wire size of a vector tree node as received: its
// header (4, or 6 with LL), payload and trailer.
func wireSize(n *corpus.TLVTree) int {
	size := 4
	if n.Opt&0x02 != 0 {
		size = 6
	}
	if n.Opt&0x01 != 0 {
		for _, c := range n.Children {
			size += wireSize(c)
		}
	} else {
		size += len(n.Payload)
	}
	return size + len(n.Trailer)
}

// childBytes returns the wire bytes of each child of a structured vector at
// rest, cut from its input by the sizes its tree gives.
func childBytes(v *corpus.TLVVector) [][]byte {
	off := 4
	if v.Tree.Opt&0x02 != 0 {
		off = 6
	}
	var out [][]byte
	for _, c := range v.Tree.Children {
		n := wireSize(c)
		out = append(out, v.Input[off:off+n])
		off += n
	}
	return out
}

// atRest returns a frame vector's bytes without its trailer and with TS and
// CRC clear in its opt: the frame as stored.
func atRest(v *corpus.TLVVector) []byte {
	n := len(v.Input)
	if tr := v.Trailer; tr != nil {
		n -= tr.TSWidth + map[string]int{"none": 0, "crc32c": 4, "crc64xz": 8}[tr.CRC]
	}
	b := slices.Clone(v.Input[:n])
	b[1] &^= 0x3C
	return b
}
