package campaign

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/conform-suite/conform/internal/waittest"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	messagepb "github.com/conform-suite/conform/proto/ranvier/message/v1"
	dp "github.com/conform-suite/conform/ref/doppler"
	"github.com/conform-suite/conform/ref/wire"
	"github.com/conform-suite/conform/suites"
	"github.com/conform-suite/conform/sut"
	"github.com/conform-suite/conform/sut/builtin"
	"github.com/conform-suite/conform/sut/impl"
	"github.com/nats-io/nats.go"
	"google.golang.org/protobuf/proto"
)

// TestLiveSubscribeReports plays one connection to the reference: a Sample
// frame, a frame that does not decode, then the end of the stream; the
// report must count what arrived.
func TestLiveSubscribeReports(t *testing.T) {
	t.Parallel()
	ref := suites.Default().Reference()
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

// liveEngine returns an engine for spec on the tests' broker.
func liveEngine(pool *Seeds, spec string, im *impl.Impl) *Engine {
	e := NewEngine(builtin.New(spec, im), testRegistry(), spec, pool, 1, 10*time.Second, nil)
	e.Broker = broker.URL
	return e
}

// TestLiveSubscribeCutShort: a report whose wait for the stream's end ran
// out is returned marked cut, never as a whole report.
func TestLiveSubscribeCutShort(t *testing.T) {
	t.Parallel()
	ref := suites.Default().Reference()
	sample, _ := proto.Marshal(&messagepb.Frame{Payload: &messagepb.Frame_Sample{Sample: &messagepb.Sample{StreamRef: 1, Sequence: 1}}})
	f1, _ := wire.AppendFrame(nil, sample)
	// The side's wait is said to have run out, as a side too slow to see
	// the stream's end within it reports.
	slow := func(ctx context.Context, req *conformpb.Request) (*conformpb.Response, error) {
		resp := ref.Handle(ctx, req)
		if r := resp.GetLive().GetReport(); r != nil {
			r.TimedOut = true
		}
		return resp, nil
	}
	rep, err := subscribeOnce(context.Background(), [][]byte{f1}, slow)
	if !errors.Is(err, errCut) {
		t.Fatalf("error %v, want the report marked cut", err)
	}
	if rep == nil {
		t.Error("no report: what came before the wait ran out is the SUT's to be judged on")
	}
}

// TestLiveMutants runs each live target against mutants of the side it
// drives: each must give a finding within the seeds and a few dozen
// inputs. Where the finding does not depend on timing it must also replay
// on a fresh instance of the mutant and not on the reference.
//
// live.publish's mutants are those a single subscriber sees without
// backpressure (publisher-resends-whole-buffer needs a subscriber that
// pushes back, which the target does not play); doppler.live-subscribe's
// include names-misderived, which only a subscription to one type's
// subject shows.
func TestLiveMutants(t *testing.T) {
	t.Parallel()
	pool := testSeeds(t)
	var g waittest.Group
	defer g.Wait()
	for _, tc := range []struct {
		target  string
		mutants []string
		extra   uint64 // inputs after the seeds
		replays bool
	}{
		{"live.publish", []string{"publisher-announces-first-stream-only", "publisher-repeats-announcements", "publisher-sends-before-request", "publisher-atomic-sequence"}, 40, false},
		{"doppler.live-subscribe", []string{"names-misderived", "magic-only-v1", "payload-bytes-unchecked", "repeated-index-appended", "frame-totals-not-set", "refusals-coded-dp-err"}, 64, true},
	} {
		tg, ok := Lookup(testTargets(), tc.target)
		if !ok {
			t.Fatalf("no target %s", tc.target)
		}
		budget := uint64(len(pool.For(tg))) + tc.extra
		for _, name := range tc.mutants {
			// The mutants wait on sockets: names-misderived waits out a
			// silent socket four times (33 s), and as a parallel subtest it
			// began only after the 245 of TestMutantsFound.
			g.Run(t, tc.target+"/"+name, func(t *testing.T) {
				m, ok := suites.Default().Mutant(name)
				if !ok {
					t.Fatalf("no mutant %s", name)
				}
				spec := "builtin:mutant/" + name
				e := liveEngine(pool, spec, m.Apply(suites.Default().Reference()))
				// A socket that receives nothing costs a whole collect wait
				// per minimisation step: what is claimed here is the finding
				// and its replay, so minimisation gets about one step.
				e.MinimizeFor = dopplerCollectWait
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				var found *Finding
				e.RunRange(ctx, tg, 0, budget, func(f *Finding) error { found = f; cancel(); return nil }, nil)
				if found == nil {
					t.Fatalf("no finding in %d inputs", e.Execs)
				}
				t.Logf("%s: %s", found.Signature, found.Detail)
				if !tc.replays {
					return
				}
				if ok, _, err := liveEngine(pool, spec, m.Apply(suites.Default().Reference())).Replay(context.Background(), found); err != nil || !ok {
					t.Errorf("finding %s does not replay against the mutant: %v", found.Signature, err)
				}
				if ok, others, _ := liveEngine(pool, "builtin:reference", suites.Default().Reference()).Replay(context.Background(), found); ok || len(others) > 0 {
					t.Errorf("finding %s reproduces against the reference", found.Signature)
				}
			})
		}
	}
}

// TestLiveReferenceClean plays generated inputs of each live target with
// the reference on both sides: the two reports must agree, and most
// inputs must have been judged rather than skipped.
func TestLiveReferenceClean(t *testing.T) {
	t.Parallel()
	pool := testSeeds(t)
	for _, target := range []string{"live.publish", "doppler.live-subscribe"} {
		t.Run(target, func(t *testing.T) {
			t.Parallel()
			tg, _ := Lookup(testTargets(), target)
			e := liveEngine(pool, "builtin:reference", suites.Default().Reference())
			n := uint64(len(pool.For(tg))) + 24
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
		})
	}
}

// keepsFrame is a receiver's reassembly that refuses a message failing the
// header check as the reference does, but keeps the frame in progress: a
// choice doppler §4 leaves open (docs/findings.md), which the reference
// makes the other way.
type keepsFrame struct {
	impl.Reassembler
	o     dp.Order
	check func([]byte, dp.Order) dp.Verdict
	fresh func() impl.Reassembler
}

func (r *keepsFrame) Add(msg []byte) (dp.Frame, bool, error) {
	if _, pending := r.Pending(); pending && r.check(msg, r.o) != dp.Accepted {
		// The refusal alone, as a receiver with no frame in progress
		// gives it.
		return r.fresh().Add(msg)
	}
	return r.Reassembler.Add(msg)
}

// TestDopplerLiveOpenPoint: the live SUB target judges a reassembly only
// up to the first message that leaves the receiver's behaviour open, as
// the codec target does: against a SUT whose SUB keeps a frame in progress
// across a refused message, messages [chunk 0, a message that is no doppler
// message, chunk 1] are no finding on either target, though the two SUBs
// deliver differently after the refused message.
func TestDopplerLiveOpenPoint(t *testing.T) {
	t.Parallel()
	keeper := testRegistry().Reference()
	next := keeper.Doppler.NewReassembler
	keeper.Doppler.NewReassembler = func(o dp.Order, check func([]byte, dp.Order) dp.Verdict) impl.Reassembler {
		return &keepsFrame{Reassembler: next(o, check), o: o, check: check, fresh: func() impl.Reassembler { return next(o, check) }}
	}
	// 52 bytes in two chunks of 26.
	f, err := dp.NewFrame(dp.TypeCI8, dp.LittleEndian, make([]byte, 52))
	if err != nil {
		t.Fatal(err)
	}
	f.Header.Sequence = 1
	chunks, err := dp.Chunk(f, dp.HeaderSize+dp.ChunkBlockSize+26, dp.LittleEndian)
	if err != nil || len(chunks) != 2 {
		t.Fatalf("%d chunks, %v; want 2", len(chunks), err)
	}
	noise := append([]byte(nil), chunks[0]...)
	noise[0] ^= 0xFF // the magic: no doppler message
	in := &conformpb.DopplerReassemble{Inputs: []*conformpb.DopplerReassembleInput{{Messages: [][]byte{chunks[0], noise, chunks[1]}}}}

	codec, _ := Lookup(testTargets(), "doppler.reassemble")
	req := codec.request([]proto.Message{in})
	got, _, _ := codec.outputs(keeper.Handle(context.Background(), req))
	want, _, _ := codec.outputs(testRegistry().Reference().Handle(context.Background(), req))
	if sameBytes(got[0], want[0]) {
		t.Fatal("the SUT's reassembly answers as the reference's: the test proves nothing")
	}
	for _, name := range []string{"doppler.reassemble", "doppler.live-subscribe"} {
		tg, _ := Lookup(testTargets(), name)
		e := liveEngine(&Seeds{}, "keeps frames", keeper)
		obs, err := e.Evaluate(context.Background(), tg, []proto.Message{in})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, o := range obs {
			t.Errorf("%s: a choice the documents leave open made %s: %s", name, o.Signature, o.Detail)
		}
		if e.Judged != 1 {
			t.Errorf("%s: %d inputs judged, want 1", name, e.Judged)
		}
	}
}

// sideClient is the reference's client, but it answers every request with
// sideMark as its id, so that a play function can tell the SUT's side from
// the reference's.
type sideClient struct{ sut.Client }

const sideMark = 1 << 40

func (sideClient) Do(context.Context, *conformpb.Request) (*conformpb.Response, error) {
	return &conformpb.Response{Id: sideMark}, nil
}

// TestCutReportJudgedBySide: a report its wait cut short is no oracle when
// it is the reference's, so the input is left out; the SUT's is judged as
// it stands, since the SUT had its --timeout. Before this rule, a
// reference slowed by a loaded machine gave a finding that did not replay.
func TestCutReportJudgedBySide(t *testing.T) {
	t.Parallel()
	tg, ok := Lookup(testTargets(), "doppler.live-subscribe")
	if !ok {
		t.Fatal("no target doppler.live-subscribe")
	}
	pool := testSeeds(t)
	in := pool.For(tg)[0].Input
	delivered := func(seq uint64) *conformpb.DopplerLiveEvent {
		return &conformpb.DopplerLiveEvent{Event: &conformpb.DopplerLiveEvent_Delivered{Delivered: &conformpb.DopplerFrame{
			Header: &conformpb.DopplerHeader{Sequence: seq}}}}
	}
	whole := &conformpb.DopplerCollectResult{Events: []*conformpb.DopplerLiveEvent{delivered(1), delivered(2)}}
	cut := &conformpb.DopplerCollectResult{Events: whole.Events[:1]}
	for _, tc := range []struct {
		name           string
		refCut, sutCut bool
		skipped        uint64
		observations   int
	}{
		{"both whole", false, false, 0, 0},
		{"reference cut", true, false, 1, 0},
		{"SUT cut", false, true, 0, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := NewEngine(sideClient{builtin.New("builtin:reference", suites.Default().Reference())}, testRegistry(), "test", pool, 1, time.Second, nil)
			play := func(ctx context.Context, _ proto.Message, do doFunc) (*conformpb.DopplerCollectResult, error) {
				resp, err := do(ctx, &conformpb.Request{})
				if err != nil {
					return nil, err
				}
				if isSUT := resp.GetId() == sideMark; isSUT && tc.sutCut || !isSUT && tc.refCut {
					return cut, fmt.Errorf("%w: the sentinel was not seen", errCut)
				}
				return whole, nil
			}
			obs, err := evaluateEach(context.Background(), e, tg, []proto.Message{in}, play)
			if err != nil {
				t.Fatal(err)
			}
			if e.Skipped != tc.skipped || len(obs) != tc.observations {
				t.Errorf("%d inputs left out and %d observations %v, want %d and %d", e.Skipped, len(obs), obs, tc.skipped, tc.observations)
			}
		})
	}
}

