package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/conform-suite/conform/internal/hang"
	"github.com/conform-suite/conform/reports"
)

// startWait is the --timeout of the runs of an interpreted SUT (see
// runInRepo).
const startWait = "1m"

// TestPythonExampleOverExec runs every wire and streams case against the
// Python example binding (examples/python, standard library only, conform.v1
// in JSON over stdio) over the exec carrier, the way a binding author would.
func TestPythonExampleOverExec(t *testing.T) {
	t.Parallel()
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not found: the Python example binding is not tested")
	}
	shim := filepath.Join("..", "..", "examples", "python", "shim.py")
	spec := "exec:" + python + " " + shim
	rec := filepath.Join(t.TempDir(), "rec.json")
	r := conform(t, 2*time.Minute, nil, "run", "--sut", spec, "--profile", "wire,streams", "--timeout", startWait, "--json", rec)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if n := count(r.rec, reports.Pass); n < 100 {
		t.Errorf("%d wire and streams cases pass, want at least 100", n)
	}
	for _, o := range []reports.Outcome{reports.Fail, reports.Error, reports.Warn, reports.Skip} {
		if n := count(r.rec, o); n != 0 {
			t.Errorf("%d cases %s\n%s", n, o, r.stdout)
		}
	}
	for _, suite := range []string{"wire", "streams"} {
		if r.rec.Summary.BySuite[suite][reports.Pass] == 0 {
			t.Errorf("no %s case passed: %v", suite, r.rec.Summary.BySuite)
		}
	}
	var hello struct {
		Language string   `json:"language"`
		Profiles []string `json:"profiles"`
	}
	if err := json.Unmarshal(r.rec.SUT.Hello, &hello); err != nil {
		t.Fatalf("the record's hello %s: %v", r.rec.SUT.Hello, err)
	}
	if hello.Language != "python" || !slices.Contains(hello.Profiles, "wire") || !slices.Contains(hello.Profiles, "streams") {
		t.Errorf("hello %s: want language python and profiles wire and streams", r.rec.SUT.Hello)
	}
}

// minimalShimPasses are the cases the minimal shim (examples/minimal,
// readFrames alone) passes: every case of the wire profile that needs only
// a frame reader. The README's walkthrough states these figures.
var minimalShimPasses = []string{
	"wire/1.2/reader-prefix-big-endian",
	"wire/1.2/zero-length-is-a-frame",
	"wire/1.3/byte-at-a-time",
	"wire/1.3/clean-end",
	"wire/1.3/every-split-point",
	"wire/1.3/holds-one-incomplete-frame",
	"wire/1.3/seeded-random-chunkings",
	"wire/1.3/three-frames-in-one-read",
	"wire/1.3/truncated-tail-not-delivered",
	"wire/1.3/wait-below-four-bytes",
	"wire/1.3/wait-below-whole-frame",
	"wire/2/above-ceiling-refused",
	"wire/2/ceiling-claim-accepted",
	"wire/2/ceiling-payload-read",
	"wire/2/no-allocation-for-a-claim",
	"wire/2/no-allocation-for-a-legal-claim",
	"wire/6.1/not-yet-is-not-wrong",
	"wire/6.2/no-resync-after-too-large",
}

// runInRepo runs the conform binary in the repository's root, as the
// README's commands are typed, and reads the record it writes to rec.
//
// The op timeout, which also bounds a SUT's start until its Hello, is a
// minute rather than the default 10 s: an interpreter's start on a loaded
// machine can take longer than that (through a pyenv shim, `python3 -c
// pass` took 5 s under two test runs at once, and three shims starting
// together once missed 10 s). Nothing else these runs judge depends on it.
func runInRepo(t *testing.T, rec string, args ...string) (int, string, *reports.Record) {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), hang.Guard(t, 2*time.Minute))
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append(args, "--timeout", startWait, "--json", rec)...)
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("conform %v did not finish\n%s", args, out)
	}
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	assertNoChildren(t)
	return code, string(out), readRecord(t, rec)
}

