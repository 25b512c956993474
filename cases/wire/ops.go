package wire

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/conform-suite/conform/cases"
	"github.com/conform-suite/conform/corpus"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/ref/wire"
)

// readFrames sends the inputs to the SUT's frame reader, in batches.
func readFrames(t *cases.T, inputs []*conformpb.ReadInput) []*conformpb.ReadOutput {
	return cases.Batched(t, "read_frames", inputs, func(b []*conformpb.ReadInput) ([]*conformpb.ReadOutput, bool) {
		r := t.Do(&conformpb.Request{Op: &conformpb.Request_ReadFrames{ReadFrames: &conformpb.ReadFrames{Inputs: b}}}).GetReadFrames()
		return r.GetOutputs(), r != nil
	})
}

// receiveFrames sends the inputs to the SUT's subscriber receive step.
func receiveFrames(t *cases.T, inputs []*conformpb.ReadInput) []*conformpb.ReceiveOutput {
	return cases.Batched(t, "receive", inputs, func(b []*conformpb.ReadInput) ([]*conformpb.ReceiveOutput, bool) {
		r := t.Do(&conformpb.Request{Op: &conformpb.Request_Receive{Receive: &conformpb.Receive{Inputs: b}}}).GetReceive()
		return r.GetOutputs(), r != nil
	})
}

// writeFrames sends the inputs to the SUT's frame writer.
func writeFrames(t *cases.T, inputs []*conformpb.WriteInput) []*conformpb.WriteOutput {
	return cases.Batched(t, "write_frames", inputs, func(b []*conformpb.WriteInput) ([]*conformpb.WriteOutput, bool) {
		r := t.Do(&conformpb.Request{Op: &conformpb.Request_WriteFrames{WriteFrames: &conformpb.WriteFrames{Inputs: b}}}).GetWriteFrames()
		return r.GetOutputs(), r != nil
	})
}

// decodeMessages asks the SUT to decode each payload.
func decodeMessages(t *cases.T, inputs []*conformpb.DecodeInput) []*conformpb.DecodeOutput {
	return cases.Batched(t, "decode", inputs, func(b []*conformpb.DecodeInput) ([]*conformpb.DecodeOutput, bool) {
		r := t.Do(&conformpb.Request{Op: &conformpb.Request_Decode{Decode: &conformpb.Decode{Inputs: b}}}).GetDecode()
		return r.GetOutputs(), r != nil
	})
}

// encodeMessages asks the SUT to encode each message.
func encodeMessages(t *cases.T, inputs []*conformpb.EncodeInput) []*conformpb.EncodeOutput {
	return cases.Batched(t, "encode", inputs, func(b []*conformpb.EncodeInput) ([]*conformpb.EncodeOutput, bool) {
		r := t.Do(&conformpb.Request{Op: &conformpb.Request_Encode{Encode: &conformpb.Encode{Inputs: b}}}).GetEncode()
		return r.GetOutputs(), r != nil
	})
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

// dataOf is the Data a conforming SUT answers for bytes b: their length,
// and the bytes themselves up to 1 MiB or their SHA-256 above
// (conform.proto's rule for Data).
func dataOf(b []byte) *conformpb.Data {
	d := &conformpb.Data{Length: uint64(len(b))}
	if len(b) <= maxInline {
		d.Bytes = b
	} else {
		sum := sha256.Sum256(b)
		d.Sha256 = sum[:]
	}
	return d
}

// maxInline mirrors conform.proto's rule for Data: bytes up to 1 MiB.
const maxInline = 1 << 20

// ceilingClaim is a prefix claiming exactly the ceiling.
var ceilingClaim = binary.BigEndian.AppendUint32(nil, wire.MaxPayload)
