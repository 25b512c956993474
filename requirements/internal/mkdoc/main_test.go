package main

import (
	"bytes"
	"os"
	"testing"
)

// TestDocIsCurrent fails when docs/requirements.md is not what the index and
// the catalogue generate: regenerate it with go generate ./requirements.
func TestDocIsCurrent(t *testing.T) {
	want, err := render()
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("../../../docs/requirements.md")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("docs/requirements.md is stale: run go generate ./requirements")
	}
}
