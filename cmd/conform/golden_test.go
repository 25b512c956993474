package main

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	conformpb "github.com/conform-suite/conform/proto/conform/v1"
)

var update = flag.Bool("update", false, "rewrite the golden files of the text output (testdata/*.golden)")

// masks make a run's text output deterministic: wall times and loopback
// ports vary.
var masks = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`\d+\.\d+s wall time`), "X.XXs wall time"},
	// The timing line's figures, and so its order of suites, vary; its
	// form is TestTimingLine's.
	{regexp.MustCompile(`(?m)^time: .*$`), "time: …"},
	{regexp.MustCompile(`127\.0\.0\.1:\d+`), "127.0.0.1:PORT"},
}

// golden compares got, masked, with testdata/name.golden, or rewrites the
// file with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	for _, m := range masks {
		got = m.re.ReplaceAllString(got, m.with)
	}
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./cmd/conform -run Golden -update writes it)", err)
	}
	if got != string(want) {
		t.Errorf("the text output differs from %s (go test ./cmd/conform -run Golden -update rewrites it after review)\ngot:\n%s\nwant:\n%s", path, got, want)
	}
}

// TestGoldenFailingMutant: the text output for a mutant failing two wire
// cases: the failures in full, the rest counted, the verdicts, the recap.
func TestGoldenFailingMutant(t *testing.T) {
	code, out, _ := runMain(t, "run", "--sut", "builtin:mutant/truncated-tail-delivered", "--profile", "wire")
	if code != 1 {
		t.Errorf("exit %d", code)
	}
	golden(t, "mutant", out)
}

// TestGoldenUnstartable: a SUT that exits before Hello (once it has read
// the opening request, so that the way it ends is always the same) is
// reported once,
// with its exit status and standard error, and the cases not run counted.
func TestGoldenUnstartable(t *testing.T) {
	code, out, _ := runMain(t, "run", "--sut", "exec:sh -c 'head -c 4 >/dev/null; echo cannot open /dev/widget >&2; exit 7'", "--profile", "wire")
	if code != 3 {
		t.Errorf("exit %d", code)
	}
	golden(t, "unstartable", out)
}

// hangingSUT says Hello, then never answers.
type hangingSUT struct{}

func (hangingSUT) Hello() *conformpb.Hello {
	return &conformpb.Hello{Implementation: "hangs", Profiles: []string{"wire"}}
}
func (hangingSUT) Handle(ctx context.Context, _ *conformpb.Request) *conformpb.Response {
	<-ctx.Done()
	return &conformpb.Response{Result: &conformpb.Response_Error{Error: &conformpb.Error{Message: "stopped"}}}
}

// TestGoldenLost: a SUT that stops answering is presumed lost after three
// timeouts and reported once, the cases not run counted. The SUT is served
// in process, so that reconnecting to it never costs what a loaded machine
// may charge for starting a process.
func TestGoldenLost(t *testing.T) {
	t.Parallel()
	spec := serveTCP(t, hangingSUT{})
	code, out, _ := runMain(t, "run", "--sut", spec, "--profile", "wire", "--timeout", "500ms")
	if code != 1 {
		t.Errorf("exit %d", code)
	}
	if n := strings.Count(out, "\n"); n > 40 {
		t.Errorf("%d lines for a lost SUT", n)
	}
	golden(t, "lost", out)
}
