package doppler

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/conform-suite/conform/cases"
	"github.com/conform-suite/conform/corpus"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/proto/conform/v1/meaning"
	dp "github.com/conform-suite/conform/ref/doppler"
	"github.com/conform-suite/conform/reports"
	"github.com/conform-suite/conform/reports/evidence"
)

// chunkInput is the chunk input of a frame at maxPayload.
func chunkInput(f dp.Frame, maxPayload int) *conformpb.DopplerChunkInput {
	typ, _ := dp.TypeOf(f.Header.Kind, f.Header.Format)
	return &conformpb.DopplerChunkInput{Type: conformpb.DopplerFrameType(typ), MaxPayload: uint64(maxPayload),
		Sequence: f.Header.Sequence, TimestampNs: f.Header.TimestampNs, SampleRateHz: f.Header.SampleRateHz,
		Payload: f.Payload}
}

// vectorChunkInput is the chunk input of a vector's frame.
func vectorChunkInput(v *corpus.DopplerVector) *conformpb.DopplerChunkInput {
	fs := v.Frame
	return &conformpb.DopplerChunkInput{Type: typeOf(fs.Type), MaxPayload: fs.MaxPayload, Sequence: fs.Sequence,
		TimestampNs: fs.TimestampNs, SampleRateHz: fs.SampleRateHz, Payload: fs.Payload}
}

func describeChunkInput(o conformpb.DopplerByteOrder, in *conformpb.DopplerChunkInput) string {
	return fmt.Sprintf("%s sender, %s frame, sequence %d, timestamp_ns %d, sample_rate_hz %g, max_payload %d, payload (%d bytes) %s",
		orderName(o), in.Type, in.Sequence, in.TimestampNs, in.SampleRateHz, in.MaxPayload, len(in.Payload), corpus.FormatHex(in.Payload))
}

// wantSplit is how the pinned split (reconstructed§doppler-chunk#4, #5)
// cuts n payload bytes of elem-byte elements at maxPayload: not at all when 64 + n fits, else chunks of
// floor((maxPayload − 64 − 24) / elem) × elem bytes, the last the rest.
func wantSplit(n, elem, maxPayload int) (chunked bool, sizes []int) {
	if dp.HeaderSize+n <= maxPayload {
		return false, []int{n}
	}
	size := (maxPayload - dp.HeaderSize - dp.ChunkBlockSize) / elem * elem
	if size <= 0 {
		return true, nil // no room for one element: no chunk can be cut
	}
	for off := 0; off < n; off += size {
		sizes = append(sizes, min(size, n-off))
	}
	return true, sizes
}

// splitView is how a sender cut a frame: whether its messages carry
// CHUNKED, and the size of each message's own payload.
type splitView struct {
	Chunked bool  `json:"chunked"`
	Sizes   []int `json:"payloadSizes"`
}

// gotSplit reads the payload sizes of messages from their lengths and the
// CHUNKED flag of their headers.
func gotSplit(msgs [][]byte, o dp.Order) splitView {
	var v splitView
	for _, m := range msgs {
		h, err := dp.DecodeHeader(m, o)
		if err != nil {
			v.Sizes = append(v.Sizes, -len(m))
			continue
		}
		over := dp.HeaderSize
		if h.Chunked() {
			v.Chunked = true
			over += dp.ChunkBlockSize
		}
		v.Sizes = append(v.Sizes, len(m)-over)
	}
	return v
}

