package cases_test

import (
	"context"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/conform-suite/conform/cases"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/proto/conform/v1/meaning"
	"github.com/conform-suite/conform/reports"
	"github.com/conform-suite/conform/runner"
	"github.com/conform-suite/conform/suites"
	"github.com/conform-suite/conform/sut"
	"github.com/conform-suite/conform/sut/builtin"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// codecSuites are the suites whose cases talk to the SUT through codec ops
// alone: no socket, no broker, no process.
var codecSuites = []string{"wire", "streams", "tlv", "graph", "doppler"}

// codecCases returns the catalogue's codec cases.
func codecCases(t testing.TB) []cases.Case {
	t.Helper()
	cat, err := suites.Default().Catalogue()
	if err != nil {
		t.Fatal(err)
	}
	return cat.Select(func(c cases.Case) bool {
		return c.Profile == c.Suite() && slices.Contains(codecSuites, c.Suite())
	})
}

// varying answers as the SUT it wraps does, with every field the
// declaration leaves open given another value (meaning.Vary), each output
// varied as an answer to its own input entry.
type varying struct {
	sut.Client
	mu sync.Mutex
	r  *rand.Rand
}

func (v *varying) Do(ctx context.Context, req *conformpb.Request) (*conformpb.Response, error) {
	resp, err := v.Client.Do(ctx, req)
	if err != nil || resp == nil {
		return resp, err
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	ins, outs := entries(req.ProtoReflect()), outputs(resp.ProtoReflect())
	if outs == nil {
		meaning.Vary(nil, resp, v.r)
		return resp, nil
	}
	for i := range outs.Len() {
		var in protoreflect.ProtoMessage
		if ins != nil && ins.Len() == outs.Len() {
			in = ins.Get(i).Message().Interface()
		}
		meaning.Vary(in, outs.Get(i).Message().Interface(), v.r)
	}
	return resp, nil
}

// entries returns the list of input entries a codec request carries: the
// repeated message field of its op, found by descending the set oneof
// fields (Request.tlv → TlvOp.decode → TlvDecode.inputs).
func entries(m protoreflect.Message) protoreflect.List { return repeatedIn(m, "") }

// outputs returns the list of outputs a codec response carries.
func outputs(m protoreflect.Message) protoreflect.List { return repeatedIn(m, "outputs") }

func repeatedIn(m protoreflect.Message, name protoreflect.Name) protoreflect.List {
	var found protoreflect.List
	var next protoreflect.Message
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsList() && fd.Kind() == protoreflect.MessageKind && (name == "" || fd.Name() == name):
			found = v.List()
			return false
		case !fd.IsList() && !fd.IsMap() && fd.Kind() == protoreflect.MessageKind && fd.ContainingOneof() != nil:
			next = v.Message()
		}
		return true
	})
	if found != nil || next == nil {
		return found
	}
	return repeatedIn(next, name)
}

// TestCasesJudgeNothingOpen is the proof that the cases judge only what the
// declaration of meaning judges: every codec case passes against the
// reference wrapped so that every field the declaration leaves open (a
// recorded field, one undefined for its input, a judged field within its
// form) takes another value on every answer.
func TestCasesJudgeNothingOpen(t *testing.T) {
	cs := codecCases(t)
	for seed := range uint64(2) {
		client := &varying{Client: builtin.New("builtin:reference", suites.Default().Reference()), r: rand.New(rand.NewPCG(seed, 0x0A11))}
		rec := runner.Run(context.Background(), runner.Config{Spec: "varying reference", Client: client, Cases: cs, Seed: int64(seed) + 1})
		for _, c := range rec.Cases {
			if c.Outcome == reports.Pass || c.Outcome == reports.Info {
				continue
			}
			t.Errorf("seed %d: %s is %s: %s", seed, c.ID, c.Outcome, c.Message)
			for _, e := range c.Evidence {
				t.Logf("  %s\n  input: %s\n  expected: %s\n  got: %s\n  diff: %s", e.Message, clip(e.Input), clip(e.Expected), clip(e.Got), clip(e.Diff))
			}
		}
	}
}

func clip(s string) string { return reports.Clip(s, 600) }
