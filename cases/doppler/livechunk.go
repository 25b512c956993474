package doppler

import (
	"context"
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/google/go-cmp/cmp"

	"github.com/conform-suite/conform/cases"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	dp "github.com/conform-suite/conform/ref/doppler"
	"github.com/conform-suite/conform/reports"
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
		l.t.Fail(reports.Evidence{Message: "the SUB did not deliver the conforming frame published after the chunks",
			Expected: frameText(900, dp.TypeCI16, sp), Got: strings.Join(eventTexts(evs), "\n")})
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
		if !cmp.Equal(want, got) {
			t.Fail(reports.Evidence{Message: what, Input: describeChunks(msgs, nil),
				Expected: strings.Join(want, "\n"), Got: strings.Join(got, "\n"), Diff: cmp.Diff(want, got)})
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
				t.Fail(reports.Evidence{Message: what + ": frame " + fmt.Sprint(seq) + " was delivered", Input: describeChunks(msgs, other),
					Expected: fmt.Sprintf("nothing of frame %d delivered", seq), Got: strings.Join(eventTexts(evs), "\n")})
			}
		}
		invalid := false
		for _, r := range refusalsOf(evs) {
			invalid = invalid || r.GetCode() == int32(dp.ErrInvalid)
		}
		if mustReport && !invalid {
			t.Fail(reports.Evidence{Message: what + ": the frame was not dropped with DP_ERR_INVALID", Input: describeChunks(msgs, other),
				Expected: "a refusal " + codeName(int32(dp.ErrInvalid)), Got: strings.Join(eventTexts(evs), "\n")})
		}
		t.Note("the SUT reported: %s", strings.Join(eventTexts(evs), "; "))
	})
}

// liveChunking is doppler §4 on a real subscription, and PUB's and PUSH's
// size rules at the broker's own max_payload.
func (s *suite) liveChunking() []cases.Case {
	S := "doppler-streaming §4; RECONSTRUCTED §3"
	return []cases.Case{
		reconstructed(must(cases.Case{
			ID:    "doppler/4/live-chunks-in-order",
			Title: "A SUB handed a frame's chunks in order delivers one logical frame: CHUNKED cleared, num_samples and payload_bytes the totals, the payload whole; never a chunk",
			Spec:  S,
			Run: func(t *cases.T) {
				p, chunks := chunkedFrame(5, 1)
				judgeWhole(t, "four chunks of frame 5, in order", chunks, []string{reassembled(5, p)})
			},
		})),
		reconstructed(must(cases.Case{
			ID:    "doppler/4/live-chunks-reordered",
			Title: "A SUB reassembles a frame whose chunks arrive out of order, placing each by its chunk_index",
			Spec:  S,
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
		})),
		reconstructed(must(cases.Case{
			ID:    "doppler/4/live-duplicated-index",
			Title: "A repeat of a chunk index already seen is a no-op: the frame is delivered once, its payload unchanged",
			Spec:  S,
			Run: func(t *cases.T) {
				p, c := chunkedFrame(7, 3)
				judgeWhole(t, "the chunks of frame 7 with indices 1 and 0 repeated", [][]byte{c[0], c[1], c[1], c[2], c[0], c[3]},
					[]string{reassembled(7, p)})
			},
		})),
		reconstructed(must(cases.Case{
			ID:    "doppler/4/live-missing-chunk",
			Title: "A lost chunk loses its frame: a SUB that never gets one chunk of a frame delivers nothing of it, and delivers the next frame",
			Spec:  S,
			Run: func(t *cases.T) {
				_, c := chunkedFrame(8, 4)
				judgeLost(t, "chunks 0, 1 and 3 of frame 8, chunk 2 lost", 8, [][]byte{c[0], c[1], c[3]}, nil, false)
			},
		})),
		reconstructed(must(cases.Case{
			ID:    "doppler/4/live-interleaved-publisher",
			Title: "A message from a different publisher arriving mid-frame fails the sequence check and the whole frame is dropped with DP_ERR_INVALID",
			Spec:  S,
			Run: func(t *cases.T) {
				_, a := chunkedFrame(7, 5)
				_, b := chunkedFrame(0, 6) // the second publisher's own first frame
				judgeLost(t, "frame 7 with a chunk of another publisher's frame 0 between its chunks 1 and 2", 7,
					[][]byte{a[0], a[1], b[0], a[2], a[3]}, map[int]bool{2: true}, true)
			},
		})),
		reconstructed(must(cases.Case{
			ID:    "doppler/4/live-count-disagreement",
			Title: "Reassembly accepts a chunk only if it agrees on the count: a chunk of the frame's sequence claiming another chunk_count is refused and the frame is lost",
			Spec:  S,
			Run: func(t *cases.T) {
				_, c := chunkedFrame(9, 7)
				bad := append([]byte(nil), c[2]...)
				binary.LittleEndian.PutUint32(bad[dp.HeaderSize+4:], 5)
				judgeLost(t, "frame 9 whose chunk 2 claims chunk_count 5 instead of 4", 9, [][]byte{c[0], c[1], bad, c[3]}, nil, true)
			},
		})),
		reconstructed(must(cases.Case{
			ID:    "doppler/4/live-pub-chunks-at-max-payload",
			Title: "A PUB chunks a frame that does not fit the max_payload its connection reports, element-aligned, every chunk sharing the frame's sequence; frames that fit go whole",
			Spec:  "doppler-streaming §4, §7, §8; RECONSTRUCTED §3",
			Run:   livePubChunks,
		})),
		reconstructed(must(cases.Case{
			ID:    "doppler/4/live-push-oversized-refused",
			Title: "PUSH does not chunk: a frame that does not fit the connection's max_payload is refused with DP_ERR_TOO_LARGE and nothing reaches the work queue, while a frame that fits is pushed whole",
			Spec:  S,
			Run:   livePushOversized,
		})),
	}
}

