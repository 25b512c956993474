package main

import (
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/conform-suite/conform/reports"
)

// TestCIGate runs the CI flow a binding's pipeline uses: record the known
// failures as a baseline, then gate on it; every rendering is written.
func TestCIGate(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	spec := "builtin:mutant/truncated-tail-delivered"

	first := conform(t, time.Minute, nil, "run", "--sut", spec, "--profile", "wire", "--json", p("first.json"))
	if first.code != 1 {
		t.Fatalf("first run: exit %d", first.code)
	}
	bl := conform(t, time.Minute, nil, "baseline", p("first.json"))
	if bl.code != 0 || !strings.Contains(bl.stdout, "wire/1.3/truncated-tail-not-delivered") {
		t.Fatalf("conform baseline: exit %d\n%s", bl.code, bl.stdout)
	}
	if err := os.WriteFile(p("baseline.txt"), []byte(bl.stdout), 0o644); err != nil {
		t.Fatal(err)
	}

	// Only known failures: exit 0, and every rendering is there.
	gated := conform(t, time.Minute, nil, "run", "--sut", spec, "--profile", "wire", "--baseline", p("baseline.txt"),
		"--json", p("gated.json"), "--junit", p("gated.xml"), "--markdown", p("gated.md"), "--html", p("gated.html"))
	if gated.code != 0 {
		t.Fatalf("gated run: exit %d\n%s", gated.code, gated.stdout)
	}
	if gated.rec.Baseline == nil || len(gated.rec.Baseline.Known) == 0 || len(gated.rec.Baseline.New) != 0 {
		t.Fatalf("baseline result %+v", gated.rec.Baseline)
	}
	var suites struct {
		Suites []struct {
			Name     string `xml:"name,attr"`
			Tests    int    `xml:"tests,attr"`
			Failures int    `xml:"failures,attr"`
		} `xml:"testsuite"`
	}
	b, err := os.ReadFile(p("gated.xml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := xml.Unmarshal(b, &suites); err != nil || len(suites.Suites) == 0 || suites.Suites[0].Failures != 2 {
		t.Fatalf("JUnit: %v %+v", err, suites)
	}
	for _, f := range []string{"gated.md", "gated.html"} {
		if b, err := os.ReadFile(p(f)); err != nil || !strings.Contains(string(b), "wire/1.3/truncated-tail-not-delivered") {
			t.Errorf("%s: %v", f, err)
		}
	}

	// The reference passes what the baseline lists: unexpected passes are
	// reported, and fail the gate only under --strict-baseline.
	ref := conform(t, time.Minute, nil, "run", "--sut", "builtin:reference", "--profile", "wire", "--baseline", p("baseline.txt"), "--json", p("ref.json"))
	if ref.code != 0 || len(ref.rec.Baseline.UnexpectedPasses) != 2 {
		t.Fatalf("reference against the baseline: exit %d, %+v", ref.code, ref.rec.Baseline)
	}
	strict := conform(t, time.Minute, nil, "run", "--sut", "builtin:reference", "--profile", "wire", "--baseline", p("baseline.txt"), "--strict-baseline")
	if strict.code != 1 {
		t.Errorf("--strict-baseline with unexpected passes: exit %d, want 1", strict.code)
	}

	// A new failure is not excused by another case's entry.
	other := conform(t, time.Minute, nil, "run", "--sut", "builtin:mutant/no-ceiling", "--profile", "wire", "--baseline", p("baseline.txt"))
	if other.code != 1 {
		t.Errorf("new failures under a baseline: exit %d, want 1", other.code)
	}

	d := conform(t, time.Minute, nil, "diff", p("ref.json"), p("first.json"))
	if d.code != 1 || !strings.Contains(d.stdout, "pass → fail") {
		t.Errorf("conform diff: exit %d\n%s", d.code, d.stdout)
	}
	if bad := conform(t, time.Minute, nil, "run", "--sut", spec, "--baseline", p("missing.txt")); bad.code != 2 {
		t.Errorf("a missing baseline: exit %d, want 2", bad.code)
	}
}

// TestSummaryPrintedWhenWritingFails: a file that cannot be written after
// the run does not cost the run its summary; the exit code says it failed,
// and the other files are still written.
func TestSummaryPrintedWhenWritingFails(t *testing.T) {
	dir := t.TempDir()
	rec := &reports.Record{Schema: reports.SchemaID, SUT: reports.SUT{Spec: "./x", Carrier: "exec", Hello: []byte("null")}}
	rec.Summarize()
	var stdout, stderr strings.Builder
	code := report(rec, outputFiles{json: filepath.Join(dir, "gone", "r.json"), html: filepath.Join(dir, "r.html")}, false, &stdout, &stderr)
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	if !strings.Contains(stdout.String(), "./x: 0 cases") {
		t.Errorf("no summary:\n%s", stdout.String())
	}
	if !strings.Contains(stderr.String(), "r.json") {
		t.Errorf("the error is not named: %q", stderr.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "r.html")); err != nil {
		t.Errorf("the other rendering was not written: %v", err)
	}
}

// TestStrictBaselineNarrowed: an entry for cases a --profile or --case left
// out is not stale, so --strict-baseline passes; an entry matching nothing
// conform has is still stale.
func TestStrictBaselineNarrowed(t *testing.T) {
	dir := t.TempDir()
	bl := filepath.Join(dir, "baseline.txt")
	os.WriteFile(bl, []byte("streams/**  not yet\nwire/7.2/*  elsewhere\n"), 0o644)
	code, out, _ := runMain(t, "run", "--sut", "builtin:reference", "--case", "wire/1.2/*", "--baseline", bl, "--strict-baseline", "--json", filepath.Join(dir, "r.json"))
	if code != 0 {
		t.Errorf("entries outside the selection failed --strict-baseline: exit %d\n%s", code, out)
	}
	if res := readRecord(t, filepath.Join(dir, "r.json")).Baseline; res == nil || len(res.Stale) != 0 || len(res.OutsideSelection) != 2 {
		t.Errorf("baseline result %+v", res)
	}
	os.WriteFile(bl, []byte("streams/**  not yet\nwire/99/gone  retired long ago\n"), 0o644)
	if code, out, _ := runMain(t, "run", "--sut", "builtin:reference", "--case", "wire/1.2/*", "--baseline", bl, "--strict-baseline"); code != 1 || !strings.Contains(out, "STALE ENTRY      line 2: wire/99/gone") {
		t.Errorf("a stale entry under --strict-baseline: exit %d\n%s", code, out)
	}
}
