package doppler

import (
	"fmt"

	"github.com/conform-suite/conform/cases"
	"github.com/conform-suite/conform/corpus"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	dp "github.com/conform-suite/conform/ref/doppler"
	"github.com/conform-suite/conform/reports"
	"github.com/google/go-cmp/cmp"
)

// checkView is a check answer rendered for comparison and diffing.
type checkView struct {
	Verdict    string
	Code       string
	Header     *corpus.DopplerHeaderFields
	ChunkBlock *corpus.DopplerChunkFields
}

func wantCheck(v *corpus.DopplerVector) checkView {
	w := checkView{Verdict: v.Verdict, Code: codeName(int32(dp.ErrInvalid)), Header: v.Header, ChunkBlock: v.ChunkBlock}
	if v.Verdict == "accepted" {
		w.Code = codeName(int32(dp.OK))
	}
	return w
}

func gotCheck(out *conformpb.DopplerCheckOutput) checkView {
	g := checkView{Verdict: verdictSlug(out.Verdict), Code: codeName(out.Code), Header: headerFields(out.Header)}
	if c := out.Chunk; c != nil {
		g.ChunkBlock = &corpus.DopplerChunkFields{ChunkIndex: c.ChunkIndex, ChunkCount: c.ChunkCount,
			TotalSamples: c.TotalSamples, TotalBytes: c.TotalBytes}
	}
	return g
}

func (v checkView) String() string {
	s := fmt.Sprintf("verdict %s, code %s", v.Verdict, v.Code)
	if v.Header != nil {
		s += fmt.Sprintf(", header %+v", *v.Header)
	}
	if v.ChunkBlock != nil {
		s += fmt.Sprintf(", chunk block %+v", *v.ChunkBlock)
	}
	return s
}

func describeCheckInput(v *corpus.DopplerVector) string {
	s := fmt.Sprintf("%s receiver, message %s", orderName(orderOf(v)), corpus.FormatHex(v.Message))
	if v.TransportLength != nil {
		s += fmt.Sprintf(" (its first %d bytes; the transport reports %d)", len(v.Message), *v.TransportLength)
	}
	return s
}

// checkVectors runs the SUT's header check on every vector's message, as a
// receiver of the vector's order, and judges the verdict, the code and, for
// an accepted message, the decoded fields. Vectors of the two orders go in
// separate requests, so a SUT that reads only its own order skips only the
// cases about the other.
func checkVectors(t *cases.T, what string, vs ...*corpus.DopplerVector) {
	for _, o := range []conformpb.DopplerByteOrder{little, big} {
		var ins []*conformpb.DopplerCheckInput
		var sel []*corpus.DopplerVector
		for _, v := range vs {
			if orderOf(v) != o {
				continue
			}
			in := &conformpb.DopplerCheckInput{Message: v.Message}
			if v.TransportLength != nil {
				in.TransportLength = v.TransportLength
			}
			ins, sel = append(ins, in), append(sel, v)
		}
		if len(ins) == 0 {
			continue
		}
		for i, out := range check(t, o, ins) {
			w, g := wantCheck(sel[i]), gotCheck(out)
			if g.Verdict != "accepted" && w.Verdict != "accepted" {
				// A refusal's header is not judged.
				g.Header, g.ChunkBlock = nil, nil
			}
			if !cmp.Equal(w, g) {
				t.Fail(reports.Evidence{Message: what + ": " + sel[i].Title, Input: describeCheckInput(sel[i]),
					Expected: w.String(), Got: g.String(), Diff: cmp.Diff(w, g)})
			}
		}
	}
}

func refusalVectors() []string {
	return []string{"short-message", "empty-message", "not-doppler", "cross-endian-big-sender", "cross-endian-little-sender",
		"other-major-1", "other-major-3", "unknown-flag", "unknown-flag-high", "short-chunk-block",
		"payload-claims-more", "payload-claims-less", "payload-counts-chunk-block", "transport-length-short",
		"unknown-kind", "unknown-format", "iq-format-zero", "tlm-format-not-zero", "count-mismatch", "count-overflow",
		"first-refusal-wins", "flags-before-payload", "payload-before-count"}
}

