package doppler

import (
	"fmt"
	"strings"
	"time"

	"github.com/conform-suite/conform/cases"
	"github.com/conform-suite/conform/corpus"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/proto/conform/v1/meaning"
	dp "github.com/conform-suite/conform/ref/doppler"
)

// describeEvents summarises what a receiver did, for a note.
func describeEvents(out *conformpb.DopplerReassembleOutput) string {
	var parts []string
	for _, e := range out.Events {
		switch {
		case e.GetDelivered() != nil:
			h := e.GetDelivered().GetHeader()
			parts = append(parts, fmt.Sprintf("message %d delivered frame %d (%d bytes)", e.Message, h.GetSequence(), h.GetPayloadBytes()))
		case e.GetRefused() != nil:
			r := e.GetRefused()
			parts = append(parts, fmt.Sprintf("message %d refused %s %s", e.Message, codeName(r.Code), verdictSlug(r.Verdict)))
		}
	}
	if out.Pending {
		parts = append(parts, fmt.Sprintf("frame %d still pending", out.PendingSequence))
	}
	if len(parts) == 0 {
		return "nothing delivered, nothing refused"
	}
	return strings.Join(parts, "; ")
}

// unchunkedCI16 is a little-endian CI16 frame of sequence seq.
func unchunkedCI16(seq uint64, o dp.Order) []byte {
	f, _ := dp.NewFrame(dp.TypeCI16, o, []byte{1, 2, 3, 4, 5, 6, 7, 8})
	f.Header.Sequence = seq
	return f.AppendMessage(nil, o)
}

