package wire

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/conform-suite/conform/cases"
	"github.com/conform-suite/conform/corpus"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/ref/wire"
)

// maxBatchBytes keeps a request well under the conform.v1 frame ceiling.
const maxBatchBytes = 8 << 20

// maxBatchInputs bounds the inputs in one request.
const maxBatchInputs = 512

// batches splits inputs into requests that respect both bounds.
func batches[T any](inputs []T, size func(T) int) [][]T {
	var out [][]T
	start, bytes := 0, 0
	for i, in := range inputs {
		n := size(in)
		if i > start && (bytes+n > maxBatchBytes || i-start >= maxBatchInputs) {
			out = append(out, inputs[start:i])
			start, bytes = i, 0
		}
		bytes += n
	}
	if start < len(inputs) {
		out = append(out, inputs[start:])
	}
	return out
}

func readInputSize(in *conformpb.ReadInput) int {
	n := 16
	for _, c := range in.Chunks {
		n += len(c.Data) + 16
	}
	return n
}

// readFrames sends the inputs to the SUT's frame reader, in batches.
func readFrames(t *cases.T, inputs []*conformpb.ReadInput) []*conformpb.ReadOutput {
	var outs []*conformpb.ReadOutput
	for _, b := range batches(inputs, readInputSize) {
		resp := t.Do(&conformpb.Request{Op: &conformpb.Request_ReadFrames{ReadFrames: &conformpb.ReadFrames{Inputs: b}}})
		r := resp.GetReadFrames()
		if r == nil {
			t.Protocolf("read_frames answered with %T", resp.Result)
		}
		if len(r.Outputs) != len(b) {
			t.Protocolf("read_frames: %d inputs, %d outputs", len(b), len(r.Outputs))
		}
		outs = append(outs, r.Outputs...)
	}
	return outs
}

// receiveFrames sends the inputs to the SUT's subscriber receive step.
func receiveFrames(t *cases.T, inputs []*conformpb.ReadInput) []*conformpb.ReceiveOutput {
	var outs []*conformpb.ReceiveOutput
	for _, b := range batches(inputs, readInputSize) {
		resp := t.Do(&conformpb.Request{Op: &conformpb.Request_Receive{Receive: &conformpb.Receive{Inputs: b}}})
		r := resp.GetReceive()
		if r == nil {
			t.Protocolf("receive answered with %T", resp.Result)
		}
		if len(r.Outputs) != len(b) {
			t.Protocolf("receive: %d inputs, %d outputs", len(b), len(r.Outputs))
		}
		outs = append(outs, r.Outputs...)
	}
	return outs
}

// writeFrames sends the inputs to the SUT's frame writer.
func writeFrames(t *cases.T, inputs []*conformpb.WriteInput) []*conformpb.WriteOutput {
	var outs []*conformpb.WriteOutput
	size := func(in *conformpb.WriteInput) int { return len(in.GetPayload().GetData()) + 32 }
	for _, b := range batches(inputs, size) {
		resp := t.Do(&conformpb.Request{Op: &conformpb.Request_WriteFrames{WriteFrames: &conformpb.WriteFrames{Inputs: b}}})
		r := resp.GetWriteFrames()
		if r == nil {
			t.Protocolf("write_frames answered with %T", resp.Result)
		}
		if len(r.Outputs) != len(b) {
			t.Protocolf("write_frames: %d inputs, %d outputs", len(b), len(r.Outputs))
		}
		outs = append(outs, r.Outputs...)
	}
	return outs
}

// decodeMessages asks the SUT to decode each payload.
func decodeMessages(t *cases.T, inputs []*conformpb.DecodeInput) []*conformpb.DecodeOutput {
	resp := t.Do(&conformpb.Request{Op: &conformpb.Request_Decode{Decode: &conformpb.Decode{Inputs: inputs}}})
	r := resp.GetDecode()
	if r == nil {
		t.Protocolf("decode answered with %T", resp.Result)
	}
	if len(r.Outputs) != len(inputs) {
		t.Protocolf("decode: %d inputs, %d outputs", len(inputs), len(r.Outputs))
	}
	return r.Outputs
}

// encodeMessages asks the SUT to encode each message.
func encodeMessages(t *cases.T, inputs []*conformpb.EncodeInput) []*conformpb.EncodeOutput {
	resp := t.Do(&conformpb.Request{Op: &conformpb.Request_Encode{Encode: &conformpb.Encode{Inputs: inputs}}})
	r := resp.GetEncode()
	if r == nil {
		t.Protocolf("encode answered with %T", resp.Result)
	}
	if len(r.Outputs) != len(inputs) {
		t.Protocolf("encode: %d inputs, %d outputs", len(inputs), len(r.Outputs))
	}
	return r.Outputs
}

// input builds a ReadInput from chunks.
func input(eos bool, chunks ...[]byte) *conformpb.ReadInput {
	in := &conformpb.ReadInput{EndOfStream: eos}
	for _, c := range chunks {
		in.Chunks = append(in.Chunks, &conformpb.Blob{Data: c})
	}
	return in
}

// describe prints an input's chunks as hex with the boundaries marked.
func describe(in *conformpb.ReadInput) string {
	var parts []string
	for _, c := range in.Chunks {
		if f := c.GetFill(); f != nil {
			parts = append(parts, fmt.Sprintf("<%d bytes of %x>", f.Length, f.Pattern))
			continue
		}
		parts = append(parts, corpus.FormatHex(c.Data))
	}
	s := strings.Join(parts, " | ")
	if in.EndOfStream {
		s += " | <end of stream>"
	}
	return s
}

// dataMatches reports whether d describes b: by its bytes when it carries
// them, by its SHA-256 when it is too large to.
func dataMatches(d *conformpb.Data, b []byte) bool {
	if d.GetLength() != uint64(len(b)) {
		return false
	}
	if len(b) <= maxInline {
		return bytes.Equal(d.GetBytes(), b) || (len(d.GetBytes()) == 0 && shaMatches(d.GetSha256(), b))
	}
	return shaMatches(d.GetSha256(), b)
}

// maxInline mirrors conform.proto's rule for Data: bytes up to 1 MiB.
const maxInline = 1 << 20

func shaMatches(sum, b []byte) bool {
	want := sha256.Sum256(b)
	return bytes.Equal(sum, want[:])
}

func showData(d *conformpb.Data) string {
	if len(d.GetBytes()) > 0 || d.GetLength() == 0 {
		return corpus.FormatHex(d.GetBytes())
	}
	return fmt.Sprintf("<%d bytes, sha256 %x>", d.GetLength(), d.GetSha256())
}

func showBytes(b []byte) string {
	if len(b) <= 64 {
		return corpus.FormatHex(b)
	}
	return fmt.Sprintf("<%d bytes, sha256 %x>", len(b), sha256.Sum256(b))
}

// ceilingClaim is a prefix claiming exactly the ceiling.
var ceilingClaim = binary.BigEndian.AppendUint32(nil, wire.MaxPayload)
