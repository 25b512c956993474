package corpus

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// TLVVersion is the version of the tlv vectors the cases use.
const TLVVersion = "tlv/v1"

// The kinds of tlv vector: what the input is and what is expected of it.
const (
	// TLVFrame: Input is one frame as received; Tree (and Trailer) is what
	// ingress makes of it, or Refusal.
	TLVFrame = "frame"
	// TLVPath: Path (or PathHex) is a path in string form; Canonical is its
	// canonical PATH payload, or Refusal.
	TLVPath = "path"
	// TLVPathPayload: Input is a received PATH payload; Segments are its
	// segments, or Refusal.
	TLVPathPayload = "path-payload"
	// TLVHop: Input is a FWD frame arriving at a node; Hop says where the node
	// is and what one forward hop must make of it.
	TLVHop = "hop"
)

// TLVVector is one golden vector of the tlv suite. Every expected value is
// written from the graph model's words and the pinned layout (the index's
// reconstructed§tlv-* entries, which each vector's Spec names), never
// from running the reference; the CRCs were computed with a bitwise CRC that
// shares nothing with ref/tlv, and the corpus test checks them with another.
type TLVVector struct {
	// ID is the vector's stable name, for example tlv/v1/path-alpha.
	ID    string   `json:"id"`
	Spec  string   `json:"spec"`
	Title string   `json:"title"`
	Tags  []string `json:"tags,omitempty"`
	// Kind is one of TLVFrame, TLVPath, TLVPathPayload and TLVHop.
	Kind string `json:"kind"`

	// Input is the frame, PATH payload or FWD frame the vector gives.
	Input Bytes `json:"input,omitempty"`
	// Tree is the decoded tree at rest, for a frame that decodes.
	Tree *TLVTree `json:"tree,omitempty"`
	// Trailer is the trailer stripped at ingress; nil when the frame has none.
	Trailer *TLVTrailer `json:"trailer,omitempty"`
	// Clock is the egress wall clock (ns since the Unix epoch) that gives the
	// trailer's timestamp, truncated to its width.
	Clock uint64 `json:"clock,omitempty"`
	// Refusal is the status of a refused input, written "0x0051 tr::tlv::malformed".
	Refusal Status `json:"refusal,omitempty"`

	// Path is the string form; PathHex gives its bytes instead when they are
	// not valid UTF-8 or hold NUL.
	Path    *string `json:"path,omitempty"`
	PathHex Bytes   `json:"path_hex,omitempty"`
	// Canonical is the canonical PATH payload of Path.
	Canonical *Bytes `json:"canonical,omitempty"`

	// Segments are the segments of a valid received PATH payload.
	Segments []string `json:"segments,omitempty"`

	// Hop is the node and the expected outcome of a hop vector.
	Hop *TLVHopExpect `json:"hop,omitempty"`
}

// VectorID returns v's ID.
func (v *TLVVector) VectorID() string { return v.ID }

// VectorSpec returns the section v enforces.
func (v *TLVVector) VectorSpec() string { return v.Spec }

// VectorTitle returns what v shows, in one line.
func (v *TLVVector) VectorTitle() string { return v.Title }

// PathBytes returns the string form of a path vector as bytes.
func (v *TLVVector) PathBytes() []byte {
	if v.Path != nil {
		return []byte(*v.Path)
	}
	return v.PathHex
}

// TLVTree is a TLV and, when structured, its subtree.
type TLVTree struct {
	Type uint8 `json:"type"`
	// Opt is the opt byte as the header carries it (the root's TS and CRC
	// bits clear at rest).
	Opt uint8 `json:"opt"`
	// Payload is an opaque TLV's payload; Children a structured TLV's
	// children (present, possibly empty, exactly when PL is set).
	Payload  Bytes      `json:"payload,omitempty"`
	Children []*TLVTree `json:"children,omitempty"`
	// Trailer is a child's own trailer, kept inside its parent.
	Trailer Bytes `json:"trailer,omitempty"`
}

// TLVTrailer is a trailer as read at ingress.
type TLVTrailer struct {
	TSWidth   int    `json:"ts_width"`
	Timestamp uint64 `json:"timestamp"`
	// CRC is none, crc32c or crc64xz.
	CRC   string `json:"crc"`
	Check uint64 `json:"check"`
}

// TLVHopExpect is a node with its links, the link a FWD arrived on, the
// egress trailer, and what the hop must do.
type TLVHopExpect struct {
	// Links are the node's links' mount runs in string form.
	Links   []string `json:"links"`
	Inbound int      `json:"inbound"`
	// Egress is the trailer the egress link attaches; CRC is none, crc32c or
	// crc64xz and Clock the injected wall clock.
	Egress struct {
		TSWidth int    `json:"ts_width"`
		CRC     string `json:"crc"`
		Clock   uint64 `json:"clock"`
	} `json:"egress"`
	// Terminus: the dst names a local vertex; Stored is then the bare payload
	// TLV at rest.
	Terminus bool  `json:"terminus,omitempty"`
	Stored   Bytes `json:"stored,omitempty"`
	// Otherwise Link is the egress link and Output the frame sent on it.
	Link   int   `json:"link,omitempty"`
	Output Bytes `json:"output,omitempty"`
}

// Status is a libtracer status code, written in a vector as its hex code and
// name, "0x0051 tr::tlv::malformed"; only the code is read.
type Status uint16

func (s *Status) UnmarshalJSON(b []byte) error {
	var str string
	if err := json.Unmarshal(b, &str); err != nil {
		return err
	}
	code, _, _ := strings.Cut(str, " ")
	n, err := strconv.ParseUint(code, 0, 16)
	if err != nil || n == 0 {
		return fmt.Errorf("bad status %q: want \"0xNNNN name\"", str)
	}
	*s = Status(n)
	return nil
}

func (s Status) MarshalJSON() ([]byte, error) { return json.Marshal(fmt.Sprintf("0x%04x", uint16(s))) }

// Bytes is bytes written as spaced hex, where a token xx*N stands for the
// byte xx repeated N times, so that a 64 KiB payload stays one line.
type Bytes []byte

func (h Bytes) MarshalJSON() ([]byte, error) { return json.Marshal(FormatHex(h)) }

func (h *Bytes) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	out := []byte{}
	for _, tok := range strings.Fields(s) {
		digits, count, rep := strings.Cut(tok, "*")
		v, err := hex.DecodeString(digits)
		if err != nil {
			return fmt.Errorf("bad hex %q: %w", tok, err)
		}
		n := 1
		if rep {
			if len(v) != 1 {
				return fmt.Errorf("bad repeat %q: one byte repeats", tok)
			}
			if n, err = strconv.Atoi(count); err != nil || n < 1 || n > 1<<24 {
				return fmt.Errorf("bad repeat count in %q", tok)
			}
		}
		for range n {
			out = append(out, v...)
		}
	}
	*h = out
	return nil
}

// TLV loads the tlv vectors.
func TLV() (*Set[*TLVVector], error) { return Load[*TLVVector](TLVVersion) }
