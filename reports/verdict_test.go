package reports

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestProfileVerdicts: each profile the Hello declares gets a verdict from
// its cases: how many MUST cases were judged and passed, and a status.
func TestProfileVerdicts(t *testing.T) {
	c := func(id, profile string, level Level, o Outcome) CaseResult {
		return CaseResult{ID: id, Profile: profile, Level: level, Outcome: o}
	}
	r := &Record{
		SUT: SUT{Hello: json.RawMessage(`{"profiles":["ok","bad","err","gap","part","none","info","absent","ok"]}`)},
		Cases: []CaseResult{
			c("a/1/ok1", "ok", MUST, Pass), c("a/1/ok2", "ok", SHOULD, Warn), c("a/1/ok3", "ok", INFO, Info),
			c("a/1/bad1", "bad", MUST, Pass), c("a/1/bad2", "bad", MUST, Fail), c("a/1/bad3", "bad", MUST, Error),
			c("a/1/err1", "err", MUST, Pass), c("a/1/err2", "err", MUST, Error),
			c("a/1/gap1", "gap", MUST, Pass), c("a/1/gap2", "gap", MUST, Skip), c("a/1/gap3", "gap", SHOULD, Skip),
			c("a/1/part1", "part", MUST, Pass), c("a/1/part2", "part", MUST, Skip),
			c("a/1/none1", "none", MUST, Skip),
			c("a/1/info1", "info", INFO, Info), c("a/1/info2", "info", SHOULD, Pass),
			c("b/1/undeclared", "other", MUST, Skip),
		},
		Unimplemented:   []string{"a/1/gap2", "a/1/gap3"},
		MustInCatalogue: map[string]int{"ok": 1, "part": 5},
	}
	r.Summarize()
	want := map[string]struct {
		status                   ProfileStatus
		must, judged, passed, un int
	}{
		"ok":     {ProfileConformant, 1, 1, 1, 0},
		"bad":    {ProfileNotConformant, 3, 2, 1, 0},
		"err":    {ProfileErrors, 2, 1, 1, 0},
		"gap":    {ProfileIncomplete, 2, 1, 1, 1},
		"part":   {ProfilePartial, 2, 1, 1, 0},
		"none":   {ProfileNotJudged, 1, 0, 0, 0},
		"info":   {ProfileNotJudged, 0, 0, 0, 0},
		"absent": {ProfileNotSelected, 0, 0, 0, 0},
	}
	if len(r.Summary.ByProfile) != len(want) {
		t.Fatalf("%d verdicts, want %d (each declared profile once): %+v", len(r.Summary.ByProfile), len(want), r.Summary.ByProfile)
	}
	for _, v := range r.Summary.ByProfile {
		w := want[v.Profile]
		if v.Status != w.status || v.Must != w.must || v.MustJudged != w.judged || v.MustPassed != w.passed || v.MustUnimplemented != w.un {
			t.Errorf("%s: %+v, want %+v", v.Profile, v, w)
		}
	}
	if inc := r.Incomplete(); len(inc) != 1 || inc[0].Profile != "gap" {
		t.Errorf("incomplete %+v", inc)
	}
	if v := r.Summary.ByProfile[4]; !v.PartialSelection() {
		t.Errorf("part selected 2 of 5 MUST cases: %+v", v)
	}
	r.AllowUnimplemented = true
	r.Summarize()
	if len(r.Incomplete()) != 0 || r.Summary.ByProfile[3].Accepted != AcceptedByFlag {
		t.Errorf("--allow-unimplemented: %+v", r.Summary.ByProfile[3])
	}
	r.AllowUnimplemented = false
	b, _ := ParseBaseline(strings.NewReader("a/1/gap2  later\n"))
	res := b.Apply(r, day("2026-01-01"))
	r.Baseline = &res
	r.Summarize()
	if len(r.Incomplete()) != 0 || r.Summary.ByProfile[3].Accepted != AcceptedByBaseline || len(res.Unimplemented) != 0 {
		t.Errorf("a baseline covering the gap: %+v, %+v", r.Summary.ByProfile[3], res.Unimplemented)
	}
}

// TestNothingJudged: a run that could judge and judged nothing is reported.
func TestNothingJudged(t *testing.T) {
	r := &Record{Cases: []CaseResult{{ID: "a/1/x", Level: MUST, Outcome: Skip}, {ID: "a/1/y", Level: INFO, Outcome: Info}}}
	r.Summarize()
	if !r.NothingJudged() {
		t.Error("skips alone: not reported")
	}
	r.Cases = r.Cases[1:]
	r.Summarize()
	if r.NothingJudged() {
		t.Error("informational cases alone have nothing to judge")
	}
}
