package wire

import (
	"bytes"
	"encoding/binary"
	"slices"

	"github.com/conform-suite/conform/cases"
	"github.com/conform-suite/conform/corpus"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/proto/conform/v1/meaning"
	"github.com/conform-suite/conform/reports"
)

// framing is ranvier-wire §1: the frame, reading and writing.
func framing(k *cases.Kit, vecs *vectors) []cases.Case {
	return []cases.Case{
		k.Must(func() cases.Case {
			vs := vecs.List("three-frames", "frame-sample", "streaminfo-all-fields")
			return cases.Case{
				ID:           "wire/1.2/reader-prefix-big-endian",
				Title:        "A reader takes the payload length from a four-byte big-endian prefix that counts the payload alone",
				Spec:         "ranvier-wire §1.2",
				Requirements: []string{"ranvier-wire§1.2#1", "ranvier-wire§1.2#2", "ranvier-wire§1.2#3", "ranvier-wire§1.3#5"},
				Run: func(t *cases.T) {
					var ins []*conformpb.ReadInput
					var wants []readWant
					for _, v := range vs {
						ins = append(ins, input(false, v.Input))
						wants = append(wants, wantRead(v, false))
					}
					runReads(t, "the frames of a printed stream", ins, wants)
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "wire/1.2/writer-prefix-big-endian",
				Title:        "A writer emits a four-byte big-endian prefix counting the payload alone, then the payload",
				Spec:         "ranvier-wire §1.2",
				Requirements: []string{"ranvier-wire§1.2#1", "ranvier-wire§1.2#2", "ranvier-wire§1.2#3"},
				Run: func(t *cases.T) {
					sizes := []int{1, 6, 0x0102, 0x010203}
					var ins []*conformpb.WriteInput
					for _, n := range sizes {
						ins = append(ins, &conformpb.WriteInput{Payload: &conformpb.Blob{Data: pattern(n)}})
					}
					for i, out := range writeFrames(t, ins) {
						want := binary.BigEndian.AppendUint32(nil, uint32(sizes[i]))
						want = append(want, pattern(sizes[i])...)
						checkWritten(t, "writing a payload", ins[i], out, want)
					}
				},
			}
		}),
		k.Must(func() cases.Case {
			vs := vecs.List("frame-empty", "zero-length-then-frame", "three-frames")
			return cases.Case{
				ID:           "wire/1.2/zero-length-is-a-frame",
				Title:        "A zero-length payload is a complete frame, not the end of the stream",
				Spec:         "ranvier-wire §1.2",
				Requirements: []string{"ranvier-wire§1.2#4", "ranvier-wire§1.2#5"},
				Run: func(t *cases.T) {
					var ins []*conformpb.ReadInput
					var wants []readWant
					for _, v := range vs {
						ins = append(ins, input(false, v.Input), input(true, v.Input))
						wants = append(wants, wantRead(v, false), wantRead(v, true))
					}
					runReads(t, "a stream holding a zero-length frame", ins, wants)
				},
			}
		}),
		k.Must(func() cases.Case {
			empty := vecs.Get("frame-empty")
			return cases.Case{
				ID:           "wire/1.2/writer-zero-length",
				Title:        "A writer frames an empty payload as the four bytes 00 00 00 00",
				Spec:         "ranvier-wire §1.2, §4.5",
				Requirements: []string{"ranvier-wire§1.2#3", "ranvier-wire§4.5#3", "reconstructed§ranvier-vectors#3"},
				Run: func(t *cases.T) {
					in := &conformpb.WriteInput{Payload: &conformpb.Blob{}}
					out := writeFrames(t, []*conformpb.WriteInput{in})
					checkWritten(t, "writing an empty payload", in, out[0], empty.Input)
				},
			}
		}),
		k.Must(func() cases.Case {
			short := vecs.Get("short-prefix")
			return cases.Case{
				ID:           "wire/1.3/wait-below-four-bytes",
				Title:        "With fewer than four bytes buffered a reader yields nothing and waits",
				Spec:         "ranvier-wire §1.3 step 1",
				Requirements: []string{"ranvier-wire§1.3#2", "ranvier-wire§6.1#1"},
				Run: func(t *cases.T) {
					// Every one-, two- and three-byte start of a prefix,
					// including ones whose bytes would be a huge length if
					// read early.
					var ins []*conformpb.ReadInput
					var wants []readWant
					for _, p := range [][]byte{short.Input, {0x01}, {0xff, 0xff}, {0x01, 0x00, 0x00}, {0x00, 0x00, 0x00}} {
						ins = append(ins, input(false, p))
						wants = append(wants, readWant{end: conformpb.ReadEnd_READ_END_WAITING})
					}
					runReads(t, "a partial prefix", ins, wants)
				},
			}
		}),
		k.Must(func() cases.Case {
			partial, sample, ceiling := vecs.Get("partial-payload"), vecs.Get("frame-sample"), vecs.Get("prefix-at-ceiling")
			return cases.Case{
				ID:           "wire/1.3/wait-below-whole-frame",
				Title:        "With fewer than 4 + len bytes buffered a reader yields nothing and waits",
				Spec:         "ranvier-wire §1.3 step 4",
				Requirements: []string{"ranvier-wire§1.3#1", "ranvier-wire§1.3#4", "ranvier-wire§6.1#3"},
				Run: func(t *cases.T) {
					ins := []*conformpb.ReadInput{input(false, partial.Input), input(false, ceiling.Input)}
					wants := []readWant{wantRead(partial, false), wantRead(ceiling, false)}
					for n := 4; n < len(sample.Input); n++ {
						ins = append(ins, input(false, sample.Input[:n]))
						wants = append(wants, readWant{end: conformpb.ReadEnd_READ_END_WAITING})
					}
					runReads(t, "a prefix and part of its payload", ins, wants)
				},
			}
		}),
		k.Must(func() cases.Case {
			vs := vecs.List(append(slices.Clone(streamVectors), verdictVectors...)...)
			return cases.Case{
				ID:           "wire/1.3/every-split-point",
				Title:        "A reader yields the same frames whichever point a read boundary falls at",
				Spec:         "ranvier-wire §1.3",
				Requirements: []string{"ranvier-wire§1.3#1", "ranvier-wire§1.3#6"},
				Run: func(t *cases.T) {
					var ins []*conformpb.ReadInput
					var wants []readWant
					for _, v := range vs {
						for _, c := range splits(v.Input) {
							ins = append(ins, input(false, c...))
							wants = append(wants, wantRead(v, false))
						}
					}
					runReads(t, "a vector split into two reads", ins, wants)
				},
			}
		}),
		k.Must(func() cases.Case {
			vs := vecs.List(append(slices.Clone(streamVectors), verdictVectors...)...)
			return cases.Case{
				ID:           "wire/1.3/byte-at-a-time",
				Title:        "A reader fed one byte per read yields the same frames as one fed everything at once",
				Spec:         "ranvier-wire §1.3",
				Requirements: []string{"ranvier-wire§1.3#6"},
				Run: func(t *cases.T) {
					var ins []*conformpb.ReadInput
					var wants []readWant
					for _, v := range vs {
						ins = append(ins, input(false, bytewise(v.Input)...), input(true, bytewise(v.Input)...))
						wants = append(wants, wantRead(v, false), wantRead(v, true))
					}
					runReads(t, "a vector one byte per read", ins, wants)
				},
			}
		}),
		k.Must(func() cases.Case {
			v := vecs.Get("three-frames")
			return cases.Case{
				ID:           "wire/1.3/three-frames-in-one-read",
				Title:        "A reader yields every complete frame of a single read before waiting for more",
				Spec:         "ranvier-wire §1.3",
				Requirements: []string{"ranvier-wire§1.3#5", "ranvier-wire§1.3#7"},
				Run: func(t *cases.T) {
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
			}
		}),
		k.Must(func() cases.Case {
			vs := vecs.List(streamVectors...)
			return cases.Case{
				ID:           "wire/1.3/seeded-random-chunkings",
				Title:        "A reader yields the same frames under any chunking (seeded random reads over every stream vector)",
				Spec:         "ranvier-wire §1.3",
				Requirements: []string{"ranvier-wire§1.3#6"},
				Run: func(t *cases.T) {
					var stream []byte
					var want readWant
					for _, v := range vs {
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
			}
		}),
		k.Must(func() cases.Case {
			vs := vecs.List("short-prefix", "partial-payload", "prefix-at-ceiling")
			sample := vecs.Get("frame-sample")
			return cases.Case{
				ID:           "wire/1.3/truncated-tail-not-delivered",
				Title:        "Bytes left buffered when the stream ends are a truncated stream: no frame is delivered from them",
				Spec:         "ranvier-wire §1.3",
				Requirements: []string{"ranvier-wire§1.3#9"},
				Run: func(t *cases.T) {
					var ins []*conformpb.ReadInput
					var wants []readWant
					for _, v := range vs {
						ins = append(ins, input(true, v.Input))
						wants = append(wants, wantRead(v, true))
					}
					// A whole frame followed by every strict prefix of another.
					for n := 1; n < len(sample.Input); n++ {
						ins = append(ins, input(true, sample.Input, sample.Input[:n]))
						wants = append(wants, readWant{frames: [][]byte{sample.Frames[0]}, end: conformpb.ReadEnd_READ_END_TRUNCATED})
					}
					runReads(t, "a stream ending inside a frame", ins, wants)
				},
			}
		}),
		k.Must(func() cases.Case {
			vs := vecs.List(streamVectors...)
			return cases.Case{
				ID:           "wire/1.3/clean-end",
				Title:        "A stream that ends at a frame boundary delivers every frame and is not truncated",
				Spec:         "ranvier-wire §1.3, §4.7",
				Requirements: []string{"ranvier-wire§4.7#3"},
				Run: func(t *cases.T) {
					var ins []*conformpb.ReadInput
					var wants []readWant
					for _, v := range vs {
						ins = append(ins, input(true, v.Input))
						wants = append(wants, wantRead(v, true))
					}
					runReads(t, "a stream ending between frames", ins, wants)
				},
			}
		}),
		k.Should(func() cases.Case {
			frame := vecs.Get("frame-sample").Input
			return cases.Case{
				ID:           "wire/1.3/holds-one-incomplete-frame",
				Title:        "A reader bounds what it holds by what has arrived: after a thousand frames it holds only the incomplete one",
				Spec:         "ranvier-wire §1.3",
				Requirements: []string{"ranvier-wire§1.3#8"},
				Run: func(t *cases.T) {
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
					want := &conformpb.ReadOutput{End: conformpb.ReadEnd_READ_END_WAITING, Buffered: uint64(len(partial))}
					t.CheckAnswer("the reader holds more than the one incomplete frame",
						"1000 × frame-sample, then "+corpus.FormatHex(partial), flatInput(in), want, flat(out), meaning.SHOULD, "buffered")
				},
			}
		}),
		k.Must(func() cases.Case {
			sample := vecs.Get("frame-sample")
			return cases.Case{
				ID:           "wire/1.4/resume-partial-writes",
				Title:        "On a socket that accepts a partial write, a writer resumes from the first unwritten byte",
				Spec:         "ranvier-wire §1.4",
				Requirements: []string{"ranvier-wire§1.4#2"},
				Run: func(t *cases.T) {
					payload, want := sample.Frames[0], sample.Input
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
						t.CheckAnswer("the bytes that reached the socket are not the frame once",
							describeWrite(ins[i]), ins[i], &conformpb.WriteOutput{Written: dataOf(wants[i])}, out, meaning.MUST, "written")
					}
				},
			}
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

// checkWritten records a failure when a writer's answer to in is not the
// frame want, written and not refused.
func checkWritten(t *cases.T, what string, in *conformpb.WriteInput, out *conformpb.WriteOutput, want []byte) {
	t.CheckAnswer(what, describeWrite(in), in, &conformpb.WriteOutput{Written: dataOf(want)}, out, meaning.MUST, "written", "refused")
}
