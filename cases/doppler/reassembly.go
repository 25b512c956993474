package doppler

import (
	"crypto/sha256"
	"fmt"
	"math/rand/v2"

	"github.com/conform-suite/conform/cases"
	"github.com/conform-suite/conform/corpus"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	dp "github.com/conform-suite/conform/ref/doppler"
	"github.com/conform-suite/conform/reports/evidence"
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

// frameView is a delivered frame as the reassembly cases compare it: its
// header and, where a case judges it, its payload, as conform.v1 carries
// them.
type frameView struct {
	Header  *conformpb.DopplerHeader  `json:"header"`
	Payload *conformpb.DopplerPayload `json:"payload,omitempty"`
}

// reassemblyView is what a receiver did with an input's messages, as the
// reassembly cases compare it: the frames of its events' delivered, in
// order; whether any event was refused; the codes of refusals other than
// DP_ERR_INVALID; and the verdict a refusal was required to carry, when one
// carried it.
type reassemblyView struct {
	Delivered  []frameView `json:"delivered"`
	Refused    bool        `json:"refused"`
	OtherCodes []string    `json:"otherCodes,omitempty"`
	Verdict    string      `json:"verdict,omitempty"`
}

// payloadOf is the DopplerPayload a conforming receiver reports for bytes
// b: their length, and the bytes up to 1 MiB or their SHA-256 above.
func payloadOf(b []byte) *conformpb.DopplerPayload {
	p := &conformpb.DopplerPayload{Length: uint64(len(b))}
	if len(b) <= 1<<20 {
		p.Bytes = b
	} else {
		sum := sha256.Sum256(b)
		p.Sha256 = sum[:]
	}
	return p
}

func wantReassembly(v *corpus.DopplerVector, f rfields) reassemblyView {
	w := reassemblyView{Delivered: []frameView{}}
	for _, d := range v.Delivered {
		fv := frameView{Header: pbHeader(&d.Header)}
		if f&rFrames != 0 {
			fv.Payload = payloadOf(d.Payload)
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
	for _, e := range out.GetEvents() {
		if d := e.GetDelivered(); d != nil {
			fv := frameView{Header: d.GetHeader()}
			if fv.Header == nil {
				fv.Header = &conformpb.DopplerHeader{}
			}
			if f&rFrames != 0 {
				fv.Payload = d.GetPayload()
				if fv.Payload == nil {
					fv.Payload = &conformpb.DopplerPayload{}
				}
			}
			g.Delivered = append(g.Delivered, fv)
		}
		if r := e.GetRefused(); r != nil {
			g.Refused = true
			if r.GetCode() != int32(dp.ErrInvalid) {
				g.OtherCodes = append(g.OtherCodes, codeName(r.GetCode()))
			}
			if v.RefusedVerdict != "" && verdictSlug(r.GetVerdict()) == v.RefusedVerdict {
				g.Verdict = v.RefusedVerdict
			}
		}
	}
	if f&rRefused == 0 || v.Refused == nil {
		g.Refused, g.OtherCodes, g.Verdict = false, nil, ""
	} else if !*v.Refused {
		g.OtherCodes = nil
	}
	if f&(rFrames|rHeaders) == 0 {
		g.Delivered = nil
	}
	return g
}

// checkReassembly records a failure when what a receiver did with a
// vector's messages differs from the vector's expectation, in the fields f.
func checkReassembly(t *cases.T, what, input string, v *corpus.DopplerVector, out *conformpb.DopplerReassembleOutput, f rfields) bool {
	return t.FailCompare(what+" (the frames of events[].delivered in order, and whether any event was refused)", input,
		wantReassembly(v, f), gotReassembly(v, out, f))
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
			checkReassembly(t, what+": "+sel[i].Title, orderName(o)+" receiver\n"+describeMessages(ins[i].Messages), sel[i], out, f)
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
func reassembly(k *cases.Kit, vs *vectors) []cases.Case {
	return []cases.Case{
		k.Must(func() cases.Case {
			v := vs.List("chunks-in-order", "chunks-two-frames", "chunk-telemetry", "chunk-unaligned-room", "chunk-one-byte-over")
			return cases.Case{
				ID:           "doppler/4/chunks-reassembled-in-order",
				Title:        "A chunked frame's messages, in order, are handed over as one clean logical frame with the payload as sent",
				Spec:         "doppler-streaming §4",
				Requirements: []string{"doppler-streaming§4#13", "doppler-streaming§4#14", "reconstructed§doppler-chunk#6"},
				Run:          func(t *cases.T) { reassembleVectors(t, "reassembly", rFrames|rRefused, v...) },
			}
		}),
		k.Must(func() cases.Case {
			v := vs.List("chunks-in-order-be", "chunks-reordered-be")
			return cases.Case{
				ID:           "doppler/4/big-endian-chunks-reassembled",
				Title:        "A big-endian receiver reassembles a big-endian sender's chunks, reading each chunk block in big-endian order, in order and out of it",
				Spec:         "doppler-streaming §4, §3",
				Requirements: []string{"doppler-streaming§3#5", "doppler-streaming§4#13", "reconstructed§doppler-chunk#2"},
				Run:          func(t *cases.T) { reassembleVectors(t, "big-endian reassembly", rFrames|rRefused, v...) },
			}
		}),
		k.Must(func() cases.Case {
			v := vs.List("unchunked-frames", "chunk-fits-exactly")
			return cases.Case{
				ID:           "doppler/4/unchunked-frame-delivered-as-is",
				Title:        "An unchunked message is handed over as it stands",
				Spec:         "doppler-streaming §4",
				Requirements: []string{"doppler-streaming§4#5"},
				Run:          func(t *cases.T) { reassembleVectors(t, "reassembly", rFrames|rRefused, v...) },
			}
		}),
		k.Must(func() cases.Case {
			v := vs.List("chunks-in-order", "chunks-reordered", "chunk-telemetry")
			return cases.Case{
				ID:           "doppler/4/delivered-frame-carries-totals",
				Title:        "The frame handed over has DP_FLAG_CHUNKED cleared and num_samples and payload_bytes set to the frame's totals, the rest of its header as sent",
				Spec:         "doppler-streaming §4",
				Requirements: []string{"doppler-streaming§4#13"},
				Run:          func(t *cases.T) { reassembleVectors(t, "the delivered header", rHeaders, v...) },
			}
		}),
		k.Must(func() cases.Case {
			v := vs.Get("chunks-reordered")
			return cases.Case{
				ID:           "doppler/4/reordered-chunks-reassembled",
				Title:        "Chunks arriving out of order complete the frame once chunk_count distinct indices have arrived",
				Spec:         "doppler-streaming §4",
				Requirements: []string{"doppler-streaming§4#13", "reconstructed§doppler-chunk#6"},
				Run:          func(t *cases.T) { reassembleVectors(t, "reassembly", rFrames|rRefused, v) },
			}
		}),
		k.Must(func() cases.Case {
			v := vs.List("chunks-duplicated-index", "chunk-redelivered-after-frame")
			return cases.Case{
				ID:           "doppler/4/repeated-index-is-a-no-op",
				Title:        "A repeat of a chunk index already seen is a no-op, so redelivery is harmless: one frame, as sent, and no error",
				Spec:         "doppler-streaming §4",
				Requirements: []string{"doppler-streaming§4#11", "reconstructed§doppler-chunk#6"},
				Run:          func(t *cases.T) { reassembleVectors(t, "reassembly", rFrames|rRefused, v...) },
			}
		}),
		k.Must(func() cases.Case {
			v := vs.Get("chunks-repeat-at-64")
			return cases.Case{
				ID:           "doppler/4/repeat-at-index-64-and-beyond",
				Title:        "A repeat is a no-op at every index a frame can have: a frame of 130 chunks with chunks 0, 63, 64, 127, 128 and 129 each repeated is handed over once, as sent, with no error",
				Spec:         "doppler-streaming §4",
				Requirements: []string{"doppler-streaming§4#11", "doppler-streaming§4#12"},
				Run:          func(t *cases.T) { reassembleVectors(t, "reassembly", rFrames|rRefused, v) },
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "doppler/4/repeats-at-every-index",
				Title:        "Generated frames of 65 to 300 one-sample chunks, every index delivered twice in a shuffled order, are each handed over once, as sent, with no error",
				Spec:         "doppler-streaming §4",
				Requirements: []string{"doppler-streaming§4#11", "doppler-streaming§4#12"},
				Run:          func(t *cases.T) { repeatsEverywhere(t) },
			}
		}),
		k.Must(func() cases.Case {
			v := vs.Get("chunks-missing")
			return cases.Case{
				ID:           "doppler/4/lost-chunk-loses-its-frame",
				Title:        "A frame with a chunk missing is never handed over: a lost chunk loses its frame, not just its own bytes",
				Spec:         "doppler-streaming §4",
				Requirements: []string{"doppler-streaming§4#16"},
				Run:          func(t *cases.T) { reassembleVectors(t, "reassembly", rFrames, v) },
			}
		}),
		k.Must(func() cases.Case {
			v := vs.Get("chunks-missing-then-next")
			return cases.Case{
				ID:           "doppler/4/lost-chunk-spares-the-next-frame",
				Title:        "After a frame lost to a missing chunk, the next frame is still reassembled and handed over: a lost chunk loses its own frame, not the next",
				Spec:         "doppler-streaming §4",
				Requirements: []string{"doppler-streaming§4#17"},
				Run:          func(t *cases.T) { reassembleVectors(t, "reassembly", rFrames, v) },
			}
		}),
		k.Must(func() cases.Case {
			v := vs.Get("chunks-interleaved-publisher")
			return cases.Case{
				ID:           "doppler/4/other-sequence-drops-the-frame",
				Title:        "A chunk of another sequence arriving mid-frame (a second publisher) fails the sequence check: the frame is dropped with DP_ERR_INVALID",
				Spec:         "doppler-streaming §4",
				Requirements: []string{"doppler-streaming§4#9", "doppler-streaming§4#15"},
				Run:          func(t *cases.T) { reassembleVectors(t, "reassembly", rFrames|rRefused, v) },
			}
		}),
		k.Must(func() cases.Case {
			v := vs.List("chunks-unchunked-mid-frame", "chunks-unchunked-mid-frame-be")
			return cases.Case{
				ID:           "doppler/4/unchunked-message-drops-the-frame",
				Title:        "Reassembly takes a message as a chunk only when it carries DP_FLAG_CHUNKED: an unchunked frame arriving mid-frame is handed over as it stands and drops the frame in progress with DP_ERR_INVALID, whose later chunks never complete it",
				Spec:         "doppler-streaming §4",
				Requirements: []string{"doppler-streaming§4#8"},
				Run:          func(t *cases.T) { reassembleVectors(t, "reassembly", rFrames|rRefused, v...) },
			}
		}),
		k.Must(func() cases.Case {
			v := vs.Get("chunks-count-disagreement")
			return cases.Case{
				ID:           "doppler/4/count-disagreement-refused",
				Title:        "A chunk that disagrees with its frame on chunk_count is refused with DP_ERR_INVALID and the frame is not handed over",
				Spec:         "doppler-streaming §4",
				Requirements: []string{"doppler-streaming§4#10"},
				Run:          func(t *cases.T) { reassembleVectors(t, "reassembly", rFrames|rRefused, v) },
			}
		}),
		k.Must(func() cases.Case {
			v := vs.Get("chunk-totals-overflow")
			return cases.Case{
				ID:           "doppler/4/totals-overflow-refused",
				Title:        "Reassembly computes total_samples × element size without overflow: chunks whose totals wrap to total_bytes in 64 bits are refused with DP_ERR_INVALID, although each passes the header check",
				Spec:         "doppler-streaming §4",
				Requirements: []string{"reconstructed§doppler-chunk#7"},
				Run:          func(t *cases.T) { reassembleVectors(t, "reassembly", rFrames|rRefused, v) },
			}
		}),
		k.Must(func() cases.Case {
			v := vs.List("chunk-count-zero", "chunk-index-beyond-count", "chunk-sizes-off-the-split")
			return cases.Case{
				ID:           "doppler/4/malformed-chunk-block-refused",
				Title:        "Reassembly refuses, with DP_ERR_INVALID, a chunk_count of 0, a chunk_index not below chunk_count, and a chunk that breaks the element-aligned split of total_bytes; nothing is handed over",
				Spec:         "doppler-streaming §4",
				Requirements: []string{"reconstructed§doppler-chunk#8"},
				Run:          func(t *cases.T) { reassembleVectors(t, "reassembly", rFrames|rRefused, v...) },
			}
		}),
		k.Must(func() cases.Case {
			v := vs.Get("chunk-fails-header-check")
			return cases.Case{
				ID:           "doppler/4/chunk-must-pass-header-check",
				Title:        "A chunk is accepted only if it passes every check of §3: one that fails is refused with that check's verdict, and its frame is not handed over",
				Spec:         "doppler-streaming §4",
				Requirements: []string{"doppler-streaming§4#7"},
				Run:          func(t *cases.T) { reassembleVectors(t, "reassembly", rFrames|rRefused, v) },
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "doppler/4/reassembly-whatever-the-arrival",
				Title:        "Generated frames, chunked by the pinned split and delivered in any order with repeats, are each handed over once, as sent",
				Spec:         "doppler-streaming §4",
				Requirements: []string{"doppler-streaming§4#11", "doppler-streaming§4#13", "reconstructed§doppler-chunk#6"},
				Run:          func(t *cases.T) { wheneverTheArrival(t) },
			}
		}),
	}
}

// wheneverTheArrival generates frames, chunks them, shuffles the chunks with
// a few repeats, and judges that each is reassembled as generated.
func wheneverTheArrival(t *cases.T) {
	r := t.Rand()
	var ins []*conformpb.DopplerReassembleInput
	var vs []*corpus.DopplerVector
	for i := range 40 {
		f, maxPayload := genFrame(r, uint64(i), dp.LittleEndian)
		msgs, err := dp.Chunk(f, maxPayload, dp.LittleEndian)
		if err != nil {
			t.Harnessf("generating chunks: %v", err)
		}
		r.Shuffle(len(msgs), func(a, b int) { msgs[a], msgs[b] = msgs[b], msgs[a] })
		// Repeats only of chunks: a whole frame delivered twice is
		// two deliveries (doppler §9), not a no-op.
		for k := r.IntN(3); k > 0 && len(msgs) > 1; k-- {
			j := r.IntN(len(msgs))
			msgs = append(msgs[:j+1], append([][]byte{msgs[j]}, msgs[j+1:]...)...)
		}
		typ, _ := dp.TypeOf(f.Header.Kind, f.Header.Format)
		vs = append(vs, generated(f, msgs, fmt.Sprintf("%v frame %d of %d bytes at max_payload %d, %d messages shuffled with repeats",
			typ, i, len(f.Payload), maxPayload, len(msgs))))
		ins = append(ins, &conformpb.DopplerReassembleInput{Messages: msgs})
	}
	judgeGenerated(t, ins, vs)
}

// repeatsEverywhere generates frames of one-sample chunks, from just past
// index 64 to 300 chunks, delivers every chunk twice in a shuffled order,
// and judges that each frame is reassembled once, as generated, with no
// error: a repeat is recognised at every index, not only below 64.
func repeatsEverywhere(t *cases.T) {
	r := t.Rand()
	var ins []*conformpb.DopplerReassembleInput
	var vs []*corpus.DopplerVector
	for i, n := range []int{65, 129, 130 + r.IntN(40), 300} {
		payload := make([]byte, 2*n) // CI8: one 2-byte sample a chunk at max_payload 90
		for j := range payload {
			payload[j] = byte(r.Uint32())
		}
		f, _ := dp.NewFrame(dp.TypeCI8, dp.LittleEndian, payload)
		f.Header.Sequence = uint64(40 + i)
		msgs, err := dp.Chunk(f, dp.HeaderSize+dp.ChunkBlockSize+2, dp.LittleEndian)
		if err != nil || len(msgs) != n {
			t.Harnessf("generating %d chunks: %d, %v", n, len(msgs), err)
		}
		twice := append(append([][]byte(nil), msgs...), msgs...)
		r.Shuffle(len(twice), func(a, b int) { twice[a], twice[b] = twice[b], twice[a] })
		vs = append(vs, generated(f, twice, fmt.Sprintf("CI8 frame %d of %d one-sample chunks, every chunk twice, shuffled", f.Header.Sequence, n)))
		ins = append(ins, &conformpb.DopplerReassembleInput{Messages: twice})
	}
	judgeGenerated(t, ins, vs)
}

// generated is the expectation for a generated frame delivered as msgs: the
// frame itself, once, and no refusal.
func generated(f dp.Frame, msgs [][]byte, title string) *corpus.DopplerVector {
	no := false
	v := &corpus.DopplerVector{Refused: &no, Title: title, Delivered: []corpus.DopplerFrameExpect{frameExpect(f)}}
	for _, m := range msgs {
		v.Messages = append(v.Messages, m)
	}
	return v
}

// judgeGenerated feeds each input to a fresh little-endian receiver and
// judges it against its expectation, reporting the first three that differ.
func judgeGenerated(t *cases.T, ins []*conformpb.DopplerReassembleInput, vs []*corpus.DopplerVector) {
	failed := 0
	for i, out := range reassemble(t, little, ins) {
		if evidence.Equal(wantReassembly(vs[i], rFrames|rRefused), gotReassembly(vs[i], out, rFrames|rRefused)) {
			continue
		}
		if failed++; failed <= 3 {
			checkReassembly(t, "a generated frame: "+vs[i].Title, "little-endian receiver\n"+describeMessages(ins[i].Messages), vs[i], out, rFrames|rRefused)
		}
	}
	if failed > 3 {
		t.Failf("%d more of %d generated frames were not reassembled as sent", failed-3, len(ins))
	}
}
