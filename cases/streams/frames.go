package streams

import (
	"fmt"

	"github.com/conform-suite/conform/cases"
	"github.com/conform-suite/conform/corpus"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/proto/conform/v1/meaning"
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
	// One entry per connection, each naming its connection, with the
	// counts f selects.
	paths := []string{"connections", "-connections.announcements", "-connections.frames"}
	for _, c := range []struct {
		bit  cfields
		path string
	}{{cSamples, "-connections.samples"}, {cUnreadable, "-connections.unreadable"}, {cClosed, "-connections.closed"}} {
		if f&c.bit == 0 {
			paths = append(paths, c.path)
		}
	}
	for i, out := range receiveConnections(t, ins) {
		want := &conformpb.ConnectionsOutput{}
		for _, c := range vs[i].ExpectConnections {
			want.Connections = append(want.Connections, &conformpb.ConnectionCounts{Connection: c.Conn, Samples: c.Samples, Unreadable: c.Unreadable, Closed: c.Closed})
		}
		t.CheckAnswer(what+": "+vs[i].Title, describeConnections(ins[i]), ins[i], want, out, meaning.MUST, paths...)
	}
}

// frames is ranvier-streams §3.6a: frames that carry nothing readable.
func frames(k *cases.Kit, vecs *vectors) []cases.Case {
	return []cases.Case{
		k.Must(func() cases.Case {
			vs := vecs.List("unreadable-one-of-each", "unreadable-then-sample")
			return cases.Case{
				ID:    "streams/3.6a/unreadable-frames-counted",
				Title: "An undecodable payload and a Frame with no variant are each counted as unreadable",
				Spec:  "ranvier-streams §3.6a",
				Requirements: []string{"ranvier-streams§3.6a#2", "ranvier-streams§3.6a#7",
					"reconstructed§contradictions#1"},
				Run: func(t *cases.T) {
					connectionVectors(t, "frames that carry nothing readable", cSamples|cUnreadable, vs...)
				},
			}
		}),
		k.Must(func() cases.Case {
			vs := vecs.List("unreadable-then-sample", "unreadable-one-of-each")
			return cases.Case{
				ID:           "streams/3.6a/unreadable-frames-skipped",
				Title:        "An unreadable frame is skipped and the connection kept: the sample after it is delivered",
				Spec:         "ranvier-streams §3.6a",
				Requirements: []string{"ranvier-streams§3.6a#1", "ranvier-wire§6.3#1"},
				Run: func(t *cases.T) {
					connectionVectors(t, "a connection carrying unreadable frames", cSamples|cClosed, vs...)
				},
			}
		}),
		k.Must(func() cases.Case {
			v := vecs.Get("unreadable-per-connection")
			return cases.Case{
				ID:           "streams/3.6a/count-is-per-connection",
				Title:        "The unreadable count belongs to the connection the frame arrived on, not to the subscription",
				Spec:         "ranvier-streams §3.6a",
				Requirements: []string{"ranvier-streams§3.6a#3", "reconstructed§contradictions#1"},
				Run: func(t *cases.T) {
					connectionVectors(t, "three interleaved connections", cSamples|cUnreadable|cClosed, v)
				},
			}
		}),
		k.Must(func() cases.Case {
			v := vecs.Get("misaligned-not-counted")
			return cases.Case{
				ID:    "streams/3.6a/misaligned-stream-not-counted",
				Title: "A frame that misaligns the byte stream closes the connection and is not counted as unreadable",
				Spec:  "ranvier-streams §3.6a",
				Requirements: []string{"ranvier-streams§3.6a#5", "ranvier-streams§3.6a#6", "ranvier-wire§2#2",
					"ranvier-wire§6.2#2"},
				Run: func(t *cases.T) {
					connectionVectors(t, "a prefix above the ceiling", cSamples|cUnreadable|cClosed, v)
				},
			}
		}),
	}
}
