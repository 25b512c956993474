package meaning

import (
	"encoding/binary"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	messagepb "github.com/conform-suite/conform/proto/ranvier/message/v1"
	dp "github.com/conform-suite/conform/ref/doppler"
	"github.com/conform-suite/conform/ref/tlv"
	"google.golang.org/protobuf/proto"
)

func tlvBytes(typ, opt byte, payload []byte) []byte {
	return append(binary.LittleEndian.AppendUint16([]byte{typ, opt}, uint16(len(payload))), payload...)
}

func name(s string) []byte { return tlvBytes(byte(tlv.TypeName), 0, []byte(s)) }

func list(entries ...[]byte) []byte {
	return tlvBytes(byte(tlv.TypeBatch), byte(tlv.OptPL), slices.Concat(entries...))
}

func marshal(m proto.Message) []byte {
	b, _ := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	return b
}

func readStep(addr string) *conformpb.GraphStep {
	return &conformpb.GraphStep{Step: &conformpb.GraphStep_Read{Read: &conformpb.GraphRead{Address: addr}}}
}

func registerStep(path string) *conformpb.GraphStep {
	return &conformpb.GraphStep{Step: &conformpb.GraphStep_Register{Register: &conformpb.GraphRegister{Path: path}}}
}

func reply(v []byte) *conformpb.GraphScriptOutput {
	return &conformpb.GraphScriptOutput{Replies: []*conformpb.GraphReply{{}, {}, {}, {Value: v}}}
}

