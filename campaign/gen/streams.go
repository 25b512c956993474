package gen

import (
	"fmt"

	"github.com/conform-suite/conform/corpus"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"google.golang.org/protobuf/proto"
)

// The streams suite's inputs: arrival sequences.

// Arrivals returns sequences near the reorder window's edges: runs, gaps,
// duplicates, reorders, two connections, zero references and sequences.
func (g *G) Arrivals() []*conformpb.Arrival {
	var out []*conformpb.Arrival
	seq := map[[2]uint64]uint64{}
	for n := g.IntN(40); n > 0; n-- {
		conn, ref := uint64(1+g.IntN(2)), uint32(1+g.IntN(2))
		if g.Chance(0.05) {
			ref = 0
		}
		k := [2]uint64{conn, uint64(ref)}
		s := seq[k]
		switch g.IntN(8) {
		case 0:
			s += uint64(1 + g.IntN(70)) // a gap, perhaps past the window
		case 1:
			if s > 0 {
				s -= uint64(g.IntN(int(min(s, 70)))) // late or duplicate
			}
		case 2:
			s = 0
		default:
			s++
		}
		if s > seq[k] {
			seq[k] = s
		}
		out = append(out, &conformpb.Arrival{Connection: conn, StreamRef: ref, Sequence: s, MonotonicTimestampNs: uint64(len(out)) * 1000})
	}
	return out
}

// Track generates an input of streams.track: one stream's arrivals.
func Track(g *G) proto.Message {
	return &conformpb.Track{Inputs: []*conformpb.TrackInput{{Name: "s", Arrivals: g.Arrivals()}}}
}

// StreamsVectors returns the bytes of the streams corpus vectors'
// connections, one a connection.
func StreamsVectors() ([]Raw, error) {
	ss, err := corpus.Streams()
	if err != nil {
		return nil, err
	}
	var out []Raw
	for _, v := range ss.All() {
		for i, seg := range v.Segments {
			out = append(out, Raw{fmt.Sprintf("vector:%s#%d", v.ID, i), seg.Bytes})
		}
	}
	return out, nil
}
