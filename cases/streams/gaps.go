package streams

import (
	"math/rand/v2"

	"github.com/conform-suite/conform/cases"
	"github.com/conform-suite/conform/corpus"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
)

// tableRows are the rows of ranvier-streams §3.8's gap-counting table.
var tableRows = []string{
	"gaps-in-order", "gaps-one-missing", "gaps-jump-to-500", "gaps-every-other",
	"gaps-joined-late", "gaps-late-fills", "gaps-duplicate", "gaps-beyond-window",
}

// trackVectorNames are every vector with tracker arrivals.
var trackVectorNames = append(append([]string(nil), tableRows...),
	"two-publishers-same-process", "two-publishers-different-processes", "two-streams-one-loses",
	"untracked-stream-ref-zero", "untracked-sequence-zero", "window-edge-63", "window-edge-64",
	"seen-beyond-window", "late-before-first", "loss-consecutive", "loss-scattered", "latest-break-kept",
	"window-step-64", "window-step-64-edges", "window-step-66", "window-step-200",
)

// gaps is ranvier-streams §2.2, §2.4 and §3.2-§3.8: the sequence tracker.
func gaps(k *cases.Kit, vecs *vectors) []cases.Case {
	return []cases.Case{
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "streams/2.2/pairs-never-interfere",
				Title:        "Tracking is keyed on (connection, stream_ref): interleaved streams, some sharing a reference on different connections, are counted apart",
				Spec:         "ranvier-streams §2.2",
				Requirements: []string{"ranvier-streams§1#4", "ranvier-streams§2.2#2", "ranvier-wire§4.3#20"},
				Run: func(t *cases.T) {
					var ins []*conformpb.TrackInput
					for range 40 {
						ins = append(ins, interleavedStreams(t.Rand()))
					}
					trackGenerated(t, "streams interleaved on shared names, references and connections", fCounts, ins)
				},
			}
		}),
		k.Must(func() cases.Case {
			v := vecs.Get("two-publishers-same-process")
			return cases.Case{
				ID:           "streams/2.4/two-publishers-one-process",
				Title:        "Two publishers in one process under one name, alternating, are two clean streams: no missing, no duplicates",
				Spec:         "ranvier-streams §2.4, §2.2",
				Requirements: []string{"ranvier-streams§2.4#1"},
				Run: func(t *cases.T) {
					trackVectors(t, "two streams of one process read as one series", fCounts, v)
				},
			}
		}),
		k.Must(func() cases.Case {
			v := vecs.Get("two-publishers-different-processes")
			return cases.Case{
				ID:    "streams/2.4/two-publishers-two-processes",
				Title: "Two publishers in different processes, both stream_ref 1, alternating on two connections, are two clean streams",
				Spec:  "ranvier-streams §2.4, §2.2",
				Requirements: []string{"ranvier-streams§2.2#2", "ranvier-streams§2.4#2", "ranvier-wire§4.3#19",
					"ranvier-wire§4.3#20"},
				Run: func(t *cases.T) {
					trackVectors(t, "two processes' stream 1 merged into one count", fCounts, v)
				},
			}
		}),
		k.Must(func() cases.Case {
			v := vecs.Get("gaps-joined-late")
			return cases.Case{
				ID:           "streams/3.2/first-sample-sets-the-mark",
				Title:        "The first sample of a (connection, stream_ref) pair sets the high-water mark and declares nothing missing",
				Spec:         "ranvier-streams §3.2",
				Requirements: []string{"ranvier-streams§3.2#1", "ranvier-streams§3.2#2", "ranvier-streams§3.8#5"},
				Run: func(t *cases.T) {
					trackVectors(t, "a stream joined part-way through", fCounts, v)
					// Streams joined at arbitrary points, in order from there:
					// whatever the first sequence, nothing is missing.
					var ins []*conformpb.TrackInput
					for range 20 {
						in := &conformpb.TrackInput{Name: "trial.events"}
						for ref := uint32(1); ref <= 3; ref++ {
							first := 1 + t.Rand().Uint64N(1<<40)
							for k := range uint64(3) {
								in.Arrivals = append(in.Arrivals, arrival(1, ref, first+k, first+k))
							}
						}
						ins = append(ins, in)
					}
					for i, out := range track(t, ins) {
						checkGaps(t, "streams joined part-way through", ins[i], out, corpus.GapExpect{}, fCounts)
					}
				},
			}
		}),
		k.Must(func() cases.Case {
			vs := vecs.List("gaps-one-missing", "gaps-jump-to-500", "gaps-every-other", "loss-consecutive", "loss-scattered")
			return cases.Case{
				ID:           "streams/3.3/missing-grows-by-step-minus-one",
				Title:        "A sample step past the high-water mark adds step - 1 to missing",
				Spec:         "ranvier-streams §3.3",
				Requirements: []string{"ranvier-streams§3.3#1", "ranvier-streams§3.8#2", "ranvier-streams§3.8#3"},
				Run: func(t *cases.T) {
					trackVectors(t, "missing after gaps", fMissing, vs...)
				},
			}
		}),
		k.Must(func() cases.Case {
			vs := vecs.List("gaps-one-missing", "gaps-jump-to-500", "gaps-every-other", "loss-consecutive", "loss-scattered")
			return cases.Case{
				ID:           "streams/3.3/one-break-per-gap",
				Title:        "Each gap adds exactly one to breaks, however many samples it holds",
				Spec:         "ranvier-streams §3.3",
				Requirements: []string{"ranvier-streams§3.3#2", "ranvier-streams§3.8#4"},
				Run: func(t *cases.T) {
					trackVectors(t, "breaks after gaps", fBreaks, vs...)
				},
			}
		}),
		k.Must(func() cases.Case {
			vs := vecs.List("gaps-one-missing", "gaps-jump-to-500", "two-streams-one-loses")
			return cases.Case{
				ID:    "streams/3.3/break-records-its-bounds",
				Title: "A break records the sequence before and after it, how many are missing, and both bounding publish timestamps",
				Spec:  "ranvier-streams §3.3, §3.8",
				Requirements: []string{"ranvier-streams§3.3#3", "ranvier-streams§3.3#4", "ranvier-streams§3.7#3",
					"ranvier-streams§3.8#9"},
				Run: func(t *cases.T) {
					trackVectors(t, "the break a gap recorded", fLastBreak, vs...)
				},
			}
		}),
		k.Must(func() cases.Case {
			vs := vecs.List("latest-break-kept", "loss-scattered", "gaps-every-other")
			return cases.Case{
				ID:           "streams/3.3/most-recent-break-retained",
				Title:        "An implementation retains at least the most recent break",
				Spec:         "ranvier-streams §3.3",
				Requirements: []string{"ranvier-streams§3.3#6", "ranvier-streams§3.7#3"},
				Run: func(t *cases.T) {
					trackVectors(t, "the break retained after several", fLastBreak, vs...)
				},
			}
		}),
		k.Must(func() cases.Case {
			vs := vecs.List("loss-consecutive", "loss-scattered")
			return cases.Case{
				ID:           "streams/3.3/missing-and-breaks-both-reported",
				Title:        "missing and breaks are both reported: 100 consecutive losses and 100 scattered ones have equal missing and different breaks",
				Spec:         "ranvier-streams §3.3",
				Requirements: []string{"ranvier-streams§3.3#5"},
				Run: func(t *cases.T) {
					trackVectors(t, "a disconnection against a slow subscriber", fMissing|fBreaks, vs...)
				},
			}
		}),
		k.Must(func() cases.Case {
			vs := vecs.List("window-edge-63", "window-edge-64", "gaps-beyond-window")
			return cases.Case{
				ID:    "streams/3.4/window-is-64",
				Title: "The reorder window is exactly 64: a late sample 63 behind is credited back, one 64 or 198 behind is not",
				Spec:  "ranvier-streams §3.4, §3.8",
				Requirements: []string{"ranvier-streams§3.4#1", "ranvier-streams§3.4#9", "ranvier-streams§3.4#10",
					"ranvier-streams§3.8#8"},
				Run: func(t *cases.T) {
					trackVectors(t, "a late sample at the window's edge", fCounts, vs...)
				},
			}
		}),
		k.Must(func() cases.Case {
			steps := vecs.List("window-step-64", "window-step-64-edges", "window-step-66", "window-step-200")
			queued := vecs.Get("window-step-64-queued")
			return cases.Case{
				ID:    "streams/3.4/history-cleared-by-a-long-step",
				Title: "A forward step of 64 or more leaves no history behind the new mark: a late sample after it is reordered and credited back, never a duplicate, in the tracker and in a subscription",
				Spec:  "ranvier-streams §3.4, §3.1",
				Requirements: []string{"ranvier-streams§3.4#1", "ranvier-streams§3.4#2", "ranvier-streams§3.4#3",
					"ranvier-streams§3.4#4", "ranvier-streams§3.4#5", "ranvier-streams§3.4#9"},
				Run: func(t *cases.T) {
					// A history kept across the step (a shift whose count is
					// taken modulo 64, as C's is on x86) reads these late,
					// unseen samples as duplicates.
					trackVectors(t, "late samples after a long step", fCounts|fLastBreak, steps...)
					queueVectors(t, "late samples after a long step, at a subscription", qRead|qMissing|qBreaks, queued)
				},
			}
		}),
		k.Must(func() cases.Case {
			vs := vecs.List("seen-beyond-window", "gaps-beyond-window")
			return cases.Case{
				ID:           "streams/3.4/beyond-window-never-a-duplicate",
				Title:        "A sample 64 or more behind the high-water mark is counted reordered and never called a duplicate, even if it was seen",
				Spec:         "ranvier-streams §3.4",
				Requirements: []string{"ranvier-streams§3.4#1", "ranvier-streams§3.4#2"},
				Run: func(t *cases.T) {
					trackVectors(t, "a seen sample beyond the window", fDuplicated|fReordered, vs...)
				},
			}
		}),
		k.Must(func() cases.Case {
			vs := vecs.List("gaps-duplicate", "seen-beyond-window")
			return cases.Case{
				ID:           "streams/3.4/duplicate-inside-window",
				Title:        "A sample inside the window whose position was already seen is counted duplicated",
				Spec:         "ranvier-streams §3.4, §3.8",
				Requirements: []string{"ranvier-streams§3.4#3", "ranvier-streams§3.8#7"},
				Run: func(t *cases.T) {
					trackVectors(t, "a repeated sample", fDuplicated|fReordered, vs...)
				},
			}
		}),
		k.Must(func() cases.Case {
			vs := vecs.List("gaps-late-fills", "window-edge-63")
			return cases.Case{
				ID:           "streams/3.4/late-arrival-credited-back",
				Title:        "An unseen sample inside the window is counted reordered and missing is decremented by 1",
				Spec:         "ranvier-streams §3.4, §3.8",
				Requirements: []string{"ranvier-streams§3.4#4", "ranvier-streams§3.4#5", "ranvier-streams§3.8#6"},
				Run: func(t *cases.T) {
					trackVectors(t, "a late sample filling a gap", fMissing|fReordered, vs...)
				},
			}
		}),
		k.Must(func() cases.Case {
			v := vecs.Get("late-before-first")
			return cases.Case{
				ID:           "streams/3.4/missing-saturates-at-zero",
				Title:        "Crediting a late sample back never takes missing below zero",
				Spec:         "ranvier-streams §3.4",
				Requirements: []string{"ranvier-streams§3.4#6"},
				Run: func(t *cases.T) {
					trackVectors(t, "late samples behind a stream's first", fCounts, v)
				},
			}
		}),
		k.Must(func() cases.Case {
			vs := vecs.List("gaps-late-fills", "window-edge-63")
			return cases.Case{
				ID:           "streams/3.4/breaks-never-credited-back",
				Title:        "A late sample that fills a gap leaves breaks as it was: after 1, 2, 4 then 3, breaks is 1",
				Spec:         "ranvier-streams §3.4",
				Requirements: []string{"ranvier-streams§3.4#7", "ranvier-streams§3.4#8"},
				Run: func(t *cases.T) {
					trackVectors(t, "breaks after a gap was filled", fBreaks, vs...)
				},
			}
		}),
		k.Must(func() cases.Case {
			return cases.Case{
				ID:           "streams/3.4/reorderings-agree-with-reference",
				Title:        "Streams reordered, duplicated and thinned at random are counted as the 64-window rule counts them",
				Spec:         "ranvier-streams §3.4, §3.3",
				Requirements: []string{"ranvier-streams§3.4#3", "ranvier-streams§3.4#4", "ranvier-streams§3.4#9"},
				Run: func(t *cases.T) {
					var ins []*conformpb.TrackInput
					for range 60 {
						ins = append(ins, shuffledStream(t.Rand()))
					}
					trackGenerated(t, "a reordered stream", fCounts|fLastBreak, ins)
				},
			}
		}),
		k.Must(func() cases.Case {
			v := vecs.Get("untracked-stream-ref-zero")
			return cases.Case{
				ID:           "streams/3.6/stream-ref-zero-untracked",
				Title:        "A sample with stream_ref 0 counts as arrived, changes no gap counter and raises no stream count",
				Spec:         "ranvier-streams §3.6, §2.6",
				Requirements: []string{"ranvier-streams§3.6#1", "ranvier-wire§4.3#18"},
				Run: func(t *cases.T) {
					trackVectors(t, "samples naming no stream", fCounts|fStreams|fArrived, v)
				},
			}
		}),
		k.Must(func() cases.Case {
			v := vecs.Get("untracked-sequence-zero")
			return cases.Case{
				ID:           "streams/3.6/sequence-zero-untracked",
				Title:        "A sample with sequence 0 counts as arrived, changes no gap counter and raises no stream count",
				Spec:         "ranvier-streams §3.6, §2.1",
				Requirements: []string{"ranvier-streams§2.1#4", "ranvier-streams§2.1#5", "ranvier-streams§3.6#1"},
				Run: func(t *cases.T) {
					trackVectors(t, "samples carrying no sequence", fCounts|fStreams|fArrived, v)
				},
			}
		}),
		k.Must(func() cases.Case {
			vs := vecs.List("gaps-one-missing", "gaps-late-fills")
			return cases.Case{
				ID:           "streams/3.7/missing-is-not-monotonic",
				Title:        "missing is what is currently believed missing: 1 after 1, 2, 4, and 0 once the late 3 arrives",
				Spec:         "ranvier-streams §3.7, §3.4",
				Requirements: []string{"ranvier-streams§3.4#5", "ranvier-streams§3.7#4"},
				Run: func(t *cases.T) {
					trackVectors(t, "missing before and after a late sample", fMissing, vs...)
				},
			}
		}),
		k.Should(func() cases.Case {
			vs := vecs.List(trackVectorNames...)
			return cases.Case{
				ID:           "streams/3.7/distinct-stream-count",
				Title:        "A subscriber reports the number of distinct (connection, stream_ref) pairs that fed it",
				Spec:         "ranvier-streams §3.7, §2.4",
				Requirements: []string{"ranvier-streams§3.7#2"},
				Run: func(t *cases.T) {
					trackVectors(t, "the distinct-stream count", fStreams, vs...)
				},
			}
		}),
		k.Must(func() cases.Case {
			vs := vecs.List(tableRows...)
			return cases.Case{
				ID:    "streams/3.8/gap-counting-table",
				Title: "Every row of the gap-counting table gives its missing, breaks, duplicated and reordered",
				Spec:  "ranvier-streams §3.8",
				Requirements: []string{"ranvier-streams§3.2#2", "ranvier-streams§3.4#8", "ranvier-streams§3.4#10",
					"ranvier-streams§3.7#1", "ranvier-streams§3.8#1", "ranvier-streams§3.8#2", "ranvier-streams§3.8#3",
					"ranvier-streams§3.8#4", "ranvier-streams§3.8#5", "ranvier-streams§3.8#6", "ranvier-streams§3.8#7",
					"ranvier-streams§3.8#8"},
				Run: func(t *cases.T) {
					trackVectors(t, "a row of the table", fCounts, vs...)
				},
			}
		}),
		k.Must(func() cases.Case {
			v := vecs.Get("two-streams-one-loses")
			return cases.Case{
				ID:           "streams/3.8/two-streams-one-loses",
				Title:        "Stream 1 delivering 1, 2, 3 and stream 2 delivering 1 then 9 gives missing 7, one break, and a last break before 9",
				Spec:         "ranvier-streams §3.8, §3.3",
				Requirements: []string{"ranvier-streams§3.8#10"},
				Run: func(t *cases.T) {
					trackVectors(t, "two streams, one losing samples", fCounts|fLastBreak, v)
				},
			}
		}),
	}
}

