package campaign

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/conform-suite/conform/campaign/gen"
	"github.com/conform-suite/conform/live/peer"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	messagepb "github.com/conform-suite/conform/proto/ranvier/message/v1"
	"google.golang.org/protobuf/proto"
)

// live.publish drives the SUT as a Ranvier publisher. For each input the
// side (SUT or reference) listens as a publisher with two streams, conform
// dials it as a subscriber and sends its Request, and the side runs the
// input — a LivePublish: one more stream opened, then samples, perhaps from
// several threads at once. What conform read is decoded into a report and
// compared with what it read from the reference under the same input.
//
// Only what the spec fixes is compared, never timing: the announcements
// (name, node, clock domain; ranvier-wire §4.2), that no frame came before
// the Request (§4.1), that every sample's stream was announced before it
// and never announced twice (ranvier-streams §6.3, §6.4), the announcements
// of the streams that carried samples, and per stream
// the sequences in arrival order (from 1, step 1; ranvier-streams §2.3),
// with the values when one thread publishes. Stream references, which each
// side allocates, are replaced by their announcement's position.

// publishName is the stream name conform subscribes to; the input's own
// stream takes another name now and then.
const publishName = gen.PublishStream

// The streams every live.publish publisher starts with; samples name them
// by handle 0 and 1, and the stream the input opens is handle 2.
var publishStreams = []*conformpb.LiveStream{
	{Name: publishName, Node: "n0"},
	{Name: publishName, Node: "n1", SourceClockDomain: "ptp"},
}

// Waits of a live.publish input: the publisher's wait for the subscriber
// and its drain, and conform's read, which ends when the connection has
// been quiet this long once every sample owed has come, and at the latest
// after publishRead or the campaign's --timeout, whichever is longer.
const (
	publishWait  = 3 * time.Second
	publishQuiet = 30 * time.Millisecond
	publishRead  = 8 * time.Second
	// publishEarly is how long conform listens after its dial before it
	// sends the Request, so that a publisher that writes first is seen.
	publishEarly = 10 * time.Millisecond
)

// clampPublish keeps a mutated script playable: three stream handles, few
// calls, small values.
func clampPublish(op *conformpb.LivePublish) bool {
	if len(op.GetOpen()) != 1 || len(op.GetSamples()) > 64 || op.GetConcurrency() > 8 {
		return false
	}
	for _, s := range op.GetSamples() {
		if s.GetStream() > 2 || s.GetCount() > 8 || len(s.GetValues()) > 256 {
			return false
		}
	}
	return true
}

// evaluatePublish runs each input against the SUT and the reference,
// concurrently, and compares the two decoded transcripts.
func (e *Engine) evaluatePublish(ctx context.Context, t *Target, inputs []proto.Message) ([]Observation, error) {
	return evaluateEach(ctx, e, t, inputs, func(ctx context.Context, in proto.Message, do doFunc) (*conformpb.LiveReport, error) {
		op, ok := in.(*conformpb.LivePublish)
		if !ok || !clampPublish(op) {
			return nil, errSkip
		}
		return publishOnce(ctx, op, do, max(e.Timeout, publishRead))
	})
}

// errNotReady says a publish script ran before the subscriber was in place:
// what conform read depends on timing.
var errNotReady = fmt.Errorf("%w: the publisher began before the subscriber's Request reached it", errSkip)

// publishOnce has one side listen as a publisher, subscribes to it, runs
// op, and returns what the subscriber read within read, decoded. A read
// that ends before every sample the input sends has come returns what came,
// and errCut.
func publishOnce(ctx context.Context, op *conformpb.LivePublish, do doFunc, read time.Duration) (*conformpb.LiveReport, error) {
	lis, err := doLive(ctx, do, &conformpb.LiveOp{Op: &conformpb.LiveOp_ListenPublisher{ListenPublisher: &conformpb.LiveListenPublisher{
		Streams: publishStreams}}})
	if err != nil {
		return nil, err
	}
	l := lis.GetPublisherListening()
	if l == nil {
		return nil, errors.New("listen_publisher was answered with another result")
	}
	defer doLive(context.WithoutCancel(ctx), do, &conformpb.LiveOp{Op: &conformpb.LiveOp_Close{Close: &conformpb.LiveClose{Publisher: l.GetPublisher()}}})
	rctx, cancel := context.WithTimeout(ctx, read)
	defer cancel()
	sub, err := peer.DialPublisher(rctx, l.GetAddress(), 0, peer.Limits{})
	if err != nil {
		return nil, fmt.Errorf("the publisher does not accept a subscriber at %s: %w", l.GetAddress(), err)
	}
	defer sub.Close()
	sub.Idle(rctx, publishEarly)
	if err := sub.SendRequest(rctx, publishName, nil); err != nil {
		return nil, fmt.Errorf("sending the Request: %w", err)
	}
	run := proto.Clone(op).(*conformpb.LivePublish)
	run.Publisher = l.GetPublisher()
	run.WaitSubscribers, run.WaitTimeoutMs = 1, uint32(publishWait/time.Millisecond)
	run.DrainTimeoutMs = uint32(publishWait / time.Millisecond)
	res, err := doLive(ctx, do, &conformpb.LiveOp{Op: &conformpb.LiveOp_Publish{Publish: run}})
	if err != nil {
		return nil, err
	}
	if res.GetPublished().GetSubscribers() < 1 {
		// The publisher began before conform's Request reached it (a loaded
		// machine, a wait that ran out): what conform read depends on timing,
		// so the input proves nothing either way.
		return nil, errNotReady
	}
	// Every sample the input sends this subscriber is awaited, however slow
	// the machine, before the quiet that catches anything extra: a short
	// quiet alone made a loaded machine look like a publisher that sent
	// nothing. A publisher that sends fewer is waited for until read ends.
	concurrent := op.GetConcurrency() > 1
	want := samplesFor(op, publishName)
	_, werr := sub.Wait(rctx, func(tr peer.Transcript) bool {
		return len(decodePublished(tr, concurrent).GetSamples()) >= want
	})
	tr, _ := sub.Idle(rctx, publishQuiet)
	rep := decodePublished(tr, concurrent)
	if werr != nil && rctx.Err() != nil {
		return rep, fmt.Errorf("%w: %d of the %d samples owed came within %v", errCut, len(rep.GetSamples()), want, read)
	}
	return rep, nil
}

