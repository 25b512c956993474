package impl_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/conform-suite/conform/live/peer"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/sut/impl"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// liveReference returns the reference answering the live op, and only it:
// these tests are of that op's handler.
func liveReference() *impl.Impl {
	im := impl.Reference()
	op := impl.Handler(impl.Live)
	im.Ops = map[protoreflect.FullName]impl.OpHandler{op.Message: op.Handle}
	return im
}

func liveDo(t *testing.T, im *impl.Impl, op *conformpb.LiveOp) (*conformpb.LiveResult, string) {
	t.Helper()
	resp := im.Handle(context.Background(), &conformpb.Request{Op: &conformpb.Request_Live{Live: op}})
	if e := resp.GetError(); e != nil {
		return nil, e.GetMessage()
	}
	if resp.GetLive() == nil {
		t.Fatalf("answered %T", resp.GetResult())
	}
	return resp.GetLive(), ""
}

// TestLiveOpsRoundTrip: the reference's publisher, reached through the
// publish ops, feeds the reference's subscriber, reached through the
// subscribe and report ops, on loopback.
func TestLiveOpsRoundTrip(t *testing.T) {
	im := liveReference()
	r, msg := liveDo(t, im, &conformpb.LiveOp{Op: &conformpb.LiveOp_ListenPublisher{ListenPublisher: &conformpb.LiveListenPublisher{
		Streams: []*conformpb.LiveStream{{Name: "gaze", SchemaId: "s.Gaze"}, {Name: "gaze", SourceClockDomain: "device.1"}},
	}}})
	if msg != "" {
		t.Fatal(msg)
	}
	pub := r.GetPublisherListening()
	if got := pub.GetStreamRefs(); len(got) != 2 || got[0] != 1 || got[1] != 2 {
		t.Errorf("stream refs %v, want [1 2]", got)
	}
	defer liveDo(t, im, &conformpb.LiveOp{Op: &conformpb.LiveOp_Close{Close: &conformpb.LiveClose{Publisher: pub.GetPublisher()}}})
	r, msg = liveDo(t, im, &conformpb.LiveOp{Op: &conformpb.LiveOp_Subscribe{Subscribe: &conformpb.LiveSubscribe{Address: pub.GetAddress(), StreamName: "gaze"}}})
	if msg != "" {
		t.Fatal(msg)
	}
	sub := r.GetSubscribed()
	defer liveDo(t, im, &conformpb.LiveOp{Op: &conformpb.LiveOp_Close{Close: &conformpb.LiveClose{Subscriber: sub.GetSubscriber()}}})
	r, msg = liveDo(t, im, &conformpb.LiveOp{Op: &conformpb.LiveOp_Publish{Publish: &conformpb.LivePublish{
		Publisher: pub.GetPublisher(), WaitSubscribers: 1, Concurrency: 4, DrainTimeoutMs: 2000,
		Samples: []*conformpb.LivePublishSample{{Stream: 0, Count: 50}, {Stream: 1, Count: 50, SourceTimestampNs: 7}},
	}}})
	if msg != "" {
		t.Fatal(msg)
	}
	if p := r.GetPublished(); p.GetPublished() != 100 || p.GetSubscribers() != 1 {
		t.Errorf("published %+v, want 100 calls to 1 subscriber", p)
	}
	r, msg = liveDo(t, im, &conformpb.LiveOp{Op: &conformpb.LiveOp_Report{Report: &conformpb.LiveReportOp{
		Subscriber: sub.GetSubscriber(), Until: &conformpb.LiveUntil{Samples: 100}, TimeoutMs: 3000,
	}}})
	if msg != "" {
		t.Fatal(msg)
	}
	rep := r.GetReport()
	if rep.GetTimedOut() || len(rep.GetSamples()) != 100 || len(rep.GetConnections()) != 1 {
		t.Fatalf("report: timed out %v, %d samples, %d connections", rep.GetTimedOut(), len(rep.GetSamples()), len(rep.GetConnections()))
	}
	c := rep.GetConnections()[0]
	if c.GetState() != conformpb.LiveConnectionState_LIVE_CONNECTION_STATE_OPEN || len(c.GetAnnounced()) != 2 || c.GetConnection() != sub.GetConnection() {
		t.Errorf("connection %+v", c)
	}
	if k := rep.GetCounters(); k.GetStreams() != 2 || k.GetMissing() != 0 || k.GetReordered() != 0 {
		t.Errorf("counters %+v", k)
	}
	for _, s := range rep.GetSamples() {
		if s.GetStreamRef() == 1 && (s.GetSchema().GetSchemaId() != "s.Gaze" || s.GetSourceTimestampNs() != 0) {
			t.Errorf("stream 1 sample %+v", s)
		}
		if s.GetStreamRef() == 2 && s.GetSourceTimestampNs() != 7 {
			t.Errorf("stream 2 sample %+v: the source timestamp of a stream with a domain is carried", s)
		}
	}
}

// TestLiveOpsBounded: a wait that runs out answers with what it has, an
// address off loopback is refused, and an unknown handle is an error.
func TestLiveOpsBounded(t *testing.T) {
	im := liveReference()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	pp, err := peer.ListenPublisher(ctx, peer.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	defer pp.Close()
	r, msg := liveDo(t, im, &conformpb.LiveOp{Op: &conformpb.LiveOp_Subscribe{Subscribe: &conformpb.LiveSubscribe{Address: pp.Addr(), StreamName: "gaze"}}})
	if msg != "" {
		t.Fatal(msg)
	}
	h := r.GetSubscribed().GetSubscriber()
	start := time.Now()
	r, msg = liveDo(t, im, &conformpb.LiveOp{Op: &conformpb.LiveOp_Report{Report: &conformpb.LiveReportOp{Subscriber: h, Until: &conformpb.LiveUntil{Samples: 1}, TimeoutMs: 100}}})
	if msg != "" || !r.GetReport().GetTimedOut() || time.Since(start) > 2*time.Second {
		t.Errorf("an unmet wait: %v, %q after %v; want a report marked timed out after 100ms", r, msg, time.Since(start))
	}
	for _, tc := range []struct {
		op   *conformpb.LiveOp
		want string
	}{
		{&conformpb.LiveOp{Op: &conformpb.LiveOp_Subscribe{Subscribe: &conformpb.LiveSubscribe{Address: "192.0.2.1:7000", StreamName: "gaze"}}}, "not loopback"},
		{&conformpb.LiveOp{Op: &conformpb.LiveOp_Report{Report: &conformpb.LiveReportOp{Subscriber: 99}}}, "no subscriber 99"},
		{&conformpb.LiveOp{Op: &conformpb.LiveOp_Publish{Publish: &conformpb.LivePublish{Publisher: 99}}}, "no publisher 99"},
	} {
		if _, msg := liveDo(t, im, tc.op); !strings.Contains(msg, tc.want) {
			t.Errorf("%v: error %q, want %q", tc.op, msg, tc.want)
		}
	}
	liveDo(t, im, &conformpb.LiveOp{Op: &conformpb.LiveOp_Close{Close: &conformpb.LiveClose{Subscriber: h}}})
	liveDo(t, im, &conformpb.LiveOp{Op: &conformpb.LiveOp_Close{Close: &conformpb.LiveClose{Subscriber: h}}}) // twice is fine
}
