package doppler

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"

	"github.com/conform-suite/conform/cases"
	"github.com/conform-suite/conform/corpus"
	"github.com/conform-suite/conform/live/netem"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	dp "github.com/conform-suite/conform/ref/doppler"
	"github.com/conform-suite/conform/reports"
	"github.com/conform-suite/conform/reports/evidence"
)

// chunkedFrame is a CF32 frame of sequence seq cut into four chunks of 40,
// 40, 40 and 32 bytes, as a sender on a connection of max_payload 128 cuts
// it; the receiver reassembles whatever element-aligned geometry a frame
// arrives in, so the broker's own max_payload does not matter here.
func chunkedFrame(seq uint64, seed byte) (payload []byte, chunks [][]byte) {
	payload = samples(dp.TypeCF32, 19, seed)
	f, _ := dp.NewFrame(dp.TypeCF32, dp.LittleEndian, payload)
	f.Header.Sequence = seq
	f.Header.TimestampNs = 1_700_000_000_000_000_000
	chunks, err := dp.Chunk(f, 128, dp.LittleEndian)
	if err != nil || len(chunks) != 4 {
		panic(fmt.Sprintf("conform's chunked frame: %d chunks, %v", len(chunks), err))
	}
	return payload, chunks
}

// reassembled is what a SUB must deliver for a frame: the logical frame,
// CHUNKED cleared, the totals in its header.
func reassembled(seq uint64, payload []byte) string { return frameText(seq, dp.TypeCF32, payload) }

// judgeChunks publishes msgs on <base>.pub.cf32 (some from another
// connection, when from says so) and then a sentinel, to a SUB of every
// type, and returns what the SUT delivered and refused before the
// sentinel, and the sentinel's payload.
func judgeChunks(l *live, msgs [][]byte, other map[int]bool) (evs []*conformpb.DopplerLiveEvent, ok bool) {
	h, ok := l.subscribeAll()
	if !ok {
		return nil, false
	}
	subject := l.ep.PubSubject(dp.TypeCF32)
	var second = l.nc
	if len(other) > 0 {
		second = l.other()
	}
	for i, m := range msgs {
		conn := l.nc
		if other[i] {
			conn = second
		}
		l.publish(conn, subject, m) // one at a time: the server's order is the publish order
	}
	sm, sp := sentinel(900)
	l.publish(l.nc, l.ep.PubSubject(dp.TypeCI16), sm)
	evs = l.gatherUntil(h, 900)
	if len(evs) == 0 || !payloadIs(evs[len(evs)-1].GetDelivered().GetPayload(), sp) {
		l.t.Fail(evidence.Named("events", reports.Evidence{Message: "the SUB did not deliver the conforming frame published after the chunks",
			Expected: frameText(900, dp.TypeCI16, sp), Got: strings.Join(eventTexts(evs), "\n")}))
		return evs, false
	}
	return evs[:len(evs)-1], true
}

// describeChunks renders the chunk messages a case published.
func describeChunks(msgs [][]byte, other map[int]bool) string {
	var lines []string
	for i, m := range msgs {
		h, _ := dp.DecodeHeader(m, dp.LittleEndian)
		line := fmt.Sprintf("message %d: %d bytes, sequence %d", i, len(m), h.Sequence)
		if h.Chunked() && len(m) >= dp.HeaderSize+dp.ChunkBlockSize {
			c, _ := dp.DecodeChunkBlock(m[dp.HeaderSize:], dp.LittleEndian)
			line += fmt.Sprintf(", chunk %d of %d (totals %d samples, %d bytes)", c.Index, c.Count, c.TotalSamples, c.TotalBytes)
		} else {
			line += ", unchunked"
		}
		if other[i] {
			line += ", from a second publisher"
		}
		lines = append(lines, line)
	}
	return strings.Join(lines, "\n")
}

