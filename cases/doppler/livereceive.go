package doppler

import (
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/conform-suite/conform/corpus"
	"github.com/conform-suite/conform/reports/evidence"

	"github.com/conform-suite/conform/cases"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	dp "github.com/conform-suite/conform/ref/doppler"
	"github.com/conform-suite/conform/reports"
)

// Field offsets conform writes into crafted headers. They are the pinned
// layout (reconstructed§doppler-header#1), restated here only to corrupt a
// header the reference encoded; the reference's own constants are
// unexported.
const (
	atVersionMajor = 8
	atVersionMinor = 10
	atFlags        = 12
	atDataRep      = 20
	atNumSamples   = 40
	atPayloadBytes = 48
)

// crafted is one message conform publishes to a subscribed SUT, and what a
// receiver must make of it.
type crafted struct {
	what string
	msg  []byte
	want string // an eventText
}

// corrupt returns a conforming CI16 frame of sequence seq with edit applied
// to its bytes.
func corrupt(seq uint64, edit func(m []byte)) []byte {
	m := frameMessage(dp.TypeCI16, seq, samples(dp.TypeCI16, 4, byte(seq)))
	edit(m)
	return m
}

func refusedText(v conformpb.DopplerVerdict) string {
	return "refused " + codeName(int32(dp.ErrInvalid)) + " " + verdictSlug(v)
}

// subscribeAll joins the SUT as a little-endian SUB of every type (the
// wildcard <base>.pub.*) and returns its handle.
func (l *live) subscribeAll() (uint64, bool) {
	return l.join(roleSUB, conformpb.DopplerFrameType_DOPPLER_FRAME_TYPE_UNSPECIFIED, joinOpts{})
}

// judgeReceived has the SUT subscribe, publishes the crafted messages on
// <base>.pub.ci16 followed by a sentinel frame, and compares what the SUT
// delivered and refused, in order, with what each message must produce.
func judgeReceived(t *cases.T, what string, msgs []crafted) {
	withLive(t, func(l *live) {
		h, ok := l.subscribeAll()
		if !ok {
			return
		}
		var raw [][]byte
		var want, input []string
		for i, c := range msgs {
			raw = append(raw, c.msg)
			want = append(want, c.want)
			input = append(input, fmt.Sprintf("message %d: %s", i, c.what))
		}
		sm, sp := sentinel(900)
		raw = append(raw, sm)
		want = append(want, frameText(900, dp.TypeCI16, sp))
		input = append(input, fmt.Sprintf("message %d: a conforming CI16 frame (sequence 900), published last", len(msgs)))
		subject := l.ep.PubSubject(dp.TypeCI16)
		l.publish(l.nc, subject, raw...)
		got := eventTexts(l.gatherUntil(h, 900))
		if !evidence.Equal(want, got) {
			t.Fail(reports.Evidence{Message: what,
				Input:    fmt.Sprintf("published on %s to a little-endian SUB of %s:\n%s", subject, l.ep.PubWildcard(), strings.Join(input, "\n")),
				Expected: strings.Join(want, "\n"), Got: strings.Join(got, "\n"), Diff: evidence.Format(evidence.DiffAt("events", want, got))})
		}
	})
}

