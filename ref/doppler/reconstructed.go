package doppler

// This file is the only place the doppler wire constants are written down.
// Each one is marked "pinned" when a source sentence states it (the section is
// given) or "reconstructed" when this suite chose it, following
// the doppler pins (docs/requirements.md). Code reads them from here and never restates them;
// the tests check them against the spec's own words and printed bytes.

// Sizes of the two blocks that precede a payload.
const (
	// HeaderSize is the size of dp_header_t v2. Reconstructed layout
	// (the doppler pins (docs/requirements.md)); the 64-versus-96 contradiction is settled in §4.
	HeaderSize = 64

	// ChunkBlockSize is the size of dp_chunk_t, which follows the header only
	// when FlagChunked is set. Pinned: doppler §4, the doppler pins (docs/requirements.md).
	ChunkBlockSize = 24
)

// Byte offsets of the dp_header_t fields. Reconstructed: the doppler pins'
// table (doppler §3 says the order is declaration order; the offsets are ours).
const (
	offMagic        = 0
	offVersionMajor = 8
	offVersionMinor = 10
	offFlags        = 12
	offKind         = 16
	offFormat       = 18
	offDataRep      = 20
	offSequence     = 24
	offTimestampNs  = 32
	offNumSamples   = 40
	offPayloadBytes = 48
	offSampleRateHz = 56
)

// Byte offsets of the dp_chunk_t fields, relative to the start of the block.
// Reconstructed: the doppler pins (docs/requirements.md).
const (
	offChunkIndex   = 0
	offChunkCount   = 4
	offTotalSamples = 8
	offTotalBytes   = 16
)

// Magic is dp_header_t's magic read in the writer's own byte order: the bytes
// "DPLRSTRM" on a little-endian host. Its byte-swap is what a peer of the
// other endianness sees. The value is reconstructed (the doppler pins (docs/requirements.md)); that it
// is one integer whose byte-swap does not match is pinned (doppler §3).
const Magic uint64 = 0x4D525453524C5044

// magicSwapped is Magic with its bytes reversed: what a receiver reads when
// the sender's byte order is the opposite of its own.
const magicSwapped uint64 = 0x44504C525354524D // bits.ReverseBytes64(Magic)

// VersionMajor is the only major version a receiver accepts. Pinned: doppler
// §3 (a different major is refused), the doppler pins (docs/requirements.md) (value 2). Any minor
// version is accepted; VersionMinor is what this reference writes.
const (
	VersionMajor uint16 = 2
	VersionMinor uint16 = 0
)

// Header flags. FlagChunked is pinned to exist (doppler §4); its value and the
// known mask are reconstructed (the doppler pins (docs/requirements.md)).
const (
	FlagChunked uint32 = 0x1
	FlagKnown   uint32 = FlagChunked
)

// Frame kinds. Pinned: KindTLM = 1 (doppler §3); KindIQ = 0 reconstructed.
const (
	KindIQ  Kind = 0
	KindTLM Kind = 1
)

// Format codes: the two-character Midas BLUE code, first character in the low
// byte. The encoding is pinned (doppler §3); the raw-bytes face's "SB" is
// reconstructed (the doppler pins (docs/requirements.md)). A telemetry frame carries FormatNone.
const (
	FormatCB   Format = 'C' | 'B'<<8 // 0x4243, CI8
	FormatCI   Format = 'C' | 'I'<<8 // 0x4943, CI16
	FormatCL   Format = 'C' | 'L'<<8 // 0x4C43, CI32
	FormatCF   Format = 'C' | 'F'<<8 // 0x4643, CF32
	FormatCD   Format = 'C' | 'D'<<8 // 0x4443, CF64
	FormatSB   Format = 'S' | 'B'<<8 // 0x4253, raw bytes
	FormatNone Format = 0
)

// TelemetryRecordSize is the size of one dp_tlm_rec_t. Pinned: doppler §3.
const TelemetryRecordSize = 16

// The data_rep tokens, BLUE's names for a host byte order. Pinned: doppler §3
// (BLUE's own token); the spelling per order is the doppler pins (docs/requirements.md).
const (
	dataRepLittle = "EEEI"
	dataRepBig    = "IEEE"
)

// The seven frame types a socket can carry. Names CI8…CF64 and TLM are pinned
// (doppler §3); the raw-bytes face is doppler §2; the order of this
// enumeration is ours and never goes on the wire.
const (
	TypeCI8 Type = iota + 1
	TypeCI16
	TypeCI32
	TypeCF32
	TypeCF64
	TypeRaw
	TypeTLM
)

