package streams

import (
	"fmt"
	"strings"

	"github.com/conform-suite/conform/cases"
	"github.com/conform-suite/conform/corpus"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/ref/streams"
	"github.com/conform-suite/conform/reports"
	"github.com/google/go-cmp/cmp"
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

// gapView is a tracker's counters rendered for comparison and diffing; the
// fields a case does not judge are left zero on both sides.
type gapView struct {
	Missing, Breaks, Duplicated, Reordered uint64
	Streams, Arrived                       uint64
	LastBreak                              *corpus.BreakExpect
}

func viewExpect(e corpus.GapExpect, f fields) gapView {
	v := gapView{Missing: e.Missing, Breaks: e.Breaks, Duplicated: e.Duplicated, Reordered: e.Reordered,
		Streams: e.Streams, Arrived: e.Arrived, LastBreak: e.LastBreak}
	return v.only(f)
}

func viewCounters(c *conformpb.GapCounters, f fields) gapView {
	v := gapView{Missing: c.GetMissing(), Breaks: c.GetBreaks(), Duplicated: c.GetDuplicated(),
		Reordered: c.GetReordered(), Streams: c.GetStreams(), Arrived: c.GetArrived()}
	if b := c.GetLastBreak(); b != nil {
		v.LastBreak = &corpus.BreakExpect{Conn: b.Connection, Ref: b.StreamRef, After: b.After, Before: b.Before,
			Missing: b.Missing, AfterNs: b.AfterNs, BeforeNs: b.BeforeNs}
	}
	return v.only(f)
}

func (v gapView) only(f fields) gapView {
	keep := func(bit fields, x uint64) uint64 {
		if f&bit != 0 {
			return x
		}
		return 0
	}
	out := gapView{
		Missing: keep(fMissing, v.Missing), Breaks: keep(fBreaks, v.Breaks),
		Duplicated: keep(fDuplicated, v.Duplicated), Reordered: keep(fReordered, v.Reordered),
		Streams: keep(fStreams, v.Streams), Arrived: keep(fArrived, v.Arrived),
	}
	if f&fLastBreak != 0 {
		out.LastBreak = v.LastBreak
	}
	return out
}

// checkGaps records a failure when the counters a SUT reported differ from
// want in the fields f selects.
func checkGaps(t *cases.T, what string, in []*conformpb.Arrival, got *conformpb.GapCounters, want corpus.GapExpect, f fields) bool {
	w, g := viewExpect(want, f), viewCounters(got, f)
	if cmp.Equal(w, g) {
		return true
	}
	t.Fail(reports.Evidence{
		Message:  what,
		Input:    describeArrivals(in),
		Expected: showGaps(w, f),
		Got:      showGaps(g, f),
		Diff:     cmp.Diff(w, g),
	})
	return false
}

// showGaps prints the counters f selects.
func showGaps(v gapView, f fields) string {
	var parts []string
	for _, c := range []struct {
		bit  fields
		name string
		n    uint64
	}{{fMissing, "missing", v.Missing}, {fBreaks, "breaks", v.Breaks}, {fDuplicated, "duplicated", v.Duplicated},
		{fReordered, "reordered", v.Reordered}, {fStreams, "streams", v.Streams}, {fArrived, "arrived", v.Arrived}} {
		if f&c.bit != 0 {
			parts = append(parts, fmt.Sprintf("%s %d", c.name, c.n))
		}
	}
	if f&fLastBreak != 0 {
		if b := v.LastBreak; b != nil {
			parts = append(parts, fmt.Sprintf("last break {after %d, before %d, missing %d, after_ns %d, before_ns %d, connection %d, stream_ref %d}",
				b.After, b.Before, b.Missing, b.AfterNs, b.BeforeNs, b.Conn, b.Ref))
		} else {
			parts = append(parts, "no last break")
		}
	}
	return strings.Join(parts, ", ")
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
		checkGaps(t, what+": "+vs[i].Title, ins[i].Arrivals, out.GetCounters(), *vs[i].Expect, f)
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
		if cmp.Equal(viewExpect(want, f), viewCounters(out.GetCounters(), f)) {
			continue
		}
		failed++
		if failed <= limit {
			checkGaps(t, what+" (expected: the reference ref/streams)", ins[i].Arrivals, out.GetCounters(), want, f)
		}
	}
	if failed > limit {
		t.Failf("%s: %d more of %d generated inputs disagreed with the reference", what, failed-limit, len(ins))
	}
}
