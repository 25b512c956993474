package streams

import (
	"fmt"
	"slices"
	"strings"

	"github.com/conform-suite/conform/cases"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/proto/conform/v1/meaning"
	"github.com/conform-suite/conform/reports"
	"github.com/conform-suite/conform/reports/evidence"
)

// Steps of a publish script. A stream is named by its handle: the index of
// the open or adopt step that created it.
func openStep(name, domain string) *conformpb.PublishStep {
	return &conformpb.PublishStep{Step: &conformpb.PublishStep_Open{Open: &conformpb.OpenStream{Name: name, SourceClockDomain: domain}}}
}

func adoptStep(name string) *conformpb.PublishStep {
	return &conformpb.PublishStep{Step: &conformpb.PublishStep_Adopt{Adopt: &conformpb.AdoptStream{Name: name}}}
}

func publishStep(h uint32, sourceNs uint64) *conformpb.PublishStep {
	return &conformpb.PublishStep{Step: &conformpb.PublishStep_Publish{Publish: &conformpb.PublishSample{Stream: h, SourceTimestampNs: sourceNs, Values: []byte{0x41}}}}
}

func republishStep(h uint32, recorded *conformpb.Arrival) *conformpb.PublishStep {
	return &conformpb.PublishStep{Step: &conformpb.PublishStep_Republish{Republish: &conformpb.RepublishSample{Stream: h, Sample: recorded}}}
}

func closeStep(h uint32) *conformpb.PublishStep {
	return &conformpb.PublishStep{Step: &conformpb.PublishStep_Close{Close: h}}
}

// describeSteps prints a publish script; handles are numbered by the steps
// that create them.
func describeSteps(steps []*conformpb.PublishStep) string {
	var parts []string
	handle := 0
	for _, st := range steps {
		switch st := st.Step.(type) {
		case *conformpb.PublishStep_Open:
			parts = append(parts, fmt.Sprintf("open #%d %q (clock domain %q)", handle, st.Open.Name, st.Open.SourceClockDomain))
			handle++
		case *conformpb.PublishStep_Adopt:
			parts = append(parts, fmt.Sprintf("adopt #%d %q", handle, st.Adopt.Name))
			handle++
		case *conformpb.PublishStep_Publish:
			parts = append(parts, fmt.Sprintf("publish #%d (source %d)", st.Publish.Stream, st.Publish.SourceTimestampNs))
		case *conformpb.PublishStep_Republish:
			a := st.Republish.Sample
			parts = append(parts, fmt.Sprintf("republish #%d {ref %d, seq %d, mono %d, source %d}", st.Republish.Stream, a.StreamRef, a.Sequence, a.MonotonicTimestampNs, a.SourceTimestampNs))
		case *conformpb.PublishStep_Close:
			parts = append(parts, fmt.Sprintf("close #%d", st.Close))
		}
	}
	if len(parts) > 24 {
		parts = append(parts[:20], fmt.Sprintf("… %d more …", len(parts)-22), parts[len(parts)-2], parts[len(parts)-1])
	}
	return strings.Join(parts, "; ")
}

// runScript runs one publish script on a fresh runtime of the SUT's. Every
// step that creates a stream or publishes must be carried out: a refusal is
// recorded and reported as false.
func runScript(t *cases.T, steps ...*conformpb.PublishStep) (*conformpb.PublishOutput, bool) {
	out := publish(t, []*conformpb.PublishInput{{Steps: steps}})[0]
	ok := true
	for i, ev := range out.Events {
		if ev.Refused {
			t.Fail(reports.Evidence{Message: fmt.Sprintf("step %d was refused", i), Input: describeSteps(steps),
				Expected: "carried out", Got: "refused: " + ev.Refusal,
				Diff: evidence.Format(evidence.DiffAt(fmt.Sprintf("events[%d].refused", i), false, true))})
			ok = false
		}
	}
	return out, ok
}

// samplesOf returns the samples the script's publish and republish steps
// produced, per handle.
func samplesOf(steps []*conformpb.PublishStep, out *conformpb.PublishOutput) map[uint32][]*conformpb.Arrival {
	m := map[uint32][]*conformpb.Arrival{}
	for i, st := range steps {
		var h uint32
		switch st := st.Step.(type) {
		case *conformpb.PublishStep_Publish:
			h = st.Publish.Stream
		case *conformpb.PublishStep_Republish:
			h = st.Republish.Stream
		default:
			continue
		}
		m[h] = append(m[h], out.Events[i].GetSample())
	}
	return m
}

