package streams

// ConnID names a connection: the arrival path a sample took. In-process
// delivery is one, each socket is one, each adopted stream is one
// (ranvier-streams §1). It is chosen by the receiving process and is
// meaningless anywhere else, so it never travels in a message (§2.2).
type ConnID uint64

// Sample is one observation as it arrives, with the fields of
// ranvier-wire §4.3 as plain Go values.
type Sample struct {
	// StreamRef names the announced stream the sample came from. 0 means
	// absent (ranvier-streams §2.6).
	StreamRef uint32
	// Sequence is the sample's position in its stream's own count, from 1.
	// 0 means absent (§2.1).
	Sequence uint64
	// MonotonicNs is the publishing host's monotonic clock when the sample
	// was published (§4.1).
	MonotonicNs uint64
	// SourceNs is the instrument's own timestamp; 0 means absent (§4.2).
	SourceNs uint64
	// Values is the opaque measurement. Nothing in this package reads it.
	Values []byte
}
