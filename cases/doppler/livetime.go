package doppler

import (
	"fmt"
	"strings"
	"time"

	"github.com/conform-suite/conform/cases"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	dp "github.com/conform-suite/conform/ref/doppler"
	"github.com/conform-suite/conform/reports"
	"github.com/conform-suite/conform/reports/evidence"
)

// clockSlack is how far a SUT's CLOCK_REALTIME may stand from conform's own
// when the two run on different hosts: wide enough for a rig whose clock is
// not synchronised, narrow enough that a stamp in the wrong unit (micro- or
// milliseconds), of the wrong clock (time since boot) or never set (0) falls
// far outside it.
const clockSlack = 10 * time.Minute

// Overrides the timestamp cases set: far from any time a clock reads now.
const (
	overrideA uint64 = 1_000_000_000_000_000_000 // 2001-09-09
	overrideB uint64 = 7
)

// nearNow reports whether ns, a CLOCK_REALTIME reading in nanoseconds, lies
// within clockSlack of the interval [from, to] of conform's own clock.
func nearNow(ns uint64, from, to time.Time) bool {
	t := time.Unix(0, int64(min(ns, 1<<63-1)))
	return !t.Before(from.Add(-clockSlack)) && !t.After(to.Add(clockSlack))
}

// stampText renders a timestamp_ns for evidence, with the time it names.
func stampText(ns uint64) string {
	return fmt.Sprintf("%d (%s)", ns, time.Unix(0, int64(min(ns, 1<<63-1))).UTC().Format(time.RFC3339Nano))
}

// clock reads the SUT's doppler clock.
func clock(t *cases.T) uint64 {
	r := do(t, &conformpb.DopplerOp{Op: &conformpb.DopplerOp_Clock{Clock: &conformpb.DopplerClock{}}}).GetClock()
	if r == nil {
		t.Protocolf("doppler clock answered with the result of another op")
	}
	return r.TimestampNs
}

// liveTime is doppler §7's time: a frame is stamped at send with
// CLOCK_REALTIME nanoseconds, a sender takes a one-shot override, and the
// clock is exposed.
func liveTime(k *cases.Kit, _ *vectors) []cases.Case {
	return []cases.Case{
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "doppler/7/live-timestamp-stamped-at-send",
				Title:        "A PUB stamps each frame's timestamp_ns with CLOCK_REALTIME nanoseconds at send: within ten minutes of conform's own clock around the send",
				Spec:         "doppler-streaming §7",
				Profile:      LiveProfile,
				Requirements: []string{"doppler-streaming§7#3"},
				Run:          liveStamped,
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "doppler/7/live-timestamp-override-one-send",
				Title:        "A sender's timestamp override applies to the next send only and then clears itself: the frame sent with it carries it, the next one is stamped at send",
				Spec:         "doppler-streaming §7",
				Profile:      LiveProfile,
				Requirements: []string{"doppler-streaming§7#5"},
				Run:          liveOverride,
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "doppler/7/live-clock-exposed",
				Title:        "The clock a sender stamps with is exposed: a frame sent between two readings of the SUT's doppler clock carries a timestamp_ns between them, and the clock reads CLOCK_REALTIME",
				Spec:         "doppler-streaming §7",
				Profile:      LiveProfile,
				Requirements: []string{"doppler-streaming§7#3", "doppler-streaming§7#6"},
				Run:          liveClock,
			}
		}),
	}
}

func liveStamped(t *cases.T) {
	withLive(t, func(l *live) {
		sub := l.watch(l.ep.Base + ".>") // the subject is judged elsewhere
		h, ok := l.join(rolePUB, liveType(dp.TypeCI16), joinOpts{})
		if !ok {
			return
		}
		from := time.Now()
		l.send(h, 0, &conformpb.DopplerLiveFrame{Payload: samples(dp.TypeCI16, 1, 1)}, &conformpb.DopplerLiveFrame{Payload: samples(dp.TypeCI16, 1, 2)})
		to := time.Now()
		msgs := l.next(sub, 2)
		if len(msgs) != 2 {
			t.Failf("%d of the PUB's 2 frames reached the broker", len(msgs))
			return
		}
		for i, m := range msgs {
			f, err := checkWire(m.Data)
			if err != nil {
				t.Failf("frame %d: a message that %v", i, err)
				continue
			}
			if !nearNow(f.Header.TimestampNs, from, to) {
				t.Fail(evidence.Named("header.timestampNs", reports.Evidence{Message: fmt.Sprintf("the timestamp_ns of frame %d", i),
					Input:    "a PUB of CI16 sends two frames",
					Expected: fmt.Sprintf("CLOCK_REALTIME nanoseconds within %v of %s .. %s (conform's clock around the sends)", clockSlack, from.UTC().Format(time.RFC3339Nano), to.UTC().Format(time.RFC3339Nano)),
					Got:      stampText(f.Header.TimestampNs)}))
			}
		}
	})
}

