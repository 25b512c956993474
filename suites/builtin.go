package suites

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/conform-suite/conform/campaign/gen"
	"github.com/conform-suite/conform/cases"
	dopplercases "github.com/conform-suite/conform/cases/doppler"
	graphcases "github.com/conform-suite/conform/cases/graph"
	livecases "github.com/conform-suite/conform/cases/live"
	streamscases "github.com/conform-suite/conform/cases/streams"
	tlvcases "github.com/conform-suite/conform/cases/tlv"
	wirecases "github.com/conform-suite/conform/cases/wire"
	"github.com/conform-suite/conform/corpus"
	"github.com/conform-suite/conform/suite"
	"github.com/conform-suite/conform/sut/impl"
	"github.com/conform-suite/conform/sut/mutant"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Wire is the Ranvier wire format at codec level: framing, limits, the
// messages and how a subscriber treats each frame.
func Wire() *suite.Suite {
	return &suite.Suite{
		Name:      "wire",
		Title:     "Ranvier framing and messages, through codec ops",
		Documents: []string{"ranvier-wire"},
		Profiles: []suite.Profile{
			{Name: wirecases.Profile, Summary: "reads and writes Ranvier frames, decodes and encodes the messages, receives a connection's frames as a subscriber"},
		},
		Load: func() (*suite.Catalogue, error) {
			return catalogue(corpus.Wire, wirecases.Catalogue, func(v *corpus.Vector) string { return corpus.FormatHex(v.Input) },
				func(v *corpus.Vector) string { return expectedBut("input")(v) })
		},
		Ops: []impl.Op{
			impl.Handler(impl.ReadFrames),
			impl.Handler(impl.WriteFrames),
			impl.Handler(impl.Receive),
			impl.Handler(impl.Decode),
			impl.Handler(impl.Encode),
		},
		Mutants: mutant.Wire,
		Targets: []gen.Target{
			{Name: "wire.read-frames", Doc: "frame reading under arbitrary chunkings and stream ends (ranvier-wire §1.3, §2)",
				Op: op("read_frames"), Format: gen.Frames, Generate: gen.ReadFrames, Promote: gen.PromoteReadFrames},
			{Name: "wire.write-frames", Doc: "framing a payload, through a sink that takes part of it (ranvier-wire §1.4, §2)",
				Op: op("write_frames"), Format: gen.Proto},
			{Name: "wire.receive", Doc: "a subscriber's receive step on one connection (ranvier-wire §4, §6)",
				Op: op("receive"), Format: gen.Frames},
			{Name: "wire.decode", Doc: "message decoding, with re-encoding (ranvier-wire §7, §8)",
				Op: op("decode"), Format: gen.Proto},
			{Name: "wire.encode", Doc: "message encoding from canonical JSON (ranvier-wire §7)",
				Op: op("encode")},
		},
		FuzzSeeds: gen.WireVectors,
	}
}

// Streams is ranvier-streams: gap arithmetic, loss accounting, queues,
// announcements, at codec level.
func Streams() *suite.Suite {
	return &suite.Suite{
		Name:      "streams",
		Title:     "gap arithmetic, loss accounting, queues and announcements, through codec ops",
		Documents: []string{"ranvier-streams"},
		Profiles: []suite.Profile{
			{Name: streamscases.Profile, Summary: "tracks sequences, drives a subscription's queue, counts frames per connection, numbers and stamps samples, reads and matches announcements"},
		},
		Load: func() (*suite.Catalogue, error) {
			return catalogue(corpus.Streams, streamscases.Catalogue, streamsInput,
				func(v *corpus.StreamsVector) string {
					return expectedBut("name", "sequences", "arrivals", "queue", "segments", "announcement")(v)
				})
		},
		Ops: []impl.Op{
			impl.Handler(impl.Track),
			impl.Handler(impl.DriveQueue),
			impl.Handler(impl.ReceiveConnections),
			impl.Handler(impl.Publish),
			impl.Handler(impl.ReadAnnouncements),
			impl.Handler(impl.MatchAnnouncements),
			impl.Handler(impl.Latency),
		},
		Mutants: mutant.Streams,
		Targets: []gen.Target{
			{Name: "streams.track", Doc: "gap tracking over arrival sequences (ranvier-streams §3)",
				Op: op("track"), Generate: gen.Track},
			{Name: "streams.queue", Doc: "a subscription's queue and loss policy (ranvier-streams §3.1, §5)",
				Op: op("drive_queue")},
			{Name: "streams.connections", Doc: "per-connection frame accounting (ranvier-streams §3.6a)",
				Op: op("receive_connections"), Format: gen.Frames},
			{Name: "streams.publish", Doc: "a publisher runtime's numbering and stamping (ranvier-streams §2, §4)",
				Op: op("publish")},
			{Name: "streams.read-announcements", Doc: "reading StreamInfo announcements (ranvier-streams §6.6)",
				Op: op("read_announcements"), Format: gen.Proto},
			{Name: "streams.match-announcements", Doc: "matching samples to announcements (ranvier-streams §6.4-§6.7)",
				Op: op("match_announcements"), Format: gen.Proto},
			{Name: "streams.latency", Doc: "delivery latency percentiles (ranvier-streams §4.5)",
				Op: op("latency")},
		},
		FuzzSeeds: gen.StreamsVectors,
	}
}

