package wire

import (
	"fmt"
	"slices"

	"github.com/conform-suite/conform/cases"
	"github.com/conform-suite/conform/corpus"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/proto/conform/v1/meaning"
	"github.com/conform-suite/conform/reports"
	"github.com/conform-suite/conform/reports/evidence"
	"google.golang.org/protobuf/encoding/protowire"
)

// messages is ranvier-wire §4 and §5.3: the data-plane messages and the
// printed control frames, byte by byte.
func messages(k *cases.Kit, vecs *vectors) []cases.Case {
	return []cases.Case{
		k.Must(func() cases.Case {
			vs := vecs.List("frame-sample", "sample-fixed64-little-endian")
			return cases.Case{
				ID:    "wire/4.3/sample-decodes-by-number",
				Title: "A Sample decodes its five fields by number: timestamps fixed64, sequence, values, stream_ref",
				Spec:  "ranvier-wire §4.3",
				Requirements: []string{"ranvier-wire§4.3#1", "ranvier-wire§4.3#2", "ranvier-wire§4.3#3", "ranvier-wire§4.3#4",
					"ranvier-wire§4.3#5", "reconstructed§ranvier-fields#1"},
				Run: func(t *cases.T) { decodeVectors(t, vs...) },
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:    "wire/4.3/timestamps-are-fixed64",
				Title: "Every timestamp is written as fixed64: Sample's two and Authorisation's two",
				Spec:  "ranvier-wire §4.3, §4.4",
				Requirements: []string{"ranvier-wire§4.3#1", "ranvier-wire§4.3#4", "ranvier-wire§4.3#6", "ranvier-streams§4#1",
					"reconstructed§ranvier-fields#1", "reconstructed§ranvier-fields#6"},
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
									Diff:     evidence.Format(evidence.DiffAt(fmt.Sprintf("payload: the wire types of field %d", f), []protowire.Type{protowire.Fixed64Type}, got)),
								})
							}
						}
					}
				},
			}
		}),
		k.Must(func() cases.Case {
			v := vecs.Get("sample-fixed64-little-endian")
			return cases.Case{
				ID:           "wire/4.3/fixed64-little-endian",
				Title:        "Timestamps inside the payload are little-endian even though the prefix is big-endian",
				Spec:         "ranvier-wire §1.2, §4.3",
				Requirements: []string{"ranvier-wire§1.2#6", "reconstructed§ranvier-fields#1"},
				Run: func(t *cases.T) {
					decodeVectors(t, v)
					encodeVectors(t, v)
				},
			}
		}),
		k.Must(func() cases.Case {
			v := vecs.Get("sample-opaque-values")
			return cases.Case{
				ID:           "wire/4.3/values-are-opaque",
				Title:        "values is opaque: bytes that parse as nothing are carried intact, never required to parse",
				Spec:         "ranvier-wire §4.3",
				Requirements: []string{"ranvier-wire§4.3#13"},
				Run: func(t *cases.T) {
					decodeVectors(t, v)
					encodeVectors(t, v)
				},
			}
		}),
		k.Must(func() cases.Case {
			all, empties := vecs.Get("streaminfo-all-fields"), vecs.Get("streaminfo-explicit-empty-strings")
			return cases.Case{
				ID:    "wire/4.4/streaminfo-decodes-by-number",
				Title: "A StreamInfo decodes all eleven fields by number, field 10 out of sequence included, and strings written as explicit empty values",
				Spec:  "ranvier-wire §4.4",
				Requirements: []string{"ranvier-wire§4.4#1", "ranvier-wire§4.4#2", "ranvier-wire§4.4#3", "ranvier-wire§4.4#4",
					"ranvier-wire§4.4#5", "ranvier-wire§4.4#6", "ranvier-wire§4.4#7", "ranvier-wire§4.4#8", "ranvier-wire§4.4#9",
					"ranvier-wire§4.4#10", "ranvier-wire§4.4#11", "ranvier-wire§4.4#13", "ranvier-wire§4.4#20",
					"reconstructed§ranvier-fields#2", "reconstructed§ranvier-fields#3", "reconstructed§ranvier-fields#4",
					"reconstructed§ranvier-fields#5", "reconstructed§ranvier-fields#6", "reconstructed§ranvier-fields#7",
					"reconstructed§ranvier-fields#8", "reconstructed§ranvier-fields#9"},
				Run: func(t *cases.T) {
					// The explicit empty strings (12 00, 2a 00, 32 00) no
					// proto3 marshaller writes: they decode as the fields'
					// defaults, which canonical JSON leaves out, so a decoder
					// that keeps them as present but empty decodes the same
					// message. Reading them as absent is the streams
					// document's rule (ranvier-streams §6.6), judged there.
					decodeVectors(t, all, empties)
					encodeVectors(t, all, empties)
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:    "wire/4.4/descriptor-not-parsed",
				Title: "SchemaInfo.descriptor is carried, not parsed: bytes that are no FileDescriptorSet decode intact",
				Spec:  "ranvier-wire §4.4",
				Requirements: []string{"ranvier-wire§4.4#17", "ranvier-streams§6.2#2",
					"reconstructed§ranvier-fields#3", "reconstructed§ranvier-fields#9"},
				Run: func(t *cases.T) {
					garbage := []byte{0xff, 0xff, 0xff, 0xff, 0x0f, 0x00}
					schema := protowire.AppendTag(nil, 1, protowire.BytesType)
					schema = protowire.AppendString(schema, "x.Y")
					schema = protowire.AppendTag(schema, 2, protowire.BytesType)
					schema = protowire.AppendBytes(schema, garbage)
					payload := protowire.AppendTag(nil, 3, protowire.BytesType)
					payload = protowire.AppendBytes(payload, schema)
					in := &conformpb.DecodeInput{MessageType: "ranvier.message.v1.StreamInfo", Payload: payload}
					out := decodeMessages(t, []*conformpb.DecodeInput{in})[0]
					want, _ := parseJSON("ranvier.message.v1.StreamInfo", []byte(`{"schema":{"schemaId":"x.Y","descriptor":"/////w8A"}}`))
					t.CheckAnswer("a StreamInfo whose descriptor is not a FileDescriptorSet did not decode with the descriptor bytes intact",
						corpus.FormatHex(payload), in, decodedAnswer(want), out, meaning.MUST, "failed", "json")
				},
			}
		}),
		k.Must(func() cases.Case {
			v := vecs.Get("frame-sample")
			return cases.Case{
				ID:    "wire/4.5/frame-sample-decodes",
				Title: "The printed Frame{sample} (00 00 00 12 12 10 09 01 …) decodes to the stated values",
				Spec:  "ranvier-wire §4.5",
				Tags:  []string{"printed"},
				Requirements: []string{"ranvier-wire§4.1#1", "ranvier-wire§4.5#1", "reconstructed§ranvier-fields#1",
					"reconstructed§ranvier-fields#11", "reconstructed§ranvier-vectors#1"},
				Run: func(t *cases.T) { decodeVectors(t, v) },
			}
		}),
		k.Must(func() cases.Case {
			v := vecs.Get("frame-sample")
			return cases.Case{
				ID:           "wire/4.5/frame-sample-encodes",
				Title:        "Encoding the §4.5 Frame{sample} gives bytes that decode to it (checked by round trip: field order is free)",
				Spec:         "ranvier-wire §4.5, §4.6",
				Tags:         []string{"printed"},
				Requirements: []string{"ranvier-wire§4.5#1", "reconstructed§ranvier-vectors#1"},
				Run:          func(t *cases.T) { encodeVectors(t, v) },
			}
		}),
		k.Must(func() cases.Case {
			v := vecs.Get("request-gaze")
			return cases.Case{
				ID:    "wire/4.5/request-both-ways",
				Title: "Request{stream_name: \"gaze\"} is 0a 04 67 61 7a 65, both ways",
				Spec:  "ranvier-wire §4.5",
				Tags:  []string{"printed"},
				Requirements: []string{"ranvier-wire§4.1#1", "ranvier-wire§4.5#2", "reconstructed§ranvier-fields#10",
					"reconstructed§ranvier-vectors#2"},
				Run: func(t *cases.T) {
					decodeVectors(t, v)
					encodeVectors(t, v)
					writeVectors(t, v)
				},
			}
		}),
		k.Must(func() cases.Case {
			v := vecs.Get("frame-empty")
			return cases.Case{
				ID:    "wire/4.5/empty-frame-both-ways",
				Title: "A Frame with no variant set is the empty payload, framed as 00 00 00 00, both ways",
				Spec:  "ranvier-wire §4.5",
				Tags:  []string{"printed"},
				Requirements: []string{"ranvier-wire§4.5#3", "ranvier-wire§7.5#2", "reconstructed§ranvier-fields#11",
					"reconstructed§ranvier-vectors#3"},
				Run: func(t *cases.T) {
					decodeVectors(t, v)
					encodeVectors(t, v)
					writeVectors(t, v)
				},
			}
		}),
		k.Must(func() cases.Case {
			v := vecs.Get("frame-sample")
			return cases.Case{
				ID:           "wire/4.5/subscriber-delivers-sample",
				Title:        "A subscriber delivers the printed Frame{sample} with its values",
				Spec:         "ranvier-wire §4.1, §4.5",
				Tags:         []string{"printed"},
				Requirements: []string{"ranvier-wire§4.5#1"},
				Run:          func(t *cases.T) { receiveVectors(t, v) },
			}
		}),
		k.Must(func() cases.Case {
			vs := vecs.List("sample-fields-reversed", "streaminfo-all-fields")
			return cases.Case{
				ID:           "wire/4.6/any-field-order",
				Title:        "A reader accepts a message's fields in any order",
				Spec:         "ranvier-wire §4.6",
				Requirements: []string{"ranvier-wire§4.6#2"},
				Run:          func(t *cases.T) { decodeVectors(t, vs...) },
			}
		}),
		k.May(func() cases.Case {
			v := vecs.Get("streaminfo-all-fields")
			return cases.Case{
				ID:           "wire/4.6/writer-field-order",
				Title:        "A writer MAY order fields as it likes: the order the SUT writes is recorded",
				Spec:         "ranvier-wire §4.6",
				Requirements: []string{"ranvier-wire§4.6#1"},
				Run: func(t *cases.T) {
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
					if slices.IsSorted(order) {
						t.Note("StreamInfo fields written in ascending order %v, as the Rust writes them", order)
						return
					}
					t.Note("StreamInfo fields written in the order %v, not ascending: the freedom §4.6 gives a writer, used", order)
				},
			}
		}),
		k.Must(func() cases.Case {
			v := vecs.Get("alive-default")
			return cases.Case{
				ID:    "wire/5.3/alive-default-both-ways",
				Title: "ToRuntime{alive: Alive{sequence: 0}} is 1a 00 (framed 00 00 00 02 1a 00), both ways",
				Spec:  "ranvier-wire §5.3",
				Tags:  []string{"printed"},
				Requirements: []string{"ranvier-wire§5#1", "ranvier-wire§5.3#1", "reconstructed§contradictions#6",
					"reconstructed§ranvier-fields#12", "reconstructed§ranvier-fields#16", "reconstructed§ranvier-vectors#4"},
				Run: func(t *cases.T) {
					decodeVectors(t, v)
					encodeVectors(t, v)
					writeVectors(t, v)
				},
			}
		}),
		k.Must(func() cases.Case {
			v := vecs.Get("alive-seven")
			return cases.Case{
				ID:    "wire/5.3/alive-sequence-seven-both-ways",
				Title: "ToRuntime{alive: Alive{sequence: 7}} is 1a 02 08 07 (framed 00 00 00 04 …), both ways",
				Spec:  "ranvier-wire §5.3",
				Tags:  []string{"printed"},
				Requirements: []string{"ranvier-wire§5.3#2", "reconstructed§ranvier-fields#12", "reconstructed§ranvier-fields#16",
					"reconstructed§ranvier-vectors#4"},
				Run: func(t *cases.T) {
					decodeVectors(t, v)
					encodeVectors(t, v)
					writeVectors(t, v)
				},
			}
		}),
	}
}

