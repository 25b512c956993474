package exec_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/sut"
	"github.com/conform-suite/conform/sut/exec"
	"github.com/conform-suite/conform/sut/fault"
	"github.com/conform-suite/conform/sut/impl"
	"go.uber.org/goleak"
)

// The test binary doubles as the SUT: with CONFORM_TEST_SUT set it serves
// the reference ("reference", "reference-json") or a fault by name.
const envSUT = "CONFORM_TEST_SUT"

func TestMain(m *testing.M) {
	if name := os.Getenv(envSUT); name != "" {
		os.Exit(serve(name))
	}
	goleak.VerifyTestMain(m)
}

func serve(name string) int {
	ctx := context.Background()
	var err error
	switch name {
	case "reference":
		err = sut.Serve(ctx, os.Stdin, os.Stdout, impl.Reference(), sut.Binary)
	case "reference-json":
		err = sut.Serve(ctx, os.Stdin, os.Stdout, impl.Reference(), sut.JSON)
	default:
		f, ok := fault.Lookup(name)
		if !ok {
			fmt.Fprintln(os.Stderr, "no fault", name)
			return 2
		}
		err = f.Serve(ctx, os.Stdin, os.Stdout)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

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
		{"crash", sut.KindCrash, []string{fault.EnvAfter + "=2"}, 1},
		{"hang", sut.KindTimeout, nil, 0},
		{"garbage", sut.KindProtocol, nil, 0},
		{"oversize", sut.KindProtocol, nil, 0},
		{"flood", sut.KindProtocol, nil, 0},
		{"wrong-id", sut.KindProtocol, nil, 0},
		{"slow", sut.KindTimeout, []string{fault.EnvDelay + "=3s"}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.fault, func(t *testing.T) {
			c := start(t, tt.fault, tt.env...)
			for i := range tt.okBefore {
				if _, err := do(t, c, 5*time.Second); err != nil {
					t.Fatalf("op %d: %v", i, err)
				}
			}
			_, err := do(t, c, 500*time.Millisecond)
			se := wantKind(t, err, tt.kind)
			if tt.fault == "crash" && !strings.Contains(se.Exit, "signal: abort") {
				t.Errorf("crash exit %q does not name the signal", se.Exit)
			}
			// The client restarts the SUT for the next op, which sees the
			// fault afresh (or, for crash, succeeds again).
			_, err = do(t, c, 500*time.Millisecond)
			if tt.okBefore == 0 {
				wantKind(t, err, tt.kind)
			} else if err != nil {
				t.Fatalf("after restart: %v", err)
			}
		})
	}
}

func TestNoHello(t *testing.T) {
	_, err := exec.Start(context.Background(), []string{os.Args[0]}, exec.Options{
		HelloTimeout: 5 * time.Second, Env: []string{envSUT + "=early-exit"},
	})
	se := wantKind(t, err, sut.KindStart)
	if !strings.Contains(se.Stderr, "giving up before Hello") || !strings.Contains(se.Exit, "exit status 1") {
		t.Errorf("stderr %q exit %q", se.Stderr, se.Exit)
	}
	_, err = exec.Start(context.Background(), []string{"/nonexistent/sut"}, exec.Options{})
	wantKind(t, err, sut.KindStart)
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