// judgeWhole checks that the SUT delivered exactly want, in order, and
// nothing else, for the chunk messages msgs.
func judgeWhole(t *cases.T, what string, msgs [][]byte, want []string) {
	withLive(t, func(l *live) {
		evs, ok := judgeChunks(l, msgs, nil)
		if !ok {
			return
		}
		got := eventTexts(evs)
		if !evidence.Equal(want, got) {
			t.Fail(reports.Evidence{Message: what, Input: describeChunks(msgs, nil),
				Expected: strings.Join(want, "\n"), Got: strings.Join(got, "\n"), Diff: evidence.Format(evidence.DiffAt("events", want, got))})
		}
	})
}

// judgeLost checks that the SUT delivered nothing of frame seq, and, when
// mustReport, that it reported a DP_ERR_INVALID.
func judgeLost(t *cases.T, what string, seq uint64, msgs [][]byte, other map[int]bool, mustReport bool) {
	withLive(t, func(l *live) {
		evs, ok := judgeChunks(l, msgs, other)
		if !ok {
			return
		}
		for _, f := range deliveredOf(evs) {
			if f.GetHeader().GetSequence() == seq {
				t.Fail(evidence.Named("events", reports.Evidence{Message: what + ": frame " + fmt.Sprint(seq) + " was delivered", Input: describeChunks(msgs, other),
					Expected: fmt.Sprintf("nothing of frame %d delivered", seq), Got: strings.Join(eventTexts(evs), "\n")}))
			}
		}
		invalid := false
		for _, r := range refusalsOf(evs) {
			invalid = invalid || r.GetCode() == int32(dp.ErrInvalid)
		}
		if mustReport && !invalid {
			t.Fail(evidence.Named("events", reports.Evidence{Message: what + ": the frame was not dropped with DP_ERR_INVALID", Input: describeChunks(msgs, other),
				Expected: "a refusal " + codeName(int32(dp.ErrInvalid)), Got: strings.Join(eventTexts(evs), "\n")}))
		}
		t.Note("the SUT reported: %s", strings.Join(eventTexts(evs), "; "))
	})
}

