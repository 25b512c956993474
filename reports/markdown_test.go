package reports

import (
	"fmt"
	"strings"
	"testing"
)

func markdown(t *testing.T, r *Record) string {
	t.Helper()
	var b strings.Builder
	if err := WriteMarkdown(&b, r); err != nil {
		t.Fatalf("WriteMarkdown: %v", err)
	}
	return b.String()
}

func TestMarkdown(t *testing.T) {
	md := markdown(t, fixture())
	tests := []struct {
		name string
		want []string
	}{
		{"headline", []string{"## ❌ conform: not conformant\n", "2 fail, 1 error, 1 warn out of 9 cases (exit 1)."}},
		{"context", []string{"SUT `./mybinding` — mybinding 1.2.3 (c) · seed 1", "corpus `wire/v1 sha256:76d00e3624cb`"}},
		{"counts table", []string{
			"| suite | pass | fail | warn | info | skip | error | total |",
			"| wire | 2 | **1** | 1 | 1 | · | · | 5 |",
			"| streams | 1 | **1** | · | · | 1 | **1** | 4 |",
			"| **all** | 3 | **2** | 1 | 1 | 1 | **1** | 9 |",
		}},
		{"sections", []string{"### fail (2)", "### error (1)", "### warn (1)", "### skip (1)", "<details><summary>info (1): observed, never judged</summary>"}},
		{"case lines", []string{
			"- **`wire/1.3/byte-at-a-time`** MUST · ranvier-wire §1.3 — a vector one byte per read\\\n",
			"- **`streams/3.2/reorder`** MUST · ranvier-wire §3.2 · timeout — the SUT's standard error ended with",
			"- **`wire/6.4/unreadable-counted`** SHOULD · ranvier-wire §6.4 — unreadable frames are not counted",
		}},
		{"reproduce commands", []string{
			"  `" + reproduce("wire/1.3/byte-at-a-time") + "`\n",
			"  `" + reproduce("streams/3.1/keyed-on-pair") + "`\n",
			"  `" + reproduce("streams/3.2/reorder") + "`\n",
			"  `" + reproduce("wire/6.4/unreadable-counted") + "`\n",
		}},
		{"evidence folded", []string{"  <details><summary>evidence</summary>\n\n  ```\n", "  expected: {Frames:[] End:truncated}\n", "  </details>\n"}},
		{"skips grouped", []string{"- unimplemented: gap reports: 1 case(s) — `streams/5/gap-report`", "- declared but unimplemented: `streams/5/gap-report`"}},
		{"coverage notice", []string{"> **Coverage:** 1 case(s) in profiles the SUT declares answered Unimplemented."}},
		{"info notes", []string{"- `wire/8/large-descriptor` INFO · ranvier-wire §8 — a 4 MiB descriptor decoded intact"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, w := range tt.want {
				if !strings.Contains(md, w) {
					t.Errorf("the summary lacks %q\n%s", w, md)
				}
			}
		})
	}
	if strings.Contains(md, "\x1b") {
		t.Error("a raw control character reached the summary")
	}
	if strings.Contains(md, "wire/1.2/prefix-big-endian") {
		t.Error("a passing case is listed")
	}
}

func TestMarkdownEscapes(t *testing.T) {
	r := fixture()
	r.Cases[1].Evidence[0].Message = hostile
	r.SUT.Spec = "exec:./a`b"
	md := markdown(t, r)
	want := "— \\<script\\>alert(1)\\</script\\> \\& \\]\\]\\> \\\\x1b\\[31m \\`tick\\` \\| pipe"
	if !strings.Contains(md, want) {
		t.Errorf("the summary lacks the escaped message %q:\n%s", want, md)
	}
	if !strings.Contains(md, "SUT ``exec:./a`b``") {
		t.Errorf("the SUT's backtick breaks its code span:\n%s", md)
	}
}

