package main

import (
	"bytes"
	"fmt"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// recordcheck builds internal/recordcheck, the schema check, once: next to
// bin, in the directory TestMain removes.
var recordcheck = sync.OnceValues(func() (string, error) {
	out := filepath.Join(filepath.Dir(bin), "recordcheck")
	build := exec.Command("go", "build", "-o", out, "github.com/conform-suite/conform/internal/recordcheck")
	if msg, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building internal/recordcheck: %v\n%s", err, msg)
	}
	return out, nil
})

// checkAgainstSchema validates a record against the published JSON Schema,
// so the schema and the Go types cannot drift apart unnoticed. It runs the
// validator as a program of its own (see internal/recordcheck for why).
func checkAgainstSchema(t *testing.T, record []byte) {
	t.Helper()
	check, err := recordcheck()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(check)
	cmd.Stdin = bytes.NewReader(record)
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("%s (%v)", bytes.TrimSpace(msg), err)
	}
}
