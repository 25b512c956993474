package dpnats_test

import (
	"context"
	"errors"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/conform-suite/conform/ref/doppler"
	"github.com/conform-suite/conform/ref/doppler/dpnats"
)

// renamed derives every subject under "other." instead of the base.
type renamed struct{ doppler.Endpoint }

func (r renamed) PubSubject(t doppler.Type) string { return "other.pub." + t.Token() }
func (r renamed) PubWildcard() string              { return "other.pub.*" }

// TestPartsReplaceThePieces: a socket built with Parts uses them — its
// names, its header check (also inside reassembly) and its sender — and the
// zero Parts are the reference.
func TestPartsReplaceThePieces(t *testing.T) {
	t.Parallel()
	srv := startServer(t, 0)
	ep := endpointOf(t, srv, "parts")
	ctx := testCtx(t)

	names := dpnats.Parts{Names: func(ep doppler.Endpoint) dpnats.Names { return renamed{ep} }}
	pub, err := dpnats.NewPublisher(ctx, ep, doppler.TypeCI16, dpnats.Options{Parts: names})
	if err != nil {
		t.Fatal(err)
	}
	closeLater(t, pub)
	if pub.Subject() != "other.pub.ci16" {
		t.Errorf("a publisher with replaced names publishes on %q", pub.Subject())
	}

	refuse := dpnats.Parts{Names: names.Names, Check: func([]byte, doppler.Order) doppler.Verdict { return doppler.OtherMajor }}
	sub, err := dpnats.NewSubscriber(ctx, ep, doppler.TypeCI16, dpnats.Options{Parts: refuse})
	if err != nil {
		t.Fatal(err)
	}
	closeLater(t, sub)
	if err := pub.Send(ctx, payload(doppler.TypeCI16, 2, 1)); err != nil {
		t.Fatal(err)
	}
	_, err = sub.Recv(ctx)
	var de *doppler.Error
	if !errors.As(err, &de) || de.Verdict != doppler.OtherMajor {
		t.Errorf("a subscriber whose Check refuses everything received: %v; want the Check's verdict", err)
	}

	var made int
	counting := dpnats.Parts{NewSender: func(o doppler.Order, maxPayload int) dpnats.Sender {
		made++
		return doppler.NewSender(o, maxPayload)
	}}
	push, err := dpnats.NewPusher(ctx, ep, doppler.TypeCI8, dpnats.Options{Parts: counting})
	if err != nil {
		t.Fatal(err)
	}
	closeLater(t, push)
	if made != 1 {
		t.Errorf("NewSender called %d times for one socket", made)
	}
}

// TestTransportPartsAreUsed: a socket built with the transport parts uses
// them — its dial, its max_payload, its clock, its wait for a subscription,
// its way of making the work queue exist and its rule for telemetry — and
// without them only a publisher sends telemetry.
func TestTransportPartsAreUsed(t *testing.T) {
	t.Parallel()
	srv := startServer(t, 0)
	ep := endpointOf(t, srv, "transport")
	ctx := testCtx(t)

	var dials, awaits, ensures int
	var ensured string
	parts := dpnats.Parts{
		Connect: func(url string, opts ...nats.Option) (*nats.Conn, error) {
			dials++
			return nats.Connect(url, opts...)
		},
		MaxPayload: func(int64) int { return 1000 },
		Now:        func() uint64 { return 42 },
		AwaitSubscription: func(ctx context.Context, flush func(context.Context) error) error {
			awaits++
			return flush(ctx)
		},
		EnsureStream: func(ctx context.Context, js jetstream.JetStream, cfg jetstream.StreamConfig) error {
			ensures, ensured = ensures+1, cfg.Name
			_, err := js.CreateOrUpdateStream(ctx, cfg)
			return err
		},
		EmitsTelemetry: func(string) bool { return true },
	}
	o := dpnats.Options{Parts: parts}
	nc := rawConn(t, srv)
	seen, err := nc.SubscribeSync(ep.PubSubject(doppler.TypeCI16))
	if err != nil {
		t.Fatal(err)
	}
	// The interest must reach the server before the publisher sends; on a
	// loaded machine it once did not, and the frame went to no one.
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	pub, err := dpnats.NewPublisher(ctx, ep, doppler.TypeCI16, o)
	if err != nil {
		t.Fatal(err)
	}
	closeLater(t, pub)
	sub, err := dpnats.NewSubscriber(ctx, ep, doppler.TypeCI16, o)
	if err != nil {
		t.Fatal(err)
	}
	closeLater(t, sub)
	push, err := dpnats.NewPusher(ctx, ep, doppler.TypeTLM, o)
	if err != nil {
		t.Fatalf("a pusher of telemetry whose parts allow it: %v", err)
	}
	closeLater(t, push)
	if err := pub.Send(ctx, payload(doppler.TypeCI16, 1, 1)); err != nil {
		t.Fatal(err)
	}
	m, err := seen.NextMsgWithContext(ctx)
	if err != nil {
		t.Fatal(err)
	}
	h, _ := doppler.DecodeHeader(m.Data, doppler.LittleEndian)
	for _, c := range []struct {
		what      string
		got, want any
	}{
		{"dials", dials, 3}, {"max_payload", pub.MaxPayload(), 1000}, {"timestamp_ns", h.TimestampNs, uint64(42)},
		{"subscription waits", awaits, 1}, {"streams ensured", ensures, 1}, {"stream", ensured, ep.StreamName()},
	} {
		if c.got != c.want {
			t.Errorf("%s: %v, want %v", c.what, c.got, c.want)
		}
	}

	// The zero parts: telemetry from a publisher alone.
	if _, err := dpnats.NewPusher(ctx, ep, doppler.TypeTLM, dpnats.Options{}); !errors.Is(err, doppler.ErrInvalid) {
		t.Errorf("a reference pusher of telemetry: %v, want DP_ERR_INVALID", err)
	}
}
