package main

import (
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestCIGate runs the CI flow a binding's pipeline uses: record the known
// failures as a baseline, then gate on it; every rendering is written.
func TestCIGate(t *testing.T) {
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
