package corpus_test

import (
	"testing"

	"github.com/conform-suite/conform/corpus"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	messagepb "github.com/conform-suite/conform/proto/ranvier/message/v1"
	"github.com/conform-suite/conform/ref/streams"
	"github.com/conform-suite/conform/ref/wire"
	"github.com/conform-suite/conform/sut/impl"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"
)

// TestReferenceReproducesStreamsVectors proves that the streams oracle
// agrees with every golden vector: its tracker's counters and last break,
// its subscription's queue and gap counters, and its per-connection frame
// counts. The vectors were written from ranvier-streams, so a disagreement
// is a bug in one or the other, never something to regenerate.
func TestReferenceReproducesStreamsVectors(t *testing.T) {
	set, err := corpus.Streams()
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range set.All() {
		t.Run(v.ID, func(t *testing.T) {
			inputs := 0
			if v.Expect != nil {
				inputs++
				checkTracker(t, v)
			}
			if v.Queue != nil {
				inputs++
				checkQueue(t, v)
			}
			if v.Segments != nil {
				inputs++
				checkConnections(t, v)
			}
			if v.Announcement != nil {
				inputs++
				checkAnnouncement(t, v)
			}
			if inputs != 1 {
				t.Fatalf("a streams vector has exactly one input and expectation; this one has %d", inputs)
			}
		})
	}
}

// TestStreamsCorpusCoversTheSpec names the vectors issue 3 requires: every
// row of §3.8's tables, the §2.4 examples, the two-streams example, and each
// §3.6 case.
func TestStreamsCorpusCoversTheSpec(t *testing.T) {
	set, err := corpus.Streams()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{
		"gaps-in-order", "gaps-one-missing", "gaps-jump-to-500", "gaps-every-other",
		"gaps-joined-late", "gaps-late-fills", "gaps-duplicate", "gaps-beyond-window",
		"two-publishers-same-process", "two-publishers-different-processes", "two-streams-one-loses",
		"depth4-drop-oldest", "depth4-drop-newest", "depth4-upstream-loss",
		"untracked-stream-ref-zero", "untracked-sequence-zero",
		"unreadable-one-of-each", "misaligned-not-counted",
	} {
		if _, ok := set.Lookup(corpus.StreamsVersion + "/" + name); !ok {
			t.Errorf("vector %s is missing", name)
		}
	}
}

type gapView struct {
	Arrived, Missing, Breaks, Duplicated, Reordered, Streams uint64
	LastBreak                                                *corpus.BreakExpect
}

func viewGaps(c streams.Counters, withBreak bool) gapView {
	g := gapView{Arrived: c.Arrived, Missing: c.Missing, Breaks: c.Breaks, Duplicated: c.Duplicated, Reordered: c.Reordered, Streams: c.Streams}
	if b := c.LastBreak; b != nil && withBreak {
		g.LastBreak = &corpus.BreakExpect{Conn: uint64(b.Conn), Ref: b.StreamRef, After: b.After, Before: b.Before,
			Missing: b.Missing, AfterNs: b.AfterNs, BeforeNs: b.BeforeNs}
	}
	return g
}

func checkTracker(t *testing.T, v *corpus.StreamsVector) {
	tr := streams.NewTracker()
	for _, a := range v.AllArrivals() {
		tr.Observe(streams.ConnID(a.Conn), streams.Sample{StreamRef: a.Ref, Sequence: a.Seq, MonotonicNs: a.Ns})
	}
	e := v.Expect
	want := gapView{e.Arrived, e.Missing, e.Breaks, e.Duplicated, e.Reordered, e.Streams, e.LastBreak}
	got := viewGaps(tr.Counters(), e.LastBreak != nil)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("counters (-want +got):\n%s", diff)
	}
	if e.Breaks == 0 && tr.Counters().LastBreak != nil {
		t.Errorf("no break expected, got %+v", *tr.Counters().LastBreak)
	}
}

func checkQueue(t *testing.T, v *corpus.StreamsVector) {
	opts := streams.Options{Depth: int(v.Queue.Depth)}
	switch v.Queue.Policy {
	case "drop-oldest":
		opts.Policy = streams.DropOldest
	case "drop-newest":
		opts.Policy = streams.DropNewest
	case "":
		opts.Policy = streams.DefaultPolicy
	default:
		t.Fatalf("policy %q unknown", v.Queue.Policy)
	}
	sub, err := streams.NewSubscription(opts)
	if err != nil {
		t.Fatal(err)
	}
	var read []uint64
	for _, st := range v.Queue.Steps {
		for _, seq := range st.Push {
			sub.Push(1, streams.Sample{StreamRef: 1, Sequence: seq, MonotonicNs: seq})
		}
		for range st.Pop {
			s, ok := sub.Pop()
			if !ok {
				break
			}
			read = append(read, s.Sequence)
		}
	}
	q, g := sub.Queue(), sub.Gaps()
	got := corpus.QueueExpect{Read: read, Delivered: q.Delivered, Dropped: q.Dropped, Readable: uint64(q.Readable), Missing: g.Missing, Breaks: g.Breaks}
	if diff := cmp.Diff(*v.ExpectQueue, got); diff != "" {
		t.Errorf("queue (-want +got):\n%s", diff)
	}
}

func checkConnections(t *testing.T, v *corpus.StreamsVector) {
	var counter streams.FrameCounter
	subs := map[uint64]*wire.Subscriber{}
	var order []uint64
	for _, seg := range v.Segments {
		sub := subs[seg.Conn]
		if sub == nil {
			sub = new(wire.Subscriber)
			subs[seg.Conn] = sub
			order = append(order, seg.Conn)
		}
		sub.Receive(seg.Bytes, func(ev wire.Event) {
			k := streams.FrameUndecodable
			switch {
			case ev.Action == wire.SkippedNoVariant:
				k = streams.FrameNoVariant
			case ev.Action == wire.Delivered && ev.Frame.GetSample() != nil:
				k = streams.FrameSample
			case ev.Action == wire.Delivered:
				k = streams.FrameAnnounce
			}
			counter.Count(streams.ConnID(seg.Conn), k)
		})
	}
	var got []corpus.ConnExpect
	for _, c := range order {
		fc := counter.Counts(streams.ConnID(c))
		got = append(got, corpus.ConnExpect{Conn: c, Samples: fc.Samples, Unreadable: fc.Unreadable, Closed: subs[c].Closed()})
		if fc.Unreadable != subs[c].Unreadable() {
			t.Errorf("connection %d: the frame counter says %d unreadable, the subscriber %d", c, fc.Unreadable, subs[c].Unreadable())
		}
	}
	if diff := cmp.Diff(v.ExpectConnections, got); diff != "" {
		t.Errorf("connections (-want +got):\n%s", diff)
	}
}

// checkAnnouncement reads the vector's StreamInfo as the reference reads an
// announcement (ranvier-streams §6.6) and compares the read with the one
// the vector states.
func checkAnnouncement(t *testing.T, v *corpus.StreamsVector) {
	m := new(messagepb.StreamInfo)
	if err := proto.Unmarshal(v.Announcement, m); err != nil {
		t.Fatalf("the announcement does not decode: %v", err)
	}
	want := new(conformpb.AnnouncementRead)
	if err := protojson.Unmarshal(v.ExpectRead, want); err != nil {
		t.Fatalf("expect_read: %v", err)
	}
	got := impl.AnnouncementRead(streams.ReadAnnouncement(impl.StreamInfoOf(m)))
	if diff := cmp.Diff(want, got, protocmp.Transform()); diff != "" {
		t.Errorf("read (-want +got):\n%s", diff)
	}
}
