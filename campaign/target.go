// Package campaign is conform's differential fuzzing engine: it generates
// and mutates inputs for every codec op of conform.v1, sends them in batches
// to a system under test and to the reference, and turns every difference,
// crash, hang or protocol error into a finding that is deduplicated by
// signature, minimised against the SUT and written to disk atomically.
//
// The deterministic unit of work is a target, a campaign seed and a range of
// input indices: input i of a target is a pure function of the seed, the
// seed pool and i, so a local campaign, a resumed one and a worker on another
// rig all run exactly the same inputs for the same range.
package campaign

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
)

// format is what a target's byte fields hold, so that mutations can find
// the length fields and headers in them.
type format int

const (
	fmtRaw     format = iota
	fmtFrames         // Ranvier frames: 4-byte big-endian length, payload
	fmtProto          // a protobuf message
	fmtTLV            // a libtracer TLV frame
	fmtPath           // a PATH payload: [u8 len][text] records
	fmtDoppler        // a doppler message: 64-byte header, optional chunk block
)

// A Target is one codec op of conform.v1 that a campaign fuzzes, named
// <suite>.<what>, for example wire.read-frames.
//
// An input of a target is the op's message holding exactly one entry in its
// batched list (and whatever op-level fields the op has, such as a byte
// order): inputs that share their op-level fields are merged into one
// request.
type Target struct {
	// Name is <suite>.<what>.
	Name string
	// Suite is the suite whose op this is: wire, streams, tlv or doppler.
	Suite string
	// Doc says what the target exercises, for conform fuzz --list.
	Doc string

	path   []protoreflect.Name // from Request to the op, e.g. [tlv decode]
	opType protoreflect.MessageType
	list   protoreflect.FieldDescriptor // the op's batched list
	format format
	// gen, if set, is the target's structure-aware generator; the generic
	// generator is used otherwise.
	gen func(g *gen) proto.Message
	// mutate, if set, is the target's structure-aware mutation, applied
	// to an input instead of a generic one now and then; it reports
	// whether it changed anything.
	mutate func(g *gen, in, other proto.Message) bool
	// live, set on a live target (live.go), runs inputs over a real socket
	// or subject, each input one connection or one subscription, and
	// compares the two sides' reports.
	live func(e *Engine, ctx context.Context, t *Target, inputs []proto.Message) ([]Observation, error)
}

// New returns an empty input of the target's op type.
func (t *Target) New() proto.Message { return t.opType.New().Interface() }

// opName is the op's full message name, such as conform.v1.ReadFrames.
func (t *Target) opName() string { return string(t.opType.Descriptor().FullName()) }

// suiteOf maps a Request oneof field to its suite.
func suiteOf(fd protoreflect.FieldDescriptor) string {
	switch n := fd.Number(); {
	case n >= 10 && n < 20:
		return "wire"
	case n >= 20 && n < 30:
		return "streams"
	}
	return string(fd.Name())
}

// shortNames renames ops whose field names read poorly as target names.
var shortNames = map[string]string{
	"streams.drive-queue":         "streams.queue",
	"streams.receive-connections": "streams.connections",
}

var targetDocs = map[string]string{
	"wire.read-frames":            "frame reading under arbitrary chunkings and stream ends (ranvier-wire §1.3, §2)",
	"wire.write-frames":           "framing a payload, through a sink that takes part of it (ranvier-wire §1.4, §2)",
	"wire.receive":                "a subscriber's receive step on one connection (ranvier-wire §4, §6)",
	"wire.decode":                 "message decoding, with re-encoding (ranvier-wire §7, §8)",
	"wire.encode":                 "message encoding from canonical JSON (ranvier-wire §7)",
	"streams.track":               "gap tracking over arrival sequences (ranvier-streams §3)",
	"streams.queue":               "a subscription's queue and loss policy (ranvier-streams §3.1, §5)",
	"streams.connections":         "per-connection frame accounting (ranvier-streams §3.6a)",
	"streams.publish":             "a publisher runtime's numbering and stamping (ranvier-streams §2, §4)",
	"streams.read-announcements":  "reading StreamInfo announcements (ranvier-streams §6.6)",
	"streams.match-announcements": "matching samples to announcements (ranvier-streams §6.4-§6.7)",
	"streams.latency":             "delivery latency percentiles (ranvier-streams §4.5)",
	"tlv.decode":                  "rope decoding at ingress: headers, trailers, nesting (RECONSTRUCTED §2)",
	"tlv.encode":                  "tree serialization (RECONSTRUCTED §2 Header)",
	"tlv.canonicalize":            "path canonicalization (RECONSTRUCTED §2 PATH payload)",
	"tlv.validate-path":           "received PATH payload validation over ropes (RECONSTRUCTED §2)",
	"tlv.edit":                    "view-tree edits: concat, split, insert (graph model)",
	"tlv.hop":                     "the stateless forward hop (graph model §The shedding rule)",
	"tlv.pack-policy":             "packing a delivery policy (graph model §Subscriber delivery policy)",
	"tlv.read-policy":             "reading a SUBSCRIBER's delivery policy",
	"tlv.egress":                  "attaching an egress trailer (graph model §Payload invariance)",
	"doppler.check":               "the receiver's header check (doppler §3)",
	"doppler.reassemble":          "reassembly of chunked frames (doppler §4)",
	"doppler.chunk":               "cutting frames into chunks at a max_payload (doppler §4)",
	"doppler.push-check":          "PUSH's size check (doppler §4)",
	"doppler.encode-header":       "writing a conforming header (doppler §3)",
	"doppler.sequence":            "per-socket sequence numbering (doppler §7)",
	"graph.run":                   "scripts of graph operations on a fresh graph: registers, writes, reads, subscribes, fields, sweeps, retire, evict (libtracer graph model)",
}

