package streams

import "math"

// Break describes one gap in one stream: which stream, how many samples, and
// between which publish timestamps (ranvier-streams §3.3).
type Break struct {
	// Conn and StreamRef name the stream the gap is in.
	Conn      ConnID
	StreamRef uint32
	// After is the sequence below the gap (the high-water mark when it
	// opened) and Before the sequence that revealed it.
	After, Before uint64
	// Missing is Before - After - 1.
	Missing uint64
	// AfterNs and BeforeNs are the MonotonicNs of the samples bounding the
	// gap below and above. Both are on the publishing stream's clock (§3.3).
	AfterNs, BeforeNs uint64
}

// Counters is what a tracker reports (ranvier-streams §3.7).
type Counters struct {
	// Arrived counts every observed sample, tracked or not (§3.6).
	Arrived uint64
	// Untracked counts the samples with stream_ref 0 or sequence 0, which
	// arrived but are attributed to no stream (§3.6).
	Untracked uint64
	// Missing is what is currently believed missing. It is credited back
	// when a late sample turns up and is not a monotonic total (§3.7).
	Missing uint64
	// Breaks counts gaps; it is never credited back (§3.4).
	Breaks uint64
	// Duplicated counts samples whose position was already seen (§3.4).
	// Above zero it means a bug somewhere.
	Duplicated uint64
	// Reordered counts samples that arrived at or behind the high-water mark
	// and were not duplicates (§3.4).
	Reordered uint64
	// Streams counts the distinct (connection, stream_ref) pairs tracked
	// (§3.7).
	Streams uint64
	// LastBreak is the most recent break, or nil before the first (§3.3).
	LastBreak *Break
}

// Outcome says what one observation did. It is what a test or a case reads
// to see which rule of §3 applied.
type Outcome uint8

const (
	// Untracked: stream_ref or sequence was 0 (§3.6).
	Untracked Outcome = iota
	// First: the first sample of its pair set the high-water mark (§3.2).
	First
	// InOrder: the sample was exactly one past the high-water mark.
	InOrder
	// Gap: the sample was more than one past the mark and opened a break
	// (§3.3).
	Gap
	// Duplicate: the position was inside the window and already seen (§3.4).
	Duplicate
	// Reordered: the position was inside the window and not yet seen; it was
	// credited back against missing (§3.4).
	Reordered
	// Beyond: the position was ReorderWindow or more behind the mark, so it
	// was counted reordered with nothing to check it against (§3.4).
	Beyond
)

var outcomeNames = [...]string{"untracked", "first", "in-order", "gap", "duplicate", "reordered", "beyond-window"}

func (o Outcome) String() string {
	if int(o) < len(outcomeNames) {
		return outcomeNames[o]
	}
	return "outcome(?)"
}

// pairKey is what tracking is keyed on: the connection and the reference,
// never the reference alone and never the name (ranvier-streams §2.2).
type pairKey struct {
	conn ConnID
	ref  uint32
}

// track is the bounded state kept per pair: the high-water mark, its publish
// timestamp (the lower bound of the next break) and one word of history.
// Bit d of seen is set when sequence highest-d has been observed, so the
// word holds exactly ReorderWindow positions (§3.4).
type track struct {
	highest   uint64
	highestNs uint64
	seen      uint64
}

// Tracker is a subscriber's sequence tracker (ranvier-streams §3.2–§3.7).
// Its counters are per tracker; a Subscription owns one. The zero value is
// not usable; call NewTracker. A Tracker is not safe for concurrent use.
type Tracker struct {
	tracks map[pairKey]*track
	c      Counters
	last   Break

	// The most recently used pair, so that a run of samples from one stream
	// costs no map lookup. Purely a cache; tracks is the truth.
	hotKey   pairKey
	hotTrack *track
}

// NewTracker returns a Tracker that has seen nothing.
func NewTracker() *Tracker {
	return &Tracker{tracks: make(map[pairKey]*track)}
}

