package natsc_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/conform-suite/conform/cases"
	"github.com/conform-suite/conform/internal/waittest"
	"github.com/conform-suite/conform/natsserver"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/reports"
	"github.com/conform-suite/conform/runner"
	"github.com/conform-suite/conform/suites"
	"github.com/conform-suite/conform/sut"
	"github.com/conform-suite/conform/sut/natsc"
	"go.uber.org/goleak"
	"google.golang.org/protobuf/encoding/protowire"
)

func TestMain(m *testing.M) {
	// Each whole-catalogue run mostly waits on its live cases' brokers.
	waittest.Widen()
	goleak.VerifyTestMain(m)
}

// serve starts an embedded broker with options o and the reference
// answering on base.
func serve(t testing.TB, o natsserver.Options, base string, enc sut.Encoding) natsc.Endpoint {
	t.Helper()
	srv, err := natsserver.Start(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	ep, err := natsc.ParseEndpoint(srv.URL() + "/" + base)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s, err := natsc.Listen(ctx, ep, suites.Default().Reference(), enc, natsc.ListenOptions{})
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

// defaultMaxPayload is nats-server's own default max_payload, what a broker
// configured with nothing allows.
const defaultMaxPayload = 1 << 20

// TestReferenceOverNATS: the reference passes every case over a real,
// embedded broker, in both encodings — 16 MiB boundary cases included. The
// live doppler cases share the broker that carries conform.v1; the node cases
// skip, as the in-process reference has no node command here.
//
// On a broker with nats-server's default max_payload of 1 MiB, every case
// still passes, in batches sized to fit, except the one whose input cannot
// fit even alone: it is skipped, with the reason, and the run exits 0.
func TestReferenceOverNATS(t *testing.T) {
	cat, err := suites.Default().Catalogue()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		maxPayload int32
		enc        sut.Encoding
		tooLarge   []string // the cases skipped because an input cannot fit
	}{
		{0, sut.Binary, nil},
		{0, sut.JSON, nil},
		{defaultMaxPayload, sut.Binary, []string{"wire/8/large-descriptor"}},
		{defaultMaxPayload, sut.JSON, []string{"wire/8/large-descriptor"}},
	} {
		t.Run(fmt.Sprintf("%s/max_payload=%d", tc.enc, tc.maxPayload), func(t *testing.T) {
			// Mostly waits on live cases' brokers: cheap to overlap.
			t.Parallel()
			ep := serve(t, natsserver.Options{MaxPayload: tc.maxPayload}, "rig.dut1", tc.enc)
			c, err := natsc.Dial(context.Background(), ep, 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			broker := func(context.Context) (string, error) { return ep.Server, nil }
			rec := runner.Run(context.Background(), runner.Config{Spec: ep.String(), Client: c, Cases: cat.Cases, Env: &cases.Env{Broker: broker, CredentialBroker: natsserver.CredentialBroker}})
			if rec.ExitCode != 0 || rec.Summary.Counts[reports.Pass] < 100 {
				t.Errorf("exit %d, counts %v", rec.ExitCode, rec.Summary.Counts)
			}
			var tooLarge []string
			for _, r := range rec.Cases {
				switch {
				case r.Outcome == reports.Error || r.Outcome == reports.Fail || r.Outcome == reports.Warn:
					t.Errorf("%s: %s %s: %s", r.ID, r.Outcome, r.ErrorKind, r.Message)
					for _, e := range r.Evidence {
						t.Logf("%s: %s: expected %q, got %q", r.ID, e.Message, e.Expected, e.Got)
					}
				case r.Outcome == reports.Skip && r.Profile != "ranvier-node":
					tooLarge = append(tooLarge, r.ID)
					if !strings.Contains(r.Message, "max_payload") || !strings.Contains(r.Message, "1.0 MiB") {
						t.Errorf("%s skipped without the broker's limit in its reason: %s", r.ID, r.Message)
					}
				}
			}
			if !slices.Equal(tooLarge, tc.tooLarge) {
				t.Errorf("skipped for their size: %q, want %q", tooLarge, tc.tooLarge)
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
	if !errors.As(err, &se) || se.Kind != reports.KindStart {
		t.Errorf("got %v, want a start error", err)
	}
	ep.Server = "nats://127.0.0.1:1"
	if _, err := natsc.Dial(context.Background(), ep, time.Second); !errors.As(err, &se) || se.Kind != reports.KindStart {
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

// TestAnswerTooLargeForTheBroker: the reference served over NATS replaces an
// answer the broker cannot carry by an Error that says so, and goes on
// serving.
func TestAnswerTooLargeForTheBroker(t *testing.T) {
	ep := serve(t, natsserver.Options{MaxPayload: defaultMaxPayload}, "lab.dut", sut.Binary)
	c, err := natsc.Dial(context.Background(), ep, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if got := c.MaxMessage(); got != defaultMaxPayload {
		t.Errorf("MaxMessage() = %d, want the broker's max_payload %d", got, defaultMaxPayload)
	}
	// A StreamInfo whose 800 KB descriptor fits in the request; its
	// decoding, rendered as JSON with the descriptor in base64, does not
	// fit in the answer.
	desc := make([]byte, 800<<10)
	schema := protowire.AppendBytes(protowire.AppendTag(nil, 2, protowire.BytesType), desc)
	payload := protowire.AppendBytes(protowire.AppendTag(nil, 3, protowire.BytesType), schema)
	big := &conformpb.Request{Op: &conformpb.Request_Decode{Decode: &conformpb.Decode{
		Inputs: []*conformpb.DecodeInput{{MessageType: "ranvier.message.v1.StreamInfo", Payload: payload}}}}}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	resp, err := c.Do(ctx, big)
	if err != nil {
		t.Fatal(err)
	}
	if msg := resp.GetError().GetMessage(); !strings.Contains(msg, "exceeds the broker's max_payload of 1048576 bytes") {
		t.Errorf("answer %v, want an Error naming max_payload", resp)
	}
	small := &conformpb.Request{Op: &conformpb.Request_Decode{Decode: &conformpb.Decode{
		Inputs: []*conformpb.DecodeInput{{MessageType: "ranvier.message.v1.StreamInfo"}}}}}
	if resp, err := c.Do(ctx, small); err != nil || resp.GetDecode() == nil {
		t.Errorf("the next request: %v, %v", resp, err)
	}
}

// TestRequestTooLargeForTheBroker: a request above the broker's max_payload
// is never sent; conform built it, so it is an error of kind harness, never
// blamed on the SUT.
func TestRequestTooLargeForTheBroker(t *testing.T) {
	ep := serve(t, natsserver.Options{MaxPayload: defaultMaxPayload}, "lab.dut", sut.Binary)
	c, err := natsc.Dial(context.Background(), ep, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	req := &conformpb.Request{Op: &conformpb.Request_Decode{Decode: &conformpb.Decode{
		Inputs: []*conformpb.DecodeInput{{Payload: make([]byte, 2<<20)}}}}}
	_, err = c.Do(context.Background(), req)
	var se *sut.Error
	if !errors.As(err, &se) || se.Kind != reports.KindHarness || !strings.Contains(se.Detail, "max_payload") {
		t.Errorf("got %v, want a harness error naming max_payload", err)
	}
}
