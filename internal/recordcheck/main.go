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
	"bytes"
	"fmt"
	"os"

	"github.com/conform-suite/conform/reports"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

func main() {
	if err := check(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func check() error {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(reports.Schema))
	if err != nil {
		return fmt.Errorf("reading record.schema.json: %w", err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(reports.SchemaID, doc); err != nil {
		return fmt.Errorf("reading record.schema.json: %w", err)
	}
	s, err := c.Compile(reports.SchemaID)
	if err != nil {
		return fmt.Errorf("compiling record.schema.json: %w", err)
	}
	v, err := jsonschema.UnmarshalJSON(os.Stdin)
	if err != nil {
		return fmt.Errorf("the record is not JSON: %w", err)
	}
	if err := s.Validate(v); err != nil {
		return fmt.Errorf("the record does not match record.schema.json: %w", err)
	}
	return nil
}
