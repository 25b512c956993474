package doppler

import (
	"errors"
	"fmt"
	"math/bits"
)

// Resource bounds of a Reassembler whose fields are left zero. They are the
// reference receiver's choices, not wire constants.
const (
	// DefaultMaxFrameBytes is the largest logical frame a Reassembler
	// accepts: 256 MiB, 160 times the 1.6 MB frame doppler §4 uses as its
	// example.
	DefaultMaxFrameBytes = 256 << 20
	// DefaultEagerBytes is how much a Reassembler allocates on the word of a
	// chunk block alone: 4 MiB, so a frame of a few default-sized chunks is
	// assembled in one buffer with one copy.
	DefaultEagerBytes = 4 << 20
)

// Reassembler turns the messages of one subscription back into logical
// frames (doppler §4). Feed it every message in arrival order with Add. It
// holds at most one frame in progress, because a subject carries one
// publisher's in-order chunk sequence.
//
// Memory follows what has arrived, never what a chunk block claims: the
// frame buffer is allocated at the claimed total only up to EagerBytes, or
// twice the payload bytes already accepted, whichever is larger; a chunk that
// lands further out is held on its own until the buffer reaches it. A frame
// whose assembly stays within that bound — any frame of at most EagerBytes —
// copies each payload byte once.
//
// The zero value is a little-endian receiver with the default bounds. A
// Reassembler is not safe for concurrent use.
type Reassembler struct {
	// Order is the receiver's byte order, the one it expects Magic in.
	Order Order
	// MaxFrameBytes refuses, with DP_ERR_NOMEM, a frame whose chunk block
	// claims more payload than this. Zero means DefaultMaxFrameBytes.
	MaxFrameBytes uint64
	// EagerBytes bounds allocation ahead of arrival. Zero means
	// DefaultEagerBytes.
	EagerBytes uint64
	// Check, when set, is the header check Add judges each message with
	// instead of [Check]: conform sets it to run one implementation's check
	// in front of the reference's reassembly. A message it accepts that
	// cannot be read (shorter than a header, or than its chunk block, or of
	// a kind and format with no element size) is refused all the same.
	Check func(msg []byte, o Order) Verdict

	cur asm // the frame in progress, when cur.active

	// The sequence of the frame just delivered from chunks, so that a late
	// repeat of one of its chunks stays a no-op instead of opening a frame
	// that can never complete. Any message of another sequence forgets it,
	// so a publisher that restarts its count is not mistaken for a repeat.
	done    bool
	doneSeq uint64
}

// asm is the state of one frame being assembled.
type asm struct {
	active bool
	seq    uint64
	head   Header // chunk 0's header once it arrives, else the first chunk's
	block  ChunkBlock
	elem   uint64
	size   uint64 // payload bytes of every chunk but the last

	got      uint32              // distinct indices accepted
	seenLow  uint64              // indices below 64, as bits
	seenHigh map[uint32]struct{} // indices from 64 up, only for frames that have them
	arrived  uint64              // payload bytes accepted

	buf     []byte            // the frame's payload; chunk i starts at i*size
	pending map[uint32][]byte // chunks beyond buf, copied, until buf grows to them
}

