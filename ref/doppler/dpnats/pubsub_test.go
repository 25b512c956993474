package dpnats_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/conform-suite/conform/internal/hang"
	"github.com/conform-suite/conform/ref/doppler"
	"github.com/conform-suite/conform/ref/doppler/dpnats"
)

func TestPubSubRoundTripsEveryType(t *testing.T) {
	t.Parallel()
	srv := startServer(t, 0)
	ep := endpointOf(t, srv, "rt")
	ctx := testCtx(t)
	wild, err := dpnats.NewSubscriber(ctx, ep, dpnats.AnyType, dpnats.Options{})
	if err != nil {
		t.Fatalf("wildcard subscriber: %v", err)
	}
	closeLater(t, wild)
	if wild.Subject() != "rt.pub.*" {
		t.Fatalf("wildcard subject %q", wild.Subject())
	}
	for _, typ := range doppler.Types() {
		t.Run(typ.String(), func(t *testing.T) {
			sub, err := dpnats.NewSubscriber(ctx, ep, typ, dpnats.Options{})
			if err != nil {
				t.Fatalf("subscriber: %v", err)
			}
			closeLater(t, sub)
			pub, err := dpnats.NewPublisher(ctx, ep, typ, dpnats.Options{SampleRateHz: 2.5e6})
			if err != nil {
				t.Fatalf("publisher: %v", err)
			}
			closeLater(t, pub)
			if want := "rt.pub." + typ.Token(); pub.Subject() != want || sub.Subject() != want {
				t.Fatalf("subjects %q / %q, want %q", pub.Subject(), sub.Subject(), want)
			}
			if pub.MaxPayload() != 64<<20 {
				t.Fatalf("publisher max_payload %d, want the server's 64 MiB", pub.MaxPayload())
			}
			before := dpnats.Now()
			sizes := []int{1, 0, 1000}
			for i, n := range sizes {
				if err := pub.Send(ctx, payload(typ, n, byte(i))); err != nil {
					t.Fatalf("send %d: %v", i, err)
				}
			}
			for _, r := range []*dpnats.Subscriber{sub, wild} {
				for i, n := range sizes {
					f, err := r.Recv(ctx)
					if err != nil {
						t.Fatalf("%s: recv %d: %v", r.Subject(), i, err)
					}
					h := f.Header
					if h.Sequence != uint64(i) || h.Kind != typ.Kind() || h.Format != typ.Format() ||
						h.NumSamples != uint64(n) || h.Flags != 0 || h.SampleRateHz != 2.5e6 ||
						string(h.DataRep[:]) != "EEEI" || h.TimestampNs < before || h.TimestampNs > dpnats.Now() {
						t.Fatalf("%s: frame %d header %+v", r.Subject(), i, h)
					}
					if !bytes.Equal(f.Payload, payload(typ, n, byte(i))) {
						t.Fatalf("%s: frame %d payload differs", r.Subject(), i)
					}
				}
			}
			if got := sub.Stats(); got != (dpnats.Stats{Messages: 3, Frames: 3}) {
				t.Fatalf("stats %+v", got)
			}
		})
	}
}

func TestPubSubBigEndianSocketsAndCrossEndianRefusal(t *testing.T) {
	t.Parallel()
	srv := startServer(t, 0)
	ep := endpointOf(t, srv, "be")
	ctx := testCtx(t)
	be := dpnats.Options{Order: doppler.BigEndian}
	subBE, err := dpnats.NewSubscriber(ctx, ep, doppler.TypeCI16, be)
	if err != nil {
		t.Fatal(err)
	}
	closeLater(t, subBE)
	subLE, err := dpnats.NewSubscriber(ctx, ep, doppler.TypeCI16, dpnats.Options{})
	if err != nil {
		t.Fatal(err)
	}
	closeLater(t, subLE)
	pub, err := dpnats.NewPublisher(ctx, ep, doppler.TypeCI16, be)
	if err != nil {
		t.Fatal(err)
	}
	closeLater(t, pub)
	if err := pub.Send(ctx, payload(doppler.TypeCI16, 16, 1)); err != nil {
		t.Fatal(err)
	}
	f, err := subBE.Recv(ctx)
	if err != nil || string(f.Header.DataRep[:]) != "IEEE" || f.Header.NumSamples != 16 {
		t.Fatalf("big-endian pair: %+v, %v", f.Header, err)
	}
	_, err = subLE.Recv(ctx)
	if de := wantCode(t, err, doppler.ErrInvalid); de.Verdict != doppler.CrossEndian {
		t.Fatalf("little-endian receiver of a big-endian frame: verdict %v", de.Verdict)
	}
}