// liveReceive is doppler §3 on a real subscription: the receiver's checks,
// applied to what the broker delivers, and the byte order a socket is
// opened in.
func liveReceive(k *cases.Kit, vs *vectors) []cases.Case {
	return []cases.Case{
		k.Must(func() cases.Case {
			return cases.Case{
				ID:      "doppler/3/live-every-type-delivered",
				Title:   "A SUB of every type (<base>.pub.*) delivers a conforming frame of each of the seven types, published on its own subject, with its header and payload intact",
				Spec:    "doppler-streaming §3, §5",
				Profile: LiveProfile,
				Requirements: []string{"doppler-streaming§1#1", "doppler-streaming§2#1", "doppler-streaming§5#1", "doppler-streaming§5#4",
					"reconstructed§doppler-subjects#1", "reconstructed§doppler-header#3"},
				Run: liveEveryType,
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:      "doppler/3/live-bad-magic-refused",
				Title:   "A SUB refuses a message whose magic is not doppler's, and one whose magic is byte-swapped (a sender of the other endianness, reported as cross-endian), and goes on receiving",
				Spec:    "doppler-streaming §3",
				Profile: LiveProfile,
				Requirements: []string{"doppler-streaming§3#7", "doppler-streaming§3#10", "doppler-streaming§9#3",
					"reconstructed§doppler-checks#5"},
				Run: func(t *cases.T) {
					notOurs := corrupt(1, func(m []byte) { copy(m, "NOTDOPPL") })
					swapped := frameMessageOrder(dp.TypeCI16, 2, samples(dp.TypeCI16, 4, 2), dp.BigEndian)
					judgeReceived(t, "a foreign magic and a big-endian sender's frame at a little-endian SUB", []crafted{
						{"a CI16 frame whose magic is \"NOTDOPPL\"", notOurs, refusedText(conformpb.DopplerVerdict_DOPPLER_VERDICT_NOT_DOPPLER)},
						{"a conforming CI16 frame from a big-endian sender", swapped, refusedText(conformpb.DopplerVerdict_DOPPLER_VERDICT_CROSS_ENDIAN)},
					})
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "doppler/3/live-other-major-refused",
				Title:        "A SUB refuses a frame of another major version (1 or 3) rather than guessing at it",
				Spec:         "doppler-streaming §3",
				Profile:      LiveProfile,
				Requirements: []string{"doppler-streaming§3#11", "reconstructed§doppler-header#3"},
				Run: func(t *cases.T) {
					var msgs []crafted
					for i, major := range []uint16{1, 3} {
						m := corrupt(uint64(i), func(m []byte) { binary.LittleEndian.PutUint16(m[atVersionMajor:], major) })
						msgs = append(msgs, crafted{fmt.Sprintf("a CI16 frame of version %d.0", major), m,
							refusedText(conformpb.DopplerVerdict_DOPPLER_VERDICT_OTHER_MAJOR_VERSION)})
					}
					judgeReceived(t, "frames of major versions 1 and 3", msgs)
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "doppler/3/live-unknown-flag-refused",
				Title:        "A SUB refuses a frame carrying a flag bit outside DP_FLAG_KNOWN, because an unknown block would move where the payload starts",
				Spec:         "doppler-streaming §3",
				Profile:      LiveProfile,
				Requirements: []string{"doppler-streaming§3#12", "doppler-streaming§9#4", "reconstructed§doppler-header#4"},
				Run: func(t *cases.T) {
					var msgs []crafted
					for i, flag := range []uint32{0x2, 0x80000000} {
						m := corrupt(uint64(i), func(m []byte) { binary.LittleEndian.PutUint32(m[atFlags:], flag) })
						msgs = append(msgs, crafted{fmt.Sprintf("a CI16 frame with flags %#x", flag), m,
							refusedText(conformpb.DopplerVerdict_DOPPLER_VERDICT_UNKNOWN_FLAGS)})
					}
					judgeReceived(t, "frames with unknown flag bits", msgs)
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "doppler/3/live-payload-mismatch-refused",
				Title:        "A SUB refuses a frame whose payload_bytes is not what the transport delivered: one claiming more samples than the message carries (v1's out-of-bounds read), one claiming fewer",
				Spec:         "doppler-streaming §3",
				Profile:      LiveProfile,
				Requirements: []string{"doppler-streaming§3#13", "doppler-streaming§3#15"},
				Run: func(t *cases.T) {
					var msgs []crafted
					for i, claim := range []uint64{40, 8} { // the message carries 16 bytes, 4 samples
						m := corrupt(uint64(i), func(m []byte) {
							binary.LittleEndian.PutUint64(m[atPayloadBytes:], claim)
							binary.LittleEndian.PutUint64(m[atNumSamples:], claim/4)
						})
						msgs = append(msgs, crafted{fmt.Sprintf("a CI16 message of 16 payload bytes whose header claims %d samples, %d bytes", claim/4, claim), m,
							refusedText(conformpb.DopplerVerdict_DOPPLER_VERDICT_PAYLOAD_MISMATCH)})
					}
					judgeReceived(t, "headers whose payload_bytes disagrees with the message", msgs)
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "doppler/3/live-count-mismatch-refused",
				Title:        "A SUB refuses a frame whose num_samples × element size is not payload_bytes, including a count whose product overflows 64 bits",
				Spec:         "doppler-streaming §3",
				Profile:      LiveProfile,
				Requirements: []string{"doppler-streaming§3#14", "reconstructed§doppler-checks#3"},
				Run: func(t *cases.T) {
					wrong := corrupt(0, func(m []byte) { binary.LittleEndian.PutUint64(m[atNumSamples:], 5) })
					// 2^62 CI16 samples are 2^64 bytes, which wraps to the 0 the
					// header claims: only a product computed without overflow
					// refuses it.
					wraps := frameMessage(dp.TypeCI16, 1, nil)
					binary.LittleEndian.PutUint64(wraps[atNumSamples:], 1<<62)
					judgeReceived(t, "headers whose num_samples disagrees with payload_bytes", []crafted{
						{"a CI16 frame of 16 payload bytes claiming 5 samples", wrong, refusedText(conformpb.DopplerVerdict_DOPPLER_VERDICT_COUNT_MISMATCH)},
						{"an empty CI16 frame claiming 2^62 samples", wraps, refusedText(conformpb.DopplerVerdict_DOPPLER_VERDICT_COUNT_MISMATCH)},
					})
				},
			}
		}),
		k.Must(func() cases.Case {
			chunks := vs.Get("chunks-in-order-be")
			return cases.Case{
				ID:      "doppler/3/live-big-endian-socket",
				Title:   "A socket joined big-endian writes its frames in big-endian order (magic, fields, data_rep \"IEEE\") and reads in big-endian order: it delivers big-endian frames, whole or chunked, and refuses a little-endian one as cross-endian",
				Spec:    "doppler-streaming §3",
				Profile: LiveProfile,
				Requirements: []string{"doppler-streaming§3#5", "doppler-streaming§3#6", "doppler-streaming§3#7",
					"reconstructed§doppler-chunk#2"},
				Run: func(t *cases.T) { liveBigEndian(t, chunks) },
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "doppler/5/live-typed-sub-only-its-type",
				Title:        "A SUB of one type subscribes to <base>.pub.<type> alone: of a CF32, a CI8 and a CI16 frame published on their own subjects, a CI16 SUB delivers the CI16 frame only",
				Spec:         "doppler-streaming §5",
				Profile:      LiveProfile,
				Requirements: []string{"reconstructed§doppler-subjects#2"},
				Run:          liveTypedSub,
			}
		}),
	}
}

func liveEveryType(t *cases.T) {
	withLive(t, func(l *live) {
		h, ok := l.subscribeAll()
		if !ok {
			return
		}
		var want, got, input []string
		for i, typ := range dp.Types() {
			p := samples(typ, 3+i, byte(i))
			m := frameMessage(typ, uint64(10+i), p)
			if typ == dp.TypeCF64 {
				// Any minor version is accepted (reconstructed§doppler-header#3).
				binary.LittleEndian.PutUint16(m[atVersionMinor:], 7)
			}
			subject := l.ep.PubSubject(typ)
			l.publish(l.nc, subject, m)
			want = append(want, frameText(uint64(10+i), typ, p))
			input = append(input, fmt.Sprintf("%s on %s", wireText(m), subject))
		}
		evs := l.gatherUntil(h, uint64(10+len(dp.Types())-1))
		got = eventTexts(evs)
		if !evidence.Equal(want, got) {
			t.Fail(reports.Evidence{Message: "one conforming frame of each type, the CF64 one of version 2.7",
				Input: strings.Join(input, "\n"), Expected: strings.Join(want, "\n"), Got: strings.Join(got, "\n"),
				Diff: evidence.Format(evidence.DiffAt("events", want, got))})
		}
		for _, f := range deliveredOf(evs) {
			hd := f.GetHeader()
			if hd.GetMagic() != dp.Magic || hd.GetVersionMajor() != uint32(dp.VersionMajor) ||
				hd.GetSampleRateHz() != 1e6 || hd.GetTimestampNs() != 1_700_000_000_000_000_000+hd.GetSequence() {
				t.Failf("frame %d was delivered with magic %#x, version %d.%d, timestamp_ns %d, sample_rate_hz %g; it was published with magic %#x, version 2, timestamp_ns %d, sample_rate_hz 1e+06",
					hd.GetSequence(), hd.GetMagic(), hd.GetVersionMajor(), hd.GetVersionMinor(), hd.GetTimestampNs(), hd.GetSampleRateHz(),
					dp.Magic, 1_700_000_000_000_000_000+hd.GetSequence())
			}
		}
	})
}

// liveBigEndian has a big-endian PUB send a frame and reads its bytes off
// the wire, then has a big-endian SUB take a big-endian frame, a
// little-endian one and a big-endian chunked frame (the vector's messages).
func liveBigEndian(t *cases.T, chunks *corpus.DopplerVector) {
	withLive(t, func(l *live) {
		bigOrder := joinOpts{order: big}
		// The PUB's side: the bytes on the wire are a big-endian sender's.
		sub := l.watch(l.ep.Base + ".>")
		ph, ok := l.join(rolePUB, liveType(dp.TypeCI16), bigOrder)
		if !ok {
			return
		}
		p := samples(dp.TypeCI16, 3, 7)
		if out := l.send(ph, 0, &conformpb.DopplerLiveFrame{Payload: p})[0]; out.Refused != nil {
			t.Failf("the big-endian PUB refused a frame of 3 samples: %s", describeRefusal(out.Refused))
			return
		}
		want := l.ep.PubSubject(dp.TypeCI16) + ": big-endian " + frameText(0, dp.TypeCI16, p) + `, magic bytes 4d 52 54 53 52 4c 50 44, data_rep "IEEE"`
		got := "nothing"
		if ms := l.next(sub, 1); len(ms) == 1 {
			got = ms[0].Subject + ": " + wireTextOrder(ms[0].Data, dp.BigEndian)
		}
		if got != want {
			t.Fail(reports.Evidence{Message: "the frame a PUB joined big-endian put on the wire",
				Input: "a big-endian PUB of CI16 sends 3 samples", Expected: want, Got: got, Diff: evidence.Format(evidence.DiffAt("message on the broker", want, got))})
		}

		// The SUB's side.
		h, ok := l.join(roleSUB, conformpb.DopplerFrameType_DOPPLER_FRAME_TYPE_UNSPECIFIED, bigOrder)
		if !ok {
			return
		}
		own, other := samples(dp.TypeCI16, 2, 1), samples(dp.TypeCI16, 2, 2)
		msgs := [][]byte{frameMessageOrder(dp.TypeCI16, 1, own, dp.BigEndian), frameMessageOrder(dp.TypeCI16, 2, other, dp.LittleEndian)}
		msgs = append(msgs, hexes(chunks.Messages)...)
		sm, sp := sentinelOrder(900, dp.BigEndian)
		msgs = append(msgs, sm)
		l.publish(l.nc, l.ep.PubSubject(dp.TypeCI16), msgs...)
		wantEv := []string{frameText(1, dp.TypeCI16, own),
			refusedText(conformpb.DopplerVerdict_DOPPLER_VERDICT_CROSS_ENDIAN)}
		for _, d := range chunks.Delivered {
			wantEv = append(wantEv, frameText(d.Header.Sequence, dp.TypeCI16, d.Payload))
		}
		wantEv = append(wantEv, frameText(900, dp.TypeCI16, sp))
		gotEv := eventTexts(l.gatherUntil(h, 900))
		if !evidence.Equal(wantEv, gotEv) {
			t.Fail(reports.Evidence{Message: "what a SUB joined big-endian delivered and refused",
				Input: "published to a big-endian SUB of every type: a big-endian CI16 frame 1, a little-endian CI16 frame 2, " +
					"the chunks of " + chunks.Title + ", a big-endian frame 900",
				Expected: strings.Join(wantEv, "\n"), Got: strings.Join(gotEv, "\n"), Diff: evidence.Format(evidence.DiffAt("events", wantEv, gotEv))})
		}
	})
}

func liveTypedSub(t *cases.T) {
	withLive(t, func(l *live) {
		h, ok := l.join(roleSUB, liveType(dp.TypeCI16), joinOpts{})
		if !ok {
			return
		}
		cf, ci8, ci16 := samples(dp.TypeCF32, 2, 1), samples(dp.TypeCI8, 2, 2), samples(dp.TypeCI16, 2, 3)
		// One connection, in order: once the SUB has handled frame 3 it
		// would have had frames 1 and 2 too, had it subscribed to them.
		l.publish(l.nc, l.ep.PubSubject(dp.TypeCF32), frameMessage(dp.TypeCF32, 1, cf))
		l.publish(l.nc, l.ep.PubSubject(dp.TypeCI8), frameMessage(dp.TypeCI8, 2, ci8))
		l.publish(l.nc, l.ep.PubSubject(dp.TypeCI16), frameMessage(dp.TypeCI16, 3, ci16))
		want := []string{frameText(3, dp.TypeCI16, ci16)}
		got := eventTexts(l.gatherUntil(h, 3))
		if !evidence.Equal(want, got) {
			t.Fail(reports.Evidence{Message: "what a SUB of CI16 delivered",
				Input: fmt.Sprintf("a CF32 frame 1 on %s, a CI8 frame 2 on %s, a CI16 frame 3 on %s", l.ep.PubSubject(dp.TypeCF32),
					l.ep.PubSubject(dp.TypeCI8), l.ep.PubSubject(dp.TypeCI16)),
				Expected: strings.Join(want, "\n"), Got: strings.Join(got, "\n"), Diff: evidence.Format(evidence.DiffAt("events", want, got))})
		}
	})
}

// frameMessageOrder is frameMessage written by a sender of byte order o.
func frameMessageOrder(typ dp.Type, seq uint64, payload []byte, o dp.Order) []byte {
	f, err := dp.NewFrame(typ, o, payload)
	if err != nil {
		panic(err) // conform's own frames are whole elements
	}
	f.Header.Sequence = seq
	return f.AppendMessage(nil, o)
}

// sentinelOrder is sentinel written by a sender of byte order o.
func sentinelOrder(seq uint64, o dp.Order) ([]byte, []byte) {
	p := []byte("sentinel")
	return frameMessageOrder(dp.TypeCI16, seq, p, o), p
}
