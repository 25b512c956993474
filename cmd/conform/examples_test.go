package main

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/conform-suite/conform/reports"
)

// TestPythonExampleOverExec runs every wire and streams case against the
// Python example binding (examples/python, standard library only, conform.v1
// in JSON over stdio) over the exec carrier, the way a binding author would.
func TestPythonExampleOverExec(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not found: the Python example binding is not tested")
	}
	shim := filepath.Join("..", "..", "examples", "python", "shim.py")
	spec := "exec:" + python + " " + shim
	rec := filepath.Join(t.TempDir(), "rec.json")
	r := conform(t, 2*time.Minute, nil, "run", "--sut", spec, "--profile", "wire,streams", "--json", rec)
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
