package campaign

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	dp "github.com/conform-suite/conform/ref/doppler"
	"github.com/conform-suite/conform/ref/tlv"
	"github.com/conform-suite/conform/sut/builtin"
	"google.golang.org/protobuf/proto"
)

// dopplerMsg returns a little-endian CI8 message of sequence seq stamped ts
// with sample rate rate, carrying two elements.
func dopplerMsg(seq, ts uint64, rate float64) []byte {
	h := dp.NewHeader(dp.TypeCI8, dp.LittleEndian)
	h.Sequence, h.TimestampNs, h.SampleRateHz = seq, ts, rate
	h.NumSamples, h.PayloadBytes = 2, 4
	return append(dp.AppendHeader(nil, dp.LittleEndian, h), 1, 2, 3, 4)
}

// nanWithBits returns a NaN whose payload is bits.
func nanWithBits(bits uint64) float64 { return math.Float64frombits(0x7FF8000000000000 | bits) }

// TestOracleOpenFields: every false finding the oracle used to report is
// gone — each pair below differs only in a field the documents leave open,
// and compares equal — while the same fields where they are judged still
// differ.
func TestOracleOpenFields(t *testing.T) {
	tooLarge := &conformpb.ReadInput{Chunks: []*conformpb.Blob{{Data: []byte{0x01, 0x00, 0x00, 0x01}}}}
	waiting := &conformpb.ReadInput{Chunks: []*conformpb.Blob{{Data: []byte{0, 0, 0, 5, 1}}}}
	eos := &conformpb.ReadInput{Chunks: []*conformpb.Blob{{Data: []byte{0, 0, 0, 1, 7}}}, EndOfStream: true}
	frame := &conformpb.Data{Length: 1, Bytes: []byte{7}}
	queue := &conformpb.QueueInput{Name: "q", Depth: proto.Uint32(4), Policy: conformpb.QueuePolicy_QUEUE_POLICY_DROP_OLDEST}
	read := func(conn, seq uint64) *conformpb.QueueOutput {
		return &conformpb.QueueOutput{Depth: 4, Policy: conformpb.QueuePolicy_QUEUE_POLICY_DROP_OLDEST, Delivered: 1, Readable: 0,
			Read: []*conformpb.Arrival{{Connection: conn, StreamRef: 1, Sequence: seq}}}
	}
	decodeIn := &conformpb.DecodeInput{MessageType: "ranvier.message.v1.Sample", Payload: []byte{0x10, 0x01, 0x48, 0x05}, Reencode: true}
	seqIn := &conformpb.DopplerSequenceInput{MaxPayload: 1 << 20, Steps: []*conformpb.DopplerSendStep{{Socket: 1, Role: conformpb.DopplerSendRole_DOPPLER_SEND_ROLE_PUB, Type: conformpb.DopplerFrameType_DOPPLER_FRAME_TYPE_CI8, Payload: []byte{1, 2, 3, 4}}}}
	sent := func(seq, ts uint64) *conformpb.DopplerSequenceOutput {
		return &conformpb.DopplerSequenceOutput{Sent: []*conformpb.DopplerSent{{Messages: [][]byte{dopplerMsg(seq, ts, 0)}}}}
	}
	chunkIn := &conformpb.DopplerChunkInput{Type: conformpb.DopplerFrameType_DOPPLER_FRAME_TYPE_CI8, MaxPayload: 1 << 20, SampleRateHz: math.NaN(), Payload: []byte{1, 2, 3, 4}}
	checkOut := func(rate float64) *conformpb.DopplerCheckOutput {
		return &conformpb.DopplerCheckOutput{Verdict: conformpb.DopplerVerdict_DOPPLER_VERDICT_ACCEPTED,
			Header: &conformpb.DopplerHeader{Magic: dp.Magic, VersionMajor: 2, SampleRateHz: rate}}
	}
	// A produced sample stamped by the runtime's own clock, which differs
	// from run to run; a SUT stamping the source timestamp instead breaks
	// ranvier-streams §4.1. (The declaration's class form made the
	// campaign's own normalizer of streams.publish redundant.)
	pubIn := &conformpb.PublishInput{Steps: []*conformpb.PublishStep{
		{Step: &conformpb.PublishStep_Open{Open: &conformpb.OpenStream{Name: "s"}}},
		{Step: &conformpb.PublishStep_Publish{Publish: &conformpb.PublishSample{Stream: 0, SourceTimestampNs: 5, Values: []byte{1}}}},
	}}
	published := func(stamp func(s *conformpb.Arrival)) *conformpb.PublishOutput {
		resp := testRegistry().Reference().Handle(context.Background(), &conformpb.Request{Op: &conformpb.Request_Publish{Publish: &conformpb.Publish{Inputs: []*conformpb.PublishInput{pubIn}}}})
		out := resp.GetPublish().GetOutputs()[0]
		for _, ev := range out.GetEvents() {
			if s := ev.GetSample(); s != nil {
				stamp(s)
			}
		}
		return out
	}
	ownClock := func(ns uint64) func(*conformpb.Arrival) {
		return func(s *conformpb.Arrival) { s.MonotonicTimestampNs = ns }
	}
	for _, tc := range []struct {
		name, target string
		in           proto.Message
		got, want    proto.Message
		differs      bool
	}{
		{"buffered on TOO_LARGE", "wire.read-frames", tooLarge,
			&conformpb.ReadOutput{Yields: []*conformpb.ChunkYield{{}}, End: conformpb.ReadEnd_READ_END_TOO_LARGE, Claimed: 16777217},
			&conformpb.ReadOutput{Yields: []*conformpb.ChunkYield{{}}, End: conformpb.ReadEnd_READ_END_TOO_LARGE, Claimed: 16777217, Buffered: 4}, false},
		{"buffered on WAITING", "wire.read-frames", waiting,
			&conformpb.ReadOutput{Yields: []*conformpb.ChunkYield{{}}, End: conformpb.ReadEnd_READ_END_WAITING, Buffered: 9},
			&conformpb.ReadOutput{Yields: []*conformpb.ChunkYield{{}}, End: conformpb.ReadEnd_READ_END_WAITING, Buffered: 5}, true},
		{"claimed on TOO_LARGE", "wire.read-frames", tooLarge,
			&conformpb.ReadOutput{Yields: []*conformpb.ChunkYield{{}}, End: conformpb.ReadEnd_READ_END_TOO_LARGE, Claimed: 1},
			&conformpb.ReadOutput{Yields: []*conformpb.ChunkYield{{}}, End: conformpb.ReadEnd_READ_END_TOO_LARGE, Claimed: 16777217}, true},
		{"the optional trailing yields entry", "wire.read-frames", eos,
			&conformpb.ReadOutput{Yields: []*conformpb.ChunkYield{{Frames: []*conformpb.Data{frame}}, {}}, End: conformpb.ReadEnd_READ_END_CLOSED},
			&conformpb.ReadOutput{Yields: []*conformpb.ChunkYield{{Frames: []*conformpb.Data{frame}}}, End: conformpb.ReadEnd_READ_END_CLOSED}, false},
		{"a trailing entry that yields a frame", "wire.read-frames", eos,
			&conformpb.ReadOutput{Yields: []*conformpb.ChunkYield{{Frames: []*conformpb.Data{frame}}, {Frames: []*conformpb.Data{frame}}}, End: conformpb.ReadEnd_READ_END_CLOSED},
			&conformpb.ReadOutput{Yields: []*conformpb.ChunkYield{{Frames: []*conformpb.Data{frame}}}, End: conformpb.ReadEnd_READ_END_CLOSED}, true},
		{"connection of a sample read from a queue", "streams.queue", queue, read(0, 1), read(7, 1), false},
		{"sequence of a sample read from a queue", "streams.queue", queue, read(7, 2), read(7, 1), true},
		{"re-encoded unknown fields", "wire.decode", decodeIn,
			&conformpb.DecodeOutput{Json: `{"sequence":"1"}`, Reencoded: []byte{0x10, 0x01}},
			&conformpb.DecodeOutput{Json: `{"sequence":"1"}`, Reencoded: []byte{0x10, 0x01, 0x48, 0x05}}, false},
		{"a doppler sequence stamped from CLOCK_REALTIME", "doppler.sequence", seqIn, sent(0, 1_777_000_000_000_000_000), sent(0, 0), false},
		{"a doppler sequence numbered wrong", "doppler.sequence", seqIn, sent(1, 0), sent(0, 0), true},
		{"a NaN sample rate written with other bits", "doppler.chunk", chunkIn,
			&conformpb.DopplerChunkOutput{Messages: [][]byte{dopplerMsg(0, 0, nanWithBits(0))}},
			&conformpb.DopplerChunkOutput{Messages: [][]byte{dopplerMsg(0, 0, nanWithBits(1))}}, false},
		{"a sample rate written wrong", "doppler.chunk", chunkIn,
			&conformpb.DopplerChunkOutput{Messages: [][]byte{dopplerMsg(0, 0, 48000)}},
			&conformpb.DopplerChunkOutput{Messages: [][]byte{dopplerMsg(0, 0, nanWithBits(1))}}, true},
		{"a NaN sample rate read with other bits", "doppler.check", &conformpb.DopplerCheckInput{}, checkOut(nanWithBits(0)), checkOut(nanWithBits(3)), false},
		{"a publish stamped by another host clock", "streams.publish", pubIn, published(ownClock(1_777_000_000)), published(ownClock(123)), false},
		{"a publish stamped with the source timestamp", "streams.publish", pubIn, published(ownClock(5)), published(ownClock(123)), true},
	} {
		paths := oracle{}.compare(tc.in, tc.got, tc.want)
		if differs := len(paths) > 0; differs != tc.differs {
			t.Errorf("%s: differs = %v (%s), want %v", tc.name, differs, strings.Join(paths, ","), tc.differs)
		}
	}
}

