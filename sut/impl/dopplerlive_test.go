package impl

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/conform-suite/conform/internal/hang"
	"github.com/conform-suite/conform/natsserver"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/ref/doppler"
)

func dopplerOp(t *testing.T, im *Impl, op *conformpb.DopplerOp) *conformpb.Response {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return im.Handle(ctx, &conformpb.Request{Op: &conformpb.Request_Doppler{Doppler: op}})
}

// TestDopplerLiveSockets drives the live ops end to end on an embedded
// broker: a SUB and a PUB of one endpoint, what the SUB gathered, and the
// answers to handles that are not open.
func TestDopplerLiveSockets(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	srv, err := natsserver.Start(ctx, natsserver.Options{MaxPayload: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	im := reference(Handler(Doppler))
	ep := srv.URL() + "/impltest"
	join := func(role conformpb.DopplerLiveRole, typ conformpb.DopplerFrameType) uint64 {
		r := dopplerOp(t, im, &conformpb.DopplerOp{Op: &conformpb.DopplerOp_Join{Join: &conformpb.DopplerJoin{
			Endpoint: ep, Role: role, Type: typ}}}).GetDoppler().GetJoin()
		if r.GetRefused() != nil || r.GetHandle() == 0 || r.GetMaxPayload() != 1<<20 {
			t.Fatalf("join %v: %v", role, r)
		}
		return r.GetHandle()
	}
	sub := join(conformpb.DopplerLiveRole_DOPPLER_LIVE_ROLE_SUB, 0)
	pub := join(conformpb.DopplerLiveRole_DOPPLER_LIVE_ROLE_PUB, conformpb.DopplerFrameType_DOPPLER_FRAME_TYPE_CF64)

	big := &conformpb.DopplerLiveFrame{FillLength: 1 << 20, FillPattern: []byte("0123456789abcdef")} // chunks at 1 MiB
	sent := dopplerOp(t, im, &conformpb.DopplerOp{Op: &conformpb.DopplerOp_Send{Send: &conformpb.DopplerSend{
		Handle: pub, Frames: []*conformpb.DopplerLiveFrame{{Payload: make([]byte, 32)}, big}}}}).GetDoppler().GetSend()
	if len(sent.GetOutputs()) != 2 || sent.Outputs[0].Refused != nil || sent.Outputs[1].Refused != nil {
		t.Fatalf("send: %v", sent)
	}
	var evs []*conformpb.DopplerLiveEvent
	for deadline := time.Now().Add(hang.Guard(t, 5*time.Second)); len(evs) < 2 && time.Now().Before(deadline); {
		c := dopplerOp(t, im, &conformpb.DopplerOp{Op: &conformpb.DopplerOp_Collect{Collect: &conformpb.DopplerCollect{
			Handle: sub, MinEvents: 2, TimeoutMs: 1000}}}).GetDoppler().GetCollect()
		evs = append(evs, c.GetEvents()...)
	}
	if len(evs) != 2 {
		t.Fatalf("collected %d events, want 2: %v", len(evs), evs)
	}
	for i, want := range []struct{ seq, n uint64 }{{0, 32}, {1, 1 << 20}} {
		h := evs[i].GetDelivered().GetHeader()
		if h.GetSequence() != want.seq || h.GetPayloadBytes() != want.n || h.GetFlags() != 0 {
			t.Errorf("event %d: %v, want frame %d of %d bytes, unchunked", i, evs[i], want.seq, want.n)
		}
	}

	for _, op := range []*conformpb.DopplerOp{
		{Op: &conformpb.DopplerOp_Collect{Collect: &conformpb.DopplerCollect{Handle: pub}}},
		{Op: &conformpb.DopplerOp_Send{Send: &conformpb.DopplerSend{Handle: sub, Frames: []*conformpb.DopplerLiveFrame{{}}}}},
		{Op: &conformpb.DopplerOp_Flush{Flush: &conformpb.DopplerFlush{Handle: sub}}},
		{Op: &conformpb.DopplerOp_Send{Send: &conformpb.DopplerSend{Handle: 999}}},
		{Op: &conformpb.DopplerOp_Send{Send: &conformpb.DopplerSend{Handle: pub,
			Frames: []*conformpb.DopplerLiveFrame{{FillLength: maxLiveFill + 1, FillPattern: []byte{1}}}}}},
	} {
		if r := dopplerOp(t, im, op); r.GetError() == nil {
			t.Errorf("%v answered %v, want an Error", op, r)
		}
	}
	for h, known := range map[uint64]bool{sub: true, pub: true, 999: false} {
		l := dopplerOp(t, im, &conformpb.DopplerOp{Op: &conformpb.DopplerOp_Leave{Leave: &conformpb.DopplerLeave{Handle: h}}}).GetDoppler().GetLeave()
		if l == nil || l.Known != known {
			t.Errorf("leave %d: %v, want known %v", h, l, known)
		}
	}
	if n := len(im.Doppler.live.sockets); n != 0 {
		t.Errorf("%d sockets still open after leave", n)
	}

	r := dopplerOp(t, im, &conformpb.DopplerOp{Op: &conformpb.DopplerOp_Join{Join: &conformpb.DopplerJoin{
		Endpoint: "tcp://nowhere/x", Role: conformpb.DopplerLiveRole_DOPPLER_LIVE_ROLE_SUB}}}).GetDoppler().GetJoin()
	if r.GetRefused().GetCode() != int32(doppler.ErrInvalid) || !strings.Contains(r.GetRefused().GetDetail(), "scheme") {
		t.Errorf("a join on a tcp:// endpoint: %v, want refused DP_ERR_INVALID", r)
	}
}

// TestDopplerClockAndOverride: the clock op reads the clock the senders
// stamp with, and a frame's timestamp_ns is the override of that send alone.
func TestDopplerClockAndOverride(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	srv, err := natsserver.Start(ctx, natsserver.Options{MaxPayload: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	im := reference(Handler(Doppler))
	ticks := uint64(1000)
	im.Doppler.Transport.Now = func() uint64 { ticks++; return ticks }
	clock := func() uint64 {
		return dopplerOp(t, im, &conformpb.DopplerOp{Op: &conformpb.DopplerOp_Clock{Clock: &conformpb.DopplerClock{}}}).GetDoppler().GetClock().GetTimestampNs()
	}
	ep := srv.URL() + "/clocktest"
	sub := dopplerOp(t, im, &conformpb.DopplerOp{Op: &conformpb.DopplerOp_Join{Join: &conformpb.DopplerJoin{
		Endpoint: ep, Role: conformpb.DopplerLiveRole_DOPPLER_LIVE_ROLE_SUB}}}).GetDoppler().GetJoin().GetHandle()
	pub := dopplerOp(t, im, &conformpb.DopplerOp{Op: &conformpb.DopplerOp_Join{Join: &conformpb.DopplerJoin{
		Endpoint: ep, Role: conformpb.DopplerLiveRole_DOPPLER_LIVE_ROLE_PUB, Type: conformpb.DopplerFrameType_DOPPLER_FRAME_TYPE_CI8}}}).GetDoppler().GetJoin().GetHandle()
	before := clock()
	over := uint64(7)
	dopplerOp(t, im, &conformpb.DopplerOp{Op: &conformpb.DopplerOp_Send{Send: &conformpb.DopplerSend{Handle: pub,
		Frames: []*conformpb.DopplerLiveFrame{{Payload: []byte{1, 2}, TimestampNs: &over}, {Payload: []byte{3, 4}}}}}})
	after := clock()
	var stamps []uint64
	for deadline := time.Now().Add(hang.Guard(t, 5*time.Second)); len(stamps) < 2 && time.Now().Before(deadline); {
		c := dopplerOp(t, im, &conformpb.DopplerOp{Op: &conformpb.DopplerOp_Collect{Collect: &conformpb.DopplerCollect{
			Handle: sub, MinEvents: 2, TimeoutMs: 1000}}}).GetDoppler().GetCollect()
		for _, e := range c.GetEvents() {
			stamps = append(stamps, e.GetDelivered().GetHeader().GetTimestampNs())
		}
	}
	if len(stamps) != 2 || stamps[0] != over || stamps[1] <= before || stamps[1] >= after {
		t.Errorf("stamps %v between clock readings %d and %d; want %d, then one between the readings", stamps, before, after, over)
	}
}