// header is doppler §3: what a receiver checks.
func (s *suite) header() []cases.Case {
	sampleFormats := []string{"valid-ci8-le", "valid-ci16-le", "valid-ci32-le", "valid-cf32-le", "valid-cf64-le"}
	bigOrder := []string{"valid-ci8-be", "valid-ci16-be", "valid-ci32-be", "valid-cf32-be", "valid-cf64-be", "valid-raw-be", "valid-tlm-be"}
	vcase := func(id, title, spec string, names ...string) cases.Case {
		return reconstructed(must(cases.Case{ID: id, Title: title, Spec: spec, Vectors: ids(names...),
			Run: func(t *cases.T) { checkVectors(t, title, s.vecs(names...)...) }}))
	}
	return []cases.Case{
		vcase("doppler/3/sample-formats-accepted",
			"A frame of each of the five BLUE sample formats (CB, CI, CL, CF, CD) is accepted and its header read field by field",
			"doppler-streaming §3; RECONSTRUCTED §3", sampleFormats...),
		vcase("doppler/3/raw-bytes-face-accepted",
			"A raw-bytes frame (kind IQ, format \"SB\", 1-byte elements, num_samples the byte count) is accepted",
			"doppler-streaming §3, §2; RECONSTRUCTED §3", "valid-raw-le"),
		vcase("doppler/3/telemetry-frame-accepted",
			"A telemetry frame (kind TLM = 1, format 0, num_samples counting 16-byte records) is accepted",
			"doppler-streaming §3; RECONSTRUCTED §3", "valid-tlm-le"),
		vcase("doppler/3/own-order-accepted-big-endian",
			"A big-endian receiver accepts a big-endian sender's frames of every type and reads their fields",
			"doppler-streaming §3; RECONSTRUCTED §3", bigOrder...),
		vcase("doppler/3/cross-endian-magic",
			"A magic that matches byte-swapped is refused as cross-endian, in either direction, not as \"not doppler\"",
			"doppler-streaming §3, §9; RECONSTRUCTED §3", "cross-endian-big-sender", "cross-endian-little-sender"),
		vcase("doppler/3/not-doppler-magic",
			"A magic that matches in neither byte order is refused as not doppler, not as cross-endian",
			"doppler-streaming §3; RECONSTRUCTED §3", "not-doppler"),
		vcase("doppler/3/other-major-refused",
			"A different major version (1, 3) is refused, not guessed at",
			"doppler-streaming §3; RECONSTRUCTED §3", "other-major-1", "other-major-3"),
		vcase("doppler/3/any-minor-accepted",
			"Any minor version is accepted under major version 2",
			"doppler-streaming §3; RECONSTRUCTED §3", "any-minor-version"),
		vcase("doppler/3/unknown-flag-refused",
			"A flag bit outside DP_FLAG_KNOWN is refused, because an unknown block would move where the payload starts",
			"doppler-streaming §3, §9; RECONSTRUCTED §3", "unknown-flag", "unknown-flag-high"),
		vcase("doppler/3/payload-bytes-against-transport",
			"payload_bytes must equal the message length the transport reports, less the header (and the chunk block when CHUNKED)",
			"doppler-streaming §3; RECONSTRUCTED §3", "payload-claims-more", "payload-claims-less", "payload-counts-chunk-block"),
		vcase("doppler/3/transport-length-is-the-truth",
			"The receiver judges by the length the transport reports, not by the header's claim: a header given alone is accepted or refused by that length",
			"doppler-streaming §3; RECONSTRUCTED §3", "transport-length-consistent", "transport-length-short"),
		vcase("doppler/3/count-against-length",
			"num_samples × element size must equal the payload: a count that disagrees is refused",
			"doppler-streaming §3; RECONSTRUCTED §3", "count-mismatch"),
		vcase("doppler/3/count-overflow-is-mismatch",
			"num_samples × element size is computed without overflow: a product that wraps to the payload length is a mismatch",
			"doppler-streaming §3; RECONSTRUCTED §3", "count-overflow"),
		vcase("doppler/3/unknown-kind-refused",
			"A kind other than IQ (0) and TLM (1) is refused",
			"doppler-streaming §3; RECONSTRUCTED §3", "unknown-kind"),
		vcase("doppler/3/unknown-format-refused",
			"An IQ frame whose format is none of the five BLUE sample codes or \"SB\" (including 0) is refused",
			"doppler-streaming §3; RECONSTRUCTED §3", "unknown-format", "iq-format-zero"),
		vcase("doppler/3/telemetry-format-is-zero",
			"A telemetry frame whose format is not 0 is refused: format stays purely a BLUE sample code",
			"doppler-streaming §3; RECONSTRUCTED §3", "tlm-format-not-zero"),
		vcase("doppler/3/checks-in-order",
			"The checks run in order — magic, version, flags, payload_bytes, kind/format/count — and the first refusal is the verdict",
			"doppler-streaming §3; RECONSTRUCTED §3", "first-refusal-wins", "flags-before-payload", "payload-before-count"),
		vcase("doppler/3/short-message-refused",
			"A message shorter than the 64-byte header, the empty one included, is refused as short",
			"doppler-streaming §3; RECONSTRUCTED §3", "short-message", "empty-message"),
		vcase("doppler/3/short-chunk-block-refused",
			"A CHUNKED message too short to hold the 24-byte chunk block is refused",
			"doppler-streaming §3, §4; RECONSTRUCTED §3", "short-chunk-block"),
		reconstructed(must(cases.Case{
			ID:      "doppler/3/every-refusal-is-dp-err-invalid",
			Title:   "Every refusal of the header check is DP_ERR_INVALID (-2), whichever check refused",
			Spec:    "doppler-streaming §3; RECONSTRUCTED §3",
			Vectors: ids(refusalVectors()...),
			Run: func(t *cases.T) {
				vs := s.vecs(refusalVectors()...)
				for _, o := range []conformpb.DopplerByteOrder{little, big} {
					var ins []*conformpb.DopplerCheckInput
					var sel []*corpus.DopplerVector
					for _, v := range vs {
						if orderOf(v) == o {
							ins = append(ins, &conformpb.DopplerCheckInput{Message: v.Message, TransportLength: v.TransportLength})
							sel = append(sel, v)
						}
					}
					for i, out := range check(t, o, ins) {
						if out.Verdict == conformpb.DopplerVerdict_DOPPLER_VERDICT_ACCEPTED || out.Code != int32(dp.ErrInvalid) {
							t.Fail(reports.Evidence{Message: "a refused message's code: " + sel[i].Title, Input: describeCheckInput(sel[i]),
								Expected: "refused, code " + codeName(int32(dp.ErrInvalid)),
								Got:      fmt.Sprintf("verdict %s, code %s", verdictSlug(out.Verdict), codeName(out.Code))})
						}
					}
				}
			},
		})),
		must(cases.Case{
			ID:    "doppler/3/claims-beyond-the-message-refused",
			Title: "No header whose payload_bytes or num_samples claims more than the message carries is ever accepted (generated headers)",
			Spec:  "doppler-streaming §3",
			Run: func(t *cases.T) {
				ins, why := overclaims(t)
				for i, out := range check(t, little, ins) {
					if out.Verdict == conformpb.DopplerVerdict_DOPPLER_VERDICT_ACCEPTED {
						t.Fail(reports.Evidence{Message: "a header claiming " + why[i] + " was accepted",
							Input:    "little-endian receiver, message " + corpus.FormatHex(ins[i].Message),
							Expected: "refused (payload-mismatch or count-mismatch)", Got: "accepted"})
						if len(t.Evidence()) >= 3 {
							return
						}
					}
				}
			},
		}),
	}
}

// overclaims generates valid frames of every type and then makes each
// header claim more than its message carries: payload_bytes beyond the
// payload (with num_samples to match), or num_samples beyond payload_bytes.
func overclaims(t *cases.T) ([]*conformpb.DopplerCheckInput, []string) {
	var ins []*conformpb.DopplerCheckInput
	var why []string
	r := t.Rand()
	for i := range 200 {
		typ := dp.Types()[r.IntN(len(dp.Types()))]
		elem := typ.ElemSize()
		n := r.IntN(8)
		payload := make([]byte, n*elem)
		for j := range payload {
			payload[j] = byte(r.Uint32())
		}
		f, _ := dp.NewFrame(typ, dp.LittleEndian, payload)
		extra := uint64(1 + r.IntN(4))
		if i%2 == 0 {
			f.Header.NumSamples += extra
			f.Header.PayloadBytes += extra * uint64(elem)
			why = append(why, "payload_bytes and num_samples beyond the payload")
		} else {
			f.Header.NumSamples += extra
			why = append(why, "num_samples beyond payload_bytes")
		}
		ins = append(ins, &conformpb.DopplerCheckInput{Message: f.AppendMessage(nil, dp.LittleEndian)})
	}
	return ins, why
}
