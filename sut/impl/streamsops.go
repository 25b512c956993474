package impl

import (
	"fmt"
	"time"

	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	messagepb "github.com/conform-suite/conform/proto/ranvier/message/v1"
	"github.com/conform-suite/conform/ref/streams"
	"github.com/conform-suite/conform/ref/wire"
	"google.golang.org/protobuf/proto"
)

// Tracker is a subscriber's sequence tracker; *streams.Tracker is the
// reference.
type Tracker interface {
	Observe(conn streams.ConnID, s streams.Sample) streams.Outcome
	Counters() streams.Counters
}

// Queue is a subscription: a bounded queue with a loss policy and the
// tracker that watches what arrives at it; *streams.Subscription is the
// reference.
type Queue interface {
	Push(conn streams.ConnID, s streams.Sample)
	Pop() (streams.Sample, bool)
	Options() streams.Options
	Queue() streams.QueueCounters
	Gaps() streams.Counters
}

// FrameCounter counts frames per connection; *streams.FrameCounter is the
// reference.
type FrameCounter interface {
	Count(conn streams.ConnID, k streams.FrameKind) bool
	Counts(conn streams.ConnID) streams.FrameCounts
}

// Runtime is the publisher side of a runtime; the reference wraps
// *streams.Runtime.
type Runtime interface {
	Open(name, sourceClockDomain string) (ProducedStream, error)
	Adopt(name string) (AdoptedStream, error)
}

// ProducedStream is a stream a runtime produces; *streams.Stream is the
// reference.
type ProducedStream interface {
	Ref() uint32
	Conn() streams.ConnID
	CarriesSourceTimestamp() bool
	Publish(sourceNs uint64, values []byte, deliver func(streams.Sample))
	Sent() uint64
	LastSequence() uint64
}

// AdoptedStream is a stream that republishes; *streams.Adopted is the
// reference.
type AdoptedStream interface {
	Ref() uint32
	Conn() streams.ConnID
	Republish(s streams.Sample, deliver func(streams.Sample))
	Sent() uint64
	LastSequence() uint64
}

// Announcements is what a subscriber has heard; *streams.Announcements is
// the reference.
type Announcements interface {
	Add(conn streams.ConnID, a streams.Announcement) (bool, error)
	Lookup(conn streams.ConnID, ref uint32) (streams.Announcement, bool)
	ByName(name string) []streams.Announcement
}

// LatencyMeter measures delivery latency; *streams.Latency is the reference.
type LatencyMeter interface {
	Observe(nowNs, monotonicNs uint64)
	Percentiles() (streams.Percentiles, bool)
}

// refRuntime adapts *streams.Runtime to Runtime.
type refRuntime struct{ rt *streams.Runtime }

func (r refRuntime) Open(name, domain string) (ProducedStream, error) {
	s, err := r.rt.Open(name, domain)
	if err != nil {
		return nil, err
	}
	return s, nil
}

func (r refRuntime) Adopt(name string) (AdoptedStream, error) {
	a, err := r.rt.Adopt(name)
	if err != nil {
		return nil, err
	}
	return a, nil
}

// processStart anchors HostClock. Go's monotonic clock is what the standard
// library offers; it is read below the node handle, which is what the
// harness can observe (ranvier-streams §4.1).
var processStart = time.Now()

// HostClock returns nanoseconds on the process's monotonic clock, from 1.
func HostClock() uint64 { return uint64(time.Since(processStart)) + 1 }

func toSample(a *conformpb.Arrival) streams.Sample {
	return streams.Sample{
		StreamRef:   a.GetStreamRef(),
		Sequence:    a.GetSequence(),
		MonotonicNs: a.GetMonotonicTimestampNs(),
		SourceNs:    a.GetSourceTimestampNs(),
	}
}

func toArrival(conn streams.ConnID, s streams.Sample) *conformpb.Arrival {
	return &conformpb.Arrival{
		Connection:           uint64(conn),
		StreamRef:            s.StreamRef,
		Sequence:             s.Sequence,
		MonotonicTimestampNs: s.MonotonicNs,
		SourceTimestampNs:    s.SourceNs,
	}
}

// GapCounters converts a tracker's counters to conform.v1.
func GapCounters(c streams.Counters) *conformpb.GapCounters {
	out := &conformpb.GapCounters{
		Arrived: c.Arrived, Untracked: c.Untracked, Missing: c.Missing, Breaks: c.Breaks,
		Duplicated: c.Duplicated, Reordered: c.Reordered, Streams: c.Streams,
	}
	if b := c.LastBreak; b != nil {
		out.LastBreak = &conformpb.GapBreak{
			Connection: uint64(b.Conn), StreamRef: b.StreamRef,
			After: b.After, Before: b.Before, Missing: b.Missing,
			AfterNs: b.AfterNs, BeforeNs: b.BeforeNs,
		}
	}
	return out
}