// TLV is libtracer's TLV format: ropes, headers, nesting, paths, trailers,
// the forward hop and delivery policies.
func TLV() *suite.Suite {
	return &suite.Suite{
		Name:      "tlv",
		Title:     "libtracer's rope-split TLV, nesting, paths and the forward hop",
		Documents: []string{"libtracer-graph-model"},
		Profiles: []suite.Profile{
			{Name: tlvcases.Profile, Summary: "decodes and encodes TLV ropes, canonicalizes and validates paths, edits view trees, forwards a frame one hop, packs delivery policies"},
		},
		Load: func() (*suite.Catalogue, error) {
			return catalogue(corpus.TLV, tlvcases.Catalogue, func(v *corpus.TLVVector) string {
				if v.Kind == corpus.TLVPath {
					return fmt.Sprintf("%q", v.PathBytes())
				}
				return corpus.FormatHex(v.Input)
			}, func(v *corpus.TLVVector) string { return expectedBut("kind", "input", "path", "path_hex", "clock")(v) })
		},
		Ops:     []impl.Op{impl.Handler(impl.TLV)},
		Mutants: mutant.TLV,
		Targets: []gen.Target{
			{Name: "tlv.decode", Doc: "rope decoding at ingress: headers, trailers, nesting (the TLV pins)",
				Op: op("tlv", "decode"), Format: gen.TLV, Generate: gen.TLVDecode, Promote: gen.PromoteTLVDecode},
			{Name: "tlv.encode", Doc: "tree serialization (reconstructed§tlv-header)",
				Op: op("tlv", "encode")},
			{Name: "tlv.canonicalize", Doc: "path canonicalization (reconstructed§tlv-path)",
				Op: op("tlv", "canonicalize"), Format: gen.Path, Promote: gen.PromoteCanonicalize},
			{Name: "tlv.validate-path", Doc: "received PATH payload validation over ropes (the TLV pins)",
				Op: op("tlv", "validate_path"), Format: gen.Path, Promote: gen.PromoteValidatePath},
			{Name: "tlv.edit", Doc: "view-tree edits: concat, split, insert (graph model)",
				Op: op("tlv", "edit"), Format: gen.TLV},
			{Name: "tlv.hop", Doc: "the stateless forward hop (graph model §The shedding rule)",
				Op: op("tlv", "hop"), Format: gen.TLV},
			{Name: "tlv.pack-policy", Doc: "packing a delivery policy (graph model §Subscriber delivery policy)",
				Op: op("tlv", "pack_policy")},
			{Name: "tlv.read-policy", Doc: "reading a SUBSCRIBER's delivery policy",
				Op: op("tlv", "read_policy"), Format: gen.TLV},
			{Name: "tlv.egress", Doc: "attaching an egress trailer (graph model §Payload invariance)",
				Op: op("tlv", "egress"), Format: gen.TLV},
		},
		FuzzSeeds: gen.TLVVectors,
	}
}

// Graph is the libtracer graph model, judged by scripts of graph operations
// run as named callers.
func Graph() *suite.Suite {
	return &suite.Suite{
		Name:      "graph",
		Title:     "the libtracer graph model: scripts of graph operations, every reply and delivery compared",
		Documents: []string{"libtracer-graph-model"},
		Profiles: []suite.Profile{
			{Name: graphcases.Profile, Summary: "runs scripts of graph operations (register, write, read, subscribe, retire, …) on a fresh graph and reports every reply and delivery"},
		},
		Load: func() (*suite.Catalogue, error) {
			return catalogue(corpus.Graph, graphcases.Catalogue, graphInput, graphExpected)
		},
		Ops:     []impl.Op{impl.Handler(impl.Graph)},
		Mutants: mutant.Graph,
		// Each script runs on a fresh graph, so the op is as stateless as a
		// codec op.
		Targets: []gen.Target{
			{Name: "graph.run", Doc: "scripts of graph operations on a fresh graph: registers, writes, reads, subscribes, fields, sweeps, retire, evict (libtracer graph model)",
				Op: op("graph", "run"), Format: gen.TLV, Generate: gen.GraphRun, Mutate: gen.MutateGraphRun, Promote: gen.PromoteGraphRun},
		},
	}
}

