package doppler

import (
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/google/go-cmp/cmp"

	"github.com/conform-suite/conform/cases"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	dp "github.com/conform-suite/conform/ref/doppler"
	"github.com/conform-suite/conform/reports"
)

// Field offsets conform writes into crafted headers. They are the layout of
// RECONSTRUCTED §3's table, restated here only to corrupt a header the
// reference encoded; the reference's own constants are unexported.
const (
	atVersionMajor = 8
	atVersionMinor = 10
	atFlags        = 12
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
		if !cmp.Equal(want, got) {
			t.Fail(reports.Evidence{Message: what,
				Input:    fmt.Sprintf("published on %s to a little-endian SUB of %s:\n%s", subject, l.ep.PubWildcard(), strings.Join(input, "\n")),
				Expected: strings.Join(want, "\n"), Got: strings.Join(got, "\n"), Diff: cmp.Diff(want, got)})
		}
	})
}

// liveReceive is doppler §3 on a real subscription: the receiver's checks,
// applied to what the broker delivers.
func (s *suite) liveReceive() []cases.Case {
	S := "doppler-streaming §3; RECONSTRUCTED §3"
	return []cases.Case{
		reconstructed(must(cases.Case{
			ID:    "doppler/3/live-every-type-delivered",
			Title: "A SUB of every type (<base>.pub.*) delivers a conforming frame of each of the seven types, published on its own subject, with its header and payload intact",
			Spec:  "doppler-streaming §3, §5; RECONSTRUCTED §3",
			Run: func(t *cases.T) {
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
							// Any minor version is accepted (RECONSTRUCTED §3).
							binary.LittleEndian.PutUint16(m[atVersionMinor:], 7)
						}
						subject := l.ep.PubSubject(typ)
						l.publish(l.nc, subject, m)
						want = append(want, frameText(uint64(10+i), typ, p))
						input = append(input, fmt.Sprintf("%s on %s", wireText(m), subject))
					}
					evs := l.gatherUntil(h, uint64(10+len(dp.Types())-1))
					got = eventTexts(evs)
					if !cmp.Equal(want, got) {
						t.Fail(reports.Evidence{Message: "one conforming frame of each type, the CF64 one of version 2.7",
							Input: strings.Join(input, "\n"), Expected: strings.Join(want, "\n"), Got: strings.Join(got, "\n"),
							Diff: cmp.Diff(want, got)})
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
			},
		})),
		reconstructed(must(cases.Case{
			ID:    "doppler/3/live-bad-magic-refused",
			Title: "A SUB refuses a message whose magic is not doppler's, and one whose magic is byte-swapped (a sender of the other endianness, reported as cross-endian), and goes on receiving",
			Spec:  S,
			Run: func(t *cases.T) {
				notOurs := corrupt(1, func(m []byte) { copy(m, "NOTDOPPL") })
				swapped := frameMessageOrder(dp.TypeCI16, 2, samples(dp.TypeCI16, 4, 2), dp.BigEndian)
				judgeReceived(t, "a foreign magic and a big-endian sender's frame at a little-endian SUB", []crafted{
					{"a CI16 frame whose magic is \"NOTDOPPL\"", notOurs, refusedText(conformpb.DopplerVerdict_DOPPLER_VERDICT_NOT_DOPPLER)},
					{"a conforming CI16 frame from a big-endian sender", swapped, refusedText(conformpb.DopplerVerdict_DOPPLER_VERDICT_CROSS_ENDIAN)},
				})
			},
		})),
		reconstructed(must(cases.Case{
			ID:    "doppler/3/live-other-major-refused",
			Title: "A SUB refuses a frame of another major version (1 or 3) rather than guessing at it",
			Spec:  S,
			Run: func(t *cases.T) {
				var msgs []crafted
				for i, major := range []uint16{1, 3} {
					m := corrupt(uint64(i), func(m []byte) { binary.LittleEndian.PutUint16(m[atVersionMajor:], major) })
					msgs = append(msgs, crafted{fmt.Sprintf("a CI16 frame of version %d.0", major), m,
						refusedText(conformpb.DopplerVerdict_DOPPLER_VERDICT_OTHER_MAJOR_VERSION)})
				}
				judgeReceived(t, "frames of major versions 1 and 3", msgs)
			},
		})),
		reconstructed(must(cases.Case{
			ID:    "doppler/3/live-unknown-flag-refused",
			Title: "A SUB refuses a frame carrying a flag bit outside DP_FLAG_KNOWN, because an unknown block would move where the payload starts",
			Spec:  S,
			Run: func(t *cases.T) {
				var msgs []crafted
				for i, flag := range []uint32{0x2, 0x80000000} {
					m := corrupt(uint64(i), func(m []byte) { binary.LittleEndian.PutUint32(m[atFlags:], flag) })
					msgs = append(msgs, crafted{fmt.Sprintf("a CI16 frame with flags %#x", flag), m,
						refusedText(conformpb.DopplerVerdict_DOPPLER_VERDICT_UNKNOWN_FLAGS)})
				}
				judgeReceived(t, "frames with unknown flag bits", msgs)
			},
		})),
		reconstructed(must(cases.Case{
			ID:    "doppler/3/live-payload-mismatch-refused",
			Title: "A SUB refuses a frame whose payload_bytes is not what the transport delivered: one claiming more samples than the message carries (v1's out-of-bounds read), one claiming fewer",
			Spec:  S,
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
		})),
		reconstructed(must(cases.Case{
			ID:    "doppler/3/live-count-mismatch-refused",
			Title: "A SUB refuses a frame whose num_samples × element size is not payload_bytes, including a count whose product overflows 64 bits",
			Spec:  S,
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
		})),
	}
}

// frameMessageOrder is frameMessage written by a sender of byte order o.
func frameMessageOrder(typ dp.Type, seq uint64, payload []byte, o dp.Order) []byte {
	f, err := dp.NewFrame(typ, o, payload)
	if err != nil {
		panic(err)
	}
	f.Header.Sequence = seq
	return f.AppendMessage(nil, o)
}
