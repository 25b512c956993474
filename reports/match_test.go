package reports_test

import (
	"testing"

	"github.com/conform-suite/conform/reports"
	"github.com/conform-suite/conform/runner"
)

var matchIDs = []string{
	"wire/1.3/byte-at-a-time",
	"wire/1.3/every-split-point",
	"wire/1.2/writer-zero-length",
	"wire/2/max-frame",
	"wire/10/max-frame",
	"streams/3.4/window-is-64",
	"graph/the-payload-discriminating-subscribers-write/x",
	"wirex/1/y",
}

func TestMatchID(t *testing.T) {
	tests := []struct {
		pattern string
		want    []string
	}{
		{"wire/1.3/byte-at-a-time", []string{"wire/1.3/byte-at-a-time"}},
		{"wire/1.3/*", []string{"wire/1.3/byte-at-a-time", "wire/1.3/every-split-point"}},
		{"wire/*", nil}, // '*' stops at '/'
		{"wire/*/max-*", []string{"wire/2/max-frame", "wire/10/max-frame"}},
		{"wire/?/max-frame", []string{"wire/2/max-frame"}},
		{"wire/1.[23]/*", []string{"wire/1.3/byte-at-a-time", "wire/1.3/every-split-point", "wire/1.2/writer-zero-length"}},
		{"wire/**", []string{"wire/1.3/byte-at-a-time", "wire/1.3/every-split-point", "wire/1.2/writer-zero-length", "wire/2/max-frame", "wire/10/max-frame"}},
		{"wire/", []string{"wire/1.3/byte-at-a-time", "wire/1.3/every-split-point", "wire/1.2/writer-zero-length", "wire/2/max-frame", "wire/10/max-frame"}},
		{"wire**", []string{"wire/1.3/byte-at-a-time", "wire/1.3/every-split-point", "wire/1.2/writer-zero-length", "wire/2/max-frame", "wire/10/max-frame", "wirex/1/y"}},
		{"wire/1.3/**", []string{"wire/1.3/byte-at-a-time", "wire/1.3/every-split-point"}},
		{"wire/1.*/**", []string{"wire/1.3/byte-at-a-time", "wire/1.3/every-split-point", "wire/1.2/writer-zero-length"}},
		{"*/*/max-frame", []string{"wire/2/max-frame", "wire/10/max-frame"}},
		{"**", matchIDs},
		{"graph/the-payload-*/**", []string{"graph/the-payload-discriminating-subscribers-write/x"}},
		{"wire/[/x", nil}, // malformed: matches nothing
	}
	for _, tt := range tests {
		t.Run(tt.pattern, func(t *testing.T) {
			var got []string
			for _, id := range matchIDs {
				if reports.MatchID(tt.pattern, id) {
					got = append(got, id)
				}
			}
			if len(got) != len(tt.want) {
				t.Fatalf("MatchID(%q) matches %q, want %q", tt.pattern, got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Fatalf("MatchID(%q) matches %q, want %q", tt.pattern, got, tt.want)
				}
			}
		})
	}
}

// TestMatchIDAgreesWithRunner checks that MatchID selects what runner.MatchID
// selects for every pattern runner handles meaningfully, so that runner can
// call MatchID instead. (runner's "**" takes its prefix literally, so a
// metacharacter before "**" is where MatchID does more.)
func TestMatchIDAgreesWithRunner(t *testing.T) {
	for _, p := range []string{
		"wire/1.3/byte-at-a-time", "wire/1.3/*", "wire/*", "wire/*/max-*", "wire/?/max-frame",
		"wire/1.[23]/*", "wire/**", "wire/", "wire**", "wire/1.3/**", "**", "streams/", "*/*/*",
		"wire/[/x", "nothing/**", "",
	} {
		for _, id := range matchIDs {
			if got, want := reports.MatchID(p, id), runner.MatchID(p, id); got != want {
				t.Errorf("MatchID(%q, %q) = %v, runner.MatchID says %v", p, id, got, want)
			}
		}
	}
}

func TestCheckPatternAndEscape(t *testing.T) {
	for _, p := range []string{"wire/**", "wire/1.3/x", "wire/[12]/*", `wire/a\*b`} {
		if err := reports.CheckPattern(p); err != nil {
			t.Errorf("CheckPattern(%q) = %v", p, err)
		}
	}
	for _, p := range []string{"", "wire/[", `wire/x\`} {
		if err := reports.CheckPattern(p); err == nil {
			t.Errorf("CheckPattern(%q) accepted a bad pattern", p)
		}
	}
	for _, id := range []string{"wire/1.3/plain", "wire/1.3/odd[id]*?", `wire/1.3/back\slash`, "wire/1.3/trailing/"} {
		p := reports.EscapeID(id)
		if !reports.MatchID(p, id) {
			t.Errorf("EscapeID(%q) = %q does not match it", id, p)
		}
		if reports.MatchID(p, id+"x") || reports.MatchID(p, "wire/1.3/other") {
			t.Errorf("EscapeID(%q) = %q matches more than the ID", id, p)
		}
		if reports.IsGlob(p) != (p != id) {
			t.Errorf("IsGlob(%q) = %v", p, reports.IsGlob(p))
		}
	}
}
