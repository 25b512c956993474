package wire

import (
	"fmt"
	"slices"

	"github.com/conform-suite/conform/cases"
	"github.com/conform-suite/conform/corpus"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/reports"
	"google.golang.org/protobuf/encoding/protowire"
)

// messages is ranvier-wire §4 and §5.3: the data-plane and control-plane
// messages, byte by byte.
func (s *suite) messages() []cases.Case {
	return []cases.Case{
		must(cases.Case{
			ID:      "wire/4.3/sample-decodes-by-number",
			Title:   "A Sample decodes its five fields by number: timestamps fixed64, sequence, values, stream_ref",
			Spec:    "ranvier-wire §4.3",
			Vectors: ids("frame-sample", "sample-fixed64-little-endian"),
			Run: func(t *cases.T) {
				s.decodeVectors(t, "frame-sample", "sample-fixed64-little-endian")
			},
		}),
		must(cases.Case{
			ID:    "wire/4.3/timestamps-are-fixed64",
			Title: "Every timestamp is written as fixed64: Sample's two and Authorisation's two",
			Spec:  "ranvier-wire §4.3, §4.4",
			Run: func(t *cases.T) {
				ins := []*conformpb.EncodeInput{
					{MessageType: "ranvier.message.v1.Sample", Json: `{"monotonicTimestampNs":"5","sequence":"1","sourceTimestampNs":"6","streamRef":1}`},
					{MessageType: "ranvier.message.v1.Authorisation", Json: `{"authority":"a","validFromUnixNs":"7","validUntilUnixNs":"8"}`},
				}
				fixed := [][]protowire.Number{{1, 4}, {3, 4}}
				for i, out := range encodeMessages(t, ins) {
					if out.Failed {
						t.Failf("encoding %s failed: %s", ins[i].MessageType, out.Error)
						continue
					}
					fields, err := fieldsOf(out.Payload)
					if err != nil {
						t.Fail(reports.Evidence{Message: "the encoding does not parse", Input: ins[i].Json, Got: corpus.FormatHex(out.Payload)})
						continue
					}
					for _, f := range fixed[i] {
						var got []protowire.Type
						for _, ft := range fields {
							if ft.num == f {
								got = append(got, ft.typ)
							}
						}
						if len(got) != 1 || got[0] != protowire.Fixed64Type {
							t.Fail(reports.Evidence{
								Message:  fmt.Sprintf("%s field %d is not written once as fixed64", ins[i].MessageType, f),
								Input:    ins[i].Json,
								Expected: "wire type 1 (fixed64)",
								Got:      fmt.Sprintf("wire types %v in %s", got, corpus.FormatHex(out.Payload)),
							})
						}
					}
				}
			},
		}),
		must(cases.Case{
			ID:      "wire/4.3/fixed64-little-endian",
			Title:   "Timestamps inside the payload are little-endian even though the prefix is big-endian",
			Spec:    "ranvier-wire §1.2, §4.3",
			Vectors: ids("sample-fixed64-little-endian"),
			Run: func(t *cases.T) {
				s.decodeVectors(t, "sample-fixed64-little-endian")
				s.encodeVectors(t, "sample-fixed64-little-endian")
			},
		}),
		must(cases.Case{
			ID:      "wire/4.3/values-are-opaque",
			Title:   "values is opaque: bytes that parse as nothing are carried intact, never required to parse",
			Spec:    "ranvier-wire §4.3",
			Vectors: ids("sample-opaque-values"),
			Run: func(t *cases.T) {
				s.decodeVectors(t, "sample-opaque-values")
				s.encodeVectors(t, "sample-opaque-values")
			},
		}),
		must(cases.Case{
			ID:      "wire/4.4/streaminfo-decodes-by-number",
			Title:   "A StreamInfo decodes all eleven fields by number, field 10 out of sequence included",
			Spec:    "ranvier-wire §4.4",
			Vectors: ids("streaminfo-all-fields"),
			Run: func(t *cases.T) {
				s.decodeVectors(t, "streaminfo-all-fields")
				s.encodeVectors(t, "streaminfo-all-fields")
			},
		}),
		must(cases.Case{
			ID:    "wire/4.4/descriptor-not-parsed",
			Title: "SchemaInfo.descriptor is carried, not parsed: bytes that are no FileDescriptorSet decode intact",
			Spec:  "ranvier-wire §4.4",
			Run: func(t *cases.T) {
				garbage := []byte{0xff, 0xff, 0xff, 0xff, 0x0f, 0x00}
				schema := protowire.AppendTag(nil, 1, protowire.BytesType)
				schema = protowire.AppendString(schema, "x.Y")
				schema = protowire.AppendTag(schema, 2, protowire.BytesType)
				schema = protowire.AppendBytes(schema, garbage)
				payload := protowire.AppendTag(nil, 3, protowire.BytesType)
				payload = protowire.AppendBytes(payload, schema)
				out := decodeMessages(t, []*conformpb.DecodeInput{{MessageType: "ranvier.message.v1.StreamInfo", Payload: payload}})[0]
				if out.Failed {
					t.Fail(reports.Evidence{Message: "a StreamInfo whose descriptor is not a FileDescriptorSet failed to decode", Input: corpus.FormatHex(payload), Got: out.Error})
					return
				}
				want, _ := parseJSON("ranvier.message.v1.StreamInfo", []byte(`{"schema":{"schemaId":"x.Y","descriptor":"/////w8A"}}`))
				checkDecoded(t, "the descriptor bytes", payload, "ranvier.message.v1.StreamInfo", out.Json, want)
			},
		}),
		must(cases.Case{
			ID:      "wire/4.5/frame-sample-decodes",
			Title:   "The printed Frame{sample} (00 00 00 12 12 10 09 01 …) decodes to the stated values",
			Spec:    "ranvier-wire §4.5",
			Tags:    []string{"printed"},
			Vectors: ids("frame-sample"),
			Run:     func(t *cases.T) { s.decodeVectors(t, "frame-sample") },
		}),
		must(cases.Case{
			ID:      "wire/4.5/frame-sample-encodes",
			Title:   "Encoding the §4.5 Frame{sample} gives bytes that decode to it (checked by round trip: field order is free)",
			Spec:    "ranvier-wire §4.5, §4.6",
			Tags:    []string{"printed"},
			Vectors: ids("frame-sample"),
			Run:     func(t *cases.T) { s.encodeVectors(t, "frame-sample") },
		}),
		must(cases.Case{
			ID:      "wire/4.5/request-both-ways",
			Title:   "Request{stream_name: \"gaze\"} is 0a 04 67 61 7a 65, both ways",
			Spec:    "ranvier-wire §4.5",
			Tags:    []string{"printed"},
			Vectors: ids("request-gaze"),
			Run: func(t *cases.T) {
				s.decodeVectors(t, "request-gaze")
				s.encodeVectors(t, "request-gaze")
				s.writeVectors(t, "request-gaze")
			},
		}),
		must(cases.Case{
			ID:      "wire/4.5/empty-frame-both-ways",
			Title:   "A Frame with no variant set is the empty payload, framed as 00 00 00 00, both ways",
			Spec:    "ranvier-wire §4.5",
			Tags:    []string{"printed"},
			Vectors: ids("frame-empty"),
			Run: func(t *cases.T) {
				s.decodeVectors(t, "frame-empty")
				s.encodeVectors(t, "frame-empty")
				s.writeVectors(t, "frame-empty")
			},
		}),
		must(cases.Case{
			ID:      "wire/4.5/subscriber-delivers-sample",
			Title:   "A subscriber delivers the printed Frame{sample} with its values",
			Spec:    "ranvier-wire §4.1, §4.5",
			Tags:    []string{"printed"},
			Vectors: ids("frame-sample"),
			Run:     func(t *cases.T) { s.receiveVectors(t, "frame-sample") },
		}),
		must(cases.Case{
			ID:      "wire/4.6/any-field-order",
			Title:   "A reader accepts a message's fields in any order",
			Spec:    "ranvier-wire §4.6",
			Vectors: ids("sample-fields-reversed", "streaminfo-all-fields"),
			Run: func(t *cases.T) {
				s.decodeVectors(t, "sample-fields-reversed", "streaminfo-all-fields")
			},
		}),
		info(cases.Case{
			ID:      "wire/4.6/writer-field-order",
			Title:   "A writer MAY order fields as it likes: the order the SUT writes is recorded",
			Spec:    "ranvier-wire §4.6",
			Vectors: ids("streaminfo-all-fields"),
			Run: func(t *cases.T) {
				v := s.vec("streaminfo-all-fields")
				out := encodeMessages(t, []*conformpb.EncodeInput{{MessageType: v.Message.Type, Json: string(v.Message.JSON)}})[0]
				if out.Failed {
					t.Note("the encoder failed: %s", out.Error)
					return
				}
				fields, err := fieldsOf(out.Payload)
				if err != nil {
					t.Note("the encoding does not parse: %v", err)
					return
				}
				var order []protowire.Number
				for _, f := range fields {
					order = append(order, f.num)
				}
				sorted := slices.IsSorted(order)
				t.Note("StreamInfo fields written in the order %v (ascending: %v)", order, sorted)
			},
		}),
		must(cases.Case{
			ID:      "wire/5.3/alive-default-both-ways",
			Title:   "ToRuntime{alive: Alive{sequence: 0}} is 1a 00 (framed 00 00 00 02 1a 00), both ways",
			Spec:    "ranvier-wire §5.3; RECONSTRUCTED §4",
			Tags:    []string{"printed", "reconstructed"},
			Vectors: ids("alive-default"),
			Run: func(t *cases.T) {
				s.decodeVectors(t, "alive-default")
				s.encodeVectors(t, "alive-default")
				s.writeVectors(t, "alive-default")
			},
		}),
		must(cases.Case{
			ID:      "wire/5.3/alive-sequence-seven-both-ways",
			Title:   "ToRuntime{alive: Alive{sequence: 7}} is 1a 02 08 07 (framed 00 00 00 04 …), both ways",
			Spec:    "ranvier-wire §5.3",
			Tags:    []string{"printed"},
			Vectors: ids("alive-seven"),
			Run: func(t *cases.T) {
				s.decodeVectors(t, "alive-seven")
				s.encodeVectors(t, "alive-seven")
				s.writeVectors(t, "alive-seven")
			},
		}),
	}
}

// writeVectors asks the SUT's writer to frame each vector's payload and
// checks the bytes against the vector's input, byte for byte.
func (s *suite) writeVectors(t *cases.T, names ...string) {
	var ins []*conformpb.WriteInput
	for _, n := range names {
		ins = append(ins, &conformpb.WriteInput{Payload: &conformpb.Blob{Data: s.vec(n).Frames[0]}})
	}
	for i, out := range writeFrames(t, ins) {
		v := s.vec(names[i])
		checkWritten(t, "framing "+v.ID, len(v.Frames[0]), out, v.Input)
	}
}

// fieldTag is one top-level field of a protobuf encoding, as written.
type fieldTag struct {
	num protowire.Number
	typ protowire.Type
}

// fieldsOf parses the top level of a protobuf encoding and returns its
// fields in the order they were written.
func fieldsOf(b []byte) ([]fieldTag, error) {
	var out []fieldTag
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil, protowire.ParseError(n)
		}
		m := protowire.ConsumeFieldValue(num, typ, b[n:])
		if m < 0 {
			return nil, protowire.ParseError(m)
		}
		b = b[n+m:]
		out = append(out, fieldTag{num, typ})
	}
	return out, nil
}
