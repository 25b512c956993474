package dpnats_test

import (
	"context"
	"testing"
	"time"

	"github.com/conform-suite/conform/ref/doppler"
	"github.com/conform-suite/conform/ref/doppler/dpnats"
)

// The measurements doppler §11 asks for (unknown 1: throughput per pattern
// and format, as both MSa/s and MB/s; unknown 2: a REQ/REP round trip,
// halved), through the embedded nats-server on loopback. No benchmark asserts
// a time; the figures are written down in docs/doppler-measurements.md.

// benchSamples is the samples in every benchmarked frame: doppler §4's own
// example frame, which is 1.6 MB in CF64. Every format sends the same number
// of samples, so bytes per frame differ by the element size — the point of
// recording both MSa/s and MB/s.
const benchSamples = 100_000

// benchFormats are the five sample formats.
func benchFormats() []doppler.Type {
	return []doppler.Type{doppler.TypeCI8, doppler.TypeCI16, doppler.TypeCI32, doppler.TypeCF32, doppler.TypeCF64}
}

// report records throughput over elapsed for b.N frames of the given size.
func report(b *testing.B, elapsed time.Duration, samples, bytes int) {
	s := elapsed.Seconds()
	b.ReportMetric(float64(b.N)*float64(samples)/s/1e6, "MSa/s")
	b.ReportMetric(float64(b.N)*float64(bytes)/s/1e6, "MB/s")
}

func benchCtx(b *testing.B) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	b.Cleanup(cancel)
	return ctx
}

// BenchmarkPubSub publishes b.N frames and times until the subscriber has
// received them all (one publisher, one subscriber, unchunked: max_payload
// is 64 MiB).
func BenchmarkPubSub(b *testing.B) {
	srv := startServer(b, 0)
	for _, typ := range benchFormats() {
		b.Run(typ.String(), func(b *testing.B) {
			ctx := benchCtx(b)
			ep := endpointOf(b, srv, "bps"+typ.Token())
			sub, err := dpnats.NewSubscriber(ctx, ep, typ, dpnats.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer sub.Close()
			pub, err := dpnats.NewPublisher(ctx, ep, typ, dpnats.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer pub.Close()
			p := payload(typ, benchSamples, 1)
			done := make(chan error, 1)
			b.ResetTimer()
			start := time.Now()
			go func() {
				for range b.N {
					if _, err := sub.Recv(ctx); err != nil {
						done <- err
						return
					}
				}
				done <- nil
			}()
			for range b.N {
				if err := pub.Send(ctx, p); err != nil {
					b.Fatal(err)
				}
			}
			if err := <-done; err != nil {
				b.Fatal(err)
			}
			elapsed := time.Since(start)
			b.StopTimer()
			report(b, elapsed, benchSamples, len(p))
		})
	}
}

// BenchmarkReqRep sends b.N request frames, one at a time, each answered by
// an empty frame of the same type, so the samples flow one way.
func BenchmarkReqRep(b *testing.B) {
	srv := startServer(b, 0)
	for _, typ := range benchFormats() {
		b.Run(typ.String(), func(b *testing.B) {
			ctx := benchCtx(b)
			ep := endpointOf(b, srv, "brr"+typ.Token())
			stop := serve(b, ctx, ep, func(req *dpnats.Request) error {
				return req.Reply(ctx, typ, nil)
			})
			defer stop()
			req, err := dpnats.NewRequester(ctx, ep, dpnats.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer req.Close()
			p := payload(typ, benchSamples, 1)
			b.ResetTimer()
			start := time.Now()
			for range b.N {
				if _, err := req.Request(ctx, typ, p); err != nil {
					b.Fatal(err)
				}
			}
			elapsed := time.Since(start)
			b.StopTimer()
			report(b, elapsed, benchSamples, len(p))
		})
	}
}

// BenchmarkReqRepRoundTrip is §11's latency headline: the round trip of a
// 16-byte raw control message, and half of it as the one-way estimate under
// the assumption that both directions cost the same.
func BenchmarkReqRepRoundTrip(b *testing.B) {
	srv := startServer(b, 0)
	ctx := benchCtx(b)
	ep := endpointOf(b, srv, "brtt")
	stop := serve(b, ctx, ep, func(req *dpnats.Request) error {
		return req.ReplyBytes(ctx, req.Frame.Payload)
	})
	defer stop()
	req, err := dpnats.NewRequester(ctx, ep, dpnats.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer req.Close()
	msg := []byte("status?.........")
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		if _, err := req.RequestBytes(ctx, msg); err != nil {
			b.Fatal(err)
		}
	}
	elapsed := time.Since(start)
	b.StopTimer()
	rtt := elapsed.Seconds() / float64(b.N) * 1e6
	b.ReportMetric(rtt, "rtt-µs")
	b.ReportMetric(rtt/2, "half-rtt-µs")
}

// serve runs a Replier on ep that answers every request with answer, until
// the returned function stops it.
func serve(b *testing.B, ctx context.Context, ep doppler.Endpoint, answer func(*dpnats.Request) error) (stop func()) {
	rep, err := dpnats.NewReplier(ctx, ep, dpnats.Options{})
	if err != nil {
		b.Fatal(err)
	}
	sctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			req, err := rep.Recv(sctx)
			if err != nil {
				return
			}
			if err := answer(req); err != nil {
				return
			}
		}
	}()
	return func() {
		cancel()
		<-done
		_ = rep.Close()
	}
}

// BenchmarkPushPull pushes b.N frames (each acknowledged by JetStream before
// the next) while one worker pulls and acks them, and times until the last
// ack.
func BenchmarkPushPull(b *testing.B) {
	srv := startServer(b, 0)
	for _, typ := range benchFormats() {
		b.Run(typ.String(), func(b *testing.B) {
			ctx := benchCtx(b)
			ep := endpointOf(b, srv, "bpp"+typ.Token())
			push, err := dpnats.NewPusher(ctx, ep, typ, dpnats.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer push.Close()
			pull, err := dpnats.NewPuller(ctx, ep, dpnats.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer pull.Close()
			p := payload(typ, benchSamples, 1)
			done := make(chan error, 1)
			b.ResetTimer()
			start := time.Now()
			go func() {
				for range b.N {
					d, err := pull.Recv(ctx)
					if err == nil {
						err = d.Ack(ctx)
					}
					if err != nil {
						done <- err
						return
					}
				}
				done <- nil
			}()
			for range b.N {
				if err := push.Send(ctx, p); err != nil {
					b.Fatal(err)
				}
			}
			if err := <-done; err != nil {
				b.Fatal(err)
			}
			elapsed := time.Since(start)
			b.StopTimer()
			report(b, elapsed, benchSamples, len(p))
		})
	}
}
