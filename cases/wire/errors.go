package wire

import (
	"fmt"

	"github.com/conform-suite/conform/cases"
	"github.com/conform-suite/conform/corpus"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
)

// errorHandling is ranvier-wire §6: what happens when something goes wrong.
func errorHandling(k *cases.Kit, vecs *vectors) []cases.Case {
	return []cases.Case{
		k.Must(func() cases.Case {
			vs := vecs.List(streamVectors...)
			return cases.Case{
				ID:           "wire/6.1/not-yet-is-not-wrong",
				Title:        "A reader distinguishes not yet from wrong: every truncation of a valid stream waits, none is an error",
				Spec:         "ranvier-wire §6.1",
				Requirements: []string{"ranvier-wire§6.1#1", "ranvier-wire§6.1#3", "ranvier-wire§6.1#5"},
				Run: func(t *cases.T) {
					// Every cut of all the stream vectors back to back: the
					// frames wholly before the cut, then waiting (or idle at a
					// frame boundary).
					var stream []byte
					type bound struct {
						end   int
						frame []byte
					}
					var bounds []bound
					for _, v := range vs {
						off := len(stream)
						stream = append(stream, v.Input...)
						pos := off
						for _, f := range v.Frames {
							pos += 4 + len(f)
							bounds = append(bounds, bound{pos, f})
						}
					}
					var ins []*conformpb.ReadInput
					var wants []readWant
					for cut := 0; cut <= len(stream); cut++ {
						w := readWant{end: conformpb.ReadEnd_READ_END_IDLE}
						last := 0
						for _, b := range bounds {
							if b.end <= cut {
								w.frames = append(w.frames, b.frame)
								last = b.end
							}
						}
						if last != cut {
							w.end = conformpb.ReadEnd_READ_END_WAITING
						}
						ins = append(ins, input(false, stream[:cut]))
						wants = append(wants, w)
					}
					runReads(t, "a valid stream cut short", ins, wants)
				},
			}
		}),
		k.Must(func() cases.Case {
			vs := vecs.List("too-large-then-valid", "valid-then-too-large")
			more := vecs.Get("frame-sample").Input
			return cases.Case{
				ID:           "wire/6.2/no-resync-after-too-large",
				Title:        "After a TooLarge prefix a reader never resynchronises, even when valid frames follow in later reads",
				Spec:         "ranvier-wire §6.2",
				Requirements: []string{"ranvier-wire§6.2#1"},
				Run: func(t *cases.T) {
					var ins []*conformpb.ReadInput
					var wants []readWant
					for _, v := range vs {
						w := wantRead(v, false)
						ins = append(ins, input(false, v.Input), input(true, bytewise(v.Input)...))
						wants = append(wants, w, w)
						// The valid frames again in a later read.
						ins = append(ins, input(false, v.Input, more, more))
						wants = append(wants, w)
					}
					runReads(t, "valid frames behind a refused prefix", ins, wants)
				},
			}
		}),
		k.Must(func() cases.Case {
			vs := vecs.List("too-large-then-valid", "valid-then-too-large")
			return cases.Case{
				ID:           "wire/6.2/subscriber-closes-on-framing-error",
				Title:        "A data-plane subscriber closes the connection at a framing error and reads nothing after it",
				Spec:         "ranvier-wire §6.2",
				Requirements: []string{"ranvier-wire§6.2#2", "ranvier-streams§3.6a#6"},
				Run:          func(t *cases.T) { receiveVectors(t, vs...) },
			}
		}),
		k.Must(func() cases.Case {
			vs := vecs.List("undecodable-then-sample", "truncated-mid-field")
			return cases.Case{
				ID:    "wire/6.3/undecodable-is-not-a-framing-error",
				Title: "A payload that fails to decode is skipped; the connection stays open and the next frame is read",
				Spec:  "ranvier-wire §6.3, §7.5",
				Requirements: []string{"ranvier-wire§6.3#1", "ranvier-wire§6.3#5", "ranvier-wire§7.5#1",
					"ranvier-streams§3.6a#1"},
				Run: func(t *cases.T) { receiveVectors(t, vs...) },
			}
		}),
		k.Must(func() cases.Case {
			empty, sample := vecs.Get("frame-empty"), vecs.Get("frame-sample")
			return cases.Case{
				ID:           "wire/6.4/empty-frame-skipped",
				Title:        "A Frame with no variant set is not an error: the subscriber skips it and keeps reading",
				Spec:         "ranvier-wire §6.4, §4.5",
				Requirements: []string{"ranvier-wire§6.4#1", "ranvier-wire§6.4#2", "ranvier-streams§3.6a#1"},
				Run: func(t *cases.T) {
					receiveVectors(t, empty)
					in := input(true, append(append([]byte(nil), empty.Input...), sample.Input...))
					out := receiveFrames(t, []*conformpb.ReadInput{in})[0]
					v := &corpus.Vector{ID: "empty frame, then a sample", Frames: []corpus.Hex{empty.Frames[0], sample.Frames[0]}}
					checkReceived(t, v.ID, in, out, &corpus.Receive{Actions: []string{"skipped_no_variant", "delivered"}, Unreadable: 1}, v)
				},
			}
		}),
		k.Must(func() cases.Case {
			vs := vecs.List("empty-to-runtime", "empty-to-node")
			return cases.Case{
				ID:    "wire/6.4/empty-control-messages",
				Title: "An empty ToRuntime or ToNode decodes as a message with no variant, not an error",
				Spec:  "ranvier-wire §6.4",
				Requirements: []string{"ranvier-wire§6.4#1", "ranvier-wire§7.5#2", "reconstructed§contradictions#7",
					"reconstructed§ranvier-fields#12", "reconstructed§ranvier-fields#13"},
				Run: func(t *cases.T) {
					decodeVectors(t, vs...)
					encodeVectors(t, vs...)
				},
			}
		}),
		k.Must(func() cases.Case {
			vs := vecs.List("frame-empty", "unknown-variant", "undecodable-then-sample")
			sample := vecs.Get("frame-sample")
			return cases.Case{
				ID:           "wire/6.4/unreadable-frames-counted",
				Title:        "A subscriber counts every frame it skips — undecodable, empty, or of an unknown variant — per connection",
				Spec:         "ranvier-wire §6.4, §8 item 2; ranvier-streams §3.6a",
				Requirements: []string{"ranvier-streams§3.6a#2", "ranvier-streams§3.6a#3", "reconstructed§contradictions#1"},
				Run: func(t *cases.T) {
					var stream []byte
					var fs []corpus.Hex
					for _, v := range vs {
						stream = append(stream, v.Input...)
						fs = append(fs, v.Frames...)
					}
					want := &corpus.Receive{Actions: []string{"skipped_no_variant", "skipped_no_variant", "skipped_undecodable", "delivered"}, Unreadable: 3}
					ins := []*conformpb.ReadInput{input(true, stream), input(true, bytewise(stream)...)}
					for i, out := range receiveFrames(t, ins) {
						v := &corpus.Vector{ID: fmt.Sprintf("three unreadable frames and a sample (input %d)", i), Frames: fs}
						checkReceived(t, v.ID, ins[i], out, want, v)
					}
					// Counts are per connection: a second connection starts at 0.
					outs := receiveFrames(t, []*conformpb.ReadInput{input(true, sample.Input)})
					if outs[0].Unreadable != 0 {
						t.Failf("a fresh connection carrying one sample reports %d unreadable frames", outs[0].Unreadable)
					}
				},
			}
		}),
	}
}
