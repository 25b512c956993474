package wire

import (
	"errors"
	"fmt"
)

// TooLargeError is returned by a Reader when a length prefix claims more
// than MaxPayload (ranvier-wire §2). Once it has been returned, the stream is
// no longer aligned and the Reader returns it for every later call: there is
// no framing marker to resynchronise on (§6.2).
type TooLargeError struct {
	// Claimed is the length the prefix claimed.
	Claimed uint64
	// Ceiling is the Framing's ceiling it exceeded; 0 is MaxPayload.
	Ceiling uint64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("ranvier frame: prefix claims %d bytes, above the %d-byte ceiling", e.Claimed, Framing{Ceiling: e.Ceiling}.ceiling())
}

// PayloadTooLargeError is returned by a writer asked to frame a payload
// above MaxPayload; nothing was written (ranvier-wire §2, §6.1).
type PayloadTooLargeError struct {
	// Size is the length of the refused payload.
	Size uint64
	// Ceiling is the Framing's ceiling it exceeded; 0 is MaxPayload.
	Ceiling uint64
}

func (e *PayloadTooLargeError) Error() string {
	return fmt.Sprintf("ranvier frame: refusing to write a %d-byte payload, above the %d-byte ceiling", e.Size, Framing{Ceiling: e.Ceiling}.ceiling())
}

// ErrTruncated reports that a stream ended with part of a frame buffered.
// The partial frame is never delivered (ranvier-wire §1.3).
var ErrTruncated = errors.New("ranvier frame: stream ended inside a frame")