// liveChunking is doppler §4 on a real subscription, and PUB's and PUSH's
// size rules at the max_payload a connection reports.
func liveChunking(k *cases.Kit, vs *vectors) []cases.Case {
	return []cases.Case{
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "doppler/4/live-chunks-in-order",
				Title:        "A SUB handed a frame's chunks in order delivers one logical frame: CHUNKED cleared, num_samples and payload_bytes the totals, the payload whole; never a chunk",
				Spec:         "doppler-streaming §4",
				Profile:      LiveProfile,
				Requirements: []string{"doppler-streaming§4#13", "doppler-streaming§4#14", "reconstructed§doppler-chunk#6"},
				Run: func(t *cases.T) {
					p, chunks := chunkedFrame(5, 1)
					judgeWhole(t, "four chunks of frame 5, in order", chunks, []string{reassembled(5, p)})
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "doppler/4/live-chunks-reordered",
				Title:        "A SUB reassembles a frame whose chunks arrive out of order, placing each by its chunk_index",
				Spec:         "doppler-streaming §4",
				Profile:      LiveProfile,
				Requirements: []string{"doppler-streaming§4#13", "reconstructed§doppler-chunk#6"},
				Run: func(t *cases.T) {
					p, chunks := chunkedFrame(6, 2)
					order := []int{0, 1, 2, 3}
					for order[0] == 0 && order[1] == 1 && order[2] == 2 {
						t.Rand().Shuffle(4, func(i, j int) { order[i], order[j] = order[j], order[i] })
					}
					var msgs [][]byte
					for _, i := range order {
						msgs = append(msgs, chunks[i])
					}
					judgeWhole(t, fmt.Sprintf("the chunks of frame 6 in the order %v", order), msgs, []string{reassembled(6, p)})
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "doppler/4/live-duplicated-index",
				Title:        "A repeat of a chunk index already seen is a no-op: the frame is delivered once, its payload unchanged",
				Spec:         "doppler-streaming §4",
				Profile:      LiveProfile,
				Requirements: []string{"doppler-streaming§4#11"},
				Run: func(t *cases.T) {
					p, c := chunkedFrame(7, 3)
					judgeWhole(t, "the chunks of frame 7 with indices 1 and 0 repeated", [][]byte{c[0], c[1], c[1], c[2], c[0], c[3]},
						[]string{reassembled(7, p)})
				},
			}
		}),
		k.Must(func() cases.Case {
			v := vs.Get("chunks-repeat-at-64")
			return cases.Case{
				ID:           "doppler/4/live-repeat-at-index-64",
				Title:        "A SUB treats a repeat as a no-op at every index: a frame of 130 chunks with chunks 0, 63, 64, 127, 128 and 129 repeated is delivered once, as sent, with no error",
				Spec:         "doppler-streaming §4",
				Profile:      LiveProfile,
				Requirements: []string{"doppler-streaming§4#11", "doppler-streaming§4#12"},
				Run:          func(t *cases.T) { judgeVectorsLive(t, v) },
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "doppler/4/live-missing-chunk",
				Title:        "A lost chunk loses its frame and only its frame: a SUB that never gets one chunk of a frame delivers nothing of it, and delivers the next frame",
				Spec:         "doppler-streaming §4",
				Profile:      LiveProfile,
				Requirements: []string{"doppler-streaming§4#16", "doppler-streaming§4#17"},
				Run: func(t *cases.T) {
					_, c := chunkedFrame(8, 4)
					judgeLost(t, "chunks 0, 1 and 3 of frame 8, chunk 2 lost", 8, [][]byte{c[0], c[1], c[3]}, nil, false)
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "doppler/4/live-interleaved-publisher",
				Title:        "A message from a different publisher arriving mid-frame fails the sequence check and the whole frame is dropped with DP_ERR_INVALID",
				Spec:         "doppler-streaming §4",
				Profile:      LiveProfile,
				Requirements: []string{"doppler-streaming§4#9", "doppler-streaming§4#15"},
				Run: func(t *cases.T) {
					_, a := chunkedFrame(7, 5)
					_, b := chunkedFrame(0, 6) // the second publisher's own first frame
					judgeLost(t, "frame 7 with a chunk of another publisher's frame 0 between its chunks 1 and 2", 7,
						[][]byte{a[0], a[1], b[0], a[2], a[3]}, map[int]bool{2: true}, true)
				},
			}
		}),
		k.Must(func() cases.Case {
			v := vs.List("chunks-unchunked-mid-frame", "chunks-unchunked-mid-frame-be")
			return cases.Case{
				ID:           "doppler/4/live-unchunked-message-drops-the-frame",
				Title:        "A SUB takes a message as a chunk only when it carries DP_FLAG_CHUNKED: an unchunked frame arriving mid-frame is delivered as it stands and drops the frame in progress with DP_ERR_INVALID",
				Spec:         "doppler-streaming §4",
				Profile:      LiveProfile,
				Requirements: []string{"doppler-streaming§4#8"},
				Run:          func(t *cases.T) { judgeVectorsLive(t, v...) },
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "doppler/4/live-count-disagreement",
				Title:        "Reassembly accepts a chunk only if it agrees on the count: a chunk of the frame's sequence claiming another chunk_count is refused and the frame is lost",
				Spec:         "doppler-streaming §4",
				Profile:      LiveProfile,
				Requirements: []string{"doppler-streaming§4#10"},
				Run: func(t *cases.T) {
					_, c := chunkedFrame(9, 7)
					bad := append([]byte(nil), c[2]...)
					binary.LittleEndian.PutUint32(bad[dp.HeaderSize+4:], 5)
					judgeLost(t, "frame 9 whose chunk 2 claims chunk_count 5 instead of 4", 9, [][]byte{c[0], c[1], bad, c[3]}, nil, true)
				},
			}
		}),
		k.Must(func() cases.Case {
			v := vs.Get("chunk-totals-overflow")
			return cases.Case{
				ID:           "doppler/4/live-totals-overflow-refused",
				Title:        "A SUB computes a chunk block's total_samples × element size without overflow: chunks whose totals wrap to total_bytes in 64 bits are refused, although each passes the header check",
				Spec:         "doppler-streaming §4",
				Profile:      LiveProfile,
				Requirements: []string{"reconstructed§doppler-chunk#7"},
				Run:          func(t *cases.T) { judgeVectorsLive(t, v) },
			}
		}),
		k.Must(func() cases.Case {
			v := vs.List("chunk-count-zero", "chunk-index-beyond-count", "chunk-sizes-off-the-split")
			return cases.Case{
				ID:           "doppler/4/live-malformed-chunk-block-refused",
				Title:        "A SUB refuses a chunk_count of 0, a chunk_index not below chunk_count, and a chunk that breaks the element-aligned split, and delivers nothing of those frames",
				Spec:         "doppler-streaming §4",
				Profile:      LiveProfile,
				Requirements: []string{"reconstructed§doppler-chunk#8"},
				Run:          func(t *cases.T) { judgeVectorsLive(t, v...) },
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:      "doppler/4/live-pub-chunks-at-max-payload",
				Title:   "A PUB chunks a frame that does not fit the max_payload its connection reports, element-aligned, every chunk sharing the frame's sequence; frames that fit go whole",
				Spec:    "doppler-streaming §4, §7, §8",
				Profile: LiveProfile,
				Requirements: []string{"doppler-streaming§4#1", "doppler-streaming§4#4", "doppler-streaming§4#6", "doppler-streaming§7#2",
					"doppler-streaming§8#7", "reconstructed§doppler-chunk#4", "reconstructed§doppler-chunk#5"},
				Run: livePubChunks,
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "doppler/4/live-big-endian-pub-chunks",
				Title:        "A PUB joined big-endian cuts a frame over max_payload into chunks whose headers and chunk blocks are all in big-endian order",
				Spec:         "doppler-streaming §4, §3",
				Profile:      LiveProfile,
				Requirements: []string{"doppler-streaming§3#6", "doppler-streaming§4#4", "reconstructed§doppler-chunk#2"},
				Run:          liveBigEndianPubChunks,
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "doppler/4/live-push-oversized-refused",
				Title:        "PUSH does not chunk: a frame that does not fit the connection's max_payload is refused with DP_ERR_TOO_LARGE and nothing reaches the work queue, while a frame that fits is pushed whole",
				Spec:         "doppler-streaming §4",
				Profile:      LiveProfile,
				Requirements: []string{"doppler-streaming§4#1", "doppler-streaming§4#3", "doppler-streaming§8#7"},
				Run:          livePushOversized,
			}
		}),
	}
}

