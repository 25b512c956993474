package schemacheck

import (
	"strings"
	"testing"
)

// TestValidate: a document that matches passes, and one that breaks the
// schema or is not JSON is refused with the reason.
func TestValidate(t *testing.T) {
	const id = "https://example.com/t.schema.json"
	s, err := Compile(id, []byte(`{"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": "`+id+`",
		"type": "object", "required": ["n"], "properties": {"n": {"type": "integer"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		doc, refused string // refused: a word of the reason, or "" for a match
	}{
		{`{"n": 1}`, ""},
		{`{"n": "one"}`, "integer"},
		{`{}`, "n"},
		{`{"n": `, "not JSON"},
	} {
		err := s.Validate([]byte(tt.doc))
		switch {
		case tt.refused == "" && err != nil:
			t.Errorf("%s: %v, want a match", tt.doc, err)
		case tt.refused != "" && (err == nil || !strings.Contains(err.Error(), tt.refused)):
			t.Errorf("%s: %v, want refused for %q", tt.doc, err, tt.refused)
		}
	}
	if _, err := Compile(id, []byte(`{"type": 7}`)); err == nil {
		t.Error("a schema whose type is 7 compiled")
	}
}
