// Command mkdoc writes docs/requirements.md from the requirements index and
// the case catalogue. go generate ./requirements runs it; a test of this
// package fails when the checked-in file is stale.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/conform-suite/conform/requirements"
	"github.com/conform-suite/conform/suites"
)

func main() {
	out := flag.String("o", "", "the file to write")
	flag.Parse()
	if *out == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: mkdoc -o FILE")
		os.Exit(2)
	}
	b, err := render()
	if err != nil {
		fmt.Fprintln(os.Stderr, "mkdoc:", err)
		os.Exit(1)
	}
	if err := writeFile(*out, b); err != nil {
		fmt.Fprintln(os.Stderr, "mkdoc:", err)
		os.Exit(1)
	}
}

// render returns docs/requirements.md for the shipped index and catalogue.
func render() ([]byte, error) {
	cat, err := suites.Default().Catalogue()
	if err != nil {
		return nil, err
	}
	_, cov, err := requirements.Measure(cat.Cases, func(id string) bool { _, ok := cat.Vectors[id]; return ok })
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := requirements.WriteMarkdown(&b, cov); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// writeFile replaces name with b atomically, so that an interrupted
// generation leaves the old file whole.
func writeFile(name string, b []byte) error {
	f, err := os.CreateTemp(filepath.Dir(name), ".requirements-*.md")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), name)
}
