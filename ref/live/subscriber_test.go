package live_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/conform-suite/conform/internal/hang"
	"github.com/conform-suite/conform/live/peer"
	messagepb "github.com/conform-suite/conform/proto/ranvier/message/v1"
	"github.com/conform-suite/conform/ref/live"
	"github.com/conform-suite/conform/ref/streams"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// testCtx returns a context bounded well above anything a test waits for.
func testCtx(t *testing.T) context.Context {
	t.Helper()
	return hang.Context(t, 20*time.Second)
}

func info(name string, ref uint32, schema string) *messagepb.StreamInfo {
	return &messagepb.StreamInfo{Name: name, Node: "n", StreamRef: ref, Schema: &messagepb.SchemaInfo{SchemaId: schema}}
}

func sample(ref uint32, seq uint64) *messagepb.Sample {
	return &messagepb.Sample{StreamRef: ref, Sequence: seq, MonotonicTimestampNs: seq * 10, Values: []byte{byte(seq)}}
}

// script is a conversation exercising every rule of the receive step.
func script() [][]byte {
	return [][]byte{
		peer.Announce(info("gaze", 1, "s.A")),
		peer.Sample(sample(1, 1)),
		peer.EmptyFrame(),         // skipped, counted (§6.4, streams §3.6a)
		peer.Garbage(),            // skipped, counted, connection kept (§6.3)
		peer.Sample(sample(2, 1)), // never announced: schema unknown (§6.5)
		peer.Announce(info("gaze", 3, "s.B")),
		peer.Sample(sample(1, 2)),
		peer.Sample(sample(3, 1)),
		peer.Sample(sample(1, 4)), // one lost
	}
}

// subscribe starts a reference subscriber against a PeerPublisher and returns
// both ends of the connection.
func subscribe(t *testing.T, ctx context.Context, name string) (*live.Subscriber, *peer.PeerPublisher, *peer.Conn, streams.ConnID) {
	t.Helper()
	pp, err := peer.ListenPublisher(ctx, peer.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pp.Close() })
	sub := live.NewSubscriber(live.SubscriberConfig{})
	t.Cleanup(func() { sub.Close() })
	id, err := sub.Subscribe(ctx, pp.Addr(), name)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := pp.Accept(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rc, err := conn.WaitRequest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rc.DecodeErr != nil || rc.Request.GetStreamName() != name {
		t.Fatalf("first frame = %x (%v), want Request %q", rc.Payload, rc.DecodeErr, name)
	}
	return sub, pp, conn, id
}

func TestSubscriberEverySegmentation(t *testing.T) {
	segs := []peer.Segmentation{
		peer.Whole(),
		peer.Coalesced(),
		peer.ByteAtATime(200 * time.Microsecond),
		peer.SplitPrefix(1, time.Millisecond),
		peer.SplitPrefix(2, time.Millisecond),
		peer.SplitPrefix(3, time.Millisecond),
		peer.Chunks(7, time.Millisecond),
		peer.Random(42, 9, 500*time.Microsecond),
	}
	for _, seg := range segs {
		t.Run(seg.Name, func(t *testing.T) {
			t.Parallel()
			ctx := testCtx(t)
			sub, _, conn, id := subscribe(t, ctx, "gaze")
			if err := conn.Write(ctx, seg, script()...); err != nil {
				t.Fatal(err)
			}
			if err := conn.CloseWrite(); err != nil {
				t.Fatal(err)
			}
			r, err := sub.Wait(ctx, func(r live.Report) bool { c, _ := r.Conn(id); return c.Ended })
			if err != nil {
				t.Fatal(err)
			}
			c, _ := r.Conn(id)
			if !c.EndOfStream || c.FramingError != nil || c.Err != nil || c.Truncated {
				t.Errorf("connection end = %+v, want a clean end of stream", c)
			}
			if c.Frames != (streams.FrameCounts{Samples: 5, Announcements: 2, Unreadable: 2}) {
				t.Errorf("frames = %+v, want 5 samples, 2 announcements, 2 unreadable", c.Frames)
			}
			if len(r.Samples) != 5 {
				t.Fatalf("samples = %d, want 5", len(r.Samples))
			}
			wantSchema := map[uint32]string{1: "s.A", 3: "s.B"}
			for _, s := range r.Samples {
				want, announced := wantSchema[s.StreamRef]
				if s.Attribution.Known != announced {
					t.Errorf("sample ref %d seq %d: known = %v, want %v", s.StreamRef, s.Sequence, s.Attribution.Known, announced)
				}
				if announced && (s.Attribution.Schema == nil || s.Attribution.Schema.ID != want) {
					t.Errorf("sample ref %d: schema = %+v, want %s", s.StreamRef, s.Attribution.Schema, want)
				}
				if !announced && s.Attribution.Schema != nil {
					t.Errorf("unannounced sample ref %d borrowed schema %+v", s.StreamRef, s.Attribution.Schema)
				}
			}
			if got := r.Counters; got.Streams != 3 || got.Missing != 1 || got.Breaks != 1 || got.Duplicated != 0 {
				t.Errorf("counters = %+v, want streams 3, missing 1, breaks 1", got)
			}
			if got := len(r.Stream(id, 1)); got != 3 {
				t.Errorf("samples of (conn, 1) = %d, want 3", got)
			}
			// The subscriber sent its Request and nothing else (§4.1).
			if rc := conn.Transcript().Request(); rc.ExtraBytes != 0 {
				t.Errorf("subscriber sent %d bytes after its Request", rc.ExtraBytes)
			}
		})
	}
}