func (im *Impl) track(op *conformpb.Track) *conformpb.TrackResult {
	res := new(conformpb.TrackResult)
	for _, in := range op.Inputs {
		tr := im.NewTracker(in.Name)
		for _, a := range in.Arrivals {
			tr.Observe(streams.ConnID(a.Connection), toSample(a))
		}
		res.Outputs = append(res.Outputs, &conformpb.TrackOutput{Counters: GapCounters(tr.Counters())})
	}
	return res
}

var policies = map[conformpb.QueuePolicy]streams.Policy{
	conformpb.QueuePolicy_QUEUE_POLICY_DROP_OLDEST: streams.DropOldest,
	conformpb.QueuePolicy_QUEUE_POLICY_DROP_NEWEST: streams.DropNewest,
	conformpb.QueuePolicy_QUEUE_POLICY_BLOCK:       streams.Block,
	conformpb.QueuePolicy_QUEUE_POLICY_HALT:        streams.Halt,
}

func policyOf(p streams.Policy) conformpb.QueuePolicy {
	for k, v := range policies {
		if v == p {
			return k
		}
	}
	return conformpb.QueuePolicy_QUEUE_POLICY_DEFAULT
}

func (im *Impl) driveQueue(op *conformpb.DriveQueue) *conformpb.DriveQueueResult {
	res := new(conformpb.DriveQueueResult)
	for _, in := range op.Inputs {
		opts := streams.DefaultOptions()
		if in.Depth != nil {
			opts.Depth = int(in.GetDepth())
		}
		if in.Policy != conformpb.QueuePolicy_QUEUE_POLICY_DEFAULT {
			p, ok := policies[in.Policy]
			if !ok {
				// A policy number this build does not know: refused, never
				// substituted (ranvier-streams §5.2).
				p = streams.Policy(in.Policy)
			}
			opts.Policy = p
		}
		out := new(conformpb.QueueOutput)
		q, err := im.NewQueue(in.Name, opts)
		if err != nil {
			out.Refused, out.Refusal = true, err.Error()
			res.Outputs = append(res.Outputs, out)
			continue
		}
		for _, st := range in.Steps {
			switch st := st.Step.(type) {
			case *conformpb.QueueStep_Push:
				q.Push(streams.ConnID(st.Push.GetConnection()), toSample(st.Push))
			case *conformpb.QueueStep_Pop:
				for range st.Pop {
					s, ok := q.Pop()
					if !ok {
						break
					}
					out.Read = append(out.Read, toArrival(0, s))
				}
			}
		}
		qc := q.Queue()
		out.Depth = uint32(qc.Depth)
		out.Policy = policyOf(q.Options().Policy)
		out.Delivered, out.Dropped = qc.Delivered, qc.Dropped
		out.Readable, out.Peak = uint64(qc.Readable), uint64(qc.Peak)
		out.Gaps = GapCounters(q.Gaps())
		res.Outputs = append(res.Outputs, out)
	}
	return res
}

func (im *Impl) receiveConnections(op *conformpb.ReceiveConnections) (*conformpb.ReceiveConnectionsResult, error) {
	segments := func(yield func(*conformpb.Blob) bool) {
		for _, in := range op.Inputs {
			for _, seg := range in.GetSegments() {
				if !yield(seg.GetBytes()) {
					return
				}
			}
		}
	}
	if err := checkFills(segments); err != nil {
		return nil, err
	}
	res := new(conformpb.ReceiveConnectionsResult)
	for i, in := range op.Inputs {
		counter := im.NewFrameCounter()
		subs := map[uint64]Subscriber{}
		kinds := map[uint64][]conformpb.FrameKind{}
		var order []uint64
		for _, seg := range in.Segments {
			conn := seg.Connection
			sub, ok := subs[conn]
			if !ok {
				sub = im.NewSubscriber(im.NewReader())
				subs[conn] = sub
				order = append(order, conn)
			}
			b, err := Expand(seg.Bytes)
			if err != nil {
				return nil, fmt.Errorf("input %d: %w", i, err)
			}
			// A framing error closes the connection; Closed reports it.
			_ = sub.Receive(b, func(ev wire.Event) {
				k := streams.FrameUndecodable
				switch ev.Action {
				case wire.Delivered:
					if ev.Frame.GetSample() != nil {
						k = streams.FrameSample
					} else {
						k = streams.FrameAnnounce
					}
				case wire.SkippedNoVariant:
					k = streams.FrameNoVariant
				}
				counter.Count(streams.ConnID(conn), k)
				kinds[conn] = append(kinds[conn], conformpb.FrameKind(k+1))
			})
		}
		out := new(conformpb.ConnectionsOutput)
		for _, conn := range order {
			fc := counter.Counts(streams.ConnID(conn))
			out.Connections = append(out.Connections, &conformpb.ConnectionCounts{
				Connection: conn, Samples: fc.Samples, Announcements: fc.Announcements,
				Unreadable: fc.Unreadable, Closed: subs[conn].Closed(), Frames: kinds[conn],
			})
		}
		res.Outputs = append(res.Outputs, out)
	}
	return res, nil
}

