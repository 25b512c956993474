package reports

import (
	"fmt"
	"path"
	"strings"
)

// MatchID reports whether the case ID id matches pattern. It is the one
// matcher for case IDs, used by --case selection and by baselines:
//
//   - A pattern uses path.Match syntax against the whole ID: '*' matches
//     any run of characters except '/', '?' one character except '/', and
//     '[…]' a character class; '\' escapes the next character. So
//     "wire/1.3/byte-at-a-time" matches that case alone and "wire/*/max-*"
//     every wire case whose slug starts with "max-".
//   - A pattern ending in "**" matches every ID that begins with a string
//     matching the rest of the pattern: "wire/**" matches every wire case,
//     "wire/1.3/**" every case of section 1.3, and "wire/1.*/**" every case
//     of sections 1.x. When the rest holds no metacharacter this is a plain
//     prefix test.
//   - A pattern ending in "/" means the same as that pattern followed by
//     "**": "streams/" matches every streams case.
//
// A malformed pattern matches nothing; CheckPattern reports it.
func MatchID(pattern, id string) bool {
	prefix, ok := strings.CutSuffix(pattern, "**")
	if !ok && strings.HasSuffix(pattern, "/") {
		prefix, ok = pattern, true
	}
	if !ok {
		m, _ := path.Match(pattern, id)
		return m
	}
	if !hasMeta(prefix) {
		return strings.HasPrefix(id, prefix)
	}
	for i := 0; i <= len(id); i++ {
		if m, _ := path.Match(prefix, id[:i]); m {
			return true
		}
	}
	return false
}

// CheckPattern returns an error when pattern is not a valid MatchID pattern:
// it is empty, or path.Match rejects it.
func CheckPattern(pattern string) error {
	if pattern == "" {
		return fmt.Errorf("empty case pattern")
	}
	p := strings.TrimSuffix(pattern, "**")
	if _, err := path.Match(p, ""); err != nil {
		return fmt.Errorf("bad case pattern %q: %w", pattern, err)
	}
	return nil
}

// IsGlob reports whether pattern can match more than one ID: it holds a
// metacharacter of path.Match, ends in "**" or ends in "/". A pattern that is
// not a glob names one case ID exactly.
func IsGlob(pattern string) bool {
	return hasMeta(pattern) || strings.HasSuffix(pattern, "/")
}

// EscapeID returns a pattern that matches exactly the ID id, escaping any
// character path.Match would read as a metacharacter.
func EscapeID(id string) string {
	if !hasMeta(id) && !strings.HasSuffix(id, "/") {
		return id
	}
	var b strings.Builder
	for i := 0; i < len(id); i++ {
		switch id[i] {
		case '*', '?', '[', ']', '\\':
			b.WriteByte('\\')
		}
		b.WriteByte(id[i])
	}
	s := b.String()
	if strings.HasSuffix(s, "/") {
		// A trailing '/' would make a prefix pattern; "[/]" matches only '/'.
		s = s[:len(s)-1] + "[/]"
	}
	return s
}

func hasMeta(s string) bool { return strings.ContainsAny(s, `*?[\`) }