// seqList is the sequences of a stream's samples, as the evidence names
// them.
type seqList struct {
	Sequence []uint64 `json:"sequence"`
}

func sequences(as []*conformpb.Arrival) []uint64 {
	out := []uint64{}
	for _, a := range as {
		out = append(out, a.GetSequence())
	}
	return out
}

// recording is §2.5's example: a recording numbered 1, 2, 3, 7, made under
// another runtime's stream_ref 42, with both timestamps set.
func recording() []*conformpb.Arrival {
	var out []*conformpb.Arrival
	for _, seq := range []uint64{1, 2, 3, 7} {
		out = append(out, &conformpb.Arrival{StreamRef: 42, Sequence: seq, MonotonicTimestampNs: 1_000_000 + seq*1000 + 7, SourceTimestampNs: 5_000_000_000 + seq*333})
	}
	return out
}

// replay adopts a stream and republishes the recording on it, after a
// produced stream of the same name has published twice.
func replay() []*conformpb.PublishStep {
	steps := []*conformpb.PublishStep{openStep("gaze", ""), adoptStep("gaze"), publishStep(0, 0), publishStep(0, 0)}
	for _, a := range recording() {
		steps = append(steps, republishStep(1, a))
	}
	return steps
}

// publishers is ranvier-streams §2, §4.1, §4.2 and §5.1: the publisher side.
func publishers(k *cases.Kit, _ *vectors) []cases.Case {
	return []cases.Case{
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "streams/2.1/first-sequence-is-one",
				Title:        "The first sample of every stream carries sequence 1",
				Spec:         "ranvier-streams §2.1",
				Requirements: []string{"ranvier-streams§2.1#1", "ranvier-streams§2.1#3", "ranvier-wire§4.3#9"},
				Run: func(t *cases.T) {
					steps := []*conformpb.PublishStep{openStep("gaze", ""), openStep("gaze", ""), openStep("pupil", ""),
						publishStep(2, 0), publishStep(0, 0), publishStep(1, 0)}
					out, _ := runScript(t, steps...)
					got := samplesOf(steps, out)
					for h := uint32(0); h < 3; h++ {
						t.FailCompare(fmt.Sprintf("the sequence of the first sample of stream #%d", h), describeSteps(steps),
							seqList{[]uint64{1}}, seqList{sequences(got[h])})
					}
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "streams/2.1/sequence-steps-by-one",
				Title:        "Each published sample's sequence is exactly one more than the previous one of its stream",
				Spec:         "ranvier-streams §2.1",
				Requirements: []string{"ranvier-streams§2.1#2"},
				Run: func(t *cases.T) {
					steps := []*conformpb.PublishStep{openStep("gaze", "")}
					var want []uint64
					for seq := uint64(1); seq <= 300; seq++ {
						steps = append(steps, publishStep(0, 0))
						want = append(want, seq)
					}
					out, _ := runScript(t, steps...)
					t.FailCompare("the sequences of 300 samples published on one stream", describeSteps(steps),
						seqList{want}, seqList{sequences(samplesOf(steps, out)[0])})
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "streams/2.2/each-stream-counts-from-one",
				Title:        "Two streams under one name each have their own counter, from 1, and their own stream_ref",
				Spec:         "ranvier-streams §2.2, §2.4",
				Requirements: []string{"ranvier-streams§1#1", "ranvier-streams§2.2#1", "ranvier-wire§4.3#10", "ranvier-wire§4.3#11"},
				Run: func(t *cases.T) {
					steps := []*conformpb.PublishStep{openStep("trial.events", ""), openStep("trial.events", "")}
					for range 3 {
						steps = append(steps, publishStep(0, 0), publishStep(1, 0))
					}
					out, _ := runScript(t, steps...)
					got := samplesOf(steps, out)
					for h := uint32(0); h < 2; h++ {
						t.FailCompare(fmt.Sprintf("the sequences of stream #%d of two publishing alternately under one name", h),
							describeSteps(steps), seqList{[]uint64{1, 2, 3}}, seqList{sequences(got[h])})
					}
					if a, b := out.Events[0].StreamRef, out.Events[1].StreamRef; a == b {
						t.Fail(reports.Evidence{Message: "two streams under one name share a stream_ref", Input: describeSteps(steps),
							Expected: "events[0].streamRef and events[1].streamRef distinct", Got: fmt.Sprintf("events[0].streamRef %d, events[1].streamRef %d", a, b),
							Diff: evidence.Format(evidence.DiffAt("events[1].streamRef", fmt.Sprintf("not %d", a), b))})
					}
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "streams/2.5/republish-passes-sequence-and-timestamps",
				Title:        "A republishing stream passes each sample's sequence and both timestamps through untouched",
				Spec:         "ranvier-streams §2.5, §4.1, §4.2",
				Requirements: []string{"ranvier-streams§2.5#1", "ranvier-streams§4.1#8", "ranvier-wire§4.3#12", "ranvier-wire§4.3#15"},
				Run: func(t *cases.T) {
					steps := replay()
					out, _ := runScript(t, steps...)
					got := samplesOf(steps, out)[1]
					// The samples' sequence and timestamps, as conform.v1 names them.
					type stamps struct {
						Sequence             uint64 `json:"sequence"`
						MonotonicTimestampNs uint64 `json:"monotonicTimestampNs"`
						SourceTimestampNs    uint64 `json:"sourceTimestampNs"`
					}
					var want, have []stamps
					for i, rec := range recording() {
						want = append(want, stamps{rec.Sequence, rec.MonotonicTimestampNs, rec.SourceTimestampNs})
						g := got[i]
						have = append(have, stamps{g.GetSequence(), g.GetMonotonicTimestampNs(), g.GetSourceTimestampNs()})
					}
					t.FailCompare("a recording numbered 1, 2, 3, 7, republished: the samples of its events", describeSteps(steps), want, have)
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "streams/2.5/republish-overwrites-stream-ref",
				Title:        "A republishing stream overwrites stream_ref, and only stream_ref, with the reference this runtime allocated to it",
				Spec:         "ranvier-streams §2.5",
				Requirements: []string{"ranvier-streams§2.5#2"},
				Run: func(t *cases.T) {
					steps := replay()
					out, _ := runScript(t, steps...)
					ref := out.Events[1].StreamRef
					for i, g := range samplesOf(steps, out)[1] {
						if g.GetStreamRef() != ref {
							t.Fail(reports.Evidence{Message: fmt.Sprintf("republished sample %d, recorded under stream_ref 42", i+1), Input: describeSteps(steps),
								Expected: fmt.Sprintf("sample.streamRef %d, allocated by adopt (events[1].streamRef)", ref), Got: fmt.Sprintf("sample.streamRef %d", g.GetStreamRef()),
								Diff: evidence.Format(evidence.DiffAt(fmt.Sprintf("events[%d].sample.streamRef", 4+i), ref, g.GetStreamRef()))})
						}
					}
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "streams/2.5/adopted-stream-has-own-connection",
				Title:        "An adopted stream gets a connection identifier of its own, distinct from local publishing and from every other adopted stream",
				Spec:         "ranvier-streams §2.5",
				Requirements: []string{"ranvier-streams§1#4", "ranvier-streams§2.5#3"},
				Run: func(t *cases.T) {
					steps := []*conformpb.PublishStep{openStep("gaze", ""), adoptStep("gaze"), adoptStep("gaze"), openStep("pupil", "")}
					out, _ := runScript(t, steps...)
					local, a1, a2, local2 := out.Events[0].Connection, out.Events[1].Connection, out.Events[2].Connection, out.Events[3].Connection
					if a1 == local || a2 == local || a1 == a2 || a1 == local2 || a2 == local2 {
						t.Fail(reports.Evidence{Message: "connection identifiers of produced and adopted streams", Input: describeSteps(steps),
							Expected: "each adopted stream's connection distinct from the produced streams' and from the other's",
							Got:      fmt.Sprintf("events[].connection: produced %d and %d, adopted %d and %d", local, local2, a1, a2),
							Diff:     evidence.Format(evidence.DiffAt("events[1..2].connection (adopted)", fmt.Sprintf("distinct from each other and from %d and %d", local, local2), fmt.Sprintf("%d and %d", a1, a2)))})
					}
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "streams/2.5/sent-is-not-last-sequence",
				Title:        "Republishing 1, 2, 3, 7 is four samples sent and a last sequence of 7; a produced stream's two figures coincide",
				Spec:         "ranvier-streams §2.5",
				Requirements: []string{"ranvier-streams§2.5#4"},
				Run: func(t *cases.T) {
					steps := replay()
					out, _ := runScript(t, steps...)
					if len(out.Streams) != 2 {
						t.Protocolf("publish: 2 streams created, %d reported", len(out.Streams))
					}
					type figures struct {
						Sent         uint64 `json:"sent"`
						LastSequence uint64 `json:"lastSequence"`
					}
					type streams struct {
						Streams []figures `json:"streams"`
					}
					want := streams{[]figures{{2, 2}, {4, 7}}}
					got := streams{[]figures{{out.Streams[0].Sent, out.Streams[0].LastSequence}, {out.Streams[1].Sent, out.Streams[1].LastSequence}}}
					t.FailCompare("samples sent and last sequence, produced stream then adopted", describeSteps(steps), want, got)
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "streams/6.1/empty-name-refused",
				Title:        "A stream cannot be opened or adopted with an empty name: the runtime refuses it",
				Spec:         "ranvier-streams §6.1; ranvier-wire §4.4",
				Requirements: []string{"ranvier-streams§6.1#1", "ranvier-wire§4.4#14"},
				Run: func(t *cases.T) {
					// Each declaration alone on a fresh runtime, so that the
					// verdict needs no later step naming its handle.
					scripts := [][]*conformpb.PublishStep{{openStep("", "")}, {openStep("", "device.A1-0042")}, {adoptStep("")}}
					var ins []*conformpb.PublishInput
					for _, sc := range scripts {
						ins = append(ins, &conformpb.PublishInput{Steps: sc})
					}
					for i, out := range publish(t, ins) {
						if ev := out.Events[0]; !ev.Refused {
							t.Fail(reports.Evidence{Message: "a stream with an empty name was accepted", Input: describeSteps(scripts[i]),
								Expected: "events[0].refused true", Got: fmt.Sprintf("events[0]: %s", meaning.Render(ev)),
								Diff: evidence.Format(evidence.DiffAt("events[0].refused", true, ev.Refused))})
						}
					}
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "streams/2.6/refs-allocated-from-one",
				Title:        "A runtime allocates stream_ref from 1, never 0",
				Spec:         "ranvier-streams §2.6",
				Requirements: []string{"ranvier-streams§2.6#1", "ranvier-streams§2.6#3", "ranvier-wire§4.3#17", "ranvier-wire§4.4#15"},
				Run: func(t *cases.T) {
					scripts := [][]*conformpb.PublishStep{
						{openStep("gaze", ""), openStep("pupil", "")},
						{adoptStep("gaze"), openStep("gaze", "")},
					}
					var ins []*conformpb.PublishInput
					for _, sc := range scripts {
						ins = append(ins, &conformpb.PublishInput{Steps: sc})
					}
					for i, out := range publish(t, ins) {
						if out.Events[0].Refused || out.Events[0].StreamRef != 1 || out.Events[1].StreamRef == 0 {
							t.Fail(reports.Evidence{Message: "the references a fresh runtime allocates", Input: describeSteps(scripts[i]),
								Expected: "events[0].streamRef 1, events[1].streamRef not 0", Got: fmt.Sprintf("events[0]: %s, events[1]: %s", meaning.Render(out.Events[0]), meaning.Render(out.Events[1])),
								Diff: evidence.Format(append(evidence.DiffAt("events[0].streamRef", uint32(1), out.Events[0].StreamRef),
									evidence.DiffAt("events[1].streamRef", "not 0", fmt.Sprint(out.Events[1].StreamRef))...))})
						}
					}
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "streams/2.6/refs-never-reused",
				Title:        "A runtime never reuses a stream_ref, including after the stream that held it is dropped",
				Spec:         "ranvier-streams §2.6",
				Requirements: []string{"ranvier-streams§2.6#2", "ranvier-streams§2.6#3"},
				Run: func(t *cases.T) {
					steps := []*conformpb.PublishStep{openStep("gaze", ""), openStep("gaze", ""), closeStep(0), openStep("gaze", ""),
						adoptStep("gaze"), closeStep(3), closeStep(2), openStep("gaze", ""), adoptStep("pupil"), closeStep(1), openStep("gaze", "")}
					out, _ := runScript(t, steps...)
					seen := map[uint32]int{}
					var refs []uint32
					for i, st := range steps {
						if st.GetOpen() == nil && st.GetAdopt() == nil {
							continue
						}
						ref := out.Events[i].StreamRef
						refs = append(refs, ref)
						if _, dup := seen[ref]; dup || ref == 0 {
							t.Fail(reports.Evidence{Message: fmt.Sprintf("step %d allocated a reference already used or 0", i), Input: describeSteps(steps),
								Expected: "every events[].streamRef of an open or adopt distinct and non-zero", Got: fmt.Sprintf("streamRef %v", refs),
								Diff: evidence.Format(evidence.DiffAt(fmt.Sprintf("events[%d].streamRef", i), "a reference not used before, not 0", ref))})
						}
						seen[ref] = i
					}
				},
			}
		}),
		k.May(func() cases.Case {
			return cases.Case{
				ID:           "streams/2.6/allocation-scheme",
				Title:        "How references are allocated between produced and adopted streams (Rust: one counter for both)",
				Spec:         "ranvier-streams §2.6",
				Requirements: []string{"ranvier-streams§2.6#4"},
				Run: func(t *cases.T) {
					steps := []*conformpb.PublishStep{openStep("gaze", ""), adoptStep("gaze"), openStep("gaze", ""), adoptStep("pupil")}
					out, _ := runScript(t, steps...)
					var refs []uint32
					for _, ev := range out.Events {
						refs = append(refs, ev.StreamRef)
					}
					if slices.Equal(refs, []uint32{1, 2, 3, 4}) {
						t.Note("open, adopt, open, adopt allocated %v: one counter shared by produced and adopted streams, as Rust's", refs)
						return
					}
					t.Note("open, adopt, open, adopt allocated %v, not Rust's [1 2 3 4] from one shared counter: another scheme, which §2.6 allows while references stay unique", refs)
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "streams/4.1/runtime-stamps-publish-time",
				Title:        "The runtime stamps monotonic_timestamp_ns at publish time from a monotonic clock: never 0, never going backwards",
				Spec:         "ranvier-streams §4.1",
				Requirements: []string{"ranvier-streams§4.1#1", "ranvier-streams§4.1#2", "ranvier-wire§4.3#7"},
				Run: func(t *cases.T) {
					steps := []*conformpb.PublishStep{openStep("gaze", ""), openStep("pupil", "")}
					for i := range 200 {
						steps = append(steps, publishStep(uint32(i%2), 0))
					}
					out, _ := runScript(t, steps...)
					prev := uint64(0)
					for i, ev := range out.Events[2:] {
						ns := ev.GetSample().GetMonotonicTimestampNs()
						if ns == 0 || ns < prev {
							t.Fail(reports.Evidence{Message: fmt.Sprintf("publish %d of 200, alternating between two streams", i+1), Input: describeSteps(steps),
								Expected: fmt.Sprintf("sample.monotonicTimestampNs at or after %d, not 0", prev), Got: fmt.Sprintf("sample.monotonicTimestampNs %d", ns),
								Diff: evidence.Format(evidence.DiffAt(fmt.Sprintf("events[%d].sample.monotonicTimestampNs", i+2), fmt.Sprintf("at or after %d, not 0", prev), ns))})
							break
						}
						prev = ns
					}
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "streams/4.2/unnamed-clock-carries-no-source",
				Title:        "A stream that named no source clock domain carries source timestamp 0 in place of one it is given, without refusing the publish",
				Spec:         "ranvier-streams §4.2",
				Requirements: []string{"ranvier-streams§4.2#3", "ranvier-streams§4.2#4", "ranvier-streams§4.2#6", "ranvier-streams§5.1#2", "ranvier-wire§4.3#16"},
				Run: func(t *cases.T) {
					steps := []*conformpb.PublishStep{openStep("gaze", ""), publishStep(0, 123456789), publishStep(0, 1)}
					out, _ := runScript(t, steps...)
					for i, g := range samplesOf(steps, out)[0] {
						if g.GetSourceTimestampNs() != 0 {
							t.Fail(reports.Evidence{Message: fmt.Sprintf("sample %d of a stream with no clock domain", i+1), Input: describeSteps(steps),
								Expected: "sample.sourceTimestampNs 0", Got: fmt.Sprintf("sample.sourceTimestampNs %d", g.GetSourceTimestampNs()),
								Diff: evidence.Format(evidence.DiffAt(fmt.Sprintf("events[%d].sample.sourceTimestampNs", 1+i), uint64(0), g.GetSourceTimestampNs()))})
						}
					}
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "streams/4.2/source-passed-through",
				Title:        "A stream that named a clock domain carries each source timestamp untouched, and 0 (absent) as 0",
				Spec:         "ranvier-streams §4.2",
				Requirements: []string{"ranvier-streams§4.2#1", "ranvier-streams§4.2#2", "ranvier-wire§4.3#15"},
				Run: func(t *cases.T) {
					want := []uint64{1, 0, 1 << 63, 987654321012}
					steps := []*conformpb.PublishStep{openStep("gaze", "device.A1-0042")}
					for _, ns := range want {
						steps = append(steps, publishStep(0, ns))
					}
					out, _ := runScript(t, steps...)
					var got []uint64
					for _, g := range samplesOf(steps, out)[0] {
						got = append(got, g.GetSourceTimestampNs())
					}
					type sources struct {
						SourceTimestampNs []uint64 `json:"sourceTimestampNs"`
					}
					t.FailCompare("source timestamps of a stream on device.A1-0042", describeSteps(steps), sources{want}, sources{got})
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "streams/4.2/carrying-source-is-exposed",
				Title:        "A publisher exposes whether a source timestamp will be carried: yes with a clock domain, no without",
				Spec:         "ranvier-streams §4.2",
				Requirements: []string{"ranvier-streams§4.2#5"},
				Run: func(t *cases.T) {
					steps := []*conformpb.PublishStep{openStep("gaze", ""), openStep("gaze", "device.A1-0042")}
					out, _ := runScript(t, steps...)
					if len(out.Streams) != 2 {
						t.Protocolf("publish: 2 streams created, %d reported", len(out.Streams))
					}
					type carries struct {
						CarriesSourceTimestamp bool `json:"carriesSourceTimestamp"`
					}
					type streams struct {
						Streams []carries `json:"streams"`
					}
					want := streams{[]carries{{false}, {true}}}
					got := streams{[]carries{{out.Streams[0].CarriesSourceTimestamp}, {out.Streams[1].CarriesSourceTimestamp}}}
					t.FailCompare("carries_source_timestamp, no domain then a domain", describeSteps(steps), want, got)
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "streams/5.1/publishing-never-fails",
				Title:        "Publishing never fails: with nobody reading, every one of 5000 publishes is carried out and numbered",
				Spec:         "ranvier-streams §5.1",
				Requirements: []string{"ranvier-streams§2.1#2", "ranvier-streams§5.1#1", "ranvier-streams§5.1#2"},
				Run: func(t *cases.T) {
					steps := []*conformpb.PublishStep{openStep("gaze", "")}
					for range 5000 {
						steps = append(steps, publishStep(0, 0))
					}
					out, ok := runScript(t, steps...)
					if n := len(samplesOf(steps, out)[0]); ok && (n != 5000 || out.Events[len(out.Events)-1].GetSample().GetSequence() != 5000) {
						t.Failf("5000 publishes produced %d samples, the last numbered %d", n, out.Events[len(out.Events)-1].GetSample().GetSequence())
					}
				},
			}
		}),
		k.Info(func() cases.Case {
			return cases.Case{
				ID:           "streams/8/republish-not-gated-on-clock-domain",
				Title:        "Whether a republished sample keeps its source timestamp although nothing declared its clock domain (Rust: it does)",
				Spec:         "ranvier-streams §8, §4.2",
				Requirements: []string{"ranvier-streams§8#3"},
				Run: func(t *cases.T) {
					rec := &conformpb.Arrival{StreamRef: 9, Sequence: 3, MonotonicTimestampNs: 1000, SourceTimestampNs: 777}
					steps := []*conformpb.PublishStep{adoptStep("gaze"), republishStep(0, rec)}
					out := publish(t, []*conformpb.PublishInput{{Steps: steps}})[0]
					t.Note("republished with source_timestamp_ns 777 and no clock domain declared: carried %d (refused %v)",
						out.Events[1].GetSample().GetSourceTimestampNs(), out.Events[1].Refused)
				},
			}
		}),
	}
}
