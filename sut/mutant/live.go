package mutant

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"runtime"
	"sync"
	"time"

	messagepb "github.com/conform-suite/conform/proto/ranvier/message/v1"
	"github.com/conform-suite/conform/ref/live"
	"github.com/conform-suite/conform/ref/streams"
	"github.com/conform-suite/conform/ref/wire"
	"github.com/conform-suite/conform/sut/impl"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// liveMutants break the reference's live data-plane parts
// (sut/impl/liveops.go), each by setting one hook of ref/live.
var liveMutants = append(liveDataMutants, []Mutant{
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
}...)

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

// liveDataMutants break the live subscriber and publisher at the steps
// ranvier-wire §1.3, §4 and §6 and ranvier-streams §2, §3 and §6.5 fix.
var liveDataMutants = []Mutant{
	subscriberMutant("subscriber-read-is-whole-frames",
		"the subscriber takes every read to end at a frame boundary and drops a partial frame left at its end (ranvier-wire §1.3)",
		func(h *live.SubscriberHooks) {
			h.NewReceiver = func() live.Receiver { return &wire.Subscriber{Reader: &dropsPartial{atMost: ^uint64(0)}} }
		}),
	subscriberMutant("subscriber-loses-split-prefix",
		"the subscriber drops a length prefix split across reads (ranvier-wire §1.3 step 1)",
		func(h *live.SubscriberHooks) {
			h.NewReceiver = func() live.Receiver { return &wire.Subscriber{Reader: &dropsPartial{atMost: wire.PrefixLen - 1}} }
		}),
	subscriberMutant("subscriber-one-frame-per-read",
		"the subscriber yields the first frame of each read and drops the rest of it (ranvier-wire §1.3)",
		func(h *live.SubscriberHooks) {
			h.NewReceiver = func() live.Receiver { return &wire.Subscriber{Reader: new(oneFramePerRead)} }
		}),
	subscriberMutant("subscriber-salvages-truncated-tail",
		"at end of stream the subscriber decodes what it can of the partial frame left buffered and delivers it (ranvier-wire §1.3)",
		func(h *live.SubscriberHooks) {
			h.NewReceiver = func() live.Receiver { return new(salvagesTail) }
		}),
	subscriberMutant("subscriber-resyncs-after-too-large",
		"after a prefix above 16 MiB the subscriber scans forward for a plausible prefix instead of closing (ranvier-wire §6.2)",
		func(h *live.SubscriberHooks) {
			h.NewReceiver = func() live.Receiver {
				return &wire.Subscriber{Reader: &buggyReader{ceiling: wire.MaxPayload, resync: true}}
			}
		}),
	subscriberMutant("subscriber-closes-on-undecodable",
		"the subscriber closes the connection at a payload that does not decode (ranvier-wire §6.3)",
		func(h *live.SubscriberHooks) {
			h.NewReceiver = func() live.Receiver { return &closeOnUndecodable{Subscriber: new(wire.Subscriber)} }
		}),
	subscriberMutant("subscriber-empty-frame-ends-stream",
		"the subscriber reads a zero-length frame as the end of the stream and reads nothing after it (ranvier-wire §1.2, §6.4)",
		func(h *live.SubscriberHooks) {
			h.NewReceiver = func() live.Receiver {
				return &wire.Subscriber{Reader: &buggyReader{ceiling: wire.MaxPayload, zeroEnds: true}}
			}
		}),
	subscriberMutant("subscriber-keepalive-after-request",
		"the subscriber sends an empty keepalive frame after its Request (ranvier-wire §4.1: the Request is the only frame)",
		func(h *live.SubscriberHooks) {
			h.AfterRequest = func(c net.Conn) error {
				_, err := c.Write(make([]byte, wire.PrefixLen))
				return err
			}
		}),
	subscriberMutant("subscriber-end-of-stream-is-error",
		"the subscriber records the publisher ending the connection as an error (ranvier-wire §4.7)",
		func(h *live.SubscriberHooks) {
			h.EndOfStream = func(conn streams.ConnID) error { return fmt.Errorf("connection %d: unexpected EOF", conn) }
		}),
	subscriberMutant("subscriber-keys-streams-by-name",
		"the subscriber tracks sequences by (stream name, stream_ref), merging two publishers' connections (ranvier-streams §2.2)",
		func(h *live.SubscriberHooks) {
			var mu sync.Mutex
			first := map[string]streams.ConnID{}
			h.Observe = func(track func(streams.ConnID, streams.Sample) streams.Outcome, conn streams.ConnID, name string, smp streams.Sample) streams.Outcome {
				mu.Lock()
				key, ok := first[name]
				if !ok {
					key, first[name] = conn, conn
				}
				mu.Unlock()
				return track(key, smp)
			}
		}),
	subscriberMutant("subscriber-numbers-arrivals",
		"the subscriber counts arrivals instead of reading the sequence field, so a gap is never seen (ranvier-streams §3.3)",
		func(h *live.SubscriberHooks) {
			var mu sync.Mutex
			type pair struct {
				conn streams.ConnID
				ref  uint32
			}
			arrived := map[pair]uint64{}
			h.Observe = func(track func(streams.ConnID, streams.Sample) streams.Outcome, conn streams.ConnID, _ string, smp streams.Sample) streams.Outcome {
				if smp.StreamRef != 0 && smp.Sequence != 0 {
					mu.Lock()
					k := pair{conn, smp.StreamRef}
					arrived[k]++
					smp.Sequence = arrived[k]
					mu.Unlock()
				}
				return track(conn, smp)
			}
		}),
	subscriberMutant("subscriber-borrows-schema-by-name",
		"the subscriber reads a sample of an unannounced stream_ref against another stream's announcement under the same name (ranvier-streams §6.5)",
		func(h *live.SubscriberHooks) {
			h.Attribute = func(heard []streams.Announcement, ref uint32) (streams.Announcement, bool) {
				for _, a := range heard {
					if a.StreamRef == ref {
						return a, true
					}
				}
				if len(heard) > 0 {
					return heard[0], true // the stream's name is all a sample needs, the bug says
				}
				return streams.Announcement{}, false
			}
		}),
	{
		Name: "publisher-numbers-from-zero", Suite: "live", Profile: "ranvier-publisher",
		Bug: "the publisher numbers each stream's samples from 0 (ranvier-streams §2.1)",
		apply: func(im *impl.Impl) {
			withPublisherHooks(im, func(h *live.PublisherHooks) {
				h.Publish = func(st *streams.Stream, sourceNs uint64, values []byte, deliver func(streams.Sample)) {
					st.Publish(sourceNs, values, func(s streams.Sample) {
						s.Sequence--
						deliver(s)
					})
				}
			})
		},
	},
	{
		Name: "publisher-varint-timestamps", Suite: "live", Profile: "ranvier-publisher",
		Bug: "the publisher writes a sample's timestamps as varints, as a schema copy declaring them uint64 would (ranvier-wire §4.3)",
		apply: func(im *impl.Impl) {
			withPublisherHooks(im, func(h *live.PublisherHooks) {
				h.Write = func(c net.Conn, b []byte, patience time.Duration, done <-chan struct{}) error {
					return writeAll(c, varintSampleFrame(b), patience)
				}
			})
		},
	},
	{
		Name: "publisher-closes-on-bytes-after-request", Suite: "live", Profile: "ranvier-publisher",
		Bug: "the publisher keeps reading the connection after the Request and closes it when a subscriber sends more (ranvier-wire §4.1)",
		apply: func(im *impl.Impl) {
			withPublisherHooks(im, func(h *live.PublisherHooks) {
				h.AfterRequest = func(c net.Conn, rest []byte) {
					if len(rest) > 0 {
						c.Close()
						return
					}
					go func() {
						var b [1]byte
						for {
							c.SetReadDeadline(time.Time{})
							n, err := c.Read(b[:])
							if n > 0 || err != nil {
								c.Close()
								return
							}
						}
					}()
				}
			})
		},
	},
}

