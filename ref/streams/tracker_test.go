package streams_test

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/conform-suite/conform/ref/streams"
)

// arrival is one sample arriving on one connection. Its publish timestamp
// is its sequence, as in the Rust tests the worked examples come from, so a
// break's _ns fields read like its sequences.
type arrival struct {
	conn streams.ConnID
	ref  uint32
	seq  uint64
}

func (a arrival) sample() streams.Sample {
	return streams.Sample{StreamRef: a.ref, Sequence: a.seq, MonotonicNs: a.seq}
}

// oneStream is the arrivals of one stream on one connection.
func oneStream(seqs ...uint64) []arrival {
	out := make([]arrival, len(seqs))
	for i, s := range seqs {
		out[i] = arrival{conn: 1, ref: 1, seq: s}
	}
	return out
}

func feed(t *streams.Tracker, as []arrival) []streams.Outcome {
	outs := make([]streams.Outcome, len(as))
	for i, a := range as {
		outs[i] = t.Observe(a.conn, a.sample())
	}
	return outs
}

// gapFigures is the four columns the worked examples print.
type gapFigures struct {
	Missing, Breaks, Duplicated, Reordered uint64
}

func figures(c streams.Counters) gapFigures {
	return gapFigures{c.Missing, c.Breaks, c.Duplicated, c.Reordered}
}

// TestWorkedExampleGapCounting is every row of ranvier-streams §3.8's first
// table.
func TestWorkedExampleGapCounting(t *testing.T) {
	tests := []struct {
		name string
		seqs []uint64
		want gapFigures
	}{
		{"in order (gap.rs:266-273)", []uint64{1, 2, 3, 4, 5}, gapFigures{0, 0, 0, 0}},
		{"one missing (gap.rs:276-295)", []uint64{1, 2, 4}, gapFigures{1, 1, 0, 0}},
		{"a long gap (gap.rs:297-306)", []uint64{1, 500}, gapFigures{498, 1, 0, 0}},
		{"scattered singles (gap.rs:308-315)", []uint64{1, 3, 5, 7}, gapFigures{3, 3, 0, 0}},
		{"joined part way (gap.rs:317-326)", []uint64{5000, 5001, 5002}, gapFigures{0, 0, 0, 0}},
		{"late arrival credited (gap.rs:328-344)", []uint64{1, 2, 4, 3}, gapFigures{0, 1, 0, 1}},
		{"duplicate (gap.rs:346-357)", []uint64{1, 2, 3, 2}, gapFigures{0, 0, 1, 0}},
		{"beyond the window (gap.rs:359-405)", []uint64{1, 200, 2}, gapFigures{198, 1, 0, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := streams.NewTracker()
			feed(tr, oneStream(tt.seqs...))
			c := tr.Counters()
			if diff := cmp.Diff(tt.want, figures(c)); diff != "" {
				t.Errorf("%v: figures (-want +got):\n%s", tt.seqs, diff)
			}
			if c.Streams != 1 {
				t.Errorf("%v: streams = %d, want 1", tt.seqs, c.Streams)
			}
		})
	}
}

// TestBreakRecord checks §3.3's break contents against §3.8's printed one:
// after 2, before 4, missing 1, after_ns 2, before_ns 4.
func TestBreakRecord(t *testing.T) {
	tr := streams.NewTracker()
	if c := tr.Counters(); c.LastBreak != nil {
		t.Fatalf("LastBreak before any gap = %+v, want nil", *c.LastBreak)
	}
	feed(tr, oneStream(1, 2, 4))
	want := &streams.Break{Conn: 1, StreamRef: 1, After: 2, Before: 4, Missing: 1, AfterNs: 2, BeforeNs: 4}
	if diff := cmp.Diff(want, tr.Counters().LastBreak); diff != "" {
		t.Errorf("break (-want +got):\n%s", diff)
	}

	// The timestamps are the samples' publish timestamps, not their
	// sequences: give them distinct values to be sure.
	tr = streams.NewTracker()
	tr.Observe(7, streams.Sample{StreamRef: 3, Sequence: 10, MonotonicNs: 1000, SourceNs: 55})
	tr.Observe(7, streams.Sample{StreamRef: 3, Sequence: 13, MonotonicNs: 1300, SourceNs: 66})
	want = &streams.Break{Conn: 7, StreamRef: 3, After: 10, Before: 13, Missing: 2, AfterNs: 1000, BeforeNs: 1300}
	if diff := cmp.Diff(want, tr.Counters().LastBreak); diff != "" {
		t.Errorf("break with distinct timestamps (-want +got):\n%s", diff)
	}
}