func TestPubSubChunksAtTheConnectionsMaxPayload(t *testing.T) {
	t.Parallel()
	const maxPayload = 64 << 10
	srv := startServer(t, maxPayload)
	ep := endpointOf(t, srv, "chunk")
	ctx := testCtx(t)
	nc := rawConn(t, srv)
	wire, err := nc.SubscribeSync(ep.PubSubject(doppler.TypeCF64))
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	sub, err := dpnats.NewSubscriber(ctx, ep, doppler.TypeCF64, dpnats.Options{})
	if err != nil {
		t.Fatal(err)
	}
	closeLater(t, sub)
	pub, err := dpnats.NewPublisher(ctx, ep, doppler.TypeCF64, dpnats.Options{})
	if err != nil {
		t.Fatal(err)
	}
	closeLater(t, pub)
	if pub.MaxPayload() != maxPayload {
		t.Fatalf("max_payload %d read from the connection, want %d", pub.MaxPayload(), maxPayload)
	}

	// doppler §4's example: a CF64 frame of 100 k samples is 1.6 MB.
	big := payload(doppler.TypeCF64, 100_000, 9)
	small := payload(doppler.TypeCF64, 10, 3)
	for _, p := range [][]byte{big, small, big} {
		if err := pub.Send(ctx, p); err != nil {
			t.Fatalf("send: %v", err)
		}
	}
	if pub.NextSequence() != 3 {
		t.Fatalf("next sequence %d after three frames: a chunked frame must consume one number", pub.NextSequence())
	}
	for i, want := range [][]byte{big, small, big} {
		f, err := sub.Recv(ctx)
		if err != nil {
			t.Fatalf("recv %d: %v", i, err)
		}
		if f.Header.Sequence != uint64(i) || f.Header.Chunked() || f.Header.PayloadBytes != uint64(len(want)) ||
			f.Header.NumSamples != uint64(len(want)/16) || !bytes.Equal(f.Payload, want) {
			t.Fatalf("frame %d: header %+v, %d payload bytes", i, f.Header, len(f.Payload))
		}
	}

	// On the wire: element-aligned chunks of at most max_payload, all
	// carrying the frame's sequence.
	size := (maxPayload - doppler.HeaderSize - doppler.ChunkBlockSize) / 16 * 16
	count := (len(big) + size - 1) / size
	for i := range count {
		m, err := wire.NextMsg(5 * time.Second)
		if err != nil {
			t.Fatalf("wire chunk %d: %v", i, err)
		}
		if len(m.Data) > maxPayload {
			t.Fatalf("chunk %d is %d bytes, over max_payload", i, len(m.Data))
		}
		h, _ := doppler.DecodeHeader(m.Data, doppler.LittleEndian)
		c, _ := doppler.DecodeChunkBlock(m.Data[doppler.HeaderSize:], doppler.LittleEndian)
		if doppler.Check(m.Data, doppler.LittleEndian) != doppler.Accepted || !h.Chunked() || h.Sequence != 0 ||
			c.Index != uint32(i) || c.Count != uint32(count) || h.PayloadBytes%16 != 0 ||
			(i < count-1 && h.PayloadBytes != uint64(size)) {
			t.Fatalf("chunk %d: header %+v block %+v", i, h, c)
		}
	}
	if got := sub.Stats(); got.Frames != 3 || got.Messages != uint64(2*count+1) || got.Refused != 0 {
		t.Fatalf("stats %+v", got)
	}
}

// craft returns one message of type t with n elements, sequence seq, in
// little-endian, after mutate has edited its header.
func craft(t *testing.T, typ doppler.Type, n int, seq uint64, mutate func(*doppler.Header)) []byte {
	t.Helper()
	f, err := doppler.NewFrame(typ, doppler.LittleEndian, payload(typ, n, byte(seq)))
	if err != nil {
		t.Fatal(err)
	}
	f.Header.Sequence = seq
	if mutate != nil {
		mutate(&f.Header)
	}
	return f.AppendMessage(nil, doppler.LittleEndian)
}

