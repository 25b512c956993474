package wire

import (
	"bytes"
	"encoding/binary"
	"slices"

	"github.com/conform-suite/conform/cases"
	"github.com/conform-suite/conform/corpus"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/reports"
)

// framing is ranvier-wire §1: the frame, reading and writing.
func (s *suite) framing() []cases.Case {
	return []cases.Case{
		must(cases.Case{
			ID:      "wire/1.2/reader-prefix-big-endian",
			Title:   "A reader takes the payload length from a four-byte big-endian prefix that counts the payload alone",
			Spec:    "ranvier-wire §1.2",
			Vectors: ids("three-frames", "frame-sample", "streaminfo-all-fields"),
			Run: func(t *cases.T) {
				var ins []*conformpb.ReadInput
				var wants []readWant
				for _, id := range []string{"three-frames", "frame-sample", "streaminfo-all-fields"} {
					v := s.vec(id)
					ins = append(ins, input(false, v.Input))
					wants = append(wants, wantRead(v, false))
				}
				runReads(t, "the frames of a printed stream", ins, wants)
			},
		}),
		must(cases.Case{
			ID:    "wire/1.2/writer-prefix-big-endian",
			Title: "A writer emits a four-byte big-endian prefix counting the payload alone, then the payload",
			Spec:  "ranvier-wire §1.2",
			Run: func(t *cases.T) {
				sizes := []int{1, 6, 0x0102, 0x010203}
				var ins []*conformpb.WriteInput
				for _, n := range sizes {
					ins = append(ins, &conformpb.WriteInput{Payload: &conformpb.Blob{Data: pattern(n)}})
				}
				for i, out := range writeFrames(t, ins) {
					want := binary.BigEndian.AppendUint32(nil, uint32(sizes[i]))
					want = append(want, pattern(sizes[i])...)
					checkWritten(t, "writing a payload", sizes[i], out, want)
				}
			},
		}),
		must(cases.Case{
			ID:      "wire/1.2/zero-length-is-a-frame",
			Title:   "A zero-length payload is a complete frame, not the end of the stream",
			Spec:    "ranvier-wire §1.2",
			Vectors: ids("frame-empty", "zero-length-then-frame", "three-frames"),
			Run: func(t *cases.T) {
				var ins []*conformpb.ReadInput
				var wants []readWant
				for _, id := range []string{"frame-empty", "zero-length-then-frame", "three-frames"} {
					v := s.vec(id)
					ins = append(ins, input(false, v.Input), input(true, v.Input))
					wants = append(wants, wantRead(v, false), wantRead(v, true))
				}
				runReads(t, "a stream holding a zero-length frame", ins, wants)
			},
		}),
		must(cases.Case{
			ID:      "wire/1.2/writer-zero-length",
			Title:   "A writer frames an empty payload as the four bytes 00 00 00 00",
			Spec:    "ranvier-wire §1.2, §4.5",
			Vectors: ids("frame-empty"),
			Run: func(t *cases.T) {
				out := writeFrames(t, []*conformpb.WriteInput{{Payload: &conformpb.Blob{}}})
				checkWritten(t, "writing an empty payload", 0, out[0], s.vec("frame-empty").Input)
			},
		}),
		must(cases.Case{
			ID:      "wire/1.3/wait-below-four-bytes",
			Title:   "With fewer than four bytes buffered a reader yields nothing and waits",
			Spec:    "ranvier-wire §1.3 step 1",
			Vectors: ids("short-prefix"),
			Run: func(t *cases.T) {
				// Every one-, two- and three-byte start of a prefix,
				// including ones whose bytes would be a huge length if
				// read early.
				var ins []*conformpb.ReadInput
				var wants []readWant
				for _, p := range [][]byte{s.vec("short-prefix").Input, {0x01}, {0xff, 0xff}, {0x01, 0x00, 0x00}, {0x00, 0x00, 0x00}} {
					ins = append(ins, input(false, p))
					wants = append(wants, readWant{end: conformpb.ReadEnd_READ_END_WAITING})
				}
				runReads(t, "a partial prefix", ins, wants)
			},
		}),
		must(cases.Case{
			ID:      "wire/1.3/wait-below-whole-frame",
			Title:   "With fewer than 4 + len bytes buffered a reader yields nothing and waits",
			Spec:    "ranvier-wire §1.3 step 4",
			Vectors: ids("partial-payload", "frame-sample", "prefix-at-ceiling"),
			Run: func(t *cases.T) {
				v := s.vec("frame-sample")
				ins := []*conformpb.ReadInput{input(false, s.vec("partial-payload").Input), input(false, s.vec("prefix-at-ceiling").Input)}
				wants := []readWant{wantRead(s.vec("partial-payload"), false), wantRead(s.vec("prefix-at-ceiling"), false)}
				for n := 4; n < len(v.Input); n++ {
					ins = append(ins, input(false, v.Input[:n]))
					wants = append(wants, readWant{end: conformpb.ReadEnd_READ_END_WAITING})
				}
				runReads(t, "a prefix and part of its payload", ins, wants)
			},
		}),
		must(cases.Case{
			ID:      "wire/1.3/every-split-point",
			Title:   "A reader yields the same frames whichever point a read boundary falls at",
			Spec:    "ranvier-wire §1.3",
			Vectors: ids(append(slices.Clone(streamVectors), verdictVectors...)...),
			Run: func(t *cases.T) {
				var ins []*conformpb.ReadInput
				var wants []readWant
				for _, id := range append(slices.Clone(streamVectors), verdictVectors...) {
					v := s.vec(id)
					for _, c := range splits(v.Input) {
						ins = append(ins, input(false, c...))
						wants = append(wants, wantRead(v, false))
					}
				}
				runReads(t, "a vector split into two reads", ins, wants)
			},
		}),
		must(cases.Case{
			ID:      "wire/1.3/byte-at-a-time",
			Title:   "A reader fed one byte per read yields the same frames as one fed everything at once",
			Spec:    "ranvier-wire §1.3",
			Vectors: ids(append(slices.Clone(streamVectors), verdictVectors...)...),
			Run: func(t *cases.T) {
				var ins []*conformpb.ReadInput
				var wants []readWant
				for _, id := range append(slices.Clone(streamVectors), verdictVectors...) {
					v := s.vec(id)
					ins = append(ins, input(false, bytewise(v.Input)...), input(true, bytewise(v.Input)...))
					wants = append(wants, wantRead(v, false), wantRead(v, true))
				}
				runReads(t, "a vector one byte per read", ins, wants)
			},
		}),
		must(cases.Case{
			ID:      "wire/1.3/three-frames-in-one-read",
			Title:   "A reader yields every complete frame of a single read before waiting for more",
			Spec:    "ranvier-wire §1.3",
			Vectors: ids("three-frames"),
			Run: func(t *cases.T) {
				v := s.vec("three-frames")
				// The three frames, then the first byte of a fourth: all
				// three must come out of that one read.
				in := input(false, append(bytes.Clone(v.Input), 0x00))
				out := readFrames(t, []*conformpb.ReadInput{in})[0]
				w := wantRead(v, false)
				w.end = conformpb.ReadEnd_READ_END_WAITING
				if !checkRead(t, "three frames and a byte in one read", in, out, w) {
					return
				}
				if len(out.Yields) == 0 || len(out.Yields[0].Frames) != 3 {
					t.Fail(reports.Evidence{Message: "the three frames were not all yielded in response to the read that carried them", Input: describe(in)})
				}
			},
		}),
		must(cases.Case{
			ID:      "wire/1.3/seeded-random-chunkings",
			Title:   "A reader yields the same frames under any chunking (seeded random reads over every stream vector)",
			Spec:    "ranvier-wire §1.3",
			Vectors: ids(streamVectors...),
			Run: func(t *cases.T) {
				var stream []byte
				var want readWant
				for _, id := range streamVectors {
					v := s.vec(id)
					stream = append(stream, v.Input...)
					want.frames = append(want.frames, wantRead(v, false).frames...)
				}
				want.end = conformpb.ReadEnd_READ_END_IDLE
				var ins []*conformpb.ReadInput
				var wants []readWant
				for range 200 {
					ins = append(ins, input(false, randomChunks(t.Rand(), stream)...))
					wants = append(wants, want)
				}
				runReads(t, "every stream vector back to back, randomly chunked", ins, wants)
			},
		}),
		must(cases.Case{
			ID:      "wire/1.3/truncated-tail-not-delivered",
			Title:   "Bytes left buffered when the stream ends are a truncated stream: no frame is delivered from them",
			Spec:    "ranvier-wire §1.3",
			Vectors: ids("short-prefix", "partial-payload", "prefix-at-ceiling", "frame-sample"),
			Run: func(t *cases.T) {
				var ins []*conformpb.ReadInput
				var wants []readWant
				for _, id := range []string{"short-prefix", "partial-payload", "prefix-at-ceiling"} {
					v := s.vec(id)
					ins = append(ins, input(true, v.Input))
					wants = append(wants, wantRead(v, true))
				}
				// A whole frame followed by every strict prefix of another.
				v := s.vec("frame-sample")
				for n := 1; n < len(v.Input); n++ {
					ins = append(ins, input(true, v.Input, v.Input[:n]))
					wants = append(wants, readWant{frames: [][]byte{v.Frames[0]}, end: conformpb.ReadEnd_READ_END_TRUNCATED})
				}
				runReads(t, "a stream ending inside a frame", ins, wants)
			},
		}),
		must(cases.Case{
			ID:      "wire/1.3/clean-end",
			Title:   "A stream that ends at a frame boundary delivers every frame and is not truncated",
			Spec:    "ranvier-wire §1.3, §4.7",
			Vectors: ids(streamVectors...),
			Run: func(t *cases.T) {
				var ins []*conformpb.ReadInput
				var wants []readWant
				for _, id := range streamVectors {
					v := s.vec(id)
					ins = append(ins, input(true, v.Input))
					wants = append(wants, wantRead(v, true))
				}
				runReads(t, "a stream ending between frames", ins, wants)
			},
		}),
		should(cases.Case{
			ID:    "wire/1.3/holds-one-incomplete-frame",
			Title: "A reader bounds what it holds by what has arrived: after a thousand frames it holds only the incomplete one",
			Spec:  "ranvier-wire §1.3",
			Run: func(t *cases.T) {
				frame := s.vec("frame-sample").Input
				var stream []byte
				for range 1000 {
					stream = append(stream, frame...)
				}
				partial := frame[:7]
				in := input(false, stream, partial)
				out := readFrames(t, []*conformpb.ReadInput{in})[0]
				if len(frames(out)) != 1000 {
					t.Failf("expected 1000 frames, got %d", len(frames(out)))
				}
				if out.Buffered != uint64(len(partial)) {
					t.Fail(reports.Evidence{
						Message:  "the reader holds more than the one incomplete frame",
						Input:    "1000 × frame-sample, then " + corpus.FormatHex(partial),
						Expected: "buffered = 7",
						Got:      "buffered = " + itoa(out.Buffered),
					})
				}
			},
		}),
		must(cases.Case{
			ID:    "wire/1.4/resume-partial-writes",
			Title: "On a socket that accepts a partial write, a writer resumes from the first unwritten byte",
			Spec:  "ranvier-wire §1.4",
			Run: func(t *cases.T) {
				payload := s.vec("frame-sample").Frames[0]
				want := s.vec("frame-sample").Input
				big := pattern(70000)
				wantBig := append(binary.BigEndian.AppendUint32(nil, 70000), big...)
				patterns := [][]uint32{{1}, {3}, {2, 0, 5}, {0, 1, 0, 7}, {4096}}
				var ins []*conformpb.WriteInput
				var wants [][]byte
				for _, p := range patterns {
					ins = append(ins, &conformpb.WriteInput{Payload: &conformpb.Blob{Data: payload}, PartialWrites: p})
					wants = append(wants, want)
				}
				ins = append(ins, &conformpb.WriteInput{Payload: &conformpb.Blob{Data: big}, PartialWrites: []uint32{8191, 0, 4093}})
				wants = append(wants, wantBig)
				for i, out := range writeFrames(t, ins) {
					if !dataMatches(out.Written, wants[i]) {
						t.Fail(reports.Evidence{
							Message:  "the bytes that reached the socket are not the frame once",
							Input:    "socket accepting at most " + uintsString(ins[i].PartialWrites) + " bytes per call",
							Expected: showBytes(wants[i]),
							Got:      showData(out.Written),
						})
					}
				}
			},
		}),
	}
}

// pattern returns n bytes of a recognisable, position-dependent pattern.
func pattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + i>>8)
	}
	return b
}

// checkWritten records a failure when a writer's output is not want.
func checkWritten(t *cases.T, what string, size int, out *conformpb.WriteOutput, want []byte) {
	if out.Refused {
		t.Fail(reports.Evidence{Message: what + ": the writer refused a legal payload", Input: itoa(uint64(size)) + "-byte payload", Expected: showBytes(want), Got: "refused, size " + itoa(out.RefusedSize)})
		return
	}
	if !dataMatches(out.Written, want) {
		t.Fail(reports.Evidence{Message: what + ": the written bytes are wrong", Input: itoa(uint64(size)) + "-byte payload", Expected: showBytes(want), Got: showData(out.Written)})
	}
}
