package dpnats_test

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/conform-suite/conform/ref/doppler"
	"github.com/conform-suite/conform/ref/doppler/dpnats"
)

// echo serves requests until its context ends, replying to each with the
// request's own type and payload, except that a RAW request gets the reply
// "ack:" + its bytes through the raw face.
func echo(ctx context.Context, rep *dpnats.Replier) error {
	for {
		req, err := rep.Recv(ctx)
		if err != nil {
			if errors.Is(err, doppler.ErrInvalid) {
				continue
			}
			return err
		}
		t, _ := doppler.TypeOf(req.Frame.Header.Kind, req.Frame.Header.Format)
		if t == doppler.TypeRaw {
			err = req.ReplyBytes(ctx, append([]byte("ack:"), req.Frame.Payload...))
		} else {
			err = req.Reply(ctx, t, req.Frame.Payload)
		}
		if err != nil {
			return err
		}
	}
}

func TestReqRepRoundTripsEveryTypeAndTheRawFace(t *testing.T) {
	t.Parallel()
	srv := startServer(t, 0)
	ep := endpointOf(t, srv, "rr")
	ctx := testCtx(t)
	rep, err := dpnats.NewReplier(ctx, ep, dpnats.Options{})
	if err != nil {
		t.Fatal(err)
	}
	serveCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- echo(serveCtx, rep) }()
	defer func() {
		stop()
		wantCode(t, <-done, doppler.ErrInterrupted)
		if err := rep.Drain(ctx); err != nil {
			t.Errorf("replier drain: %v", err)
		}
	}()

	req, err := dpnats.NewRequester(ctx, ep, dpnats.Options{SampleRateHz: 1e3})
	if err != nil {
		t.Fatal(err)
	}
	closeLater(t, req)
	for i, typ := range sendable() {
		if typ == doppler.TypeRaw {
			continue
		}
		p := payload(typ, 100, byte(i))
		f, err := req.Request(ctx, typ, p)
		if err != nil {
			t.Fatalf("%v: %v", typ, err)
		}
		// The reply carries the replier's own sequence, from 0.
		if f.Header.Sequence != uint64(i) || f.Header.Kind != typ.Kind() || f.Header.Format != typ.Format() ||
			!bytes.Equal(f.Payload, p) {
			t.Fatalf("%v: reply %+v", typ, f.Header)
		}
	}
	got, err := req.RequestBytes(ctx, []byte("status?"))
	if err != nil || string(got) != "ack:status?" {
		t.Fatalf("raw face: %q, %v", got, err)
	}
	if req.NextSequence() != uint64(len(sendable())) {
		t.Fatalf("requester sequence %d after %d requests", req.NextSequence(), len(sendable()))
	}
	if s := rep.Stats(); s.Frames != uint64(len(sendable())) || s.Refused != 0 {
		t.Fatalf("replier stats %+v", s)
	}

	// Telemetry is a Publisher's alone.
	_, err = req.Request(ctx, doppler.TypeTLM, make([]byte, 16))
	wantCode(t, err, doppler.ErrInvalid)
}

func TestReqRepRefusesAnOversizedFrameAndNeverChunks(t *testing.T) {
	t.Parallel()
	const maxPayload = 64 << 10
	srv := startServer(t, maxPayload)
	ep := endpointOf(t, srv, "big")
	ctx := testCtx(t)
	req, err := dpnats.NewRequester(ctx, ep, dpnats.Options{})
	if err != nil {
		t.Fatal(err)
	}
	closeLater(t, req)
	_, err = req.RequestBytes(ctx, make([]byte, maxPayload-doppler.HeaderSize+1))
	wantCode(t, err, doppler.ErrTooLarge)
	if req.NextSequence() != 0 {
		t.Fatalf("an oversized request consumed sequence %d", req.NextSequence())
	}
}

func TestRequestWithNoReplierFailsAtOnce(t *testing.T) {
	t.Parallel()
	srv := startServer(t, 0)
	ctx := testCtx(t)
	req, err := dpnats.NewRequester(ctx, endpointOf(t, srv, "none"), dpnats.Options{})
	if err != nil {
		t.Fatal(err)
	}
	closeLater(t, req)
	start := time.Now()
	_, err = req.RequestBytes(ctx, []byte("anyone?"))
	wantCode(t, err, doppler.ErrGeneric)
	if !errors.Is(err, nats.ErrNoResponders) || time.Since(start) > 5*time.Second {
		t.Fatalf("no replier: %v after %v", err, time.Since(start))
	}
}

func TestReplierRefusesBadRequestsAndRequesterDropsLateReplies(t *testing.T) {
	t.Parallel()
	srv := startServer(t, 0)
	ep := endpointOf(t, srv, "late")
	ctx := testCtx(t)
	rep, err := dpnats.NewReplier(ctx, ep, dpnats.Options{})
	if err != nil {
		t.Fatal(err)
	}
	closeLater(t, rep)
	nc := rawConn(t, srv)

	// A refused request and a chunked one are reported, not answered.
	bad := craft(t, doppler.TypeCI16, 4, 1, func(h *doppler.Header) { h.Flags = 0x80 })
	f, _ := doppler.NewFrame(doppler.TypeCI16, doppler.LittleEndian, payload(doppler.TypeCI16, 64, 0))
	chunks, _ := doppler.Chunk(f, doppler.HeaderSize+doppler.ChunkBlockSize+64, doppler.LittleEndian)
	for _, m := range [][]byte{bad, chunks[0]} {
		if err := nc.PublishRequest(ep.ReqSubject(), "nobody", m); err != nil {
			t.Fatal(err)
		}
	}
	_, err = rep.Recv(ctx)
	if de := wantCode(t, err, doppler.ErrInvalid); de.Verdict != doppler.UnknownFlags {
		t.Fatalf("verdict %v", de.Verdict)
	}
	_, err = rep.Recv(ctx)
	wantCode(t, err, doppler.ErrInvalid)

	// A request whose requester gave up: its late reply must not be taken
	// as the answer to the next request.
	req, err := dpnats.NewRequester(ctx, ep, dpnats.Options{})
	if err != nil {
		t.Fatal(err)
	}
	closeLater(t, req)
	_, err = req.RequestBytes(shortCtx(t, 300*time.Millisecond), []byte("first"))
	wantCode(t, err, doppler.ErrTimeout)
	first, err := rep.Recv(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := first.ReplyBytes(ctx, []byte("late")); err != nil {
		t.Fatal(err)
	}
	go func() {
		second, err := rep.Recv(ctx)
		if err == nil {
			_ = second.ReplyBytes(ctx, []byte("second"))
		}
	}()
	got, err := req.RequestBytes(ctx, []byte("second"))
	if err != nil || string(got) != "second" {
		t.Fatalf("second request got %q, %v", got, err)
	}

	// A request with no reply subject cannot be answered.
	if err := nc.Publish(ep.ReqSubject(), craft(t, doppler.TypeRaw, 3, 7, nil)); err != nil {
		t.Fatal(err)
	}
	orphan, err := rep.Recv(ctx)
	if err != nil {
		t.Fatal(err)
	}
	wantCode(t, orphan.ReplyBytes(ctx, []byte("x")), doppler.ErrInvalid)
}
