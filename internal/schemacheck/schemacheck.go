// Package schemacheck validates JSON documents against a JSON Schema. It is
// the one place the project's tests compile record.schema.json: the reports
// package's own test and the cmd/conform tests' recordcheck program.
//
// It takes the schema as bytes rather than importing package reports, so
// that reports' internal tests can use it without an import cycle.
package schemacheck

import (
	"bytes"
	"fmt"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// A Schema is a compiled JSON Schema.
type Schema struct{ s *jsonschema.Schema }

// Compile compiles doc, the schema whose $id is id.
func Compile(id string, doc []byte) (*Schema, error) {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", id, err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(id, v); err != nil {
		return nil, fmt.Errorf("reading %s: %w", id, err)
	}
	s, err := c.Compile(id)
	if err != nil {
		return nil, fmt.Errorf("compiling %s: %w", id, err)
	}
	return &Schema{s}, nil
}

// Validate reports why js, a JSON document, does not match the schema, or
// nil when it does.
func (s *Schema) Validate(js []byte) error {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(js))
	if err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	return s.s.Validate(v)
}