func (im *Impl) publish(op *conformpb.Publish) *conformpb.PublishResult {
	res := new(conformpb.PublishResult)
	for _, in := range op.Inputs {
		rt := im.NewRuntime(HostClock)
		out := new(conformpb.PublishOutput)
		// handles holds a ProducedStream, an AdoptedStream, or nil for a
		// refused declaration.
		var handles []any
		stream := func(h uint32) any {
			if int(h) < len(handles) {
				return handles[h]
			}
			return nil
		}
		for _, st := range in.Steps {
			ev := new(conformpb.PublishEvent)
			refuse := func(format string, args ...any) {
				ev.Refused, ev.Refusal = true, fmt.Sprintf(format, args...)
			}
			deliver := func(conn streams.ConnID) func(streams.Sample) {
				return func(s streams.Sample) { ev.Sample = toArrival(conn, s) }
			}
			switch st := st.Step.(type) {
			case *conformpb.PublishStep_Open:
				s, err := rt.Open(st.Open.Name, st.Open.SourceClockDomain)
				if err != nil {
					refuse("%v", err)
					handles = append(handles, nil)
					break
				}
				handles = append(handles, s)
				ev.StreamRef, ev.Connection = s.Ref(), uint64(s.Conn())
			case *conformpb.PublishStep_Adopt:
				a, err := rt.Adopt(st.Adopt.Name)
				if err != nil {
					refuse("%v", err)
					handles = append(handles, nil)
					break
				}
				handles = append(handles, a)
				ev.StreamRef, ev.Connection = a.Ref(), uint64(a.Conn())
			case *conformpb.PublishStep_Publish:
				s, ok := stream(st.Publish.Stream).(ProducedStream)
				if !ok {
					refuse("handle %d is not a produced stream", st.Publish.Stream)
					break
				}
				s.Publish(st.Publish.SourceTimestampNs, st.Publish.Values, deliver(s.Conn()))
			case *conformpb.PublishStep_Republish:
				a, ok := stream(st.Republish.Stream).(AdoptedStream)
				if !ok {
					refuse("handle %d is not an adopted stream", st.Republish.Stream)
					break
				}
				a.Republish(toSample(st.Republish.Sample), deliver(a.Conn()))
			case *conformpb.PublishStep_Close:
				// Dropping a stream is forgetting it; a part that holds
				// something for it is told. The reference's streams hold
				// nothing, and their references are never reused.
				if c, ok := stream(st.Close).(interface{ Close() }); ok {
					c.Close()
				}
			}
			out.Events = append(out.Events, ev)
		}
		for _, h := range handles {
			ps := new(conformpb.PublishedStream)
			switch s := h.(type) {
			case ProducedStream:
				ps.StreamRef, ps.Sent, ps.LastSequence = s.Ref(), s.Sent(), s.LastSequence()
				ps.CarriesSourceTimestamp = s.CarriesSourceTimestamp()
			case AdoptedStream:
				ps.StreamRef, ps.Sent, ps.LastSequence = s.Ref(), s.Sent(), s.LastSequence()
			}
			out.Streams = append(out.Streams, ps)
		}
		res.Outputs = append(res.Outputs, out)
	}
	return res
}

// StreamInfoOf converts a decoded StreamInfo to the reference's plain form.
func StreamInfoOf(m *messagepb.StreamInfo) streams.StreamInfo {
	info := streams.StreamInfo{
		Name: m.GetName(), Node: m.GetNode(), Origin: int32(m.GetOrigin()),
		SourceClockDomain: m.GetSourceClockDomain(), HostID: m.GetHostId(), BootID: m.GetBootId(),
		StreamRef: m.GetStreamRef(),
	}
	if s := m.GetSchema(); s != nil {
		info.Schema = &streams.SchemaInfo{SchemaID: s.GetSchemaId(), Descriptor: s.GetDescriptor_()}
	}
	if o := m.GetOperator(); o != nil {
		info.Operator = &streams.Identity{Name: o.GetName(), AssertedBy: int32(o.GetAssertedBy())}
	}
	if a := m.GetAuthorisation(); a != nil {
		info.Authorisation = &streams.Authorisation{
			Authority: a.GetAuthority(), Reference: a.GetReference(),
			ValidFromUnixNs: a.GetValidFromUnixNs(), ValidUntilUnixNs: a.GetValidUntilUnixNs(),
		}
	}
	if p := m.GetProduction(); p != nil {
		info.Production = &streams.Production{}
		for _, s := range p.GetSettings() {
			info.Production.Settings = append(info.Production.Settings, streams.Setting{Key: s.GetKey(), Value: s.GetValue()})
		}
	}
	return info
}