// judgeVectorsLive publishes each vector's messages, then a sentinel frame
// of the vector's byte order, to a fresh SUB of every type joined in the
// vector's byte order, and judges what it made of them against the vector:
// the frames it states, in order, then — when the vector says refused — a
// DP_ERR_INVALID refusal (any number of them, none coded otherwise), or no
// refusal at all when it says not; then the sentinel.
func judgeVectorsLive(t *cases.T, vs ...*corpus.DopplerVector) {
	withLive(t, func(l *live) {
		for _, v := range vs {
			o, order := dp.LittleEndian, little
			if v.BigEndian() {
				o, order = dp.BigEndian, big
			}
			h, ok := l.join(roleSUB, conformpb.DopplerFrameType_DOPPLER_FRAME_TYPE_UNSPECIFIED, joinOpts{order: order})
			if !ok {
				return
			}
			msgs := hexes(v.Messages)
			sm, sp := sentinelOrder(900, o)
			l.publish(l.nc, l.ep.PubSubject(dp.TypeCI16), append(msgs, sm)...)
			const invalid = "one or more refusals, each DP_ERR_INVALID"
			var want []string
			for _, d := range v.Delivered {
				want = append(want, frameText(d.Header.Sequence, typeNamed(d.Header.Format), d.Payload))
			}
			if v.Refused != nil && *v.Refused {
				want = append(want, invalid)
			}
			last := frameText(900, dp.TypeCI16, sp)
			want = append(want, last)
			var got, refusals []string
			sawSentinel := false
			for _, e := range l.gatherUntil(h, 900) {
				switch r := e.GetRefused(); {
				case r != nil && r.GetCode() == int32(dp.ErrInvalid):
					if !slices.Contains(refusals, invalid) {
						refusals = append(refusals, invalid)
					}
				case r != nil:
					refusals = append(refusals, "refused "+refusalText(r))
				case eventText(e) == last:
					sawSentinel = true
				default:
					got = append(got, eventText(e))
				}
			}
			got = append(got, refusals...)
			if sawSentinel {
				got = append(got, last)
			}
			if !evidence.Equal(want, got) {
				t.Fail(reports.Evidence{Message: "what a " + o.String() + " SUB made of " + v.Title,
					Input:    fmt.Sprintf("published on %s, then a %s frame 900:\n%s", l.ep.PubSubject(dp.TypeCI16), o, describeMessages(msgs)),
					Expected: strings.Join(want, "\n"), Got: strings.Join(got, "\n"), Diff: evidence.Format(evidence.DiffAt("events", want, got))})
			}
			l.leave(h)
		}
	})
}