func TestSubscriberReportsEveryRefusalAndCarriesOn(t *testing.T) {
	t.Parallel()
	srv := startServer(t, 0)
	ep := endpointOf(t, srv, "bad")
	ctx := testCtx(t)
	sub, err := dpnats.NewSubscriber(ctx, ep, dpnats.AnyType, dpnats.Options{})
	if err != nil {
		t.Fatal(err)
	}
	closeLater(t, sub)
	nc := rawConn(t, srv)
	subject := ep.PubSubject(doppler.TypeCF32)

	cases := []struct {
		name string
		msg  []byte
		want doppler.Verdict
	}{
		{"short", make([]byte, 10), doppler.ShortMessage},
		{"bad magic", craft(t, doppler.TypeCF32, 4, 1, func(h *doppler.Header) { h.Magic = 0x1122334455667788 }), doppler.NotDoppler},
		{"cross-endian", func() []byte {
			f, _ := doppler.NewFrame(doppler.TypeCF32, doppler.BigEndian, payload(doppler.TypeCF32, 4, 0))
			return f.AppendMessage(nil, doppler.BigEndian)
		}(), doppler.CrossEndian},
		{"other major", craft(t, doppler.TypeCF32, 4, 2, func(h *doppler.Header) { h.VersionMajor = 1 }), doppler.OtherMajor},
		{"unknown flag", craft(t, doppler.TypeCF32, 4, 3, func(h *doppler.Header) { h.Flags = 0x4 }), doppler.UnknownFlags},
		{"payload mismatch", craft(t, doppler.TypeCF32, 4, 4, func(h *doppler.Header) { h.PayloadBytes++ }), doppler.PayloadMismatch},
		{"count mismatch", craft(t, doppler.TypeCF32, 4, 5, func(h *doppler.Header) { h.NumSamples = 5 }), doppler.CountMismatch},
		{"count overflow", craft(t, doppler.TypeCF32, 4, 6, func(h *doppler.Header) { h.NumSamples = 1<<61 + 4 }), doppler.CountMismatch},
		{"unknown kind", craft(t, doppler.TypeCF32, 4, 7, func(h *doppler.Header) { h.Kind = 7 }), doppler.UnknownKind},
		{"unknown format", craft(t, doppler.TypeCF32, 4, 8, func(h *doppler.Header) { h.Format = 'C' | 'X'<<8 }), doppler.UnknownFormat},
	}
	for _, c := range cases {
		if err := nc.Publish(subject, c.msg); err != nil {
			t.Fatal(err)
		}
	}
	good := craft(t, doppler.TypeCF32, 4, 42, nil)
	if err := nc.Publish(subject, good); err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		_, err := sub.Recv(ctx)
		de := wantCode(t, err, doppler.ErrInvalid)
		if de.Verdict != c.want {
			t.Fatalf("%s: verdict %v, want %v (%v)", c.name, de.Verdict, c.want, err)
		}
	}
	f, err := sub.Recv(ctx)
	if err != nil || f.Header.Sequence != 42 {
		t.Fatalf("the good frame after the refusals: %+v, %v", f.Header, err)
	}
	if got := sub.Stats(); got != (dpnats.Stats{Messages: uint64(len(cases) + 1), Frames: 1, Refused: uint64(len(cases))}) {
		t.Fatalf("stats %+v", got)
	}
}