// livePubChunks has the SUT publish a small frame, a CF64 frame one sample
// larger than what fits the broker's max_payload, and a small frame, and
// judges the messages conform takes off <base>.pub.cf64.
func livePubChunks(t *cases.T) {
	withLive(t, func(l *live) {
		mp := int(l.nc.MaxPayload())
		const elem = 16
		big := ((mp-dp.HeaderSize)/elem + 1) * elem
		pattern := samples(dp.TypeCF64, 15, 9)[:239] // a prime length, so chunks differ
		sub := l.watch(l.ep.Base + ".>")
		h, ok := l.join(rolePUB, liveType(dp.TypeCF64), joinOpts{})
		if !ok {
			return
		}
		small1, small2 := samples(dp.TypeCF64, 3, 1), samples(dp.TypeCF64, 2, 2)
		outs := l.send(h, 0, &conformpb.DopplerLiveFrame{Payload: small1}, fill(big, pattern), &conformpb.DopplerLiveFrame{Payload: small2})
		for i, o := range outs {
			if o.Refused != nil {
				t.Failf("the PUB refused frame %d: %s", i, describeRefusal(o.Refused))
				return
			}
		}
		_, sizes := wantSplit(big, elem, mp)
		msgs := next(sub, len(sizes)+2)
		input := fmt.Sprintf("max_payload %d (read from conform's connection); a PUB of CF64 sends frames of %d, %d and %d payload bytes",
			mp, len(small1), big, len(small2))
		var subjects []string
		for _, m := range msgs {
			subjects = append(subjects, m.Subject)
		}
		wantSubjects := make([]string, len(sizes)+2)
		for i := range wantSubjects {
			wantSubjects[i] = l.ep.PubSubject(dp.TypeCF64)
		}
		if !cmp.Equal(wantSubjects, subjects) {
			t.Fail(reports.Evidence{Message: "the messages the PUB put on the broker", Input: input,
				Expected: fmt.Sprintf("%d messages on %s", len(wantSubjects), wantSubjects[0]), Got: strings.Join(subjects, "\n"),
				Diff: cmp.Diff(wantSubjects, subjects)})
			return
		}
		first, last := msgs[0].Data, msgs[len(msgs)-1].Data
		var chunks [][]byte
		for _, m := range msgs[1 : len(msgs)-1] {
			chunks = append(chunks, m.Data)
		}
		want := []string{frameText(0, dp.TypeCF64, small1), frameText(2, dp.TypeCF64, small2)}
		got := []string{wireText(first), wireText(last)}
		if !cmp.Equal(want, got) {
			t.Fail(reports.Evidence{Message: "the frames before and after the large one go whole, numbered 0 and 2", Input: input,
				Expected: strings.Join(want, "\n"), Got: strings.Join(got, "\n"), Diff: cmp.Diff(want, got)})
		}
		split := gotSplit(chunks, dp.LittleEndian)
		if wantView := (splitView{Chunked: true, Sizes: sizes}); !cmp.Equal(wantView, split) {
			t.Fail(reports.Evidence{Message: "how the large frame was cut at the broker's max_payload", Input: input,
				Expected: fmt.Sprintf("%+v", wantView), Got: fmt.Sprintf("%+v", split), Diff: cmp.Diff(wantView, split)})
			return
		}
		head, err := dp.DecodeHeader(chunks[0], dp.LittleEndian)
		if err != nil {
			t.Failf("the first chunk has no header")
			return
		}
		payload := expand(big, pattern)
		f, _ := dp.NewFrame(dp.TypeCF64, dp.LittleEndian, payload)
		f.Header.Sequence, f.Header.TimestampNs, f.Header.SampleRateHz = 1, head.TimestampNs, head.SampleRateHz
		if bad := structure(f, chunks, dp.LittleEndian); len(bad) > 0 {
			t.Fail(reports.Evidence{Message: "the chunks of the large frame, sent as frame 1", Input: input,
				Expected: "every chunk CHUNKED, with sequence 1, its own counts, and a chunk block of the frame's totals; the payloads in order the frame's",
				Got:      strings.Join(bad, "\n")})
		}
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
		if !cmp.Equal(want, got) {
			t.Fail(reports.Evidence{Message: "what PUSH answered", Input: input, Expected: strings.Join(want, "\n"),
				Got: strings.Join(got, "\n"), Diff: cmp.Diff(want, got)})
		}
		st, err := l.stream()
		if err != nil {
			t.Failf("the work queue %s does not exist after a PUSH socket sent: %v", l.ep.StreamName(), err)
			return
		}
		ctx, cancel := context.WithTimeout(t.Context(), connectWait)
		defer cancel()
		info, err := st.Info(ctx)
		if err != nil {
			panic(&cases.Abort{Outcome: reports.Error, Kind: "harness", Message: "read the work queue: " + err.Error()})
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
		if wantStored := []string{digest(small)}; !cmp.Equal(wantStored, stored) {
			t.Fail(reports.Evidence{Message: "what the work queue holds", Input: input, Expected: strings.Join(wantStored, "\n"),
				Got: strings.Join(stored, "\n"), Diff: cmp.Diff(wantStored, stored)})
		}
	})
}