func liveOverride(t *cases.T) {
	withLive(t, func(l *live) {
		sub := l.watch(l.ep.Base + ".>") // the subject is judged elsewhere
		h, ok := l.join(rolePUB, liveType(dp.TypeCI16), joinOpts{})
		if !ok {
			return
		}
		a, b := overrideA, overrideB
		from := time.Now()
		l.send(h, 0,
			&conformpb.DopplerLiveFrame{Payload: samples(dp.TypeCI16, 1, 1), TimestampNs: &a},
			&conformpb.DopplerLiveFrame{Payload: samples(dp.TypeCI16, 1, 2)},
			&conformpb.DopplerLiveFrame{Payload: samples(dp.TypeCI16, 1, 3), TimestampNs: &b},
			&conformpb.DopplerLiveFrame{Payload: samples(dp.TypeCI16, 1, 4)})
		to := time.Now()
		now := fmt.Sprintf("stamped at send (within %v of conform's clock)", clockSlack)
		want := []string{stampText(a), now, stampText(b), now}
		var got []string
		for _, m := range l.next(sub, 4) {
			f, err := checkWire(m.Data)
			switch {
			case err != nil:
				got = append(got, "a message that "+err.Error())
			case nearNow(f.Header.TimestampNs, from, to):
				got = append(got, now)
			default:
				got = append(got, stampText(f.Header.TimestampNs))
			}
		}
		if !evidence.Equal(want, got) {
			t.Fail(reports.Evidence{Message: "the timestamp_ns of four frames of one PUB",
				Input:    fmt.Sprintf("a PUB of CI16 sends frame 0 with the override %d, frame 1 without, frame 2 with the override %d, frame 3 without", a, b),
				Expected: strings.Join(want, "\n"), Got: strings.Join(got, "\n"), Diff: evidence.Format(evidence.DiffAt("header.timestampNs of each message on the broker", want, got))})
		}
	})
}

func liveClock(t *cases.T) {
	withLive(t, func(l *live) {
		sub := l.watch(l.ep.Base + ".>") // the subject is judged elsewhere
		h, ok := l.join(rolePUB, liveType(dp.TypeCI16), joinOpts{})
		if !ok {
			return
		}
		from := time.Now()
		before := clock(t)
		l.send(h, 0, &conformpb.DopplerLiveFrame{Payload: samples(dp.TypeCI16, 1, 1)})
		after := clock(t)
		to := time.Now()
		if !nearNow(before, from, to) {
			t.Fail(evidence.Named("timestampNs (the clock's answer)", reports.Evidence{Message: "the SUT's doppler clock", Input: "a clock reading",
				Expected: fmt.Sprintf("CLOCK_REALTIME nanoseconds within %v of conform's clock", clockSlack), Got: stampText(before)}))
		}
		msgs := l.next(sub, 1)
		if len(msgs) != 1 {
			t.Failf("the PUB's frame did not reach the broker")
			return
		}
		f, err := checkWire(msgs[0].Data)
		if err != nil {
			t.Failf("the PUB's frame: a message that %v", err)
			return
		}
		if ts := f.Header.TimestampNs; ts < before || ts > after {
			t.Fail(evidence.Named("header.timestampNs", reports.Evidence{Message: "a frame sent between two readings of the SUT's clock",
				Input:    fmt.Sprintf("clock %d, a PUB sends one frame, clock %d", before, after),
				Expected: fmt.Sprintf("timestamp_ns between %d and %d", before, after), Got: stampText(ts)}))
		}
	})
}
