// Package corpus holds conform's golden vectors as data files, versioned by
// directory (wire/v1/…), and loads them. Each vector names the spec section
// it comes from, its input bytes in hex and the expected outcome; cases use
// vectors, and a test proves the reference reproduces every one of them.
package corpus

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
)

// files holds every suite's vectors, one directory per suite and version.
//
//go:embed */v1/*.json
var files embed.FS

// WireVersion is the version of the wire vectors the cases use.
const WireVersion = "wire/v1"

// Vector is one golden vector of the wire suite: the bytes of a connection
// and what a reader, a decoder and a subscriber must make of them.
type Vector struct {
	// ID is the vector's stable name, for example wire/v1/frame-sample.
	ID    string   `json:"id"`
	Spec  string   `json:"spec"`
	Title string   `json:"title"`
	Tags  []string `json:"tags,omitempty"`
	// Input is the connection's bytes, in hex.
	Input Hex `json:"input"`
	// Frames are the payloads a reader yields, in order.
	Frames []Hex `json:"frames"`
	// End is the reader's state after the input: idle, waiting or
	// too_large. Claimed is the TooLarge claim; Buffered, if set, is the
	// count of bytes a waiting reader holds.
	End      string  `json:"end"`
	Claimed  uint64  `json:"claimed,omitempty"`
	Buffered *uint64 `json:"buffered,omitempty"`
	// AtEOS is the reader's state when the stream ends after the input:
	// closed or truncated. Empty when the reader has already refused.
	AtEOS string `json:"at_eos,omitempty"`
	// Message, if set, says how the first frame's payload decodes.
	Message *Message `json:"message,omitempty"`
	// Receive, if set, is what a data-plane subscriber does with the input.
	Receive *Receive `json:"receive,omitempty"`
}

// Message is the expected decoding of a vector's one payload.
type Message struct {
	// Type is the fully-qualified message name.
	Type string `json:"type"`
	// JSON is the decoded message in canonical JSON; compare as messages.
	JSON json.RawMessage `json:"json,omitempty"`
	// Undecodable: the payload must fail to decode.
	Undecodable bool `json:"undecodable,omitempty"`
	// Open: the spec leaves the decoding open (informational).
	Open bool `json:"open,omitempty"`
	// Encoding says how an encoder is checked against the payload: exact
	// (byte equality, where one encoding exists), roundtrip, or none.
	Encoding string `json:"encoding,omitempty"`
}

// Receive is the expected receive step of a subscriber.
type Receive struct {
	// Actions are delivered, skipped_undecodable or skipped_no_variant,
	// one per frame.
	Actions    []string `json:"actions"`
	Closed     bool     `json:"closed"`
	Unreadable uint64   `json:"unreadable"`
}

// Hex is bytes written as hex digits, with optional spaces.
type Hex []byte

func (h Hex) MarshalJSON() ([]byte, error) { return json.Marshal(FormatHex(h)) }

func (h *Hex) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	v, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		return fmt.Errorf("bad hex %q: %w", s, err)
	}
	*h = v
	return nil
}

// FormatHex writes b as spaced hex, the way the spec prints bytes.
func FormatHex(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	const digits = "0123456789abcdef"
	out := make([]byte, 0, 3*len(b)-1)
	for i, c := range b {
		if i > 0 {
			out = append(out, ' ')
		}
		out = append(out, digits[c>>4], digits[c&0x0f])
	}
	return string(out)
}

// Identified is a vector of any suite: it has an ID (version/name, such as
// wire/v1/frame-sample), the section it enforces and a title.
type Identified interface {
	VectorID() string
	VectorSpec() string
	VectorTitle() string
}

// VectorID returns v's ID.
func (v *Vector) VectorID() string { return v.ID }

// VectorSpec returns the section v enforces.
func (v *Vector) VectorSpec() string { return v.Spec }

// VectorTitle returns what v shows, in one line.
func (v *Vector) VectorTitle() string { return v.Title }

// Set is a loaded set of vectors of one suite and version.
type Set[V Identified] struct {
	version string
	byID    map[string]V
	ids     []string
	digest  string
}

// Wire loads the wire vectors.
func Wire() (*Set[*Vector], error) { return Load[*Vector](WireVersion) }

// MustWire loads the wire vectors and panics if they are malformed, which
// is a build defect caught by the corpus tests.
func MustWire() *Set[*Vector] {
	s, err := Wire()
	if err != nil {
		panic(err)
	}
	return s
}

// Load reads every vector in the directory version (for example wire/v1),
// one JSON file each, strictly: an unknown field is an error, and a file's
// name must be its ID's last part.
func Load[V Identified](version string) (*Set[V], error) {
	names, err := fs.Glob(files, version+"/*.json")
	if err != nil {
		return nil, err
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("corpus %s: no vectors", version)
	}
	s := &Set[V]{version: version, byID: map[string]V{}}
	h := sha256.New()
	sort.Strings(names)
	for _, name := range names {
		b, err := files.ReadFile(name)
		if err != nil {
			return nil, err
		}
		h.Write([]byte(name))
		h.Write(b)
		var v V
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("corpus %s: %w", name, err)
		}
		if want := version + "/" + strings.TrimSuffix(path.Base(name), ".json"); v.VectorID() != want {
			return nil, fmt.Errorf("corpus %s: id %q, want %q", name, v.VectorID(), want)
		}
		s.byID[v.VectorID()] = v
		s.ids = append(s.ids, v.VectorID())
	}
	s.digest = fmt.Sprintf("%x", h.Sum(nil))
	return s, nil
}

// Version returns the set's directory, such as wire/v1.
func (s *Set[V]) Version() string { return s.version }

// Get returns the vector with the given ID, or panics: a case naming a
// vector that does not exist is a conform bug the catalogue test catches.
func (s *Set[V]) Get(id string) V {
	v, ok := s.byID[id]
	if !ok {
		panic(fmt.Sprintf("corpus: no vector %q", id))
	}
	return v
}

// Lookup returns the vector with the given ID.
func (s *Set[V]) Lookup(id string) (V, bool) {
	v, ok := s.byID[id]
	return v, ok
}

// IDs returns every vector ID, sorted.
func (s *Set[V]) IDs() []string { return append([]string(nil), s.ids...) }

// All returns every vector, sorted by ID.
func (s *Set[V]) All() []V {
	out := make([]V, len(s.ids))
	for i, id := range s.ids {
		out[i] = s.byID[id]
	}
	return out
}

// Digest is the SHA-256 of the set's files, for the record.
func (s *Set[V]) Digest() string { return s.digest }
