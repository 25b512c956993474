package natsc_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/conform-suite/conform/cases"
	"github.com/conform-suite/conform/cases/catalog"
	"github.com/conform-suite/conform/natsserver"
	"github.com/conform-suite/conform/reports"
	"github.com/conform-suite/conform/runner"
	"github.com/conform-suite/conform/sut"
	"github.com/conform-suite/conform/sut/impl"
	"github.com/conform-suite/conform/sut/natsc"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// serve starts an embedded broker and the reference answering on base.
func serve(t testing.TB, base string, enc sut.Encoding) natsc.Endpoint {
	t.Helper()
	srv, err := natsserver.Start(context.Background(), natsserver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ep, err := natsc.ParseEndpoint(srv.URL() + "/" + base)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s, err := natsc.Listen(ctx, ep, impl.Reference(), enc)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := s.Wait(); err != nil {
			t.Errorf("Wait: %v", err)
		}
	}()
	t.Cleanup(func() {
		cancel()
		wg.Wait()
		srv.Shutdown()
	})
	return ep
}

// TestReferenceOverNATS: the reference passes every case over a real,
// embedded broker, in both encodings — 16 MiB boundary cases included. The
// live doppler cases share the broker that carries conform.v1; the node cases
// skip, as the in-process reference has no node command here.
func TestReferenceOverNATS(t *testing.T) {
	cat, err := catalog.Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, enc := range []sut.Encoding{sut.Binary, sut.JSON} {
		t.Run(enc.String(), func(t *testing.T) {
			ep := serve(t, "rig.dut1", enc)
			c, err := natsc.Dial(context.Background(), ep, 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			broker := func(context.Context) (string, error) { return ep.Server, nil }
			rec := runner.Run(context.Background(), runner.Config{Spec: ep.String(), Client: c, Cases: cat.Cases, Env: &cases.Env{Broker: broker}})
			if rec.ExitCode != 0 || rec.Summary.Counts[reports.Pass] < 100 {
				t.Fatalf("exit %d, counts %v", rec.ExitCode, rec.Summary.Counts)
			}
		})
	}
}

func TestNobodyAnswers(t *testing.T) {
	srv, err := natsserver.Start(context.Background(), natsserver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	ep, _ := natsc.ParseEndpoint(srv.URL() + "/absent")
	_, err = natsc.Dial(context.Background(), ep, time.Second)
	var se *sut.Error
	if !errors.As(err, &se) || se.Kind != sut.KindStart {
		t.Errorf("got %v, want a start error", err)
	}
	ep.Server = "nats://127.0.0.1:1"
	if _, err := natsc.Dial(context.Background(), ep, time.Second); !errors.As(err, &se) || se.Kind != sut.KindStart {
		t.Errorf("unreachable broker: got %v", err)
	}
}

func TestParseEndpoint(t *testing.T) {
	good := map[string]natsc.Endpoint{
		"nats://127.0.0.1:4222/conform":  {Server: "nats://127.0.0.1:4222", Base: "conform"},
		"nats://rig:4222/lab.bench.dut3": {Server: "nats://rig:4222", Base: "lab.bench.dut3"},
	}
	for in, want := range good {
		if got, err := natsc.ParseEndpoint(in); err != nil || got != want {
			t.Errorf("ParseEndpoint(%q) = %+v, %v", in, got, err)
		}
	}
	for _, bad := range []string{"nats://h:1", "nats://h:1/", "nats://h:1/a.*", "nats://h:1/a/b", "tcp://h:1/a", "nats:///a", "nats://h:1/.a"} {
		if _, err := natsc.ParseEndpoint(bad); err == nil {
			t.Errorf("ParseEndpoint(%q) accepted", bad)
		}
	}
}