var targetFormats = map[string]format{
	"wire.read-frames":            fmtFrames,
	"wire.write-frames":           fmtProto,
	"wire.receive":                fmtFrames,
	"wire.decode":                 fmtProto,
	"streams.connections":         fmtFrames,
	"streams.read-announcements":  fmtProto,
	"streams.match-announcements": fmtProto,
	"tlv.decode":                  fmtTLV,
	"tlv.canonicalize":            fmtPath,
	"tlv.validate-path":           fmtPath,
	"tlv.edit":                    fmtTLV,
	"tlv.hop":                     fmtTLV,
	"tlv.read-policy":             fmtTLV,
	"tlv.egress":                  fmtTLV,
	"doppler.check":               fmtDoppler,
	"doppler.reassemble":          fmtDoppler,
	"doppler.chunk":               fmtRaw,
	"doppler.sequence":            fmtRaw,
	"graph.run":                   fmtTLV,
}

// codecSuites are the suites whose codec ops are targets, in a fixed order.
// Live ops (whose state lives in the SUT between requests) are not. The
// graph suite's one op runs scripts, each on a fresh graph, so it is as
// stateless as a codec op.
var codecSuites = []string{"wire", "streams", "tlv", "doppler", "graph"}

// Targets returns every target, sorted by name. The list is derived from
// conform.v1 itself: every batched codec op of the suites wire, streams, tlv,
// doppler and graph is one target, and the live targets follow.
func Targets() []*Target {
	var out []*Target
	req := (&conformpb.Request{}).ProtoReflect().Descriptor()
	fields := req.Oneofs().ByName("op").Fields()
	for i := 0; i < fields.Len(); i++ {
		fd := fields.Get(i)
		suite := suiteOf(fd)
		if !slices.Contains(codecSuites, suite) {
			continue
		}
		md := fd.Message()
		if oo := md.Oneofs().ByName("op"); oo != nil {
			// A suite's ops in a message of their own (tlv, doppler).
			for j := 0; j < oo.Fields().Len(); j++ {
				sub := oo.Fields().Get(j)
				if suite == "doppler" && sub.Number() >= 20 {
					continue // the live doppler-nats ops
				}
				if t := newTarget(suite, []protoreflect.Name{fd.Name(), sub.Name()}, sub.Message()); t != nil {
					out = append(out, t)
				}
			}
			continue
		}
		if t := newTarget(suite, []protoreflect.Name{fd.Name()}, md); t != nil {
			out = append(out, t)
		}
	}
	out = append(out, liveTargets()...)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func newTarget(suite string, path []protoreflect.Name, op protoreflect.MessageDescriptor) *Target {
	var list protoreflect.FieldDescriptor
	for i := 0; i < op.Fields().Len(); i++ {
		if f := op.Fields().Get(i); f.IsList() {
			if list != nil {
				return nil // not a batched op of the usual shape
			}
			list = f
		}
	}
	if list == nil {
		return nil
	}
	mt, err := protoregistry.GlobalTypes.FindMessageByName(op.FullName())
	if err != nil {
		return nil
	}
	name := suite + "." + strings.ReplaceAll(string(path[len(path)-1]), "_", "-")
	if s, ok := shortNames[name]; ok {
		name = s
	}
	t := &Target{Name: name, Suite: suite, Doc: targetDocs[name], path: path, opType: mt, list: list, format: targetFormats[name]}
	t.gen = structuredGenerators[name]
	t.mutate = structuredMutators[name]
	return t
}

// Lookup returns the target named name.
func Lookup(name string) (*Target, bool) {
	for _, t := range Targets() {
		if t.Name == name {
			return t, true
		}
	}
	return nil, false
}

// Select resolves --target values: names, or "all". A suite name selects
// the suite's targets.
func Select(names []string) ([]*Target, error) {
	all := Targets()
	seen := map[string]bool{}
	var out []*Target
	for _, n := range names {
		matched := false
		for _, t := range all {
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
	m := resp.ProtoReflect()
	fd := m.Descriptor().Fields().ByName(t.path[0])
	if fd == nil || !m.Has(fd) {
		return nil, answerOtherOp, "the result of another op"
	}
	res := m.Get(fd).Message()
	for _, name := range t.path[1:] {
		sub := res.Descriptor().Fields().ByName(name)
		if sub == nil || !res.Has(sub) {
			return nil, answerOtherOp, "the result of another op"
		}
		res = res.Get(sub).Message()
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
