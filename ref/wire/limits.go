package wire

// The two framing constants. Both are pinned by ranvier-wire: the prefix is
// exactly four bytes (§1.2) and the ceiling is 16,777,216 bytes, inclusive
// (§2). They are written here once; everything else in conform refers to them.
const (
	// PrefixLen is the size of a frame's length prefix, in bytes.
	PrefixLen = 4
	// MaxPayload is the largest payload a frame may carry. A payload of
	// exactly MaxPayload bytes is legal; one byte more is not.
	MaxPayload = 16 * 1024 * 1024
)