// samplesFor returns how many samples op publishes on streams named name:
// the samples a subscriber to name is owed.
func samplesFor(op *conformpb.LivePublish, name string) int {
	streams := append(append([]*conformpb.LiveStream(nil), publishStreams...), op.GetOpen()...)
	n := 0
	for _, s := range op.GetSamples() {
		if int(s.GetStream()) < len(streams) && streams[s.GetStream()].GetName() == name {
			n += max(1, int(s.GetCount()))
		}
	}
	return n
}

// doLive sends one live op and returns its result, an Unimplemented answer
// as an *impl.UnimplementedError, an Error answer as an error.
func doLive(ctx context.Context, do doFunc, op *conformpb.LiveOp) (*conformpb.LiveResult, error) {
	resp, err := do(ctx, &conformpb.Request{Op: &conformpb.Request_Live{Live: op}})
	if err != nil {
		return nil, err
	}
	return liveResult(resp)
}

// decodePublished turns a subscriber's transcript into a report of what the
// spec fixes. The connection's detail names frames that came before the
// Request; a sample's schema_known says its stream was announced before it.
func decodePublished(tr peer.Transcript, concurrent bool) *conformpb.LiveReport {
	c := &conformpb.LiveConnection{}
	rep := &conformpb.LiveReport{Connections: []*conformpb.LiveConnection{c}}
	for _, m := range tr.Marks {
		if m.Label == peer.MarkRequest && m.Frames > 0 {
			c.Detail = fmt.Sprintf("%d frames before the Request", m.Frames)
		}
	}
	if tr.FramingError != nil {
		c.State = conformpb.LiveConnectionState_LIVE_CONNECTION_STATE_FAILED
	}
	announced := map[uint32]int{} // stream ref → announcement position
	for _, f := range tr.Frames {
		var fr messagepb.Frame
		if err := proto.Unmarshal(f.Payload, &fr); err != nil {
			c.Unreadable++
			continue
		}
		switch p := fr.GetPayload().(type) {
		case *messagepb.Frame_Announce:
			si := p.Announce
			if _, again := announced[si.GetStreamRef()]; again {
				c.Detail += "; a stream announced twice"
				continue
			}
			announced[si.GetStreamRef()] = len(c.Announced)
			c.Announced = append(c.Announced, &conformpb.LiveAnnouncement{Name: si.GetName(), Node: si.GetNode(), SourceClockDomain: si.GetSourceClockDomain()})
		case *messagepb.Frame_Sample:
			c.Samples++
			s := p.Sample
			pos, known := announced[s.GetStreamRef()]
			ls := &conformpb.LiveSample{SchemaKnown: known, Sequence: s.GetSequence()}
			if known {
				ls.StreamName = c.Announced[pos].GetNode()
			}
			if !concurrent {
				ls.Values = s.GetValues()
			}
			rep.Samples = append(rep.Samples, ls)
		default:
			c.Unreadable++
		}
	}
	// When a stream no sample has used yet is announced is the
	// publisher's choice (it may come after conform stopped reading), so
	// only the announcements of streams that carried a sample are kept;
	// their order between streams is the publisher's choice too.
	used := map[string]bool{}
	for _, ls := range rep.Samples {
		used[ls.GetStreamName()] = true
	}
	kept := c.Announced[:0]
	for _, a := range c.Announced {
		if used[a.GetNode()] {
			kept = append(kept, a)
		}
	}
	c.Announced = kept
	sort.Slice(c.Announced, func(i, j int) bool { return c.Announced[i].GetNode() < c.Announced[j].GetNode() })
	if concurrent {
		// Threads interleave the streams as they please; each stream's
		// own order is fixed.
		sort.SliceStable(rep.Samples, func(i, j int) bool { return rep.Samples[i].GetStreamName() < rep.Samples[j].GetStreamName() })
	}
	return rep
}
