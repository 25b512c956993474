package meaning

import (
	"fmt"
	"sort"
	"strings"

	"google.golang.org/protobuf/reflect/protoreflect"
)

// Kind says whether a field may carry a verdict.
type Kind int

const (
	// Judged fields are fixed by the documents (or by conform.v1): a case
	// may fail on them and the oracle compares them, where their condition
	// holds.
	Judged Kind = iota + 1
	// Recorded fields are kept in the record and never compared: the
	// documents leave their value open, or they are worded free text.
	Recorded
)

func (k Kind) String() string {
	switch k {
	case Judged:
		return "judged"
	case Recorded:
		return "recorded"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Level is the RFC 2119 level at which a judged field may fail a case: the
// words reports and CI scripts use.
type Level string

const (
	MUST   Level = "MUST"
	SHOULD Level = "SHOULD"
)

// A Field is the declaration of one conform.v1 field.
type Field struct {
	// Name is the field's full protobuf name, such as
	// conform.v1.ReadOutput.buffered.
	Name protoreflect.FullName
	Kind Kind
	// Level is the level at which a judged field may fail a case.
	Level Level
	// Source names the sentence that fixes the field, or for a recorded
	// field the one that leaves it open: a document and section
	// ("ranvier-wire §1.3"), or conform.v1 for the protocol's own rules.
	Source string
	// Doc says what the field means, or why it is only recorded.
	Doc string
	// When, if set, is the condition under which a judged field means
	// something; elsewhere it is not compared.
	When *Condition
	// Form, if set, is how a judged field compares when its bytes are not
	// the right notion of equality.
	Form *Form
	// Strict, when set with Form, is the level at which the value is also
	// judged exactly, beyond the form (a TLV header's LL bit: a MUST that
	// the length be right, a SHOULD that the header be minimal).
	Strict Level
}

// A Condition says when a field means something.
type Condition struct {
	// Doc completes "defined …": "when end is WAITING or TRUNCATED".
	Doc string
	// Holds reports whether the field is defined where c stands.
	Holds func(c *Context) bool
}

// A Form is how two values of a field compare when their bytes are not the
// right notion of equality.
type Form struct {
	// Doc says how the field compares: "as canonical JSON of the input's
	// message type, re-rendered".
	Doc string
	// Apply rewrites the field in the two messages holding it (want and got,
	// copies the caller owns; either may be invalid where that side has no
	// such message) so that values a conforming SUT may give differently
	// become equal.
	Apply func(c *Context, want, got protoreflect.Message)
	// Vary, if set, rewrites the field in m, an answer to c's input, to a
	// value that differs and that Apply makes equal to the original: what a
	// conforming SUT other than the reference might answer. Tests use it to
	// prove the form holds.
	Vary func(c *Context, m protoreflect.Message, r Rand)
}

// Rand is the source of randomness Vary draws from.
type Rand interface {
	IntN(n int) int
	Uint64() uint64
}

var index map[protoreflect.FullName]*Field

func init() {
	index = make(map[protoreflect.FullName]*Field, len(table))
	for i := range table {
		f := &table[i]
		if _, dup := index[f.Name]; dup {
			panic(fmt.Sprintf("meaning: %s is declared twice", f.Name))
		}
		index[f.Name] = f
	}
}

// Of returns the declaration of the field named name, and false when
// nothing declares it.
func Of(name protoreflect.FullName) (Field, bool) {
	f, ok := index[name]
	if !ok {
		return Field{}, false
	}
	return *f, true
}

// Fields returns every declaration, sorted by name.
func Fields() []Field {
	out := make([]Field, len(table))
	copy(out, table)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Describe returns one line saying how a field is judged, as docs/fields.md
// prints it: "MUST (ranvier-wire §1.3)", "recorded", "MUST when end is
// TOO_LARGE", with its form.
func (f Field) Describe() string {
	var b strings.Builder
	switch f.Kind {
	case Recorded:
		b.WriteString("recorded")
	default:
		b.WriteString(string(f.Level))
		if f.When != nil {
			b.WriteString(" " + f.When.Doc)
		}
		if f.Form != nil {
			b.WriteString("; " + f.Form.Doc)
			if f.Strict != "" {
				b.WriteString(fmt.Sprintf(" (exactly: %s)", f.Strict))
			}
		}
	}
	return b.String()
}
