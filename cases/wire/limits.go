package wire

import (
	"strconv"
	"strings"

	"github.com/conform-suite/conform/cases"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/ref/wire"
	"github.com/conform-suite/conform/reports"
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
func (s *suite) limits() []cases.Case {
	return []cases.Case{
		must(cases.Case{
			ID:      "wire/2/ceiling-claim-accepted",
			Title:   "A prefix claiming exactly 16,777,216 bytes (01 00 00 00) is legal: the reader waits for the payload",
			Spec:    "ranvier-wire §2",
			Tags:    []string{"boundary"},
			Vectors: ids("prefix-at-ceiling"),
			Run: func(t *cases.T) {
				v := s.vec("prefix-at-ceiling")
				runReads(t, "the ceiling claim", []*conformpb.ReadInput{input(false, v.Input)}, []readWant{wantRead(v, false)})
			},
		}),
		must(cases.Case{
			ID:      "wire/2/above-ceiling-refused",
			Title:   "A prefix claiming 16,777,217 bytes (01 00 00 01) is an error that reports the claim",
			Spec:    "ranvier-wire §2, §6.1",
			Tags:    []string{"boundary"},
			Vectors: ids("prefix-above-ceiling", "prefix-max-u32"),
			Run: func(t *cases.T) {
				var ins []*conformpb.ReadInput
				var wants []readWant
				for _, id := range []string{"prefix-above-ceiling", "prefix-max-u32"} {
					v := s.vec(id)
					ins = append(ins, input(false, v.Input), input(true, v.Input))
					wants = append(wants, wantRead(v, false), wantRead(v, true))
				}
				// A refused claim needs no payload behind it to be refused.
				ins = append(ins, input(false, []byte{0x80, 0, 0, 0}, []byte{1, 2, 3}))
				wants = append(wants, readWant{end: conformpb.ReadEnd_READ_END_TOO_LARGE, claimed: 0x80000000})
				runReads(t, "a claim above the ceiling", ins, wants)
			},
		}),
		must(cases.Case{
			ID:      "wire/2/no-allocation-for-a-claim",
			Title:   "A reader does not allocate on the strength of a prefix: a batch of 4 GiB claims is refused promptly",
			Spec:    "ranvier-wire §2",
			Tags:    []string{"resource"},
			Vectors: ids("prefix-max-u32"),
			Run: func(t *cases.T) {
				// 256 readers each told that 4 GiB is coming: a reader that
				// believed the claim would need a terabyte. A SUT that
				// dies or stalls here is recorded as an error.
				v := s.vec("prefix-max-u32")
				var ins []*conformpb.ReadInput
				var wants []readWant
				for range 256 {
					ins = append(ins, input(false, v.Input))
					wants = append(wants, wantRead(v, false))
				}
				runReads(t, "a 4 GiB claim", ins, wants)
			},
		}),
		should(cases.Case{
			ID:    "wire/2/no-allocation-for-a-legal-claim",
			Title: "A reader holds what has arrived, not what a legal 16 MiB claim announces",
			Spec:  "ranvier-wire §1.3, §2",
			Tags:  []string{"resource"},
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
					if !matchRead(out, wants[i]) {
						checkRead(t, "a partial 16 MiB frame", ins[i], out, wants[i])
						return
					}
					if out.Buffered != 14 {
						t.Failf("reader %d reports %d bytes buffered after 14 arrived", i, out.Buffered)
						return
					}
				}
			},
		}),
		must(cases.Case{
			ID:    "wire/2/ceiling-payload-read",
			Title: "A frame whose payload is exactly 16,777,216 bytes is read whole",
			Spec:  "ranvier-wire §2",
			Tags:  []string{"boundary", "large"},
			Run: func(t *cases.T) {
				in := &conformpb.ReadInput{Chunks: []*conformpb.Blob{
					{Data: ceilingClaim},
					{Fill: &conformpb.Fill{Length: wire.MaxPayload, Pattern: fillByte}},
				}, EndOfStream: true}
				want := readWant{frames: [][]byte{filled(wire.MaxPayload)}, end: conformpb.ReadEnd_READ_END_CLOSED}
				out := readFrames(t, []*conformpb.ReadInput{in})[0]
				checkRead(t, "a 16 MiB frame", in, out, want)
			},
		}),
		must(cases.Case{
			ID:    "wire/2/writer-accepts-ceiling",
			Title: "A writer frames a payload of exactly 16,777,216 bytes",
			Spec:  "ranvier-wire §2",
			Tags:  []string{"boundary", "large"},
			Run: func(t *cases.T) {
				in := &conformpb.WriteInput{Payload: &conformpb.Blob{Fill: &conformpb.Fill{Length: wire.MaxPayload, Pattern: fillByte}}}
				out := writeFrames(t, []*conformpb.WriteInput{in})[0]
				want := append(append([]byte(nil), ceilingClaim...), filled(wire.MaxPayload)...)
				checkWritten(t, "writing a 16 MiB payload", wire.MaxPayload, out, want)
			},
		}),
		must(cases.Case{
			ID:    "wire/2/writer-refuses-above-ceiling",
			Title: "A writer refuses a payload of 16,777,217 bytes, reports the refusal with the size, and writes nothing",
			Spec:  "ranvier-wire §2, §6.1",
			Tags:  []string{"boundary", "large"},
			Run: func(t *cases.T) {
				const n = wire.MaxPayload + 1
				ins := []*conformpb.WriteInput{
					{Payload: &conformpb.Blob{Fill: &conformpb.Fill{Length: n, Pattern: fillByte}}},
					{Payload: &conformpb.Blob{Fill: &conformpb.Fill{Length: n, Pattern: fillByte}}, PartialWrites: []uint32{65536}},
				}
				for i, out := range writeFrames(t, ins) {
					what := []string{"the writer", "the send helper"}[i]
					if !out.Refused {
						t.Fail(reports.Evidence{Message: what + " did not refuse a payload above the ceiling", Input: "16,777,217-byte payload", Expected: "refused", Got: "written: " + showData(out.Written)})
						continue
					}
					if out.RefusedSize != n {
						t.Fail(reports.Evidence{Message: what + " reported the wrong size", Expected: "16777217", Got: itoa(out.RefusedSize)})
					}
					if out.Written.GetLength() != 0 {
						t.Fail(reports.Evidence{Message: what + " refused but wrote bytes", Expected: "nothing written", Got: showData(out.Written)})
					}
				}
			},
		}),
	}
}

func itoa(n uint64) string { return strconv.FormatUint(n, 10) }

func uintsString(ns []uint32) string {
	var parts []string
	for _, n := range ns {
		parts = append(parts, strconv.FormatUint(uint64(n), 10))
	}
	return "[" + strings.Join(parts, ", ") + "] (cycled)"
}