// TestDeclaredTLVDepth: a SUT whose Hello declares a TLV nesting bound
// other than the reference's is judged by its own bound (the TLV pins:
// the bound is the receiver's): a frame nested between the two bounds,
// which it refuses and the reference decodes, is no finding; frames within
// both bounds are still compared.
func TestDeclaredTLVDepth(t *testing.T) {
	t.Parallel()
	const declared = 32
	nested := func(depth int) proto.Message {
		n := tlv.NewLeaf(tlv.TypeValue, []byte{1})
		for range depth - 1 {
			n = tlv.NewStruct(tlv.TypePoint, n)
		}
		return &conformpb.TlvDecode{Inputs: []*conformpb.TlvDecodeInput{{Frame: &conformpb.TlvRope{Segments: [][]byte{n.Bytes()}}}}}
	}
	shallow := testRegistry().Reference()
	shallow.TLV.MaxDepth = declared
	if got := builtin.New("shallow", shallow).Hello().GetBounds().GetTlvMaxDepth(); got != declared {
		t.Fatalf("the SUT declares a TLV depth of %d, want %d", got, declared)
	}
	tg, _ := Lookup(testTargets(), "tlv.decode")
	for _, tc := range []struct {
		depth    int
		findings int
	}{{declared + 8, 0}, {declared / 2, 0}} {
		in := nested(tc.depth)
		e := NewEngine(builtin.New("shallow", shallow), testRegistry(), "shallow", &Seeds{}, 1, time.Minute, nil)
		obs, err := e.Evaluate(context.Background(), tg, []proto.Message{in})
		if err != nil {
			t.Fatal(err)
		}
		if len(obs) != tc.findings {
			t.Errorf("a frame nested %d deep: %d observations, the first %s %s; want %d", tc.depth, len(obs), obs[0].Signature, obs[0].Detail, tc.findings)
		}
	}
	// The frame between the bounds is one the two decoders answer
	// differently: without the SUT's bound, the oracle would report it.
	in := nested(declared + 8)
	req := tg.request([]proto.Message{in})
	sut, _, _ := tg.outputs(shallow.Handle(context.Background(), req))
	ref, _, _ := tg.outputs(testRegistry().Reference().Handle(context.Background(), req))
	if paths := (oracle{}).compare(tg.entry(in), sut[0], ref[0]); len(paths) == 0 {
		t.Errorf("a frame nested %d deep: the SUT bound at %d and the reference answer alike; the test proves nothing", declared+8, declared)
	}
}
