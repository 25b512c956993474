package tlv

import (
	"hash/crc32"
	"hash/crc64"
)

// This file is the one place where the package states a byte-level constant of the
// libtracer TLV format. The source documents pin some of them; the rest were
// reconstructed by the suite (the TLV pins (docs/requirements.md)) consistently with every
// fact the sources state. Each constant says which. No other file of the package
// spells one of these numbers, so a change of reconstruction is a change here.

// Header sizes. Pinned: the TLV pins (docs/requirements.md) "Header" (4 bytes by default, 6 with LL),
// from the printed vectors `06 00 06 00 …` and `09 00 00 00`.
const (
	headerLengthAt = 2 // the length follows the type and opt bytes
	headerSize     = 4 // type, opt, u16 LE length
	headerSizeLL   = 6 // type, opt, u32 LE length
	maxShortLength = 0xFFFF
	maxLongLength  = 0xFFFFFFFF
)

// Type is a TLV type code, the first byte of a header.
type Type uint8

// Type codes (the TLV pins (docs/requirements.md) "Type codes").
const (
	TypeInvalid    Type = 0x00 // reconstructed: "0x00 is invalid"
	TypeValue      Type = 0x01 // pinned
	TypeName       Type = 0x02 // reconstructed: UTF-8 text
	TypeTime       Type = 0x03 // reconstructed: u64 LE nanoseconds
	TypeSubscriber Type = 0x04 // inferred from "05 §0x04" (the subscriber latch)
	TypeACL        Type = 0x05 // reconstructed
	TypePath       Type = 0x06 // pinned
	TypePoint      Type = 0x07 // pinned
	TypeSpec       Type = 0x08 // reconstructed
	TypeStatus     Type = 0x09 // pinned
	TypeOp         Type = 0x0A // reconstructed: 1-byte op code
	TypeSettings   Type = 0x0B // pinned
	TypeResult     Type = 0x0C // reconstructed
	TypeRouter     Type = 0x0D // pinned: reserved, decodable, no mechanism
	TypeFwd        Type = 0x0F // pinned
	TypeBatch      Type = 0x80 // pinned
)

var typeNames = map[Type]string{
	TypeValue:      "VALUE",
	TypeName:       "NAME",
	TypeTime:       "TIME",
	TypeSubscriber: "SUBSCRIBER",
	TypeACL:        "ACL",
	TypePath:       "PATH",
	TypePoint:      "POINT",
	TypeSpec:       "SPEC",
	TypeStatus:     "STATUS",
	TypeOp:         "OP",
	TypeSettings:   "SETTINGS",
	TypeResult:     "RESULT",
	TypeRouter:     "ROUTER",
	TypeFwd:        "FWD",
	TypeBatch:      "BATCH",
}

// Opt is the option byte of a header (byte 1). The flags are pinned to exist by
// the graph model; their bit positions are reconstructed (the TLV pins (docs/requirements.md), the
// `opt` table).
type Opt uint8

const (
	// OptPL marks a payload that is a sequence of child TLVs (bit 0, reconstructed).
	OptPL Opt = 1 << 0
	// OptLL selects the 6-byte header with a u32 length (bit 1, reconstructed).
	OptLL Opt = 1 << 1
	// OptTS is the 2-bit timestamp-width field, bits 2–3 (reconstructed).
	OptTS Opt = 3 << optTSShift
	// OptCRC is the 2-bit check field, bits 4–5 (reconstructed).
	OptCRC Opt = 3 << optCRCShift
	// OptReserved are bits 6–7; writers emit 0 and readers refuse them
	// (reconstructed, the TLV pins (docs/requirements.md)).
	OptReserved Opt = 3 << 6

	optTSShift  = 2
	optCRCShift = 4
)

// tsWidths maps the TS code to the timestamp width in bytes: none, 4, 6, 8
// (reconstructed, the TLV pins (docs/requirements.md); gives the graph model's trailer sizes).
var tsWidths = [4]int{0, 4, 6, 8}

// CRC is a trailer check kind, the value of the opt CRC field.
type CRC uint8

// CRC codes (reconstructed, the TLV pins (docs/requirements.md)). CRCReserved is refused on read.
const (
	CRCNone     CRC = 0
	CRC32C      CRC = 1 // 4 bytes; reflected poly 0x1EDC6F41, check 0xE3069283
	CRC64XZ     CRC = 2 // 8 bytes; reflected poly 0x42F0E1EBA9EA3693, check 0x995DC9BBDF1939FA
	CRCReserved CRC = 3
)

// The check tables (reconstructed, the TLV pins (docs/requirements.md) "Trailer"). Go's
// Castagnoli table is CRC-32C; its ECMA-182 table, reflected, with Update's
// all-ones init and xorout, is CRC-64/XZ: both give the check values above for
// "123456789", which the tests assert. Built once, never written.
var (
	crc32cTable  = crc32.MakeTable(crc32.Castagnoli)
	crc64xzTable = crc64.MakeTable(crc64.ECMA)
)

