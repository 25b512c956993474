package live_test

import (
	"context"
	"errors"
	"net"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/conform-suite/conform/internal/hang"
	"github.com/conform-suite/conform/live/peer"
	messagepb "github.com/conform-suite/conform/proto/ranvier/message/v1"
	"github.com/conform-suite/conform/ref/live"
	"github.com/conform-suite/conform/ref/streams"
	"google.golang.org/protobuf/encoding/protowire"
)

func newPublisher(t *testing.T, ctx context.Context, cfg live.PublisherConfig) *live.Publisher {
	t.Helper()
	p, err := live.NewPublisher(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

func open(t *testing.T, p *live.Publisher, name, domain string) *live.PublishedStream {
	t.Helper()
	s, err := p.Open(&messagepb.StreamInfo{Name: name, Node: "n", SourceClockDomain: domain})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func dial(t *testing.T, ctx context.Context, p *live.Publisher) *peer.PeerSubscriber {
	t.Helper()
	return dialBuffer(t, ctx, p, 0)
}

func dialBuffer(t *testing.T, ctx context.Context, p *live.Publisher, readBuffer int) *peer.PeerSubscriber {
	t.Helper()
	s, err := peer.DialPublisher(ctx, p.Addr(), readBuffer, peer.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// attached waits until the publisher has read n Requests.
func attached(t *testing.T, ctx context.Context, p *live.Publisher, n int) {
	t.Helper()
	_, err := p.WaitConnections(ctx, func(cs []live.ConnStats) bool {
		k := 0
		for _, c := range cs {
			if c.Attached {
				k++
			}
		}
		return k >= n
	})
	if err != nil {
		t.Fatal(err)
	}
}

// timestampsAreFixed64 reports whether the sample's fields 1 and 4, when
// present, use wire type fixed64 (ranvier-wire §4.3).
func timestampsAreFixed64(t *testing.T, frame []byte) bool {
	t.Helper()
	_, typ, n := protowire.ConsumeTag(frame)
	if n < 0 || typ != protowire.BytesType {
		t.Fatalf("frame does not start with a submessage: %x", frame)
	}
	smp, m := protowire.ConsumeBytes(frame[n:])
	if m < 0 {
		t.Fatalf("bad submessage: %x", frame)
	}
	for len(smp) > 0 {
		num, typ, n := protowire.ConsumeTag(smp)
		if n < 0 {
			t.Fatalf("bad tag in %x", smp)
		}
		if (num == 1 || num == 4) && typ != protowire.Fixed64Type {
			return false
		}
		k := protowire.ConsumeFieldValue(num, typ, smp[n:])
		if k < 0 {
			t.Fatalf("bad field in %x", smp)
		}
		smp = smp[n+k:]
	}
	return true
}

// checkConversation judges a transcript by ranvier-wire §4.1–§4.3: every
// sample's stream announced before it, no announcement repeated, sequences
// from 1 by 1 per stream, stream_ref ≥ 1, fixed64 timestamps, and no source
// timestamp on a stream with no clock domain. It returns the announced
// references in order and the samples per reference.
func checkConversation(t *testing.T, tr peer.Transcript) ([]uint32, map[uint32][]*messagepb.Sample) {
	t.Helper()
	announced := map[uint32]*messagepb.StreamInfo{}
	var order []uint32
	samples := map[uint32][]*messagepb.Sample{}
	for i, f := range tr.DataFrames() {
		if f.Err != nil {
			t.Fatalf("frame %d does not decode: %v", i, f.Err)
		}
		switch {
		case f.Msg.GetAnnounce() != nil:
			a := f.Msg.GetAnnounce()
			if _, dup := announced[a.GetStreamRef()]; dup {
				t.Errorf("frame %d: stream %d announced twice on one connection", i, a.GetStreamRef())
			}
			announced[a.GetStreamRef()] = a
			order = append(order, a.GetStreamRef())
		case f.Msg.GetSample() != nil:
			s := f.Msg.GetSample()
			a, ok := announced[s.GetStreamRef()]
			if !ok {
				t.Errorf("frame %d: sample of stream %d before its announcement", i, s.GetStreamRef())
			}
			if s.GetStreamRef() < 1 {
				t.Errorf("frame %d: stream_ref 0", i)
			}
			if want := uint64(len(samples[s.GetStreamRef()]) + 1); s.GetSequence() != want {
				t.Errorf("frame %d: stream %d sequence %d, want %d", i, s.GetStreamRef(), s.GetSequence(), want)
			}
			if a.GetSourceClockDomain() == "" && s.GetSourceTimestampNs() != 0 {
				t.Errorf("frame %d: source timestamp on a stream with no clock domain", i)
			}
			if !timestampsAreFixed64(t, f.Payload) {
				t.Errorf("frame %d: a timestamp is not fixed64: %x", i, f.Payload)
			}
			samples[s.GetStreamRef()] = append(samples[s.GetStreamRef()], s)
		default:
			t.Errorf("frame %d: no payload variant", i)
		}
	}
	return order, samples
}

func TestPublisherConversation(t *testing.T) {
	ctx := testCtx(t)
	p := newPublisher(t, ctx, live.PublisherConfig{})
	clocked := open(t, p, "gaze", "eyetracker")
	plain := open(t, p, "gaze", "")
	other := open(t, p, "other", "")

	sub := dial(t, ctx, p)
	// Nothing may arrive before the Request (§4.1).
	if tr, _ := sub.Idle(ctx, 150*time.Millisecond); tr.Bytes != 0 {
		t.Fatalf("publisher sent %d bytes before the Request", tr.Bytes)
	}
	// Bytes after the Request are never read (§4.1): a garbage frame and a
	// prefix above the ceiling change nothing.
	extra := append(peer.Garbage(), peer.TooLargePrefix()...)
	if err := sub.SendRequest(ctx, "gaze", extra); err != nil {
		t.Fatal(err)
	}
	attached(t, ctx, p, 1)
	for range 3 {
		clocked.Publish(5, []byte("c"))
		plain.Publish(7, []byte("p"))
		other.Publish(9, []byte("o"))
	}
	// A stream that starts later announces itself later (§4.2).
	late := open(t, p, "gaze", "")
	late.Publish(0, []byte("l"))
	tr, err := sub.WaitFrames(ctx, 2+6+1+1)
	if err != nil {
		t.Fatal(err)
	}
	if m, _ := tr.Mark(peer.MarkRequest); m.Bytes != 0 {
		t.Errorf("%d bytes arrived before the Request", m.Bytes)
	}
	order, samples := checkConversation(t, tr)
	if len(order) < 2 || !(order[0] != order[1]) {
		t.Errorf("announced %v, want both streams of the name first", order)
	}
	if len(order) != 3 || order[2] != late.Ref() {
		t.Errorf("announced %v, want the late stream %d last", order, late.Ref())
	}
	if len(samples[clocked.Ref()]) != 3 || len(samples[plain.Ref()]) != 3 || len(samples[late.Ref()]) != 1 {
		t.Errorf("samples per stream = %d/%d/%d, want 3/3/1", len(samples[clocked.Ref()]), len(samples[plain.Ref()]), len(samples[late.Ref()]))
	}
	if _, ok := samples[other.Ref()]; ok {
		t.Error("a stream under another name was delivered")
	}
	if got := samples[clocked.Ref()][0].GetSourceTimestampNs(); got != 5 {
		t.Errorf("clocked stream's source timestamp = %d, want 5", got)
	}

	// A second connection hears every announcement again (§6.3).
	sub2 := dial(t, ctx, p)
	if err := sub2.SendRequest(ctx, "gaze", nil); err != nil {
		t.Fatal(err)
	}
	attached(t, ctx, p, 2)
	plain.Publish(0, []byte("p"))
	tr2, err := sub2.WaitFrames(ctx, 4)
	if err != nil {
		t.Fatal(err)
	}
	order2, samples2 := checkConversation(t, peer.Transcript{Frames: tr2.Frames[:3]})
	if len(order2) != 3 {
		t.Errorf("second connection announced %v, want all three streams", order2)
	}
	last := tr2.DataFrames()[3].Msg.GetSample()
	if last.GetStreamRef() != plain.Ref() || last.GetSequence() != 4 {
		t.Errorf("second connection's sample = %v, want stream %d sequence 4", last, plain.Ref())
	}
	_ = samples2
	// The first connection did not repeat any announcement.
	tr, err = sub.WaitFrames(ctx, 11)
	if err != nil {
		t.Fatal(err)
	}
	checkConversationContinued(t, tr)
}

// checkConversationContinued checks the no-repeat rule over a whole transcript.
func checkConversationContinued(t *testing.T, tr peer.Transcript) {
	t.Helper()
	seen := map[uint32]bool{}
	for _, f := range tr.DataFrames() {
		if a := f.Msg.GetAnnounce(); a != nil {
			if seen[a.GetStreamRef()] {
				t.Errorf("stream %d announced twice", a.GetStreamRef())
			}
			seen[a.GetStreamRef()] = true
		}
	}
}

// Small socket buffers at both ends make a paused reader push back on the
// publisher after a few hundred kilobytes.
const smallBuffer = 16 << 10

func TestPublisherWaitsForASlowReader(t *testing.T) {
	ctx := testCtx(t)
	p := newPublisher(t, ctx, live.PublisherConfig{Patience: 5 * time.Second, WriteBuffer: smallBuffer})
	s := open(t, p, "bulk", "")
	sub := dialBuffer(t, ctx, p, smallBuffer)
	if err := sub.SendRequest(ctx, "bulk", nil); err != nil {
		t.Fatal(err)
	}
	attached(t, ctx, p, 1)
	sub.Pause()
	const n = 100
	values := make([]byte, 16<<10)
	for range n {
		s.Publish(0, values) // never waits (streams §5.1)
	}
	// The socket buffers fill and the publisher's write blocks; it waits.
	if _, err := sub.Idle(ctx, 400*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if cs := p.Connections(); cs[0].Done {
		t.Fatalf("slow reader disconnected: %+v", cs[0])
	}
	if cs := p.Connections(); cs[0].Samples >= n {
		t.Fatalf("all %d samples written while paused: the test did not fill the socket", n)
	}
	sub.Resume()
	tr, err := sub.WaitFrames(ctx, 1+n)
	if err != nil {
		t.Fatalf("%v: %d frames, %d bytes; publisher %+v", err, tr.FrameCount, tr.Bytes, p.Connections())
	}
	_, samples := checkConversation(t, tr)
	if len(samples[s.Ref()]) != n {
		t.Errorf("got %d samples, want %d", len(samples[s.Ref()]), n)
	}
	if cs := p.Connections(); cs[0].Done || cs[0].Queue.Dropped != 0 {
		t.Errorf("connection = %+v, want open with nothing dropped", cs[0])
	}
}

func TestPublisherGivesUpAfterThePatience(t *testing.T) {
	ctx := testCtx(t)
	p := newPublisher(t, ctx, live.PublisherConfig{Patience: 300 * time.Millisecond, WriteBuffer: smallBuffer})
	s := open(t, p, "bulk", "")
	sub := dialBuffer(t, ctx, p, smallBuffer)
	if err := sub.SendRequest(ctx, "bulk", nil); err != nil {
		t.Fatal(err)
	}
	attached(t, ctx, p, 1)
	sub.Pause()
	values := make([]byte, 16<<10)
	for range 100 {
		s.Publish(0, values)
	}
	cs, err := p.WaitConnections(ctx, func(cs []live.ConnStats) bool { return cs[0].Done })
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(cs[0].Err, live.ErrNoProgress) {
		t.Errorf("connection ended with %v, want ErrNoProgress", cs[0].Err)
	}
}

func TestPublisherClosesSilentlyOnABadRequest(t *testing.T) {
	for name, first := range map[string][]byte{
		"undecodable": peer.Garbage(),
		"too-large":   peer.TooLargePrefix(),
	} {
		t.Run(name, func(t *testing.T) {
			ctx := testCtx(t)
			p := newPublisher(t, ctx, live.PublisherConfig{})
			open(t, p, "gaze", "")
			sub := dial(t, ctx, p)
			if err := sub.Send(ctx, first); err != nil {
				t.Fatal(err)
			}
			tr, err := sub.WaitEnded(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if tr.Bytes != 0 || (!tr.EOF && tr.Err == nil) {
				t.Errorf("transcript = %+v, want a silent close", tr)
			}
			cs, _ := p.WaitConnections(ctx, func(cs []live.ConnStats) bool { return len(cs) == 1 && cs[0].Done })
			if !errors.Is(cs[0].Err, live.ErrBadRequest) {
				t.Errorf("connection error = %v, want ErrBadRequest", cs[0].Err)
			}
		})
	}
}

func TestPublisherShutdownDrains(t *testing.T) {
	ctx := testCtx(t)
	p := newPublisher(t, ctx, live.PublisherConfig{})
	s := open(t, p, "gaze", "")
	sub := dial(t, ctx, p)
	if err := sub.SendRequest(ctx, "gaze", nil); err != nil {
		t.Fatal(err)
	}
	attached(t, ctx, p, 1)
	for range 50 {
		s.Publish(0, []byte("x"))
	}
	sctx, cancel := context.WithTimeout(ctx, hang.Guard(t, 5*time.Second))
	defer cancel()
	if err := p.Shutdown(sctx); err != nil {
		t.Fatal(err)
	}
	tr, err := sub.WaitEnded(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !tr.EOF || tr.FrameCount != 51 {
		t.Errorf("after shutdown: EOF %v with %d frames, want end of stream after 51", tr.EOF, tr.FrameCount)
	}
}

// The reference publisher and subscriber agree with each other.
func TestPublisherToSubscriber(t *testing.T) {
	ctx := testCtx(t)
	p := newPublisher(t, ctx, live.PublisherConfig{})
	a := open(t, p, "gaze", "")
	b, err := p.Open(&messagepb.StreamInfo{Name: "gaze", Schema: &messagepb.SchemaInfo{SchemaId: "s.B"}})
	if err != nil {
		t.Fatal(err)
	}
	sub := live.NewSubscriber(live.SubscriberConfig{})
	defer sub.Close()
	id, err := sub.Subscribe(ctx, p.Addr(), "gaze")
	if err != nil {
		t.Fatal(err)
	}
	attached(t, ctx, p, 1)
	for range 10 {
		a.Publish(0, nil)
		b.Publish(0, nil)
	}
	r, err := sub.Wait(ctx, func(r live.Report) bool { return len(r.Samples) == 20 })
	if err != nil {
		t.Fatal(err)
	}
	if c := r.Counters; c.Streams != 2 || c.Missing != 0 || c.Reordered != 0 || c.Duplicated != 0 {
		t.Errorf("counters = %+v", c)
	}
	for _, s := range r.Stream(id, b.Ref()) {
		if s.Attribution.Schema == nil || s.Attribution.Schema.ID != "s.B" {
			t.Errorf("sample of b attributed %+v", s.Attribution)
		}
	}
}

// TestPublisherHooks: each hook replaces the step it names, and nothing else.
func TestPublisherHooks(t *testing.T) {
	var writes, publishes atomic.Int64
	for _, tc := range []struct {
		name  string
		hooks live.PublisherHooks
		check func(t *testing.T, before, after peer.Transcript)
	}{
		{
			name: "reference",
			check: func(t *testing.T, before, after peer.Transcript) {
				if before.Bytes != 0 {
					t.Errorf("%d bytes before the Request", before.Bytes)
				}
				if anns, smps := countFrames(t, after); anns != 2 || smps != 3 {
					t.Errorf("%d announcements, %d samples; want 2 and 3", anns, smps)
				}
			},
		},
		{
			name:  "sweep announces the first stream only",
			hooks: live.PublisherHooks{Sweep: func(all []*messagepb.StreamInfo) []*messagepb.StreamInfo { return all[:1] }},
			check: func(t *testing.T, _, after peer.Transcript) {
				if anns, _ := countFrames(t, after); anns != 1 {
					t.Errorf("%d announcements; want 1", anns)
				}
			},
		},
		{
			name: "write and publish replaced",
			hooks: live.PublisherHooks{
				Write: func(c net.Conn, b []byte, _ time.Duration, _ <-chan struct{}) error {
					writes.Add(1)
					_, err := c.Write(b)
					return err
				},
				Publish: func(st *streams.Stream, src uint64, v []byte, deliver func(streams.Sample)) {
					publishes.Add(1)
					st.Publish(src, v, deliver)
				},
			},
			check: func(t *testing.T, _, after peer.Transcript) {
				if w, p := writes.Load(), publishes.Load(); w != 5 || p != 3 {
					t.Errorf("%d writes through the hook, %d publishes; want 5 and 3", w, p)
				}
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testCtx(t)
			p := newPublisher(t, ctx, live.PublisherConfig{Hooks: tc.hooks})
			a := open(t, p, "gaze", "")
			open(t, p, "gaze", "")
			sub := dial(t, ctx, p)
			before, _ := sub.Idle(ctx, 50*time.Millisecond)
			if err := sub.SendRequest(ctx, "gaze", nil); err != nil {
				t.Fatal(err)
			}
			attached(t, ctx, p, 1)
			for range 3 {
				a.Publish(0, []byte("v"))
			}
			cs, err := p.WaitConnections(ctx, func(cs []live.ConnStats) bool { return cs[0].Samples == 3 && cs[0].Pending == 0 })
			if err != nil {
				t.Fatalf("%v: %+v", err, cs)
			}
			after, err := sub.Wait(ctx, func(tr peer.Transcript) bool { _, n := countFrames(t, tr); return n == 3 })
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, before, after)
		})
	}
}

// countFrames counts a transcript's announcements and samples.
func countFrames(t *testing.T, tr peer.Transcript) (anns, samples int) {
	t.Helper()
	for _, f := range tr.DataFrames() {
		switch {
		case f.Err != nil:
			t.Errorf("frame does not decode: %v", f.Err)
		case f.Msg.GetAnnounce() != nil:
			anns++
		case f.Msg.GetSample() != nil:
			samples++
		}
	}
	return anns, samples
}

// BenchmarkPublisherToSubscriber measures one sample's trip from Publish to
// the reference subscriber's report over loopback.
func BenchmarkPublisherToSubscriber(b *testing.B) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p, err := live.NewPublisher(ctx, live.PublisherConfig{})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	st, err := p.Open(&messagepb.StreamInfo{Name: "gaze", Node: "n"})
	if err != nil {
		b.Fatal(err)
	}
	sub := live.NewSubscriber(live.SubscriberConfig{MaxRecorded: 1})
	defer sub.Close()
	if _, err := sub.Subscribe(ctx, p.Addr(), "gaze"); err != nil {
		b.Fatal(err)
	}
	if _, err := p.WaitConnections(ctx, func(cs []live.ConnStats) bool { return len(cs) == 1 && cs[0].Attached }); err != nil {
		b.Fatal(err)
	}
	values := make([]byte, 64)
	b.ReportAllocs()
	b.SetBytes(int64(len(values)))
	b.ResetTimer()
	for i := range b.N {
		st.Publish(0, values)
		if i%512 == 511 {
			// Stay within the connection queue's depth.
			sub.Wait(ctx, func(r live.Report) bool { return r.Counters.Arrived >= uint64(i+1) })
		}
	}
	if _, err := sub.Wait(ctx, func(r live.Report) bool { return r.Counters.Arrived >= uint64(b.N) }); err != nil {
		b.Fatal(err)
	}
}

// countingListener counts the connections it accepts.
type countingListener struct {
	net.Listener
	accepted *atomic.Int64
}

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.accepted.Add(1)
	}
	return c, err
}

// TestPublisherListen: the publisher accepts subscribers on the listener
// its Listen returns, and Streams lists what it has open, in reference
// order, without a withdrawn stream.
func TestPublisherListen(t *testing.T) {
	ctx := testCtx(t)
	var accepted atomic.Int64
	p := newPublisher(t, ctx, live.PublisherConfig{Listen: func(ctx context.Context, network, addr string) (net.Listener, error) {
		var lc net.ListenConfig
		ln, err := lc.Listen(ctx, network, addr)
		return countingListener{ln, &accepted}, err
	}})
	a, b, c := open(t, p, "gaze", ""), open(t, p, "gaze", ""), open(t, p, "other", "")
	b.Withdraw()
	sub := dial(t, ctx, p)
	if err := sub.SendRequest(ctx, "gaze", nil); err != nil {
		t.Fatal(err)
	}
	attached(t, ctx, p, 1)
	if n := accepted.Load(); n != 1 {
		t.Errorf("the listener accepted %d connections, want 1", n)
	}
	var refs []uint32
	for _, s := range p.Streams() {
		refs = append(refs, s.Ref())
	}
	if want := []uint32{a.Ref(), c.Ref()}; !slices.Equal(refs, want) {
		t.Errorf("Streams: references %v, want %v", refs, want)
	}
}
