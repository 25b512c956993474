package doppler

import (
	"fmt"
	"strings"

	"github.com/conform-suite/conform/cases"
	"github.com/conform-suite/conform/corpus"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	dp "github.com/conform-suite/conform/ref/doppler"
)

const (
	pub  = conformpb.DopplerSendRole_DOPPLER_SEND_ROLE_PUB
	push = conformpb.DopplerSendRole_DOPPLER_SEND_ROLE_PUSH
)

// seqMaxPayload is the max_payload of the sequence cases: a CI16 frame of
// 40 bytes or more is chunked, one of 36 or less is not.
const seqMaxPayload = 100

// step is one send of a CI16 frame of n samples on a socket.
func step(socket uint32, role conformpb.DopplerSendRole, n int) *conformpb.DopplerSendStep {
	payload := make([]byte, 4*n)
	for i := range payload {
		payload[i] = byte(i + int(socket)*16)
	}
	return &conformpb.DopplerSendStep{Socket: socket, Role: role, Type: conformpb.DopplerFrameType_DOPPLER_FRAME_TYPE_CI16, Payload: payload}
}

func describeSteps(in *conformpb.DopplerSequenceInput) string {
	var parts []string
	for i, st := range in.Steps {
		parts = append(parts, fmt.Sprintf("step %d: socket %d %s %d bytes", i, st.Socket,
			strings.TrimPrefix(st.Role.String(), "DOPPLER_SEND_ROLE_"), len(st.Payload)))
	}
	return fmt.Sprintf("%s, max_payload %d; %s", orderName(in.Order), in.MaxPayload, strings.Join(parts, "; "))
}

// sentSequences reads the sequence of every message a step put on the wire;
// a refused step reads as "refused CODE".
func sentSequences(out *conformpb.DopplerSequenceOutput) [][]string {
	var all [][]string
	for _, s := range out.Sent {
		var seqs []string
		if s.Refused != nil {
			seqs = append(seqs, "refused "+codeName(s.Refused.Code))
		}
		for _, m := range s.Messages {
			h, err := dp.DecodeHeader(m, dp.LittleEndian)
			if err != nil || dp.Check(m, dp.LittleEndian) != dp.Accepted {
				seqs = append(seqs, "unreadable "+fmt.Sprint(dp.Check(m, dp.LittleEndian)))
				continue
			}
			seqs = append(seqs, fmt.Sprint(h.Sequence))
		}
		all = append(all, seqs)
	}
	return all
}

// judgeSequences sends in and compares the sequence each step's messages
// carry with want (one list per step).
func judgeSequences(t *cases.T, what string, in *conformpb.DopplerSequenceInput, want [][]string) {
	out := sequence(t, []*conformpb.DopplerSequenceInput{in})[0]
	got := sentSequences(out)
	// The header sequence of each message of each step's sent entry.
	type sequences struct {
		Sent [][]string `json:"sent"`
	}
	t.FailCompare(what+" (the sequence in the header of each message a step sent)", describeSteps(in), sequences{want}, sequences{got})
}

func repeat(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}

