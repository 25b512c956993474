package campaign

import (
	"github.com/conform-suite/conform/proto/conform/v1/meaning"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// canonicalPair returns copies of two answers to in in which everything a
// verdict may not rest on is made equal, by the one declaration of what
// every conform.v1 field means (package meaning, docs/fields.md): recorded
// fields (worded reasons, identifiers the SUT chooses, what the documents
// leave open) and fields whose condition fails for this input or answer are
// cleared on both sides, and judged fields are rewritten to their form
// (canonical JSON re-rendered, encodings re-marshalled, a NaN as NaN, a
// sender's clock masked). What still differs is what the documents fix, at
// MUST or SHOULD, so a finding is never a difference the cases would not
// judge. A field that does not parse is left as it is, so a SUT's
// unparsable answer still differs. opts carry what the SUT declared of
// itself (its TLV nesting bound).
func canonicalPair(in, got, want proto.Message, opts meaning.Options) (proto.Message, proto.Message) {
	w, g := meaning.Canonical(in, want, got, opts)
	return g, w
}

// wordedIn returns the fields set in m that say why in the implementation's
// own words: recorded string fields. They are set after Range, which leaves
// changes made while it runs unspecified.
func wordedIn(m protoreflect.Message) []protoreflect.FieldDescriptor {
	var set []protoreflect.FieldDescriptor
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if d, ok := meaning.Of(fd.FullName()); ok && d.Kind == meaning.Recorded && fd.Kind() == protoreflect.StringKind && !fd.IsList() {
			set = append(set, fd)
		}
		return true
	})
	return set
}

// eachMessage calls f with m and with every message nested in m, parents
// before their children.
func eachMessage(m protoreflect.Message, f func(protoreflect.Message)) {
	f(m)
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsList() && fd.Kind() == protoreflect.MessageKind:
			for i := range v.List().Len() {
				eachMessage(v.List().Get(i).Message(), f)
			}
		case !fd.IsList() && !fd.IsMap() && fd.Kind() == protoreflect.MessageKind:
			eachMessage(v.Message(), f)
		}
		return true
	})
}