// TestDiff: each pair differs exactly where the declaration judges, named
// by JSON paths with positions and levels; the decisions of
// docs/findings.md hold (what is open compares equal, what is pinned does
// not).
func TestDiff(t *testing.T) {
	children := &conformpb.GraphScript{Steps: []*conformpb.GraphStep{registerStep("/p/a"), registerStep("/p/b/d"), registerStep("/x"), readStep("/p:children[]")}}
	stray := &messagepb.StreamInfo{Name: "gaze", StreamRef: 0}
	good := &messagepb.StreamInfo{Name: "gaze", StreamRef: 3}
	match := &conformpb.MatchInput{Events: []*conformpb.MatchEvent{
		{Event: &conformpb.MatchEvent_Announce{Announce: marshal(stray)}},
		{Event: &conformpb.MatchEvent_Announce{Announce: marshal(good)}},
		{Event: &conformpb.MatchEvent_List{List: "gaze"}}}}
	listed := func(refs ...uint32) *conformpb.MatchOutput {
		out := &conformpb.MatchOutput{Answers: []*conformpb.MatchAnswer{{}, {}, {}}}
		for _, r := range refs {
			out.Answers[2].Listed = append(out.Answers[2].Listed, &conformpb.AnnouncementRead{Name: proto.String("gaze"), StreamRef: r})
		}
		return out
	}
	nameless := &conformpb.ReadAnnouncementInput{StreamInfo: marshal(&messagepb.StreamInfo{Name: "gaze", StreamRef: 1, Operator: &messagepb.Identity{AssertedBy: 9}})}
	methodOnly := &conformpb.ReadAnnouncementInput{StreamInfo: marshal(&messagepb.StreamInfo{Name: "gaze", StreamRef: 1, Operator: &messagepb.Identity{AssertedBy: 1}})}
	read := func(op *conformpb.ReadOperator) *conformpb.ReadAnnouncementOutput {
		return &conformpb.ReadAnnouncementOutput{Announcement: &conformpb.AnnouncementRead{Name: proto.String("gaze"), StreamRef: 1, Operator: op}}
	}
	// A frame holding a bad CRC in a child and bytes after it: two faults.
	child := tlvBytes(1, 0x10, []byte{7})
	child = binary.LittleEndian.AppendUint32(child, 0xBAD)
	twoFaults := append(tlvBytes(0x80, byte(tlv.OptPL), child), 0)
	refusal := func(status uint32) *conformpb.TlvDecodeOutput {
		return &conformpb.TlvDecodeOutput{Refusal: &conformpb.TlvRefusal{Status: status}}
	}
	decodeIn := &conformpb.TlvDecodeInput{Frame: &conformpb.TlvRope{Segments: [][]byte{twoFaults}}}
	oneFault := &conformpb.TlvDecodeInput{Frame: &conformpb.TlvRope{Segments: [][]byte{{0, 0, 0, 0}}}}
	published := func(adoptConn uint64, refs ...uint32) *conformpb.PublishOutput {
		return &conformpb.PublishOutput{Events: []*conformpb.PublishEvent{
			{StreamRef: refs[0], Connection: 5}, {StreamRef: refs[1], Connection: adoptConn}},
			Streams: []*conformpb.PublishedStream{{StreamRef: refs[0]}, {StreamRef: refs[1], CarriesSourceTimestamp: adoptConn == 9}}}
	}
	script := &conformpb.PublishInput{Steps: []*conformpb.PublishStep{
		{Step: &conformpb.PublishStep_Open{Open: &conformpb.OpenStream{Name: "g"}}},
		{Step: &conformpb.PublishStep_Adopt{Adopt: &conformpb.AdoptStream{Name: "g"}}}}}
	chunk := func(payload []byte) []byte {
		h := dp.NewHeader(dp.TypeCI8, dp.LittleEndian)
		h.Flags, h.NumSamples, h.PayloadBytes = dp.FlagChunked, uint64(len(payload)/2), uint64(len(payload))
		b := dp.AppendHeader(nil, dp.LittleEndian, h)
		b = dp.AppendChunkBlock(b, dp.LittleEndian, dp.ChunkBlock{Index: 0, Count: 2, TotalSamples: 2, TotalBytes: 4})
		return append(b, payload...)
	}
	emptyChunk := &conformpb.DopplerReassembleInput{Messages: [][]byte{chunk(nil), chunk([]byte{1, 2})}}
	refused := func(evs ...uint32) *conformpb.DopplerReassembleOutput {
		out := &conformpb.DopplerReassembleOutput{}
		for _, m := range evs {
			out.Events = append(out.Events, &conformpb.DopplerReassembleEvent{Message: m,
				Event: &conformpb.DopplerReassembleEvent_Refused{Refused: &conformpb.DopplerRefusal{Code: -2}}})
		}
		return out
	}
	dropTwice := &conformpb.DopplerReassembleInput{Messages: [][]byte{chunk([]byte{1, 2})}}
	latency := func(hs ...[2]uint64) *conformpb.LatencyInput {
		in := &conformpb.LatencyInput{}
		for _, h := range hs {
			in.Handovers = append(in.Handovers, &conformpb.Handover{NowNs: h[0], MonotonicTimestampNs: h[1]})
		}
		return in
	}
	lat := func(p50 uint64) *conformpb.LatencyOutput {
		return &conformpb.LatencyOutput{Present: true, P50Ns: p50, P99Ns: p50, MaxNs: p50}
	}
	nonMin := []byte{1, byte(tlv.OptLL), 1, 0, 0, 0, 7}
	for _, tc := range []struct {
		name      string
		in        proto.Message
		want, got proto.Message
		diffs     []string // path (level)
	}{
		{"a grandchild listed by :children[]", children,
			reply(list(name("a"), name("b"))), reply(list(name("b"), name("d"), name("a"))), nil},
		{"a stranger listed by :children[]", children,
			reply(list(name("a"), name("b"))), reply(list(name("a"), name("b"), name("x"))), []string{"replies[3].value (MUST)"}},
		{"a listing with a StreamInfo of stream_ref 0", match, listed(3), listed(0, 3), nil},
		{"a listing missing a publisher", match, listed(3), listed(), []string{"answers[2].listed (MUST)"}},
		{"an Identity stating nothing, read as an empty operator", nameless, read(nil), read(&conformpb.ReadOperator{}), nil},
		{"an Identity with a method and no name, read as none", methodOnly, read(&conformpb.ReadOperator{AssertedBy: 1}), read(nil), []string{"announcement.operator (MUST)"}},
		{"two faults, the other's status", decodeIn, refusal(uint32(tlv.StatusCRCMismatch)), refusal(uint32(tlv.StatusMalformed)), nil},
		{"two faults, a status of neither", decodeIn, refusal(uint32(tlv.StatusCRCMismatch)), refusal(uint32(tlv.StatusNestingTooDeep)), []string{"refusal.status (MUST)"}},
		{"one fault, another status", oneFault, refusal(uint32(tlv.StatusMalformed)), refusal(uint32(tlv.StatusCRCMismatch)), []string{"refusal.status (MUST)"}},
		{"another allocation and other identifiers", script, published(9, 1, 2), published(10, 1, 7), nil},
		{"references from 0", script, published(9, 1, 2), published(10, 0, 7), []string{"events[0].streamRef (MUST)", "events[1].streamRef (MUST)", "streams[0].streamRef (MUST)", "streams[1].streamRef (MUST)"}},
		{"an adopted stream on the local connection", script, published(9, 1, 2), published(5, 1, 2), []string{"events[0].connection (MUST)", "events[1].connection (MUST)"}},
		{"an empty chunk leaves the rest open", emptyChunk, refused(0), refused(0, 1), nil},
		{"a dropped frame reported twice", dropTwice, refused(0), refused(0, 0), nil},
		{"a refusal of another message", dropTwice, refused(0), &conformpb.DopplerReassembleOutput{}, []string{"events (MUST)"}},
		{"percentiles by another method", latency([2]uint64{10, 1}, [2]uint64{30, 1}), lat(9), lat(29), nil},
		{"percentiles of equal ages", latency([2]uint64{10, 1}, [2]uint64{20, 11}), lat(9), lat(29), []string{"maxNs (MUST)", "p50Ns (MUST)", "p99Ns (MUST)"}},
		{"a non-minimal header", &conformpb.TlvEncodeInput{Tree: &conformpb.TlvNode{Type: 1, Payload: []byte{7}}},
			&conformpb.TlvEncodeOutput{Frame: tlvBytes(1, 0, []byte{7})}, &conformpb.TlvEncodeOutput{Frame: nonMin}, []string{"frame (SHOULD)"}},
		{"a wrong length", &conformpb.TlvEncodeInput{Tree: &conformpb.TlvNode{Type: 1, Payload: []byte{7}}},
			&conformpb.TlvEncodeOutput{Frame: tlvBytes(1, 0, []byte{7})}, &conformpb.TlvEncodeOutput{Frame: []byte{1, 0, 2, 0, 7}}, []string{"frame (MUST)"}},
	} {
		var got []string
		for _, d := range Diff(tc.in, tc.want, tc.got, Options{}) {
			got = append(got, d.Path+" ("+string(d.Level)+")")
		}
		if strings.Join(got, "; ") != strings.Join(tc.diffs, "; ") {
			t.Errorf("%s: differences %q, want %q", tc.name, got, tc.diffs)
		}
	}
}