// typeNamed is the frame type of a corpus header's format: its two BLUE
// characters, "" for telemetry.
func typeNamed(format string) dp.Type {
	for _, typ := range dp.Types() {
		code := typ.Format()
		if (format == "" && code == 0) || (len(format) == 2 && code == dp.Format(uint16(format[0])|uint16(format[1])<<8) && typ.Kind() == dp.KindIQ) {
			return typ
		}
	}
	return 0
}

// advertisedMaxPayload is the max_payload a proxy tells the SUT in the
// server's INFO when a case shapes it: small, so that a frame just over it
// costs kilobytes, not the broker's own 64 MiB.
const advertisedMaxPayload = 4096

// pubPath is where a chunking case has the SUT publish, and the max_payload
// the SUT's connection reports there: through a proxy advertising
// advertisedMaxPayload when conform can put one on the SUT's path (the
// broker is on loopback), else straight to the broker at its own.
func (l *live) pubPath() (joinOpts, int) {
	if !l.canProxy() {
		return joinOpts{}, int(l.nc.MaxPayload())
	}
	ep, _ := l.viaProxy(netem.Options{DownFilter: rewriteInfo(func(info map[string]any) {
		info["max_payload"] = advertisedMaxPayload
	})})
	return joinOpts{endpoint: ep.String()}, advertisedMaxPayload
}