// subscriberMutant is the live mutant whose subscribers carry the hooks set
// sets.
func subscriberMutant(name, bug string, set func(*live.SubscriberHooks)) Mutant {
	return Mutant{Name: name, Suite: "live", Profile: "ranvier-subscriber", Bug: bug, apply: func(im *impl.Impl) {
		next := im.Live.NewSubscriber
		im.Live.NewSubscriber = func(cfg live.SubscriberConfig) *live.Subscriber {
			set(&cfg.Hooks)
			return next(cfg)
		}
	}}
}

// dropsPartial is a frame reader that, once a read's complete frames are
// taken, throws away a partial frame of at most atMost bytes left over.
type dropsPartial struct {
	wire.Reader
	atMost uint64
}

func (r *dropsPartial) Next() ([]byte, bool, error) {
	p, ok, err := r.Reader.Next()
	if n := uint64(r.Buffered()); !ok && err == nil && n > 0 && n <= r.atMost {
		r.Reader = wire.Reader{}
	}
	return p, ok, err
}

// oneFramePerRead is a frame reader that yields at most one frame per
// write and drops whatever else the write held.
type oneFramePerRead struct {
	wire.Reader
	yielded bool
}

func (r *oneFramePerRead) Write(p []byte) (int, error) {
	r.yielded = false
	return r.Reader.Write(p)
}