// TestVaryIsEqual: a varied answer differs from the original in bytes and
// not by the declaration.
func TestVaryIsEqual(t *testing.T) {
	in := &conformpb.ReadInput{Chunks: []*conformpb.Blob{{Data: []byte{0, 0, 0, 9}}}, EndOfStream: true}
	orig := &conformpb.ReadOutput{Yields: []*conformpb.ChunkYield{{}}, End: conformpb.ReadEnd_READ_END_TRUNCATED, Buffered: 4}
	r := rand.New(rand.NewPCG(1, 2))
	for range 20 {
		v := proto.Clone(orig)
		Vary(in, v, r)
		if proto.Equal(v, orig) {
			t.Fatal("Vary changed nothing where the trailing yields entry is open")
		}
		if ds := Diff(in, orig, v, Options{}); len(ds) > 0 {
			t.Fatalf("a varied answer differs: %v", ds)
		}
	}
}

func TestDifferencesFilters(t *testing.T) {
	ds := Differences{{Path: "yields[2].frames[0].bytes", Level: MUST}, {Path: "buffered", Level: SHOULD}}
	if got := ds.Under("yields.frames"); len(got) != 1 || got[0].Path != "yields[2].frames[0].bytes" {
		t.Errorf("Under: %v", got)
	}
	if got := ds.At(SHOULD); len(got) != 1 || got[0].Path != "buffered" {
		t.Errorf("At: %v", got)
	}
	if got := ErasePositions("yields[2].frames[0].bytes"); got != "yields.frames.bytes" {
		t.Errorf("ErasePositions: %q", got)
	}
}