// open holds the informational cases: what doppler §9 does not promise, the
// known gaps of §10, the unmeasured figures of §11, and the choices the
// sources leave to a receiver. Each records what the SUT did and never fails.
func open(k *cases.Kit, vs *vectors) []cases.Case {
	return []cases.Case{
		k.Info(func() cases.Case {
			v := vs.Get("data-rep-wrong")
			return cases.Case{
				ID:           "doppler/3/data-rep-not-decisive",
				Title:        "What a receiver does with a header whose data_rep names the other byte order (it does not decide by data_rep; the rest is open)",
				Spec:         "doppler-streaming §3",
				Requirements: []string{"reconstructed§doppler-header#6"},
				Run: func(t *cases.T) {
					out := check(t, little, []*conformpb.DopplerCheckInput{{Message: v.Message}})[0]
					t.Note("a little-endian header with data_rep \"IEEE\": verdict %s, code %s (the reference accepts it)", verdictSlug(out.Verdict), codeName(out.Code))
				},
			}
		}),
		k.Info(func() cases.Case {
			return cases.Case{
				ID:    "doppler/4/no-room-for-one-element",
				Title: "What a PUB does when max_payload leaves no room for one element after the header and chunk block (the reference refuses with DP_ERR_TOO_LARGE)",
				Spec:  "doppler-streaming §4",
				Run: func(t *cases.T) {
					f, _ := dp.NewFrame(dp.TypeCF64, dp.LittleEndian, make([]byte, 64))
					out := chunk(t, little, []*conformpb.DopplerChunkInput{chunkInput(f, 100)})[0]
					refused := "not refused"
					if out.Refused != nil {
						refused = "refused " + codeName(out.Refused.Code)
					}
					t.Note("a CF64 frame of 64 bytes at max_payload 100 (12 bytes of room for 16-byte samples): %d messages, %s", len(out.Messages), refused)
				},
			}
		}),
		k.Info(func() cases.Case {
			return cases.Case{
				ID:    "doppler/7/refused-send-consumes-a-number",
				Title: "Whether a frame PUSH refuses as too large consumes a sequence number (doppler §7 numbers logical frames; a refused one was never sent)",
				Spec:  "doppler-streaming §7, §4",
				Run: func(t *cases.T) {
					in := &conformpb.DopplerSequenceInput{MaxPayload: seqMaxPayload,
						Steps: []*conformpb.DopplerSendStep{step(1, push, 2), step(1, push, 10), step(1, push, 2)}}
					out := sequence(t, []*conformpb.DopplerSequenceInput{in})[0]
					t.Note("PUSH fits, too large, fits: sequences per step %v (the reference: [[0] [refused] [1]])", sentSequences(out))
				},
			}
		}),
		k.Info(func() cases.Case {
			return cases.Case{
				ID:    "doppler/9/no-cross-endian-conversion",
				Title: "What a receiver's reassembly does with a frame from a sender of the other byte order (§9: the magic detects it, nothing converts)",
				Spec:  "doppler-streaming §9, §3",
				Run: func(t *cases.T) {
					out := reassemble(t, little, []*conformpb.DopplerReassembleInput{{Messages: [][]byte{unchunkedCI16(0, dp.BigEndian)}}})[0]
					t.Note("a big-endian sender's CI16 frame at a little-endian receiver: %s", describeEvents(out))
				},
			}
		}),
		k.Info(func() cases.Case {
			return cases.Case{
				ID:           "doppler/9/redelivered-frame-not-deduplicated",
				Title:        "What a receiver does with a whole frame delivered twice (§9: no exactly-once; a consumer that must not double-count dedupes on (sender, sequence))",
				Spec:         "doppler-streaming §9",
				Requirements: []string{"doppler-streaming§9#2"},
				Run: func(t *cases.T) {
					m := unchunkedCI16(4, dp.LittleEndian)
					out := reassemble(t, little, []*conformpb.DopplerReassembleInput{{Messages: [][]byte{m, m}}})[0]
					t.Note("frame 4 twice: %s", describeEvents(out))
				},
			}
		}),
		k.Info(func() cases.Case {
			return cases.Case{
				ID:           "doppler/9/no-ordering-across-senders",
				Title:        "What a receiver does with unchunked frames whose sequences go backwards (§9: only a per-socket sequence, no global ordering)",
				Spec:         "doppler-streaming §9, §7",
				Requirements: []string{"doppler-streaming§9#1"},
				Run: func(t *cases.T) {
					var msgs [][]byte
					for _, seq := range []uint64{5, 3, 9, 0} {
						msgs = append(msgs, unchunkedCI16(seq, dp.LittleEndian))
					}
					out := reassemble(t, little, []*conformpb.DopplerReassembleInput{{Messages: msgs}})[0]
					t.Note("frames 5, 3, 9, 0: %s", describeEvents(out))
				},
			}
		}),
		k.Info(func() cases.Case {
			return cases.Case{
				ID:           "doppler/10/raw-bytes-face",
				Title:        "Whether the SUT writes, checks and chunks the raw-bytes face of REQ/REP (format \"SB\"), whose Python face is gap 3",
				Spec:         "doppler-streaming §10, §2",
				Requirements: []string{"doppler-streaming§2#5"},
				Run: func(t *cases.T) {
					enc := encodeHeader(t, []*conformpb.DopplerEncodeInput{{Type: conformpb.DopplerFrameType_DOPPLER_FRAME_TYPE_RAW, NumSamples: 5}})[0]
					msg := append(append([]byte(nil), enc.Header...), 'h', 'e', 'l', 'l', 'o')
					ck := check(t, little, []*conformpb.DopplerCheckInput{{Message: msg}})[0]
					f, _ := dp.NewFrame(dp.TypeRaw, dp.LittleEndian, make([]byte, 50))
					ch := chunk(t, little, []*conformpb.DopplerChunkInput{chunkInput(f, 100)})[0]
					t.Note("a 5-byte raw header: %s; checked as a message: %s; 50 raw bytes at max_payload 100: %d messages, refused %s",
						corpus.FormatHex(enc.Header), verdictSlug(ck.Verdict), len(ch.Messages), meaning.Render(ch.Refused))
				},
			}
		}),
		k.Info(func() cases.Case {
			return cases.Case{
				ID:           "doppler/11/header-check-throughput",
				Title:        "How long the SUT takes to check a batch of 256 messages, conform.v1 round trip included (§11: nothing on this layer is measured yet)",
				Spec:         "doppler-streaming §11",
				Requirements: []string{"doppler-streaming§11#1"},
				Run: func(t *cases.T) {
					var ins []*conformpb.DopplerCheckInput
					for i := range 256 {
						ins = append(ins, &conformpb.DopplerCheckInput{Message: unchunkedCI16(uint64(i), dp.LittleEndian)})
					}
					start := time.Now()
					outs := check(t, little, ins)
					d := time.Since(start)
					accepted := 0
					for _, o := range outs {
						if o.Verdict == conformpb.DopplerVerdict_DOPPLER_VERDICT_ACCEPTED {
							accepted++
						}
					}
					t.Note("256 messages checked in %v (%v a message, round trip included); %d accepted", d, d/256, accepted)
				},
			}
		}),
	}
}
