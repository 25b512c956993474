package meaning

import (
	"strings"

	"google.golang.org/protobuf/reflect/protoreflect"
)

// The table is written with these constructors, one line of Go per field,
// grouped by the file of conform.v1 that declares the message.

type option func(*Field)

func fullName(name string) protoreflect.FullName {
	if strings.HasPrefix(name, "google.") {
		return protoreflect.FullName(name)
	}
	return protoreflect.FullName("conform.v1." + name)
}

func judged(level Level, name, source, doc string, opts ...option) Field {
	f := Field{Name: fullName(name), Kind: Judged, Level: level, Source: source, Doc: doc}
	for _, o := range opts {
		o(&f)
	}
	return f
}

// must declares a field judged at MUST.
func must(name, source, doc string, opts ...option) Field {
	return judged(MUST, name, source, doc, opts...)
}

// should declares a field judged at SHOULD.
func should(name, source, doc string, opts ...option) Field {
	return judged(SHOULD, name, source, doc, opts...)
}

// protocol declares a field conform.v1 itself fixes: the shape of an
// answer (one output per input, the result of the op asked), judged at
// MUST.
func protocol(name, doc string, opts ...option) Field {
	return judged(MUST, name, "conform.v1", doc, opts...)
}

// recorded declares a field that is kept in the record and never compared.
func recorded(name, source, doc string) Field {
	return Field{Name: fullName(name), Kind: Recorded, Source: source, Doc: doc}
}

// worded declares a field that says why in the implementation's words.
func worded(name string) Field {
	return recorded(name, "conform.v1", "why, in the implementation's own words: recorded, never compared")
}

func when(c *Condition) option { return func(f *Field) { f.When = c } }
func form(x *Form) option      { return func(f *Field) { f.Form = x } }
func strict(l Level) option    { return func(f *Field) { f.Strict = l } }
