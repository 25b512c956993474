package wire

import (
	"fmt"

	"github.com/conform-suite/conform/cases"
	"github.com/conform-suite/conform/corpus"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
)

// errors is ranvier-wire §6: what happens when something goes wrong.
func (s *suite) errors() []cases.Case {
	return []cases.Case{
		must(cases.Case{
			ID:      "wire/6.1/not-yet-is-not-wrong",
			Title:   "A reader distinguishes not yet from wrong: every truncation of a valid stream waits, none is an error",
			Spec:    "ranvier-wire §6.1",
			Vectors: ids(streamVectors...),
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
				for _, id := range streamVectors {
					v := s.vec(id)
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
		}),
		must(cases.Case{
			ID:      "wire/6.2/no-resync-after-too-large",
			Title:   "After a TooLarge prefix a reader never resynchronises, even when valid frames follow in later reads",
			Spec:    "ranvier-wire §6.2",
			Vectors: ids("too-large-then-valid", "valid-then-too-large"),
			Run: func(t *cases.T) {
				var ins []*conformpb.ReadInput
				var wants []readWant
				for _, id := range []string{"too-large-then-valid", "valid-then-too-large"} {
					v := s.vec(id)
					w := wantRead(v, false)
					ins = append(ins, input(false, v.Input), input(true, bytewise(v.Input)...))
					wants = append(wants, w, w)
					// The valid frames again in a later read.
					more := s.vec("frame-sample").Input
					ins = append(ins, input(false, v.Input, more, more))
					wants = append(wants, w)
				}
				runReads(t, "valid frames behind a refused prefix", ins, wants)
			},
		}),
		must(cases.Case{
			ID:      "wire/6.2/subscriber-closes-on-framing-error",
			Title:   "A data-plane subscriber closes the connection at a framing error and reads nothing after it",
			Spec:    "ranvier-wire §6.2",
			Vectors: ids("too-large-then-valid", "valid-then-too-large"),
			Run: func(t *cases.T) {
				s.receiveVectors(t, "too-large-then-valid", "valid-then-too-large")
			},
		}),
		must(cases.Case{
			ID:      "wire/6.3/undecodable-is-not-a-framing-error",
			Title:   "A payload that fails to decode is skipped; the connection stays open and the next frame is read",
			Spec:    "ranvier-wire §6.3, §7.5",
			Vectors: ids("undecodable-then-sample", "truncated-mid-field"),
			Run: func(t *cases.T) {
				s.receiveVectors(t, "undecodable-then-sample", "truncated-mid-field")
			},
		}),
		must(cases.Case{
			ID:      "wire/6.4/empty-frame-skipped",
			Title:   "A Frame with no variant set is not an error: the subscriber skips it and keeps reading",
			Spec:    "ranvier-wire §6.4, §4.5",
			Vectors: ids("frame-empty", "frame-sample"),
			Run: func(t *cases.T) {
				s.receiveVectors(t, "frame-empty")
				empty, sample := s.vec("frame-empty"), s.vec("frame-sample")
				in := input(true, append(append([]byte(nil), empty.Input...), sample.Input...))
				out := receiveFrames(t, []*conformpb.ReadInput{in})[0]
				v := &corpus.Vector{ID: "empty frame, then a sample", Frames: []corpus.Hex{empty.Frames[0], sample.Frames[0]}}
				checkReceived(t, v.ID, in, out, &corpus.Receive{Actions: []string{"skipped_no_variant", "delivered"}, Unreadable: 1}, v)
			},
		}),
		must(cases.Case{
			ID:      "wire/6.4/empty-control-messages",
			Title:   "An empty ToRuntime or ToNode decodes as a message with no variant, not an error",
			Spec:    "ranvier-wire §6.4",
			Vectors: ids("empty-to-runtime", "empty-to-node"),
			Run: func(t *cases.T) {
				s.decodeVectors(t, "empty-to-runtime", "empty-to-node")
				s.encodeVectors(t, "empty-to-runtime", "empty-to-node")
			},
		}),
		must(cases.Case{
			ID:      "wire/6.4/unreadable-frames-counted",
			Title:   "A subscriber counts every frame it skips — undecodable, empty, or of an unknown variant — per connection",
			Spec:    "ranvier-wire §6.4, §8 item 2; ranvier-streams §3.6a; RECONSTRUCTED §4",
			Tags:    []string{"reconstructed"},
			Vectors: ids("frame-empty", "unknown-variant", "undecodable-then-sample"),
			Run: func(t *cases.T) {
				var stream []byte
				var fs []corpus.Hex
				for _, id := range []string{"frame-empty", "unknown-variant", "undecodable-then-sample"} {
					v := s.vec(id)
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
				outs := receiveFrames(t, []*conformpb.ReadInput{input(true, s.vec("frame-sample").Input)})
				if outs[0].Unreadable != 0 {
					t.Failf("a fresh connection carrying one sample reports %d unreadable frames", outs[0].Unreadable)
				}
			},
		}),
	}
}