// describe gives a Type's kind, format, element size, subject token and
// name, and false for a Type outside the enumeration. Element sizes are
// pinned (the doppler pins (docs/requirements.md), doppler §3); the subject tokens are reconstructed
// (the doppler pins (docs/requirements.md)).
func describe(t Type) (typeDesc, bool) {
	switch t {
	case TypeCI8:
		return typeDesc{KindIQ, FormatCB, 2, "ci8", "CI8"}, true
	case TypeCI16:
		return typeDesc{KindIQ, FormatCI, 4, "ci16", "CI16"}, true
	case TypeCI32:
		return typeDesc{KindIQ, FormatCL, 8, "ci32", "CI32"}, true
	case TypeCF32:
		return typeDesc{KindIQ, FormatCF, 8, "cf32", "CF32"}, true
	case TypeCF64:
		return typeDesc{KindIQ, FormatCD, 16, "cf64", "CF64"}, true
	case TypeRaw:
		return typeDesc{KindIQ, FormatSB, 1, "raw", "RAW"}, true
	case TypeTLM:
		return typeDesc{KindTLM, FormatNone, TelemetryRecordSize, "tlm", "TLM"}, true
	}
	return typeDesc{}, false
}

// elemSize is the element size of a kind and format pair, or 0 when the pair
// is refused. It is a switch rather than a table walk because the header
// check calls it on every message.
func elemSize(k Kind, f Format) uint64 {
	switch k {
	case KindIQ:
		switch f {
		case FormatCB:
			return 2
		case FormatCI:
			return 4
		case FormatCL, FormatCF:
			return 8
		case FormatCD:
			return 16
		case FormatSB:
			return 1
		}
	case KindTLM:
		if f == FormatNone {
			return TelemetryRecordSize
		}
	}
	return 0
}

// Error codes. DP_ERR_TIMEOUT and DP_ERR_TOO_LARGE are pinned (doppler §8,
// §4); the others are reconstructed (the doppler pins (docs/requirements.md)).
const (
	OK             Code = 0
	ErrGeneric     Code = -1
	ErrInvalid     Code = -2
	ErrNoMem       Code = -3
	ErrClosed      Code = -4
	ErrTimeout     Code = -5
	ErrInterrupted Code = -6
	ErrTooLarge    Code = -7
)

// codeName is the C name of a code, or "" for a code outside the table.
func codeName(c Code) string {
	switch c {
	case OK:
		return "DP_OK"
	case ErrGeneric:
		return "DP_ERR"
	case ErrInvalid:
		return "DP_ERR_INVALID"
	case ErrNoMem:
		return "DP_ERR_NOMEM"
	case ErrClosed:
		return "DP_ERR_CLOSED"
	case ErrTimeout:
		return "DP_ERR_TIMEOUT"
	case ErrInterrupted:
		return "DP_ERR_INTERRUPTED"
	case ErrTooLarge:
		return "DP_ERR_TOO_LARGE"
	}
	return ""
}

// Verdicts of the receiver's header check, in the order the checks run
// (pinned: doppler §3, the doppler pins (docs/requirements.md)). Every refusal is DP_ERR_INVALID; the
// verdict says which check refused. The split of check 4 into a short-message
// and a short-chunk-block verdict, of check 5 into kind, format and count, and
// the slugs are this suite's (reconstructed).
const (
	Accepted        Verdict = iota // every check passed
	ShortMessage                   // fewer than HeaderSize bytes: nothing can be read
	NotDoppler                     // check 1: the magic matches in neither byte order
	CrossEndian                    // check 1: the magic matches byte-swapped
	OtherMajor                     // check 2: version_major is not 2
	UnknownFlags                   // check 3: a flag outside FlagKnown
	ShortChunkBlock                // check 4: CHUNKED but no room for the chunk block
	PayloadMismatch                // check 4: payload_bytes is not what the transport delivered
	UnknownKind                    // check 5: kind is neither IQ nor TLM
	UnknownFormat                  // check 5: format is not one the kind allows
	CountMismatch                  // check 5: num_samples × element size is not payload_bytes
)

// verdictName is a verdict's slug, the word the corpus and the record use.
func verdictName(v Verdict) string {
	switch v {
	case Accepted:
		return "accepted"
	case ShortMessage:
		return "short-message"
	case NotDoppler:
		return "not-doppler"
	case CrossEndian:
		return "cross-endian"
	case OtherMajor:
		return "other-major-version"
	case UnknownFlags:
		return "unknown-flags"
	case ShortChunkBlock:
		return "short-chunk-block"
	case PayloadMismatch:
		return "payload-mismatch"
	case UnknownKind:
		return "unknown-kind"
	case UnknownFormat:
		return "unknown-format"
	case CountMismatch:
		return "count-mismatch"
	}
	return ""
}

// Endpoint and subject vocabulary. The nats:// scheme and the default base
// are pinned (doppler §5, §9); the subject and object patterns are
// reconstructed (the doppler pins (docs/requirements.md)):
//
//	<base>.pub.<type>   PUB/SUB
//	<base>.req          REQ/REP
//	<base>.work.<type>  PUSH/PULL, captured by stream DP_WORK_<base>
//	DP_PULL_<base>      the durable pull consumer
const (
	endpointScheme = "nats://"
	DefaultBase    = "doppler"
	subjectPub     = ".pub."
	subjectReq     = ".req"
	subjectWork    = ".work."
	streamPrefix   = "DP_WORK_"
	consumerPrefix = "DP_PULL_"
)

// DefaultMaxPayload is the max_payload a connection assumes when the server
// reports none. Pinned: doppler §8 (a 1 MiB fallback).
const DefaultMaxPayload = 1 << 20