func TestSubscriberDropsAFrameInterleavedWithAnotherPublisher(t *testing.T) {
	t.Parallel()
	srv := startServer(t, 0)
	ep := endpointOf(t, srv, "mix")
	ctx := testCtx(t)
	sub, err := dpnats.NewSubscriber(ctx, ep, doppler.TypeCI8, dpnats.Options{})
	if err != nil {
		t.Fatal(err)
	}
	closeLater(t, sub)
	nc := rawConn(t, srv)
	subject := ep.PubSubject(doppler.TypeCI8)

	// Frame 5 in four chunks of 64 bytes: its chunks 0 and 1, then a whole
	// frame 9 from another publisher, then the rest of frame 5.
	f5, _ := doppler.NewFrame(doppler.TypeCI8, doppler.LittleEndian, payload(doppler.TypeCI8, 128, 5))
	f5.Header.Sequence = 5
	chunks, err := doppler.Chunk(f5, doppler.HeaderSize+doppler.ChunkBlockSize+64, doppler.LittleEndian)
	if err != nil || len(chunks) != 4 {
		t.Fatalf("chunk: %d chunks, %v", len(chunks), err)
	}
	other := craft(t, doppler.TypeCI8, 3, 9, nil)
	for _, m := range [][]byte{chunks[0], chunks[1], other, chunks[2], chunks[3]} {
		if err := nc.Publish(subject, m); err != nil {
			t.Fatal(err)
		}
	}
	// The interleaved whole frame costs frame 5 (DP_ERR_INVALID), and is
	// itself delivered on the next call.
	_, err = sub.Recv(ctx)
	wantCode(t, err, doppler.ErrInvalid)
	f, err := sub.Recv(ctx)
	if err != nil || f.Header.Sequence != 9 {
		t.Fatalf("the interleaved frame: %+v, %v", f.Header, err)
	}
	// Chunks 2 and 3 of frame 5 start a frame that can never complete; a
	// repeat of chunk 3 is a no-op; the next frame drops it.
	if err := nc.Publish(subject, chunks[3]); err != nil {
		t.Fatal(err)
	}
	if err := nc.Publish(subject, craft(t, doppler.TypeCI8, 2, 10, nil)); err != nil {
		t.Fatal(err)
	}
	_, err = sub.Recv(ctx)
	wantCode(t, err, doppler.ErrInvalid)
	f, err = sub.Recv(ctx)
	if err != nil || f.Header.Sequence != 10 {
		t.Fatalf("frame 10: %+v, %v", f.Header, err)
	}

	// A repeated chunk index is harmless: frame 11 with chunk 1 sent twice.
	f11, _ := doppler.NewFrame(doppler.TypeCI8, doppler.LittleEndian, payload(doppler.TypeCI8, 128, 11))
	f11.Header.Sequence = 11
	chunks, _ = doppler.Chunk(f11, doppler.HeaderSize+doppler.ChunkBlockSize+64, doppler.LittleEndian)
	for _, m := range [][]byte{chunks[0], chunks[1], chunks[1], chunks[3], chunks[2]} {
		if err := nc.Publish(subject, m); err != nil {
			t.Fatal(err)
		}
	}
	f, err = sub.Recv(ctx)
	if err != nil || f.Header.Sequence != 11 || !bytes.Equal(f.Payload, f11.Payload) {
		t.Fatalf("frame 11 with a repeated and a reordered chunk: %+v, %v", f.Header, err)
	}
}

func TestSubscriberKeepsAFrameInProgressAcrossATimeout(t *testing.T) {
	t.Parallel()
	srv := startServer(t, 0)
	ep := endpointOf(t, srv, "slow")
	ctx := testCtx(t)
	sub, err := dpnats.NewSubscriber(ctx, ep, doppler.TypeCF32, dpnats.Options{})
	if err != nil {
		t.Fatal(err)
	}
	closeLater(t, sub)
	nc := rawConn(t, srv)
	f, _ := doppler.NewFrame(doppler.TypeCF32, doppler.LittleEndian, payload(doppler.TypeCF32, 32, 1))
	chunks, _ := doppler.Chunk(f, doppler.HeaderSize+doppler.ChunkBlockSize+128, doppler.LittleEndian)
	if err := nc.Publish(ep.PubSubject(doppler.TypeCF32), chunks[0]); err != nil {
		t.Fatal(err)
	}
	_, err = sub.Recv(shortCtx(t, 200*time.Millisecond))
	wantCode(t, err, doppler.ErrTimeout)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("timeout %v does not wrap context.DeadlineExceeded", err)
	}
	if err := nc.Publish(ep.PubSubject(doppler.TypeCF32), chunks[1]); err != nil {
		t.Fatal(err)
	}
	got, err := sub.Recv(ctx)
	if err != nil || !bytes.Equal(got.Payload, f.Payload) {
		t.Fatalf("frame completed after a timeout: %v", err)
	}
}

func TestRecvEndsWithTheContext(t *testing.T) {
	t.Parallel()
	srv := startServer(t, 0)
	ep := endpointOf(t, srv, "ctx")
	sub, err := dpnats.NewSubscriber(testCtx(t), ep, dpnats.AnyType, dpnats.Options{})
	if err != nil {
		t.Fatal(err)
	}
	closeLater(t, sub)

	cctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	_, err = sub.Recv(cctx)
	wantCode(t, err, doppler.ErrInterrupted)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("%v does not wrap context.Canceled", err)
	}
	_, err = sub.Recv(shortCtx(t, 50*time.Millisecond))
	wantCode(t, err, doppler.ErrTimeout)
}

