package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/conform-suite/conform/natsserver"
	"github.com/conform-suite/conform/reports"
)

// TestReferenceOverNATS: conform reference --nats serves the reference on
// a real broker (embedded in this test process, never a mock), and conform
// run reaches it with nats://host:port/base: every case passes.
func TestReferenceOverNATS(t *testing.T) {
	srv, err := natsserver.Start(context.Background(), natsserver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	ep := srv.URL() + "/lab.dut"
	addr := startReference(t, "nats://127.0.0.1:", "--nats", ep)
	if addr != ep {
		t.Fatalf("the server reports %q, want %q", addr, ep)
	}
	rec := filepath.Join(t.TempDir(), "rec.json")
	r := conform(t, 2*time.Minute, nil, "run", "--sut", ep, "--json", rec)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if n := count(r.rec, reports.Pass); n < 100 {
		t.Errorf("%d cases pass, want at least 100", n)
	}
	for _, o := range []reports.Outcome{reports.Fail, reports.Error, reports.Warn, reports.Skip} {
		if n := count(r.rec, o); n != 0 {
			t.Errorf("%d cases %s", n, o)
		}
	}
	// Nothing answers on another base: the SUT never says Hello.
	r = conform(t, time.Minute, nil, "run", "--sut", srv.URL()+"/nobody", "--case", "wire/1.2/*", "--timeout", "2s")
	if r.code != 3 || !strings.Contains(r.stderr, "never said Hello") {
		t.Errorf("exit %d, stderr %q; want 3", r.code, r.stderr)
	}
}
