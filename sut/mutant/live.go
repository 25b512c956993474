package mutant

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
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
// (sut/impl/liveops.go), each by setting one hook of ref/live or wrapping
// the connections a publisher accepts.
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
			withPublisherHooks(im, func(h *live.PublisherHooks) { h.Write = reannouncing() })
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
			withPublisherHooks(im, func(h *live.PublisherHooks) {
				h.Write = func(c net.Conn, b []byte, patience time.Duration, done <-chan struct{}) error {
					return live.WritePatient(resendsWhole{Conn: c, frame: b}, b, patience, done)
				}
			})
		},
	},
	{
		Name: "publisher-sends-before-request", Suite: "live", Profile: "ranvier-publisher",
		Bug: "the publisher announces its streams as soon as a subscriber connects, before reading the Request (ranvier-wire §4.1)",
		apply: func(im *impl.Impl) {
			withListener(im, func(ln net.Listener, pub func() *live.Publisher) net.Listener {
				return announcesOnAccept{Listener: ln, pub: pub}
			})
		},
	},
	{
		Name: "publisher-frame-carries-both-variants", Suite: "live", Profile: "ranvier-publisher",
		Bug: "the publisher writes each sample in a Frame that also carries its stream's announcement, ahead of the sample, so a decoder keeping the last variant sees only the sample (ranvier-wire §8 item 1)",
		apply: func(im *impl.Impl) {
			withPublisherHooks(im, func(h *live.PublisherHooks) { h.Write = withAnnouncementInSamples() })
		},
	},
	{
		Name: "publisher-fanout-dies-with-one-subscriber", Suite: "live", Profile: "ranvier-publisher",
		Bug: "once a write to one subscriber fails, the publisher fails every later write to every subscriber: a departed subscriber holds the others up (ranvier-wire §3.3)",
		apply: func(im *impl.Impl) {
			next := im.Live.NewPublisher
			im.Live.NewPublisher = func(ctx context.Context, cfg live.PublisherConfig) (*live.Publisher, error) {
				var failed atomic.Bool // one per publisher: its fan-out
				cfg.Hooks.Write = func(c net.Conn, b []byte, patience time.Duration, done <-chan struct{}) error {
					if failed.Load() {
						return errors.New("the fan-out stopped at a subscriber's failure")
					}
					err := live.WritePatient(c, b, patience, done)
					if err != nil {
						failed.Store(true)
					}
					return err
				}
				return next(ctx, cfg)
			}
		},
	},
	{
		Name: "publisher-announces-without-node", Suite: "live", Profile: "ranvier-publisher",
		Bug: "the publisher's announcements leave out the node that declared the stream (ranvier-streams §6.1)",
		apply: func(im *impl.Impl) {
			withPublisherHooks(im, func(h *live.PublisherHooks) {
				h.Write = func(c net.Conn, b []byte, patience time.Duration, done <-chan struct{}) error {
					f := new(messagepb.Frame)
					if len(b) >= wire.PrefixLen && proto.Unmarshal(b[wire.PrefixLen:], f) == nil && f.GetAnnounce() != nil {
						f.GetAnnounce().Node = ""
						if payload, err := wire.Encode(f); err == nil {
							if framed, err := wire.AppendFrame(nil, payload); err == nil {
								b = framed
							}
						}
					}
					return live.WritePatient(c, b, patience, done)
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

// withListener makes every publisher the Impl starts accept its
// subscribers through the listener wrap makes of the reference's; pub
// returns the publisher once it has started.
func withListener(im *impl.Impl, wrap func(ln net.Listener, pub func() *live.Publisher) net.Listener) {
	next := im.Live.NewPublisher
	im.Live.NewPublisher = func(ctx context.Context, cfg live.PublisherConfig) (*live.Publisher, error) {
		var started atomic.Pointer[live.Publisher]
		listen := cfg.Listen
		if listen == nil {
			var lc net.ListenConfig
			listen = lc.Listen
		}
		cfg.Listen = func(ctx context.Context, network, addr string) (net.Listener, error) {
			ln, err := listen(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return wrap(ln, started.Load), nil
		}
		p, err := next(ctx, cfg)
		if err == nil {
			started.Store(p)
		}
		return p, err
	}
}

// reannouncing returns a publisher's frame write that, before every sample
// on a connection but its first, writes again every announcement it wrote
// there; each frame is written by the reference's patient write.
func reannouncing() func(c net.Conn, b []byte, patience time.Duration, done <-chan struct{}) error {
	type sent struct {
		announcements [][]byte
		sampled       bool
	}
	var mu sync.Mutex
	conns := map[net.Conn]*sent{} // each connection has one writer
	return func(c net.Conn, b []byte, patience time.Duration, done <-chan struct{}) error {
		mu.Lock()
		st := conns[c]
		if st == nil {
			st = new(sent)
			conns[c] = st
		}
		mu.Unlock()
		f := new(messagepb.Frame)
		if len(b) >= wire.PrefixLen && proto.Unmarshal(b[wire.PrefixLen:], f) == nil {
			switch {
			case f.GetAnnounce() != nil:
				st.announcements = append(st.announcements, slices.Clone(b))
			case f.GetSample() != nil:
				if st.sampled {
					for _, a := range st.announcements {
						if err := live.WritePatient(c, a, patience, done); err != nil {
							return err
						}
					}
				}
				st.sampled = true
			}
		}
		return live.WritePatient(c, b, patience, done)
	}
}

// resendsWhole is a connection on which every write of a frame's rest,
// after a partial write, sends the whole frame again. It reports the rest
// written when the whole frame was, and otherwise less than the rest, so
// that the writer goes on.
type resendsWhole struct {
	net.Conn
	frame []byte
}

func (c resendsWhole) Write(rest []byte) (int, error) {
	n, err := c.Conn.Write(c.frame)
	if n == len(c.frame) {
		return len(rest), err
	}
	return min(n, len(rest)-1), err
}

// announcesOnAccept is a publisher's listener that writes the announcement
// of every stream the publisher has to each connection it accepts.
type announcesOnAccept struct {
	net.Listener
	pub func() *live.Publisher
}

func (l announcesOnAccept) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	p := l.pub()
	if err != nil || p == nil {
		return c, err
	}
	c.SetWriteDeadline(time.Now().Add(relayWriteWait))
	defer c.SetWriteDeadline(time.Time{})
	for _, s := range p.Streams() {
		payload, err := wire.Encode(&messagepb.Frame{Payload: &messagepb.Frame_Announce{Announce: s.Info()}})
		if err != nil {
			continue
		}
		if b, err := wire.AppendFrame(nil, payload); err == nil {
			c.Write(b)
		}
	}
	return c, nil
}

// closesOnMore is a publisher's connection that, once the Request has been
// read from it, closes when a subscriber sends anything more.
type closesOnMore struct {
	net.Conn
	request *wire.Reader
	done    *atomic.Bool
}

func (c closesOnMore) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n == 0 || c.done.Load() {
		return n, err
	}
	c.request.Write(p[:n])
	if _, ok, ferr := c.request.Next(); ok && ferr == nil {
		c.done.Store(true)
		if c.request.Buffered() > 0 {
			c.Conn.Close() // more came with the Request
		} else {
			go func() {
				var b [1]byte
				for {
					c.Conn.SetReadDeadline(time.Time{})
					if n, err := c.Conn.Read(b[:]); n > 0 || err != nil {
						c.Conn.Close()
						return
					}
				}
			}()
		}
	}
	return n, err
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
	subscriberMutant("subscriber-counts-truncated-tail",
		"at end of stream the subscriber hands the partial frame left buffered to its decoder and counts it as an unreadable frame (ranvier-wire §1.3, ranvier-streams §3.6a)",
		func(h *live.SubscriberHooks) {
			h.NewReceiver = func() live.Receiver { return new(decodesTail) }
		}),
	subscriberMutant("subscriber-resyncs-after-too-large",
		"after a prefix above 16 MiB the subscriber scans forward for a plausible prefix instead of closing (ranvier-wire §6.2)",
		func(h *live.SubscriberHooks) {
			h.NewReceiver = func() live.Receiver {
				return &wire.Subscriber{Reader: newResyncs()}
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
				return &wire.Subscriber{Reader: new(zeroLengthEnds)}
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
					return live.WritePatient(c, varintSampleFrame(b), patience, done)
				}
			})
		},
	},
	{
		Name: "publisher-closes-on-bytes-after-request", Suite: "live", Profile: "ranvier-publisher",
		Bug: "the publisher keeps reading the connection after the Request and closes it when a subscriber sends more (ranvier-wire §4.1)",
		apply: func(im *impl.Impl) {
			withListener(im, func(ln net.Listener, _ func() *live.Publisher) net.Listener { return watchesAfterRequest{ln} })
		},
	},
}

// watchesAfterRequest is a publisher's listener whose connections close on
// bytes after the Request.
type watchesAfterRequest struct{ net.Listener }

func (l watchesAfterRequest) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return c, err
	}
	return closesOnMore{Conn: c, request: new(wire.Reader), done: new(atomic.Bool)}, nil
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

// decodesTail is a receiver that, at end of stream, takes the partial frame
// left buffered for a frame and decodes it; the cut payload does not
// decode, and the frame is counted unreadable.
type decodesTail struct {
	wire.Subscriber
	buf  []byte // every byte received, to find the tail
	emit func(wire.Event)
}

func (s *decodesTail) Receive(p []byte, emit func(wire.Event)) error {
	s.emit = emit
	s.buf = append(s.buf, p...)
	return s.Subscriber.Receive(p, emit)
}

func (s *decodesTail) End() error {
	if s.Subscriber.Reader == nil {
		return s.Subscriber.End()
	}
	tail := s.buf[len(s.buf)-s.Subscriber.Reader.Buffered():]
	err := s.Subscriber.End()
	if len(tail) > wire.PrefixLen && s.emit != nil {
		ev := wire.Event{Action: wire.SkippedUndecodable}
		if f, derr := wire.DecodeFrame(tail[wire.PrefixLen:]); derr == nil {
			ev = wire.Event{Action: wire.Delivered, Frame: f}
		}
		s.emit(ev)
	}
	return err
}

// withAnnouncementInSamples returns a publisher's frame write that puts,
// before each sample of a stream announced on the connection, that
// stream's announcement in the same Frame.
func withAnnouncementInSamples() func(c net.Conn, b []byte, patience time.Duration, done <-chan struct{}) error {
	var mu sync.Mutex
	announced := map[net.Conn]map[uint32][]byte{} // each connection has one writer
	return func(c net.Conn, b []byte, patience time.Duration, done <-chan struct{}) error {
		f := new(messagepb.Frame)
		if len(b) >= wire.PrefixLen && proto.Unmarshal(b[wire.PrefixLen:], f) == nil {
			mu.Lock()
			if announced[c] == nil {
				announced[c] = map[uint32][]byte{}
			}
			switch {
			case f.GetAnnounce() != nil:
				// The announce field alone: Frame field 1, as written.
				announced[c][f.GetAnnounce().GetStreamRef()] = slices.Clone(b[wire.PrefixLen:])
			case f.GetSample() != nil:
				if ann, ok := announced[c][f.GetSample().GetStreamRef()]; ok {
					if framed, err := wire.AppendFrame(nil, append(slices.Clone(ann), b[wire.PrefixLen:]...)); err == nil {
						b = framed
					}
				}
			}
			mu.Unlock()
		}
		return live.WritePatient(c, b, patience, done)
	}
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
