package doppler

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/conform-suite/conform/cases"
	"github.com/conform-suite/conform/corpus"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	dp "github.com/conform-suite/conform/ref/doppler"
	"github.com/conform-suite/conform/reports"
	"github.com/google/go-cmp/cmp"
)

// rfields selects what a reassembly case judges.
type rfields uint8

const (
	// rFrames judges the delivered frames, headers and payloads.
	rFrames rfields = 1 << iota
	// rHeaders judges the delivered frames' headers alone.
	rHeaders
	// rRefused judges whether a DP_ERR_INVALID refusal was reported, and
	// the verdict it must carry.
	rRefused
)

// frameView is a delivered frame rendered for comparison.
type frameView struct {
	Header  corpus.DopplerHeaderFields
	Payload string
}

// reassemblyView is what a receiver did with an input's messages.
type reassemblyView struct {
	Delivered []frameView
	// Refused is whether any refusal was reported; Codes are the codes of
	// the refusals that are not DP_ERR_INVALID; Verdict is the required
	// verdict when one of the refusals carried it.
	Refused bool
	Codes   []string
	Verdict string
}

func wantReassembly(v *corpus.DopplerVector, f rfields) reassemblyView {
	w := reassemblyView{Delivered: []frameView{}}
	for _, d := range v.Delivered {
		fv := frameView{Header: d.Header}
		if f&rFrames != 0 {
			fv.Payload = expectedPayloadText(d.Payload)
		}
		w.Delivered = append(w.Delivered, fv)
	}
	if f&rRefused != 0 && v.Refused != nil {
		w.Refused = *v.Refused
		w.Verdict = v.RefusedVerdict
	}
	if f&(rFrames|rHeaders) == 0 {
		w.Delivered = nil
	}
	return w
}

func gotReassembly(v *corpus.DopplerVector, out *conformpb.DopplerReassembleOutput, f rfields) reassemblyView {
	g := reassemblyView{Delivered: []frameView{}}
	for _, e := range out.Events {
		if d := e.GetDelivered(); d != nil {
			fv := frameView{}
			if h := headerFields(d.Header); h != nil {
				fv.Header = *h
			}
			if f&rFrames != 0 {
				fv.Payload = payloadText(d.Payload)
			}
			g.Delivered = append(g.Delivered, fv)
		}
		if r := e.GetRefused(); r != nil {
			g.Refused = true
			if r.Code != int32(dp.ErrInvalid) {
				g.Codes = append(g.Codes, codeName(r.Code))
			}
			if v.RefusedVerdict != "" && verdictSlug(r.Verdict) == v.RefusedVerdict {
				g.Verdict = v.RefusedVerdict
			}
		}
	}
	if f&rRefused == 0 || v.Refused == nil {
		g.Refused, g.Codes, g.Verdict = false, nil, ""
	} else if !*v.Refused {
		g.Codes = nil
	}
	if f&(rFrames|rHeaders) == 0 {
		g.Delivered = nil
	}
	return g
}

