package streams

import (
	"errors"
	"fmt"
)

// StreamInfo is an announcement as decoded, field for field the
// ranvier.message.v1.StreamInfo of reconstructed§ranvier-fields (numbers pinned by
// ranvier-wire §4.4). Strings are as they came off the wire, where an absent
// string and an empty one are the same bytes; enums are raw numbers. Read it
// with ReadAnnouncement.
type StreamInfo struct {
	Name              string         // 1
	Node              string         // 2
	Schema            *SchemaInfo    // 3
	Origin            int32          // 4, an Origin
	SourceClockDomain string         // 5
	HostID            string         // 6
	BootID            string         // 7
	Operator          *Identity      // 8
	Authorisation     *Authorisation // 9
	StreamRef         uint32         // 10
	Production        *Production    // 11
}

// SchemaInfo is ranvier.message.v1.SchemaInfo as decoded.
type SchemaInfo struct {
	SchemaID   string
	Descriptor []byte
}

// Identity is ranvier.message.v1.Identity as decoded.
type Identity struct {
	Name       string
	AssertedBy int32 // an AssertionMethod
}

// Authorisation is ranvier.message.v1.Authorisation. The two times are wall
// clock, nanoseconds since the Unix epoch; 0 means unstated, which is not
// open-ended (ranvier-streams §4.4).
type Authorisation struct {
	Authority        string
	Reference        string
	ValidFromUnixNs  uint64
	ValidUntilUnixNs uint64
}

// Setting is one ranvier.message.v1.Setting pair.
type Setting struct{ Key, Value string }

// Production is ranvier.message.v1.Production: what the producer did to the
// instrument's values, in the producer's order.
type Production struct{ Settings []Setting }

// Origin says what a stream's data is (ranvier-streams §6.1). It changes no
// behaviour by itself.
type Origin int32

// The origins of reconstructed§ranvier-fields (pinned by ranvier-wire §4.4).
const (
	OriginUnspecified Origin = 0
	OriginRaw         Origin = 1
	OriginDerived     Origin = 2
	OriginEphemeral   Origin = 3
)

// AssertionMethod says how an application knew who was operating.
type AssertionMethod int32

// The assertion methods of reconstructed§ranvier-fields.
const (
	AssertionUnspecified     AssertionMethod = 0
	AssertionDeclared        AssertionMethod = 1
	AssertionOperatingSystem AssertionMethod = 2
	AssertionDirectory       AssertionMethod = 3
)

// Schema is a read schema: at least one of its fields is present.
type Schema struct {
	// ID is the message's fully-qualified protobuf name; "" when absent.
	ID string
	// Descriptor is a serialized FileDescriptorSet, carried and never parsed
	// (§6.2); nil when absent.
	Descriptor []byte
}

// HostClock names the clock a stream's publish timestamps are on. Two
// streams' timestamps may be subtracted only when their HostClocks are equal
// (ranvier-streams §4.1).
type HostClock struct{ HostID, BootID string }

// Operator is who the application said was operating, and how it knew. It
// is recorded, never verified (ranvier-wire §4.4).
type Operator struct {
	Name       string
	AssertedBy AssertionMethod
}

// Announcement is a StreamInfo read by the rules of ranvier-streams §6.6.
// Absent means unstated, never a claim (§6.1): a nil pointer or an empty
// string here is silence, not a promise.
type Announcement struct {
	Name      string
	Node      string
	StreamRef uint32
	// Schema is nil when the announcement carried neither an identity nor a
	// descriptor.
	Schema *Schema
	// Origin is OriginUnspecified for a value this build does not know.
	Origin Origin
	// SourceClockDomain is "" when the stream carries no source timestamps
	// (§4.3).
	SourceClockDomain string
	// Clock is nil unless both host_id and boot_id were present.
	Clock *HostClock
	// Operator is nil when the announcement named no operator.
	Operator *Operator
	// Authorisation is nil when absent. Its empty strings are absent.
	Authorisation *Authorisation
	// Production is nil when absent: nobody was asked, which is not the
	// same as "untransformed" (§6.1).
	Production []Setting
}