// livePubChunks has the SUT publish a small frame, a CF64 frame one sample
// larger than what fits the max_payload its connection reports, and a small
// frame, and judges the messages conform takes off <base>.pub.cf64.
func livePubChunks(t *cases.T) {
	withLive(t, func(l *live) {
		opts, mp := l.pubPath()
		const elem = 16
		big := ((mp-dp.HeaderSize)/elem + 1) * elem
		pattern := samples(dp.TypeCF64, 15, 9)[:239] // a prime length, so chunks differ
		sub := l.watch(l.ep.Base + ".>")
		r := l.joinResult(rolePUB, liveType(dp.TypeCF64), opts)
		if r.Refused != nil {
			t.Failf("the SUT could not open a PUB socket on %s: %s", l.endpointOf(opts), describeRefusal(r.Refused))
			return
		}
		if r.MaxPayload != uint64(mp) {
			t.Fail(reports.Evidence{Message: "the max_payload the PUB read from its connection",
				Input: "a PUB joined on " + l.endpointOf(opts), Expected: fmt.Sprint(mp), Got: fmt.Sprint(r.MaxPayload),
				Diff: evidence.Format(evidence.DiffAt("maxPayload", uint64(mp), r.MaxPayload))})
		}
		h := r.Handle
		small1, small2 := samples(dp.TypeCF64, 3, 1), samples(dp.TypeCF64, 2, 2)
		outs := l.send(h, 0, &conformpb.DopplerLiveFrame{Payload: small1}, fill(big, pattern), &conformpb.DopplerLiveFrame{Payload: small2})
		for i, o := range outs {
			if o.Refused != nil {
				t.Failf("the PUB refused frame %d: %s", i, describeRefusal(o.Refused))
				return
			}
		}
		_, sizes := wantSplit(big, elem, mp)
		msgs := l.next(sub, len(sizes)+2)
		input := fmt.Sprintf("max_payload %d (the server's INFO as the SUT's connection sees it); a PUB of CF64 sends frames of %d, %d and %d payload bytes",
			mp, len(small1), big, len(small2))
		var subjects []string
		for _, m := range msgs {
			subjects = append(subjects, m.Subject)
		}
		wantSubjects := make([]string, len(sizes)+2)
		for i := range wantSubjects {
			wantSubjects[i] = l.ep.PubSubject(dp.TypeCF64)
		}
		if !evidence.Equal(wantSubjects, subjects) {
			t.Fail(reports.Evidence{Message: "the messages the PUB put on the broker", Input: input,
				Expected: fmt.Sprintf("%d messages on %s", len(wantSubjects), wantSubjects[0]), Got: strings.Join(subjects, "\n"),
				Diff: evidence.Format(evidence.DiffAt("subjects on the broker", wantSubjects, subjects))})
			return
		}
		first, last := msgs[0].Data, msgs[len(msgs)-1].Data
		var chunks [][]byte
		for _, m := range msgs[1 : len(msgs)-1] {
			chunks = append(chunks, m.Data)
		}
		want := []string{frameText(0, dp.TypeCF64, small1), frameText(2, dp.TypeCF64, small2)}
		got := []string{wireText(first), wireText(last)}
		if !evidence.Equal(want, got) {
			t.Fail(reports.Evidence{Message: "the frames before and after the large one go whole, numbered 0 and 2", Input: input,
				Expected: strings.Join(want, "\n"), Got: strings.Join(got, "\n"), Diff: evidence.Format(evidence.DiffAt("messages on the broker", want, got))})
		}
		judgeChunksOf(t, input, chunks, dp.TypeCF64, 1, expand(big, pattern), sizes, dp.LittleEndian)
	})
}

// judgeChunksOf judges the chunks a PUB of order o put on the wire for
// frame seq of typ carrying payload: cut into sizes, and each what doppler
// §4 describes (CHUNKED, the frame's sequence, its own counts, a chunk
// block of the frame's totals, the payloads in order the frame's).
func judgeChunksOf(t *cases.T, input string, chunks [][]byte, typ dp.Type, seq uint64, payload []byte, sizes []int, o dp.Order) {
	split := gotSplit(chunks, o)
	if !t.FailCompare("how the large frame was cut (its messages on the broker)", input, splitView{Chunked: true, Sizes: sizes}, split) {
		return
	}
	head, err := dp.DecodeHeader(chunks[0], o)
	if err != nil {
		t.Failf("the first chunk has no header")
		return
	}
	f, _ := dp.NewFrame(typ, o, payload)
	f.Header.Sequence, f.Header.TimestampNs, f.Header.SampleRateHz = seq, head.TimestampNs, head.SampleRateHz
	if bad := structure(f, chunks, o); len(bad) > 0 {
		t.Fail(evidence.Named("messages on the broker (the chunks)", reports.Evidence{Message: fmt.Sprintf("the chunks of the large frame, sent as frame %d by a %s PUB", seq, o), Input: input,
			Expected: "every chunk CHUNKED, with the frame's sequence, its own counts, and a chunk block of the frame's totals; the payloads in order the frame's",
			Got:      strings.Join(bad, "\n")}))
	}
}

