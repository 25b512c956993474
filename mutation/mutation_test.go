package mutation

import (
	"slices"
	"strings"
	"testing"

	"github.com/conform-suite/conform/cases"
	"github.com/conform-suite/conform/reports"
	"github.com/conform-suite/conform/runner"
	"github.com/conform-suite/conform/sut/mutant"
)

// TestRejudge: only the cases that ended in a harness error are run again,
// their new results replace the old ones and say so, and the record's
// summary and exit code follow the new results.
func TestRejudge(t *testing.T) {
	harness := reports.CaseResult{ID: "s/1/a", Level: reports.MUST, Outcome: reports.Error, ErrorKind: reports.KindHarness, Message: "conform fell behind"}
	timeout := reports.CaseResult{ID: "s/1/b", Level: reports.MUST, Outcome: reports.Error, ErrorKind: reports.KindTimeout, Message: "no answer"}
	failed := reports.CaseResult{ID: "s/1/c", Level: reports.MUST, Outcome: reports.Fail, Message: "wrong"}
	passed := reports.CaseResult{ID: "s/1/d", Level: reports.MUST, Outcome: reports.Pass}
	cs := []cases.Case{{ID: "s/1/a"}, {ID: "s/1/b"}, {ID: "s/1/c"}, {ID: "s/1/d"}}

	for _, tc := range []struct {
		name     string
		rec      []reports.CaseResult
		again    reports.Outcome // what the second judgement of s/1/a gives
		wantRun  []string        // the cases run again
		wantExit int
	}{
		{"harness error then pass", []reports.CaseResult{harness, passed}, reports.Pass, []string{"s/1/a"}, runner.ExitOK},
		{"harness error then fail", []reports.CaseResult{harness, passed}, reports.Fail, []string{"s/1/a"}, runner.ExitFailures},
		{"other errors stay", []reports.CaseResult{harness, timeout, failed, passed}, reports.Pass, []string{"s/1/a"}, runner.ExitFailures},
		{"nothing to judge again", []reports.CaseResult{timeout, passed}, reports.Pass, nil, runner.ExitFailures},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &reports.Record{SUT: reports.SUT{Carrier: "builtin"}, Cases: slices.Clone(tc.rec)}
			rec.Summarize()
			rec.ExitCode = runner.ExitCode(rec)
			var ran []string
			rejudge(rec, func(again []cases.Case) *reports.Record {
				out := &reports.Record{}
				for _, c := range again {
					ran = append(ran, c.ID)
					out.Cases = append(out.Cases, reports.CaseResult{ID: c.ID, Level: reports.MUST, Outcome: tc.again})
				}
				return out
			}, cs, unjudged, "the first judgement was a harness error")
			if !slices.Equal(ran, tc.wantRun) {
				t.Errorf("ran again %v, want %v", ran, tc.wantRun)
			}
			if rec.ExitCode != tc.wantExit {
				t.Errorf("exit code %d, want %d", rec.ExitCode, tc.wantExit)
			}
			if len(rec.Cases) != len(tc.rec) {
				t.Fatalf("%d cases after, %d before", len(rec.Cases), len(tc.rec))
			}
			for i, c := range rec.Cases {
				if c.ID != tc.rec[i].ID {
					t.Errorf("case %d is %s, want %s: the order must not change", i, c.ID, tc.rec[i].ID)
				}
				rerun := slices.Contains(tc.wantRun, c.ID)
				switch {
				case rerun && (c.Outcome != tc.again || len(c.Notes) == 0 || !strings.Contains(c.Notes[len(c.Notes)-1], "conform fell behind")):
					t.Errorf("%s: %s, notes %q: want %s with a note quoting the first judgement", c.ID, c.Outcome, c.Notes, tc.again)
				case !rerun && c.Outcome != tc.rec[i].Outcome:
					t.Errorf("%s: %s, want %s untouched", c.ID, c.Outcome, tc.rec[i].Outcome)
				}
			}
			if got := rec.Summary.Counts[reports.Error]; got != count(rec, reports.Error) {
				t.Errorf("summary counts %d errors, the cases hold %d", got, count(rec, reports.Error))
			}
		})
	}
}

func count(r *reports.Record, o reports.Outcome) int {
	n := 0
	for _, c := range r.Cases {
		if c.Outcome == o {
			n++
		}
	}
	return n
}

// TestJudgeUncaughtAgain: a mutant no MUST case caught has its live MUST
// cases that passed judged again, and whatever fails the second time is
// what caught it; a caught mutant, and cases that are not live MUST ones,
// are left as they were.
func TestJudgeUncaughtAgain(t *testing.T) {
	live := []string{runner.LiveTag}
	cs := []cases.Case{
		{ID: "live/1/period", Level: reports.MUST, Tags: live},
		{ID: "live/1/order", Level: reports.MUST, Tags: live},
		{ID: "live/1/advice", Level: reports.SHOULD, Tags: live},
		{ID: "live/1/codec", Level: reports.MUST},
	}
	pass := func(id string, l reports.Level) reports.CaseResult {
		return reports.CaseResult{ID: id, Level: l, Outcome: reports.Pass}
	}
	uncaught := []reports.CaseResult{
		pass("live/1/period", reports.MUST), pass("live/1/order", reports.MUST),
		pass("live/1/advice", reports.SHOULD), pass("live/1/codec", reports.MUST),
	}
	caughtOnce := slices.Clone(uncaught)
	caughtOnce[1].Outcome = reports.Fail

	for _, tc := range []struct {
		name       string
		rec        []reports.CaseResult
		failsAgain map[string]bool // what fails when judged again
		wantRun    []string
		wantCaught []string
	}{
		{"timing bug shows alone", uncaught, map[string]bool{"live/1/period": true}, []string{"live/1/period", "live/1/order"}, []string{"live/1/period"}},
		{"a hole stays a hole", uncaught, nil, []string{"live/1/period", "live/1/order"}, nil},
		{"caught mutants are not run again", caughtOnce, map[string]bool{"live/1/period": true}, nil, []string{"live/1/order"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &Row{Mutant: mutant.Mutant{Name: "m", Suite: "live"}, Record: &reports.Record{Cases: slices.Clone(tc.rec)}}
			r.Caught = caught(r)
			var ran []string
			judgeUncaughtAgain(r, cs, func(again []cases.Case) *reports.Record {
				out := &reports.Record{}
				for _, c := range again {
					ran = append(ran, c.ID)
					o := reports.Pass
					if tc.failsAgain[c.ID] {
						o = reports.Fail
					}
					out.Cases = append(out.Cases, reports.CaseResult{ID: c.ID, Level: c.Level, Outcome: o})
				}
				return out
			})
			if !slices.Equal(ran, tc.wantRun) {
				t.Errorf("judged again %v, want %v", ran, tc.wantRun)
			}
			if !slices.Equal(r.Caught, tc.wantCaught) {
				t.Errorf("caught by %v, want %v", r.Caught, tc.wantCaught)
			}
			for _, c := range r.Record.Cases {
				if slices.Contains(tc.wantRun, c.ID) && !strings.Contains(strings.Join(c.Notes, "\n"), "caught by no MUST case") {
					t.Errorf("%s was judged again but its notes %q do not say why", c.ID, c.Notes)
				}
			}
		})
	}
}
