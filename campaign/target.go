// Package campaign is conform's differential fuzzing engine: it generates
// and mutates inputs for the fuzz targets the registry's suites declare
// (gen.Target, in each suite's descriptor), sends them in batches to a
// system under test and to the reference, and turns every difference,
// crash, hang or protocol error into a finding that is deduplicated by
// signature, minimised against the SUT and written to disk atomically.
//
// The deterministic unit of work is a target, a campaign seed and a range of
// input indices: input i of a target is a pure function of the seed, the
// seed pool and i, so a local campaign, a resumed one and a worker on another
// rig all run exactly the same inputs for the same range.
package campaign

import (
	"fmt"
	"sort"

	"github.com/conform-suite/conform/campaign/gen"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/suite"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/known/anypb"
)

// A Target is one fuzz target as the engine runs it: a suite's declaration
// (gen.Target) with its op resolved in conform.v1.
//
// An input of a target is the op's message holding exactly one entry in its
// batched list (and whatever op-level fields the op has, such as a byte
// order): inputs that share their op-level fields are merged into one
// request.
type Target struct {
	// Name is <suite>.<what>, as the suite declares it.
	Name string
	// Suite is the name of the suite that declares the target.
	Suite string
	// Doc says what the target exercises, for conform fuzz --list.
	Doc string

	decl gen.Target
	op   gen.Op
	// path, opType and list are op's parts, named for the engine's use.
	path   []protoreflect.Name
	opType protoreflect.MessageType
	list   protoreflect.FieldDescriptor
	// seeds returns the byte strings the suite's targets start from.
	seeds func() ([]gen.Raw, error)
	// live, set on a live target (live.go), runs inputs over a real socket
	// or subject, each input one connection or one subscription, and
	// compares the two sides' reports.
	live *liveEvaluator
}