// Observe accounts for one arriving sample on connection conn and reports
// which rule applied. It must be called on arrival, before any loss policy
// runs (§3.1).
func (t *Tracker) Observe(conn ConnID, s Sample) Outcome {
	t.c.Arrived++

	// §3.6, §2.1: a sample naming no stream or carrying no sequence cannot be
	// attributed; guessing produces false gaps. It arrived and that is all.
	if s.StreamRef == 0 || s.Sequence == 0 {
		t.c.Untracked++
		return Untracked
	}

	k := pairKey{conn, s.StreamRef}
	tr := t.hotTrack
	if tr == nil || t.hotKey != k {
		tr = t.tracks[k]
		if tr == nil {
			// §3.2: the first sample sets the high-water mark and declares
			// nothing missing; a subscriber that starts at 5000 began late.
			// §3.7: the distinct-stream count counts tracked pairs.
			tr = &track{highest: s.Sequence, highestNs: s.MonotonicNs, seen: 1}
			t.tracks[k] = tr
			t.hotKey, t.hotTrack = k, tr
			t.c.Streams++
			return First
		}
		t.hotKey, t.hotTrack = k, tr
	}

	if s.Sequence > tr.highest {
		return t.advance(k, tr, s)
	}
	return t.late(tr, s.Sequence)
}

// advance handles a sample past the high-water mark (§3.3).
func (t *Tracker) advance(k pairKey, tr *track, s Sample) Outcome {
	step := s.Sequence - tr.highest // > 0, cannot wrap
	out := InOrder
	if step > 1 {
		// §3.3: missing grows by step-1, breaks by exactly one, and the break
		// records both sequences, the count and both publish timestamps.
		gap := step - 1
		t.c.Missing = addSaturating(t.c.Missing, gap)
		t.c.Breaks++
		t.last = Break{
			Conn: k.conn, StreamRef: k.ref,
			After: tr.highest, Before: s.Sequence, Missing: gap,
			AfterNs: tr.highestNs, BeforeNs: s.MonotonicNs,
		}
		out = Gap
	}
	// Positions step or more behind the new mark fall out of the window. Go
	// defines a shift by 64 or more as 0, which is exactly that.
	tr.seen = tr.seen<<step | 1
	tr.highest = s.Sequence
	tr.highestNs = s.MonotonicNs
	return out
}

// late handles a sample at or behind the high-water mark (§3.4).
func (t *Tracker) late(tr *track, seq uint64) Outcome {
	distance := tr.highest - seq
	switch {
	case distance >= ReorderWindow:
		// §3.4: no retained history to check against, so never a duplicate.
		t.c.Reordered++
		return Beyond
	case tr.seen&(1<<distance) != 0:
		// §3.4: inside the window and already seen.
		t.c.Duplicated++
		return Duplicate
	default:
		// §3.4: inside the window and unseen: it was counted missing when the
		// gap opened and it is not missing. Saturate at zero. Breaks are
		// never credited back.
		tr.seen |= 1 << distance
		t.c.Reordered++
		if t.c.Missing > 0 {
			t.c.Missing--
		}
		return Reordered
	}
}

// Counters returns a snapshot of the tracker's counters.
func (t *Tracker) Counters() Counters {
	c := t.c
	if c.Breaks > 0 {
		b := t.last
		c.LastBreak = &b
	}
	return c
}

// Pairs returns how many (connection, stream_ref) pairs hold state. Each
// holds one fixed-size record, so this bounds the tracker's memory.
func (t *Tracker) Pairs() int { return len(t.tracks) }

// addSaturating adds without wrapping. The specification does not say what
// missing does past 2^64-1 (a single step from 1 to 2^64-1 gets close); a
// count that wrapped to a small number would claim a loss was recovered, so
// this suite pins saturation.
func addSaturating(a, b uint64) uint64 {
	if a > math.MaxUint64-b {
		return math.MaxUint64
	}
	return a + b
}
