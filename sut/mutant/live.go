package mutant

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"runtime"
	"time"

	messagepb "github.com/conform-suite/conform/proto/ranvier/message/v1"
	"github.com/conform-suite/conform/ref/live"
	"github.com/conform-suite/conform/ref/streams"
	"github.com/conform-suite/conform/sut/impl"
)

// liveMutants break the reference's live data-plane parts
// (sut/impl/liveops.go), each by setting one hook of ref/live.
var liveMutants = []Mutant{
	{
		Name: "publisher-announces-first-stream-only", Suite: "live", Profile: "ranvier-publisher",
		Bug: "a connection announces only the first stream under the requested name (ranvier-wire §4.2, ranvier-streams §6.3)",
		apply: func(im *impl.Impl) {
			withPublisherHooks(im, func(h *live.PublisherHooks) {
				h.Sweep = func(all []*messagepb.StreamInfo) []*messagepb.StreamInfo { return all[:min(1, len(all))] }
			})
		},
	},
	{
		Name: "publisher-repeats-announcements", Suite: "live", Profile: "ranvier-publisher",
		Bug: "the publisher forgets what it announced on a connection and announces again before every sample (ranvier-streams §6.4)",
		apply: func(im *impl.Impl) {
			withPublisherHooks(im, func(h *live.PublisherHooks) { h.ForgetAnnounced = true })
		},
	},
	{
		Name: "publisher-atomic-sequence", Suite: "live", Profile: "ranvier-publisher",
		Bug: "numbers samples with an atomic counter and delivers them outside that step, so concurrent publishes arrive out of order (ranvier-streams §2.3)",
		apply: func(im *impl.Impl) {
			withPublisherHooks(im, func(h *live.PublisherHooks) {
				h.Publish = func(st *streams.Stream, sourceNs uint64, values []byte, deliver func(streams.Sample)) {
					var numbered streams.Sample
					st.Publish(sourceNs, values, func(s streams.Sample) { numbered = s })
					// Another publisher's sample overtakes this one here.
					runtime.Gosched()
					time.Sleep(time.Duration(rand.IntN(50)) * time.Microsecond)
					deliver(numbered)
				}
			})
		},
	},
	{
		Name: "publisher-resends-whole-buffer", Suite: "live", Profile: "ranvier-publisher",
		Bug: "after a partial write the publisher resends the whole frame instead of the rest of it (ranvier-wire §1.4)",
		apply: func(im *impl.Impl) {
			withPublisherHooks(im, func(h *live.PublisherHooks) { h.Write = resendWhole })
		},
	},
	{
		Name: "publisher-sends-before-request", Suite: "live", Profile: "ranvier-publisher",
		Bug: "the publisher announces its streams as soon as a subscriber connects, before reading the Request (ranvier-wire §4.1)",
		apply: func(im *impl.Impl) {
			withPublisherHooks(im, func(h *live.PublisherHooks) {
				h.BeforeRequest = func(c net.Conn, announcements [][]byte) error {
					for _, b := range announcements {
						if _, err := c.Write(b); err != nil {
							return err
						}
					}
					return nil
				}
			})
		},
	},
	{
		Name: "subscriber-closes-on-read-timeout", Suite: "live", Profile: "ranvier-subscriber",
		Bug: "the subscriber closes a connection whose read timed out: a quiet publisher taken for a broken one (ranvier-wire §6.5)",
		apply: func(im *impl.Impl) {
			next := im.Live.NewSubscriber
			im.Live.NewSubscriber = func(cfg live.SubscriberConfig) *live.Subscriber {
				cfg.Hooks.ReadTimedOut = func(conn streams.ConnID) error {
					return fmt.Errorf("connection %d: no sample within the read timeout", conn)
				}
				return next(cfg)
			}
		},
	},
}

// withPublisherHooks makes every publisher the Impl starts carry the hooks
// set sets.
func withPublisherHooks(im *impl.Impl, set func(*live.PublisherHooks)) {
	next := im.Live.NewPublisher
	im.Live.NewPublisher = func(ctx context.Context, cfg live.PublisherConfig) (*live.Publisher, error) {
		set(&cfg.Hooks)
		return next(ctx, cfg)
	}
}

// resendWhole writes b to c as the mutant does: every attempt writes the
// whole of b, so after a write that stopped part-way — a full socket buffer
// meeting the write deadline — the bytes already sent go out again.
func resendWhole(c net.Conn, b []byte, patience time.Duration, done <-chan struct{}) error {
	defer c.SetWriteDeadline(time.Time{})
	last := time.Now()
	for {
		select {
		case <-done:
			return net.ErrClosed
		default:
		}
		if time.Since(last) > patience {
			return live.ErrNoProgress
		}
		c.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
		n, err := c.Write(b)
		if n > 0 {
			last = time.Now()
		}
		if err == nil {
			return nil
		}
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			return err
		}
	}
}