// liveBigEndianPubChunks has a PUB joined big-endian send a frame over the
// max_payload a proxy advertises, and judges the chunks it put on the wire
// as a big-endian sender's.
func liveBigEndianPubChunks(t *cases.T) {
	withLive(t, func(l *live) {
		opts, mp := l.pubPath()
		opts.order = big
		sub := l.watch(l.ep.Base + ".>") // whatever the subject: the chunks are judged here
		h, ok := l.join(rolePUB, liveType(dp.TypeCI16), opts)
		if !ok {
			return
		}
		const elem = 4
		payload := samples(dp.TypeCI16, (mp-dp.HeaderSize)/elem+3, 5)
		if o := l.send(h, 0, &conformpb.DopplerLiveFrame{Payload: payload})[0]; o.Refused != nil {
			t.Failf("the big-endian PUB refused a frame of %d bytes: %s", len(payload), describeRefusal(o.Refused))
			return
		}
		_, sizes := wantSplit(len(payload), elem, mp)
		var chunks [][]byte
		for _, m := range l.next(sub, len(sizes)) {
			chunks = append(chunks, m.Data)
		}
		input := fmt.Sprintf("max_payload %d; a PUB of CI16 joined big-endian sends a frame of %d payload bytes", mp, len(payload))
		judgeChunksOf(t, input, chunks, dp.TypeCI16, 0, payload, sizes, dp.BigEndian)
	})
}

// livePushOversized has the SUT push a frame one element over what fits
// the broker's max_payload, then one that fits, and reads the work queue.
func livePushOversized(t *cases.T) {
	withLive(t, func(l *live) {
		l.needJetStream()
		mp := int(l.nc.MaxPayload())
		const elem = 8
		big := ((mp-dp.HeaderSize)/elem + 1) * elem
		h, ok := l.join(rolePUSH, liveType(dp.TypeCF32), joinOpts{})
		if !ok {
			return
		}
		small := samples(dp.TypeCF32, 5, 3)
		outs := l.send(h, 0, fill(big, []byte{1, 2, 3, 4, 5, 6, 7, 8}), &conformpb.DopplerLiveFrame{Payload: small})
		input := fmt.Sprintf("max_payload %d; a PUSH of CF32 sends a frame of %d payload bytes, then one of %d", mp, big, len(small))
		want := []string{"refused " + codeName(int32(dp.ErrTooLarge)), "sent"}
		var got []string
		for _, o := range outs {
			if o.Refused != nil {
				got = append(got, "refused "+codeName(o.Refused.Code))
			} else {
				got = append(got, "sent")
			}
		}
		if !evidence.Equal(want, got) {
			t.Fail(reports.Evidence{Message: "what PUSH answered", Input: input, Expected: strings.Join(want, "\n"),
				Got: strings.Join(got, "\n"), Diff: evidence.Format(evidence.DiffAt("outputs", want, got))})
		}
		st, err := l.stream()
		if err != nil {
			t.Failf("the work queue %s does not exist after a PUSH socket sent: %v", l.ep.StreamName(), err)
			return
		}
		ctx, cancel := context.WithTimeout(t.Context(), connectWait(l.t))
		defer cancel()
		info, err := st.Info(ctx)
		if err != nil {
			t.Harnessf("read the work queue: %v", err)
		}
		var stored []string
		for seq := info.State.FirstSeq; seq <= info.State.LastSeq && info.State.Msgs > 0; seq++ {
			m, err := st.GetMsg(ctx, seq)
			if err != nil {
				continue
			}
			f, werr := checkWire(m.Data)
			switch {
			case werr != nil:
				stored = append(stored, fmt.Sprintf("a %d-byte message that %v", len(m.Data), werr))
			default:
				stored = append(stored, digest(f.Payload))
			}
		}
		if wantStored := []string{digest(small)}; !evidence.Equal(wantStored, stored) {
			t.Fail(reports.Evidence{Message: "what the work queue holds", Input: input, Expected: strings.Join(wantStored, "\n"),
				Got: strings.Join(stored, "\n"), Diff: evidence.Format(evidence.DiffAt("messages in the work queue", wantStored, stored))})
		}
	})
}
