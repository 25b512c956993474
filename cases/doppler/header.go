package doppler

import (
	"fmt"

	"github.com/conform-suite/conform/cases"
	"github.com/conform-suite/conform/corpus"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/proto/conform/v1/meaning"
	dp "github.com/conform-suite/conform/ref/doppler"
	"github.com/conform-suite/conform/reports"
	"github.com/conform-suite/conform/reports/evidence"
)

// wantCheck is the answer a receiver's header check gives for a vector's
// message: its verdict, DP_OK or DP_ERR_INVALID, and, for an accepted
// message, the header and chunk block as decoded.
func wantCheck(v *corpus.DopplerVector) *conformpb.DopplerCheckOutput {
	w := &conformpb.DopplerCheckOutput{Verdict: verdictOf(v.Verdict), Code: int32(dp.ErrInvalid)}
	if v.Verdict == "accepted" {
		w.Code = int32(dp.OK)
		w.Header = pbHeader(v.Header)
		if c := v.ChunkBlock; c != nil {
			w.Chunk = &conformpb.DopplerChunkBlock{ChunkIndex: c.ChunkIndex, ChunkCount: c.ChunkCount, TotalSamples: c.TotalSamples, TotalBytes: c.TotalBytes}
		}
	}
	return w
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
			// A refusal's header is not judged, nor a chunk block a header
			// without CHUNKED does not have: the declaration of meaning
			// says when each is defined.
			t.CheckAnswer(what+": "+sel[i].Title, describeCheckInput(sel[i]), ins[i], wantCheck(sel[i]), out, meaning.MUST)
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
func header(k *cases.Kit, vs *vectors) []cases.Case {
	return []cases.Case{
		k.Must(func() cases.Case {
			v := vs.List("valid-ci8-le", "valid-ci16-le", "valid-ci32-le", "valid-cf32-le", "valid-cf64-le")
			return cases.Case{
				ID:           "doppler/3/sample-formats-accepted",
				Title:        "A frame of each of the five BLUE sample formats (CB, CI, CL, CF, CD) is accepted and its header read field by field",
				Spec:         "doppler-streaming §3",
				Requirements: []string{"doppler-streaming§3#16", "reconstructed§doppler-header#1", "reconstructed§doppler-formats#1"},
				Run:          func(t *cases.T) { checkVectors(t, "the header check", v...) },
			}
		}),
		k.Must(func() cases.Case {
			v := vs.Get("valid-raw-le")
			return cases.Case{
				ID:           "doppler/3/raw-bytes-face-accepted",
				Title:        "A raw-bytes frame (kind IQ, format \"SB\", 1-byte elements, num_samples the byte count) is accepted",
				Spec:         "doppler-streaming §3, §2",
				Requirements: []string{"doppler-streaming§2#3", "reconstructed§doppler-formats#2"},
				Run:          func(t *cases.T) { checkVectors(t, "the header check", v) },
			}
		}),
		k.Must(func() cases.Case {
			v := vs.Get("valid-tlm-le")
			return cases.Case{
				ID:           "doppler/3/telemetry-frame-accepted",
				Title:        "A telemetry frame (kind TLM = 1, format 0, num_samples counting 16-byte records) is accepted",
				Spec:         "doppler-streaming §3",
				Requirements: []string{"doppler-streaming§3#19", "reconstructed§doppler-header#5", "reconstructed§doppler-formats#3"},
				Run:          func(t *cases.T) { checkVectors(t, "the header check", v) },
			}
		}),
		k.Must(func() cases.Case {
			v := vs.List("valid-ci8-be", "valid-ci16-be", "valid-ci32-be", "valid-cf32-be", "valid-cf64-be", "valid-raw-be", "valid-tlm-be")
			return cases.Case{
				ID:           "doppler/3/own-order-accepted-big-endian",
				Title:        "A big-endian receiver accepts a big-endian sender's frames of every type and reads their fields",
				Spec:         "doppler-streaming §3",
				Requirements: []string{"doppler-streaming§3#5", "reconstructed§doppler-header#1"},
				Run:          func(t *cases.T) { checkVectors(t, "the header check", v...) },
			}
		}),
		k.Must(func() cases.Case {
			v := vs.List("cross-endian-big-sender", "cross-endian-little-sender")
			return cases.Case{
				ID:           "doppler/3/cross-endian-magic",
				Title:        "A magic that matches byte-swapped is refused as cross-endian, in either direction, not as \"not doppler\"",
				Spec:         "doppler-streaming §3, §9",
				Requirements: []string{"doppler-streaming§3#7", "doppler-streaming§3#10", "doppler-streaming§9#3", "reconstructed§doppler-header#2", "reconstructed§doppler-checks#5"},
				Run:          func(t *cases.T) { checkVectors(t, "the header check", v...) },
			}
		}),
		k.Must(func() cases.Case {
			v := vs.Get("not-doppler")
			return cases.Case{
				ID:           "doppler/3/not-doppler-magic",
				Title:        "A magic that matches in neither byte order is refused as not doppler, not as cross-endian",
				Spec:         "doppler-streaming §3",
				Requirements: []string{"doppler-streaming§3#10", "reconstructed§doppler-header#2", "reconstructed§doppler-checks#5"},
				Run:          func(t *cases.T) { checkVectors(t, "the header check", v) },
			}
		}),
		k.Must(func() cases.Case {
			v := vs.List("other-major-1", "other-major-3")
			return cases.Case{
				ID:           "doppler/3/other-major-refused",
				Title:        "A different major version (1, 3) is refused, not guessed at",
				Spec:         "doppler-streaming §3",
				Requirements: []string{"doppler-streaming§3#11", "reconstructed§doppler-header#3"},
				Run:          func(t *cases.T) { checkVectors(t, "the header check", v...) },
			}
		}),
		k.Must(func() cases.Case {
			v := vs.Get("any-minor-version")
			return cases.Case{
				ID:           "doppler/3/any-minor-accepted",
				Title:        "Any minor version is accepted under major version 2",
				Spec:         "doppler-streaming §3",
				Requirements: []string{"reconstructed§doppler-header#3"},
				Run:          func(t *cases.T) { checkVectors(t, "the header check", v) },
			}
		}),
		k.Must(func() cases.Case {
			v := vs.List("unknown-flag", "unknown-flag-high")
			return cases.Case{
				ID:           "doppler/3/unknown-flag-refused",
				Title:        "A flag bit outside DP_FLAG_KNOWN is refused, because an unknown block would move where the payload starts",
				Spec:         "doppler-streaming §3, §9",
				Requirements: []string{"doppler-streaming§3#12", "doppler-streaming§9#4", "reconstructed§doppler-header#4"},
				Run:          func(t *cases.T) { checkVectors(t, "the header check", v...) },
			}
		}),
		k.Must(func() cases.Case {
			v := vs.List("payload-claims-more", "payload-claims-less", "payload-counts-chunk-block")
			return cases.Case{
				ID:           "doppler/3/payload-bytes-against-transport",
				Title:        "payload_bytes must equal the message length the transport reports, less the header (and the chunk block when CHUNKED)",
				Spec:         "doppler-streaming §3",
				Requirements: []string{"doppler-streaming§3#13", "reconstructed§doppler-chunk#3"},
				Run:          func(t *cases.T) { checkVectors(t, "the header check", v...) },
			}
		}),
		k.Must(func() cases.Case {
			v := vs.List("transport-length-consistent", "transport-length-short")
			return cases.Case{
				ID:           "doppler/3/transport-length-is-the-truth",
				Title:        "The receiver judges by the length the transport reports, not by the header's claim: a header given alone is accepted or refused by that length",
				Spec:         "doppler-streaming §3",
				Requirements: []string{"doppler-streaming§3#13", "reconstructed§doppler-checks#4"},
				Run:          func(t *cases.T) { checkVectors(t, "the header check", v...) },
			}
		}),
		k.Must(func() cases.Case {
			v := vs.Get("count-mismatch")
			return cases.Case{
				ID:           "doppler/3/count-against-length",
				Title:        "num_samples × element size must equal the payload: a count that disagrees is refused",
				Spec:         "doppler-streaming §3",
				Requirements: []string{"doppler-streaming§3#14", "reconstructed§doppler-formats#1"},
				Run:          func(t *cases.T) { checkVectors(t, "the header check", v) },
			}
		}),
		k.Must(func() cases.Case {
			v := vs.Get("count-overflow")
			return cases.Case{
				ID:           "doppler/3/count-overflow-is-mismatch",
				Title:        "num_samples × element size is computed without overflow: a product that wraps to the payload length is a mismatch",
				Spec:         "doppler-streaming §3",
				Requirements: []string{"doppler-streaming§3#14", "reconstructed§doppler-checks#3"},
				Run:          func(t *cases.T) { checkVectors(t, "the header check", v) },
			}
		}),
		k.Must(func() cases.Case {
			v := vs.Get("unknown-kind")
			return cases.Case{
				ID:           "doppler/3/unknown-kind-refused",
				Title:        "A kind other than IQ (0) and TLM (1) is refused",
				Spec:         "doppler-streaming §3",
				Requirements: []string{"reconstructed§doppler-header#5"},
				Run:          func(t *cases.T) { checkVectors(t, "the header check", v) },
			}
		}),
		k.Must(func() cases.Case {
			v := vs.List("unknown-format", "iq-format-zero")
			return cases.Case{
				ID:           "doppler/3/unknown-format-refused",
				Title:        "An IQ frame whose format is none of the five BLUE sample codes or \"SB\" (including 0) is refused",
				Spec:         "doppler-streaming §3",
				Requirements: []string{"doppler-streaming§3#18", "doppler-streaming§3#21", "reconstructed§doppler-formats#4"},
				Run:          func(t *cases.T) { checkVectors(t, "the header check", v...) },
			}
		}),
		k.Must(func() cases.Case {
			v := vs.Get("tlm-format-not-zero")
			return cases.Case{
				ID:           "doppler/3/telemetry-format-is-zero",
				Title:        "A telemetry frame whose format is not 0 is refused: format stays purely a BLUE sample code",
				Spec:         "doppler-streaming §3",
				Requirements: []string{"doppler-streaming§3#21", "reconstructed§doppler-formats#4"},
				Run:          func(t *cases.T) { checkVectors(t, "the header check", v) },
			}
		}),
		k.Must(func() cases.Case {
			v := vs.List("first-refusal-wins", "flags-before-payload", "payload-before-count")
			return cases.Case{
				ID:           "doppler/3/checks-in-order",
				Title:        "The checks run in order — magic, version, flags, payload_bytes, kind/format/count — and the first refusal is the verdict",
				Spec:         "doppler-streaming §3",
				Requirements: []string{"doppler-streaming§3#9", "reconstructed§doppler-checks#1", "reconstructed§doppler-checks#5"},
				Run:          func(t *cases.T) { checkVectors(t, "the header check", v...) },
			}
		}),
		k.Must(func() cases.Case {
			v := vs.List("short-message", "empty-message")
			return cases.Case{
				ID:           "doppler/3/short-message-refused",
				Title:        "A message shorter than the 64-byte header, the empty one included, is refused as short",
				Spec:         "doppler-streaming §3",
				Requirements: []string{"reconstructed§doppler-checks#2", "reconstructed§contradictions#2"},
				Run:          func(t *cases.T) { checkVectors(t, "the header check", v...) },
			}
		}),
		k.Must(func() cases.Case {
			v := vs.Get("short-chunk-block")
			return cases.Case{
				ID:           "doppler/3/short-chunk-block-refused",
				Title:        "A CHUNKED message too short to hold the 24-byte chunk block is refused",
				Spec:         "doppler-streaming §3, §4",
				Requirements: []string{"doppler-streaming§3#1", "reconstructed§doppler-checks#2"},
				Run:          func(t *cases.T) { checkVectors(t, "the header check", v) },
			}
		}),
		k.Must(func() cases.Case {
			refusals := vs.List(refusalVectors()...)
			return cases.Case{
				ID:           "doppler/3/every-refusal-is-dp-err-invalid",
				Title:        "Every refusal of the header check is DP_ERR_INVALID (-2), whichever check refused",
				Spec:         "doppler-streaming §3",
				Requirements: []string{"doppler-streaming§3#9", "reconstructed§doppler-checks#1", "reconstructed§doppler-errors#1"},
				Run: func(t *cases.T) {
					for _, o := range []conformpb.DopplerByteOrder{little, big} {
						var ins []*conformpb.DopplerCheckInput
						var sel []*corpus.DopplerVector
						for _, v := range refusals {
							if orderOf(v) == o {
								ins = append(ins, &conformpb.DopplerCheckInput{Message: v.Message, TransportLength: v.TransportLength})
								sel = append(sel, v)
							}
						}
						for i, out := range check(t, o, ins) {
							// The code of any refusal: which check refused is
							// the other cases' to judge.
							want := &conformpb.DopplerCheckOutput{Verdict: out.Verdict, Code: int32(dp.ErrInvalid)}
							if out.Verdict == conformpb.DopplerVerdict_DOPPLER_VERDICT_ACCEPTED {
								want.Verdict = verdictOf(sel[i].Verdict)
							}
							t.CheckAnswer("a refused message's code: "+sel[i].Title, describeCheckInput(sel[i]), ins[i], want, out, meaning.MUST, "verdict", "code")
						}
					}
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "doppler/3/claims-beyond-the-message-refused",
				Title:        "No header whose payload_bytes or num_samples claims more than the message carries is ever accepted (generated headers)",
				Spec:         "doppler-streaming §3",
				Requirements: []string{"doppler-streaming§3#15"},
				Run: func(t *cases.T) {
					ins, why := overclaims(t)
					for i, out := range check(t, little, ins) {
						if out.Verdict == conformpb.DopplerVerdict_DOPPLER_VERDICT_ACCEPTED {
							t.Fail(reports.Evidence{Message: "a header claiming " + why[i] + " was accepted",
								Input:    "little-endian receiver, message " + corpus.FormatHex(ins[i].Message),
								Expected: "refused (payload-mismatch or count-mismatch)", Got: "accepted",
								Diff: evidence.Format(evidence.DiffAt("verdict", "DOPPLER_VERDICT_PAYLOAD_MISMATCH or DOPPLER_VERDICT_COUNT_MISMATCH", out.Verdict.String()))})
							if len(t.Evidence()) >= 3 {
								return
							}
						}
					}
				},
			}
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