func TestSubscriberTooLargeClosesWithoutResynchronising(t *testing.T) {
	ctx := testCtx(t)
	sub, _, conn, id := subscribe(t, ctx, "gaze")
	frames := [][]byte{
		peer.Announce(info("gaze", 1, "s.A")),
		peer.Sample(sample(1, 1)),
		peer.TooLargePrefix(),
		peer.Sample(sample(1, 2)), // a plausible frame after the bad prefix
	}
	if err := conn.Write(ctx, peer.Coalesced(), frames...); err != nil {
		t.Fatal(err)
	}
	r, err := sub.Wait(ctx, func(r live.Report) bool { c, _ := r.Conn(id); return c.Ended })
	if err != nil {
		t.Fatal(err)
	}
	c, _ := r.Conn(id)
	if c.FramingError == nil {
		t.Errorf("connection end = %+v, want a framing error", c)
	}
	if len(r.Samples) != 1 {
		t.Errorf("samples = %d, want 1: nothing after the bad prefix", len(r.Samples))
	}
	// The subscriber closed its end: the harness reads end of stream.
	if tr, err := conn.WaitEnded(ctx); err != nil || !tr.EOF {
		t.Errorf("harness side: %+v, %v; want end of stream", tr, err)
	}
}

func TestSubscriberSilenceIsNotAClose(t *testing.T) {
	ctx := testCtx(t)
	sub, _, conn, id := subscribe(t, ctx, "gaze")
	if err := conn.Send(ctx, peer.Announce(info("gaze", 1, "s.A")), peer.Sample(sample(1, 1))); err != nil {
		t.Fatal(err)
	}
	// A few hundred milliseconds stand in for the 31-second silence, far
	// inside the default 30-second read timeout; TestSubscriberReadTimeout
	// shows a timeout that does fire is not a close either (§6.5).
	if tr, err := conn.Idle(ctx, 300*time.Millisecond); err != nil || tr.Ended {
		t.Fatalf("after silence: %+v, %v; want the connection open", tr, err)
	}
	// Half a frame, then more silence, then the rest.
	b := peer.Sample(sample(1, 2))
	if err := conn.Send(ctx, b[:3]); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Idle(ctx, 100*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if err := conn.Send(ctx, b[3:]); err != nil {
		t.Fatal(err)
	}
	r, err := sub.Wait(ctx, func(r live.Report) bool { return len(r.Samples) == 2 })
	if err != nil {
		t.Fatal(err)
	}
	if c, _ := r.Conn(id); c.Ended {
		t.Errorf("connection ended after silence: %+v", c)
	}
	// A truncated tail at end of stream is dropped, not delivered (§1.3).
	if err := conn.Send(ctx, b[:6]); err != nil {
		t.Fatal(err)
	}
	conn.CloseWrite()
	r, err = sub.Wait(ctx, func(r live.Report) bool { c, _ := r.Conn(id); return c.Ended })
	if err != nil {
		t.Fatal(err)
	}
	if c, _ := r.Conn(id); !c.EndOfStream || !c.Truncated || len(r.Samples) != 2 {
		t.Errorf("end = %+v with %d samples; want end of stream, truncated, 2 samples", c, len(r.Samples))
	}
}

func TestSubscriberTwoPublishersOneName(t *testing.T) {
	ctx := testCtx(t)
	sub, _, c1, id1 := subscribe(t, ctx, "trial.events")
	pp2, err := peer.ListenPublisher(ctx, peer.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	defer pp2.Close()
	id2, err := sub.Subscribe(ctx, pp2.Addr(), "trial.events")
	if err != nil {
		t.Fatal(err)
	}
	c2, err := pp2.Accept(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Both runtimes allocate from 1: both streams are reference 1
	// (streams §2.4).
	c1.Send(ctx, peer.Announce(info("trial.events", 1, "stimulus")))
	c2.Send(ctx, peer.Announce(info("trial.events", 1, "buttons")))
	for seq := uint64(1); seq <= 3; seq++ {
		c1.Send(ctx, peer.Sample(sample(1, seq)))
		c2.Send(ctx, peer.Sample(sample(1, seq)))
	}
	r, err := sub.Wait(ctx, func(r live.Report) bool { return len(r.Samples) == 6 })
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Counters; got.Streams != 2 || got.Missing != 0 || got.Duplicated != 0 || got.Reordered != 0 {
		t.Errorf("counters = %+v, want two clean streams", got)
	}
	for _, s := range r.Samples {
		want := map[streams.ConnID]string{id1: "stimulus", id2: "buttons"}[s.Conn]
		if s.Attribution.Schema == nil || s.Attribution.Schema.ID != want {
			t.Errorf("sample on conn %d attributed %+v, want %s", s.Conn, s.Attribution.Schema, want)
		}
	}
}

func TestSubscriberReadTimeout(t *testing.T) {
	for _, tc := range []struct {
		name     string
		hook     func(streams.ConnID) error
		wantOpen bool
	}{
		{"reference reads on", nil, true},
		{"a hook that closes", func(id streams.ConnID) error { return errors.New("quiet") }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testCtx(t)
			pp, err := peer.ListenPublisher(ctx, peer.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			defer pp.Close()
			timeouts := 0
			sub := live.NewSubscriber(live.SubscriberConfig{ReadTimeout: 20 * time.Millisecond})
			if tc.hook != nil {
				sub = live.NewSubscriber(live.SubscriberConfig{ReadTimeout: 20 * time.Millisecond, Hooks: live.SubscriberHooks{
					ReadTimedOut: func(id streams.ConnID) error { timeouts++; return tc.hook(id) },
				}})
			}
			defer sub.Close()
			id, err := sub.SubscribeWith(ctx, pp.Addr(), "gaze", live.SubscribeOptions{ReadTimeout: 30 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			conn, err := pp.Accept(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := conn.Idle(ctx, 200*time.Millisecond); err != nil {
				t.Fatal(err)
			}
			if err := conn.Send(ctx, peer.Sample(sample(1, 1))); err != nil && tc.wantOpen {
				t.Fatal(err)
			}
			r, err := sub.Wait(ctx, func(r live.Report) bool {
				c, _ := r.Conn(id)
				return c.Ended || len(r.Samples) == 1
			})
			if err != nil {
				t.Fatal(err)
			}
			c, _ := r.Conn(id)
			if c.Ended == tc.wantOpen {
				t.Errorf("after several read timeouts: %+v; want open %v", c, tc.wantOpen)
			}
			if !tc.wantOpen && (!c.ClosedBySubscriber || c.Err == nil || timeouts != 1) {
				t.Errorf("closed by the hook: %+v after %d timeouts; want closed by the subscriber with the hook's error, after one", c, timeouts)
			}
			if c.LocalAddr == "" {
				t.Error("the report names no local address")
			}
		})
	}
}
