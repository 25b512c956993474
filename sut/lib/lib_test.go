package lib_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/reports"
	"github.com/conform-suite/conform/runner"
	"github.com/conform-suite/conform/suites"
	"github.com/conform-suite/conform/sut"
	"github.com/conform-suite/conform/sut/lib"
	"go.uber.org/goleak"
)

// The test binary doubles as the library host: with envHost set and the
// arguments "lib-host PATH" it runs lib.Host, as "conform lib-host" does.
const envHost = "CONFORM_TEST_LIB_HOST"

func TestMain(m *testing.M) {
	if os.Getenv(envHost) != "" {
		if len(os.Args) != 3 || os.Args[1] != lib.HostCommand {
			fmt.Fprintln(os.Stderr, "usage: lib-host PATH")
			os.Exit(2)
		}
		if err := lib.ServeHost(context.Background(), os.Args[2]); err != nil {
			fmt.Fprintln(os.Stderr, "lib-host:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}

// repoRoot is the module's root, two levels above this package.
func repoRoot(t testing.TB) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

func needTools(t testing.TB, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("skipping: %s is not installed, so the C libraries cannot be built (%v)", tool, err)
		}
	}
}

// buildExample builds examples/c with its Makefile into a temporary
// directory and returns the library's path.
func buildExample(t testing.TB) string {
	t.Helper()
	needTools(t, "gcc", "make")
	out := filepath.Join(t.TempDir(), "libexample.so")
	cmd := exec.Command("make", "-s", "-C", filepath.Join(repoRoot(t), "examples", "c"), "OUT="+out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make -C examples/c: %v\n%s", err, b)
	}
	return out
}

// buildTestdata builds testdata/NAME.c into a temporary library.
func buildTestdata(t testing.TB, name string) string {
	t.Helper()
	needTools(t, "gcc")
	out := filepath.Join(t.TempDir(), "lib"+name+".so")
	cmd := exec.Command("gcc", "-D_GNU_SOURCE", "-shared", "-fPIC", "-I", filepath.Join(repoRoot(t), "include"),
		"-o", out, filepath.Join("testdata", name+".c"))
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("gcc %s.c: %v\n%s", name, err, b)
	}
	return out
}

func open(t testing.TB, path string) *lib.Client {
	t.Helper()
	c, err := lib.Open(context.Background(), path, lib.Options{
		Self:         []string{os.Args[0]},
		HelloTimeout: 10 * time.Second,
		Env:          []string{envHost + "=1"},
	})
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func decodeReq() *conformpb.Request {
	return &conformpb.Request{Op: &conformpb.Request_Decode{Decode: &conformpb.Decode{Inputs: []*conformpb.DecodeInput{
		{MessageType: "ranvier.message.v1.Request", Payload: []byte{0x0a, 0x04, 'g', 'a', 'z', 'e'}},
	}}}}
}

func do(c sut.Client) (*conformpb.Response, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return c.Do(ctx, decodeReq())
}

// TestExamplePassesEveryWireCase runs the whole wire suite against the C
// example over lib:.
func TestExamplePassesEveryWireCase(t *testing.T) {
	path := buildExample(t)
	c := open(t, path)
	if h := c.Hello(); h.GetLanguage() != "C" || len(h.GetProfiles()) == 0 {
		t.Fatalf("Hello %v", h)
	}
	if got, want := c.Carrier(), "lib:"+path; got != want {
		t.Errorf("carrier %q, want %q", got, want)
	}
	cat, err := suites.Default().Catalogue()
	if err != nil {
		t.Fatal(err)
	}
	sel, err := runner.Select(cat.Cases, []string{"wire"}, nil)
	if err != nil || len(sel) == 0 {
		t.Fatalf("selecting the wire cases: %v (%d)", err, len(sel))
	}
	rec := runner.Run(context.Background(), runner.Config{
		Spec: "lib:" + path, Client: c, Cases: sel, Profiles: []string{"wire"},
		Seed: 1, Timeout: 30 * time.Second, Corpus: cat.Corpus,
	})
	for _, r := range rec.Cases {
		switch r.Outcome {
		case reports.Pass, reports.Info:
		default:
			t.Errorf("%s: %s %s %s %+v", r.ID, r.Outcome, r.ErrorKind, r.Message, r.Evidence)
		}
	}
	if rec.ExitCode != 0 || rec.Summary.Counts[reports.Pass] < 40 {
		t.Errorf("exit %d, %d pass", rec.ExitCode, rec.Summary.Counts[reports.Pass])
	}
}

// TestCrashIsRecordedAndSurvived: a library that segfaults is an error
// naming the signal, and the next op runs in a restarted host.
func TestCrashIsRecordedAndSurvived(t *testing.T) {
	c := open(t, buildTestdata(t, "crash")) // call 1: the Hello
	for round := range 3 {
		resp, err := do(c) // call 2: answered
		if err != nil {
			t.Fatalf("round %d: the op before the crash: %v", round, err)
		}
		if resp.GetUnimplemented() == nil {
			t.Fatalf("round %d: answer %v", round, resp)
		}
		_, err = do(c) // call 3: the segfault
		var se *sut.Error
		if !errors.As(err, &se) || se.Kind != reports.KindCrash {
			t.Fatalf("round %d: got %v, want a crash", round, err)
		}
		if !strings.Contains(se.Exit, "signal: segmentation fault") {
			t.Errorf("round %d: exit %q does not name the signal", round, se.Exit)
		}
	}
}

// TestFailedCallIsAnErrorResponse: a call that returns non-zero or answers
// NULL is reported as a conform.v1 Error for that request, and the session
// goes on.
func TestFailedCallIsAnErrorResponse(t *testing.T) {
	c := open(t, buildTestdata(t, "fail"))
	for i, want := range []string{"returned 7", "NULL response", "returned 7"} {
		resp, err := do(c)
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		if msg := resp.GetError().GetMessage(); !strings.Contains(msg, want) {
			t.Errorf("call %d: answer %v, want an Error saying %q", i, resp, want)
		}
	}
}

func TestOpenErrors(t *testing.T) {
	needTools(t, "gcc")
	missing := filepath.Join(t.TempDir(), "missing.so")
	_, err := lib.Open(context.Background(), missing, lib.Options{
		Self: []string{os.Args[0]}, HelloTimeout: 10 * time.Second, Env: []string{envHost + "=1"},
	})
	var se *sut.Error
	if !errors.As(err, &se) || se.Kind != reports.KindStart || !strings.Contains(se.Error(), "no library at "+missing+" (no such file)") {
		t.Fatalf("got %v, want a start error saying there is no library at %s", err, missing)
	}
	// The host says so too, for a caller that did not check.
	if err := lib.Host(context.Background(), missing, strings.NewReader(""), io.Discard); err == nil || !strings.Contains(err.Error(), "no library at "+missing) {
		t.Errorf("Host: %v, want an error saying there is no library at %s", err, missing)
	}
	_, err = lib.Open(context.Background(), t.TempDir(), lib.Options{Self: []string{os.Args[0]}})
	if !errors.As(err, &se) || se.Kind != reports.KindStart || !strings.Contains(se.Error(), "is a directory") {
		t.Errorf("a directory: got %v", err)
	}

	// A library without the two symbols.
	dir := t.TempDir()
	src := filepath.Join(dir, "empty.c")
	if err := os.WriteFile(src, []byte("int nothing_here(void) { return 0; }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	so := filepath.Join(dir, "libempty.so")
	if b, err := exec.Command("gcc", "-shared", "-fPIC", "-o", so, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, b)
	}
	_, err = lib.Open(context.Background(), so, lib.Options{
		Self: []string{os.Args[0]}, HelloTimeout: 10 * time.Second, Env: []string{envHost + "=1"},
	})
	if !errors.As(err, &se) || se.Kind != reports.KindStart || !strings.Contains(se.Stderr, "conform_call") {
		t.Fatalf("got %v (stderr %q), want a start error naming the missing symbol", err, stderrOf(err))
	}
}

// openHostile opens testdata/hostile.c's library, misbehaving as fault.
func openHostile(t testing.TB, path, fault string) (*lib.Client, error) {
	t.Helper()
	c, err := lib.Open(context.Background(), path, lib.Options{
		Self: []string{os.Args[0]}, HelloTimeout: 10 * time.Second,
		Env: []string{envHost + "=1", "CONFORM_TESTLIB=" + fault},
	})
	if err == nil {
		t.Cleanup(func() { c.Close() })
	}
	return c, err
}

// TestLibraryPrintsToStdout: what a library prints cannot reach the framing.
func TestLibraryPrintsToStdout(t *testing.T) {
	c, err := openHostile(t, buildTestdata(t, "hostile"), "printf")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		resp, err := do(c)
		if err != nil || resp.GetUnimplemented() == nil {
			t.Fatalf("op %d: %v %v", i, resp, err)
		}
	}
}

// TestClaimAboveTheCeiling: a library claiming a 1 TiB or 4 GiB answer gets
// an Error answer, checked before the host allocates, and the host lives on.
func TestClaimAboveTheCeiling(t *testing.T) {
	path := buildTestdata(t, "hostile")
	for _, fault := range []string{"claim-1tib", "claim-4gib"} {
		t.Run(fault, func(t *testing.T) {
			c, err := openHostile(t, path, fault)
			if err != nil {
				t.Fatal(err)
			}
			for i := range 2 {
				resp, err := do(c)
				if err != nil {
					t.Fatalf("op %d: %v", i, err)
				}
				if msg := resp.GetError().GetMessage(); !strings.Contains(msg, "above the 16777216-byte frame ceiling") {
					t.Errorf("op %d: answer %v", i, resp)
				}
			}
		})
	}
}

// TestConstructorAbort: a library that aborts as it loads is a start error
// naming the signal, not a Go traceback.
func TestConstructorAbort(t *testing.T) {
	_, err := openHostile(t, buildTestdata(t, "hostile"), "abort-in-constructor")
	var se *sut.Error
	if !errors.As(err, &se) || se.Kind != reports.KindStart {
		t.Fatalf("got %v, want a start error", err)
	}
	if se.Exit != "signal: aborted" || strings.Contains(se.Stderr, "goroutine") {
		t.Errorf("exit %q, stderr %q: want signal: aborted and no Go traceback", se.Exit, se.Stderr)
	}
}

func stderrOf(err error) string {
	var se *sut.Error
	if errors.As(err, &se) {
		return se.Stderr
	}
	return ""
}

// BenchmarkRoundTrip is one decode op per round trip to the C example.
func BenchmarkRoundTrip(b *testing.B) {
	c := open(b, buildExample(b))
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Do(ctx, decodeReq()); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBatched256 sends 256 read_frames inputs per request to the C
// example, as sut/exec's benchmark of the same name does to the reference.
func BenchmarkBatched256(b *testing.B) {
	c := open(b, buildExample(b))
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