// Doppler is doppler's streaming contract: the header check, chunking and
// reassembly as codec ops, and the six NATS roles live.
func Doppler() *suite.Suite {
	return &suite.Suite{
		Name:      "doppler",
		Title:     "doppler's header checks, chunking and reassembly; live, the roles on a real broker",
		Documents: []string{"doppler-streaming"},
		Profiles: []suite.Profile{
			{Name: dopplercases.Profile, Summary: "checks and writes doppler headers, cuts frames into chunks, reassembles them, numbers a socket's frames"},
			{Name: dopplercases.LiveProfile, Summary: "joins a subject on a real NATS broker in a doppler role (PUB, SUB, REQ, REP, PUSH, PULL) while conform plays the peer", Live: true},
		},
		Load: func() (*suite.Catalogue, error) {
			return catalogue(corpus.Doppler, dopplercases.Catalogue, func(v *corpus.DopplerVector) string {
				in := corpus.FormatHex(v.Message)
				for i, m := range v.Messages {
					if i > 0 || in != "" {
						in += " | "
					}
					in += corpus.FormatHex(m)
				}
				return in
			}, func(v *corpus.DopplerVector) string {
				return expectedBut("order", "message", "transport_length", "type", "frame", "messages")(v)
			})
		},
		Ops:     []impl.Op{impl.Handler(impl.Doppler)},
		Mutants: mutant.Doppler,
		Targets: []gen.Target{
			{Name: "doppler.check", Doc: "the receiver's header check (doppler §3)",
				Op: op("doppler", "check"), Format: gen.Doppler, Promote: gen.PromoteCheck},
			{Name: "doppler.reassemble", Doc: "reassembly of chunked frames (doppler §4)",
				Op: op("doppler", "reassemble"), Format: gen.Doppler, Generate: gen.Reassemble},
			{Name: "doppler.chunk", Doc: "cutting frames into chunks at a max_payload (doppler §4)",
				Op: op("doppler", "chunk")},
			{Name: "doppler.push-check", Doc: "PUSH's size check (doppler §4)",
				Op: op("doppler", "push_check")},
			{Name: "doppler.encode-header", Doc: "writing a conforming header (doppler §3)",
				Op: op("doppler", "encode_header")},
			{Name: "doppler.sequence", Doc: "per-socket sequence numbering (doppler §7)",
				Op: op("doppler", "sequence")},
			{Name: "doppler.live-subscribe", Doc: "a SUB socket on a real NATS server: generated messages published to it, what it delivered and refused read back (doppler §3, §4, §6)",
				Op: op("doppler", "reassemble"), Format: gen.Doppler, Generate: gen.Reassemble, Live: gen.LiveDopplerSub},
		},
		FuzzSeeds: gen.DopplerVectors,
	}
}

// Live is Ranvier on real loopback sockets: conform plays the other end of
// every conversation of the data and control planes.
func Live() *suite.Suite {
	return &suite.Suite{
		Name:      "live",
		Title:     "Ranvier over real loopback TCP: conform plays the other end of every conversation",
		Documents: []string{"ranvier-wire", "ranvier-streams"},
		Profiles: []suite.Profile{
			{Name: livecases.ProfileSubscriber, Summary: "subscribes to a publisher conform runs and reports what arrived", Live: true},
			{Name: livecases.ProfilePublisher, Summary: "publishes samples that conform subscribes to", Live: true},
			{Name: livecases.ProfileNode, Summary: "runs as a control-plane node that conform launches with RANVIER_* set, as a runtime would", Live: true, Launched: true},
			{Name: livecases.ProfileRuntime, Summary: "runs a control-plane runtime that conform connects to as a node", Live: true},
		},
		Load: func() (*suite.Catalogue, error) {
			return &suite.Catalogue{Cases: livecases.Catalogue()}, nil
		},
		Ops:     []impl.Op{impl.Handler(impl.Live), impl.Handler(impl.Control)},
		Mutants: mutant.Live,
		Targets: []gen.Target{
			{Name: "live.subscribe", Doc: "a subscriber on a real socket: generated frames from a harness publisher, the SUT's report read back (ranvier-wire §4, §6)",
				Op: op("read_frames"), Format: gen.Frames, Generate: gen.ReadFrames, Live: gen.LiveSubscriber},
			{Name: "live.publish", Doc: "the SUT as a publisher on a real socket: a generated publish script, its wire transcript decoded and compared (ranvier-wire §4, ranvier-streams §2, §6)",
				Op: op("live", "publish"), List: "open", Generate: gen.LivePublish, Live: gen.LivePublisher},
		},
	}
}

