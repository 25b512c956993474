package main

import (
	"bytes"
	"sync"
	"testing"

	"github.com/conform-suite/conform/reports"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

var compiled = sync.OnceValues(func() (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(reports.Schema))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(reports.SchemaID, doc); err != nil {
		return nil, err
	}
	return c.Compile(reports.SchemaID)
})

// checkAgainstSchema validates a record against the published JSON Schema,
// so the schema and the Go types cannot drift apart unnoticed.
func checkAgainstSchema(t *testing.T, record []byte) {
	t.Helper()
	s, err := compiled()
	if err != nil {
		t.Fatalf("compiling record.schema.json: %v", err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(record))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(v); err != nil {
		t.Errorf("the record does not match record.schema.json: %v", err)
	}
}
