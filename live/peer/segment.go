package peer

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/conform-suite/conform/ref/wire"
	"google.golang.org/protobuf/proto"
)

// Segmentation says how a run of frames is cut into socket writes. With
// Nagle off each write leaves as its own segment, and with a Gap between
// writes the far end reads them apart, so a reader that assumes whole frames
// per read fails on the wire (ranvier-wire §1.1, §1.3).
type Segmentation struct {
	// Name describes the segmentation for a record.
	Name string
	// Gap is the pause between two writes.
	Gap time.Duration
	cut func(frames [][]byte) [][]byte
}

// Writes returns the socket writes s cuts frames into, in order, for a
// record of exactly what was sent.
func (s Segmentation) Writes(frames ...[]byte) [][]byte {
	if s.cut == nil {
		return frames
	}
	return s.cut(frames)
}

// Whole writes each frame in one write.
func Whole() Segmentation {
	return Segmentation{Name: "whole", cut: func(frames [][]byte) [][]byte { return frames }}
}

// Coalesced writes every frame in one write: many frames per read
// (ranvier-wire §1.3).
func Coalesced() Segmentation {
	return Segmentation{Name: "coalesced", cut: func(frames [][]byte) [][]byte {
		return [][]byte{concat(frames)}
	}}
}

// ByteAtATime writes one byte per write, gap apart.
func ByteAtATime(gap time.Duration) Segmentation {
	return Chunks(1, gap)
}

// Chunks writes n bytes per write regardless of frame boundaries, gap apart.
func Chunks(n int, gap time.Duration) Segmentation {
	if n < 1 {
		n = 1
	}
	return Segmentation{Name: fmt.Sprintf("chunks-%d", n), Gap: gap, cut: func(frames [][]byte) [][]byte {
		all := concat(frames)
		var out [][]byte
		for len(all) > 0 {
			k := min(n, len(all))
			out = append(out, all[:k])
			all = all[k:]
		}
		return out
	}}
}

// SplitPrefix cuts every frame's length prefix after at bytes (1, 2 or 3),
// gap apart: a write ends inside one frame's prefix and the next write
// carries the rest of that frame and the start of the next frame's prefix.
func SplitPrefix(at int, gap time.Duration) Segmentation {
	at = max(1, min(at, wire.PrefixLen-1))
	return Segmentation{Name: fmt.Sprintf("split-prefix-%d", at), Gap: gap, cut: func(frames [][]byte) [][]byte {
		all := concat(frames)
		var cuts []int
		off := 0
		for _, f := range frames {
			if len(f) > at {
				cuts = append(cuts, off+at)
			}
			off += len(f)
		}
		return cutAt(all, cuts)
	}}
}

// Random cuts the bytes at random points, from 1 to maxChunk bytes apart,
// drawn from seed, gap apart.
func Random(seed uint64, maxChunk int, gap time.Duration) Segmentation {
	maxChunk = max(1, maxChunk)
	return Segmentation{Name: fmt.Sprintf("random-%d-%d", seed, maxChunk), Gap: gap, cut: func(frames [][]byte) [][]byte {
		rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
		all := concat(frames)
		var cuts []int
		for off := 0; ; {
			off += 1 + rng.IntN(maxChunk)
			if off >= len(all) {
				break
			}
			cuts = append(cuts, off)
		}
		return cutAt(all, cuts)
	}}
}

func concat(frames [][]byte) []byte {
	var all []byte
	for _, f := range frames {
		all = append(all, f...)
	}
	return all
}

// cutAt splits b at the ascending offsets cuts, dropping empty pieces.
func cutAt(b []byte, cuts []int) [][]byte {
	var out [][]byte
	prev := 0
	for _, c := range cuts {
		if c > prev && c < len(b) {
			out = append(out, b[prev:c])
			prev = c
		}
	}
	if prev < len(b) {
		out = append(out, b[prev:])
	}
	return out
}

// EncodeFrame encodes m and frames it.
func EncodeFrame(m proto.Message) ([]byte, error) {
	payload, err := wire.Encode(m)
	if err != nil {
		return nil, fmt.Errorf("peer: encoding %T: %w", m, err)
	}
	b, err := wire.AppendFrame(nil, payload)
	if err != nil {
		return nil, fmt.Errorf("peer: framing %T: %w", m, err)
	}
	return b, nil
}

// MustFrame is EncodeFrame for a message known to encode; it panics on an
// error.
func MustFrame(m proto.Message) []byte {
	b, err := EncodeFrame(m)
	if err != nil {
		panic(err)
	}
	return b
}

// RawFrame frames payload as it is, which need not be a message: garbage in
// a well-formed frame (ranvier-wire §6.3). A payload above the ceiling is
// refused by panicking; use Prefix to claim a length that is not sent.
func RawFrame(payload []byte) []byte {
	b, err := wire.AppendFrame(nil, payload)
	if err != nil {
		panic(fmt.Sprintf("peer: raw frame: %v", err))
	}
	return b
}

// EmptyFrame is the zero-length frame 00 00 00 00: a message with every field
// at its default (ranvier-wire §1.2, §6.4).
func EmptyFrame() []byte { return []byte{0, 0, 0, 0} }

// Prefix returns a bare length prefix claiming n bytes, with nothing after
// it.
func Prefix(n uint32) []byte { return binary.BigEndian.AppendUint32(nil, n) }

// TooLargePrefix returns a prefix claiming one byte more than the ceiling,
// 01 00 00 01: a framing error the reader must not resynchronise after
// (ranvier-wire §2, §6.2).
func TooLargePrefix() []byte { return Prefix(wire.MaxPayload + 1) }
