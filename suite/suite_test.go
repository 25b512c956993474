package suite

import (
	"strings"
	"testing"

	"github.com/conform-suite/conform/campaign/gen"
	"github.com/conform-suite/conform/sut/mutant"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/known/structpb"
)

// TestRegistryTargets: a registry refuses fuzz targets that two suites
// declare, that a suite declares twice, that are named for another suite,
// or whose declaration does not resolve; it takes the rest.
func TestRegistryTargets(t *testing.T) {
	mk := func(name string, targets ...gen.Target) *Suite {
		return &Suite{Name: name, Profiles: []Profile{{Name: name}}, Load: func() (*Catalogue, error) { return &Catalogue{}, nil },
			Mutants: func() []mutant.Mutant { return nil }, Targets: targets}
	}
	readFrames := func(name string) gen.Target {
		return gen.Target{Name: name, Doc: "frames", Op: []protoreflect.Name{"read_frames"}}
	}
	ext := gen.Target{Name: "b.words", Doc: "words", Extension: &structpb.ListValue{}, Result: &structpb.ListValue{}}
	for _, tc := range []struct {
		name   string
		suites []*Suite
		err    string
	}{
		{"distinct targets", []*Suite{mk("a", readFrames("a.frames")), mk("b", ext)}, ""},
		{"declared twice", []*Suite{mk("a", readFrames("a.frames"), readFrames("a.frames"))}, "fuzz target a.frames is in suites a and a"},
		{"named for another suite", []*Suite{mk("a"), mk("b", readFrames("a.frames"))}, "fuzz target a.frames is not named b.<what>"},
		{"no such op", []*Suite{mk("a", gen.Target{Name: "a.x", Doc: "x", Op: []protoreflect.Name{"no_such_op"}})}, "has no message field no_such_op"},
		{"no doc", []*Suite{mk("a", gen.Target{Name: "a.x", Op: []protoreflect.Name{"read_frames"}})}, "no Doc"},
		{"a name that is not <suite>.<what>", []*Suite{mk("a", readFrames("a.Frames"))}, "a name is <suite>.<what>"},
		{"an op with several lists", []*Suite{mk("a", gen.Target{Name: "a.p", Doc: "p", Extension: &descriptorpb.FileDescriptorProto{}, Result: &descriptorpb.FileDescriptorProto{}})}, "several repeated fields"},
		{"a live kind the engine has not", []*Suite{mk("a", gen.Target{Name: "a.l", Doc: "l", Op: []protoreflect.Name{"read_frames"}, Live: "carrier-pigeon"})}, "no live evaluator"},
		{"a live kind on another op", []*Suite{mk("a", gen.Target{Name: "a.l", Doc: "l", Op: []protoreflect.Name{"decode"}, Live: gen.LiveSubscriber})}, "op is conform.v1.ReadFrames"},
	} {
		_, err := NewRegistry(tc.suites...)
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s: %v, want an error saying %q", tc.name, err, tc.err)
		}
	}
}