// Add consumes one message and reports what it did.
//
// A message that completes a frame delivers it: ok is true and f is the
// logical frame, its header taken from chunk 0 with CHUNKED cleared and
// num_samples and payload_bytes set to the totals. An unchunked message is
// delivered as it stands, its Payload aliasing msg like doppler's zero-copy
// receive; a reassembled frame's Payload is a buffer the caller now owns.
//
// err is non-nil when msg was refused or when it cost the frame in progress.
// Like io.Reader, Add can do both at once: a message from another publisher
// (another sequence, or an unchunked message) drops the frame in progress
// with DP_ERR_INVALID and is then taken on its own — delivered, or the start
// of a new frame — so a lost chunk loses its own frame and not the next.
// Callers should handle ok before considering err. A chunk that fails the
// header check, disagrees with the frame on its totals, or does not fit the
// frame's element-aligned geometry is refused and drops the frame too. A
// repeated chunk index is a no-op: ok false, err nil.
func (r *Reassembler) Add(msg []byte) (f Frame, ok bool, err error) {
	if v := r.check(msg); v != Accepted {
		e := &Error{Code: ErrInvalid, Op: "reassemble", Verdict: v, Detail: "refused by the header check"}
		if v != ShortMessage {
			e.Sequence, e.HasSequence = decodeHeader(msg, r.Order).Sequence, true
		}
		return Frame{}, false, r.refuse(e)
	}
	h := decodeHeader(msg, r.Order)
	if r.done && (!h.Chunked() || h.Sequence != r.doneSeq) {
		r.done = false
	}
	if !h.Chunked() {
		var dropped error
		if r.cur.active {
			dropped = r.drop(fmt.Sprintf("an unchunked message (sequence %d) arrived mid-frame", h.Sequence))
		}
		return Frame{Header: h, Payload: msg[HeaderSize:]}, true, dropped
	}
	c := decodeChunkBlock(msg[HeaderSize:], r.Order)
	payload := msg[HeaderSize+ChunkBlockSize:]

	if r.done && h.Sequence == r.doneSeq {
		return Frame{}, false, nil // a late repeat of a frame already delivered
	}
	if !r.cur.active {
		return r.start(&h, c, payload)
	}
	if h.Sequence != r.cur.seq {
		dropped := r.drop(fmt.Sprintf("a chunk of sequence %d arrived mid-frame", h.Sequence))
		f, ok, err := r.start(&h, c, payload)
		return f, ok, join(dropped, err)
	}
	if detail := r.cur.disagreement(&h, c); detail != "" {
		return Frame{}, false, r.refuse(&Error{Code: ErrInvalid, Op: "reassemble",
			Sequence: h.Sequence, HasSequence: true, Detail: detail})
	}
	if r.cur.seen(c.Index) {
		return Frame{}, false, nil
	}
	return r.accept(&h, c.Index, payload)
}

// check runs the header check, and refuses what the reference could not read
// even when a replaced Check accepted it.
func (r *Reassembler) check(msg []byte) Verdict {
	if r.Check == nil {
		return Check(msg, r.Order)
	}
	if v := r.Check(msg, r.Order); v != Accepted {
		return v
	}
	if len(msg) < HeaderSize {
		return ShortMessage
	}
	h := decodeHeader(msg, r.Order)
	switch {
	case h.Chunked() && len(msg) < HeaderSize+ChunkBlockSize:
		return ShortChunkBlock
	case elemSize(h.Kind, h.Format) == 0:
		return UnknownFormat
	}
	return Accepted
}

// Pending reports the sequence of the frame in progress, if there is one.
func (r *Reassembler) Pending() (seq uint64, ok bool) {
	return r.cur.seq, r.cur.active
}

// Buffered returns the payload bytes held for the frame in progress: the
// frame buffer and any chunks waiting for it.
func (r *Reassembler) Buffered() int {
	n := len(r.cur.buf)
	for _, p := range r.cur.pending {
		n += len(p)
	}
	return n
}

// Abandon drops the frame in progress and returns the DP_ERR_INVALID that
// reports it, or nil when no frame was in progress. A receive timeout is not
// a reason to call it: doppler §8b's loop of short receive timeouts must
// still be able to complete a chunked frame, so the roles keep a half frame
// across timeouts and drop it only when another frame's message arrives.
func (r *Reassembler) Abandon() error {
	if !r.cur.active {
		return nil
	}
	return r.drop("abandoned before its last chunk arrived")
}

