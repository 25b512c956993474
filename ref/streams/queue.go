package streams

import (
	"errors"
	"fmt"
)

// Policy is what a full queue does with an arriving sample
// (ranvier-streams §5.2).
type Policy uint8

const (
	// DropOldest overwrites the oldest unread sample. It is the default.
	DropOldest Policy = iota
	// DropNewest discards the arriving sample and keeps what is queued.
	DropNewest
	// Block would wait for space. Named by the contract, not implemented,
	// and refused (§5.2, §10).
	Block
	// Halt would end the session. Named by the contract, not implemented,
	// and refused (§5.2, §10).
	Halt
)

var policyNames = [...]string{"drop-oldest", "drop-newest", "block", "halt"}

func (p Policy) String() string {
	if int(p) < len(policyNames) {
		return policyNames[p]
	}
	return fmt.Sprintf("policy(%d)", uint8(p))
}

// The errors NewSubscription wraps. Test for them with errors.Is.
var (
	// ErrPolicyNotImplemented refuses a policy the contract names but no
	// implementation provides. Substituting another policy is the failure
	// §5.2 forbids.
	ErrPolicyNotImplemented = errors.New("loss policy not implemented")
	// ErrUnknownPolicy refuses a Policy value outside the four named ones.
	ErrUnknownPolicy = errors.New("unknown loss policy")
	// ErrZeroDepth refuses a depth below 1: nothing could ever be delivered
	// (§5.2).
	ErrZeroDepth = errors.New("queue depth must be at least 1")
)

// Options configure a Subscription.
type Options struct {
	// Depth is how many samples the queue holds. It must be at least 1.
	Depth int
	// Policy is what a full queue does.
	Policy Policy
}

// DefaultOptions returns depth 1024 and drop-oldest, the options every
// subscription gets when nobody chose (ranvier-streams §3.5).
func DefaultOptions() Options {
	return Options{Depth: DefaultDepth, Policy: DefaultPolicy}
}

// validate refuses what §5.2 says must be refused, where Rust does: when the
// options are given, not later (§8).
func (o Options) validate() error {
	switch o.Policy {
	case DropOldest, DropNewest:
	case Block, Halt:
		return fmt.Errorf("streams: subscribe with policy %v: %w", o.Policy, ErrPolicyNotImplemented)
	default:
		return fmt.Errorf("streams: subscribe with %v: %w", o.Policy, ErrUnknownPolicy)
	}
	if o.Depth < 1 {
		return fmt.Errorf("streams: subscribe with depth %d: %w", o.Depth, ErrZeroDepth)
	}
	return nil
}

// QueueCounters is what a subscription's queue reports. The three counts
// answer different questions and are never folded into one another
// (ranvier-streams §3.5, §3.8).
type QueueCounters struct {
	// Delivered counts samples placed in the queue. Under drop-oldest a
	// placed sample can be evicted later, so it is not what the subscriber
	// read (§3.8).
	Delivered uint64
	// Dropped counts samples this queue discarded because it was full,
	// exactly once each (§5.4). It is not missing.
	Dropped uint64
	// Readable is how many samples are queued now.
	Readable int
	// Peak is the deepest the queue has been, recorded after each push
	// (§5.4).
	Peak int
	// Depth is the configured depth, to read Peak against.
	Depth int
}

// Subscription is a bounded queue of samples with a loss policy, and the
// sequence tracker that watches what arrives at it. A Subscription is not
// safe for concurrent use.
//
// Samples still queued when a Subscription is abandoned are discarded and
// counted nowhere: that is not a loss anybody incurred (§3.6).
type Subscription struct {
	opts    Options
	tracker *Tracker
	buf     []Sample // ring, grown on demand up to opts.Depth
	head    int      // index of the oldest queued sample
	n       int      // queued samples
	q       QueueCounters
}

// NewSubscription returns an empty subscription, or an error wrapping
// ErrPolicyNotImplemented, ErrUnknownPolicy or ErrZeroDepth.
func NewSubscription(opts Options) (*Subscription, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	return &Subscription{
		opts:    opts,
		tracker: NewTracker(),
		buf:     make([]Sample, min(opts.Depth, initialRing)),
		q:       QueueCounters{Depth: opts.Depth},
	}, nil
}

// Push offers a sample that arrived on connection conn. It never blocks and
// never fails: a full queue is not an error (§5.1).
func (s *Subscription) Push(conn ConnID, smp Sample) {
	// §3.1: read the sequence on arrival, before the policy runs, so that a
	// sample this queue discards is not counted as missing (§3.5).
	s.tracker.Observe(conn, smp)

	if s.n == len(s.buf) && len(s.buf) < s.opts.Depth {
		s.grow()
	}
	if s.n == len(s.buf) {
		s.q.Dropped++
		if s.opts.Policy == DropNewest {
			// The arriving sample is never placed, so it is never delivered.
			return
		}
		// DropOldest: evict the head to make room.
		s.buf[s.head] = Sample{}
		s.head = s.next(s.head)
		s.n--
	}
	tail := s.head + s.n
	if tail >= len(s.buf) {
		tail -= len(s.buf)
	}
	s.buf[tail] = smp
	s.n++
	s.q.Delivered++
	if s.n > s.q.Peak {
		s.q.Peak = s.n
	}
}

// Pop takes the oldest queued sample. It reports false when the queue is
// empty.
func (s *Subscription) Pop() (Sample, bool) {
	if s.n == 0 {
		return Sample{}, false
	}
	smp := s.buf[s.head]
	// Clear the slot so the queue does not keep the values alive after the
	// subscriber is done with them (§7).
	s.buf[s.head] = Sample{}
	s.head = s.next(s.head)
	s.n--
	return smp, true
}

// Len returns how many samples are queued.
func (s *Subscription) Len() int { return s.n }

// Options returns the options the subscription was made with.
func (s *Subscription) Options() Options { return s.opts }

// Queue returns the queue's counters.
func (s *Subscription) Queue() QueueCounters {
	q := s.q
	q.Readable = s.n
	return q
}

// Gaps returns the gap counters of the subscription's tracker (§3.7).
func (s *Subscription) Gaps() Counters { return s.tracker.Counters() }

// initialRing is the ring's first allocation. The depth is a bound, not a
// size to reserve: a subscription with a depth of four billion that holds ten
// samples must cost ten samples, whoever chose the depth.
const initialRing = 64

// grow doubles the ring, up to the depth, keeping the queued samples in
// order from index 0.
func (s *Subscription) grow() {
	buf := make([]Sample, min(max(2*len(s.buf), 1), s.opts.Depth))
	for i := range s.n {
		buf[i] = s.buf[(s.head+i)%len(s.buf)]
	}
	s.buf, s.head = buf, 0
}

func (s *Subscription) next(i int) int {
	i++
	if i == len(s.buf) {
		i = 0
	}
	return i
}
