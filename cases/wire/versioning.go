package wire

import (
	"bytes"

	"github.com/conform-suite/conform/cases"
	"github.com/conform-suite/conform/corpus"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/ref/wire"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// versioning is ranvier-wire §7 (unknown fields, variants and enum values,
// truncated payloads) and the open questions of §8, recorded as info.
func (s *suite) versioning() []cases.Case {
	return []cases.Case{
		must(cases.Case{
			ID:      "wire/7.2/unknown-fields-skipped",
			Title:   "A decoder accepts field numbers it does not know and decodes the fields it does know",
			Spec:    "ranvier-wire §7.2",
			Vectors: ids("sample-unknown-field-9", "streaminfo-unknown-field", "frame-unknown-fields"),
			Run: func(t *cases.T) {
				s.decodeVectors(t, "sample-unknown-field-9", "streaminfo-unknown-field", "frame-unknown-fields")
			},
		}),
		must(cases.Case{
			ID:      "wire/7.2/subscriber-delivers-despite-unknown-fields",
			Title:   "A subscriber delivers a Frame{sample} carrying unknown fields, with its known fields intact",
			Spec:    "ranvier-wire §7.2",
			Vectors: ids("frame-unknown-fields"),
			Run:     func(t *cases.T) { s.receiveVectors(t, "frame-unknown-fields") },
		}),
		must(cases.Case{
			ID:      "wire/7.3/unknown-variant-is-no-variant",
			Title:   "A Frame, ToRuntime or ToNode carrying an unknown variant number decodes with no variant set",
			Spec:    "ranvier-wire §7.3",
			Vectors: ids("unknown-variant", "to-node-unknown-variant", "to-runtime-unknown-variant"),
			Run: func(t *cases.T) {
				s.decodeVectors(t, "unknown-variant", "to-node-unknown-variant", "to-runtime-unknown-variant")
			},
		}),
		must(cases.Case{
			ID:      "wire/7.3/subscriber-skips-unknown-variant",
			Title:   "A subscriber does not fail on a Frame of an unknown variant: it skips it and keeps the connection",
			Spec:    "ranvier-wire §7.3, §6.4",
			Vectors: ids("unknown-variant"),
			Run:     func(t *cases.T) { s.receiveVectors(t, "unknown-variant") },
		}),
		must(cases.Case{
			ID:      "wire/7.3/known-variant-beside-unknown",
			Title:   "A known variant in the same payload as an unknown one still arrives",
			Spec:    "ranvier-wire §7.3",
			Vectors: ids("known-beside-unknown-variant"),
			Run: func(t *cases.T) {
				s.decodeVectors(t, "known-beside-unknown-variant")
				s.receiveVectors(t, "known-beside-unknown-variant")
			},
		}),
		must(cases.Case{
			ID:      "wire/7.4/undeclared-enum-kept",
			Title:   "A decoder accepts an undeclared enum value and keeps it as its integer",
			Spec:    "ranvier-wire §7.4",
			Vectors: ids("refuse-undeclared-reason", "transport-undeclared-action", "streaminfo-undeclared-enums"),
			Run: func(t *cases.T) {
				s.decodeVectors(t, "refuse-undeclared-reason", "transport-undeclared-action", "streaminfo-undeclared-enums")
			},
		}),
		must(cases.Case{
			ID:      "wire/7.5/truncated-payload-fails-to-decode",
			Title:   "A payload that ends mid-field is a decode failure, reported as one",
			Spec:    "ranvier-wire §7.5",
			Vectors: ids("truncated-mid-field", "undecodable-then-sample"),
			Run: func(t *cases.T) {
				s.decodeVectors(t, "truncated-mid-field")
				// The first frame of undecodable-then-sample alone.
				v := s.vec("undecodable-then-sample")
				bad := &corpus.Vector{ID: v.ID + " (first frame)", Frames: v.Frames[:1], Message: v.Message}
				out := decodeMessages(t, []*conformpb.DecodeInput{{MessageType: bad.Message.Type, Payload: bad.Frames[0]}})[0]
				if !out.Failed {
					t.Failf("%s: the malformed payload %s decoded as %s", bad.ID, corpus.FormatHex(bad.Frames[0]), out.Json)
				}
			},
		}),
		info(cases.Case{
			ID:      "wire/8/unknown-fields-on-reencode",
			Title:   "Whether fields a decoder did not know survive a decode and re-encode is open: what the SUT does is recorded",
			Spec:    "ranvier-wire §8 item 3, §7.2",
			Vectors: ids("sample-unknown-field-9", "frame-unknown-fields"),
			Run: func(t *cases.T) {
				names := []string{"sample-unknown-field-9", "frame-unknown-fields"}
				var ins []*conformpb.DecodeInput
				for _, n := range names {
					v := s.vec(n)
					ins = append(ins, &conformpb.DecodeInput{MessageType: v.Message.Type, Payload: v.Frames[0], Reencode: true})
				}
				for i, out := range decodeMessages(t, ins) {
					switch {
					case out.Failed:
						t.Note("%s: the decode failed: %s", names[i], out.Error)
					case out.Reencoded == nil:
						t.Note("%s: the SUT does not report a re-encoding", names[i])
					case bytes.Equal(out.Reencoded, ins[i].Payload):
						t.Note("%s: re-encoded byte for byte, unknown fields kept", names[i])
					default:
						t.Note("%s: re-encoded as %s (input %s)", names[i], corpus.FormatHex(out.Reencoded), corpus.FormatHex(ins[i].Payload))
					}
				}
			},
		}),
		info(cases.Case{
			ID:      "wire/8/two-variants-in-one-frame",
			Title:   "A Frame carrying both an announce and a sample: the receiver's choice is not specified and is recorded",
			Spec:    "ranvier-wire §8 item 1",
			Vectors: ids("two-variants"),
			Run: func(t *cases.T) {
				v := s.vec("two-variants")
				out := decodeMessages(t, []*conformpb.DecodeInput{{MessageType: v.Message.Type, Payload: v.Frames[0]}})[0]
				if out.Failed {
					t.Note("the SUT refused the payload: %s", out.Error)
					return
				}
				t.Note("the SUT decoded it as %s", out.Json)
			},
		}),
		info(cases.Case{
			ID:    "wire/8/large-descriptor",
			Title: "An announcement whose descriptor approaches the ceiling: no bound is specified, so what the SUT does is recorded",
			Spec:  "ranvier-wire §8 item 4",
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
		}),
	}
}
