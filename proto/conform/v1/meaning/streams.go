package meaning

import (
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	messagepb "github.com/conform-suite/conform/proto/ranvier/message/v1"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// ---------------------------------------------------------------------------
// drive_queue
// ---------------------------------------------------------------------------

var queueAccepted = &Condition{
	Doc:   "unless the subscription was refused",
	Holds: both(isFalse("refused")),
}

// queueDepthGiven: the depth in effect is fixed when the input names one; the
// default depth is the implementation's choice (ranvier-streams §5.3 MAY).
var queueDepthGiven = &Condition{
	Doc: "when the input names a depth, unless refused (the default depth is the implementation's, ranvier-streams §5.3)",
	Holds: func(c *Context) bool {
		in, ok := c.Input.(*conformpb.QueueInput)
		return (!ok || in.Depth != nil) && queueAccepted.Holds(c)
	},
}

// sameDepth holds when both answers report the same depth in effect: then
// what the queue did is fixed, whoever chose the default depth.
func sameDepth(c *Context) bool {
	w, g := c.Want(), c.Got()
	if !valid(w) || !valid(g) {
		return true
	}
	return get(w, "depth").Uint() == get(g, "depth").Uint()
}

var queueState = &Condition{
	Doc:   "unless refused, and when both answers report the same depth in effect (the default depth is the implementation's)",
	Holds: and(queueAccepted.Holds, sameDepth),
}

var queuePeak = &Condition{
	Doc: "as queue state, when the SUT reports it (0: not reported, ranvier-streams §5.4 SHOULD)",
	Holds: and(queueState.Holds, func(c *Context) bool {
		return !valid(c.Got()) || get(c.Got(), "peak").Uint() != 0
	}),
}

// notQueueRead: a sample a queue hands back carries no connection
// (conform.proto: "Their connection field is not judged and may be 0").
var notQueueRead = &Condition{
	Doc:   "except in QueueOutput.read, where conform.proto says it is not judged and may be 0",
	Holds: func(c *Context) bool { return !c.Within("conform.v1.QueueOutput.read") },
}

// ---------------------------------------------------------------------------
// publish
// ---------------------------------------------------------------------------

// A publishStep is what a step of a publish script does to a stream.
type publishStep struct {
	kind   int // stepOpen, stepAdopt, stepPublish, stepRepublish, stepClose
	handle int // the stream a publish, republish or close names; for open and adopt, the handle created
	source uint64
}

const (
	stepOpen = iota + 1
	stepAdopt
	stepPublish
	stepRepublish
	stepClose
)

// publishScript reads a PublishInput: each step's kind and handle, and
// whether the script is one whose meaning conform.proto defines.
type publishScript struct {
	steps   []publishStep
	kinds   []int // per handle: stepOpen or stepAdopt
	defined bool
}

func readPublishScript(in *conformpb.PublishInput) publishScript {
	s := publishScript{defined: true}
	closed := map[int]bool{}
	for _, st := range in.GetSteps() {
		var p publishStep
		switch x := st.GetStep().(type) {
		case *conformpb.PublishStep_Open:
			p = publishStep{kind: stepOpen, handle: len(s.kinds)}
			s.kinds = append(s.kinds, stepOpen)
		case *conformpb.PublishStep_Adopt:
			p = publishStep{kind: stepAdopt, handle: len(s.kinds)}
			s.kinds = append(s.kinds, stepAdopt)
		case *conformpb.PublishStep_Publish:
			p = publishStep{kind: stepPublish, handle: int(x.Publish.GetStream()), source: x.Publish.GetSourceTimestampNs()}
			s.defined = s.defined && p.handle < len(s.kinds) && s.kinds[p.handle] == stepOpen && !closed[p.handle]
		case *conformpb.PublishStep_Republish:
			p = publishStep{kind: stepRepublish, handle: int(x.Republish.GetStream())}
			s.defined = s.defined && p.handle < len(s.kinds) && s.kinds[p.handle] == stepAdopt && !closed[p.handle] && x.Republish.GetSample() != nil
		case *conformpb.PublishStep_Close:
			p = publishStep{kind: stepClose, handle: int(x.Close)}
			s.defined = s.defined && p.handle < len(s.kinds) && !closed[p.handle]
			closed[p.handle] = true
		default:
			s.defined = false
		}
		s.steps = append(s.steps, p)
	}
	return s
}

// PublishScriptDefined reports whether conform.proto defines the answer to
// a publish script: every publish names a produced stream, every republish
// an adopted one (with its recorded sample), and no step names a handle that
// no open or adopt step created or that was closed.
func PublishScriptDefined(in *conformpb.PublishInput) bool { return readPublishScript(in).defined }

func scriptOf(c *Context) (publishScript, bool) {
	in, ok := c.Input.(*conformpb.PublishInput)
	if !ok {
		return publishScript{}, false
	}
	return c.memoize("publish-script", func() any { return readPublishScript(in) }).(publishScript), true
}

var publishDefined = &Condition{
	Doc: "when every step names a stream its kind of step may name (conform.proto: publish a produced stream, republish an adopted one, a closed handle is not used again)",
	Holds: func(c *Context) bool {
		s, ok := scriptOf(c)
		return !ok || s.defined
	},
}

// producedStream holds for a PublishedStream an open step created:
// carries_source_timestamp is "reported for produced streams".
var producedStream = &Condition{
	Doc: "for produced streams (conform.proto: reported for produced streams; for an adopted one it is open, docs/findings.md)",
	Holds: func(c *Context) bool {
		s, ok := scriptOf(c)
		i := c.Index()
		return !ok || i < 0 || i >= len(s.kinds) || s.kinds[i] == stepOpen
	},
}

// Classes a publish form gives connection identifiers.
const (
	connLocal         = 1 // a produced stream's, shared with no adopted stream
	connLocalShared   = 2 // a produced stream's, shared with an adopted one
	connAdoptedOwn    = 3 // an adopted stream's own
	connAdoptedShared = 4 // an adopted stream's, shared with another stream
	connOfStream      = 5 // a sample's: its stream's connection
	connOther         = 6 // a sample's: another connection

)

// monoClass returns the value standing for the class of a produced
// sample's monotonic stamp: 0 when absent; the sample's own
// source_timestamp_ns when it is the timestamp the node supplied (§4.1
// forbids it); else a small number other than that source timestamp, one
// for the runtime's own clock and another when it went backwards. Stand-ins
// that differ from the sample's source timestamp keep the classes apart for
// a comparison that asks whether a stamp equals it.
func monoClass(smp *conformpb.Arrival, supplied uint64, lastOwn *uint64) uint64 {
	pick := func(a, b uint64) uint64 {
		if smp.SourceTimestampNs == a {
			return b
		}
		return a
	}
	switch ns := smp.MonotonicTimestampNs; {
	case ns == 0:
		return 0
	case ns == supplied:
		return smp.SourceTimestampNs
	case ns < *lastOwn:
		return pick(5, 6)
	default:
		*lastOwn = ns
		return pick(1, 3)
	}
}

// publishForm rewrites a PublishOutput into what ranvier-streams fixes of
// it: stream references by order of allocation (§2.6 MAY allocate
// differently, so long as the first is 1, none is 0 and none is reused),
// connection identifiers by which streams share one (§2.5: an adopted
// stream's is its own), and a produced sample's monotonic stamp by its class
// (§4.1: the runtime's host clock, never the node's timestamp, never going
// backwards).
var publishForm = &Form{
	Doc: "stream_refs compared by order of allocation (the first 1, none 0, none reused: ranvier-streams §2.6); connection identifiers by which streams share one (§2.5); a produced sample's monotonic_timestamp_ns by class — absent, the node's source timestamp, or the runtime's own clock not going backwards (§4.1)",
	Apply: func(c *Context, w, g protoreflect.Message) {
		s, ok := scriptOf(c)
		if !ok {
			return
		}
		sides(w, g, func(m protoreflect.Message) {
			canonicalPublish(s, m.Interface().(*conformpb.PublishOutput))
		})
	},
	Vary: func(c *Context, m protoreflect.Message, r Rand) {
		s, ok := scriptOf(c)
		if !ok || !s.defined {
			return
		}
		out := m.Interface().(*conformpb.PublishOutput)
		// Another allocation: the first reference stays 1, the others are
		// spread out; connection identifiers are offset; the runtime's
		// clock starts elsewhere.
		refs := map[uint32]uint32{}
		first := uint32(0)
		mapRef := func(v uint32) uint32 {
			if v == 0 {
				return 0
			}
			if first == 0 {
				first = v
			}
			if v == first {
				return v
			}
			if _, ok := refs[v]; !ok {
				refs[v] = v*7 + 100
			}
			return refs[v]
		}
		shift := 1000 + r.Uint64()%1000
		clock := uint64(1) << 40
		for i, ev := range out.GetEvents() {
			if ev.Refused {
				continue // what a refusal carries beside it is open already
			}
			ev.StreamRef = mapRef(ev.StreamRef)
			if ev.Connection != 0 {
				ev.Connection += shift
			}
			if smp := ev.GetSample(); smp != nil {
				smp.StreamRef = mapRef(smp.StreamRef)
				if smp.Connection != 0 {
					smp.Connection += shift
				}
				if i < len(s.steps) && s.steps[i].kind == stepPublish && smp.MonotonicTimestampNs != 0 && smp.MonotonicTimestampNs != s.steps[i].source {
					if smp.MonotonicTimestampNs+clock != s.steps[i].source {
						smp.MonotonicTimestampNs += clock
					}
				}
			}
		}
		for _, st := range out.GetStreams() {
			st.StreamRef = mapRef(st.StreamRef)
		}
	},
}

func canonicalPublish(s publishScript, out *conformpb.PublishOutput) {
	// References, in order of first appearance.
	rank := map[uint32]uint32{}
	var firstRef uint32
	see := func(v uint32) {
		if v == 0 {
			return
		}
		if firstRef == 0 {
			firstRef = v
		}
		if _, ok := rank[v]; !ok {
			rank[v] = uint32(len(rank) + 1)
		}
	}
	for _, ev := range out.GetEvents() {
		see(ev.StreamRef)
		see(ev.GetSample().GetStreamRef())
	}
	for _, st := range out.GetStreams() {
		see(st.StreamRef)
	}
	offset := uint32(0)
	if firstRef != 1 {
		offset = 1 << 20 // allocation did not start at 1: keep it apart
	}
	renamed := func(v uint32) uint32 {
		if v == 0 {
			return 0
		}
		return rank[v] + offset
	}

	// Connections of the streams created, by handle.
	created := map[int]uint64{}
	kindOf := map[int]int{}
	for i, ev := range out.GetEvents() {
		if i >= len(s.steps) || ev.Refused {
			continue
		}
		if st := s.steps[i]; st.kind == stepOpen || st.kind == stepAdopt {
			created[st.handle], kindOf[st.handle] = ev.Connection, st.kind
		}
	}
	classOf := func(h int) uint64 {
		v := created[h]
		shared, sharedAdopted := false, false
		for k, u := range created {
			if k != h && u == v {
				shared = true
				sharedAdopted = sharedAdopted || kindOf[k] == stepAdopt
			}
		}
		switch {
		case kindOf[h] == stepAdopt && shared:
			return connAdoptedShared
		case kindOf[h] == stepAdopt:
			return connAdoptedOwn
		case sharedAdopted:
			return connLocalShared
		}
		return connLocal
	}
	ofStream := func(h int, v uint64) uint64 {
		if c, ok := created[h]; ok && c == v {
			return connOfStream
		}
		return connOther
	}

	lastOwn := uint64(0)
	for i, ev := range out.GetEvents() {
		ev.StreamRef = renamed(ev.StreamRef)
		if i >= len(s.steps) {
			continue
		}
		st := s.steps[i]
		switch {
		case ev.Refused:
			ev.Connection = 0
		case st.kind == stepOpen || st.kind == stepAdopt:
			ev.Connection = classOf(st.handle)
		case st.kind == stepPublish || st.kind == stepRepublish:
			ev.Connection = ofStream(st.handle, ev.Connection)
		default:
			ev.Connection = 0
		}
		smp := ev.GetSample()
		if smp == nil {
			continue
		}
		smp.StreamRef = renamed(smp.StreamRef)
		smp.Connection = ofStream(st.handle, smp.Connection)
		if st.kind == stepPublish {
			smp.MonotonicTimestampNs = monoClass(smp, st.source, &lastOwn)
		}
	}
	for _, st := range out.GetStreams() {
		st.StreamRef = renamed(st.StreamRef)
	}
}

// viaPublishEvents documents fields a PublishOutput's form rewrites.
func viaPublishEvents(doc string) *Form { return &Form{Doc: doc + " (see PublishOutput.events)"} }

// ---------------------------------------------------------------------------
// read_announcements and match_announcements
// ---------------------------------------------------------------------------

// emptyIdentity reports whether b, a serialized StreamInfo, names an
// operator Identity that states nothing: no name and no assertion method
// this contract knows.
func emptyIdentity(b []byte) bool {
	var si messagepb.StreamInfo
	if proto.Unmarshal(b, &si) != nil || si.Operator == nil {
		return false
	}
	m := si.Operator.GetAssertedBy()
	return si.Operator.GetName() == "" && (m < 1 || m > 3)
}

// inputHasEmptyIdentity reports whether an announcement of the input is one
// emptyIdentity describes.
func inputHasEmptyIdentity(c *Context) bool {
	return c.memoize("empty-identity", func() any {
		switch in := c.Input.(type) {
		case *conformpb.ReadAnnouncementInput:
			return emptyIdentity(in.GetStreamInfo())
		case *conformpb.MatchInput:
			for _, ev := range in.GetEvents() {
				if b := ev.GetAnnounce(); b != nil && emptyIdentity(b) {
					return true
				}
			}
		}
		return false
	}).(bool)
}

// operatorForm: whether an Identity stating neither a name nor a known
// method reads as no operator or as an operator stating nothing is open
// (docs/findings.md).
var operatorForm = &Form{
	Doc: "an operator with no name and method 0, read from an Identity that states neither, equals no operator (open: docs/findings.md)",
	Apply: func(c *Context, w, g protoreflect.Message) {
		if !inputHasEmptyIdentity(c) {
			return
		}
		sides(w, g, func(m protoreflect.Message) {
			op := sub(m, field(m, "operator"))
			if op != nil && !has(op, "name") && get(op, "asserted_by").Int() == 0 {
				m.Clear(field(m, "operator"))
			}
		})
	},
	Vary: func(c *Context, m protoreflect.Message, r Rand) {
		if !inputHasEmptyIdentity(c) || !valid(m) {
			return
		}
		// Only an announcement read from such an Identity may flip; the
		// announcements of a match input are not told apart here, so only
		// a read of one announcement is varied.
		if _, ok := c.Input.(*conformpb.ReadAnnouncementInput); !ok {
			return
		}
		fd := field(m, "operator")
		if m.Has(fd) {
			op := m.Get(fd).Message()
			if !has(op, "name") && get(op, "asserted_by").Int() == 0 {
				m.Clear(fd)
			}
			return
		}
		m.Set(fd, protoreflect.ValueOfMessage(m.NewField(fd).Message()))
	},
}

// listedForm: a listing's entry for a StreamInfo with stream_ref 0 is open
// (docs/findings.md).
var listedForm = &Form{
	Doc: "every announcement heard under the name, in the order first heard; whether one naming stream_ref 0 is listed is open (docs/findings.md)",
	Apply: func(c *Context, w, g protoreflect.Message) {
		sides(w, g, func(m protoreflect.Message) {
			if !has(m, "listed") {
				return
			}
			l := m.Mutable(field(m, "listed")).List()
			kept := 0
			for i := 0; i < l.Len(); i++ {
				a := l.Get(i).Message()
				if get(a, "stream_ref").Uint() == 0 {
					continue
				}
				l.Set(kept, l.Get(i))
				kept++
			}
			l.Truncate(kept)
			if kept == 0 {
				m.Clear(field(m, "listed"))
			}
		})
	},
}

// ---------------------------------------------------------------------------
// latency
// ---------------------------------------------------------------------------

// latencyFixed holds for a Latency input whose percentiles every method and
// window agree on: every hand-over's age is the same, and none is stamped
// after the consumer's clock.
var latencyFixed = &Condition{
	Doc: "when present, and every hand-over's age (now_ns − monotonic_timestamp_ns) is the same and none is negative: the percentile method and window are open (ranvier-streams §4.5, §10), and a stamp after the consumer's clock is streams/8/latency-of-a-future-stamp (INFO)",
	Holds: func(c *Context) bool {
		if !both(isTrue("present"))(c) {
			return false
		}
		in, ok := c.Input.(*conformpb.LatencyInput)
		if !ok {
			return true
		}
		hs := in.GetHandovers()
		for i, h := range hs {
			if h.GetMonotonicTimestampNs() > h.GetNowNs() {
				return false
			}
			if i > 0 && h.GetNowNs()-h.GetMonotonicTimestampNs() != hs[0].GetNowNs()-hs[0].GetMonotonicTimestampNs() {
				return false
			}
		}
		return true
	},
}