func (r reassemblyView) String() string {
	var parts []string
	if r.Delivered != nil {
		if len(r.Delivered) == 0 {
			parts = append(parts, "no frame delivered")
		}
		for _, d := range r.Delivered {
			s := fmt.Sprintf("frame %+v", d.Header)
			if d.Payload != "" {
				s += " payload " + d.Payload
			}
			parts = append(parts, s)
		}
	}
	if r.Refused {
		s := "a DP_ERR_INVALID refusal"
		if r.Verdict != "" {
			s += " with verdict " + r.Verdict
		}
		if len(r.Codes) > 0 {
			s += fmt.Sprintf(" (and refusals coded %s)", strings.Join(r.Codes, ", "))
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "; ")
}

// reassembleVectors feeds every vector's messages to a fresh receiver of the
// SUT's and judges the fields f.
func reassembleVectors(t *cases.T, what string, f rfields, vs ...*corpus.DopplerVector) {
	for _, o := range []conformpb.DopplerByteOrder{little, big} {
		var ins []*conformpb.DopplerReassembleInput
		var sel []*corpus.DopplerVector
		for _, v := range vs {
			if orderOf(v) == o {
				ins = append(ins, &conformpb.DopplerReassembleInput{Messages: hexes(v.Messages)})
				sel = append(sel, v)
			}
		}
		if len(ins) == 0 {
			continue
		}
		for i, out := range reassemble(t, o, ins) {
			w, g := wantReassembly(sel[i], f), gotReassembly(sel[i], out, f)
			if !cmp.Equal(w, g) {
				t.Fail(reports.Evidence{Message: what + ": " + sel[i].Title,
					Input:    orderName(o) + " receiver\n" + describeMessages(ins[i].Messages),
					Expected: w.String(), Got: g.String(), Diff: cmp.Diff(w, g)})
			}
		}
	}
}

// genFrame generates a frame of a random type whose payload needs several
// chunks at a random max_payload, in byte order o.
func genFrame(r *rand.Rand, seq uint64, o dp.Order) (dp.Frame, int) {
	typ := dp.Types()[r.IntN(len(dp.Types()))]
	elem := typ.ElemSize()
	maxPayload := dp.HeaderSize + dp.ChunkBlockSize + elem*(1+r.IntN(6)) + r.IntN(elem)
	n := (maxPayload-dp.HeaderSize)/elem + 1 + r.IntN(5*((maxPayload-dp.HeaderSize-dp.ChunkBlockSize)/elem+1))
	if r.IntN(5) == 0 {
		n = r.IntN((maxPayload-dp.HeaderSize)/elem + 1) // one that fits
	}
	payload := make([]byte, n*elem)
	for i := range payload {
		payload[i] = byte(r.Uint32())
	}
	f, _ := dp.NewFrame(typ, o, payload)
	f.Header.Sequence = seq
	f.Header.TimestampNs = 1_700_000_000_000_000_000 + r.Uint64N(1<<40)
	f.Header.SampleRateHz = float64(1 + r.IntN(1000)*1000)
	return f, maxPayload
}

// frameExpect is a generated frame as the receiver must deliver it.
func frameExpect(f dp.Frame) corpus.DopplerFrameExpect {
	return corpus.DopplerFrameExpect{Header: *refHeaderFields(f.Header), Payload: f.Payload}
}

// reassembly is doppler §4 from the receiver's side.
func (s *suite) reassembly() []cases.Case {
	S := "doppler-streaming §4; RECONSTRUCTED §3"
	vcase := func(level func(cases.Case) cases.Case, id, title string, f rfields, names ...string) cases.Case {
		return reconstructed(level(cases.Case{ID: id, Title: title, Spec: S, Vectors: ids(names...),
			Run: func(t *cases.T) { reassembleVectors(t, title, f, s.vecs(names...)...) }}))
	}
	return []cases.Case{
		vcase(must, "doppler/4/chunks-reassembled-in-order",
			"A chunked frame's messages, in order, are handed over as one clean logical frame with the payload as sent",
			rFrames|rRefused, "chunks-in-order", "chunks-two-frames", "chunk-telemetry", "chunk-unaligned-room", "chunk-one-byte-over"),
		vcase(must, "doppler/4/unchunked-frame-delivered-as-is",
			"An unchunked message is handed over as it stands",
			rFrames|rRefused, "unchunked-frames", "chunk-fits-exactly"),
		vcase(must, "doppler/4/delivered-frame-carries-totals",
			"The frame handed over has DP_FLAG_CHUNKED cleared and num_samples and payload_bytes set to the frame's totals, the rest of its header as sent",
			rHeaders, "chunks-in-order", "chunks-reordered", "chunk-telemetry"),
		vcase(must, "doppler/4/reordered-chunks-reassembled",
			"Chunks arriving out of order complete the frame once chunk_count distinct indices have arrived",
			rFrames|rRefused, "chunks-reordered"),
		vcase(must, "doppler/4/repeated-index-is-a-no-op",
			"A repeat of a chunk index already seen is a no-op, so redelivery is harmless: one frame, as sent, and no error",
			rFrames|rRefused, "chunks-duplicated-index", "chunk-redelivered-after-frame"),
		vcase(must, "doppler/4/lost-chunk-loses-its-frame",
			"A frame with a chunk missing is never handed over: a lost chunk loses its frame, not just its own bytes",
			rFrames, "chunks-missing"),
		vcase(should, "doppler/4/lost-chunk-spares-the-next-frame",
			"After a frame lost to a missing chunk, the next frame is still reassembled and handed over",
			rFrames, "chunks-missing-then-next"),
		vcase(must, "doppler/4/other-sequence-drops-the-frame",
			"A chunk of another sequence arriving mid-frame (a second publisher) fails the sequence check: the frame is dropped with DP_ERR_INVALID",
			rFrames|rRefused, "chunks-interleaved-publisher"),
		vcase(must, "doppler/4/count-disagreement-refused",
			"A chunk that disagrees with its frame on chunk_count is refused with DP_ERR_INVALID and the frame is not handed over",
			rFrames|rRefused, "chunks-count-disagreement"),
		vcase(must, "doppler/4/chunk-must-pass-header-check",
			"A chunk is accepted only if it passes every check of §3: one that fails is refused with that check's verdict, and its frame is not handed over",
			rFrames|rRefused, "chunk-fails-header-check"),
		reconstructed(must(cases.Case{
			ID:    "doppler/4/reassembly-whatever-the-arrival",
			Title: "Generated frames, chunked as RECONSTRUCTED §3 cuts them and delivered in any order with repeats, are each handed over once, as sent",
			Spec:  S,
			Run: func(t *cases.T) {
				r := t.Rand()
				var ins []*conformpb.DopplerReassembleInput
				var vs []*corpus.DopplerVector
				for i := range 40 {
					f, maxPayload := genFrame(r, uint64(i), dp.LittleEndian)
					msgs, err := dp.Chunk(f, maxPayload, dp.LittleEndian)
					if err != nil {
						t.Protocolf("generating chunks: %v", err)
					}
					r.Shuffle(len(msgs), func(a, b int) { msgs[a], msgs[b] = msgs[b], msgs[a] })
					// Repeats only of chunks: a whole frame delivered twice is
					// two deliveries (doppler §9), not a no-op.
					for k := r.IntN(3); k > 0 && len(msgs) > 1; k-- {
						j := r.IntN(len(msgs))
						msgs = append(msgs[:j+1], append([][]byte{msgs[j]}, msgs[j+1:]...)...)
					}
					no := false
					typ, _ := dp.TypeOf(f.Header.Kind, f.Header.Format)
					v := &corpus.DopplerVector{Refused: &no, Title: fmt.Sprintf("%v frame %d of %d bytes at max_payload %d, %d messages shuffled with repeats",
						typ, i, len(f.Payload), maxPayload, len(msgs))}
					for _, m := range msgs {
						v.Messages = append(v.Messages, m)
					}
					v.Delivered = []corpus.DopplerFrameExpect{frameExpect(f)}
					ins = append(ins, &conformpb.DopplerReassembleInput{Messages: msgs})
					vs = append(vs, v)
				}
				failed := 0
				for i, out := range reassemble(t, little, ins) {
					w, g := wantReassembly(vs[i], rFrames|rRefused), gotReassembly(vs[i], out, rFrames|rRefused)
					if cmp.Equal(w, g) {
						continue
					}
					if failed++; failed <= 3 {
						t.Fail(reports.Evidence{Message: "a generated frame: " + vs[i].Title,
							Input:    "little-endian receiver\n" + describeMessages(ins[i].Messages),
							Expected: w.String(), Got: g.String(), Diff: cmp.Diff(w, g)})
					}
				}
				if failed > 3 {
					t.Failf("%d more of %d generated frames were not reassembled as sent", failed-3, len(ins))
				}
			},
		})),
	}
}
