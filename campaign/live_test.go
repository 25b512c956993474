package campaign

import (
	"context"
	"testing"
	"time"

	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	messagepb "github.com/conform-suite/conform/proto/ranvier/message/v1"
	"github.com/conform-suite/conform/ref/wire"
	"github.com/conform-suite/conform/sut/builtin"
	"github.com/conform-suite/conform/sut/impl"
	"github.com/conform-suite/conform/sut/mutant"
	"google.golang.org/protobuf/proto"
)

// TestLiveSubscribeReports plays one connection to the reference: a Sample
// frame, a frame that does not decode, then the end of the stream; the
// report must count what arrived.
func TestLiveSubscribeReports(t *testing.T) {
	ref := impl.Reference()
	sample, _ := proto.Marshal(&messagepb.Frame{Payload: &messagepb.Frame_Sample{Sample: &messagepb.Sample{StreamRef: 1, Sequence: 1}}})
	f1, _ := wire.AppendFrame(nil, sample)
	f2, _ := wire.AppendFrame(nil, []byte{0xff, 0xff})
	rep, err := subscribeOnce(context.Background(), [][]byte{f1, f2}, func(ctx context.Context, req *conformpb.Request) (*conformpb.Response, error) {
		return ref.Handle(ctx, req), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.GetConnections()) != 1 {
		t.Fatalf("report %v: want one connection", rep)
	}
	c := rep.Connections[0]
	if c.Samples != 1 || c.Unreadable != 1 || c.State != conformpb.LiveConnectionState_LIVE_CONNECTION_STATE_END_OF_STREAM {
		t.Errorf("connection %v: want 1 sample, 1 unreadable frame, end of stream", c)
	}
}

// TestLivePublishMutants runs live.publish against the publisher mutants
// whose bug a single subscriber sees without backpressure: each must give a
// finding within a few dozen inputs. (publisher-resends-whole-buffer needs a
// subscriber that pushes back, which this target does not do.)
func TestLivePublishMutants(t *testing.T) {
	pool := testSeeds(t)
	tg, ok := Lookup("live.publish")
	if !ok {
		t.Fatal("no live.publish target")
	}
	for _, name := range []string{"publisher-announces-first-stream-only", "publisher-repeats-announcements", "publisher-sends-before-request", "publisher-atomic-sequence"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			m, ok := mutant.Lookup(name)
			if !ok {
				t.Fatalf("no mutant %s", name)
			}
			spec := "builtin:mutant/" + name
			e := NewEngine(builtin.New(spec, m.Impl()), spec, pool, 1, 10*time.Second, nil)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var found *Finding
			e.RunRange(ctx, tg, 0, 48, func(f *Finding) error { found = f; cancel(); return nil }, nil)
			if found == nil {
				t.Fatalf("no finding in %d inputs", e.Execs)
			}
			t.Logf("%s: %s", found.Signature, found.Detail)
		})
	}
}

// TestLivePublishReferenceClean plays a few publish scripts against the
// reference on both sides: the decoded transcripts must agree.
func TestLivePublishReferenceClean(t *testing.T) {
	t.Parallel()
	pool := testSeeds(t)
	tg, _ := Lookup("live.publish")
	e := NewEngine(builtin.New("builtin:reference", impl.Reference()), "builtin:reference", pool, 5, 10*time.Second, nil)
	err := e.RunRange(context.Background(), tg, 0, 24, func(f *Finding) error {
		t.Errorf("the reference against itself: %s: %s\n%s", f.Signature, f.Detail, f.Diff)
		return nil
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
}

// TestDopplerLiveReferenceClean plays generated messages to a SUB socket
// of the reference on both sides: what the two delivered and refused must
// agree.
func TestDopplerLiveReferenceClean(t *testing.T) {
	t.Parallel()
	pool := testSeeds(t)
	tg, _ := Lookup("doppler.live-subscribe")
	e := NewEngine(builtin.New("builtin:reference", impl.Reference()), "builtin:reference", pool, 5, 10*time.Second, nil)
	e.Broker = broker.URL
	n := uint64(len(pool.For(tg))) + 32
	err := e.RunRange(context.Background(), tg, 0, n, func(f *Finding) error {
		t.Errorf("the reference against itself: %s: %s\n%s", f.Signature, f.Detail, f.Diff)
		return nil
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if e.Skipped > n/2 {
		t.Errorf("%d of %d inputs were not judged", e.Skipped, e.Execs)
	}
	t.Logf("%d inputs, %d not judged", e.Execs, e.Skipped)
}

// TestDopplerLiveMutants runs doppler.live-subscribe against receiver
// mutants: each must give a finding within the seeds and a few dozen
// inputs, and the finding must replay on a fresh instance of the mutant
// and not on the reference.
func TestDopplerLiveMutants(t *testing.T) {
	pool := testSeeds(t)
	tg, _ := Lookup("doppler.live-subscribe")
	budget := uint64(len(pool.For(tg))) + 64
	for _, name := range []string{"names-misderived", "magic-only-v1", "payload-bytes-unchecked", "repeated-index-appended", "frame-totals-not-set", "refusals-coded-dp-err"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			m, ok := mutant.Lookup(name)
			if !ok {
				t.Fatalf("no mutant %s", name)
			}
			spec := "builtin:mutant/" + name
			e := NewEngine(builtin.New(spec, m.Impl()), spec, pool, 1, 10*time.Second, nil)
			e.Broker = broker.URL
			// A socket that receives nothing costs a whole collect wait per
			// minimisation step.
			e.MinimizeFor = 10 * time.Second
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var found *Finding
			e.RunRange(ctx, tg, 0, budget, func(f *Finding) error { found = f; cancel(); return nil }, nil)
			if found == nil {
				t.Fatalf("no finding in %d inputs", e.Execs)
			}
			t.Logf("%s: %s", found.Signature, found.Detail)
			again := NewEngine(builtin.New(spec, m.Impl()), spec, pool, 1, 10*time.Second, nil)
			again.Broker = broker.URL
			if ok, _, err := again.Replay(context.Background(), found); err != nil || !ok {
				t.Errorf("finding %s does not replay against the mutant: %v", found.Signature, err)
			}
			clean := NewEngine(builtin.New("builtin:reference", impl.Reference()), "builtin:reference", pool, 1, 10*time.Second, nil)
			clean.Broker = broker.URL
			if ok, others, _ := clean.Replay(context.Background(), found); ok || len(others) > 0 {
				t.Errorf("finding %s reproduces against the reference", found.Signature)
			}
		})
	}
}
