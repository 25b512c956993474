package dpnats_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"go.uber.org/goleak"

	"github.com/conform-suite/conform/internal/hang"
	"github.com/conform-suite/conform/natsserver"
	"github.com/conform-suite/conform/ref/doppler"
)

// TestMain fails the package when a goroutine outlives the tests. Nothing is
// ignored: the embedded server's Shutdown joins its goroutines, and every
// socket a test opens is closed or drained by the test.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// startServer starts an embedded nats-server for one test or benchmark; zero
// maxPayload means natsserver's 64 MiB default.
func startServer(tb testing.TB, maxPayload int32) *natsserver.Server {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	srv, err := natsserver.Start(ctx, natsserver.Options{MaxPayload: maxPayload})
	if err != nil {
		tb.Fatalf("start embedded nats-server: %v", err)
	}
	tb.Cleanup(srv.Shutdown)
	return srv
}

// endpointOf returns the endpoint nats://<server>/<base>.
func endpointOf(tb testing.TB, srv *natsserver.Server, base string) doppler.Endpoint {
	tb.Helper()
	ep, err := doppler.ParseEndpoint(srv.URL() + "/" + base)
	if err != nil {
		tb.Fatalf("endpoint: %v", err)
	}
	return ep
}

// testCtx is a context bounded by a hang guard.
func testCtx(tb testing.TB) context.Context { return hang.Context(tb, 30*time.Second) }

// shortCtx is a context for a wait that is expected to time out.
func shortCtx(tb testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	tb.Cleanup(cancel)
	return ctx
}

// payload returns n elements of type t filled with a pattern that depends on
// seed, so that frames are told apart by content.
func payload(t doppler.Type, n int, seed byte) []byte {
	b := make([]byte, n*t.ElemSize())
	for i := range b {
		b[i] = byte(i*7) ^ seed
	}
	return b
}

// rawConn connects a plain NATS client, for crafting and observing messages
// the roles would never send.
func rawConn(tb testing.TB, srv *natsserver.Server) *nats.Conn {
	tb.Helper()
	nc, err := nats.Connect(srv.URL())
	if err != nil {
		tb.Fatalf("connect: %v", err)
	}
	tb.Cleanup(nc.Close)
	return nc
}

// closeLater closes a socket when the test ends.
func closeLater(tb testing.TB, c interface{ Close() error }) {
	tb.Cleanup(func() { _ = c.Close() })
}

// wantCode fails unless err carries code.
func wantCode(tb testing.TB, err error, code doppler.Code) *doppler.Error {
	tb.Helper()
	if !errors.Is(err, code) {
		tb.Fatalf("error %v, want %v", err, code)
	}
	var de *doppler.Error
	if !errors.As(err, &de) {
		tb.Fatalf("error %v is not a *doppler.Error", err)
	}
	return de
}

// types returns the seven frame types; sendable excludes telemetry, which
// only a Publisher emits.
func sendable() []doppler.Type {
	var ts []doppler.Type
	for _, t := range doppler.Types() {
		if t != doppler.TypeTLM {
			ts = append(ts, t)
		}
	}
	return ts
}
