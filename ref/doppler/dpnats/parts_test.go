package dpnats_test

import (
	"errors"
	"testing"

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
