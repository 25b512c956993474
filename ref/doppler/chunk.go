package doppler

import (
	"fmt"
	"math"
)

// NeedsChunking reports whether a frame with payloadBytes of payload must be
// chunked on a connection whose max_payload is maxPayload: whether the
// header and payload together exceed it (the doppler pins (docs/requirements.md)).
func NeedsChunking(payloadBytes uint64, maxPayload int) bool {
	return maxPayload < HeaderSize || payloadBytes > uint64(maxPayload-HeaderSize)
}

// ChunkSize returns the payload bytes every chunk but the last carries on a
// connection whose max_payload is maxPayload, for elements of elem bytes:
// what is left after the header and chunk block, rounded down to whole
// elements so no element straddles two messages (doppler §4). It fails with
// DP_ERR_TOO_LARGE when not even one element fits.
func ChunkSize(maxPayload, elem int) (int, error) {
	if elem <= 0 {
		return 0, &Error{Code: ErrInvalid, Op: "chunk", Detail: fmt.Sprintf("element size %d", elem)}
	}
	room := maxPayload - HeaderSize - ChunkBlockSize
	if room < elem {
		return 0, &Error{Code: ErrTooLarge, Op: "chunk",
			Detail: fmt.Sprintf("max_payload %d leaves no room for one %d-byte element after the header and chunk block", maxPayload, elem)}
	}
	return room / elem * elem, nil
}

// A Chunker cuts frames into messages. Its fields are the two decisions
// doppler §4 and the doppler pins (docs/requirements.md) make for Chunk — whether a frame must be
// chunked, and how much payload each chunk carries — so that a sender that
// decides either otherwise can be built from this one and compared with it.
// The zero Chunker is the specified one; Chunk uses it.
type Chunker struct {
	// NeedsChunking reports whether a frame of payloadBytes must be chunked
	// on a connection whose max_payload is maxPayload. Nil means
	// NeedsChunking.
	NeedsChunking func(payloadBytes uint64, maxPayload int) bool
	// ChunkSize returns the payload bytes every chunk but the last carries,
	// for elements of elem bytes. Nil means ChunkSize.
	ChunkSize func(maxPayload, elem int) (int, error)
}

// Chunk returns the messages that carry f, in byte order o, on a connection
// whose max_payload is maxPayload. A frame that fits is one unchunked
// message. A frame that does not becomes chunks of [ChunkSize] bytes, the
// last holding the rest; each chunk message has CHUNKED set, f's sequence,
// num_samples and payload_bytes of its own payload, and a chunk block with
// the frame's totals (doppler §4, the doppler pins (docs/requirements.md)).
//
// f must be a valid logical frame (see [NewFrame]); its sequence is used as
// given — [Sender.Publish] is what assigns one. The messages share one
// allocation and are capped, so appending to one never overwrites the next.
func Chunk(f Frame, maxPayload int, o Order) ([][]byte, error) {
	return Chunker{}.Chunk(f, maxPayload, o)
}

// Chunk is the package's Chunk, with c's decisions.
func (c Chunker) Chunk(f Frame, maxPayload int, o Order) ([][]byte, error) {
	elem, err := f.validate("chunk")
	if err != nil {
		return nil, err
	}
	total := len(f.Payload)
	needs, sizeOf := c.NeedsChunking, c.ChunkSize
	if needs == nil {
		needs = NeedsChunking
	}
	if sizeOf == nil {
		sizeOf = ChunkSize
	}
	if !needs(uint64(total), maxPayload) {
		return [][]byte{f.AppendMessage(make([]byte, 0, HeaderSize+total), o)}, nil
	}
	size, err := sizeOf(maxPayload, elem)
	if err == nil && size <= 0 {
		err = &Error{Code: ErrInvalid, Op: "chunk", Detail: fmt.Sprintf("a chunk size of %d", size)}
	}
	if err != nil {
		return nil, withSequence(err, f.Header.Sequence)
	}
	count := (total + size - 1) / size
	if uint64(count) > math.MaxUint32 {
		return nil, &Error{Code: ErrTooLarge, Op: "chunk", Sequence: f.Header.Sequence, HasSequence: true,
			Detail: fmt.Sprintf("%d chunks do not fit chunk_count", count)}
	}

	const overhead = HeaderSize + ChunkBlockSize
	buf := make([]byte, count*overhead+total)
	msgs := make([][]byte, count)
	block := ChunkBlock{
		Count:        uint32(count),
		TotalSamples: f.Header.NumSamples,
		TotalBytes:   f.Header.PayloadBytes,
	}
	h := f.Header
	h.Flags |= FlagChunked
	for i := range count {
		part := f.Payload[i*size : min((i+1)*size, total)]
		h.NumSamples = uint64(len(part) / elem)
		h.PayloadBytes = uint64(len(part))
		block.Index = uint32(i)
		n := overhead + len(part)
		m := buf[:n:n]
		buf = buf[n:]
		putHeader(m[:HeaderSize], o, h)
		putChunkBlock(m[HeaderSize:overhead], o, block)
		copy(m[overhead:], part)
		msgs[i] = m
	}
	return msgs, nil
}