// op is the path of field names from conform.v1.Request to an op's
// message, for a fuzz target's declaration.
func op(names ...protoreflect.Name) []protoreflect.Name { return names }

// catalogue loads a suite's vector set with load, builds its cases with
// build, and describes each vector's input and expectation with input and
// expected.
func catalogue[V corpus.Identified](load func() (*corpus.Set[V], error), build func(*corpus.Set[V]) []cases.Case, input, expected func(V) string) (*suite.Catalogue, error) {
	set, err := load()
	if err != nil {
		return nil, err
	}
	c := &suite.Catalogue{
		Cases:   build(set),
		Corpus:  set.Version() + " sha256:" + set.Digest(),
		Vectors: map[string]suite.Vector{},
	}
	for _, v := range set.All() {
		c.Vectors[v.VectorID()] = suite.Vector{ID: v.VectorID(), Spec: v.VectorSpec(), Title: v.VectorTitle(),
			Describe: func() (string, string) { return input(v), expected(v) }}
	}
	return c, nil
}

// expectedBut renders what a vector expects: its JSON fields but those
// that name it and those listed as its input, in the vector file's own
// terms.
func expectedBut(inputs ...string) func(v any) string {
	return func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			return ""
		}
		var fields map[string]json.RawMessage
		if json.Unmarshal(b, &fields) != nil {
			return ""
		}
		for _, k := range append([]string{"id", "spec", "title", "tags"}, inputs...) {
			delete(fields, k)
		}
		if len(fields) == 0 {
			return ""
		}
		out, err := json.Marshal(fields)
		if err != nil {
			return ""
		}
		return string(out)
	}
}

// graphExpected renders what a graph vector's steps expect, step by step.
func graphExpected(v *corpus.GraphVector) string {
	var parts []string
	for i, st := range v.Steps {
		if st.Expect == nil {
			continue
		}
		b, err := json.Marshal(st.Expect)
		if err != nil {
			continue
		}
		parts = append(parts, fmt.Sprintf("step %d: %s", i+1, b))
	}
	return strings.Join(parts, "; ")
}

// streamsInput describes a streams vector's input for explain: the bytes of
// its connections, or its arrivals or queue script in short.
func streamsInput(v *corpus.StreamsVector) string {
	var parts []string
	for _, seg := range v.Segments {
		parts = append(parts, fmt.Sprintf("connection %d: %s", seg.Conn, corpus.FormatHex(seg.Bytes)))
	}
	for _, a := range v.AllArrivals() {
		parts = append(parts, fmt.Sprintf("%d/%d/%d@%d", a.Conn, a.Ref, a.Seq, a.Ns))
	}
	if len(v.Announcement) > 0 {
		parts = append(parts, "StreamInfo "+corpus.FormatHex(v.Announcement))
	}
	if q := v.Queue; q != nil {
		policy := q.Policy
		if policy == "" {
			policy = "no policy named"
		}
		parts = append(parts, fmt.Sprintf("depth %d, %s", q.Depth, policy))
		for _, st := range q.Steps {
			if len(st.Push) > 0 {
				parts = append(parts, fmt.Sprintf("push %v", st.Push))
			}
			if st.Pop > 0 {
				parts = append(parts, fmt.Sprintf("pop %d", st.Pop))
			}
		}
	}
	return strings.Join(parts, "; ")
}

// graphInput describes a graph vector's script for explain: one step a
// line, as the vector's own description of it.
func graphInput(v *corpus.GraphVector) string {
	var parts []string
	for _, st := range v.Steps {
		parts = append(parts, st.Describe())
	}
	return strings.Join(parts, "; ")
}

// RunNode runs, from the environment getenv reads, the control-plane node of
// reg's reference (name empty) or of its mutant called name: what conform
// reference node [--mutant NAME] does in the child process the ranvier-node
// cases launch.
func RunNode(ctx context.Context, reg *suite.Registry, name string, getenv func(string) string) error {
	im := reg.Reference()
	if name != "" {
		var ok bool
		if im, ok = reg.MutantImpl(name); !ok {
			return fmt.Errorf("no such mutant %q (conform mutants lists them)", name)
		}
	}
	return im.Control.RunNode(ctx, getenv)
}