func TestPublisherTimestampOverrideAppliesOnce(t *testing.T) {
	t.Parallel()
	srv := startServer(t, 0)
	ep := endpointOf(t, srv, "ts")
	ctx := testCtx(t)
	sub, err := dpnats.NewSubscriber(ctx, ep, doppler.TypeTLM, dpnats.Options{})
	if err != nil {
		t.Fatal(err)
	}
	closeLater(t, sub)
	pub, err := dpnats.NewPublisher(ctx, ep, doppler.TypeTLM, dpnats.Options{})
	if err != nil {
		t.Fatal(err)
	}
	closeLater(t, pub)
	pub.SetTimestampNs(12345)
	for range 2 {
		if err := pub.Send(ctx, payload(doppler.TypeTLM, 2, 0)); err != nil {
			t.Fatal(err)
		}
	}
	a, err := sub.Recv(ctx)
	if err != nil {
		t.Fatal(err)
	}
	b, err := sub.Recv(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if a.Header.TimestampNs != 12345 || b.Header.TimestampNs == 12345 || b.Header.TimestampNs == 0 {
		t.Fatalf("timestamps %d then %d: the override must apply to one send", a.Header.TimestampNs, b.Header.TimestampNs)
	}
	if a.Header.Kind != doppler.KindTLM || a.Header.Format != doppler.FormatNone || a.Header.NumSamples != 2 {
		t.Fatalf("telemetry header %+v", a.Header)
	}
}

func TestPublisherRefusesAPartialElement(t *testing.T) {
	t.Parallel()
	srv := startServer(t, 0)
	ctx := testCtx(t)
	pub, err := dpnats.NewPublisher(ctx, endpointOf(t, srv, "odd"), doppler.TypeCF64, dpnats.Options{})
	if err != nil {
		t.Fatal(err)
	}
	closeLater(t, pub)
	wantCode(t, pub.Send(ctx, make([]byte, 17)), doppler.ErrInvalid)
	if pub.NextSequence() != 0 {
		t.Fatalf("a refused frame consumed sequence %d", pub.NextSequence())
	}
}

func TestFlushAndDrain(t *testing.T) {
	t.Parallel()
	srv := startServer(t, 0)
	ep := endpointOf(t, srv, "drain")
	ctx := testCtx(t)
	sub, err := dpnats.NewSubscriber(ctx, ep, doppler.TypeCI32, dpnats.Options{})
	if err != nil {
		t.Fatal(err)
	}
	closeLater(t, sub)
	pub, err := dpnats.NewPublisher(ctx, ep, doppler.TypeCI32, dpnats.Options{})
	if err != nil {
		t.Fatal(err)
	}
	closeLater(t, pub)

	// Flush: the round trip, with the caller's budget.
	if err := pub.Send(ctx, payload(doppler.TypeCI32, 8, 0)); err != nil {
		t.Fatal(err)
	}
	if err := pub.Flush(ctx); err != nil {
		t.Fatalf("flush: %v", err)
	}
	if err := pub.Flush(context.Background()); err != nil {
		t.Fatalf("flush without a deadline: %v", err)
	}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	wantCode(t, pub.Flush(cancelled), doppler.ErrInterrupted)
	expired, cancel2 := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel2()
	wantCode(t, pub.Flush(expired), doppler.ErrTimeout)

	// A backlog sent and then drained arrives whole: the drain flushes.
	const n = 2000
	for i := 1; i < n; i++ {
		if err := pub.Send(ctx, payload(doppler.TypeCI32, 64, byte(i))); err != nil {
			t.Fatal(err)
		}
	}
	if err := pub.Drain(ctx); err != nil {
		t.Fatalf("drain: %v", err)
	}
	if !pub.Conn().IsClosed() {
		t.Fatalf("Drain returned before the connection was CLOSED (status %v)", pub.Conn().Status())
	}
	for i := range n {
		f, err := sub.Recv(ctx)
		if err != nil || f.Header.Sequence != uint64(i) {
			t.Fatalf("frame %d after the drain: %+v, %v", i, f.Header, err)
		}
	}

	// After Drain: sends are DP_ERR_CLOSED, deterministically, and so are a
	// flush and a second drain; Close does nothing.
	wantCode(t, pub.Send(ctx, payload(doppler.TypeCI32, 1, 0)), doppler.ErrClosed)
	wantCode(t, pub.Flush(ctx), doppler.ErrClosed)
	wantCode(t, pub.Drain(ctx), doppler.ErrClosed)
	if err := pub.Close(); err != nil {
		t.Fatalf("close after drain: %v", err)
	}

	// A drain with no budget left is cut off: the connection is closed at
	// once and the drain reports DP_ERR_TIMEOUT; the socket is shut all
	// the same.
	other, err := dpnats.NewPublisher(ctx, ep, doppler.TypeCI32, dpnats.Options{})
	if err != nil {
		t.Fatal(err)
	}
	wantCode(t, other.Drain(expired), doppler.ErrTimeout)
	if !other.Conn().IsClosed() {
		t.Fatalf("a cut-off drain left the connection %v", other.Conn().Status())
	}
	wantCode(t, other.Send(ctx, nil), doppler.ErrClosed)

	// A receiver's drain: Recv after it is DP_ERR_CLOSED.
	if err := sub.Drain(ctx); err != nil {
		t.Fatalf("subscriber drain: %v", err)
	}
	_, err = sub.Recv(ctx)
	wantCode(t, err, doppler.ErrClosed)
}

func TestDrainUnblocksAReceiveInAnotherGoroutine(t *testing.T) {
	t.Parallel()
	srv := startServer(t, 0)
	ep := endpointOf(t, srv, "unblock")
	ctx := testCtx(t)
	sub, err := dpnats.NewSubscriber(ctx, ep, dpnats.AnyType, dpnats.Options{})
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() {
		_, err := sub.Recv(ctx)
		errc <- err
	}()
	time.Sleep(50 * time.Millisecond)
	if err := sub.Drain(ctx); err != nil {
		t.Fatalf("drain: %v", err)
	}
	select {
	case err := <-errc:
		wantCode(t, err, doppler.ErrClosed)
	case <-time.After(hang.Guard(t, 5*time.Second)):
		t.Fatalf("Recv still blocked after Drain")
	}
}

func TestCloseIsBestEffortAndSilent(t *testing.T) {
	t.Parallel()
	srv := startServer(t, 0)
	ep := endpointOf(t, srv, "close")
	ctx := testCtx(t)
	sub, err := dpnats.NewSubscriber(ctx, ep, doppler.TypeCI8, dpnats.Options{})
	if err != nil {
		t.Fatal(err)
	}
	closeLater(t, sub)
	// §6b: "0 frames lost in 25 publish-then-close cycles" on loopback.
	for cycle := range 25 {
		pub, err := dpnats.NewPublisher(ctx, ep, doppler.TypeCI8, dpnats.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := pub.Send(ctx, payload(doppler.TypeCI8, 4, byte(cycle))); err != nil {
			t.Fatal(err)
		}
		if err := pub.Close(); err != nil {
			t.Fatalf("close reports %v; it must report nothing", err)
		}
		wantCode(t, pub.Send(ctx, nil), doppler.ErrClosed)
		if _, err := sub.Recv(ctx); err != nil {
			t.Fatalf("cycle %d: frame lost across Close: %v", cycle, err)
		}
	}
}

func TestUnreachableServerFailsFast(t *testing.T) {
	t.Parallel()
	srv := startServer(t, 0)
	ep := endpointOf(t, srv, "gone")
	srv.Shutdown()
	start := time.Now()
	_, err := dpnats.NewPublisher(testCtx(t), ep, doppler.TypeCF32, dpnats.Options{})
	wantCode(t, err, doppler.ErrGeneric)
	if time.Since(start) > 5*time.Second {
		t.Fatalf("took %v to fail", time.Since(start))
	}
}

func TestConcurrentPublishersKeepFramesWhole(t *testing.T) {
	t.Parallel()
	const maxPayload = 4 << 10
	srv := startServer(t, maxPayload)
	ep := endpointOf(t, srv, "conc")
	ctx := testCtx(t)
	sub, err := dpnats.NewSubscriber(ctx, ep, doppler.TypeCF32, dpnats.Options{})
	if err != nil {
		t.Fatal(err)
	}
	closeLater(t, sub)
	pub, err := dpnats.NewPublisher(ctx, ep, doppler.TypeCF32, dpnats.Options{})
	if err != nil {
		t.Fatal(err)
	}
	closeLater(t, pub)
	// Goroutines sharing one Publisher: each frame's chunks stay together.
	var wg sync.WaitGroup
	const per, workers = 10, 4
	for w := range workers {
		wg.Go(func() {
			for i := range per {
				if err := pub.Send(ctx, payload(doppler.TypeCF32, 2000, byte(w*per+i))); err != nil {
					t.Error(fmt.Errorf("worker %d: %w", w, err))
				}
			}
		})
	}
	wg.Wait()
	for i := range workers * per {
		f, err := sub.Recv(ctx)
		if err != nil || f.Header.Sequence != uint64(i) || f.Header.NumSamples != 2000 {
			t.Fatalf("frame %d: %+v, %v", i, f.Header, err)
		}
	}
}