func (r *oneFramePerRead) Next() ([]byte, bool, error) {
	if r.yielded {
		r.Reader = wire.Reader{}
		return nil, false, nil
	}
	p, ok, err := r.Reader.Next()
	r.yielded = ok
	return p, ok, err
}

// salvagesTail is a receiver that, at end of stream, decodes the complete
// fields of the partial frame left buffered and delivers them.
type salvagesTail struct {
	wire.Subscriber
	buf  []byte // every byte received, to find the tail
	emit func(wire.Event)
}

func (s *salvagesTail) Receive(p []byte, emit func(wire.Event)) error {
	s.emit = emit
	s.buf = append(s.buf, p...)
	return s.Subscriber.Receive(p, func(ev wire.Event) { emit(ev) })
}

func (s *salvagesTail) End() error {
	if s.Subscriber.Reader == nil {
		return s.Subscriber.End()
	}
	tail := s.buf[len(s.buf)-s.Subscriber.Reader.Buffered():]
	err := s.Subscriber.End()
	if len(tail) > wire.PrefixLen && s.emit != nil {
		f := new(messagepb.Frame)
		if proto.Unmarshal(salvage(tail[wire.PrefixLen:]), f) == nil && f.GetPayload() != nil {
			s.emit(wire.Event{Action: wire.Delivered, Frame: f})
		}
	}
	return err
}

// salvage returns the complete fields of a message cut short, a truncated
// length-delimited field kept with what arrived of it, salvaged in turn.
func salvage(b []byte) []byte {
	var out []byte
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return out
		}
		m := protowire.ConsumeFieldValue(num, typ, b[n:])
		if m >= 0 {
			out = append(out, b[:n+m]...)
			b = b[n+m:]
			continue
		}
		if typ != protowire.BytesType {
			return out
		}
		_, k := protowire.ConsumeVarint(b[n:])
		if k < 0 {
			return out
		}
		out = protowire.AppendTag(out, num, typ)
		return protowire.AppendBytes(out, salvage(b[n+k:]))
	}
	return out
}

// varintSampleFrame rewrites a framed Frame{sample}'s fixed64 fields as
// varints; any other frame is returned as it is.
func varintSampleFrame(b []byte) []byte {
	if len(b) < wire.PrefixLen {
		return b
	}
	var payload []byte
	rest := b[wire.PrefixLen:]
	for len(rest) > 0 {
		num, typ, n := protowire.ConsumeTag(rest)
		if n < 0 {
			return b
		}
		m := protowire.ConsumeFieldValue(num, typ, rest[n:])
		if m < 0 {
			return b
		}
		field := rest[:n+m]
		if num == sampleField && typ == protowire.BytesType {
			inner, _ := protowire.ConsumeBytes(rest[n:])
			field = protowire.AppendBytes(protowire.AppendTag(nil, num, typ), fixedToVarint(inner))
		}
		payload = append(payload, field...)
		rest = rest[n+m:]
	}
	out, err := wire.AppendFrame(nil, payload)
	if err != nil {
		return b
	}
	return out
}

// sampleField is Frame.sample's field number (ranvier-wire §4.1).
const sampleField = 2

// fixedToVarint rewrites a message's top-level fixed64 fields as varints.
func fixedToVarint(m []byte) []byte {
	var out []byte
	for len(m) > 0 {
		num, typ, n := protowire.ConsumeTag(m)
		if n < 0 {
			return append(out, m...)
		}
		k := protowire.ConsumeFieldValue(num, typ, m[n:])
		if k < 0 {
			return append(out, m...)
		}
		if typ == protowire.Fixed64Type {
			v, _ := protowire.ConsumeFixed64(m[n:])
			out = protowire.AppendVarint(protowire.AppendTag(out, num, protowire.VarintType), v)
		} else {
			out = append(out, m[:n+k]...)
		}
		m = m[n+k:]
	}
	return out
}

// writeAll writes b to c, waiting at most patience.
func writeAll(c net.Conn, b []byte, patience time.Duration) error {
	c.SetWriteDeadline(time.Now().Add(patience))
	defer c.SetWriteDeadline(time.Time{})
	_, err := c.Write(b)
	return err
}
