package doppler_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/conform-suite/conform/cases"
	"github.com/conform-suite/conform/cases/doppler"
	"github.com/conform-suite/conform/natsserver"
	"github.com/conform-suite/conform/reports"
	"github.com/conform-suite/conform/runner"
	"github.com/conform-suite/conform/suites"
	"github.com/conform-suite/conform/sut"
	"github.com/conform-suite/conform/sut/builtin"
	"github.com/conform-suite/conform/sut/impl"
)

// liveCases returns the catalogue's doppler-nats cases, as the registry
// gives them: tagged live, so that they run beside one another.
func liveCases(t *testing.T) []cases.Case {
	t.Helper()
	cat, err := suites.Default().Catalogue()
	if err != nil {
		t.Fatal(err)
	}
	out := cat.Select(func(c cases.Case) bool { return c.Profile == doppler.LiveProfile })
	if len(out) < 15 {
		t.Fatalf("only %d live cases", len(out))
	}
	return out
}

// broker starts an embedded server of the given max_payload (0: the
// natsserver default) for the test.
func broker(t testing.TB, maxPayload int32) *cases.Env {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	srv, err := natsserver.Start(ctx, natsserver.Options{MaxPayload: maxPayload})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	return &cases.Env{Broker: func(context.Context) (string, error) { return srv.URL(), nil }, CredentialBroker: natsserver.CredentialBroker}
}

// runLive runs cs against the implementation fresh makes, as conform run
// does a SUT it starts: up to eight live cases at once, each over a fresh
// implementation. Most of these cases wait on the broker, and a mutant's
// run one case after another takes tens of seconds of waiting.
func runLive(spec string, fresh func() *impl.Impl, cs []cases.Case, env *cases.Env) *reports.Record {
	return runner.Run(context.Background(), runner.Config{
		Spec: spec, Client: builtin.New(spec, fresh()), Cases: cs, Seed: 1, Env: env, Parallel: 8,
		Open: func(context.Context) (sut.Client, error) { return builtin.New(spec, fresh()), nil },
	})
}

// TestLiveReferencePasses runs every live case against the reference over
// the in-process carrier, on brokers of two max_payloads: each case passes
// (or, being informational, records).
func TestLiveReferencePasses(t *testing.T) {
	cs := liveCases(t)
	for _, mp := range []int32{1 << 20, 0} {
		t.Run(fmt.Sprintf("max_payload-%d", mp), func(t *testing.T) {
			env := broker(t, mp)
			start := time.Now()
			rec := runLive("builtin:reference", suites.Default().Reference, cs, env)
			for _, c := range rec.Cases {
				if c.Outcome != reports.Pass && c.Outcome != reports.Info {
					t.Errorf("%s: %s %s %v", c.ID, c.Outcome, c.Message, c.Evidence)
				}
				t.Logf("%-50s %-5s %.3fs %s", c.ID, c.Outcome, c.DurationSec, strings.Join(c.Notes, "; "))
			}
			t.Logf("%d live cases in %v", len(rec.Cases), time.Since(start))
		})
	}
}

// TestLiveWithoutJetStream: on a broker without JetStream the work-queue
// cases end as harness errors naming the missing tier, not as the SUT's
// failures, and every other live case still passes.
func TestLiveWithoutJetStream(t *testing.T) {
	srv, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: server.RANDOM_PORT, NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	srv.Start()
	t.Cleanup(func() { srv.Shutdown(); srv.WaitForShutdown() })
	if !srv.ReadyForConnections(10 * time.Second) {
		t.Fatal("the server did not start")
	}
	env := &cases.Env{Broker: func(context.Context) (string, error) { return srv.ClientURL(), nil }, CredentialBroker: natsserver.CredentialBroker}
	rec := runLive("builtin:reference", suites.Default().Reference, liveCases(t), env)
	errs := 0
	for _, c := range rec.Cases {
		switch {
		case c.Outcome == reports.Error && c.ErrorKind == reports.KindHarness && strings.Contains(c.Message, "offers no JetStream"):
			errs++
		case c.Outcome != reports.Pass && c.Outcome != reports.Info:
			t.Errorf("%s: %s (%s) %s", c.ID, c.Outcome, c.ErrorKind, c.Message)
			for _, e := range c.Evidence {
				t.Logf("%s: %s: expected %q, got %q", c.ID, e.Message, e.Expected, e.Got)
			}
		}
	}
	if errs != 8 {
		t.Errorf("%d work-queue cases ended as harness errors, want 8", errs)
	}
}

// TestLiveCredentialsNeedTheRunsServer: the credentials case starts its
// server through the run's Env.CredentialBroker; a run that cannot start
// one ends that case as a harness error saying so, never as the SUT's
// failure.
func TestLiveCredentialsNeedTheRunsServer(t *testing.T) {
	env := broker(t, 0)
	env.CredentialBroker = nil
	var cs []cases.Case
	for _, c := range liveCases(t) {
		if c.ID == "doppler/9/live-credentials-in-the-url" {
			cs = append(cs, c)
		}
	}
	if len(cs) != 1 {
		t.Fatalf("%d credentials cases in the catalogue, want 1", len(cs))
	}
	rec := runLive("builtin:reference", suites.Default().Reference, cs, env)
	c := rec.Cases[0]
	if c.Outcome != reports.Error || c.ErrorKind != reports.KindHarness || !strings.Contains(c.Message, "demands credentials") {
		t.Errorf("%s: %s (%s) %q, want a harness error saying the run cannot start a server that demands credentials", c.ID, c.Outcome, c.ErrorKind, c.Message)
	}
}
