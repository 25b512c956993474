package streams_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/conform-suite/conform/ref/streams"
)

// TestUnreadableFrames is §3.6a with reconstructed§contradictions's first row: both
// kinds of unreadable frame are skipped and counted, per connection.
func TestUnreadableFrames(t *testing.T) {
	type frame struct {
		conn streams.ConnID
		kind streams.FrameKind
	}
	tests := []struct {
		name   string
		frames []frame
		want   map[streams.ConnID]streams.FrameCounts
	}{
		{
			name:   "one of each kind, nothing delivered (transport.rs:773)",
			frames: []frame{{1, streams.FrameUndecodable}, {1, streams.FrameNoVariant}},
			want:   map[streams.ConnID]streams.FrameCounts{1: {Unreadable: 2}},
		},
		{
			name: "interleaved with readable frames",
			frames: []frame{
				{1, streams.FrameAnnounce}, {1, streams.FrameSample}, {1, streams.FrameNoVariant},
				{1, streams.FrameSample}, {1, streams.FrameUndecodable},
			},
			want: map[streams.ConnID]streams.FrameCounts{1: {Samples: 2, Announcements: 1, Unreadable: 2}},
		},
		{
			name: "the count is the connection's",
			frames: []frame{
				{1, streams.FrameNoVariant}, {2, streams.FrameSample}, {2, streams.FrameUndecodable},
				{2, streams.FrameUndecodable},
			},
			want: map[streams.ConnID]streams.FrameCounts{
				1: {Unreadable: 1}, 2: {Samples: 1, Unreadable: 2}, 3: {},
			},
		},
		{
			name:   "a kind this build does not know carries nothing readable",
			frames: []frame{{4, streams.FrameKind(99)}},
			want:   map[streams.ConnID]streams.FrameCounts{4: {Unreadable: 1}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var fc streams.FrameCounter
			for _, f := range tt.frames {
				pass := fc.Count(f.conn, f.kind)
				readable := f.kind == streams.FrameSample || f.kind == streams.FrameAnnounce
				if pass != readable {
					t.Errorf("Count(%d, %d) = %v, want %v", f.conn, f.kind, pass, readable)
				}
			}
			for conn, want := range tt.want {
				if diff := cmp.Diff(want, fc.Counts(conn)); diff != "" {
					t.Errorf("connection %d (-want +got):\n%s", conn, diff)
				}
			}
		})
	}
}