// Targets returns the fuzz targets reg's suites declare, sorted by name.
func Targets(reg *suite.Registry) []*Target {
	var out []*Target
	for _, s := range reg.Suites() {
		for _, d := range s.Targets {
			op, err := d.Resolve()
			if err != nil {
				// NewRegistry resolved every declaration: a registry cannot
				// hold one that does not resolve.
				panic(fmt.Sprintf("campaign: %v", err))
			}
			t := &Target{Name: d.Name, Suite: s.Name, Doc: d.Doc, decl: d, op: op,
				path: op.Path, opType: op.Type, list: op.List, seeds: s.FuzzSeeds}
			if d.Live != "" {
				ev, ok := liveEvaluatorOf(d.Live)
				if !ok {
					panic(fmt.Sprintf("campaign: fuzz target %s: no live evaluator %q, though gen.LiveOp knows it", d.Name, d.Live))
				}
				t.live = &ev
			}
			out = append(out, t)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Lookup returns the target named name among targets.
func Lookup(targets []*Target, name string) (*Target, bool) {
	for _, t := range targets {
		if t.Name == name {
			return t, true
		}
	}
	return nil, false
}

// Select resolves --target values among targets: names, suite names (which
// select the suite's targets), or "all".
func Select(targets []*Target, names []string) ([]*Target, error) {
	seen := map[string]bool{}
	var out []*Target
	for _, n := range names {
		matched := false
		for _, t := range targets {
			if n == "all" || n == t.Name || n == t.Suite {
				matched = true
				if !seen[t.Name] {
					seen[t.Name] = true
					out = append(out, t)
				}
			}
		}
		if !matched {
			return nil, fmt.Errorf("no fuzz target %q (conform fuzz --list prints them)", n)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no fuzz target selected (conform fuzz --list prints them)")
	}
	return out, nil
}

// New returns an empty input of the target's op type.
func (t *Target) New() proto.Message { return t.opType.New().Interface() }

// opName is the op's full message name, such as conform.v1.ReadFrames.
func (t *Target) opName() string { return string(t.opType.Descriptor().FullName()) }

// asBuilt reports whether the answers the target compares are built by
// conform itself (a live evaluator's decoding of what it read) rather than
// received from the SUT, so that the declaration of what a SUT's answer
// fields mean does not apply to them.
func (t *Target) asBuilt() bool { return t.live != nil && t.live.asBuilt }

// generate builds a fresh input: the target's structure-aware generator,
// most of the time, when it has one; else the generic one over the op's
// schema.
func (t *Target) generate(g *gen.G) proto.Message {
	if t.decl.Generate != nil && g.Chance(0.7) {
		return t.decl.Generate(g)
	}
	return g.Generate(t.op)
}

// clamp makes in, a generated or mutated input, one a campaign may send
// (gen.Clamp), then mends it as its suite says.
func (t *Target) clamp(in proto.Message) {
	gen.Clamp(in.ProtoReflect())
	if t.decl.Mend != nil {
		t.decl.Mend(in)
	}
}

// groupKey is what inputs must share to travel in one request: their
// op-level fields.
func (t *Target) groupKey(in proto.Message) string {
	m := in.ProtoReflect()
	if m.Descriptor().Fields().Len() == 1 {
		return ""
	}
	c := proto.Clone(in)
	c.ProtoReflect().Clear(t.list)
	b, _ := proto.MarshalOptions{Deterministic: true}.Marshal(c)
	return string(b)
}

// entries returns the elements of an input's batched list.
func (t *Target) entries(in proto.Message) protoreflect.List {
	return in.ProtoReflect().Get(t.list).List()
}

// entry returns the one entry of an input (a DecodeInput of a Decode op,
// say), the input its output answers; nil when it holds another number
// or its entries are not messages.
func (t *Target) entry(in proto.Message) proto.Message {
	if l := t.entries(in); l.Len() == 1 && t.list.Kind() == protoreflect.MessageKind {
		return l.Get(0).Message().Interface()
	}
	return nil
}

// request merges inputs that share their op-level fields into one request.
func (t *Target) request(inputs []proto.Message) *conformpb.Request {
	op := proto.Clone(inputs[0]).ProtoReflect()
	dst := op.Mutable(t.list).List()
	dst.Truncate(0)
	for _, in := range inputs {
		src := t.entries(in)
		for i := 0; i < src.Len(); i++ {
			dst.Append(src.Get(i))
		}
	}
	req := &conformpb.Request{}
	if t.op.IsExtension() {
		packed, err := anypb.New(op.Interface())
		if err != nil {
			// An op that does not encode (a string that is not UTF-8) goes
			// as its type alone: both sides answer the same empty op.
			packed = &anypb.Any{TypeUrl: "type.googleapis.com/" + t.opName()}
		}
		req.Op = &conformpb.Request_Extension{Extension: packed}
		return req
	}
	var inner protoreflect.Message = op
	for i := len(t.path) - 1; i >= 1; i-- {
		outer := req.ProtoReflect().Descriptor().Fields().ByName(t.path[0]).Message()
		wrap := dynamicNew(outer)
		wrap.Set(outer.Fields().ByName(t.path[i]), protoreflect.ValueOfMessage(inner))
		inner = wrap
	}
	req.ProtoReflect().Set(req.ProtoReflect().Descriptor().Fields().ByName(t.path[0]), protoreflect.ValueOfMessage(inner))
	return req
}

func dynamicNew(md protoreflect.MessageDescriptor) protoreflect.Message {
	mt, err := protoregistry.GlobalTypes.FindMessageByName(md.FullName())
	if err != nil {
		panic(fmt.Sprintf("campaign: %s is not registered", md.FullName()))
	}
	return mt.New()
}

// opIn returns the target's op message req carries, or nil when req
// carries another op.
func (t *Target) opIn(req *conformpb.Request) protoreflect.Message {
	if t.op.IsExtension() {
		ext := req.GetExtension()
		if ext == nil || ext.MessageName() != t.opType.Descriptor().FullName() {
			return nil
		}
		op := t.New()
		if ext.UnmarshalTo(op) != nil {
			return nil
		}
		return op.ProtoReflect()
	}
	m := req.ProtoReflect()
	for _, name := range t.path {
		fd := m.Descriptor().Fields().ByName(name)
		if fd == nil || !m.Has(fd) {
			return nil
		}
		m = m.Get(fd).Message()
	}
	return m
}

// answer is what a response said about a request as a whole.
type answer int

const (
	answerOK answer = iota
	answerUnimplemented
	answerError
	answerOtherOp
)

// outputs returns the per-input outputs of a response to this target's op.
func (t *Target) outputs(resp *conformpb.Response) ([]proto.Message, answer, string) {
	switch r := resp.GetResult().(type) {
	case *conformpb.Response_Unimplemented:
		return nil, answerUnimplemented, r.Unimplemented.GetDetail()
	case *conformpb.Response_Error:
		return nil, answerError, r.Error.GetMessage()
	case nil:
		return nil, answerOtherOp, "no result"
	}
	res, msg := t.result(resp)
	if res == nil {
		return nil, answerOtherOp, msg
	}
	var list protoreflect.FieldDescriptor
	for i := 0; i < res.Descriptor().Fields().Len(); i++ {
		if f := res.Descriptor().Fields().Get(i); f.IsList() && f.Kind() == protoreflect.MessageKind {
			list = f
		}
	}
	if list == nil {
		return nil, answerOtherOp, "a result without outputs"
	}
	l := res.Get(list).List()
	out := make([]proto.Message, l.Len())
	for i := range out {
		out[i] = l.Get(i).Message().Interface()
	}
	return out, answerOK, ""
}

// result returns the result of the target's op a response carries, or nil
// and what it carries instead.
func (t *Target) result(resp *conformpb.Response) (protoreflect.Message, string) {
	if t.op.IsExtension() {
		ext := resp.GetExtension()
		if ext == nil || ext.MessageName() != t.op.Result.Descriptor().FullName() {
			return nil, "the result of another op"
		}
		res := t.op.Result.New()
		if err := ext.UnmarshalTo(res.Interface()); err != nil {
			return nil, "a result that does not decode: " + err.Error()
		}
		return res, ""
	}
	m := resp.ProtoReflect()
	fd := m.Descriptor().Fields().ByName(t.path[0])
	if fd == nil || !m.Has(fd) {
		return nil, "the result of another op"
	}
	res := m.Get(fd).Message()
	for _, name := range t.path[1:] {
		sub := res.Descriptor().Fields().ByName(name)
		if sub == nil || !res.Has(sub) {
			return nil, "the result of another op"
		}
		res = res.Get(sub).Message()
	}
	return res, ""
}
