package streams

import (
	"errors"
	"fmt"
	"math"
	"sync"
)

// The errors Runtime wraps. Test for them with errors.Is.
var (
	// ErrEmptyName refuses a stream with no name: a name is the only address
	// in the system (ranvier-streams §6.1).
	ErrEmptyName = errors.New("stream name is empty")
	// ErrRefsExhausted refuses a stream once every reference has been
	// allocated. References are never reused (§2.6), so the runtime has none
	// left to give.
	ErrRefsExhausted = errors.New("stream references exhausted")
)

// Runtime is the publisher side of one Ranvier runtime: it allocates stream
// references and connection identifiers, and numbers and stamps samples. A
// Runtime is safe for concurrent use.
type Runtime struct {
	clock func() uint64

	mu       sync.Mutex
	lastRef  uint32 // last reference allocated; 0 before the first
	lastConn ConnID // last connection identifier allocated
	local    ConnID // the connection of everything published locally
}

// NewRuntime returns a runtime whose publish timestamps are read from clock,
// which must be non-nil and must return the host's system-wide,
// sleep-inclusive monotonic clock in nanoseconds (ranvier-streams §4.1). The
// clock is a parameter because Go's standard library does not expose such a
// clock and because tests need one they control.
func NewRuntime(clock func() uint64) *Runtime {
	r := &Runtime{clock: clock}
	r.local = r.newConnLocked()
	return r
}

// newConnLocked allocates a connection identifier. r.mu must be held, or r
// not yet shared.
func (r *Runtime) newConnLocked() ConnID {
	r.lastConn++
	return r.lastConn
}

// allocRef allocates a reference from FirstStreamRef up, never reusing one,
// including after the stream that held it is gone (§2.6). Produced and
// adopted streams share the counter, as Rust's do; §2.6 allows any scheme
// that keeps references unique and unreused.
func (r *Runtime) allocRef(name string) (uint32, error) {
	if name == "" {
		return 0, fmt.Errorf("streams: open stream: %w", ErrEmptyName)
	}
	if r.lastRef == math.MaxUint32 {
		return 0, fmt.Errorf("streams: open stream %q: %w", name, ErrRefsExhausted)
	}
	if r.lastRef == 0 {
		r.lastRef = FirstStreamRef
	} else {
		r.lastRef++
	}
	return r.lastRef, nil
}

// Open declares a stream this runtime produces. sourceClockDomain names the
// clock the stream's source timestamps are on; empty means it carries none
// (§4.2, §4.3).
func (r *Runtime) Open(name, sourceClockDomain string) (*Stream, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	ref, err := r.allocRef(name)
	if err != nil {
		return nil, err
	}
	return &Stream{rt: r, name: name, ref: ref, conn: r.local, clockDomain: sourceClockDomain}, nil
}

// Adopt declares a stream that republishes samples numbered and stamped
// elsewhere, such as a recording being replayed. It gets a reference from
// the same counter as produced streams and a connection identifier of its
// own, so a replayed stream 1 and a live stream 1 never merge (§2.5).
func (r *Runtime) Adopt(name string) (*Adopted, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	ref, err := r.allocRef(name)
	if err != nil {
		return nil, err
	}
	return &Adopted{name: name, ref: ref, conn: r.newConnLocked()}, nil
}

// Stream is a stream this runtime produces. It owns exactly one sequence
// counter (ranvier-streams §1, §2.2). Its methods are safe for concurrent
// use; publishes on different streams never wait for each other (§2.3).
type Stream struct {
	rt          *Runtime
	name        string
	ref         uint32
	conn        ConnID
	clockDomain string

	mu   sync.Mutex
	last uint64 // last sequence assigned; 0 before the first
}

// Name returns the name the stream publishes under.
func (s *Stream) Name() string { return s.name }

// Ref returns the stream's reference, carried on every sample.
func (s *Stream) Ref() uint32 { return s.ref }

// Conn returns the connection identifier of local publishing, shared by
// every stream the runtime produces.
func (s *Stream) Conn() ConnID { return s.conn }

// CarriesSourceTimestamp reports whether a source timestamp given to Publish
// will be carried, so that a node discovers a missing clock-domain
// declaration rather than a missing timestamp (§4.2).
func (s *Stream) CarriesSourceTimestamp() bool { return s.clockDomain != "" }

// Publish numbers and stamps one sample and hands it to deliver, which may
// be nil. The node supplies neither the sequence nor the publish timestamp
// (§2.1, §4.1). Numbering and delivery are one step under the stream's lock,
// so two samples of one stream can never be delivered out of sequence order
// (§2.3). Publish returns nothing: publishing cannot block or fail (§5.1).
//
// A source timestamp given to a stream that named no clock domain is
// replaced by 0 rather than sent or refused (§4.2).
func (s *Stream) Publish(sourceNs uint64, values []byte, deliver func(Sample)) {
	if !s.CarriesSourceTimestamp() {
		sourceNs = 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	// §2.1: the first sample is 1 and each one adds exactly 1. The counter
	// is the stream's own, never shared with another stream of the name.
	s.last++
	smp := Sample{
		StreamRef:   s.ref,
		Sequence:    s.last,
		MonotonicNs: s.rt.clock(),
		SourceNs:    sourceNs,
		Values:      values,
	}
	if deliver != nil {
		deliver(smp)
	}
}

// Sent returns how many samples the stream has published. For a produced
// stream it equals LastSequence (§2.5).
func (s *Stream) Sent() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last
}

// LastSequence returns the sequence of the most recent sample, 0 before the
// first.
func (s *Stream) LastSequence() uint64 { return s.Sent() }

// Adopted is a stream that republishes samples numbered and stamped
// elsewhere (ranvier-streams §2.5). Its methods are safe for concurrent use.
type Adopted struct {
	name string
	ref  uint32
	conn ConnID

	mu   sync.Mutex
	sent uint64
	last uint64
}

// Name returns the name the stream publishes under.
func (a *Adopted) Name() string { return a.name }

// Ref returns the reference this runtime allocated to the stream.
func (a *Adopted) Ref() uint32 { return a.ref }

// Conn returns the stream's own connection identifier, distinct from local
// publishing and from every other adopted stream (§2.5).
func (a *Adopted) Conn() ConnID { return a.conn }

// Republish passes smp on to deliver, which may be nil. The sequence and
// both timestamps pass through untouched, so a recording's 1, 2, 3, 7 still
// shows the three samples lost before it was made; stream_ref is the one
// field overwritten, because it is this runtime's label (§2.5, §4.1). The
// source timestamp is not gated on a clock domain, as in Rust (§8).
func (a *Adopted) Republish(smp Sample, deliver func(Sample)) {
	smp.StreamRef = a.ref
	a.mu.Lock()
	defer a.mu.Unlock()
	a.sent++
	a.last = smp.Sequence
	if deliver != nil {
		deliver(smp)
	}
}

// Sent returns how many samples the stream has republished. It is not the
// last sequence number, and the two differ by what was lost before the
// recording was made (§2.5).
func (a *Adopted) Sent() uint64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.sent
}

// LastSequence returns the sequence of the most recently republished
// sample, 0 before the first.
func (a *Adopted) LastSequence() uint64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.last
}
