package streams

import (
	"github.com/conform-suite/conform/cases"
	"github.com/conform-suite/conform/corpus"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/proto/conform/v1/meaning"
	"github.com/conform-suite/conform/ref/streams"
)

// fields selects the counters a case judges: each case judges what its
// requirement is about and nothing else, so that a SHOULD (the distinct
// stream count, say) never fails a MUST case.
type fields uint8

const (
	fMissing fields = 1 << iota
	fBreaks
	fDuplicated
	fReordered
	fStreams
	fArrived
	fLastBreak

	// fCounts are the four gap counters of §3.3 and §3.4.
	fCounts = fMissing | fBreaks | fDuplicated | fReordered
)

// paths are the JSON paths of the counters f selects in a TrackOutput.
func (f fields) paths() []string {
	var ps []string
	for _, c := range []struct {
		bit  fields
		path string
	}{{fMissing, "counters.missing"}, {fBreaks, "counters.breaks"}, {fDuplicated, "counters.duplicated"},
		{fReordered, "counters.reordered"}, {fArrived, "counters.arrived"}, {fLastBreak, "counters.lastBreak"}} {
		if f&c.bit != 0 {
			ps = append(ps, c.path)
		}
	}
	return ps
}

// trackAnswer is the TrackOutput a conforming tracker gives when its
// counters are e.
func trackAnswer(e corpus.GapExpect) *conformpb.TrackOutput {
	c := &conformpb.GapCounters{Arrived: e.Arrived, Missing: e.Missing, Breaks: e.Breaks, Duplicated: e.Duplicated,
		Reordered: e.Reordered, Streams: e.Streams}
	if b := e.LastBreak; b != nil {
		c.LastBreak = &conformpb.GapBreak{Connection: b.Conn, StreamRef: b.Ref, After: b.After, Before: b.Before,
			Missing: b.Missing, AfterNs: b.AfterNs, BeforeNs: b.BeforeNs}
	}
	return &conformpb.TrackOutput{Counters: c}
}

// gapDiffs returns where a tracker's answer differs from the counters
// want in the fields f selects. The counters are judged at MUST; the
// distinct-stream count, which a tracker SHOULD report (§3.7), is judged
// at MUST only where it is reported: an untracked sample MUST NOT raise it
// (§3.6), and a tracker that reports none (0) is the SHOULD case
// streams/3.7/distinct-stream-count's to judge.
func gapDiffs(t *cases.T, in *conformpb.TrackInput, out *conformpb.TrackOutput, want corpus.GapExpect, f fields) meaning.Differences {
	w := trackAnswer(want)
	var ds meaning.Differences
	if ps := f.paths(); len(ps) > 0 {
		ds = t.Judge(in, w, out, meaning.MUST, ps...)
	}
	if f&fStreams != 0 {
		own := f == fStreams // the SHOULD case of the count itself
		if own || out.GetCounters().GetStreams() != 0 {
			for _, d := range t.Judge(in, w, out, meaning.SHOULD, "counters.streams") {
				if !own {
					d.Level = meaning.MUST
				}
				ds = append(ds, d)
			}
		}
	}
	return ds
}

// checkGaps records a failure when the counters a SUT reported differ from
// want in the fields f selects.
func checkGaps(t *cases.T, what string, in *conformpb.TrackInput, out *conformpb.TrackOutput, want corpus.GapExpect, f fields) bool {
	ds := gapDiffs(t, in, out, want, f)
	if len(ds) == 0 {
		return true
	}
	t.FailAnswer(what, describeArrivals(in.GetArrivals()), trackAnswer(want), out, ds)
	return false
}

// trackVectors feeds every vector's arrivals to the SUT's tracker, one
// fresh tracker each, and judges the fields f of each answer against the
// vector's expectation.
func trackVectors(t *cases.T, what string, f fields, vs ...*corpus.StreamsVector) {
	var ins []*conformpb.TrackInput
	for _, v := range vs {
		ins = append(ins, trackInput(v))
	}
	for i, out := range track(t, ins) {
		checkGaps(t, what+": "+vs[i].Title, ins[i], out, *vs[i].Expect, f)
	}
}

// refExpect runs arrivals through the reference tracker, for cases that
// generate their inputs.
func refExpect(in *conformpb.TrackInput) corpus.GapExpect {
	tr := streams.NewTracker()
	for _, a := range in.Arrivals {
		tr.Observe(streams.ConnID(a.Connection), streams.Sample{StreamRef: a.StreamRef, Sequence: a.Sequence, MonotonicNs: a.MonotonicTimestampNs})
	}
	c := tr.Counters()
	e := corpus.GapExpect{Arrived: c.Arrived, Missing: c.Missing, Breaks: c.Breaks, Duplicated: c.Duplicated,
		Reordered: c.Reordered, Streams: c.Streams}
	if b := c.LastBreak; b != nil {
		e.LastBreak = &corpus.BreakExpect{Conn: uint64(b.Conn), Ref: b.StreamRef, After: b.After, Before: b.Before,
			Missing: b.Missing, AfterNs: b.AfterNs, BeforeNs: b.BeforeNs}
	}
	return e
}

// trackGenerated feeds generated inputs to the SUT and judges each against
// the reference, reporting at most a few failures.
func trackGenerated(t *cases.T, what string, f fields, ins []*conformpb.TrackInput) {
	const limit = 3
	failed := 0
	for i, out := range track(t, ins) {
		want := refExpect(ins[i])
		if len(gapDiffs(t, ins[i], out, want, f)) == 0 {
			continue
		}
		failed++
		if failed <= limit {
			checkGaps(t, what+" (expected: the reference ref/streams)", ins[i], out, want, f)
		}
	}
	if failed > limit {
		t.Failf("%s: %d more of %d generated inputs disagreed with the reference", what, failed-limit, len(ins))
	}
}