// TestMostRecentBreakKept: §3.3 requires at least the most recent break; a
// late arrival credits missing but neither removes nor rewrites it (§3.4).
func TestMostRecentBreakKept(t *testing.T) {
	tr := streams.NewTracker()
	feed(tr, oneStream(1, 3, 10, 9))
	c := tr.Counters()
	want := &streams.Break{Conn: 1, StreamRef: 1, After: 3, Before: 10, Missing: 6, AfterNs: 3, BeforeNs: 10}
	if diff := cmp.Diff(want, c.LastBreak); diff != "" {
		t.Errorf("last break (-want +got):\n%s", diff)
	}
	if c.Breaks != 2 || c.Missing != 6 {
		t.Errorf("breaks, missing = %d, %d; want 2, 6", c.Breaks, c.Missing)
	}
}

// TestReorderWindow walks the edges of §3.4: distance = highest - sequence,
// a duplicate only while distance < 64, and reordered-without-credit at 64
// and beyond.
func TestReorderWindow(t *testing.T) {
	if streams.ReorderWindow != 64 {
		t.Fatalf("ReorderWindow = %d; §3.4 says it MUST be 64", streams.ReorderWindow)
	}
	tests := []struct {
		name string
		seqs []uint64
		last streams.Outcome
		want gapFigures
	}{
		{"unseen at distance 63 is credited", []uint64{1, 65, 2}, streams.Reordered, gapFigures{62, 1, 0, 1}},
		{"unseen at distance 64 is not credited", []uint64{1, 66, 2}, streams.Beyond, gapFigures{64, 1, 0, 1}},
		{"seen at distance 63 is a duplicate", []uint64{1, 2, 65, 2}, streams.Duplicate, gapFigures{62, 1, 1, 0}},
		{"seen at distance 64 is reordered, never a duplicate", []uint64{1, 2, 66, 2}, streams.Beyond, gapFigures{63, 1, 0, 1}},
		{"the high-water mark itself is a duplicate", []uint64{1, 2, 2}, streams.Duplicate, gapFigures{0, 0, 1, 0}},
		{"a first sample repeated is a duplicate", []uint64{9, 9}, streams.Duplicate, gapFigures{0, 0, 1, 0}},
		{"behind the first sample: reordered, missing saturates", []uint64{10, 4}, streams.Reordered, gapFigures{0, 0, 0, 1}},
		{"credited twice is a duplicate the second time", []uint64{1, 4, 2, 2}, streams.Duplicate, gapFigures{1, 1, 1, 1}},
		{"a step of exactly 64 empties the window", []uint64{1, 2, 65, 1}, streams.Beyond, gapFigures{62, 1, 0, 1}},
		{"a step of 63 keeps the old mark at distance 63", []uint64{1, 64, 1}, streams.Duplicate, gapFigures{62, 1, 1, 0}},
		{"breaks are never credited back", []uint64{1, 3, 2}, streams.Reordered, gapFigures{0, 1, 0, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := streams.NewTracker()
			outs := feed(tr, oneStream(tt.seqs...))
			if got := outs[len(outs)-1]; got != tt.last {
				t.Errorf("%v: last outcome = %v, want %v", tt.seqs, got, tt.last)
			}
			if diff := cmp.Diff(tt.want, figures(tr.Counters())); diff != "" {
				t.Errorf("%v: figures (-want +got):\n%s", tt.seqs, diff)
			}
		})
	}
}

// TestUint64Edges: nothing wraps. A step to the top of the range is one
// break; missing saturates rather than wrapping (a reconstruction: §3.3 is
// silent past 2^64-1); a distance across the whole range is beyond the
// window.
func TestUint64Edges(t *testing.T) {
	const top = math.MaxUint64
	tests := []struct {
		name string
		as   []arrival
		want gapFigures
	}{
		{"in order at the top", oneStream(top-2, top-1, top), gapFigures{0, 0, 0, 0}},
		{"1 then the top", oneStream(1, top), gapFigures{top - 2, 1, 0, 0}},
		{"the top then 1", oneStream(top, 1), gapFigures{0, 0, 0, 1}},
		{"top then top-63, unseen", oneStream(top, top-63), gapFigures{0, 0, 0, 1}},
		{"missing saturates across streams", []arrival{
			{1, 1, 1}, {1, 1, top}, {1, 2, 1}, {1, 2, top},
		}, gapFigures{top, 2, 0, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := streams.NewTracker()
			feed(tr, tt.as)
			if diff := cmp.Diff(tt.want, figures(tr.Counters())); diff != "" {
				t.Errorf("figures (-want +got):\n%s", diff)
			}
		})
	}
}

// TestTwoPublishersOneName is §2.4's worked example in both forms: two
// streams of one process (two references, one connection) and two processes
// whose streams are both reference 1 (one reference, two connections).
func TestTwoPublishersOneName(t *testing.T) {
	tests := []struct {
		name string
		as   []arrival
	}{
		{"same process (delivery.rs:454-470, gap.rs:408-420)", []arrival{
			{1, 1, 1}, {1, 2, 1}, {1, 1, 2}, {1, 2, 2}, {1, 1, 3}, {1, 2, 3},
		}},
		{"different processes (gap.rs:423-437)", []arrival{
			{1, 1, 1}, {2, 1, 1}, {1, 1, 2}, {2, 1, 2}, {1, 1, 3}, {2, 1, 3},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := streams.NewTracker()
			feed(tr, tt.as)
			c := tr.Counters()
			if diff := cmp.Diff(gapFigures{}, figures(c)); diff != "" {
				t.Errorf("figures (-want +got):\n%s", diff)
			}
			if c.Streams != 2 {
				t.Errorf("streams = %d, want 2", c.Streams)
			}
		})
	}
}