// controlMessages is ranvier-wire §5.2's messages at codec level: the
// control plane's field numbers, which the document leaves to a .proto
// file it does not publish and this project pins (the reconstructed
// ranvier-fields requirements). What a node or a runtime does with each
// message is the live suite's.
func controlMessages(k *cases.Kit, vecs *vectors) []cases.Case {
	return []cases.Case{
		k.Must(func() cases.Case {
			vs := vecs.List("register", "bind")
			return cases.Case{
				ID:    "wire/5.2/register-and-bind-both-ways",
				Title: "ToRuntime{register} and ToNode{bind} decode and encode by the pinned field numbers, and frame as §1 frames",
				Spec:  "ranvier-wire §5.2, §5",
				Requirements: []string{"ranvier-wire§5#1", "reconstructed§ranvier-fields#12", "reconstructed§ranvier-fields#13",
					"reconstructed§ranvier-fields#14", "reconstructed§ranvier-fields#18"},
				Run: func(t *cases.T) {
					decodeVectors(t, vs...)
					encodeVectors(t, vs...)
					writeVectors(t, vs...)
				},
			}
		}),
		k.Must(func() cases.Case {
			vs := vecs.List("listening", "stopping", "stop")
			return cases.Case{
				ID:    "wire/5.2/listening-stopping-stop-both-ways",
				Title: "ToRuntime{listening}, ToRuntime{stopping} and ToNode{stop} decode and encode by the pinned field numbers",
				Spec:  "ranvier-wire §5.2",
				Requirements: []string{"reconstructed§ranvier-fields#12", "reconstructed§ranvier-fields#13",
					"reconstructed§ranvier-fields#15", "reconstructed§ranvier-fields#17", "reconstructed§ranvier-fields#22"},
				Run: func(t *cases.T) {
					decodeVectors(t, vs...)
					encodeVectors(t, vs...)
				},
			}
		}),
	}
}

// writeVectors asks the SUT's writer to frame each vector's payload and
// checks the bytes against the vector's input, byte for byte.
func writeVectors(t *cases.T, vs ...*corpus.Vector) {
	var ins []*conformpb.WriteInput
	for _, v := range vs {
		ins = append(ins, &conformpb.WriteInput{Payload: &conformpb.Blob{Data: v.Frames[0]}})
	}
	for i, out := range writeFrames(t, ins) {
		checkWritten(t, "framing "+vs[i].ID, ins[i], out, vs[i].Input)
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