// start opens a frame with its first-arriving chunk.
func (r *Reassembler) start(h *Header, c ChunkBlock, payload []byte) (Frame, bool, error) {
	elem := elemSize(h.Kind, h.Format) // never 0: the header check passed
	fail := func(code Code, format string, args ...any) (Frame, bool, error) {
		return Frame{}, false, &Error{Code: code, Op: "reassemble", Sequence: h.Sequence, HasSequence: true,
			Detail: fmt.Sprintf(format, args...)}
	}
	switch {
	case c.Count == 0:
		return fail(ErrInvalid, "chunk_count is 0")
	case c.Index >= c.Count:
		return fail(ErrInvalid, "chunk_index %d of chunk_count %d", c.Index, c.Count)
	}
	if hi, lo := bits.Mul64(c.TotalSamples, elem); hi != 0 || lo != c.TotalBytes {
		return fail(ErrInvalid, "total_samples %d of %d-byte elements does not make total_bytes %d",
			c.TotalSamples, elem, c.TotalBytes)
	}
	if limit := r.maxFrame(); c.TotalBytes > limit {
		return fail(ErrNoMem, "total_bytes %d exceeds this receiver's bound of %d", c.TotalBytes, limit)
	}
	size, detail := chunkGeometry(c, uint64(len(payload)), elem)
	if detail != "" {
		return fail(ErrInvalid, "%s", detail)
	}
	r.cur = asm{active: true, seq: h.Sequence, head: *h, block: c, elem: elem, size: size}
	return r.accept(h, c.Index, payload)
}

// chunkGeometry derives the size of every chunk but the last from one chunk
// of n payload bytes, and checks the frame can be cut that way: every chunk
// but the last equal and element-aligned, the last holding the rest and not
// more than the others (the doppler pins (docs/requirements.md)). It returns a reason when not.
func chunkGeometry(c ChunkBlock, n, elem uint64) (size uint64, detail string) {
	last := uint64(c.Count - 1)
	switch {
	case n == 0:
		return 0, "empty chunk"
	case last == 0:
		if n != c.TotalBytes {
			return 0, fmt.Sprintf("the only chunk holds %d of %d bytes", n, c.TotalBytes)
		}
		return n, ""
	case uint64(c.Index) < last:
		size = n
	default: // the last chunk arrived first: the others share what it leaves
		if n > c.TotalBytes || (c.TotalBytes-n)%last != 0 {
			return 0, fmt.Sprintf("a last chunk of %d bytes leaves %d of total_bytes %d, not a multiple of %d chunks",
				n, c.TotalBytes-min(n, c.TotalBytes), c.TotalBytes, last)
		}
		size = (c.TotalBytes - n) / last
		if size%elem != 0 || n > size {
			return 0, fmt.Sprintf("chunks of %d bytes with a last of %d are not an element-aligned split", size, n)
		}
	}
	hi, before := bits.Mul64(last, size) // bytes before the last chunk
	if hi != 0 || before >= c.TotalBytes || c.TotalBytes-before > size {
		return 0, fmt.Sprintf("%d chunks of %d bytes cannot carry total_bytes %d", c.Count, size, c.TotalBytes)
	}
	return size, ""
}

// accept places one new chunk of the frame in progress and delivers the frame
// when it is the last to arrive.
func (r *Reassembler) accept(h *Header, index uint32, payload []byte) (Frame, bool, error) {
	a := &r.cur
	n := uint64(len(payload))
	off := uint64(index) * a.size // cannot overflow: chunkGeometry bounded it by total_bytes
	want := a.size
	if index == a.block.Count-1 {
		want = a.block.TotalBytes - off
	}
	if n != want {
		return Frame{}, false, r.refuse(&Error{Code: ErrInvalid, Op: "reassemble", Sequence: h.Sequence, HasSequence: true,
			Detail: fmt.Sprintf("chunk %d holds %d bytes where the frame's split puts %d", index, n, want)})
	}
	if index == 0 {
		a.head = *h
	}
	a.markSeen(index)
	a.arrived += n
	complete := a.got == a.block.Count

	need := off + n
	if complete {
		need = a.block.TotalBytes
	}
	if limit := min(a.block.TotalBytes, max(r.eager(), 2*a.arrived)); need > uint64(len(a.buf)) && need <= limit {
		a.grow(limit)
	}
	if off+n <= uint64(len(a.buf)) {
		copy(a.buf[off:], payload)
	} else {
		if a.pending == nil {
			a.pending = make(map[uint32][]byte)
		}
		a.pending[index] = append([]byte(nil), payload...)
	}
	if !complete {
		return Frame{}, false, nil
	}

	f := Frame{Header: a.head, Payload: a.buf}
	f.Header.Flags &^= FlagChunked
	f.Header.NumSamples = a.block.TotalSamples
	f.Header.PayloadBytes = a.block.TotalBytes
	r.done, r.doneSeq = true, a.seq
	r.cur = asm{}
	return f, true, nil
}

