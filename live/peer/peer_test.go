package peer_test

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/conform-suite/conform/internal/hang"
	"github.com/conform-suite/conform/live/peer"
	messagepb "github.com/conform-suite/conform/proto/ranvier/message/v1"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func testCtx(t *testing.T) context.Context {
	t.Helper()
	return hang.Context(t, 20*time.Second)
}

// pair connects a PeerSubscriber to a PeerPublisher: the harness talking to
// itself, which is enough to test the machinery both sides share.
func pair(t *testing.T, ctx context.Context, limits peer.Limits) (*peer.PeerSubscriber, *peer.Conn) {
	t.Helper()
	pp, err := peer.ListenPublisher(ctx, limits)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pp.Close() })
	sub, err := peer.DialPublisher(ctx, pp.Addr(), 0, limits)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sub.Close() })
	conn, err := pp.Accept(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return sub, conn
}

func frames() [][]byte {
	var out [][]byte
	out = append(out, peer.Announce(&messagepb.StreamInfo{Name: "g", StreamRef: 1}))
	for i := range 20 {
		out = append(out, peer.Sample(&messagepb.Sample{StreamRef: 1, Sequence: uint64(i + 1), Values: bytes.Repeat([]byte{byte(i)}, i)}))
	}
	out = append(out, peer.EmptyFrame(), peer.Garbage())
	return out
}

func TestEverySegmentationDeliversTheSameFrames(t *testing.T) {
	want := frames()
	for _, seg := range []peer.Segmentation{
		peer.Whole(), peer.Coalesced(), peer.ByteAtATime(0), peer.ByteAtATime(50 * time.Microsecond),
		peer.SplitPrefix(1, time.Millisecond), peer.SplitPrefix(3, 0), peer.Chunks(5, 0), peer.Random(7, 11, 0),
	} {
		t.Run(seg.Name, func(t *testing.T) {
			ctx := testCtx(t)
			sub, conn := pair(t, ctx, peer.Limits{})
			if err := sub.SendRequest(ctx, "g", nil); err != nil {
				t.Fatal(err)
			}
			rc, err := conn.WaitRequest(ctx)
			if err != nil || rc.Request.GetStreamName() != "g" || rc.ExtraBytes != 0 {
				t.Fatalf("request = %+v, %v", rc, err)
			}
			if err := conn.Write(ctx, seg, want...); err != nil {
				t.Fatal(err)
			}
			tr, err := sub.WaitFrames(ctx, len(want))
			if err != nil {
				t.Fatal(err)
			}
			for i, f := range tr.Frames {
				if !bytes.Equal(f.Payload, want[i][4:]) {
					t.Errorf("frame %d = %x, want %x", i, f.Payload, want[i][4:])
				}
			}
			if m, ok := tr.Mark(peer.MarkRequest); !ok || m.Bytes != 0 {
				t.Errorf("request mark = %+v, %v", m, ok)
			}
		})
	}
}

func TestSegmentationCuts(t *testing.T) {
	// SplitPrefix really ends a write inside each prefix: observed here by
	// the write count, one more per frame than Whole.
	a, b := make([]byte, 10), make([]byte, 6)
	for name, tc := range map[string]struct {
		seg  peer.Segmentation
		want int
	}{
		"whole":     {peer.Whole(), 2},
		"coalesced": {peer.Coalesced(), 1},
		"bytes":     {peer.ByteAtATime(0), 16},
		"split-2":   {peer.SplitPrefix(2, 0), 3},
		"chunks-4":  {peer.Chunks(4, 0), 4},
	} {
		if got := len(tc.seg.Writes(a, b)); got != tc.want {
			t.Errorf("%s: %d writes, want %d", name, got, tc.want)
		}
	}
}

func TestExtraBytesAfterTheRequestAreSeen(t *testing.T) {
	ctx := testCtx(t)
	sub, conn := pair(t, ctx, peer.Limits{})
	if err := sub.SendRequest(ctx, "g", peer.Garbage()); err != nil {
		t.Fatal(err)
	}
	tr, err := conn.WaitFrames(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	if rc := tr.Request(); rc.ExtraFrames != 1 || rc.ExtraBytes != int64(len(peer.Garbage())) {
		t.Errorf("request check = %+v, want one extra frame", rc)
	}
}

func TestPauseAndResume(t *testing.T) {
	ctx := testCtx(t)
	sub, conn := pair(t, ctx, peer.Limits{})
	sub.Pause()
	// Large enough to fill the socket buffers at both ends.
	big := peer.RawFrame(make([]byte, 1<<20))
	wctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	var err error
	for range 64 {
		if err = conn.Send(wctx, big); err != nil {
			break
		}
	}
	if err == nil {
		t.Fatal("64 MiB written to a paused reader: Pause does not stop reading")
	}
	sub.Resume()
	if _, err := sub.WaitFrames(ctx, 2); err != nil {
		t.Fatal(err)
	}
}

func TestLimitsBoundTheTranscript(t *testing.T) {
	ctx := testCtx(t)
	sub, conn := pair(t, ctx, peer.Limits{MaxFrames: 3})
	fs := frames()
	conn.Send(ctx, fs...)
	tr, err := sub.WaitFrames(ctx, len(fs))
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Frames) != 3 || !tr.Overflow || tr.FrameCount != len(fs) {
		t.Errorf("kept %d of %d frames, overflow %v", len(tr.Frames), tr.FrameCount, tr.Overflow)
	}
}