// ReadAnnouncement reads info by the rules of ranvier-streams §6.6. It never
// refuses: an announcement from a later contract that names something this
// build has never heard of is still readable.
func ReadAnnouncement(info StreamInfo) Announcement {
	a := Announcement{
		Name:              info.Name,
		Node:              info.Node,
		StreamRef:         info.StreamRef,
		Origin:            readOrigin(info.Origin),
		SourceClockDomain: info.SourceClockDomain, // §4.3, §6.6: "" is absent
	}
	if au := info.Authorisation; au != nil {
		cp := *au
		a.Authorisation = &cp
	}
	// §6.6: a schema with neither an identity nor a descriptor is no schema.
	// An empty descriptor is absent like an empty string: protobuf bytes have
	// no presence either.
	if sc := info.Schema; sc != nil && (sc.SchemaID != "" || len(sc.Descriptor) > 0) {
		a.Schema = &Schema{ID: sc.SchemaID}
		if len(sc.Descriptor) > 0 {
			a.Schema.Descriptor = sc.Descriptor
		}
	}
	// §6.6, §4.1: host_id and boot_id are a pair. A host without a boot
	// identifies a machine and not a clock.
	if info.HostID != "" && info.BootID != "" {
		a.Clock = &HostClock{HostID: info.HostID, BootID: info.BootID}
	}
	// §6.6 reads only strings and schemas; an Identity that states neither a
	// name nor a method says nothing, so it reads as no operator, consistent
	// with "empty string is absent".
	if op := info.Operator; op != nil {
		m := readAssertion(op.AssertedBy)
		if op.Name != "" || m != AssertionUnspecified {
			a.Operator = &Operator{Name: op.Name, AssertedBy: m}
		}
	}
	if info.Production != nil {
		a.Production = append([]Setting{}, info.Production.Settings...)
	}
	return a
}

// readOrigin reads an unrecognised origin as unspecified rather than
// refusing the announcement (§6.6).
func readOrigin(v int32) Origin {
	switch o := Origin(v); o {
	case OriginRaw, OriginDerived, OriginEphemeral:
		return o
	}
	return OriginUnspecified
}

// readAssertion reads an unrecognised assertion method as unspecified
// rather than refusing the announcement (§6.6).
func readAssertion(v int32) AssertionMethod {
	switch m := AssertionMethod(v); m {
	case AssertionDeclared, AssertionOperatingSystem, AssertionDirectory:
		return m
	}
	return AssertionUnspecified
}

// ErrNoStreamRef refuses to record an announcement with stream_ref 0: 0
// means absent, so no sample could ever be matched to it (ranvier-streams
// §2.6, §6.1).
var ErrNoStreamRef = errors.New("announcement has no stream_ref")

// Announcements is what a subscriber has heard, matched to samples by
// (connection, stream_ref) and never by name (ranvier-streams §6.7). A
// reference is scoped to the runtime that announced it, and a connection
// reaches one runtime, so the connection is part of the key. The zero value
// is ready to use. Announcements is not safe for concurrent use.
type Announcements struct {
	byRef map[pairKey]Announcement
	order []pairKey // in the order first heard, for ByName
}

// Add records an announcement heard on connection conn. A stream does not
// re-announce (§6.4): a second announcement for a reference already heard
// on conn is not an update, and Add reports false and keeps the first.
func (as *Announcements) Add(conn ConnID, a Announcement) (bool, error) {
	if a.StreamRef == 0 {
		return false, fmt.Errorf("streams: announcement of %q on connection %d: %w", a.Name, conn, ErrNoStreamRef)
	}
	k := pairKey{conn, a.StreamRef}
	if _, ok := as.byRef[k]; ok {
		return false, nil
	}
	if as.byRef == nil {
		as.byRef = make(map[pairKey]Announcement)
	}
	as.byRef[k] = a
	as.order = append(as.order, k)
	return true, nil
}

// Lookup returns the announcement a sample on connection conn with
// reference ref belongs to. When none was heard it reports false, and the
// caller must report the schema unknown: falling back on another
// announcement under the same name is the misread §6.5 forbids.
func (as *Announcements) Lookup(conn ConnID, ref uint32) (Announcement, bool) {
	a, ok := as.byRef[pairKey{conn, ref}]
	return a, ok
}

// ByName returns every announcement heard under name, one per stream, in
// the order they were first heard. Several streams may share a name, even
// from one node; none is deduplicated (§6.7). Empty before any publisher has
// announced, which is not an error.
func (as *Announcements) ByName(name string) []Announcement {
	var out []Announcement
	for _, k := range as.order {
		if a := as.byRef[k]; a.Name == name {
			out = append(out, a)
		}
	}
	return out
}

// Len returns how many streams have been announced.
func (as *Announcements) Len() int { return len(as.byRef) }
