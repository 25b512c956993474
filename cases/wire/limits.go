package wire

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/conform-suite/conform/cases"
	"github.com/conform-suite/conform/corpus"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/proto/conform/v1/meaning"
	"github.com/conform-suite/conform/ref/wire"
)

// fillByte is the pattern of the described 16 MiB payloads.
var fillByte = []byte{0xa5, 0x5a, 0x01}

// filled returns what a Fill of n bytes of fillByte expands to.
func filled(n int) []byte {
	b := make([]byte, n)
	for i := 0; i < n; i += len(fillByte) {
		copy(b[i:], fillByte)
	}
	return b
}

// limits is ranvier-wire §2: the 16 MiB ceiling.
func limits(k *cases.Kit, vecs *vectors) []cases.Case {
	return []cases.Case{
		k.Must(func() cases.Case {
			v := vecs.Get("prefix-at-ceiling")
			return cases.Case{
				ID:           "wire/2/ceiling-claim-accepted",
				Title:        "A prefix claiming exactly 16,777,216 bytes (01 00 00 00) is legal: the reader waits for the payload",
				Spec:         "ranvier-wire §2",
				Tags:         []string{"boundary"},
				Requirements: []string{"ranvier-wire§1.3#4", "ranvier-wire§2#1", "ranvier-wire§2#4", "reconstructed§ranvier-vectors#5"},
				Run: func(t *cases.T) {
					runReads(t, "the ceiling claim", []*conformpb.ReadInput{input(false, v.Input)}, []readWant{wantRead(v, false)})
				},
			}
		}),
		k.Must(func() cases.Case {
			vs := vecs.List("prefix-above-ceiling", "prefix-max-u32")
			return cases.Case{
				ID:    "wire/2/above-ceiling-refused",
				Title: "A prefix claiming 16,777,217 bytes (01 00 00 01) is an error that reports the claim",
				Spec:  "ranvier-wire §2, §6.1",
				Tags:  []string{"boundary"},
				Requirements: []string{"ranvier-wire§1.2#2", "ranvier-wire§1.3#3", "ranvier-wire§2#1", "ranvier-wire§2#2",
					"ranvier-wire§2#4", "ranvier-wire§6.1#2", "reconstructed§ranvier-vectors#5"},
				Run: func(t *cases.T) {
					var ins []*conformpb.ReadInput
					var wants []readWant
					for _, v := range vs {
						ins = append(ins, input(false, v.Input), input(true, v.Input))
						wants = append(wants, wantRead(v, false), wantRead(v, true))
					}
					// A refused claim needs no payload behind it to be refused.
					ins = append(ins, input(false, []byte{0x80, 0, 0, 0}, []byte{1, 2, 3}))
					wants = append(wants, readWant{end: conformpb.ReadEnd_READ_END_TOO_LARGE, claimed: 0x80000000})
					runReads(t, "a claim above the ceiling", ins, wants)
				},
			}
		}),
		k.Must(func() cases.Case {
			v := vecs.Get("prefix-max-u32")
			return cases.Case{
				ID:           "wire/2/no-allocation-for-a-claim",
				Title:        "A reader does not allocate on the strength of a prefix: a batch of 4 GiB claims is refused promptly",
				Spec:         "ranvier-wire §2",
				Tags:         []string{"resource"},
				Requirements: []string{"ranvier-wire§2#3", "ranvier-wire§6.1#2"},
				Run: func(t *cases.T) {
					// 256 readers each told that 4 GiB is coming: a reader that
					// believed the claim would need a terabyte. A SUT that
					// dies or stalls here is recorded as an error.
					var ins []*conformpb.ReadInput
					var wants []readWant
					for range 256 {
						ins = append(ins, input(false, v.Input))
						wants = append(wants, wantRead(v, false))
					}
					runReads(t, "a 4 GiB claim", ins, wants)
				},
			}
		}),
		k.Should(func() cases.Case {
			return cases.Case{
				ID:           "wire/2/no-allocation-for-a-legal-claim",
				Title:        "A reader holds what has arrived, not what a legal 16 MiB claim announces",
				Spec:         "ranvier-wire §1.3, §2",
				Requirements: []string{"ranvier-wire§1.3#8"},
				Tags:         []string{"resource"},
				Run: func(t *cases.T) {
					// 256 readers each told a 16 MiB payload is coming, with ten
					// bytes of it arrived: 4 GiB if believed, 3.5 KiB if not.
					var ins []*conformpb.ReadInput
					var wants []readWant
					for range 256 {
						ins = append(ins, input(false, ceilingClaim, make([]byte, 10)))
						wants = append(wants, readWant{end: conformpb.ReadEnd_READ_END_WAITING})
					}
					outs := readFrames(t, ins)
					for i, out := range outs {
						if !checkRead(t, "a partial 16 MiB frame", ins[i], out, wants[i]) {
							return
						}
						want := &conformpb.ReadOutput{End: conformpb.ReadEnd_READ_END_WAITING, Buffered: 14}
						if !t.CheckAnswer(fmt.Sprintf("reader %d holds other than the 14 bytes that arrived", i), describe(ins[i]),
							flatInput(ins[i]), want, flat(out), meaning.SHOULD, "buffered") {
							return
						}
					}
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "wire/2/ceiling-payload-read",
				Title:        "A frame whose payload is exactly 16,777,216 bytes is read whole",
				Spec:         "ranvier-wire §2",
				Requirements: []string{"ranvier-wire§2#1", "ranvier-wire§2#4"},
				Tags:         []string{"boundary", "large"},
				Run: func(t *cases.T) {
					in := &conformpb.ReadInput{Chunks: []*conformpb.Blob{
						{Data: ceilingClaim},
						{Fill: &conformpb.Fill{Length: wire.MaxPayload, Pattern: fillByte}},
					}, EndOfStream: true}
					want := readWant{frames: [][]byte{filled(wire.MaxPayload)}, end: conformpb.ReadEnd_READ_END_CLOSED}
					out := readFrames(t, []*conformpb.ReadInput{in})[0]
					checkRead(t, "a 16 MiB frame", in, out, want)
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "wire/2/writer-accepts-ceiling",
				Title:        "A writer frames a payload of exactly 16,777,216 bytes",
				Spec:         "ranvier-wire §2",
				Requirements: []string{"ranvier-wire§2#1", "ranvier-wire§2#4"},
				Tags:         []string{"boundary", "large"},
				Run: func(t *cases.T) {
					in := &conformpb.WriteInput{Payload: &conformpb.Blob{Fill: &conformpb.Fill{Length: wire.MaxPayload, Pattern: fillByte}}}
					out := writeFrames(t, []*conformpb.WriteInput{in})[0]
					want := append(append([]byte(nil), ceilingClaim...), filled(wire.MaxPayload)...)
					checkWritten(t, "writing a 16 MiB payload", in, out, want)
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "wire/2/writer-refuses-above-ceiling",
				Title:        "A writer refuses a payload of 16,777,217 bytes, reports the refusal with the size, and writes nothing",
				Spec:         "ranvier-wire §2, §6.1",
				Requirements: []string{"ranvier-wire§2#4", "ranvier-wire§2#5", "ranvier-wire§2#6", "ranvier-wire§6.1#4", "reconstructed§contradictions#7"},
				Tags:         []string{"boundary", "large"},
				Run: func(t *cases.T) {
					const n = wire.MaxPayload + 1
					ins := []*conformpb.WriteInput{
						{Payload: &conformpb.Blob{Fill: &conformpb.Fill{Length: n, Pattern: fillByte}}},
						{Payload: &conformpb.Blob{Fill: &conformpb.Fill{Length: n, Pattern: fillByte}}, PartialWrites: []uint32{65536}},
					}
					for i, out := range writeFrames(t, ins) {
						what := []string{"the writer", "the send helper"}[i]
						want := &conformpb.WriteOutput{Refused: true, RefusedSize: n}
						t.CheckAnswer(what+" did not refuse the payload above the ceiling with its size, writing nothing",
							describeWrite(ins[i]), ins[i], want, out, meaning.MUST,
							// Nothing written: no bytes, whether the SUT leaves
							// written out or answers an empty Data.
							"refused", "refusedSize", "written.length", "written.bytes", "written.sha256")
					}
				},
			}
		}),
	}
}

func itoa(n uint64) string { return strconv.FormatUint(n, 10) }

// describeWrite writes a writer's input: the payload's size and bytes (or
// fill), and the socket's partial writes.
func describeWrite(in *conformpb.WriteInput) string {
	var s string
	if f := in.GetPayload().GetFill(); f != nil {
		s = fmt.Sprintf("a %d-byte payload of %s repeated", f.GetLength(), corpus.FormatHex(f.GetPattern()))
	} else {
		b := in.GetPayload().GetData()
		s = fmt.Sprintf("a %d-byte payload", len(b))
		if len(b) > 0 {
			s += ": " + meaning.HexAround(b, 0)
		}
	}
	if len(in.GetPartialWrites()) > 0 {
		s += "; a socket accepting at most " + uintsString(in.GetPartialWrites()) + " bytes per call"
	}
	return s
}

func uintsString(ns []uint32) string {
	var parts []string
	for _, n := range ns {
		parts = append(parts, strconv.FormatUint(uint64(n), 10))
	}
	return "[" + strings.Join(parts, ", ") + "] (cycled)"
}
