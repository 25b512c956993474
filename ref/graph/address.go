package graph

import (
	"strconv"
	"strings"

	"github.com/conform-suite/conform/ref/tlv"
)

// An Address names a vertex, or a field on a vertex: the vertex's canonical
// PATH payload and, when present, a field selector such as "schema",
// "subscribers[3]" or "settings.app.gain".
type Address struct {
	Path     []byte // canonical PATH payload; the root is empty
	Field    string // the selector without its ':'; meaningful when HasField
	HasField bool
}

// ParseAddress parses the string form of an address: a path, then optionally
// ':' and a field selector, as in "/sensor/temp:subscribers[]" or ":schema"
// (the root's). The path is canonicalized (tlv.CanonicalPath), so two spellings
// of one path give one Address. A path that has no canonical form, an empty
// selector, and a selector containing '/' are tr::path::invalid.
func ParseAddress(s string) (Address, error) {
	p, sel, hasField := strings.Cut(s, string(fieldSep))
	path, err := tlv.CanonicalPath(p)
	if err != nil {
		return Address{}, wrap("parse", s, err)
	}
	a := Address{Path: path, Field: sel, HasField: hasField}
	if err := a.checkSelector(s); err != nil {
		return Address{}, err
	}
	return a, nil
}

// AddressFromRoute returns the address a FWD dst names at its terminus: the
// route's records are the path, and a selector rides in the last record from
// its first ':' (reconstructed.go). A ':' in any other record, or an invalid
// PATH payload, is tr::path::invalid.
func AddressFromRoute(route tlv.Rope) (Address, error) {
	segs, err := tlv.PathSegments(route)
	if err != nil {
		return Address{}, wrap("parse", "", err)
	}
	var a Address
	for i, seg := range segs {
		name, sel, ok := strings.Cut(seg, string(fieldSep))
		if ok {
			if i != len(segs)-1 {
				return Address{}, fail("parse", "/"+strings.Join(segs, "/"), tlv.StatusPathInvalid, "a field selector in a record other than the last")
			}
			a.Field, a.HasField = sel, true
		}
		if name != "" {
			a.Path = append(a.Path, byte(len(name)))
			a.Path = append(a.Path, name...)
		}
	}
	if err := a.checkSelector("/" + strings.Join(segs, "/")); err != nil {
		return Address{}, err
	}
	return a, nil
}

func (a Address) checkSelector(s string) error {
	if !a.HasField {
		return nil
	}
	if a.Field == "" {
		return fail("parse", s, tlv.StatusPathInvalid, "an empty field selector")
	}
	if strings.IndexByte(a.Field, '/') >= 0 {
		return fail("parse", s, tlv.StatusPathInvalid, "a field selector contains '/'")
	}
	if parseSelector(a.Field).kind == selMalformed {
		return fail("parse", s, tlv.StatusPathInvalid, "malformed field selector %q", a.Field)
	}
	return nil
}

// String returns the address's string form: the path ("/" for the root), then
// ':' and the selector when there is one.
func (a Address) String() string {
	s := pathString(string(a.Path))
	if a.HasField {
		if s == "/" {
			s = ""
		}
		s += string(fieldSep) + a.Field
	}
	return s
}

// pathString renders a canonical key; keys in the graph are always valid.
func pathString(key string) string {
	s, err := tlv.PathString(tlv.NewRope([]byte(key)))
	if err != nil {
		return "<invalid path>"
	}
	return s
}

// selKind is what a field selector names.
type selKind uint8

const (
	selUnknown      selKind = iota // names nothing: tr::schema::not_found
	selMalformed                   // not a selector at all: tr::path::invalid
	selSubsAppend                  // subscribers[]
	selSubsWildcard                // subscribers[*]
	selSubsIndex                   // subscribers[N]
	selSubsMember                  // subscribers[…].<anything>: names nothing
	selSettings                    // settings
	selApp                         // settings.app
	selAppField                    // settings.app.<name…>
	selSchema                      // schema
	selACL                         // acl
	selChildren                    // children[]
	selIdentity                    // identity
)

type selector struct {
	kind  selKind
	index int    // for selSubsIndex
	name  string // for selAppField: everything after "settings.app."
}

// parseSelector classifies a selector (the text after ':'). Anything the table
// of §Core writable fields does not spell — the ⚠️ rows, a removed knob, a
// module field — is selUnknown.
func parseSelector(sel string) selector {
	switch sel {
	case fieldSettings:
		return selector{kind: selSettings}
	case fieldSettings + string(selectorStepSep) + fieldApp:
		return selector{kind: selApp}
	case fieldSchema:
		return selector{kind: selSchema}
	case fieldACL:
		return selector{kind: selACL}
	case fieldIdentity:
		return selector{kind: selIdentity}
	case fieldChildren + selectorAppend:
		return selector{kind: selChildren}
	}
	if rest, ok := strings.CutPrefix(sel, fieldSettings+string(selectorStepSep)+fieldApp+string(selectorStepSep)); ok && rest != "" {
		return selector{kind: selAppField, name: rest}
	}
	rest, ok := strings.CutPrefix(sel, fieldSubscribers+string(selectorIndexOpen))
	if !ok {
		return selector{kind: selUnknown}
	}
	inner, tail, ok := strings.Cut(rest, "]")
	if !ok {
		return selector{kind: selMalformed}
	}
	var s selector
	switch {
	case inner == "":
		s.kind = selSubsAppend
	case inner == "*":
		s.kind = selSubsWildcard
	case isDecimal(inner):
		n, err := strconv.Atoi(inner)
		if err != nil {
			return selector{kind: selMalformed}
		}
		s.kind, s.index = selSubsIndex, n
	default:
		return selector{kind: selMalformed}
	}
	switch {
	case tail == "":
		return s
	case tail[0] == selectorStepSep:
		return selector{kind: selSubsMember, index: s.index}
	}
	return selector{kind: selMalformed}
}

func isDecimal(s string) bool {
	if s == "" || (len(s) > 1 && s[0] == '0') {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
