package runner

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/conform-suite/conform/cases"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/reports"
	"github.com/conform-suite/conform/suites"
	"github.com/conform-suite/conform/sut"
	"github.com/conform-suite/conform/sut/tcp"
)

// hugeError is the size of the Error.message the hostile SUTs below answer
// every request with: close to the 16 MiB ceiling of a conform.v1 message.
const hugeError = 15 << 20

// peakMeter keeps the peak of the memory the Go runtime holds from the
// operating system (mapped, not released): what the process's resident
// set can grow to on its account.
type peakMeter struct {
	mu      sync.Mutex
	samples []metrics.Sample
	peak    uint64
}

func newPeakMeter() *peakMeter {
	return &peakMeter{samples: []metrics.Sample{
		{Name: "/memory/classes/total:bytes"},
		{Name: "/memory/classes/heap/released:bytes"},
	}}
}

func (m *peakMeter) sample() {
	m.mu.Lock()
	defer m.mu.Unlock()
	metrics.Read(m.samples)
	held := m.samples[0].Value.Uint64() - m.samples[1].Value.Uint64()
	m.peak = max(m.peak, held)
}

func (m *peakMeter) peakMB() float64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return float64(m.peak) / 1e6
}

// vmHWM returns the process's peak resident set in MB from /proc, or 0
// where there is none. It covers the whole test binary's life, so it is
// reported, never asserted.
func vmHWM() float64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 64)
			return kb / 1e3
		}
	}
	return 0
}

// hugeErrorClient answers every op with a fresh Error whose message is
// hugeError bytes, as a decoded answer from a hostile SUT would be.
type hugeErrorClient struct {
	after func()
	calls int
}

func (c *hugeErrorClient) Hello() *conformpb.Hello {
	return &conformpb.Hello{Profiles: []string{"wire"}}
}
func (c *hugeErrorClient) Carrier() string { return "fake" }
func (c *hugeErrorClient) Close() error    { return nil }
func (c *hugeErrorClient) Do(ctx context.Context, req *conformpb.Request) (*conformpb.Response, error) {
	c.calls++
	msg := strings.Repeat("E", hugeError)
	resp := &conformpb.Response{Result: &conformpb.Response_Error{Error: &conformpb.Error{Message: msg}}}
	c.after()
	return resp, nil
}

func wireCases(t testing.TB) []cases.Case {
	t.Helper()
	cat, err := suites.Default().Catalogue()
	if err != nil {
		t.Fatal(err)
	}
	sel, err := Select(cat.Cases, []string{"wire"}, nil)
	if err != nil || len(sel) < 40 {
		t.Fatalf("%d wire cases, %v", len(sel), err)
	}
	return sel
}

// TestHugeErrorsBounded: a SUT answering every request of the whole wire
// suite with a 15 MiB Error.message costs conform a bounded amount of
// memory (under the soft limit conform run sets), and a small record: only
// a bounded head of each message is kept. (Before messages were bounded, the same run held every message:
// 53 × 15 MiB.)
func TestHugeErrorsBounded(t *testing.T) {
	// As conform run does.
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(SoftMemoryLimit))
	m := newPeakMeter()
	m.sample()
	c := &hugeErrorClient{after: m.sample}
	cs := wireCases(t)
	rec := Run(context.Background(), Config{Spec: "fake", Client: c, Cases: cs, Progress: func(reports.CaseResult) { m.sample() }})
	if c.calls < len(cs) {
		t.Fatalf("%d ops for %d cases", c.calls, len(cs))
	}
	b, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rec.Cases {
		if r.Outcome != reports.Error || r.ErrorKind != reports.KindOpError || len(r.Message) > reports.MaxMessage+64 {
			t.Fatalf("%s: %s/%s, a %d-byte message", r.ID, r.Outcome, r.ErrorKind, len(r.Message))
		}
	}
	t.Logf("%d cases, %d ops of %d MiB errors: record %d bytes, peak held by the runtime %.0f MB", len(cs), c.calls, hugeError>>20, len(b), m.peakMB())
	if len(b) > 1<<20 {
		t.Errorf("the record is %d bytes", len(b))
	}
	// The goal is 200 MB for the whole of conform; the runner's share is
	// a few of these messages at a time.
	if p := m.peakMB(); p > 200 {
		t.Errorf("peak %.0f MB held by the runtime, want under 200", p)
	}
}

// hugeErrorSUT is a conform.v1 handler answering every op with a
// hugeError-byte Error.
type hugeErrorSUT struct{ msg string }

func (h hugeErrorSUT) Hello() *conformpb.Hello { return &conformpb.Hello{Profiles: []string{"wire"}} }
func (h hugeErrorSUT) Handle(context.Context, *conformpb.Request) *conformpb.Response {
	return &conformpb.Response{Result: &conformpb.Response_Error{Error: &conformpb.Error{Message: h.msg}}}
}

// BenchmarkHugeErrorsTCP runs the whole wire suite over the real tcp
// carrier, in process, against a SUT answering every request with a 15 MiB
// Error.message, under the soft memory limit conform run sets, and reports
// the peak memory the Go runtime held (both ends of the connection, the
// SUT's included) and the record's size:
//
//	go test ./runner -run '^$' -bench HugeErrorsTCP -benchtime 1x
func BenchmarkHugeErrorsTCP(b *testing.B) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv, err := tcp.Listen(ctx, "tcp://127.0.0.1:0", hugeErrorSUT{msg: strings.Repeat("E", hugeError)}, sut.Binary)
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	cs := wireCases(b)
	m := newPeakMeter()
	var size int
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(SoftMemoryLimit))
	for b.Loop() {
		c, err := tcp.Dial(ctx, srv.URL(), tcp.Options{})
		if err != nil {
			b.Fatal(err)
		}
		rec := Run(ctx, Config{Spec: srv.URL(), Client: c, Cases: cs, Timeout: time.Minute, Progress: func(reports.CaseResult) { m.sample() }})
		c.Close()
		js, _ := json.Marshal(rec)
		size = len(js)
		if rec.Summary.Counts[reports.Error] != len(cs) {
			b.Fatalf("%v", rec.Summary.Counts)
		}
	}
	b.ReportMetric(m.peakMB(), "peak-MB")
	b.ReportMetric(vmHWM(), "VmHWM-MB")
	b.ReportMetric(float64(size), "record-bytes")
}