// TestMinimalShimExample runs the minimal shim exactly as the README's
// walkthrough does and checks what the walkthrough tells a reader to
// expect: the 18 readFrames cases pass and nothing fails; the wire profile
// it declares is incomplete, so the run exits 1; --allow-unimplemented
// accepts that (exit 0, still incomplete); --case 'wire/1.3/*' narrows the
// run to 9 cases that all pass (exit 0, partly judged).
func TestMinimalShimExample(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not found: the minimal shim is not tested")
	}
	const sut = "exec:python3 examples/minimal/shim.py"
	dependOn(t, filepath.Join("..", "..", "examples", "minimal", "shim.py"))
	t.Run("wire", func(t *testing.T) {
		t.Parallel()
		code, out, rec := runInRepo(t, filepath.Join(t.TempDir(), "rec.json"), "run", "--sut", sut, "--profile", "wire")
		if code != 1 {
			t.Fatalf("exit %d, want 1 (incomplete)\n%s", code, out)
		}
		checkMinimalShim(t, rec, out)
		if v := rec.Summary.ByProfile[0]; v.Status != reports.ProfileIncomplete || v.Accepted != "" || len(rec.Incomplete()) != 1 {
			t.Errorf("wire: %+v, want incomplete and not accepted", v)
		}
		if !strings.Contains(out, "verdict: incomplete") {
			t.Errorf("the text output does not give the verdict incomplete:\n%s", out)
		}
	})
	t.Run("allow-unimplemented", func(t *testing.T) {
		t.Parallel()
		code, out, rec := runInRepo(t, filepath.Join(t.TempDir(), "rec.json"), "run", "--sut", sut, "--profile", "wire", "--allow-unimplemented")
		if code != 0 {
			t.Fatalf("exit %d, want 0\n%s", code, out)
		}
		checkMinimalShim(t, rec, out)
		if v := rec.Summary.ByProfile[0]; v.Status != reports.ProfileIncomplete || v.Accepted != reports.AcceptedByFlag {
			t.Errorf("wire: %+v, want incomplete, accepted by the flag", v)
		}
	})
	t.Run("case", func(t *testing.T) {
		t.Parallel()
		code, out, rec := runInRepo(t, filepath.Join(t.TempDir(), "rec.json"), "run", "--sut", sut, "--case", "wire/1.3/*")
		if code != 0 {
			t.Fatalf("exit %d, want 0\n%s", code, out)
		}
		if rec.Summary.Total != 9 || count(rec, reports.Pass) != 9 {
			t.Errorf("%d cases, %d pass: want 9 and 9\n%s", rec.Summary.Total, count(rec, reports.Pass), out)
		}
		if v := rec.Summary.ByProfile[0]; v.Status != reports.ProfileConformant || !v.PartialSelection() {
			t.Errorf("wire: %+v, want conformant on a partial selection", v)
		}
	})
}

// checkMinimalShim checks a run of the whole wire profile against the
// minimal shim: exactly the readFrames cases pass, the rest are skipped as
// unimplemented, nothing fails.
func checkMinimalShim(t *testing.T, rec *reports.Record, out string) {
	t.Helper()
	var passed []string
	for _, c := range rec.Cases {
		switch c.Outcome {
		case reports.Pass:
			passed = append(passed, c.ID)
		case reports.Skip:
			if !slices.Contains(rec.Unimplemented, c.ID) {
				t.Errorf("%s skipped, not as unimplemented: %s", c.ID, c.Message)
			}
		default:
			t.Errorf("%s: %s %s", c.ID, c.Outcome, c.Message)
		}
	}
	if !slices.Equal(passed, minimalShimPasses) {
		t.Errorf("passing cases %q\nwant %q\n%s", passed, minimalShimPasses, out)
	}
	// Every other case of the profile is skipped as unimplemented; the
	// profile's MUST counts follow from the record's cases, so that a case
	// added to the wire suite does not change what this test says.
	if n := count(rec, reports.Skip); n != len(rec.Cases)-len(passed) {
		t.Errorf("%d cases skipped, want every case but the %d that pass", n, len(passed))
	}
	must, mustPassed := 0, 0
	for _, c := range rec.Cases {
		if c.Level == reports.MUST {
			must++
			if c.Outcome == reports.Pass {
				mustPassed++
			}
		}
	}
	if len(rec.Summary.ByProfile) != 1 {
		t.Fatalf("profile verdicts %+v: want wire alone", rec.Summary.ByProfile)
	}
	if v := rec.Summary.ByProfile[0]; v.Profile != "wire" || v.Must != must || v.MustPassed != mustPassed || v.MustPassed != 16 || v.MustUnimplemented != must-mustPassed {
		t.Errorf("wire: %+v, want 16 of %d MUST cases passed, %d unimplemented", v, must, must-mustPassed)
	}
}

// TestMinimalShimInREADME: the shim the README's walkthrough quotes, after
// the line <!-- examples/minimal/shim.py -->, is the file the tests run.
func TestMinimalShimInREADME(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	shim, err := os.ReadFile(filepath.Join("..", "..", "examples", "minimal", "shim.py"))
	if err != nil {
		t.Fatal(err)
	}
	_, quoted, ok := strings.Cut(string(readme), "<!-- examples/minimal/shim.py -->\n```python\n")
	if !ok {
		t.Fatal("README.md does not quote the minimal shim after <!-- examples/minimal/shim.py -->")
	}
	quoted, _, ok = strings.Cut(quoted, "\n```\n")
	if !ok || quoted+"\n" != string(shim) {
		t.Errorf("the shim README.md quotes is not examples/minimal/shim.py: update the quote")
	}
}
