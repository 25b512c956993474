// Command recordcheck validates a conform record, read on standard input,
// against the published JSON Schema (record.schema.json), and exits 1 with
// the reason when it does not match.
//
// It is the cmd/conform tests' schema check, kept out of their test binary
// on purpose. That binary is also every conform process those tests start,
// hundreds of them, and a JSON Schema compiler compiles the meta-schemas of
// five drafts when its package initialises: 12 ms of CPU in each process,
// whether it validates anything or not.
package main

import (
	"fmt"
	"io"
	"os"

	"github.com/conform-suite/conform/internal/schemacheck"
	"github.com/conform-suite/conform/reports"
)

func main() {
	if err := check(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func check() error {
	s, err := schemacheck.Compile(reports.SchemaID, reports.Schema)
	if err != nil {
		return err
	}
	record, err := io.ReadAll(os.Stdin)
	if err != nil {
		return fmt.Errorf("reading the record: %w", err)
	}
	if err := s.Validate(record); err != nil {
		return fmt.Errorf("the record does not match record.schema.json: %w", err)
	}
	return nil
}
