package dpnats_test

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/conform-suite/conform/internal/hang"
	"github.com/conform-suite/conform/ref/doppler"
	"github.com/conform-suite/conform/ref/doppler/dpnats"
)

func TestPullerBeforeAnyPusherFailsAtOnce(t *testing.T) {
	t.Parallel()
	srv := startServer(t, 0)
	start := time.Now()
	_, err := dpnats.NewPuller(testCtx(t), endpointOf(t, srv, "early"), dpnats.Options{})
	wantCode(t, err, doppler.ErrGeneric)
	if !errors.Is(err, jetstream.ErrStreamNotFound) || time.Since(start) > 5*time.Second {
		t.Fatalf("worker first: %v after %v", err, time.Since(start))
	}
}

func TestPushPullRoundTripsEveryType(t *testing.T) {
	t.Parallel()
	srv := startServer(t, 0)
	ep := endpointOf(t, srv, "wq")
	ctx := testCtx(t)
	var pushers []*dpnats.Pusher
	for _, typ := range sendable() {
		p, err := dpnats.NewPusher(ctx, ep, typ, dpnats.Options{})
		if err != nil {
			t.Fatalf("%v: %v", typ, err)
		}
		closeLater(t, p)
		if p.Subject() != "wq.work."+typ.Token() {
			t.Fatalf("subject %q", p.Subject())
		}
		pushers = append(pushers, p)
	}
	_, err := dpnats.NewPusher(ctx, ep, doppler.TypeTLM, dpnats.Options{})
	wantCode(t, err, doppler.ErrInvalid)

	// The stream NewPusher created: DP_WORK_<base>, work queue, <base>.work.*.
	nc := rawConn(t, srv)
	js, _ := jetstream.New(nc)
	st, err := js.Stream(ctx, "DP_WORK_wq")
	if err != nil {
		t.Fatalf("stream: %v", err)
	}
	if cfg := st.CachedInfo().Config; cfg.Retention != jetstream.WorkQueuePolicy ||
		len(cfg.Subjects) != 1 || cfg.Subjects[0] != "wq.work.*" {
		t.Fatalf("stream config %+v", cfg)
	}

	pull, err := dpnats.NewPuller(ctx, ep, dpnats.Options{})
	if err != nil {
		t.Fatal(err)
	}
	closeLater(t, pull)
	for i, p := range pushers {
		for k := range 2 {
			if err := p.Send(ctx, payload(sendable()[i], 50*k, byte(i))); err != nil {
				t.Fatalf("push: %v", err)
			}
		}
	}
	for i, typ := range sendable() {
		for k := range 2 {
			d, err := pull.Recv(ctx)
			if err != nil {
				t.Fatalf("pull: %v", err)
			}
			h := d.Frame.Header
			if h.Kind != typ.Kind() || h.Format != typ.Format() || h.Sequence != uint64(k) ||
				!bytes.Equal(d.Frame.Payload, payload(typ, 50*k, byte(i))) || d.NumDelivered() != 1 {
				t.Fatalf("%v frame %d: %+v", typ, k, h)
			}
			if err := d.Ack(ctx); err != nil {
				t.Fatalf("ack: %v", err)
			}
		}
	}
	info, err := st.Info(ctx)
	if err != nil || info.State.Msgs != 0 {
		t.Fatalf("after every ack the work queue holds %d messages (%v)", info.State.Msgs, err)
	}
	if _, err := js.Consumer(ctx, "DP_WORK_wq", "DP_PULL_wq"); err != nil {
		t.Fatalf("durable consumer DP_PULL_wq: %v", err)
	}
	_, err = pull.Recv(shortCtx(t, 100*time.Millisecond))
	wantCode(t, err, doppler.ErrTimeout)
}

