package meaning

import (
	"os"
	"testing"

	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// reachable returns every field of every message reachable from the roots.
func reachable(roots ...protoreflect.MessageDescriptor) map[protoreflect.FullName]protoreflect.FieldDescriptor {
	out := map[protoreflect.FullName]protoreflect.FieldDescriptor{}
	seen := map[protoreflect.FullName]bool{}
	var walk func(md protoreflect.MessageDescriptor)
	walk = func(md protoreflect.MessageDescriptor) {
		if seen[md.FullName()] {
			return
		}
		seen[md.FullName()] = true
		fs := md.Fields()
		for i := 0; i < fs.Len(); i++ {
			fd := fs.Get(i)
			out[fd.FullName()] = fd
			if fd.Message() != nil {
				walk(fd.Message())
			}
		}
	}
	for _, r := range roots {
		walk(r)
	}
	return out
}

func answerFields() map[protoreflect.FullName]protoreflect.FieldDescriptor {
	return reachable((&conformpb.Response{}).ProtoReflect().Descriptor(), (&conformpb.Hello{}).ProtoReflect().Descriptor())
}

// TestDeclarationComplete: every field of a conform.v1 answer has exactly
// one declaration, and every declaration names such a field.
func TestDeclarationComplete(t *testing.T) {
	fields := answerFields()
	for name := range fields {
		if _, ok := Of(name); !ok {
			t.Errorf("%s: no declaration (add one to table.go: judged at a level, recorded, or judged when a condition holds)", name)
		}
	}
	for _, f := range Fields() {
		if _, ok := fields[f.Name]; !ok {
			t.Errorf("%s: declared, but no conform.v1 answer has such a field", f.Name)
		}
	}
	if len(fields) != len(table) {
		t.Errorf("%d fields, %d declarations", len(fields), len(table))
	}
	t.Logf("%d fields declared", len(fields))
}

// TestDeclarationsWellFormed: each declaration says what it needs to: a
// judged field its level and source, a recorded one why; a recorded field
// has no condition or form; Strict goes with a form.
func TestDeclarationsWellFormed(t *testing.T) {
	for _, f := range Fields() {
		switch f.Kind {
		case Judged:
			if f.Level != MUST && f.Level != SHOULD {
				t.Errorf("%s: judged at level %q", f.Name, f.Level)
			}
		case Recorded:
			if f.When != nil || f.Form != nil || f.Level != "" {
				t.Errorf("%s: recorded, with a level, condition or form", f.Name)
			}
		default:
			t.Errorf("%s: kind %v", f.Name, f.Kind)
		}
		if f.Source == "" || f.Doc == "" {
			t.Errorf("%s: no source or doc", f.Name)
		}
		if f.When != nil && (f.When.Doc == "" || f.When.Holds == nil) {
			t.Errorf("%s: a condition without its doc or predicate", f.Name)
		}
		if f.Form != nil && f.Form.Doc == "" {
			t.Errorf("%s: a form without its doc", f.Name)
		}
		if f.Strict != "" && f.Form == nil {
			t.Errorf("%s: Strict without a form", f.Name)
		}
	}
}

// TestFieldsDocCurrent: docs/fields.md is what the declaration generates.
func TestFieldsDocCurrent(t *testing.T) {
	got, err := os.ReadFile("../../../../docs/fields.md")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != Markdown() {
		t.Error("docs/fields.md is stale: run go generate ./proto/conform/v1/meaning")
	}
}
