package exec_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	osexec "os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/conform-suite/conform/internal/hang"
	"github.com/conform-suite/conform/internal/waittest"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/reports"
	"github.com/conform-suite/conform/suites"
	"github.com/conform-suite/conform/sut"
	"github.com/conform-suite/conform/sut/exec"
	"github.com/conform-suite/conform/sut/fault"
	"go.uber.org/goleak"
)

// The test binary doubles as the SUT: with CONFORM_TEST_SUT set it serves
// the reference ("reference", "reference-json") or a fault by name.
const envSUT = "CONFORM_TEST_SUT"

func TestMain(m *testing.M) {
	if name := os.Getenv(envSUT); name != "" {
		os.Exit(serve(name))
	}
	// The fault tests mostly wait for a SUT that hangs or is slow.
	waittest.Widen()
	goleak.VerifyTestMain(m)
}

func serve(name string) int {
	ctx := context.Background()
	var err error
	switch name {
	case "reference":
		err = sut.Serve(ctx, os.Stdin, os.Stdout, suites.Default().Reference(), sut.Binary)
	case "reference-json":
		err = sut.Serve(ctx, os.Stdin, os.Stdout, suites.Default().Reference(), sut.JSON)
	case "slow-hello":
		// Says Hello only after exec.SlowHello, asleep until then.
		time.Sleep(exec.SlowHello)
		err = sut.Serve(ctx, os.Stdin, os.Stdout, suites.Default().Reference(), sut.Binary)
	case "spin":
		err = sut.Serve(ctx, os.Stdin, os.Stdout, spinning{suites.Default().Reference()}, sut.Binary)
	case "die-holding-stdout", "exit-holding-stdout":
		// A descendant keeps stdout open while the SUT itself dies: at its
		// first request, or before its Hello.
		holder := osexec.Command("sleep", "600")
		holder.Stdout = os.Stdout
		if err := holder.Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		if name == "exit-holding-stdout" {
			return 4
		}
		f, _ := fault.Lookup("crash")
		err = f.Serve(ctx, suites.Default().Reference(), os.Stdin, os.Stdout)
	default:
		f, ok := fault.Lookup(name)
		if !ok {
			fmt.Fprintln(os.Stderr, "no fault", name)
			return 2
		}
		err = f.Serve(ctx, suites.Default().Reference(), os.Stdin, os.Stdout)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// spinning says the reference's Hello and then, at its first request,
// spins on the CPU for ever: a hang that is runnable all along.
type spinning struct{ sut.Handler }

func (spinning) Handle(context.Context, *conformpb.Request) *conformpb.Response {
	for {
		spun.Add(1)
	}
}

var spun atomic.Uint64

func start(t testing.TB, name string, env ...string) *exec.Client {
	t.Helper()
	c, err := exec.Start(context.Background(), []string{os.Args[0]}, exec.Options{
		HelloTimeout: 5 * time.Second,
		Env:          append([]string{envSUT + "=" + name}, env...),
	})
	if err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func decodeReq() *conformpb.Request {
	return &conformpb.Request{Op: &conformpb.Request_Decode{Decode: &conformpb.Decode{Inputs: []*conformpb.DecodeInput{
		{MessageType: "ranvier.message.v1.Request", Payload: []byte{0x0a, 0x04, 'g', 'a', 'z', 'e'}},
	}}}}
}

func do(t testing.TB, c *exec.Client, timeout time.Duration) (*conformpb.Response, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return c.Do(ctx, decodeReq())
}

func TestReferenceBothEncodings(t *testing.T) {
	for _, name := range []string{"reference", "reference-json"} {
		t.Run(name, func(t *testing.T) {
			c := start(t, name)
			if got := c.Hello().GetImplementation(); got != "conform reference" {
				t.Errorf("Hello names %q", got)
			}
			for i := range 3 {
				resp, err := do(t, c, 5*time.Second)
				if err != nil {
					t.Fatal(err)
				}
				if js := resp.GetDecode().GetOutputs()[0].GetJson(); !strings.Contains(js, "gaze") {
					t.Errorf("op %d: decoded %q", i, js)
				}
			}
		})
	}
}

// wantKind asserts that err is a *sut.Error of the given kind.
func wantKind(t *testing.T, err error, kind sut.ErrorKind) *sut.Error {
	t.Helper()
	var se *sut.Error
	if !errors.As(err, &se) {
		t.Fatalf("got %v, want a *sut.Error of kind %s", err, kind)
	}
	if se.Kind != kind {
		t.Fatalf("got kind %s (%v), want %s", se.Kind, se, kind)
	}
	return se
}

func TestFaults(t *testing.T) {
	tests := []struct {
		fault string
		kind  sut.ErrorKind
		env   []string
		// okBefore is how many ops succeed before the fault shows.
		okBefore int
	}{
		{"crash", reports.KindCrash, []string{fault.EnvAfter + "=2"}, 1},
		{"hang", reports.KindTimeout, nil, 0},
		{"garbage", reports.KindProtocol, nil, 0},
		{"oversize", reports.KindProtocol, nil, 0},
		{"flood", reports.KindProtocol, nil, 0},
		{"wrong-id", reports.KindProtocol, nil, 0},
		{"slow", reports.KindTimeout, []string{fault.EnvDelay + "=10s"}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.fault, func(t *testing.T) {
			t.Parallel() // each has a SUT of its own, and most of it is waiting
			c := start(t, tt.fault, tt.env...)
			// An op's timeout also bounds a restart, which a loaded
			// machine can make slow. Only a fault that is a timeout needs
			// a short one; for the others a timeout would hide the fault.
			opWait := hang.Guard(t, 5*time.Second)
			if tt.kind == reports.KindTimeout {
				opWait = 500 * time.Millisecond
			}
			for i := range tt.okBefore {
				if _, err := do(t, c, hang.Guard(t, 5*time.Second)); err != nil {
					t.Fatalf("op %d: %v", i, err)
				}
			}
			_, err := do(t, c, opWait)
			se := wantKind(t, err, tt.kind)
			if tt.fault == "crash" && !strings.Contains(se.Exit, "signal: abort") {
				t.Errorf("crash exit %q does not name the signal", se.Exit)
			}
			// The client restarts the SUT for the next op, which sees the
			// fault afresh (or, for crash, succeeds again). The restart
			// shares the op's time, and 500 ms was not always enough for
			// it under load: the next op waits long enough for a restart,
			// and still less than slow's delay.
			if tt.kind == reports.KindTimeout {
				opWait = 4 * time.Second
			}
			_, err = do(t, c, opWait)
			if tt.okBefore == 0 {
				wantKind(t, err, tt.kind)
			} else if err != nil {
				t.Fatalf("after restart: %v", err)
			}
		})
	}
}

// TestSpinningHangIsBounded: a SUT spinning in a hang is runnable all
// along, so on a busy machine its waits for a CPU stretch the op's
// deadline (patience.go), but never past 1+MaxStretch times the op's time.
// An idle hang is "hang" of TestFaults, which times out on time.
func TestSpinningHangIsBounded(t *testing.T) {
	t.Parallel()
	c := start(t, "spin")
	const op = 300 * time.Millisecond
	began := time.Now()
	_, err := do(t, c, op)
	took := time.Since(began)
	se := wantKind(t, err, reports.KindTimeout)
	// The bound is (1+MaxStretch) times op; the margin above it is for the
	// kill, the read's wake and a machine busy enough to stretch at all.
	if bound := (1+exec.MaxStretch)*op + 5*time.Second; took < op || took > bound {
		t.Errorf("the spinning SUT timed out after %v, want between %v and %v: %v", took, op, bound, se)
	}
}

func TestNoHello(t *testing.T) {
	_, err := exec.Start(context.Background(), []string{os.Args[0]}, exec.Options{
		HelloTimeout: 5 * time.Second, Env: []string{envSUT + "=early-exit"},
	})
	se := wantKind(t, err, reports.KindStart)
	if !strings.Contains(se.Stderr, "giving up before Hello") || !strings.Contains(se.Exit, "exit status 1") {
		t.Errorf("stderr %q exit %q", se.Stderr, se.Exit)
	}
	_, err = exec.Start(context.Background(), []string{"/nonexistent/sut"}, exec.Options{})
	wantKind(t, err, reports.KindStart)
}

// TestDeathWithOutputHeld: a SUT that dies while a descendant holds its
// stdout open is a crash (or, before its Hello, a start error saying it
// exited), not a wait for the whole timeout followed by a timeout.
func TestDeathWithOutputHeld(t *testing.T) {
	if _, err := osexec.LookPath("sleep"); err != nil {
		t.Skip("skipping: no sleep to hold the pipe")
	}
	c := start(t, "die-holding-stdout", fault.EnvAfter+"=1")
	_, err := do(t, c, 30*time.Second)
	// The descendant dies with the SUT (proc ends its group at once), or,
	// were it out of reach, the exit itself ends the wait.
	se := wantKind(t, err, reports.KindCrash)
	if !strings.Contains(se.Exit, "signal: abort") {
		t.Errorf("%v (%s)", se, se.Exit)
	}

	_, err = exec.Start(context.Background(), []string{os.Args[0]}, exec.Options{
		HelloTimeout: 30 * time.Second, Env: []string{envSUT + "=exit-holding-stdout"},
	})
	se = wantKind(t, err, reports.KindStart)
	if !strings.Contains(se.Error(), "exited before its Hello") || se.Exit != "exit status 4" {
		t.Errorf("%v (%s)", se, se.Exit)
	}
}

func BenchmarkRoundTrip(b *testing.B) {
	c := start(b, "reference")
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Do(ctx, decodeReq()); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBatched256 sends 256 inputs per request; the per-input figure is
// the one a fuzz campaign lives by.
func BenchmarkBatched256(b *testing.B) {
	c := start(b, "reference")
	ctx := context.Background()
	req := &conformpb.Request{Op: &conformpb.Request_ReadFrames{ReadFrames: &conformpb.ReadFrames{}}}
	frame := []byte{0, 0, 0, 0x12, 0x12, 0x10, 0x09, 1, 0, 0, 0, 0, 0, 0, 0, 0x10, 1, 0x1a, 1, 0x41, 0x28, 1}
	for range 256 {
		req.GetReadFrames().Inputs = append(req.GetReadFrames().Inputs, &conformpb.ReadInput{Chunks: []*conformpb.Blob{{Data: frame[:7]}, {Data: frame[7:]}}})
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Do(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*256), "ns/input")
}

// BenchmarkHugeErrorAnswer is one round trip to a SUT answering with a
// 15 MiB Error.message: B/op is what such an answer costs conform while it
// is read and decoded (its text is then cut to reports.MaxMessage).
func BenchmarkHugeErrorAnswer(b *testing.B) {
	c := start(b, "huge-error")
	ctx := context.Background()
	b.ReportAllocs()
	b.SetBytes(fault.HugeErrorSize)
	for b.Loop() {
		resp, err := c.Do(ctx, decodeReq())
		if msg := resp.GetError().GetMessage(); err != nil || len(msg) > reports.MaxMessage+64 {
			b.Fatalf("a %d-byte message, %v", len(msg), err)
		}
	}
}
