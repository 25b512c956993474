package doppler

import (
	"encoding/binary"
	"fmt"
	"math"
)

// Header is dp_header_t v2, field for field (the doppler pins (docs/requirements.md)). Every field is
// kept, the constant ones included, so that a test can build a header a
// conforming sender would never write.
type Header struct {
	Magic        uint64
	VersionMajor uint16
	VersionMinor uint16
	Flags        uint32
	Kind         Kind
	Format       Format
	DataRep      [4]byte // the sender's host order as BLUE's token; never decisive
	Sequence     uint64
	TimestampNs  uint64 // CLOCK_REALTIME nanoseconds, stamped at send
	NumSamples   uint64 // elements in this message's payload (a chunk's own)
	PayloadBytes uint64 // bytes in this message's payload (a chunk's own)
	SampleRateHz float64
}

// NewHeader returns the header a conforming sender of byte order o writes for
// a frame of type t: magic, version 2.0, kind, format and data_rep set, every
// count and stamp zero.
func NewHeader(t Type, o Order) Header {
	return Header{
		Magic:        Magic,
		VersionMajor: VersionMajor,
		VersionMinor: VersionMinor,
		Kind:         t.Kind(),
		Format:       t.Format(),
		DataRep:      o.dataRep(),
	}
}

// Chunked reports whether FlagChunked is set, that is whether a chunk block
// follows the header.
func (h Header) Chunked() bool { return h.Flags&FlagChunked != 0 }

// AppendHeader appends h's 64 bytes in byte order o to dst and returns the
// extended slice. It writes every field as given and checks nothing.
func AppendHeader(dst []byte, o Order, h Header) []byte {
	n := len(dst)
	dst = append(dst, make([]byte, HeaderSize)...)
	putHeader(dst[n:n+HeaderSize], o, h)
	return dst
}

func putHeader(b []byte, o Order, h Header) {
	_ = b[HeaderSize-1]
	o.putU64(b[offMagic:], h.Magic)
	o.putU16(b[offVersionMajor:], h.VersionMajor)
	o.putU16(b[offVersionMinor:], h.VersionMinor)
	o.putU32(b[offFlags:], h.Flags)
	o.putU16(b[offKind:], uint16(h.Kind))
	o.putU16(b[offFormat:], uint16(h.Format))
	copy(b[offDataRep:offDataRep+4], h.DataRep[:])
	o.putU64(b[offSequence:], h.Sequence)
	o.putU64(b[offTimestampNs:], h.TimestampNs)
	o.putU64(b[offNumSamples:], h.NumSamples)
	o.putU64(b[offPayloadBytes:], h.PayloadBytes)
	o.putU64(b[offSampleRateHz:], math.Float64bits(h.SampleRateHz))
}

// DecodeHeader reads the first 64 bytes of b in byte order o. It judges
// nothing but the length; [Check] is the receiver's judgement.
func DecodeHeader(b []byte, o Order) (Header, error) {
	if len(b) < HeaderSize {
		return Header{}, &Error{Code: ErrInvalid, Op: "decode header", Verdict: ShortMessage,
			Detail: fmt.Sprintf("%d bytes, a header needs %d", len(b), HeaderSize)}
	}
	return decodeHeader(b, o), nil
}

// decodeHeader reads a header from b, which the caller has proved holds at
// least HeaderSize bytes. The order is tested once and each order has its own
// straight-line body, because the header check runs on every message and a
// branch per field costs more than the whole check should.
func decodeHeader(b []byte, o Order) (h Header) {
	b = b[:HeaderSize]
	if o == BigEndian {
		be := binary.BigEndian
		h.Magic = be.Uint64(b[offMagic:])
		h.VersionMajor = be.Uint16(b[offVersionMajor:])
		h.VersionMinor = be.Uint16(b[offVersionMinor:])
		h.Flags = be.Uint32(b[offFlags:])
		h.Kind = Kind(be.Uint16(b[offKind:]))
		h.Format = Format(be.Uint16(b[offFormat:]))
		h.Sequence = be.Uint64(b[offSequence:])
		h.TimestampNs = be.Uint64(b[offTimestampNs:])
		h.NumSamples = be.Uint64(b[offNumSamples:])
		h.PayloadBytes = be.Uint64(b[offPayloadBytes:])
		h.SampleRateHz = math.Float64frombits(be.Uint64(b[offSampleRateHz:]))
	} else {
		le := binary.LittleEndian
		h.Magic = le.Uint64(b[offMagic:])
		h.VersionMajor = le.Uint16(b[offVersionMajor:])
		h.VersionMinor = le.Uint16(b[offVersionMinor:])
		h.Flags = le.Uint32(b[offFlags:])
		h.Kind = Kind(le.Uint16(b[offKind:]))
		h.Format = Format(le.Uint16(b[offFormat:]))
		h.Sequence = le.Uint64(b[offSequence:])
		h.TimestampNs = le.Uint64(b[offTimestampNs:])
		h.NumSamples = le.Uint64(b[offNumSamples:])
		h.PayloadBytes = le.Uint64(b[offPayloadBytes:])
		h.SampleRateHz = math.Float64frombits(le.Uint64(b[offSampleRateHz:]))
	}
	h.DataRep = [4]byte(b[offDataRep : offDataRep+4])
	return h
}

// ChunkBlock is dp_chunk_t, the 24 bytes that follow the header of every
// message of a chunked frame (doppler §4, the doppler pins (docs/requirements.md)).
type ChunkBlock struct {
	Index        uint32 // this chunk's position, from 0
	Count        uint32 // chunks in the frame
	TotalSamples uint64 // elements in the whole frame
	TotalBytes   uint64 // payload bytes in the whole frame
}

// AppendChunkBlock appends c's 24 bytes in byte order o to dst and returns
// the extended slice.
func AppendChunkBlock(dst []byte, o Order, c ChunkBlock) []byte {
	n := len(dst)
	dst = append(dst, make([]byte, ChunkBlockSize)...)
	putChunkBlock(dst[n:n+ChunkBlockSize], o, c)
	return dst
}

func putChunkBlock(b []byte, o Order, c ChunkBlock) {
	_ = b[ChunkBlockSize-1]
	o.putU32(b[offChunkIndex:], c.Index)
	o.putU32(b[offChunkCount:], c.Count)
	o.putU64(b[offTotalSamples:], c.TotalSamples)
	o.putU64(b[offTotalBytes:], c.TotalBytes)
}

// DecodeChunkBlock reads a chunk block from the first 24 bytes of b in byte
// order o. Pass the bytes after the header, not the whole message.
func DecodeChunkBlock(b []byte, o Order) (ChunkBlock, error) {
	if len(b) < ChunkBlockSize {
		return ChunkBlock{}, &Error{Code: ErrInvalid, Op: "decode chunk block", Verdict: ShortChunkBlock,
			Detail: fmt.Sprintf("%d bytes, a chunk block needs %d", len(b), ChunkBlockSize)}
	}
	return decodeChunkBlock(b, o), nil
}

func decodeChunkBlock(b []byte, o Order) ChunkBlock {
	b = b[:ChunkBlockSize]
	return ChunkBlock{
		Index:        o.u32(b[offChunkIndex:]),
		Count:        o.u32(b[offChunkCount:]),
		TotalSamples: o.u64(b[offTotalSamples:]),
		TotalBytes:   o.u64(b[offTotalBytes:]),
	}
}