// structure checks that the messages a sender cut f into are what doppler
// §4 describes, and returns what is wrong: every chunk carries CHUNKED, the
// frame's sequence, kind, format, timestamp and rate, num_samples and
// payload_bytes of its own payload, and a chunk block numbering it among
// the chunks with the frame's totals; every message passes §3's checks; the
// payloads, in order, are the frame's.
func structure(f dp.Frame, msgs [][]byte, o dp.Order) []string {
	var bad []string
	elem := uint64(f.Header.NumSamples)
	if elem != 0 {
		elem = f.Header.PayloadBytes / f.Header.NumSamples
	}
	var joined []byte
	for i, m := range msgs {
		if v := dp.Check(m, o); v != dp.Accepted {
			bad = append(bad, fmt.Sprintf("message %d fails the header check: %s", i, v))
			continue
		}
		h, _ := dp.DecodeHeader(m, o)
		if len(msgs) == 1 && !h.Chunked() {
			joined = append(joined, m[dp.HeaderSize:]...)
			continue
		}
		if !h.Chunked() {
			bad = append(bad, fmt.Sprintf("message %d of %d is not flagged CHUNKED", i, len(msgs)))
			continue
		}
		c, _ := dp.DecodeChunkBlock(m[dp.HeaderSize:], o)
		own := m[dp.HeaderSize+dp.ChunkBlockSize:]
		if h.Sequence != f.Header.Sequence || h.Kind != f.Header.Kind || h.Format != f.Header.Format ||
			h.TimestampNs != f.Header.TimestampNs || h.SampleRateHz != f.Header.SampleRateHz {
			bad = append(bad, fmt.Sprintf("chunk %d: sequence %d kind %v format %v timestamp_ns %d rate %g, the frame's are %d %v %v %d %g",
				i, h.Sequence, h.Kind, h.Format, h.TimestampNs, h.SampleRateHz,
				f.Header.Sequence, f.Header.Kind, f.Header.Format, f.Header.TimestampNs, f.Header.SampleRateHz))
		}
		if h.PayloadBytes != uint64(len(own)) || (elem != 0 && h.NumSamples*elem != h.PayloadBytes) {
			bad = append(bad, fmt.Sprintf("chunk %d: num_samples %d, payload_bytes %d on its own %d bytes", i, h.NumSamples, h.PayloadBytes, len(own)))
		}
		want := dp.ChunkBlock{Index: uint32(i), Count: uint32(len(msgs)), TotalSamples: f.Header.NumSamples, TotalBytes: f.Header.PayloadBytes}
		if c != want {
			bad = append(bad, fmt.Sprintf("chunk %d: chunk block chunk_index %d, chunk_count %d, total_samples %d, total_bytes %d; the frame's are %d, %d, %d, %d",
				i, c.Index, c.Count, c.TotalSamples, c.TotalBytes, want.Index, want.Count, want.TotalSamples, want.TotalBytes))
		}
		joined = append(joined, own...)
	}
	if len(bad) == 0 && !bytes.Equal(joined, f.Payload) {
		bad = append(bad, "the chunks' payloads, in order, are not the frame's payload")
	}
	return bad
}

// chunkExact asks a sender of order o to cut each vector's frame and
// compares the messages, byte for byte, with the vector's.
func chunkExact(t *cases.T, o conformpb.DopplerByteOrder, vs []*corpus.DopplerVector) {
	var ins []*conformpb.DopplerChunkInput
	for _, v := range vs {
		ins = append(ins, vectorChunkInput(v))
	}
	for i, out := range chunk(t, o, ins) {
		want := &conformpb.DopplerChunkOutput{Messages: hexes(vs[i].Messages)}
		t.CheckAnswer("the messages a frame is cut into: "+vs[i].Title, describeChunkInput(o, ins[i]), ins[i], want, out, meaning.MUST)
	}
}