func TestPushRefusesAnOversizedFrameRatherThanChunking(t *testing.T) {
	t.Parallel()
	const maxPayload = 64 << 10
	srv := startServer(t, maxPayload)
	ep := endpointOf(t, srv, "tl")
	ctx := testCtx(t)
	push, err := dpnats.NewPusher(ctx, ep, doppler.TypeCF64, dpnats.Options{})
	if err != nil {
		t.Fatal(err)
	}
	closeLater(t, push)
	if push.MaxPayload() != maxPayload {
		t.Fatalf("max_payload %d", push.MaxPayload())
	}
	fits := (maxPayload - doppler.HeaderSize) / 16
	if err := push.Send(ctx, payload(doppler.TypeCF64, fits, 0)); err != nil {
		t.Fatalf("a frame of exactly max_payload: %v", err)
	}
	err = push.Send(ctx, payload(doppler.TypeCF64, fits+1, 1))
	if de := wantCode(t, err, doppler.ErrTooLarge); !de.HasSequence || de.Sequence != 1 {
		t.Fatalf("refusal %v does not name frame 1", err)
	}
	if push.NextSequence() != 1 {
		t.Fatalf("the refused frame consumed a sequence number: next is %d", push.NextSequence())
	}
	if err := push.Send(ctx, payload(doppler.TypeCF64, 1, 2)); err != nil {
		t.Fatal(err)
	}
	pull, err := dpnats.NewPuller(ctx, ep, dpnats.Options{})
	if err != nil {
		t.Fatal(err)
	}
	closeLater(t, pull)
	for _, want := range []uint64{0, 1} {
		d, err := pull.Recv(ctx)
		if err != nil || d.Frame.Header.Sequence != want || d.Frame.Header.Chunked() {
			t.Fatalf("frame %d: %v", want, err)
		}
		if err := d.Ack(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

func TestAFrameAWorkerDiesHoldingIsRedeliveredToAnother(t *testing.T) {
	t.Parallel()
	srv := startServer(t, 0)
	ep := endpointOf(t, srv, "redeliver")
	ctx := testCtx(t)
	push, err := dpnats.NewPusher(ctx, ep, doppler.TypeCI16, dpnats.Options{})
	if err != nil {
		t.Fatal(err)
	}
	closeLater(t, push)
	const ackWait = 500 * time.Millisecond
	first, err := dpnats.NewPuller(ctx, ep, dpnats.Options{AckWait: ackWait})
	if err != nil {
		t.Fatal(err)
	}
	second, err := dpnats.NewPuller(ctx, ep, dpnats.Options{AckWait: ackWait})
	if err != nil {
		t.Fatal(err)
	}
	closeLater(t, second)
	p := payload(doppler.TypeCI16, 256, 4)
	if err := push.Send(ctx, p); err != nil {
		t.Fatal(err)
	}
	d, err := first.Recv(ctx)
	if err != nil || d.NumDelivered() != 1 {
		t.Fatalf("first worker: %v", err)
	}
	// The first worker dies without acking.
	_ = first.Close()
	wantCode(t, d.Ack(ctx), doppler.ErrClosed)

	start := time.Now()
	again, err := second.Recv(ctx)
	if err != nil {
		t.Fatalf("second worker: %v", err)
	}
	if again.NumDelivered() != 2 || again.Frame.Header.Sequence != 0 || !bytes.Equal(again.Frame.Payload, p) {
		t.Fatalf("redelivery: delivered %d times, header %+v", again.NumDelivered(), again.Frame.Header)
	}
	if waited := time.Since(start); waited > 10*ackWait {
		t.Fatalf("redelivery took %v with an ack wait of %v", waited, ackWait)
	}
	if err := again.Ack(ctx); err != nil {
		t.Fatal(err)
	}
	// Acked: never delivered again.
	_, err = second.Recv(shortCtx(t, 3*ackWait))
	wantCode(t, err, doppler.ErrTimeout)
}

func TestNakRedeliversAtOnce(t *testing.T) {
	t.Parallel()
	srv := startServer(t, 0)
	ep := endpointOf(t, srv, "nak")
	ctx := testCtx(t)
	push, err := dpnats.NewPusher(ctx, ep, doppler.TypeRaw, dpnats.Options{})
	if err != nil {
		t.Fatal(err)
	}
	closeLater(t, push)
	pull, err := dpnats.NewPuller(ctx, ep, dpnats.Options{})
	if err != nil {
		t.Fatal(err)
	}
	closeLater(t, pull)
	if err := push.Send(ctx, []byte("job")); err != nil {
		t.Fatal(err)
	}
	d, err := pull.Recv(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Nak(); err != nil {
		t.Fatal(err)
	}
	// The default ack wait is 30 s; a Nak brings the frame back long before.
	again, err := pull.Recv(shortCtx(t, 5*time.Second))
	if err != nil || again.NumDelivered() != 2 || string(again.Frame.Payload) != "job" {
		t.Fatalf("after Nak: %v", err)
	}
	if err := again.Ack(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestPullerRefusesAndTerminatesBadMessages(t *testing.T) {
	t.Parallel()
	srv := startServer(t, 0)
	ep := endpointOf(t, srv, "wbad")
	ctx := testCtx(t)
	push, err := dpnats.NewPusher(ctx, ep, doppler.TypeCF32, dpnats.Options{})
	if err != nil {
		t.Fatal(err)
	}
	closeLater(t, push)
	pull, err := dpnats.NewPuller(ctx, ep, dpnats.Options{AckWait: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	closeLater(t, pull)
	js, _ := jetstream.New(rawConn(t, srv))
	subject := ep.WorkSubject(doppler.TypeCF32)
	f, _ := doppler.NewFrame(doppler.TypeCF32, doppler.LittleEndian, payload(doppler.TypeCF32, 64, 0))
	chunks, _ := doppler.Chunk(f, doppler.HeaderSize+doppler.ChunkBlockSize+128, doppler.LittleEndian)
	for _, m := range [][]byte{
		craft(t, doppler.TypeCF32, 4, 1, func(h *doppler.Header) { h.NumSamples = 3 }),
		chunks[0],
	} {
		if _, err := js.Publish(ctx, subject, m); err != nil {
			t.Fatal(err)
		}
	}
	_, err = pull.Recv(ctx)
	if de := wantCode(t, err, doppler.ErrInvalid); de.Verdict != doppler.CountMismatch {
		t.Fatalf("verdict %v", de.Verdict)
	}
	_, err = pull.Recv(ctx)
	wantCode(t, err, doppler.ErrInvalid)
	// Terminated, so not redelivered after the ack wait.
	_, err = pull.Recv(shortCtx(t, time.Second))
	wantCode(t, err, doppler.ErrTimeout)
	if s := pull.Stats(); s != (dpnats.Stats{Messages: 2, Refused: 2}) {
		t.Fatalf("stats %+v", s)
	}
}

func TestWorkerDrainAndCloseEndABlockedPull(t *testing.T) {
	t.Parallel()
	srv := startServer(t, 0)
	ep := endpointOf(t, srv, "wdrain")
	ctx := testCtx(t)
	push, err := dpnats.NewPusher(ctx, ep, doppler.TypeCI8, dpnats.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := push.Send(ctx, payload(doppler.TypeCI8, 2, 0)); err != nil {
		t.Fatal(err)
	}
	if err := push.Drain(ctx); err != nil {
		t.Fatalf("pusher drain: %v", err)
	}
	wantCode(t, push.Send(ctx, payload(doppler.TypeCI8, 2, 0)), doppler.ErrClosed)

	for _, end := range []string{"drain", "close"} {
		pull, err := dpnats.NewPuller(ctx, ep, dpnats.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if end == "drain" {
			d, err := pull.Recv(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if err := d.Ack(ctx); err != nil {
				t.Fatal(err)
			}
		}
		errc := make(chan error, 1)
		go func() {
			_, err := pull.Recv(ctx) // nothing left: blocks
			errc <- err
		}()
		time.Sleep(100 * time.Millisecond)
		if end == "drain" {
			if err := pull.Drain(ctx); err != nil {
				t.Fatalf("puller drain: %v", err)
			}
		} else {
			_ = pull.Close()
		}
		select {
		case err := <-errc:
			wantCode(t, err, doppler.ErrClosed)
		case <-time.After(hang.Guard(t, 5*time.Second)):
			t.Fatalf("%s left Recv blocked", end)
		}
	}
}
