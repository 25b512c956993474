package tlv

import (
	"bytes"
	"fmt"
	"strings"
	"unicode/utf8"
)

// A PATH payload is packed segment records, [u8 len][len bytes of UTF-8] each
// (the TLV pins (docs/requirements.md) "PATH payload", pinned). The vertex map is keyed on these
// bytes, so two strings naming one vertex must give byte-identical payloads:
// that is what canonicalization guarantees.

// CanonicalPath returns the canonical PATH payload for the string form s, by
// the TLV pins (docs/requirements.md): s is split on '/'; a leading '/' is optional; empty segments
// (from "//" or a trailing '/') are dropped; the root is the empty payload. A
// segment that is "." or "..", is longer than 255 bytes, contains NUL or is not
// valid UTF-8 makes the path invalid (a *PathError with StatusPathInvalid).
//
// s is the path alone: a field selector such as ":schema" is not a path segment,
// and separating it is the caller's business.
func CanonicalPath(s string) ([]byte, error) {
	n, err := canonicalSize(s)
	if err != nil {
		return nil, err
	}
	return appendSegments(make([]byte, 0, n), s), nil
}

// AppendCanonicalPath appends the canonical PATH payload for s to dst, as
// CanonicalPath, and returns the extended slice. It allocates nothing when dst
// has room. On error dst is returned unchanged.
func AppendCanonicalPath(dst []byte, s string) ([]byte, error) {
	if _, err := canonicalSize(s); err != nil {
		return dst, err
	}
	return appendSegments(dst, s), nil
}

// PathNode returns the PATH TLV for the string form s.
func PathNode(s string) (*Node, error) {
	p, err := CanonicalPath(s)
	if err != nil {
		return nil, err
	}
	return NewLeaf(TypePath, p), nil
}

// nextSegment returns the segment of s up to the next separator and the rest
// after it.
func nextSegment(s string) (seg, rest string) {
	if i := strings.IndexByte(s, pathSeparator); i >= 0 {
		return s[:i], s[i+1:]
	}
	return s, ""
}

// canonicalSize validates s and returns the size of its canonical payload.
func canonicalSize(s string) (int, error) {
	n := 0
	for rest := s; rest != ""; {
		var seg string
		seg, rest = nextSegment(rest)
		if seg == "" {
			continue
		}
		if reason := segmentFault(seg); reason != "" {
			return 0, &PathError{Path: s, Status: StatusPathInvalid, Reason: reason}
		}
		n += 1 + len(seg)
	}
	return n, nil
}

func segmentFault(seg string) string {
	switch {
	case seg == "." || seg == "..":
		return fmt.Sprintf("segment %q is not allowed", seg)
	case len(seg) > maxSegmentLen:
		return fmt.Sprintf("a segment of %d bytes exceeds %d", len(seg), maxSegmentLen)
	case strings.IndexByte(seg, 0) >= 0:
		return "a segment contains NUL"
	case !utf8.ValidString(seg):
		return "a segment is not valid UTF-8"
	}
	return ""
}

// appendSegments appends the records of s, which canonicalSize has accepted.
func appendSegments(dst []byte, s string) []byte {
	for rest := s; rest != ""; {
		var seg string
		seg, rest = nextSegment(rest)
		if seg != "" {
			dst = append(dst, byte(len(seg)))
			dst = append(dst, seg...)
		}
	}
	return dst
}

// ValidatePath checks a received PATH payload (the TLV pins (docs/requirements.md)): it is invalid
// when a record has length 0, contains the byte 0x2F, is not valid UTF-8, or runs
// past the payload's end. The error is a *DecodeError with StatusPathInvalid and
// the offset within the payload. The walk reads each record's length byte and
// text through the rope, so either may sit in any segment.
func ValidatePath(payload Rope) error {
	c := payload.cursor()
	var rec [maxSegmentLen]byte
	for c.left() > 0 {
		at := c.pos
		n := int(c.readByte())
		var reason string
		switch {
		case n == 0:
			reason = "a segment record has length 0"
		case n > c.left():
			reason = fmt.Sprintf("a record of %d bytes runs past the payload's end (%d left)", n, c.left())
		}
		if reason == "" {
			c.read(rec[:n])
			switch {
			case bytes.IndexByte(rec[:n], pathSeparator) >= 0:
				reason = "a record contains 0x2F"
			case !utf8.Valid(rec[:n]):
				reason = "a record is not valid UTF-8"
			}
		}
		if reason != "" {
			return &DecodeError{Status: StatusPathInvalid, Offset: int64(at), Reason: reason}
		}
	}
	return nil
}

// PathSegments validates a received PATH payload and returns its segments.
func PathSegments(payload Rope) ([]string, error) {
	if err := ValidatePath(payload); err != nil {
		return nil, err
	}
	var segs []string
	c := payload.cursor()
	var rec [maxSegmentLen]byte
	for c.left() > 0 {
		n := int(c.readByte())
		c.read(rec[:n])
		segs = append(segs, string(rec[:n]))
	}
	return segs, nil
}

// PathString validates a received PATH payload and returns its string form:
// "/" then the segments joined by "/"; the root is "/". Where the payload came
// from canonicalization, CanonicalPath of the result gives the payload back.
func PathString(payload Rope) (string, error) {
	segs, err := PathSegments(payload)
	if err != nil {
		return "", err
	}
	return "/" + strings.Join(segs, "/"), nil
}