// grow enlarges the frame buffer to n bytes and moves in the waiting chunks
// it now reaches.
func (a *asm) grow(n uint64) {
	buf := make([]byte, n)
	copy(buf, a.buf)
	a.buf = buf
	for i, p := range a.pending {
		if off := uint64(i) * a.size; off+uint64(len(p)) <= n {
			copy(buf[off:], p)
			delete(a.pending, i)
		}
	}
}

// disagreement says how a chunk of the frame's sequence contradicts what the
// frame's first chunk declared, or returns "".
func (a *asm) disagreement(h *Header, c ChunkBlock) string {
	switch {
	case c.Count != a.block.Count:
		return fmt.Sprintf("chunk_count %d, the frame's is %d", c.Count, a.block.Count)
	case c.TotalSamples != a.block.TotalSamples || c.TotalBytes != a.block.TotalBytes:
		return fmt.Sprintf("totals %d samples / %d bytes, the frame's are %d / %d",
			c.TotalSamples, c.TotalBytes, a.block.TotalSamples, a.block.TotalBytes)
	case h.Kind != a.head.Kind || h.Format != a.head.Format:
		return fmt.Sprintf("kind %v format %v, the frame's are %v %v", h.Kind, h.Format, a.head.Kind, a.head.Format)
	case c.Index >= c.Count:
		return fmt.Sprintf("chunk_index %d of chunk_count %d", c.Index, c.Count)
	}
	return ""
}

func (a *asm) seen(i uint32) bool {
	if i < 64 {
		return a.seenLow&(1<<i) != 0
	}
	_, ok := a.seenHigh[i]
	return ok
}

func (a *asm) markSeen(i uint32) {
	a.got++
	if i < 64 {
		a.seenLow |= 1 << i
		return
	}
	if a.seenHigh == nil {
		a.seenHigh = make(map[uint32]struct{})
	}
	a.seenHigh[i] = struct{}{}
}

// drop abandons the frame in progress and returns the error reporting it.
func (r *Reassembler) drop(why string) error {
	seq := r.cur.seq
	r.cur = asm{}
	return &Error{Code: ErrInvalid, Op: "reassemble", Sequence: seq, HasSequence: true,
		Detail: "frame dropped: " + why}
}

// refuse reports a refused message; a frame in progress is lost with it.
func (r *Reassembler) refuse(e *Error) error {
	if r.cur.active {
		e.Detail += fmt.Sprintf("; frame %d in progress dropped", r.cur.seq)
		r.cur = asm{}
	}
	return e
}

func (r *Reassembler) maxFrame() uint64 {
	if r.MaxFrameBytes == 0 {
		return DefaultMaxFrameBytes
	}
	return r.MaxFrameBytes
}

func (r *Reassembler) eager() uint64 {
	if r.EagerBytes == 0 {
		return DefaultEagerBytes
	}
	return r.EagerBytes
}

// join returns a, b, or both joined, leaving a single error unwrapped so
// that a caller's errors.As finds the *Error directly.
func join(a, b error) error {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	return errors.Join(a, b)
}