// crcWidths maps the CRC code to the check width in bytes (reconstructed).
var crcWidths = [4]int{0, 4, 8, 0}

// Status is a libtracer status code, carried in a STATUS payload as a u16 LE.
type Status uint16

// Status codes (the TLV pins (docs/requirements.md) "STATUS payload").
const (
	StatusOK                 Status = 0x0000 // pinned: the empty STATUS payload, not a code on the wire
	StatusAccessDenied       Status = 0x0010 // reconstructed: tr::access::denied
	StatusPathNotFound       Status = 0x0020 // pinned: tr::path::not_found
	StatusPathInvalid        Status = 0x0021 // reconstructed: tr::path::invalid
	StatusReserved22         Status = 0x0022 // reconstructed: reserved
	StatusUnallocated23      Status = 0x0023 // pinned: unallocated, never emitted
	StatusSchemaTypeMismatch Status = 0x0030 // reconstructed: tr::schema::type_mismatch
	StatusSchemaNotFound     Status = 0x0031 // pinned: tr::schema::not_found
	StatusFlowBackpressure   Status = 0x0040 // reconstructed: tr::flow::backpressure
	StatusFlowTimeout        Status = 0x0041 // reconstructed: tr::flow::timeout
	StatusFlowAddressGap     Status = 0x0042 // reconstructed: tr::flow::address_shift_gap
	StatusNestingTooDeep     Status = 0x0050 // reconstructed: tr::tlv::nesting_too_deep
	StatusMalformed          Status = 0x0051 // reconstructed: tr::tlv::malformed
	StatusCRCMismatch        Status = 0x0052 // reconstructed: tr::tlv::crc_mismatch
)

var statusNames = map[Status]string{
	StatusOK:                 "ok",
	StatusAccessDenied:       "tr::access::denied",
	StatusPathNotFound:       "tr::path::not_found",
	StatusPathInvalid:        "tr::path::invalid",
	StatusReserved22:         "reserved(0x0022)",
	StatusUnallocated23:      "unallocated(0x0023)",
	StatusSchemaTypeMismatch: "tr::schema::type_mismatch",
	StatusSchemaNotFound:     "tr::schema::not_found",
	StatusFlowBackpressure:   "tr::flow::backpressure",
	StatusFlowTimeout:        "tr::flow::timeout",
	StatusFlowAddressGap:     "tr::flow::address_shift_gap",
	StatusNestingTooDeep:     "tr::tlv::nesting_too_deep",
	StatusMalformed:          "tr::tlv::malformed",
	StatusCRCMismatch:        "tr::tlv::crc_mismatch",
}

// DefaultMaxDepth is the nesting bound the reference decoder applies when none is
// configured, and the one it declares in its Hello (reconstructed, the TLV pins (docs/requirements.md)
// "Decoder resources"). Depth counts TLVs from the frame's root, which is depth 1
// (reconstructed: the sources bound depth but never say how it is counted).
const DefaultMaxDepth = 64

// Op is a FWD operation code, the one byte of an OP payload.
type Op uint8

// Op codes (reconstructed, the TLV pins (docs/requirements.md) "Record layouts").
const (
	OpWrite     Op = 1
	OpRead      Op = 2
	OpAwait     Op = 3
	OpSubscribe Op = 4
	OpReply     Op = 5
)

// Path record limits (pinned: the record length is one byte, the TLV pins (docs/requirements.md)
// "PATH payload"; the separator 0x2F may not appear inside a record).
const (
	maxSegmentLen = 255
	pathSeparator = '/'
)

// A link's mount run is net/<module>/<name>[/<peer>] (pinned: graph model §The
// shedding rule; the TLV pins (docs/requirements.md) "The forward hop").
const (
	mountRunHead        = "net"
	mountRunMinSegments = 3
	mountRunMaxSegments = 4 // with <peer>, on a bus link
)

// Setting keys (reconstructed, the TLV pins (docs/requirements.md) "Record layouts").
const (
	KeyDeliveryPolicy = "delivery_policy"
	KeyApp            = "app"
)

// Delivery-policy bit fields (pinned: graph model §Subscriber delivery policy).
const (
	policyReliabilityShift = 0
	policyReliabilityMask  = 0x3
	policyPriorityShift    = 2
	policyPriorityMask     = 0x7
	policyDurabilityBit    = 1 << 5
	policyClassShift       = 6
	policyClassMask        = 0x3
	policyValueSize        = 2 // the VALUE holds a u16 LE (reconstructed)
	timeValueSize          = 8 // a TIME holds a u64 LE (reconstructed)
	statusCodeSize         = 2 // a non-empty STATUS holds a u16 LE (pinned)
	opValueSize            = 1 // an OP holds one byte (reconstructed)
	fwdChildren            = 4 // OP, PATH dst, PATH src, payload (reconstructed)
)
