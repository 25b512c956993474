package tlv

import (
	"bytes"
	"io"
	"iter"
)

// A Rope is a byte sequence held as a chain of views over segments: the storage
// axis of the graph model (§The two compositions). A rope is blind to TLV
// structure; a view boundary may fall anywhere, including inside a header.
//
// A Rope never copies or writes the bytes it views: the caller must not modify a
// segment while a rope over it is in use. Ropes are values; every operation
// returns a new rope that shares segments with its operands, which is how the
// graph model's refcounted views map onto Go's garbage collector.
//
// The zero Rope is empty and ready to use.
type Rope struct {
	// segs[0][off:] holds the first byte. The chain may run past size (a view
	// made by a cursor keeps the tail of its parent's chain rather than trim
	// it, so making a view never allocates); size bounds it. No segment in
	// segs is empty.
	segs [][]byte
	off  int
	size int
}

// NewRope returns a rope whose views are the given segments, in order. Empty
// segments are dropped. The segments are shared, not copied.
func NewRope(segs ...[]byte) Rope {
	var r Rope
	for _, s := range segs {
		if len(s) == 0 {
			continue
		}
		r.segs = append(r.segs, s)
		r.size += len(s)
	}
	return r
}

// Len returns the number of bytes in the rope.
func (r Rope) Len() int { return r.size }

// Views returns an iterator over the rope's views, in order. Each view is a
// slice of a segment trimmed to the rope's bounds; none is empty.
func (r Rope) Views() iter.Seq[[]byte] {
	return func(yield func([]byte) bool) {
		left, off := r.size, r.off
		for _, s := range r.segs {
			if left == 0 {
				return
			}
			v := s[off:]
			off = 0
			if len(v) > left {
				v = v[:left]
			}
			left -= len(v)
			if !yield(v) {
				return
			}
		}
	}
}

// NumViews returns how many views the rope is made of.
func (r Rope) NumViews() int {
	n := 0
	for range r.Views() {
		n++
	}
	return n
}

// AppendTo appends the rope's bytes to dst and returns the extended slice: the
// rope-to-flat-buffer walk of the graph model.
func (r Rope) AppendTo(dst []byte) []byte {
	for v := range r.Views() {
		dst = append(dst, v...)
	}
	return dst
}

// Bytes returns a copy of the rope's bytes in one new slice.
func (r Rope) Bytes() []byte {
	return r.AppendTo(make([]byte, 0, r.size))
}

// WriteTo writes the rope's views to w in order, one Write per view, so a writer
// that gathers (such as a net.Conn through net.Buffers) sends them without a copy.
func (r Rope) WriteTo(w io.Writer) (int64, error) {
	var n int64
	for v := range r.Views() {
		m, err := w.Write(v)
		n += int64(m)
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// Equal reports whether two ropes hold the same bytes, however they are split.
func (r Rope) Equal(o Rope) bool {
	if r.size != o.size {
		return false
	}
	a, b := r.cursor(), o.cursor()
	for a.left() > 0 {
		x, y := a.chunk(), b.chunk()
		n := min(len(x), len(y))
		if !bytes.Equal(x[:n], y[:n]) {
			return false
		}
		a.skip(n)
		b.skip(n)
	}
	return true
}

// EqualBytes reports whether the rope holds exactly the bytes b.
func (r Rope) EqualBytes(b []byte) bool {
	if r.size != len(b) {
		return false
	}
	for v := range r.Views() {
		if !bytes.Equal(v, b[:len(v)]) {
			return false
		}
		b = b[len(v):]
	}
	return true
}

// Slice returns the view of bytes [from, to) of the rope. It shares segments
// with r. Slice panics if the bounds are out of range, as slicing a []byte does.
func (r Rope) Slice(from, to int) Rope {
	if from < 0 || to < from || to > r.size {
		panic("tlv: Rope.Slice bounds out of range")
	}
	c := r.cursor()
	c.skip(from)
	return c.view(to - from)
}

// Concat returns a rope holding the bytes of the given ropes end to end. Only
// the chain of views is new; no byte is copied.
func Concat(ropes ...Rope) Rope {
	n := 0
	for _, r := range ropes {
		n += r.NumViews()
	}
	out := Rope{segs: make([][]byte, 0, n)}
	for _, r := range ropes {
		for v := range r.Views() {
			out.segs = append(out.segs, v)
			out.size += len(v)
		}
	}
	return out
}

func (r Rope) cursor() cursor {
	return cursor{segs: r.segs, o: r.off, end: r.size}
}

// A cursor walks a rope link by link. It is the one place that knows a view
// boundary may fall anywhere: every read crosses segments as needed, so the
// decoder above it never assumes a header, a length byte or a record is
// contiguous in memory.
type cursor struct {
	segs [][]byte
	i, o int // segs[i][o] is the next byte
	pos  int // bytes consumed
	end  int // bytes in the walk
}

func (c *cursor) left() int { return c.end - c.pos }

// chunk returns the contiguous bytes from the cursor to the end of its current
// view, bounded by the walk's end, without advancing.
func (c *cursor) chunk() []byte {
	if c.pos == c.end {
		return nil
	}
	s := c.segs[c.i][c.o:]
	if len(s) > c.left() {
		s = s[:c.left()]
	}
	return s
}

// skip advances n bytes; the caller has checked n <= left().
func (c *cursor) skip(n int) {
	c.pos += n
	for n > 0 {
		room := len(c.segs[c.i]) - c.o
		if n < room {
			c.o += n
			return
		}
		// Rest on the next segment's first byte rather than past the end
		// of this one, so view() never starts a rope on an exhausted segment.
		n -= room
		c.i++
		c.o = 0
	}
}

// readByte returns the next byte; the caller has checked left() > 0.
func (c *cursor) readByte() byte {
	b := c.segs[c.i][c.o]
	c.skip(1)
	return b
}

// read fills p from the cursor; the caller has checked len(p) <= left().
func (c *cursor) read(p []byte) {
	for len(p) > 0 {
		n := copy(p, c.chunk())
		p = p[n:]
		c.skip(n)
	}
}

// view returns the next n bytes as a rope without advancing. It never
// allocates: the new rope shares the cursor's chain from the current segment on.
func (c *cursor) view(n int) Rope {
	if n == 0 {
		return Rope{}
	}
	return Rope{segs: c.segs[c.i:], off: c.o, size: n}
}
