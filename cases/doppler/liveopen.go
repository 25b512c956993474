package doppler

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/conform-suite/conform/cases"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	dp "github.com/conform-suite/conform/ref/doppler"
)

// liveOpen holds the informational live cases: what doppler §9 does not
// promise and what §10 and §11 leave open. Each records what the SUT did
// and never fails.
func liveOpen(k *cases.Kit, _ *vectors) []cases.Case {
	return []cases.Case{
		k.Info(func() cases.Case {
			return cases.Case{
				ID:           "doppler/9/live-duplicate-frame",
				Title:        "What a SUB does with the same whole frame published twice (§9: PUB/SUB is at-most-once and promises no deduplication)",
				Spec:         "doppler-streaming §9",
				Profile:      LiveProfile,
				Requirements: []string{"doppler-streaming§9#2"},
				Run: func(t *cases.T) {
					withLive(t, func(l *live) {
						h, ok := l.subscribeAll()
						if !ok {
							return
						}
						m := frameMessage(dp.TypeCI16, 4, samples(dp.TypeCI16, 2, 4))
						sm, _ := sentinel(900)
						l.publish(l.nc, l.ep.PubSubject(dp.TypeCI16), m, m, sm)
						t.Note("frame 4 published twice, then frame 900: %s", strings.Join(eventTexts(l.gatherUntil(h, 900)), "; "))
					})
				},
			}
		}),
		k.Info(func() cases.Case {
			return cases.Case{
				ID:           "doppler/10/live-pull-before-push",
				Title:        "What a PULL worker does on a broker that has never carried DP_WORK_<base> (gap 2: the Push side creates the stream, so a worker started first fails)",
				Spec:         "doppler-streaming §10, §5",
				Profile:      LiveProfile,
				Requirements: []string{"doppler-streaming§5#8"},
				Run: func(t *cases.T) {
					withLive(t, func(l *live) {
						l.needJetStream()
						start := time.Now()
						r := l.joinResult(rolePULL, 0, joinOpts{})
						took := time.Since(start).Round(time.Millisecond)
						if r.Refused != nil {
							t.Note("the join was refused after %v: %s (the reference refuses at once with DP_ERR: the stream is not found)", took, describeRefusal(r.Refused))
							return
						}
						t.Note("the worker joined in %v although %s did not exist", took, l.ep.StreamName())
					})
				},
			}
		}),
		k.Info(func() cases.Case {
			return cases.Case{
				ID:           "doppler/11/live-req-rep-round-trip",
				Title:        "The REQ/REP round trip through the SUT's REP, halved — §11's one latency this layer can measure without two synchronized clocks (assuming a symmetric path)",
				Spec:         "doppler-streaming §11",
				Profile:      LiveProfile,
				Requirements: []string{"doppler-streaming§11#1"},
				Run: func(t *cases.T) {
					withLive(t, func(l *live) {
						if _, ok := l.join(roleREP, 0, joinOpts{reply: &conformpb.DopplerReplyPlan{Echo: true}}); !ok {
							return
						}
						var rtts []time.Duration
						for i := range 20 {
							start := time.Now()
							if _, err := l.request(frameMessage(dp.TypeCF32, uint64(i), samples(dp.TypeCF32, 64, byte(i)))); err != nil {
								t.Note("request %d got no reply: %v", i, err)
								return
							}
							rtts = append(rtts, time.Since(start))
						}
						slices.Sort(rtts)
						med := rtts[len(rtts)/2]
						t.Note("20 CF32 requests of 64 samples through conform's client and the SUT's REP: median round trip %v, half %v (min %v, max %v)",
							med, med/2, rtts[0], rtts[len(rtts)-1])
					})
				},
			}
		}),
		k.Info(func() cases.Case {
			return cases.Case{
				ID:      "doppler/9/live-max-payload-reported",
				Title:   "The max_payload each SUT socket read from its connection, beside the one conform's connection reports (§8: discovered, not assumed; §9 promises no more)",
				Spec:    "doppler-streaming §9, §8",
				Profile: LiveProfile,
				Run: func(t *cases.T) {
					withLive(t, func(l *live) {
						r := l.joinResult(rolePUB, liveType(dp.TypeCI8), joinOpts{})
						got := "refused"
						if r.Refused == nil {
							got = fmt.Sprint(r.MaxPayload)
						}
						t.Note("conform's connection reports max_payload %d; the SUT's PUB socket read %s", l.nc.MaxPayload(), got)
					})
				},
			}
		}),
	}
}
