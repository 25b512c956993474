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
	"github.com/conform-suite/conform/proto/conform/v1/meaning"
	"github.com/conform-suite/conform/reports"
	"github.com/conform-suite/conform/reports/evidence"
	"google.golang.org/protobuf/proto"
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
	// should: the case judges a SHOULD.
	should bool
	// own: the answers expected are built for the depth bound the SUT
	// declares, not the reference's (JudgeWith).
	own bool
}

func newFailures(t *cases.T, what string) *failures { return &failures{t: t, what: what} }

// answer judges got, the SUT's answer to in, against want through the
// declaration of meaning, in the fields under paths, and records a failure
// with its evidence unless they agree. A SHOULD case (f.should) fails on
// the SHOULD differences, and on the MUST ones of the same fields: a value
// wrong in its form is not what the SHOULD asks either.
func (f *failures) answer(input string, in, want, got proto.Message, paths ...string) bool {
	return f.answerAs(input, in, want, got, got, paths...)
}

// answerAs is answer for a got the case has made comparable (judged) that
// is shown as the SUT gave it (shown).
func (f *failures) answerAs(input string, in, want, judged, shown proto.Message, paths ...string) bool {
	f.total++
	judge := f.t.Judge
	if f.own {
		judge = func(in, want, got proto.Message, level meaning.Level, paths ...string) meaning.Differences {
			return f.t.JudgeWith(meaning.Options{}, in, want, got, level, paths...)
		}
	}
	ds := judge(in, want, judged, meaning.MUST, paths...)
	if f.should {
		ds = append(ds, judge(in, want, judged, meaning.SHOULD, paths...)...)
	}
	if len(ds) == 0 {
		return true
	}
	f.n++
	if f.n <= maxEvidence {
		f.t.FailAnswer(f.what, input, want, shown, ds)
	}
	return false
}

// compare counts one comparison of two values that are not conform.v1
// answers (what a case read off a forwarded frame) and records a failure,
// with every differing field named, unless they agree.
func (f *failures) compare(input string, want, got any) bool {
	f.total++
	e, differ := evidence.Compare(f.what, want, got)
	if !differ {
		return true
	}
	e.Input = input
	f.fail(e)
	return false
}

// record counts one comparison and records e as a failure unless ok, for a
// comparison the declaration does not make (a header's form, checked
// alone).
func (f *failures) record(ok bool, e reports.Evidence) bool {
	f.total++
	if !ok {
		f.fail(e)
	}
	return ok
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
	const limit = 256
	var sb strings.Builder
	n := 0
	for i, s := range r.GetSegments() {
		if i > 0 {
			sb.WriteString(" | ")
		}
		if n+len(s) > limit {
			sb.WriteString(corpus.FormatHex(s[:limit-n]))
			total := 0
			for _, s := range r.GetSegments() {
				total += len(s)
			}
			fmt.Fprintf(&sb, " … (%d bytes in %d segments)", total, len(r.GetSegments()))
			return sb.String()
		}
		sb.WriteString(corpus.FormatHex(s))
		n += len(s)
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

// node is a TLV tree rendered for a case's input: codes in hex, and long
// payloads as their length and digest.
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

func statusText(s uint32) string {
	return fmt.Sprintf("refused 0x%04x %s", s, statusNames[uint16(s)])
}

// The status codes a case expects where no vector gives one: a frame cut
// short, and one nested beyond the declared bound (reconstructed§tlv-status#2).
const (
	statusNestingTooDeep = 0x0050
	statusMalformed      = 0x0051
)

// statusNames are the names of the status codes of reconstructed§tlv-status#2
// a tlv op answers with, for evidence only; verdicts compare codes.
var statusNames = map[uint16]string{
	0x0021: "tr::path::invalid", statusNestingTooDeep: "tr::tlv::nesting_too_deep",
	statusMalformed: "tr::tlv::malformed", 0x0052: "tr::tlv::crc_mismatch",
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

// refusal is a TlvRefusal of status s.
func refusal(s uint32) *conformpb.TlvRefusal { return &conformpb.TlvRefusal{Status: s} }

// wantDecode is what a frame vector says a decode answers: its tree at
// rest and the trailer it carried, or its refusal.
func wantDecode(v *corpus.TLVVector) *conformpb.TlvDecodeOutput {
	if v.Refusal != 0 {
		return &conformpb.TlvDecodeOutput{Refusal: refusal(uint32(v.Refusal))}
	}
	out := &conformpb.TlvDecodeOutput{Root: pbOfVector(v.Tree), Trailer: &conformpb.TlvTrailer{}}
	if tr := v.Trailer; tr != nil {
		out.Trailer = &conformpb.TlvTrailer{TsWidth: uint32(tr.TSWidth), Timestamp: tr.Timestamp, Crc: crcOf(tr.CRC), Check: tr.Check}
	}
	return out
}

// decodeFields are what a decode case judges: the tree or the refusal,
// and with withTrailer the trailer read.
func decodeFields(withTrailer bool) []string {
	if withTrailer {
		return []string{"root", "refusal", "trailer"}
	}
	return []string{"root", "refusal"}
}

// decodeEach presents each vector in every splitting the split function
// gives, and judges every answer against the vector.
func decodeEach(t *cases.T, what string, vs []*corpus.TLVVector, withTrailer bool, split func(*cases.T, []byte) []*conformpb.TlvRope) {
	var ropes []*conformpb.TlvRope
	var wants []*conformpb.TlvDecodeOutput
	for _, v := range vs {
		for _, r := range split(t, v.Input) {
			ropes = append(ropes, r)
			wants = append(wants, wantDecode(v))
		}
	}
	f := newFailures(t, what)
	for i, out := range decode(t, ropes) {
		f.answer(showRope(ropes[i]), &conformpb.TlvDecodeInput{Frame: ropes[i]}, wants[i], out, decodeFields(withTrailer)...)
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

// header writes a TLV header as an originator should (reconstructed§tlv-header#1,
// #3): LL only when the length needs 32 bits.
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
