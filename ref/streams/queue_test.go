package streams_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/conform-suite/conform/ref/streams"
)

// TestDepthFourTable is ranvier-streams §3.8's depth-4 table: ten samples
// published by one stream into a queue of depth 4.
//
// The third row is only consistent with depth 4 if the subscriber reads as
// samples arrive: five samples held unread would overflow four slots and
// drop one, yet the row prints dropped 0. The spec derives that row "from
// the rules above rather than read from a test"; this test drains after
// each push, the reading under which all five columns hold.
func TestDepthFourTable(t *testing.T) {
	tests := []struct {
		name     string
		policy   streams.Policy
		seqs     []uint64
		drain    bool
		readable []uint64
		queue    streams.QueueCounters
		gaps     gapFigures
	}{
		{
			name: "queue full, drop-oldest (delivery.rs:75-97)", policy: streams.DropOldest,
			seqs:     []uint64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10},
			readable: []uint64{7, 8, 9, 10},
			queue:    streams.QueueCounters{Delivered: 10, Dropped: 6, Readable: 4, Peak: 4, Depth: 4},
		},
		{
			name: "queue full, drop-newest (delivery.rs:101-123)", policy: streams.DropNewest,
			seqs:     []uint64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10},
			readable: []uint64{1, 2, 3, 4},
			queue:    streams.QueueCounters{Delivered: 4, Dropped: 6, Readable: 4, Peak: 4, Depth: 4},
		},
		{
			name: "six lost upstream (derived, §3.3)", policy: streams.DropOldest,
			seqs: []uint64{1, 2, 3, 4, 10}, drain: true,
			readable: []uint64{1, 2, 3, 4, 10},
			queue:    streams.QueueCounters{Delivered: 5, Dropped: 0, Readable: 0, Peak: 1, Depth: 4},
			gaps:     gapFigures{Missing: 5, Breaks: 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sub, err := streams.NewSubscription(streams.Options{Depth: 4, Policy: tt.policy})
			if err != nil {
				t.Fatal(err)
			}
			var read []uint64
			for _, seq := range tt.seqs {
				sub.Push(1, streams.Sample{StreamRef: 1, Sequence: seq, MonotonicNs: seq})
				if tt.drain {
					read = append(read, drain(sub)...)
				}
			}
			q := sub.Queue()
			if !tt.drain {
				read = drain(sub)
			}
			if diff := cmp.Diff(tt.readable, read); diff != "" {
				t.Errorf("readable (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.queue, q); diff != "" {
				t.Errorf("queue counters (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.gaps, figures(sub.Gaps())); diff != "" {
				t.Errorf("gap figures (-want +got):\n%s", diff)
			}
			// §3.8: what remains readable is delivered - dropped under
			// drop-oldest and delivered under drop-newest, when nothing has
			// been read yet.
			if !tt.drain {
				want := q.Delivered
				if tt.policy == streams.DropOldest {
					want -= q.Dropped
				}
				if uint64(q.Readable) != want {
					t.Errorf("readable %d, want %d from delivered and dropped", q.Readable, want)
				}
			}
		})
	}
}

func drain(sub *streams.Subscription) []uint64 {
	var out []uint64
	for {
		s, ok := sub.Pop()
		if !ok {
			return out
		}
		out = append(out, s.Sequence)
	}
}