// sequences is doppler §7: the per-socket sequence.
func sequences(k *cases.Kit, _ *vectors) []cases.Case {
	return []cases.Case{
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "doppler/7/sequence-from-zero",
				Title:        "sequence counts per socket from 0, incremented on every logical frame",
				Spec:         "doppler-streaming §7",
				Requirements: []string{"doppler-streaming§7#1"},
				Run: func(t *cases.T) {
					// A socket keeps its role (a step that turned a PUB socket
					// into a PUSH one would leave the answer open), so PUSH
					// counts on a socket of its own.
					in := &conformpb.DopplerSequenceInput{MaxPayload: seqMaxPayload,
						Steps: []*conformpb.DopplerSendStep{step(1, pub, 2), step(1, pub, 3), step(1, pub, 1), step(2, push, 2), step(2, push, 1)}}
					judgeSequences(t, "a fresh PUB socket's first three frames and a fresh PUSH socket's first two", in, [][]string{{"0"}, {"1"}, {"2"}, {"0"}, {"1"}})
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "doppler/7/chunked-frame-consumes-one-number",
				Title:        "A chunked frame consumes one sequence number, not one per chunk: all its chunks share the logical frame's sequence",
				Spec:         "doppler-streaming §7, §4",
				Requirements: []string{"doppler-streaming§4#4", "doppler-streaming§7#2"},
				Run: func(t *cases.T) {
					// 40 bytes at max_payload 100 is four chunks; 48 is four, 12 is one message.
					in := &conformpb.DopplerSequenceInput{MaxPayload: seqMaxPayload,
						Steps: []*conformpb.DopplerSendStep{step(1, pub, 3), step(1, pub, 10), step(1, pub, 12), step(1, pub, 3)}}
					judgeSequences(t, "small, chunked, chunked and small frames on one socket", in,
						[][]string{{"0"}, repeat("1", 4), repeat("2", 4), {"3"}})
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "doppler/7/sequence-per-socket",
				Title:        "Each socket has its own sequence: two sockets interleaving their frames each count 0, 1, 2",
				Spec:         "doppler-streaming §7",
				Requirements: []string{"doppler-streaming§7#1"},
				Run: func(t *cases.T) {
					in := &conformpb.DopplerSequenceInput{MaxPayload: seqMaxPayload, Steps: []*conformpb.DopplerSendStep{
						step(1, pub, 1), step(2, pub, 1), step(2, pub, 10), step(1, pub, 1), step(2, pub, 1), step(1, pub, 10)}}
					judgeSequences(t, "two sockets interleaved", in,
						[][]string{{"0"}, {"0"}, repeat("1", 4), {"1"}, {"2"}, repeat("2", 4)})
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "doppler/7/push-never-chunks",
				Title:        "A PUSH socket sends a frame that fits as one unchunked message and refuses one that does not with DP_ERR_TOO_LARGE, sending nothing",
				Spec:         "doppler-streaming §7, §4",
				Requirements: []string{"doppler-streaming§4#2", "doppler-streaming§4#3"},
				Run: func(t *cases.T) {
					in := &conformpb.DopplerSequenceInput{MaxPayload: seqMaxPayload,
						Steps: []*conformpb.DopplerSendStep{step(1, push, 9), step(1, push, 10)}}
					out := sequence(t, []*conformpb.DopplerSequenceInput{in})[0]
					want := []string{"1 unchunked message, not refused", "0 messages, refused " + codeName(int32(dp.ErrTooLarge))}
					var got []string
					for _, sent := range out.Sent {
						kind := "unchunked"
						for _, m := range sent.Messages {
							if h, err := dp.DecodeHeader(m, dp.LittleEndian); err == nil && h.Chunked() {
								kind = "chunked"
							}
						}
						switch {
						case sent.Refused != nil:
							got = append(got, fmt.Sprintf("%d messages, refused %s", len(sent.Messages), codeName(sent.Refused.Code)))
						case len(sent.Messages) == 1:
							got = append(got, "1 "+kind+" message, not refused")
						default:
							got = append(got, fmt.Sprintf("%d %s messages, not refused", len(sent.Messages), kind))
						}
					}
					type sends struct {
						Sent []string `json:"sent"`
					}
					t.FailCompare("PUSH of a 36-byte and a 40-byte frame at max_payload 100", describeSteps(in), sends{want}, sends{got})
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "doppler/7/published-frames-reassemble-in-sequence",
				Title:        "What one PUB socket sends reassembles, at a receiver, into its frames in order with sequences 0, 1, 2, …",
				Spec:         "doppler-streaming §7, §4",
				Requirements: []string{"doppler-streaming§7#2"},
				Run: func(t *cases.T) {
					r := t.Rand()
					in := &conformpb.DopplerSequenceInput{MaxPayload: seqMaxPayload}
					for range 12 {
						in.Steps = append(in.Steps, step(1, pub, 1+r.IntN(30)))
					}
					out := sequence(t, []*conformpb.DopplerSequenceInput{in})[0]
					var want, got []string
					rs := &dp.Reassembler{}
					for i, st := range in.Steps {
						want = append(want, fmt.Sprintf("frame %d: %s", i, corpus.FormatHex(st.Payload)))
						for _, m := range out.Sent[i].Messages {
							f, ok, err := rs.Add(m)
							if ok {
								got = append(got, fmt.Sprintf("frame %d: %s", f.Header.Sequence, corpus.FormatHex(f.Payload)))
							}
							if err != nil {
								got = append(got, "refused: "+err.Error())
							}
						}
					}
					type frames struct {
						Frames []string `json:"frames"`
					}
					t.FailCompare("frames a PUB socket sent, reassembled by the reference receiver", describeSteps(in), frames{want}, frames{got})
				},
			}
		}),
	}
}