func TestMarkdownVerdicts(t *testing.T) {
	tests := []struct {
		name   string
		modify func(r *Record)
		want   string
	}{
		{"conformant", func(r *Record) { r.Cases = r.Cases[:1]; r.ExitCode = 0 }, "## ✅ conform: conformant\n"},
		{"warnings", func(r *Record) { r.Cases = []CaseResult{r.Cases[0], r.Cases[3]}; r.ExitCode = 0 }, "## ✅ conform: conformant, with warnings\n"},
		{"a declared profile incomplete", func(r *Record) { r.Cases = []CaseResult{r.Cases[0], r.Cases[8]}; r.ExitCode = 1 }, "## ❌ conform: incomplete\n"},
		{"accepted as incomplete", func(r *Record) {
			r.Cases = []CaseResult{r.Cases[0], r.Cases[8]}
			r.AllowUnimplemented = true
			r.ExitCode = 0
		}, "## ✅ conform: partly judged\n"},
		{"nothing judged", func(r *Record) { r.Cases = r.Cases[8:]; r.ExitCode = 1 }, "## ❌ conform: incomplete\n"},
		{"only informational cases", func(r *Record) { r.Cases = r.Cases[4:5]; r.ExitCode = 0 }, "## ✅ conform: nothing judged\n"},
		{"part of a profile selected", func(r *Record) {
			r.Cases = r.Cases[:1]
			r.MustInCatalogue = map[string]int{"wire": 40}
			r.ExitCode = 0
		}, "## ✅ conform: partly judged\n"},
		{"lost", func(r *Record) { r.Lost = &Lost{Reason: "3 timeouts", After: "streams/3.2/reorder", NotRun: 1} }, "## ❌ conform: SUT lost\n"},
		{"no profile", func(r *Record) {
			r.StartError = &SUTFailure{Kind: KindStart, Message: "the SUT's Hello declares no profile"}
			r.ExitCode = 3
		}, "## ❌ conform: SUT not started\n"},
		{"known failures", func(r *Record) { r.ExitCode = 0 }, "## ✅ conform: only known failures\n"},
		{"no SUT", func(r *Record) { r.ExitCode = 3 }, "## ❌ conform: SUT not started\n"},
		{"interrupted", func(r *Record) { r.Cases = r.Cases[:1]; r.Interrupted = true }, "## ❌ conform: interrupted\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := fixture()
			tt.modify(r)
			r.Summarize()
			if md := markdown(t, r); !strings.HasPrefix(md, tt.want) {
				t.Errorf("summary starts %.60q, want %q", md, tt.want)
			}
		})
	}
}

func TestMarkdownCompact(t *testing.T) {
	r := fixture()
	r.Cases = nil
	for i := range 120 {
		id := fmt.Sprintf("wire/9/case-%03d", i)
		r.Cases = append(r.Cases, CaseResult{
			ID: id, Level: MUST, Outcome: Fail, Message: "broken",
			Evidence:  []Evidence{{Message: "broken", Input: strings.Repeat("00 ", 10000)}},
			Reproduce: reproduce(id),
		})
	}
	r.Summarize()
	md := markdown(t, r)
	if !strings.Contains(md, "- … and 70 more fail case(s): see the full record.") {
		t.Error("the list of failures is not capped")
	}
	if strings.Contains(md, "case-050") {
		t.Error("case 51 is listed")
	}
	if len(md) > 200_000 {
		t.Errorf("the summary is %d bytes", len(md))
	}
}

func TestMarkdownCode(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain", "`plain`"},
		{"a `b` c", "``a `b` c``"},
		{"`start", "`` `start ``"},
		{"two\nlines", "`two lines`"},
	}
	for _, tt := range tests {
		if got := mdCode(tt.in); got != tt.want {
			t.Errorf("mdCode(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if got, want := mdEscape("a|b <i>*x*</i>"), `a\|b \<i\>\*x\*\</i\>`; got != want {
		t.Errorf("mdEscape = %q, want %q", got, want)
	}
}
