package streams

// Every number the streams contract fixes, or that this suite had to choose,
// is written here once. Tests, cases and the corpus refer to these names
// rather than restating the values.
const (
	// ReorderWindow is how far behind the high-water mark a late sample can
	// still be checked against the history of what was seen. It MUST be 64
	// (ranvier-streams §3.4): a different width reports different numbers for
	// identical input. One uint64 of history holds exactly this many
	// positions.
	ReorderWindow = 64

	// FirstSequence is the sequence number of a stream's first sample
	// (ranvier-streams §2.1). Sequence 0 means "no sequence" (§2.1, §3.6).
	FirstSequence uint64 = 1

	// FirstStreamRef is the first reference a runtime allocates
	// (ranvier-streams §2.6). Reference 0 means "no stream" (§2.6, §3.6).
	FirstStreamRef uint32 = 1

	// DefaultDepth is the queue depth a subscription gets when nobody chose
	// one (ranvier-streams §3.5, §5.3). The specification records it as
	// arbitrary; it is what every binding's transport subscription uses.
	DefaultDepth = 1024

	// DefaultPolicy is the loss policy a subscription gets when nobody chose
	// one (ranvier-streams §3.5, §5.2).
	DefaultPolicy = DropOldest

	// LatencyWindow is how many recent deliveries the latency percentiles are
	// computed over. ranvier-streams §4.5 names 256 as Rust's choice and §10
	// leaves it open; this suite reconstructs it as 256 so that the reference
	// reports the figure Rust does.
	LatencyWindow = 256

	// LatencyP50 and LatencyP99 are the fractions of the two reported
	// percentiles (ranvier-streams §4.5).
	LatencyP50 = 0.50
	LatencyP99 = 0.99
)
