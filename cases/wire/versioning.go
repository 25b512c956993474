package wire

import (
	"bytes"
	"fmt"

	"github.com/conform-suite/conform/cases"
	"github.com/conform-suite/conform/corpus"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/ref/wire"
	"github.com/conform-suite/conform/reports"
	"github.com/conform-suite/conform/reports/evidence"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// versioning is ranvier-wire §7 (unknown fields, variants and enum values,
// truncated payloads) and the open questions of §8, recorded as info.
func versioning(k *cases.Kit, vecs *vectors) []cases.Case {
	return []cases.Case{
		k.Must(func() cases.Case {
			vs := vecs.List("sample-unknown-field-9", "streaminfo-unknown-field", "frame-unknown-fields")
			return cases.Case{
				ID:           "wire/7.2/unknown-fields-skipped",
				Title:        "A decoder accepts field numbers it does not know and decodes the fields it does know",
				Spec:         "ranvier-wire §7.2",
				Requirements: []string{"ranvier-wire§7.2#1", "ranvier-wire§7.2#2", "reconstructed§ranvier-fields#8"},
				Run:          func(t *cases.T) { decodeVectors(t, vs...) },
			}
		}),
		k.Must(func() cases.Case {
			v := vecs.Get("frame-unknown-fields")
			return cases.Case{
				ID:           "wire/7.2/subscriber-delivers-despite-unknown-fields",
				Title:        "A subscriber delivers a Frame{sample} carrying unknown fields, with its known fields intact",
				Spec:         "ranvier-wire §7.2",
				Requirements: []string{"ranvier-wire§7.2#1", "ranvier-wire§7.2#2"},
				Run:          func(t *cases.T) { receiveVectors(t, v) },
			}
		}),
		k.Must(func() cases.Case {
			vs := vecs.List("unknown-variant", "to-node-unknown-variant", "to-runtime-unknown-variant")
			return cases.Case{
				ID:    "wire/7.3/unknown-variant-is-no-variant",
				Title: "A Frame, ToRuntime or ToNode carrying an unknown variant number decodes with no variant set",
				Spec:  "ranvier-wire §7.3",
				Requirements: []string{"ranvier-wire§7.3#1", "ranvier-wire§7.3#2", "reconstructed§ranvier-fields#11",
					"reconstructed§ranvier-fields#12", "reconstructed§ranvier-fields#13"},
				Run: func(t *cases.T) { decodeVectors(t, vs...) },
			}
		}),
		k.Must(func() cases.Case {
			v := vecs.Get("unknown-variant")
			return cases.Case{
				ID:           "wire/7.3/subscriber-skips-unknown-variant",
				Title:        "A subscriber does not fail on a Frame of an unknown variant: it skips it and keeps the connection",
				Spec:         "ranvier-wire §7.3, §6.4",
				Requirements: []string{"ranvier-wire§7.3#1"},
				Run:          func(t *cases.T) { receiveVectors(t, v) },
			}
		}),
		k.Must(func() cases.Case {
			v := vecs.Get("known-beside-unknown-variant")
			return cases.Case{
				ID:           "wire/7.3/known-variant-beside-unknown",
				Title:        "A known variant in the same payload as an unknown one still arrives",
				Spec:         "ranvier-wire §7.3",
				Requirements: []string{"ranvier-wire§7.3#3"},
				Run: func(t *cases.T) {
					decodeVectors(t, v)
					receiveVectors(t, v)
				},
			}
		}),
		k.Must(func() cases.Case {
			vs := vecs.List("refuse-undeclared-reason", "transport-undeclared-action", "streaminfo-undeclared-enums")
			return cases.Case{
				ID:    "wire/7.4/undeclared-enum-decodes",
				Title: "A message carrying an undeclared enum value decodes, with the value as its raw integer or as unspecified, never as a declared neighbour",
				Spec:  "ranvier-wire §7.4",
				Requirements: []string{"ranvier-wire§7.4#2", "ranvier-wire§7.4#4", "reconstructed§ranvier-fields#2",
					"reconstructed§ranvier-fields#4", "reconstructed§ranvier-fields#20", "reconstructed§ranvier-fields#21"},
				Run: func(t *cases.T) {
					for _, d := range decodeUndeclared(t, vs) {
						v := d.vector
						switch {
						case d.failed != "":
							t.Fail(evidence.Named("failed", reports.Evidence{Message: v.ID + ": a message carrying an undeclared enum value failed to decode",
								Input: corpus.FormatHex(v.Frames[0]), Expected: string(v.Message.JSON), Got: "error: " + d.failed}))
							continue
						case d.unparsed != nil:
							t.Fail(evidence.Named("json", reports.Evidence{Message: v.ID + ": the SUT's JSON does not parse as " + v.Message.Type + " (" + d.unparsed.Error() + ")",
								Input: corpus.FormatHex(v.Frames[0]), Expected: string(v.Message.JSON), Got: d.json}))
							continue
						}
						for _, r := range d.readings {
							if r.got != r.raw && r.got != 0 {
								t.Fail(reports.Evidence{Message: fmt.Sprintf("%s: %s, undeclared value %d, was read as the declared value %d", v.ID, r.field, r.raw, r.got),
									Input: corpus.FormatHex(v.Frames[0]), Expected: fmt.Sprintf("%d (the raw value) or 0 (unspecified)", r.raw), Got: d.json,
									Diff: evidence.Format(evidence.DiffAt("json (the decoded message)."+r.field, fmt.Sprintf("%d or 0", r.raw), fmt.Sprint(r.got)))})
							}
						}
						t.FailCompare(v.ID+": the fields beside the undeclared values decoded wrong", corpus.FormatHex(v.Frames[0]), d.want, d.got)
					}
				},
			}
		}),
		k.May(func() cases.Case {
			vs := vecs.List("refuse-undeclared-reason", "transport-undeclared-action", "streaminfo-undeclared-enums")
			return cases.Case{
				ID:           "wire/7.4/undeclared-enum-kept",
				Title:        "An implementation MAY surface an undeclared enum value as its raw integer (99 decodes as 99): what the decoder keeps is recorded",
				Spec:         "ranvier-wire §7.4",
				Requirements: []string{"ranvier-wire§7.4#3"},
				Run: func(t *cases.T) {
					for _, d := range decodeUndeclared(t, vs) {
						if d.failed != "" || d.unparsed != nil {
							t.Note("%s: not decoded (%s%v), so nothing to record", d.vector.ID, d.failed, d.unparsed)
							continue
						}
						for _, r := range d.readings {
							switch r.got {
							case r.raw:
								t.Note("%s: %s kept as its raw value %d", d.vector.ID, r.field, r.raw)
							case 0:
								t.Note("%s: %s, undeclared value %d, read as 0 (unspecified): the raw value is not surfaced", d.vector.ID, r.field, r.raw)
							default:
								t.Note("%s: %s, undeclared value %d, read as %d", d.vector.ID, r.field, r.raw, r.got)
							}
						}
					}
				},
			}
		}),
		k.Must(func() cases.Case {
			truncated, undecodable := vecs.Get("truncated-mid-field"), vecs.Get("undecodable-then-sample")
			return cases.Case{
				ID:           "wire/7.5/truncated-payload-fails-to-decode",
				Title:        "A payload that ends mid-field is a decode failure, reported as one",
				Spec:         "ranvier-wire §7.5",
				Requirements: []string{"ranvier-wire§7.5#1"},
				Run: func(t *cases.T) {
					decodeVectors(t, truncated)
					// The first frame of undecodable-then-sample alone.
					bad := undecodable.Frames[0]
					out := decodeMessages(t, []*conformpb.DecodeInput{{MessageType: undecodable.Message.Type, Payload: bad}})[0]
					if !out.Failed {
						t.Failf("%s (first frame): the malformed payload %s decoded as %s", undecodable.ID, corpus.FormatHex(bad), out.Json)
					}
				},
			}
		}),
		k.Info(func() cases.Case {
			vs := vecs.List("sample-unknown-field-9", "frame-unknown-fields")
			return cases.Case{
				ID:           "wire/8/unknown-fields-on-reencode",
				Title:        "Whether fields a decoder did not know survive a decode and re-encode is open: what the SUT does is recorded",
				Spec:         "ranvier-wire §8 item 3, §7.2",
				Requirements: []string{"ranvier-wire§8#4", "ranvier-wire§7.2#3"},
				Run: func(t *cases.T) {
					var ins []*conformpb.DecodeInput
					for _, v := range vs {
						ins = append(ins, &conformpb.DecodeInput{MessageType: v.Message.Type, Payload: v.Frames[0], Reencode: true})
					}
					for i, out := range decodeMessages(t, ins) {
						name := vs[i].ID
						switch {
						case out.Failed:
							t.Note("%s: the decode failed: %s", name, out.Error)
						case out.Reencoded == nil:
							t.Note("%s: the SUT does not report a re-encoding", name)
						case bytes.Equal(out.Reencoded, ins[i].Payload):
							t.Note("%s: re-encoded byte for byte, unknown fields kept", name)
						default:
							t.Note("%s: re-encoded as %s (input %s)", name, corpus.FormatHex(out.Reencoded), corpus.FormatHex(ins[i].Payload))
						}
					}
				},
			}
		}),
		k.Info(func() cases.Case {
			v := vecs.Get("two-variants")
			return cases.Case{
				ID:           "wire/8/two-variants-in-one-frame",
				Title:        "A Frame carrying both an announce and a sample: the receiver's choice is not specified and is recorded",
				Spec:         "ranvier-wire §8 item 1",
				Requirements: []string{"ranvier-wire§8#2"},
				Run: func(t *cases.T) {
					out := decodeMessages(t, []*conformpb.DecodeInput{{MessageType: v.Message.Type, Payload: v.Frames[0]}})[0]
					if out.Failed {
						t.Note("the SUT refused the payload: %s", out.Error)
						return
					}
					t.Note("the SUT decoded it as %s", out.Json)
				},
			}
		}),
		k.Info(func() cases.Case {
			return cases.Case{
				ID:           "wire/8/large-descriptor",
				Title:        "An announcement whose descriptor approaches the ceiling: no bound is specified, so what the SUT does is recorded",
				Spec:         "ranvier-wire §8 item 4",
				Requirements: []string{"ranvier-wire§8#5"},
				Run: func(t *cases.T) {
					// 4 MiB stays well inside one conform.v1 request.
					desc := bytes.Repeat([]byte{0x5a}, 4<<20)
					schema := protowire.AppendBytes(protowire.AppendTag(nil, 2, protowire.BytesType), desc)
					payload := protowire.AppendBytes(protowire.AppendTag(nil, 3, protowire.BytesType), schema)
					out := decodeMessages(t, []*conformpb.DecodeInput{{MessageType: "ranvier.message.v1.StreamInfo", Payload: payload}})[0]
					if out.Failed {
						t.Note("a StreamInfo with a 4 MiB descriptor was refused: %s", out.Error)
						return
					}
					got, err := parseJSON("ranvier.message.v1.StreamInfo", []byte(out.Json))
					if err != nil {
						t.Note("decoded, but the JSON does not parse: %v", err)
						return
					}
					want, _ := wire.Decode("ranvier.message.v1.StreamInfo", payload)
					t.Note("a StreamInfo with a 4 MiB descriptor decoded; descriptor intact: %v", proto.Equal(got, want))
				},
			}
		}),
	}
}

// undeclaredDecoding is a SUT's decoding of a vector whose message carries
// undeclared enum values.
type undeclaredDecoding struct {
	vector *corpus.Vector
	// failed is the SUT's decode error; unparsed, the error parsing its
	// JSON; json, what it answered.
	failed   string
	unparsed error
	json     string
	// want is the vector's message; got the SUT's, with every undeclared
	// enum field set to want's value once its reading was recorded.
	want, got proto.Message
	readings  []enumReading
}

// enumReading is how a decoder read one undeclared enum value.
type enumReading struct {
	field    string
	raw, got protoreflect.EnumNumber
}

// decodeUndeclared asks the SUT to decode each vector's payload and
// records how it read each enum value the vector's message holds
// undeclared.
func decodeUndeclared(t *cases.T, vs []*corpus.Vector) []undeclaredDecoding {
	var ins []*conformpb.DecodeInput
	for _, v := range vs {
		ins = append(ins, &conformpb.DecodeInput{MessageType: v.Message.Type, Payload: v.Frames[0]})
	}
	var out []undeclaredDecoding
	for i, o := range decodeMessages(t, ins) {
		d := undeclaredDecoding{vector: vs[i], json: o.Json, want: wantMessage(vs[i])}
		switch {
		case o.Failed:
			d.failed = o.Error
		default:
			d.got, d.unparsed = parseJSON(vs[i].Message.Type, []byte(o.Json))
			if d.unparsed == nil {
				d.readings = readUndeclared(d.want.ProtoReflect(), d.got.ProtoReflect(), "")
			}
		}
		out = append(out, d)
	}
	return out
}

// readUndeclared walks want and got together and records, for every enum
// field that want holds at a value its enum does not declare, the value
// got holds there; it then sets got's field to want's, so that the rest of
// the two messages can be compared.
func readUndeclared(want, got protoreflect.Message, path string) []enumReading {
	var rs []enumReading
	want.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsList() || fd.IsMap():
		case fd.Kind() == protoreflect.EnumKind && fd.Enum().Values().ByNumber(v.Enum()) == nil:
			rs = append(rs, enumReading{field: path + string(fd.Name()), raw: v.Enum(), got: got.Get(fd).Enum()})
			got.Set(fd, v)
		case fd.Message() != nil && got.Has(fd):
			rs = append(rs, readUndeclared(v.Message(), got.Mutable(fd).Message(), path+string(fd.Name())+".")...)
		}
		return true
	})
	return rs
}
