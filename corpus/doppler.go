package corpus

import "fmt"

// DopplerVersion is the version of the doppler vectors the cases use.
const DopplerVersion = "doppler/v1"

// DopplerVector is one golden vector of the doppler suite. Its bytes were
// built field by field from the header and chunk-block layouts the
// requirements index pins (reconstructed§doppler-header, -chunk), and every
// expected value is written from doppler-streaming's words and those pins,
// never from running the reference. Spec cites the document's sections and
// the pins the vector rests on. A vector has one or both of two inputs:
//
//   - a message for the receiver's header check (Message, with Verdict, and
//     Header and ChunkBlock when accepted); when Type is set the message is a
//     conforming sender's and its first 64 bytes are also what an encoder
//     must write for that type;
//   - messages for one receiver's reassembly (Messages, with Delivered and
//     Refused); when Frame is set the messages are also exactly what a PUB
//     cuts that frame into.
type DopplerVector struct {
	// ID is the vector's stable name, for example doppler/v1/valid-ci16-le.
	ID    string   `json:"id"`
	Spec  string   `json:"spec"`
	Title string   `json:"title"`
	Tags  []string `json:"tags,omitempty"`

	// Order is the receiver's byte order for a check or a reassembly, and
	// the sender's for an encoding or a chunking: "little-endian" (the
	// default when empty) or "big-endian".
	Order string `json:"order,omitempty"`

	// Message is one whole message, or its first bytes when
	// TransportLength says the transport delivered more.
	Message         Hex     `json:"message,omitempty"`
	TransportLength *uint64 `json:"transport_length,omitempty"`
	// Verdict is the header check's verdict, as the reference's slugs spell
	// it: accepted, short-message, not-doppler, cross-endian,
	// other-major-version, unknown-flags, short-chunk-block,
	// payload-mismatch, unknown-kind, unknown-format, count-mismatch.
	Verdict string `json:"verdict,omitempty"`
	// Header and ChunkBlock are the fields of an accepted message.
	Header     *DopplerHeaderFields `json:"header,omitempty"`
	ChunkBlock *DopplerChunkFields  `json:"chunk_block,omitempty"`
	// Type names the frame type of a conforming sender's valid header (CI8,
	// CI16, CI32, CF32, CF64, RAW, TLM).
	Type string `json:"type,omitempty"`

	// Frame, if set, is a logical frame whose chunking at its max_payload is
	// exactly Messages.
	Frame *DopplerFrameSpec `json:"frame,omitempty"`
	// Messages are fed, in order, to one fresh receiver.
	Messages []Hex `json:"messages,omitempty"`
	// Delivered are the logical frames the receiver hands over, in order.
	Delivered []DopplerFrameExpect `json:"delivered,omitempty"`
	// Refused says whether the receiver must report a DP_ERR_INVALID
	// refusal (true), must report none (false), or is not judged on it
	// (absent). RefusedVerdict, if set, is the header-check verdict one of
	// the refusals must carry.
	Refused        *bool  `json:"refused,omitempty"`
	RefusedVerdict string `json:"refused_verdict,omitempty"`
}

// VectorID returns v's ID.
func (v *DopplerVector) VectorID() string { return v.ID }

// VectorSpec returns the section v enforces.
func (v *DopplerVector) VectorSpec() string { return v.Spec }

// VectorTitle returns what v shows, in one line.
func (v *DopplerVector) VectorTitle() string { return v.Title }

// BigEndian reports whether the vector's order is big-endian.
func (v *DopplerVector) BigEndian() bool { return v.Order == "big-endian" }

// IsCheck reports whether the vector has a message for the header check.
func (v *DopplerVector) IsCheck() bool { return v.Verdict != "" }

// IsReassembly reports whether the vector has messages for reassembly.
func (v *DopplerVector) IsReassembly() bool { return len(v.Messages) > 0 }

// MessageLength is the transport's length of the check message.
func (v *DopplerVector) MessageLength() uint64 {
	if v.TransportLength != nil {
		return *v.TransportLength
	}
	return uint64(len(v.Message))
}

// DopplerHeaderFields are dp_header_t's fields. Format is the BLUE code's two
// characters ("" for telemetry's 0), DataRep the four data_rep characters.
type DopplerHeaderFields struct {
	Magic        uint64  `json:"magic"`
	VersionMajor uint16  `json:"version_major"`
	VersionMinor uint16  `json:"version_minor"`
	Flags        uint32  `json:"flags"`
	Kind         uint16  `json:"kind"`
	Format       string  `json:"format"`
	DataRep      string  `json:"data_rep"`
	Sequence     uint64  `json:"sequence"`
	TimestampNs  uint64  `json:"timestamp_ns"`
	NumSamples   uint64  `json:"num_samples"`
	PayloadBytes uint64  `json:"payload_bytes"`
	SampleRateHz float64 `json:"sample_rate_hz"`
}

// FormatCode returns Format packed as the header holds it: the first
// character in the low byte, 0 for "".
func (h *DopplerHeaderFields) FormatCode() (uint16, error) {
	switch len(h.Format) {
	case 0:
		return 0, nil
	case 2:
		return uint16(h.Format[0]) | uint16(h.Format[1])<<8, nil
	}
	return 0, fmt.Errorf("format %q is not two characters", h.Format)
}

// DopplerChunkFields are dp_chunk_t's fields.
type DopplerChunkFields struct {
	ChunkIndex   uint32 `json:"chunk_index"`
	ChunkCount   uint32 `json:"chunk_count"`
	TotalSamples uint64 `json:"total_samples"`
	TotalBytes   uint64 `json:"total_bytes"`
}

// DopplerFrameSpec is a logical frame as a sender is handed it, and the
// connection's max_payload.
type DopplerFrameSpec struct {
	Type         string  `json:"type"`
	Sequence     uint64  `json:"sequence"`
	TimestampNs  uint64  `json:"timestamp_ns"`
	SampleRateHz float64 `json:"sample_rate_hz"`
	MaxPayload   uint64  `json:"max_payload"`
	Payload      Hex     `json:"payload"`
}

// DopplerFrameExpect is a logical frame a receiver delivers.
type DopplerFrameExpect struct {
	Header  DopplerHeaderFields `json:"header"`
	Payload Hex                 `json:"payload"`
}

// Doppler loads the doppler vectors.
func Doppler() (*Set[*DopplerVector], error) { return Load[*DopplerVector](DopplerVersion) }