// TestDopplerCutWithoutSentinel: a socket that has not handed on the
// sentinel when the collection's wait ends gives what it reported so far,
// marked cut, never as a whole report.
func TestDopplerCutWithoutSentinel(t *testing.T) {
	t.Parallel()
	url, err := broker.URL(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	frame, err := dp.NewFrame(dp.TypeCI16, dp.LittleEndian, []byte("sixteen bytes ok"))
	if err != nil {
		t.Fatal(err)
	}
	op := &conformpb.DopplerReassemble{Inputs: []*conformpb.DopplerReassembleInput{{Messages: [][]byte{frame.AppendMessage(nil, dp.LittleEndian)}}}}
	ref := suites.Default().Reference()
	// The socket's sentinel event is lost on the way back, as a socket too
	// slow to reach it within the wait would show.
	losesSentinel := func(ctx context.Context, req *conformpb.Request) (*conformpb.Response, error) {
		resp := ref.Handle(ctx, req)
		if c := resp.GetDoppler().GetCollect(); c != nil {
			c.Events = slices.DeleteFunc(c.Events, func(e *conformpb.DopplerLiveEvent) bool {
				return e.GetDelivered().GetHeader().GetSequence() == dopplerSentinelSeq
			})
		}
		return resp, nil
	}
	rep, err := dopplerOnce(context.Background(), nc, url, op, losesSentinel, time.Second)
	if !errors.Is(err, errCut) {
		t.Fatalf("error %v, want the report marked cut", err)
	}
	// On a loaded machine the frame itself may come after the wait.
	if rep == nil || len(rep.Events) > 1 || len(rep.Events) == 1 && rep.Events[0].GetDelivered() == nil {
		t.Errorf("report %v, want the one frame delivered, if it came within the wait", rep)
	}
}

// TestPublishCutShort: a read that ends before every sample the input owes
// the subscriber has come gives what came, marked cut, never as a whole
// report.
func TestPublishCutShort(t *testing.T) {
	t.Parallel()
	op := &conformpb.LivePublish{Samples: []*conformpb.LivePublishSample{{Stream: 0, Values: []byte{1}}, {Stream: 0, Values: []byte{2}}}}
	ref := suites.Default().Reference()
	// The publisher is told to send one sample of the two the input owes,
	// as a publisher too slow to send the second within the read shows.
	sendsOne := func(ctx context.Context, req *conformpb.Request) (*conformpb.Response, error) {
		if p := req.GetLive().GetPublish(); p != nil {
			p.Samples = p.Samples[:1]
		}
		return ref.Handle(ctx, req), nil
	}
	rep, err := publishOnce(context.Background(), op, sendsOne, time.Second)
	if errors.Is(err, errNotReady) {
		t.Skip("the publisher began before conform's Request reached it; nothing can be told")
	}
	if !errors.Is(err, errCut) {
		t.Fatalf("error %v, want the report marked cut", err)
	}
	if n := len(rep.GetSamples()); n > 1 {
		t.Errorf("%d samples read, want at most the one sent", n)
	}
}