// present returns a pointer to s, or nil when s is empty: on the wire an
// empty string and an absent one are the same bytes (ranvier-streams §6.6).
func present(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// AnnouncementRead converts a read announcement to conform.v1.
func AnnouncementRead(a streams.Announcement) *conformpb.AnnouncementRead {
	out := &conformpb.AnnouncementRead{
		Name: present(a.Name), Node: present(a.Node), StreamRef: a.StreamRef,
		Origin: int32(a.Origin), SourceClockDomain: present(a.SourceClockDomain),
	}
	if s := a.Schema; s != nil {
		out.Schema = &conformpb.ReadSchema{SchemaId: present(s.ID)}
		if s.Descriptor != nil {
			out.Schema.Descriptor_ = append([]byte{}, s.Descriptor...)
		}
	}
	if c := a.Clock; c != nil {
		out.Clock = &conformpb.HostClock{HostId: c.HostID, BootId: c.BootID}
	}
	if o := a.Operator; o != nil {
		out.Operator = &conformpb.ReadOperator{Name: present(o.Name), AssertedBy: int32(o.AssertedBy)}
	}
	if au := a.Authorisation; au != nil {
		out.Authorisation = &conformpb.ReadAuthorisation{
			Authority: present(au.Authority), Reference: present(au.Reference),
			ValidFromUnixNs: au.ValidFromUnixNs, ValidUntilUnixNs: au.ValidUntilUnixNs,
		}
	}
	if a.Production != nil {
		out.Production = &conformpb.ReadProduction{}
		for _, s := range a.Production {
			out.Production.Settings = append(out.Production.Settings, &conformpb.ProductionSetting{Key: s.Key, Value: s.Value})
		}
	}
	return out
}

// readAnnouncement decodes and reads one StreamInfo payload.
func (im *Impl) readAnnouncement(b []byte) (streams.Announcement, error) {
	m := new(messagepb.StreamInfo)
	if err := proto.Unmarshal(b, m); err != nil {
		return streams.Announcement{}, err
	}
	return im.ReadAnnouncement(StreamInfoOf(m)), nil
}

func (im *Impl) readAnnouncements(op *conformpb.ReadAnnouncements) *conformpb.ReadAnnouncementsResult {
	res := new(conformpb.ReadAnnouncementsResult)
	for _, in := range op.Inputs {
		out := new(conformpb.ReadAnnouncementOutput)
		a, err := im.readAnnouncement(in.StreamInfo)
		if err != nil {
			out.Refused, out.Refusal = true, err.Error()
		} else {
			out.Announcement = im.ShowAnnouncement(a)
		}
		res.Outputs = append(res.Outputs, out)
	}
	return res
}

func (im *Impl) matchAnnouncements(op *conformpb.MatchAnnouncements) *conformpb.MatchAnnouncementsResult {
	res := new(conformpb.MatchAnnouncementsResult)
	for _, in := range op.Inputs {
		book := im.NewAnnouncements()
		out := new(conformpb.MatchOutput)
		for _, ev := range in.Events {
			ans := new(conformpb.MatchAnswer)
			conn := streams.ConnID(ev.Connection)
			switch e := ev.Event.(type) {
			case *conformpb.MatchEvent_Announce:
				// An announcement that does not decode, or names no stream,
				// can never be matched; it is heard and set aside.
				if a, err := im.readAnnouncement(e.Announce); err == nil {
					_, _ = book.Add(conn, a)
				}
			case *conformpb.MatchEvent_SampleRef:
				if a, ok := book.Lookup(conn, e.SampleRef); ok {
					ans.Matched = im.ShowAnnouncement(a)
				} else {
					ans.SchemaUnknown = true
				}
			case *conformpb.MatchEvent_List:
				for _, a := range book.ByName(e.List) {
					ans.Listed = append(ans.Listed, im.ShowAnnouncement(a))
				}
			}
			out.Answers = append(out.Answers, ans)
		}
		res.Outputs = append(res.Outputs, out)
	}
	return res
}

func (im *Impl) latency(op *conformpb.Latency) *conformpb.LatencyResult {
	res := new(conformpb.LatencyResult)
	for _, in := range op.Inputs {
		l := im.NewLatency()
		for _, h := range in.Handovers {
			l.Observe(h.NowNs, h.MonotonicTimestampNs)
		}
		out := new(conformpb.LatencyOutput)
		if p, ok := l.Percentiles(); ok {
			out.Present = true
			out.P50Ns, out.P99Ns, out.MaxNs = p.P50, p.P99, p.Max
		}
		res.Outputs = append(res.Outputs, out)
	}
	return res
}
