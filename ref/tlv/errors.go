package tlv

import (
	"errors"
	"fmt"
)

// String returns the status's libtracer name, such as "tr::tlv::malformed", or
// its code in hex when the code has no name.
func (s Status) String() string {
	if name, ok := statusNames[s]; ok {
		return name
	}
	return fmt.Sprintf("status(0x%04x)", uint16(s))
}

// String returns the type's name, such as "PATH", or its code in hex when the
// type is not one the format names (it still decodes, as an opaque TLV).
func (t Type) String() string {
	if name, ok := typeNames[t]; ok {
		return name
	}
	return fmt.Sprintf("TYPE(0x%02x)", uint8(t))
}

// A DecodeError reports bytes the package refused: a frame, a record layout or a
// received PATH payload. Status is the libtracer status a node would answer with.
type DecodeError struct {
	Status Status // why, as the wire would say it
	Offset int64  // byte offset into the input where the fault was found
	Reason string // what was wrong, for a human
}

func (e *DecodeError) Error() string {
	return fmt.Sprintf("tlv: %s at offset %d: %s", e.Status, e.Offset, e.Reason)
}

// A PathError reports a string path that has no canonical form.
type PathError struct {
	Path   string // the string given
	Status Status // always StatusPathInvalid today
	Reason string
}

func (e *PathError) Error() string {
	return fmt.Sprintf("tlv: %s: path %q: %s", e.Status, e.Path, e.Reason)
}

// StatusOf returns the libtracer status an error from this package carries, and
// false when err carries none (including when err is nil).
func StatusOf(err error) (Status, bool) {
	var de *DecodeError
	if errors.As(err, &de) {
		return de.Status, true
	}
	var pe *PathError
	if errors.As(err, &pe) {
		return pe.Status, true
	}
	return 0, false
}

func malformed(off int64, format string, args ...any) *DecodeError {
	return &DecodeError{Status: StatusMalformed, Offset: off, Reason: fmt.Sprintf(format, args...)}
}
