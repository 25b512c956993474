package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/conform-suite/conform/internal/hang"
	"github.com/conform-suite/conform/natsserver"
	"github.com/conform-suite/conform/reports"
	"github.com/conform-suite/conform/suites"
)

// TestReferenceOverNATS: conform reference --nats serves the reference on
// a real broker (embedded in this test process, never a mock), and conform
// run reaches it with nats://host:port/base: every case passes. A SUT on a
// subject is one session, whose cases run one at a time, so the catalogue
// is cut in parts by profile, each run against a server of its own on its
// own base, and the parts go at once.
func TestReferenceOverNATS(t *testing.T) {
	t.Parallel()
	srv, err := natsserver.Start(context.Background(), natsserver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	parts := []string{"wire,streams,tlv,graph,doppler,doppler-nats", "ranvier-subscriber", "ranvier-publisher", "ranvier-runtime", "ranvier-node"}
	dir := t.TempDir()
	var argss [][]string
	for i, profiles := range parts {
		ep := fmt.Sprintf("%s/lab.dut%d", srv.URL(), i)
		addr := startReference(t, "nats://127.0.0.1:", "--nats", ep)
		if addr != ep {
			t.Fatalf("the server reports %q, want %q", addr, ep)
		}
		// A SUT on a broker never makes conform run a command: its node is
		// launched by --node-cmd, not by its Hello's node_command.
		argss = append(argss, []string{"run", "--sut", ep, "--profile", profiles, "--node-cmd", bin + " reference node", "--json", filepath.Join(dir, fmt.Sprintf("rec%d.json", i))})
	}
	passed := 0
	for i, r := range runAll(t, 2*time.Minute, nil, argss...) {
		if r.code != 0 {
			t.Errorf("%s: exit %d\n%s%s", parts[i], r.code, r.stdout, r.stderr)
		}
		passed += count(r.rec, reports.Pass)
		for _, o := range []reports.Outcome{reports.Fail, reports.Error, reports.Warn, reports.Skip} {
			if n := count(r.rec, o); n != 0 {
				t.Errorf("%s: %d cases %s", parts[i], n, o)
			}
		}
	}
	if passed < 400 {
		t.Errorf("%d cases pass, want at least 400", passed)
	}
	// Nothing answers on another base: the SUT never says Hello.
	r := conform(t, time.Minute, nil, "run", "--sut", srv.URL()+"/nobody", "--case", "wire/1.2/*", "--timeout", "2s")
	if r.code != 3 || !strings.Contains(r.stderr, "never said Hello") {
		t.Errorf("exit %d, stderr %q; want 3", r.code, r.stderr)
	}
}

// TestReferenceOverDefaultNATS: over a broker with nats-server's default
// max_payload (1 MiB), conform reference --nats passes the wire and streams
// suites and conform run exits 0: batches are sized to the broker, and the
// one case whose input cannot fit even alone is skipped with the reason.
// Both ends run in this process, through Main, as the CLI runs them.
func TestReferenceOverDefaultNATS(t *testing.T) {
	srv, err := natsserver.Start(context.Background(), natsserver.Options{MaxPayload: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	ep := srv.URL() + "/lab.dut"

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	served := make(chan int, 1)
	go func() {
		served <- Main(ctx, suites.Default(), []string{"reference", "--nats", ep}, nil, io.Discard, pw)
		pw.Close()
	}()
	sc := bufio.NewScanner(pr)
	if !sc.Scan() || !strings.HasPrefix(sc.Text(), "listening on "+ep) {
		t.Fatalf("conform reference --nats: first line %q", sc.Text())
	}
	go io.Copy(io.Discard, pr)

	rec := filepath.Join(t.TempDir(), "rec.json")
	var stdout, stderr bytes.Buffer
	code := Main(context.Background(), suites.Default(), []string{"run", "--sut", ep, "--profile", "wire,streams", "--json", rec}, nil, &stdout, &stderr)
	if code != 0 {
		t.Errorf("conform run: exit %d\n%s%s", code, stdout.String(), stderr.String())
	}
	b, err := os.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	var r reports.Record
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	if n := count(&r, reports.Pass); n < 50 {
		t.Errorf("%d cases pass, want at least 50", n)
	}
	for _, c := range r.Cases {
		switch {
		case c.Outcome == reports.Skip && c.ID == "wire/8/large-descriptor":
			if !strings.Contains(c.Message, "max_payload") {
				t.Errorf("%s skipped without naming max_payload: %s", c.ID, c.Message)
			}
		case c.Outcome != reports.Pass && c.Outcome != reports.Info:
			t.Errorf("%s: %s %s: %s", c.ID, c.Outcome, c.ErrorKind, c.Message)
		}
	}

	cancel()
	select {
	case code := <-served:
		if code != 0 {
			t.Errorf("conform reference --nats: exit %d", code)
		}
	case <-time.After(hang.Guard(t, time.Minute)):
		t.Fatal("conform reference --nats did not stop")
	}
}
