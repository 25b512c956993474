package natsc_test

import (
	"context"
	"testing"
	"time"

	"github.com/conform-suite/conform/natsserver"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/sut"
	"github.com/conform-suite/conform/sut/natsc"
)

// benchClient serves the reference on an embedded broker and dials it.
func benchClient(b *testing.B) *natsc.Client {
	ep := serve(b, natsserver.Options{}, "bench", sut.Binary)
	c, err := natsc.Dial(context.Background(), ep, 5*time.Second)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	return c
}

var sampleFrame = []byte{0, 0, 0, 0x12, 0x12, 0x10, 0x09, 1, 0, 0, 0, 0, 0, 0, 0, 0x10, 1, 0x1a, 1, 0x41, 0x28, 1}

// BenchmarkRoundTrip is one small op per request through the broker.
func BenchmarkRoundTrip(b *testing.B) {
	c := benchClient(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		req := &conformpb.Request{Op: &conformpb.Request_ReadFrames{ReadFrames: &conformpb.ReadFrames{
			Inputs: []*conformpb.ReadInput{{Chunks: []*conformpb.Blob{{Data: sampleFrame}}}}}}}
		if _, err := c.Do(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBatched256 carries 256 inputs per request.
func BenchmarkBatched256(b *testing.B) {
	c := benchClient(b)
	ctx := context.Background()
	req := &conformpb.Request{Op: &conformpb.Request_ReadFrames{ReadFrames: &conformpb.ReadFrames{}}}
	for range 256 {
		req.GetReadFrames().Inputs = append(req.GetReadFrames().Inputs, &conformpb.ReadInput{Chunks: []*conformpb.Blob{{Data: sampleFrame[:7]}, {Data: sampleFrame[7:]}}})
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Do(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*256), "ns/input")
}