// TestTwoStreamsOneLosing is §3.8's two-streams example (gap.rs:451-462):
// stream 1 delivers 1, 2, 3 and stream 2 delivers 1 then 9.
func TestTwoStreamsOneLosing(t *testing.T) {
	tr := streams.NewTracker()
	feed(tr, []arrival{{1, 1, 1}, {1, 2, 1}, {1, 1, 2}, {1, 1, 3}, {1, 2, 9}})
	c := tr.Counters()
	if c.Missing != 7 || c.Breaks != 1 {
		t.Errorf("missing, breaks = %d, %d; want 7, 1", c.Missing, c.Breaks)
	}
	if c.LastBreak == nil || c.LastBreak.Before != 9 || c.LastBreak.StreamRef != 2 {
		t.Errorf("last break = %+v, want before 9 on stream 2", c.LastBreak)
	}
	if c.Streams != 2 {
		t.Errorf("streams = %d, want 2", c.Streams)
	}
}

// TestNotCounted is each case of §3.6 that a tracker sees: reference 0 or
// sequence 0 arrives and is otherwise left alone.
func TestNotCounted(t *testing.T) {
	tests := []struct {
		name string
		as   []arrival
		want streams.Counters
	}{
		{"stream_ref 0", []arrival{{1, 0, 5}}, streams.Counters{Arrived: 1, Untracked: 1}},
		{"sequence 0", []arrival{{1, 3, 0}}, streams.Counters{Arrived: 1, Untracked: 1}},
		{"both 0", []arrival{{1, 0, 0}}, streams.Counters{Arrived: 1, Untracked: 1}},
		{"sequence 0 inside a stream changes nothing", []arrival{{1, 1, 1}, {1, 1, 0}, {1, 1, 2}},
			streams.Counters{Arrived: 3, Untracked: 1, Streams: 1}},
		{"stream_ref 0 between a stream's samples", []arrival{{1, 1, 1}, {1, 0, 7}, {1, 1, 2}},
			streams.Counters{Arrived: 3, Untracked: 1, Streams: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := streams.NewTracker()
			outs := feed(tr, tt.as)
			if diff := cmp.Diff(tt.want, tr.Counters()); diff != "" {
				t.Errorf("counters (-want +got):\n%s", diff)
			}
			for i, a := range tt.as {
				if (a.ref == 0 || a.seq == 0) != (outs[i] == streams.Untracked) {
					t.Errorf("arrival %d %+v: outcome %v", i, a, outs[i])
				}
			}
			if tr.Pairs() != int(tt.want.Streams) {
				t.Errorf("Pairs() = %d, want %d", tr.Pairs(), tt.want.Streams)
			}
		})
	}
}

// TestKeyedOnPair: §2.2 keys on (connection, stream_ref). The same reference
// on two connections is two streams; two references on one connection are
// two streams.
func TestKeyedOnPair(t *testing.T) {
	tr := streams.NewTracker()
	outs := feed(tr, []arrival{{1, 1, 5}, {2, 1, 5}, {1, 2, 5}, {2, 2, 5}})
	for i, o := range outs {
		if o != streams.First {
			t.Errorf("arrival %d: %v, want first", i, o)
		}
	}
	if c := tr.Counters(); c.Streams != 4 || c.Duplicated != 0 {
		t.Errorf("streams, duplicated = %d, %d; want 4, 0", c.Streams, c.Duplicated)
	}
}

// TestMissingIsPerTracker pins a consequence of §3.4 read literally:
// missing is one figure per subscription, so crediting back a sample that
// arrived behind its stream's first-seen mark lowers a figure another
// stream raised. Rust's tracker, which §3.4 is read off, does the same.
func TestMissingIsPerTracker(t *testing.T) {
	tr := streams.NewTracker()
	feed(tr, []arrival{{1, 1, 1}, {1, 1, 5}, {1, 2, 10}, {1, 2, 9}})
	if diff := cmp.Diff(gapFigures{2, 1, 0, 1}, figures(tr.Counters())); diff != "" {
		t.Errorf("figures (-want +got):\n%s", diff)
	}
}

func TestOutcomeString(t *testing.T) {
	for o := streams.Untracked; o <= streams.Beyond; o++ {
		if s := o.String(); s == "" || s == "outcome(?)" {
			t.Errorf("Outcome(%d).String() = %q", o, s)
		}
	}
	if s := streams.Outcome(200).String(); s != "outcome(?)" {
		t.Errorf("unknown outcome string = %q", s)
	}
}