func TestTooLargePrefixAndEndOfStream(t *testing.T) {
	ctx := testCtx(t)
	sub, conn := pair(t, ctx, peer.Limits{})
	conn.Send(ctx, peer.EmptyFrame(), peer.TooLargePrefix(), peer.EmptyFrame())
	conn.CloseWrite()
	tr, err := sub.WaitEnded(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if tr.FrameCount != 1 || tr.FramingError == nil || !tr.EOF || tr.Bytes != 12 {
		t.Errorf("transcript = %+v", tr)
	}
}

func TestRuntimeEnvironment(t *testing.T) {
	ctx := testCtx(t)
	rt, err := peer.ListenRuntime(ctx, peer.RuntimeConfig{NodeID: "n7", ExtraEnv: map[string]string{"RANVIER_BINDINGS": "decoy"}})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	env := rt.Env()
	for _, want := range []string{
		"RANVIER_CONTROL=" + rt.Addr(), "RANVIER_TOKEN=" + rt.Token(), "RANVIER_NODE_ID=n7",
		"RANVIER_PARAMS={}", "RANVIER_BINDINGS=decoy",
	} {
		if !slices.Contains(env, want) {
			t.Errorf("env %v lacks %s", env, want)
		}
	}
	if !strings.HasPrefix(rt.Addr(), "127.0.0.1:") || len(rt.Token()) != 32 {
		t.Errorf("addr %s, token %q", rt.Addr(), rt.Token())
	}
	actx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if _, err := rt.Accept(actx); err == nil {
		t.Error("Accept returned with nobody dialling")
	}
}

// TestSyncSeesEverythingSent: once Sync returns, every byte the far end
// had sent is in the transcript, whatever the recorder's pace. Sending in
// many small writes gives a recorder that lags the chance to show.
func TestSyncSeesEverythingSent(t *testing.T) {
	ctx := testCtx(t)
	sub, conn := pair(t, ctx, peer.Limits{})
	// A recorder that has stopped reading, as a starved one would, until
	// well after Sync is called.
	conn.Pause()
	want := 0
	for i := range 200 {
		f := peer.RawFrame(bytes.Repeat([]byte{byte(i)}, i))
		want += len(f)
		if err := sub.Send(ctx, f); err != nil {
			t.Fatal(err)
		}
	}
	// Loopback delivers a write to the far socket a moment after it
	// returns; wait for the kernel, not for the recorder.
	for {
		n, err := conn.Received()
		if err != nil {
			t.Skipf("this system does not count received bytes: %v", err)
		}
		if n == int64(want) {
			break
		}
		if n > int64(want) || ctx.Err() != nil {
			t.Fatalf("Received = %d, want the %d bytes sent", n, want)
		}
		time.Sleep(time.Millisecond)
	}
	time.AfterFunc(50*time.Millisecond, conn.Resume)
	tr, err := conn.Sync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if tr.Bytes != int64(want) || tr.FrameCount != 200 {
		t.Errorf("after Sync the transcript holds %d bytes, %d frames; want %d bytes, 200 frames", tr.Bytes, tr.FrameCount, want)
	}
}

// TestPaceBoundsEachWriteNotTheWhole: Pace's pauses are the harness's own
// and never run into the stall bound; a far end that stops reading does,
// and is told apart with ErrStalled.
func TestPaceBoundsEachWriteNotTheWhole(t *testing.T) {
	ctx := testCtx(t)
	sub, conn := pair(t, ctx, peer.Limits{})
	// Forty pauses of 5 ms are 200 ms of writing against a stall bound of
	// 50 ms: Write under one 50 ms deadline fails this, Pace must not.
	if err := conn.Pace(ctx, 50*time.Millisecond, peer.Chunks(1, 5*time.Millisecond), make([]byte, 40)); err != nil {
		t.Fatalf("Pace failed on its own pauses: %v", err)
	}
	sub.Pause()
	big := peer.RawFrame(make([]byte, 1<<20))
	var err error
	for range 64 {
		if err = conn.Pace(ctx, 100*time.Millisecond, peer.Whole(), big); err != nil {
			break
		}
	}
	if !errors.Is(err, peer.ErrStalled) {
		t.Errorf("writing to a reader that stopped: %v, want ErrStalled", err)
	}
	sub.Resume()
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := conn.Pace(cctx, time.Second, peer.Whole(), []byte{0}); !errors.Is(err, context.Canceled) {
		t.Errorf("Pace with a cancelled context: %v, want context.Canceled", err)
	}
}

// TestResetIsNotEndOfStream: the far end of a Reset reads a reset, not a
// clean end of stream.
func TestResetIsNotEndOfStream(t *testing.T) {
	ctx := testCtx(t)
	sub, conn := pair(t, ctx, peer.Limits{})
	if err := sub.Reset(); err != nil {
		t.Fatal(err)
	}
	tr, err := conn.WaitEnded(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if tr.EOF || tr.Err == nil {
		t.Errorf("after a reset the far end read EOF %v, err %v; want a reset error", tr.EOF, tr.Err)
	}
}