// chunking is doppler §4 from the sender's side, and PUSH's refusal.
func chunking(k *cases.Kit, vs *vectors) []cases.Case {
	return []cases.Case{
		k.Must(func() cases.Case {
			frames := vs.List("chunks-in-order", "chunk-unaligned-room", "chunk-fits-exactly", "chunk-one-byte-over", "chunk-telemetry")
			return cases.Case{
				ID:    "doppler/4/chunks-exact",
				Title: "A PUB cuts a frame into exactly the messages the pinned layout and split describe, byte for byte",
				Spec:  "doppler-streaming §4",
				Requirements: []string{"doppler-streaming§4#4", "doppler-streaming§4#6",
					"reconstructed§doppler-chunk#1", "reconstructed§doppler-chunk#5"},
				Run: func(t *cases.T) { chunkExact(t, little, frames) },
			}
		}),
		k.Must(func() cases.Case {
			frames := vs.List("chunks-in-order-be")
			return cases.Case{
				ID:           "doppler/4/chunks-exact-big-endian",
				Title:        "A big-endian PUB writes every chunk's header and its 24-byte chunk block in its own byte order: the same messages as a little-endian PUB, each field byte-swapped",
				Spec:         "doppler-streaming §4, §3",
				Requirements: []string{"doppler-streaming§3#5", "doppler-streaming§4#4", "reconstructed§doppler-chunk#2"},
				Run:          func(t *cases.T) { chunkExact(t, big, frames) },
			}
		}),
		k.Must(func() cases.Case {
			room, tlm := vs.Get("chunk-unaligned-room"), vs.Get("chunk-telemetry")
			return cases.Case{
				ID:           "doppler/4/chunks-element-aligned",
				Title:        "Chunks are element-aligned: max_payload less header and chunk block, rounded down to whole elements, the last chunk the rest; no sample straddles two messages",
				Spec:         "doppler-streaming §4",
				Requirements: []string{"doppler-streaming§4#6", "reconstructed§doppler-chunk#5"},
				Run: func(t *cases.T) {
					r := t.Rand()
					var frames []dp.Frame
					var maxes []int
					for _, v := range []*corpus.DopplerVector{room, tlm} {
						for _, typ := range dp.Types() {
							if typ.String() == v.Frame.Type {
								f, _ := dp.NewFrame(typ, dp.LittleEndian, v.Frame.Payload)
								f.Header.Sequence = v.Frame.Sequence
								frames, maxes = append(frames, f), append(maxes, int(v.Frame.MaxPayload))
							}
						}
					}
					for i := range 60 {
						f, m := genFrame(r, uint64(i), dp.LittleEndian)
						frames, maxes = append(frames, f), append(maxes, m)
					}
					judgeSplits(t, frames, maxes)
				},
			}
		}),
		k.Must(func() cases.Case {
			fits, over := vs.Get("chunk-fits-exactly"), vs.Get("chunk-one-byte-over")
			return cases.Case{
				ID:           "doppler/4/chunked-only-over-max-payload",
				Title:        "A frame is chunked only when 64 + payload_bytes exceeds max_payload: at exactly max_payload it is one unchunked message",
				Spec:         "doppler-streaming §4",
				Requirements: []string{"doppler-streaming§4#5", "reconstructed§doppler-chunk#4"},
				Run: func(t *cases.T) {
					var frames []dp.Frame
					var maxes []int
					for _, v := range []*corpus.DopplerVector{fits, over} {
						f, _ := dp.NewFrame(dp.TypeCF32, dp.LittleEndian, v.Frame.Payload)
						frames, maxes = append(frames, f), append(maxes, int(v.Frame.MaxPayload))
					}
					for _, typ := range dp.Types() {
						elem := typ.ElemSize()
						payload := make([]byte, 40*elem)
						f, _ := dp.NewFrame(typ, dp.LittleEndian, payload)
						exact := dp.HeaderSize + len(payload)
						frames = append(frames, f, f)
						maxes = append(maxes, exact, exact-1)
					}
					judgeSplits(t, frames, maxes)
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:    "doppler/4/chunks-carry-flag-sequence-and-totals",
				Title: "Each chunk carries a full header with DP_FLAG_CHUNKED, the frame's sequence and its own counts, then a chunk block numbering it with the frame's totals; each passes §3's checks",
				Spec:  "doppler-streaming §4, §3",
				Requirements: []string{"doppler-streaming§3#1", "doppler-streaming§4#4",
					"reconstructed§doppler-chunk#1", "reconstructed§doppler-chunk#3"},
				Run: func(t *cases.T) {
					r := t.Rand()
					var frames []dp.Frame
					var ins []*conformpb.DopplerChunkInput
					for i := range 60 {
						f, m := genFrame(r, uint64(1000+i), dp.LittleEndian)
						frames, ins = append(frames, f), append(ins, chunkInput(f, m))
					}
					failed := 0
					for i, out := range chunk(t, little, ins) {
						bad := structure(frames[i], out.Messages, dp.LittleEndian)
						if out.Refused != nil {
							bad = append(bad, "refused: "+meaning.Render(out.Refused))
						}
						if len(bad) == 0 {
							continue
						}
						if failed++; failed <= 3 {
							t.Fail(reports.Evidence{Message: "the chunks of a generated frame: " + strings.Join(bad, "; "), Input: describeChunkInput(little, ins[i]),
								Expected: "messages cut as doppler §4 describes them", Got: describeMessages(out.Messages),
								Diff: evidence.Format(evidence.DiffAt("messages", []string{}, bad))})
						}
					}
					if failed > 3 {
						t.Failf("%d more of %d generated frames were cut wrongly", failed-3, len(ins))
					}
				},
			}
		}),
		k.Must(func() cases.Case {
			v := vs.Get("valid-chunk-message")
			return cases.Case{
				ID:           "doppler/4/chunk-message-passes-header-check",
				Title:        "In a chunk message num_samples and payload_bytes describe that chunk's own payload, so checks 4 and 5 hold per message and a receiver accepts it",
				Spec:         "doppler-streaming §4, §3",
				Requirements: []string{"reconstructed§doppler-chunk#3", "reconstructed§doppler-header#4"},
				Run:          func(t *cases.T) { checkVectors(t, "a chunk message at the header check", v) },
			}
		}),
		k.Must(func() cases.Case {
			v := vs.Get("valid-chunk-message-be")
			return cases.Case{
				ID:           "doppler/4/chunk-block-read-in-receiver-order",
				Title:        "A big-endian receiver reads a big-endian sender's chunk block in big-endian order, as it reads the header",
				Spec:         "doppler-streaming §4, §3",
				Requirements: []string{"reconstructed§doppler-chunk#2", "reconstructed§doppler-chunk#3"},
				Run:          func(t *cases.T) { checkVectors(t, "a big-endian chunk message at the header check", v) },
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "doppler/4/own-chunks-reassemble",
				Title:        "What the SUT's PUB cuts, the SUT's receiver reassembles into the frame as sent",
				Spec:         "doppler-streaming §4",
				Requirements: []string{"doppler-streaming§4#13", "doppler-streaming§4#14"},
				Run: func(t *cases.T) {
					r := t.Rand()
					var frames []dp.Frame
					var ins []*conformpb.DopplerChunkInput
					for i := range 40 {
						f, m := genFrame(r, uint64(i), dp.LittleEndian)
						frames, ins = append(frames, f), append(ins, chunkInput(f, m))
					}
					outs := chunk(t, little, ins)
					var rins []*conformpb.DopplerReassembleInput
					for _, out := range outs {
						rins = append(rins, &conformpb.DopplerReassembleInput{Messages: out.Messages})
					}
					failed := 0
					for i, out := range reassemble(t, little, rins) {
						no := false
						v := &corpus.DopplerVector{Refused: &no, Delivered: []corpus.DopplerFrameExpect{frameExpect(frames[i])}}
						if evidence.Equal(wantReassembly(v, rFrames|rRefused), gotReassembly(v, out, rFrames|rRefused)) {
							continue
						}
						if failed++; failed <= 3 {
							checkReassembly(t, "a frame the SUT cut, fed back to its receiver",
								describeChunkInput(little, ins[i])+"\nthe SUT's messages:\n"+describeMessages(rins[i].Messages), v, out, rFrames|rRefused)
						}
					}
					if failed > 3 {
						t.Failf("%d more of %d frames did not survive the SUT's own chunking and reassembly", failed-3, len(ins))
					}
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "doppler/4/push-refuses-oversized",
				Title:        "PUSH does not chunk: a frame that does not fit in one message is refused with DP_ERR_TOO_LARGE (-7) rather than split",
				Spec:         "doppler-streaming §4",
				Requirements: []string{"doppler-streaming§4#2", "doppler-streaming§4#3", "reconstructed§doppler-errors#1"},
				Run: func(t *cases.T) {
					const mib = 1 << 20
					type row struct {
						payload, max uint64
						code         int32
						why          string
					}
					rows := []row{
						{1_600_000, mib, int32(dp.ErrTooLarge), "doppler §4's CF64 frame of 100 k samples, 1.6 MB, at the 1 MiB default"},
						{mib - 64 + 1, mib, int32(dp.ErrTooLarge), "one byte more than fits with its 64-byte header"},
						{mib - 64, mib, int32(dp.OK), "exactly what fits with its 64-byte header"},
						{40, 103, int32(dp.ErrTooLarge), "40 bytes at max_payload 103, which a PUB would chunk"},
						{40, 104, int32(dp.OK), "40 bytes at max_payload 104"},
						{0, mib, int32(dp.OK), "an empty frame"},
					}
					var ins []*conformpb.DopplerPushInput
					for _, rw := range rows {
						ins = append(ins, &conformpb.DopplerPushInput{PayloadBytes: rw.payload, MaxPayload: rw.max})
					}
					for i, out := range pushCheck(t, ins) {
						t.CheckAnswer("PUSH of "+rows[i].why+" (code "+codeName(rows[i].code)+")", fmt.Sprintf("payload_bytes %d, max_payload %d", rows[i].payload, rows[i].max),
							ins[i], &conformpb.DopplerPushOutput{Code: rows[i].code}, out, meaning.MUST)
					}
				},
			}
		}),
	}
}

// judgeSplits asks the SUT to cut each frame at its max_payload and judges
// the payload sizes against the pinned split.
func judgeSplits(t *cases.T, frames []dp.Frame, maxes []int) {
	var ins []*conformpb.DopplerChunkInput
	for i, f := range frames {
		ins = append(ins, chunkInput(f, maxes[i]))
	}
	failed := 0
	for i, out := range chunk(t, little, ins) {
		typ, _ := dp.TypeOf(frames[i].Header.Kind, frames[i].Header.Format)
		chunked, sizes := wantSplit(len(frames[i].Payload), typ.ElemSize(), maxes[i])
		type cut struct {
			Split   splitView                 `json:"messages"`
			Refused *conformpb.DopplerRefusal `json:"refused,omitempty"`
		}
		w, g := cut{Split: splitView{Chunked: chunked, Sizes: sizes}}, cut{gotSplit(out.Messages, dp.LittleEndian), out.Refused}
		if evidence.Equal(w, g) {
			continue
		}
		if failed++; failed <= 3 {
			t.FailCompare(fmt.Sprintf("how a %v frame of %d bytes is cut at max_payload %d", typ, len(frames[i].Payload), maxes[i]),
				describeChunkInput(little, ins[i]), w, g)
		}
	}
	if failed > 3 {
		t.Failf("%d more of %d frames were cut wrongly", failed-3, len(ins))
	}
}
