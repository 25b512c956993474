package corpus

import "encoding/json"

// StreamsVersion is the version of the streams vectors the cases use.
const StreamsVersion = "streams/v1"

// StreamsVector is one golden vector of the streams suite: what a subscriber
// receives, and the counters ranvier-streams says it must report. Exactly
// one of four inputs is set: arrivals for a tracker (Sequences or
// Arrivals), a script for a subscription queue (Queue), the bytes of
// data-plane connections (Segments), or the bytes of one announcement
// (Announcement). Every expected value is written from the specification's
// words and tables, never from running the reference.
type StreamsVector struct {
	// ID is the vector's stable name, for example streams/v1/gaps-one-missing.
	ID    string   `json:"id"`
	Spec  string   `json:"spec"`
	Title string   `json:"title"`
	Tags  []string `json:"tags,omitempty"`

	// Name is the name the subscription asked for; every arrival was
	// delivered under it.
	Name string `json:"name,omitempty"`
	// Sequences is shorthand for arrivals on connection 1, stream_ref 1,
	// each with a monotonic timestamp equal to its sequence (as in the
	// break of ranvier-streams §3.8, whose _ns values are 2 and 4).
	Sequences []uint64 `json:"sequences,omitempty"`
	// Arrivals are the samples in the order they arrived.
	Arrivals []StreamsArrival `json:"arrivals,omitempty"`
	// Expect is what the tracker reports after every arrival.
	Expect *GapExpect `json:"expect,omitempty"`

	// Queue is a subscription script and ExpectQueue what it reports.
	Queue       *QueueScript `json:"queue,omitempty"`
	ExpectQueue *QueueExpect `json:"expect_queue,omitempty"`

	// Segments are bytes arriving on connections, in order, and
	// ExpectConnections what the subscriber counted per connection, in the
	// order each connection first appeared.
	Segments          []ConnSegment `json:"segments,omitempty"`
	ExpectConnections []ConnExpect  `json:"expect_connections,omitempty"`

	// Announcement is a serialized ranvier.message.v1.StreamInfo, written
	// by hand where a marshaller would write something else (an explicit
	// empty string, which proto3 marshallers omit), and ExpectRead is how
	// a consumer must read it (ranvier-streams §6.6): a conform.v1
	// AnnouncementRead in canonical JSON, absent fields left out.
	Announcement Hex             `json:"announcement,omitempty"`
	ExpectRead   json.RawMessage `json:"expect_read,omitempty"`
}

// VectorID returns v's ID.
func (v *StreamsVector) VectorID() string { return v.ID }

// VectorSpec returns the section v enforces.
func (v *StreamsVector) VectorSpec() string { return v.Spec }

// VectorTitle returns what v shows, in one line.
func (v *StreamsVector) VectorTitle() string { return v.Title }

// StreamsArrival is one sample arriving on a connection.
type StreamsArrival struct {
	Conn uint64 `json:"conn"`
	Ref  uint32 `json:"ref"`
	Seq  uint64 `json:"seq"`
	// Ns is the sample's monotonic_timestamp_ns.
	Ns uint64 `json:"ns"`
}

// AllArrivals returns the vector's arrivals, expanding Sequences.
func (v *StreamsVector) AllArrivals() []StreamsArrival {
	out := append([]StreamsArrival(nil), v.Arrivals...)
	for _, s := range v.Sequences {
		out = append(out, StreamsArrival{Conn: 1, Ref: 1, Seq: s, Ns: s})
	}
	return out
}

// GapExpect is the counters a tracker must report (ranvier-streams §3.7).
type GapExpect struct {
	// Arrived counts every sample observed, tracked or not (§3.6).
	Arrived    uint64 `json:"arrived"`
	Missing    uint64 `json:"missing"`
	Breaks     uint64 `json:"breaks"`
	Duplicated uint64 `json:"duplicated"`
	Reordered  uint64 `json:"reordered"`
	// Streams is the number of distinct (connection, stream_ref) pairs.
	Streams uint64 `json:"streams"`
	// LastBreak is the most recent break, when the vector states it.
	LastBreak *BreakExpect `json:"last_break,omitempty"`
}

// BreakExpect is one break (ranvier-streams §3.3).
type BreakExpect struct {
	Conn     uint64 `json:"conn"`
	Ref      uint32 `json:"ref"`
	After    uint64 `json:"after"`
	Before   uint64 `json:"before"`
	Missing  uint64 `json:"missing"`
	AfterNs  uint64 `json:"after_ns"`
	BeforeNs uint64 `json:"before_ns"`
}

// QueueScript subscribes with a depth and a policy (drop-oldest,
// drop-newest, or empty: the subscriber names none and gets the default)
// and then performs its steps.
type QueueScript struct {
	Depth  uint32      `json:"depth"`
	Policy string      `json:"policy"`
	Steps  []QueueStep `json:"steps"`
}

// QueueStep is either Push, samples arriving (sequences on connection 1,
// stream_ref 1, each stamped with its sequence), or Pop, the subscriber
// taking up to that many samples.
type QueueStep struct {
	Push []uint64 `json:"push,omitempty"`
	Pop  uint32   `json:"pop,omitempty"`
}

// QueueExpect is what a subscription reports after its script
// (ranvier-streams §3.5, §3.8).
type QueueExpect struct {
	// Read are the sequences the subscriber's pops returned, in order.
	Read      []uint64 `json:"read"`
	Delivered uint64   `json:"delivered"`
	Dropped   uint64   `json:"dropped"`
	Readable  uint64   `json:"readable"`
	Missing   uint64   `json:"missing"`
	Breaks    uint64   `json:"breaks"`
}

// ConnSegment is bytes arriving on one connection.
type ConnSegment struct {
	Conn  uint64 `json:"conn"`
	Bytes Hex    `json:"bytes"`
}

// ConnExpect is what a subscriber counted on one connection
// (ranvier-streams §3.6a).
type ConnExpect struct {
	Conn       uint64 `json:"conn"`
	Samples    uint64 `json:"samples"`
	Unreadable uint64 `json:"unreadable"`
	Closed     bool   `json:"closed"`
}

// Streams loads the streams vectors.
func Streams() (*Set[*StreamsVector], error) { return Load[*StreamsVector](StreamsVersion) }
