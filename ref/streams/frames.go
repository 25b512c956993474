package streams

// FrameKind classifies a frame a connection delivered whole. The decoding
// that produces the classification lives in the wire package.
type FrameKind uint8

const (
	// FrameSample is a Frame whose payload was a Sample.
	FrameSample FrameKind = iota
	// FrameAnnounce is a Frame whose payload was a StreamInfo.
	FrameAnnounce
	// FrameUndecodable is a payload the protobuf decoder refused
	// (ranvier-streams §3.6a, first case).
	FrameUndecodable
	// FrameNoVariant is a Frame that decoded and set no payload variant: the
	// empty frame, or a payload kind from a later contract (§3.6a, second
	// case).
	FrameNoVariant
)

// FrameCounts is what one connection has received.
type FrameCounts struct {
	Samples       uint64
	Announcements uint64
	// Unreadable counts frames that arrived whole and carried nothing the
	// receiver could read: FrameUndecodable and FrameNoVariant together
	// (ranvier-streams §3.6a).
	Unreadable uint64
}

// FrameCounter counts frames per connection. The unreadable count belongs to
// the connection, not to a subscription: a frame that failed to decode named
// no stream, and attributing it to one would be a guess (§3.6a).
//
// A frame that misaligns the byte stream is not counted here; that
// connection is closed and the loss is visible as the connection ending
// (§3.6a). The zero value is ready to use. A FrameCounter is not safe for
// concurrent use.
type FrameCounter struct {
	conns map[ConnID]*FrameCounts
}

// Count records one frame received whole on connection conn. It reports
// whether the frame carries something to pass on; an unreadable frame is
// skipped, never a reason to close the connection (§3.6a).
//
// ranvier-wire §4.5 and §6.3 say only that such frames are skipped, and
// ranvier-wire §8 leaves counting them open; ranvier-streams §3.6a requires
// counting, and reconstructed§contradictions (first row) follows it. A kind outside
// the four named ones is read the same way: nothing readable.
func (c *FrameCounter) Count(conn ConnID, k FrameKind) bool {
	if c.conns == nil {
		c.conns = make(map[ConnID]*FrameCounts)
	}
	fc := c.conns[conn]
	if fc == nil {
		fc = new(FrameCounts)
		c.conns[conn] = fc
	}
	switch k {
	case FrameSample:
		fc.Samples++
		return true
	case FrameAnnounce:
		fc.Announcements++
		return true
	default:
		fc.Unreadable++
		return false
	}
}

// Counts returns what connection conn has received; the zero FrameCounts for
// a connection never seen.
func (c *FrameCounter) Counts(conn ConnID) FrameCounts {
	if fc := c.conns[conn]; fc != nil {
		return *fc
	}
	return FrameCounts{}
}
