// Package toysuite is a suite of one requirement, written the way any suite
// is — its own cases, reference handler, mutant and fuzz target, in its own
// package — so that a test can prove a suite joins conform with one line in
// a registry (cmd/conform's TestToySuite). Its document is invented: "a toy
// implementation answers each word with the same word in upper case".
//
// Its op is not conform.v1's: a list of words (google.protobuf.ListValue
// holding strings) packed in Request.extension, answered with the list of
// answers packed in Response.extension. It is batched as conform.v1's codec
// ops are, one answer per word, so that the fuzz engine batches its inputs
// the same way.
package toysuite

import (
	"context"
	"strconv"
	"strings"

	"github.com/conform-suite/conform/campaign/gen"
	"github.com/conform-suite/conform/cases"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/suite"
	"github.com/conform-suite/conform/sut/impl"
	"github.com/conform-suite/conform/sut/mutant"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/structpb"
)

// Profile is the toy suite's one profile.
const Profile = "toy"

// Suite returns the toy suite's descriptor.
func Suite() *suite.Suite {
	return &suite.Suite{
		Name:      "toy",
		Title:     "words answered in upper case",
		Documents: []string{"toy-spec"},
		Profiles:  []suite.Profile{{Name: Profile, Summary: "answers each word with the same word in upper case"}},
		Load: func() (*suite.Catalogue, error) {
			k := cases.NewKit(Profile)
			return &suite.Catalogue{Cases: []cases.Case{
				k.Must(func() cases.Case {
					return cases.Case{
						ID:    "toy/1/shouts",
						Title: "Each word is answered with the same word in upper case",
						Spec:  "toy-spec §1",
						Run: func(t *cases.T) {
							words := []string{"ranvier", "Doppler", "TLV"}
							for i, got := range shoutOn(t, words) {
								if want := strings.ToUpper(words[i]); got != want {
									t.Failf("%q answered %q, want %q", words[i], got, want)
								}
							}
						},
					}
				}),
			}}, nil
		},
		// The toy op travels as an extension: conform.v1 does not define it.
		Ops: []impl.Op{impl.Handler(shout)},
		Mutants: func() []mutant.Mutant {
			return []mutant.Mutant{mutant.New("toy-whispers", "toy", "", "answers each word unchanged", func(im *impl.Impl) {
				op := impl.Handler(whisper)
				im.Ops[op.Message] = op.Handle
			})}
		},
		Targets: []gen.Target{{
			Name:      "toy.shout",
			Doc:       "words answered in upper case (toy-spec §1)",
			Extension: &structpb.ListValue{}, Result: &structpb.ListValue{},
			Generate: generate,
			Mend:     mend,
		}},
	}
}

// shoutOn sends words to the SUT as the toy op and returns its answers, one
// per word.
func shoutOn(t *cases.T, words []string) []string {
	op, err := anypb.New(list(words...))
	if err != nil {
		t.Harnessf("packing the toy op: %v", err)
	}
	resp := t.Do(&conformpb.Request{Op: &conformpb.Request_Extension{Extension: op}})
	var got structpb.ListValue
	if resp.GetExtension() == nil || resp.GetExtension().UnmarshalTo(&got) != nil {
		t.Protocolf("the toy op was answered with %T", resp.GetResult())
	}
	if len(got.GetValues()) != len(words) {
		t.Protocolf("%d words answered with %d answers", len(words), len(got.GetValues()))
	}
	out := make([]string, len(words))
	for i, v := range got.GetValues() {
		out[i] = v.GetStringValue()
	}
	return out
}

func list(words ...string) *structpb.ListValue {
	l := &structpb.ListValue{}
	for _, w := range words {
		l.Values = append(l.Values, structpb.NewStringValue(w))
	}
	return l
}

// shout is the reference's handler of the toy op. A value that is no word
// (a number, say) is answered unchanged: toy-spec says nothing of it, and
// the fuzz target mends every value into a word before it sends one.
func shout(_ context.Context, _ *impl.Impl, l *structpb.ListValue) (*structpb.ListValue, error) {
	out := &structpb.ListValue{}
	for _, v := range l.GetValues() {
		if s, ok := v.GetKind().(*structpb.Value_StringValue); ok {
			v = structpb.NewStringValue(strings.ToUpper(s.StringValue))
		}
		out.Values = append(out.Values, v)
	}
	return out, nil
}

// whisper is the mutant's: the one named bug.
func whisper(_ context.Context, _ *impl.Impl, l *structpb.ListValue) (*structpb.ListValue, error) {
	return proto.Clone(l).(*structpb.ListValue), nil
}

// vocabulary is what the fuzz target's words are made of: words in either
// case, empty, not ASCII, not letters.
var vocabulary = []string{"ranvier", "Doppler", "TLV", "", "a", "straße", "é", "42", "mixed Case", "ALREADY"}

// generate builds an input of toy.shout: one word, from the vocabulary or
// two of its words joined.
func generate(g *gen.G) proto.Message {
	w := g.Pick(vocabulary)
	if g.Chance(0.3) {
		w += g.Pick(vocabulary)
	}
	return list(w)
}

// mend makes every value of a mutated input a word: toy-spec defines the
// answer to words only.
func mend(in proto.Message) {
	l, ok := in.(*structpb.ListValue)
	if !ok {
		return
	}
	for i, v := range l.Values {
		switch k := v.GetKind().(type) {
		case *structpb.Value_StringValue:
		case *structpb.Value_NumberValue:
			l.Values[i] = structpb.NewStringValue(strconv.FormatFloat(k.NumberValue, 'g', -1, 64))
		case *structpb.Value_BoolValue:
			l.Values[i] = structpb.NewStringValue(strconv.FormatBool(k.BoolValue))
		default:
			l.Values[i] = structpb.NewStringValue("")
		}
	}
}
