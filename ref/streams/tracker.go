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
	// Beyond: the position was the window (ReorderWindow) or more behind
	// the mark, so it was counted reordered with nothing to check it
	// against (§3.4).
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
// word holds exactly ReorderWindow positions (§3.4). A tracker built with a
// wider window keeps the positions from 64 on in Tracker.more.
type track struct {
	highest   uint64
	highestNs uint64
	seen      uint64
}

// window is the history of one pair as its tracker keeps it: seen and,
// for a window above 64, the words of more, bit d in word d/64.
type window struct {
	tr   *track
	more []uint64
}

// advance records a new high-water mark step above the old one: every
// position moves step further behind, and the new mark is seen. shift moves
// the first word (nil: Go's <<, which defines a shift by 64 or more as 0 and
// so drops what falls out of the word).
func (w window) advance(step uint64, shift func(history, step uint64) uint64) {
	if len(w.more) > 0 {
		w.shiftMore(step)
	}
	if shift != nil {
		w.tr.seen = shift(w.tr.seen, step) | 1
		return
	}
	w.tr.seen = w.tr.seen<<step | 1
}

// shiftMore moves the words beyond the first step positions back, taking
// in what leaves seen. It runs before seen itself is shifted.
func (w window) shiftMore(step uint64) {
	word := func(i int) uint64 { // word i of the whole history, 0 being seen
		switch {
		case i == 0:
			return w.tr.seen
		case i > 0:
			return w.more[i-1]
		}
		return 0
	}
	k, r := int(min(step/64, uint64(len(w.more)+1))), step%64
	for i := len(w.more); i >= 1; i-- {
		x := word(i-k) << r
		if r > 0 {
			x |= word(i-k-1) >> (64 - r)
		}
		w.more[i-1] = x
	}
}

// has reports whether the position distance behind the mark was seen.
func (w window) has(distance uint64) bool {
	if distance < 64 {
		return w.tr.seen&(1<<distance) != 0
	}
	return w.more[distance/64-1]&(1<<(distance%64)) != 0
}

// mark records the position distance behind the mark as seen.
func (w window) mark(distance uint64) {
	if distance < 64 {
		w.tr.seen |= 1 << distance
		return
	}
	w.more[distance/64-1] |= 1 << (distance % 64)
}

// TrackerOptions configure a Tracker. The zero value is the tracker
// ranvier-streams §3 specifies; NewTracker returns it. Each option names one
// decision of §3, so that an implementation that decides it otherwise can be
// built from this one and compared with it.
type TrackerOptions struct {
	// Window is how far behind the high-water mark a late sample is still
	// checked against the history of what was seen. Zero means
	// ReorderWindow, the width §3.4 fixes.
	Window int
	// Tracked reports whether a sample is attributed to a stream and
	// tracked. Nil means one naming a stream and carrying a sequence: a
	// stream_ref and a sequence both above 0 (§2.1, §3.6).
	Tracked func(Sample) bool
	// Shift moves a pair's first word of history, bit d standing for the
	// position d behind the high-water mark, step positions further back
	// when the mark advances by step, and returns the moved word. Nil means
	// the shift §3.4 requires: every position moves step back, so a step of
	// 64 or more leaves nothing of the old history in the word (Go's <<
	// gives 0 for such a step). A language whose shift takes its count
	// modulo the word size (C on x86, Java, JavaScript) keeps a stale
	// history after a long step unless it checks the step first; this
	// option builds that implementation so it can be compared.
	Shift func(history, step uint64) uint64
}

// Tracker is a subscriber's sequence tracker (ranvier-streams §3.2–§3.7).
// Its counters are per tracker; a Subscription owns one. The zero value is
// not usable; call NewTracker. A Tracker is not safe for concurrent use.
type Tracker struct {
	width   uint64 // the reorder window
	tracked func(Sample) bool
	shift   func(history, step uint64) uint64
	// more holds each pair's history beyond its first word, for a window
	// above 64; nil otherwise.
	more map[*track][]uint64

	tracks map[pairKey]*track
	c      Counters
	last   Break

	// The most recently used pair, so that a run of samples from one stream
	// costs no map lookup. Purely a cache; tracks is the truth.
	hotKey   pairKey
	hotTrack *track
}

// NewTracker returns a Tracker that has seen nothing.
func NewTracker() *Tracker { return NewTrackerWith(TrackerOptions{}) }

// NewTrackerWith returns a Tracker with options opts that has seen nothing.
func NewTrackerWith(opts TrackerOptions) *Tracker {
	t := &Tracker{width: ReorderWindow, tracked: opts.Tracked, shift: opts.Shift, tracks: make(map[pairKey]*track)}
	if opts.Window > 0 {
		t.width = uint64(opts.Window)
	}
	if t.width > 64 {
		t.more = make(map[*track][]uint64)
	}
	return t
}

// Observe accounts for one arriving sample on connection conn and reports
// which rule applied. It must be called on arrival, before any loss policy
// runs (§3.1).
func (t *Tracker) Observe(conn ConnID, s Sample) Outcome {
	t.c.Arrived++

	// §3.6, §2.1: a sample naming no stream or carrying no sequence cannot be
	// attributed; guessing produces false gaps. It arrived and that is all.
	if !t.isTracked(s) {
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
			if t.more != nil {
				t.more[tr] = make([]uint64, (t.width-1)/64)
			}
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

// window returns the history of tr.
func (t *Tracker) window(tr *track) window {
	if t.more == nil {
		return window{tr: tr}
	}
	return window{tr, t.more[tr]}
}

// isTracked reports whether s is attributed to a stream.
func (t *Tracker) isTracked(s Sample) bool {
	if t.tracked != nil {
		return t.tracked(s)
	}
	return s.StreamRef != 0 && s.Sequence != 0
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
	// Positions step or more behind the new mark fall out of the window.
	t.window(tr).advance(step, t.shift)
	tr.highest = s.Sequence
	tr.highestNs = s.MonotonicNs
	return out
}

// late handles a sample at or behind the high-water mark (§3.4).
func (t *Tracker) late(tr *track, seq uint64) Outcome {
	distance := tr.highest - seq
	switch {
	case distance >= t.width:
		// §3.4: no retained history to check against, so never a duplicate.
		t.c.Reordered++
		return Beyond
	case t.window(tr).has(distance):
		// §3.4: inside the window and already seen.
		t.c.Duplicated++
		return Duplicate
	default:
		// §3.4: inside the window and unseen: it was counted missing when the
		// gap opened and it is not missing. Saturate at zero. Breaks are
		// never credited back.
		t.window(tr).mark(distance)
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
