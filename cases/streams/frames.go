package streams

import (
	"fmt"

	"github.com/conform-suite/conform/cases"
	"github.com/conform-suite/conform/corpus"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/reports"
	"github.com/google/go-cmp/cmp"
)

// cfields selects what a connection case judges.
type cfields uint8

const (
	cSamples cfields = 1 << iota
	cUnreadable
	cClosed
)

func connectionsInput(v *corpus.StreamsVector) *conformpb.ConnectionsInput {
	in := new(conformpb.ConnectionsInput)
	for _, seg := range v.Segments {
		in.Segments = append(in.Segments, &conformpb.ConnectionSegment{Connection: seg.Conn, Bytes: &conformpb.Blob{Data: seg.Bytes}})
	}
	return in
}

func describeConnections(in *conformpb.ConnectionsInput) string {
	s := ""
	for i, seg := range in.Segments {
		if i > 0 {
			s += " | "
		}
		s += fmt.Sprintf("connection %d: %s", seg.Connection, corpus.FormatHex(seg.Bytes.GetData()))
	}
	return s
}

// connectionVectors plays every vector's connections to the SUT and judges
// the fields f of each connection's counts.
func connectionVectors(t *cases.T, what string, f cfields, vs ...*corpus.StreamsVector) {
	var ins []*conformpb.ConnectionsInput
	for _, v := range vs {
		ins = append(ins, connectionsInput(v))
	}
	for i, out := range receiveConnections(t, ins) {
		var want, got []corpus.ConnExpect
		only := func(c corpus.ConnExpect) corpus.ConnExpect {
			if f&cSamples == 0 {
				c.Samples = 0
			}
			if f&cUnreadable == 0 {
				c.Unreadable = 0
			}
			if f&cClosed == 0 {
				c.Closed = false
			}
			return c
		}
		for _, c := range vs[i].ExpectConnections {
			want = append(want, only(c))
		}
		for _, c := range out.Connections {
			got = append(got, only(corpus.ConnExpect{Conn: c.Connection, Samples: c.Samples, Unreadable: c.Unreadable, Closed: c.Closed}))
		}
		if !cmp.Equal(want, got) {
			t.Fail(reports.Evidence{Message: what + ": " + vs[i].Title, Input: describeConnections(ins[i]),
				Expected: fmt.Sprintf("%+v", want), Got: fmt.Sprintf("%+v", got), Diff: cmp.Diff(want, got)})
		}
	}
}

// frames is ranvier-streams §3.6a: frames that carry nothing readable.
func (s *suite) frames() []cases.Case {
	return []cases.Case{
		reconstructed(must(cases.Case{
			ID:      "streams/3.6a/unreadable-frames-counted",
			Title:   "An undecodable payload and a Frame with no variant are each counted as unreadable",
			Spec:    "ranvier-streams §3.6a; RECONSTRUCTED §4",
			Vectors: ids("unreadable-one-of-each", "unreadable-then-sample"),
			Run: func(t *cases.T) {
				connectionVectors(t, "frames that carry nothing readable", cSamples|cUnreadable, s.vecs("unreadable-one-of-each", "unreadable-then-sample")...)
			},
		})),
		must(cases.Case{
			ID:      "streams/3.6a/unreadable-frames-skipped",
			Title:   "An unreadable frame is skipped and the connection kept: the sample after it is delivered",
			Spec:    "ranvier-streams §3.6a",
			Vectors: ids("unreadable-then-sample", "unreadable-one-of-each"),
			Run: func(t *cases.T) {
				connectionVectors(t, "a connection carrying unreadable frames", cSamples|cClosed, s.vecs("unreadable-then-sample", "unreadable-one-of-each")...)
			},
		}),
		reconstructed(must(cases.Case{
			ID:      "streams/3.6a/count-is-per-connection",
			Title:   "The unreadable count belongs to the connection the frame arrived on, not to the subscription",
			Spec:    "ranvier-streams §3.6a; RECONSTRUCTED §4",
			Vectors: ids("unreadable-per-connection"),
			Run: func(t *cases.T) {
				connectionVectors(t, "three interleaved connections", cSamples|cUnreadable|cClosed, s.vec("unreadable-per-connection"))
			},
		})),
		must(cases.Case{
			ID:      "streams/3.6a/misaligned-stream-not-counted",
			Title:   "A frame that misaligns the byte stream closes the connection and is not counted as unreadable",
			Spec:    "ranvier-streams §3.6a",
			Vectors: ids("misaligned-not-counted"),
			Run: func(t *cases.T) {
				connectionVectors(t, "a prefix above the ceiling", cSamples|cUnreadable|cClosed, s.vec("misaligned-not-counted"))
			},
		}),
	}
}