// TestOptions: §5.2 refuses the two named but unimplemented policies and a
// depth of 0, each with its own error; §3.5 sets the defaults.
func TestOptions(t *testing.T) {
	if got, want := streams.DefaultOptions(), (streams.Options{Depth: 1024, Policy: streams.DropOldest}); got != want {
		t.Errorf("DefaultOptions() = %+v, want %+v", got, want)
	}
	tests := []struct {
		opts streams.Options
		want error
	}{
		{streams.DefaultOptions(), nil},
		{streams.Options{Depth: 1, Policy: streams.DropNewest}, nil},
		{streams.Options{Depth: 4, Policy: streams.Block}, streams.ErrPolicyNotImplemented},
		{streams.Options{Depth: 4, Policy: streams.Halt}, streams.ErrPolicyNotImplemented},
		{streams.Options{Depth: 4, Policy: streams.Policy(9)}, streams.ErrUnknownPolicy},
		{streams.Options{Depth: 0, Policy: streams.DropOldest}, streams.ErrZeroDepth},
		{streams.Options{Depth: -1, Policy: streams.DropNewest}, streams.ErrZeroDepth},
		{streams.Options{}, streams.ErrZeroDepth},
	}
	for _, tt := range tests {
		sub, err := streams.NewSubscription(tt.opts)
		if !errors.Is(err, tt.want) {
			t.Errorf("NewSubscription(%+v) error = %v, want %v", tt.opts, err, tt.want)
		}
		if (err == nil) != (sub != nil) {
			t.Errorf("NewSubscription(%+v) = %v, %v: want exactly one", tt.opts, sub, err)
		}
		if err == nil && sub.Options() != tt.opts {
			t.Errorf("Options() = %+v, want %+v", sub.Options(), tt.opts)
		}
	}
}

func TestPolicyString(t *testing.T) {
	want := map[streams.Policy]string{
		streams.DropOldest: "drop-oldest", streams.DropNewest: "drop-newest",
		streams.Block: "block", streams.Halt: "halt", streams.Policy(7): "policy(7)",
	}
	for p, s := range want {
		if p.String() != s {
			t.Errorf("Policy(%d).String() = %q, want %q", p, p.String(), s)
		}
	}
}

// TestDropsAreNotMissing: §3.1 and §3.5 with several streams and reads
// interleaved. Everything published arrives, so missing stays 0 however
// much the queue throws away, and every discard is counted once (§5.4).
func TestDropsAreNotMissing(t *testing.T) {
	for _, p := range []streams.Policy{streams.DropOldest, streams.DropNewest} {
		sub, err := streams.NewSubscription(streams.Options{Depth: 3, Policy: p})
		if err != nil {
			t.Fatal(err)
		}
		var popped uint64
		for seq := uint64(1); seq <= 100; seq++ {
			sub.Push(1, streams.Sample{StreamRef: 1, Sequence: seq})
			sub.Push(2, streams.Sample{StreamRef: 1, Sequence: seq})
			if seq%7 == 0 {
				if _, ok := sub.Pop(); ok {
					popped++
				}
			}
		}
		g, q := sub.Gaps(), sub.Queue()
		if g.Missing != 0 || g.Breaks != 0 || g.Streams != 2 {
			t.Errorf("%v: gaps %+v, want clean with 2 streams", p, g)
		}
		if q.Dropped == 0 {
			t.Errorf("%v: nothing dropped; the test does not exercise the policy", p)
		}
		placed := q.Delivered
		if p == streams.DropOldest {
			placed -= q.Dropped // evicted after being placed
		}
		if placed != popped+uint64(q.Readable) {
			t.Errorf("%v: delivered %d, dropped %d, popped %d, readable %d do not add up",
				p, q.Delivered, q.Dropped, popped, q.Readable)
		}
		if p == streams.DropNewest && q.Delivered+q.Dropped != 200 {
			t.Errorf("%v: delivered+dropped = %d, want 200", p, q.Delivered+q.Dropped)
		}
	}
}

// TestPeak: §5.4's deepest-ever figure survives the queue draining.
func TestPeak(t *testing.T) {
	sub, _ := streams.NewSubscription(streams.Options{Depth: 8})
	for seq := uint64(1); seq <= 5; seq++ {
		sub.Push(1, streams.Sample{StreamRef: 1, Sequence: seq})
	}
	drain(sub)
	sub.Push(1, streams.Sample{StreamRef: 1, Sequence: 6})
	if q := sub.Queue(); q.Peak != 5 || q.Readable != 1 || sub.Len() != 1 {
		t.Errorf("peak %d, readable %d, len %d; want 5, 1, 1", q.Peak, q.Readable, sub.Len())
	}
}

// TestPopEmpty: an empty queue reports false and the zero Sample.
func TestPopEmpty(t *testing.T) {
	sub, _ := streams.NewSubscription(streams.DefaultOptions())
	if s, ok := sub.Pop(); ok || s.Sequence != 0 {
		t.Errorf("Pop on empty = %+v, %v", s, ok)
	}
}