// interleavedStreams generates up to six streams on up to three
// connections, several of them stream_ref 1, each counting from its own
// start with occasional gaps, interleaved at random as one subscription
// would receive them.
func interleavedStreams(r *rand.Rand) *conformpb.TrackInput {
	type series struct {
		conn uint64
		ref  uint32
		next uint64
		left int
	}
	var ss []*series
	seen := map[[2]uint64]bool{}
	for range 2 + r.IntN(5) {
		conn, ref := uint64(1+r.IntN(3)), uint32(1+r.IntN(2))
		if seen[[2]uint64{conn, uint64(ref)}] {
			continue
		}
		seen[[2]uint64{conn, uint64(ref)}] = true
		ss = append(ss, &series{conn: conn, ref: ref, next: 1 + uint64(r.IntN(3)), left: 5 + r.IntN(30)})
	}
	in := &conformpb.TrackInput{Name: "trial.events"}
	ns := uint64(1000)
	for len(ss) > 0 {
		i := r.IntN(len(ss))
		st := ss[i]
		ns += 1 + uint64(r.IntN(50))
		in.Arrivals = append(in.Arrivals, arrival(st.conn, st.ref, st.next, ns))
		st.next++
		if r.IntN(8) == 0 {
			st.next += uint64(1 + r.IntN(4))
		}
		if st.left--; st.left == 0 {
			ss = append(ss[:i], ss[i+1:]...)
		}
	}
	return in
}

// shuffledStream generates one stream of up to 200 samples with some lost,
// some repeated, and some displaced by up to 100 positions, so that late
// samples land on both sides of the window's edge.
func shuffledStream(r *rand.Rand) *conformpb.TrackInput {
	n := 20 + r.IntN(180)
	var seqs []uint64
	for s := uint64(1); s <= uint64(n); s++ {
		switch r.IntN(12) {
		case 0: // lost
			continue
		case 1: // repeated
			seqs = append(seqs, s)
		}
		seqs = append(seqs, s)
	}
	for range r.IntN(8) {
		if len(seqs) < 2 {
			break
		}
		i := r.IntN(len(seqs))
		j := min(len(seqs)-1, i+1+r.IntN(100))
		// Move seqs[i] later, to j: it arrives late.
		v := seqs[i]
		copy(seqs[i:j], seqs[i+1:j+1])
		seqs[j] = v
	}
	in := &conformpb.TrackInput{Name: "trial.events"}
	for _, s := range seqs {
		in.Arrivals = append(in.Arrivals, arrival(1, 1, s, s*10))
	}
	return in
}
