package reports

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
)

func text(t *testing.T, r *Record, verbose bool) string {
	t.Helper()
	var b strings.Builder
	if err := WriteText(&b, r, verbose); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestTextFailuresFirst: without -v the failures, errors and warnings are
// shown in full and the rest counted; with -v every case shows; a line
// never reads "INFO  INFO".
func TestTextFailuresFirst(t *testing.T) {
	r := fixture()
	out := text(t, r, false)
	for _, want := range []string{
		"FAIL  MUST   wire/1.3/byte-at-a-time  (ranvier-wire §1.3)\n",
		"WARN  SHOULD wire/6.4/unreadable-counted",
		"ERROR MUST   streams/3.2/reorder",
		"      [timeout] the SUT did not answer within 10s\n",
		"        stderr: panic: index out of range\n          goroutine 1 [running]:\n",
		"not shown: 3 pass, 1 info, 1 skip (-v shows every case)\n",
		"./mybinding: 9 cases, 1.50s wall time: 3 pass, 2 fail, 1 warn, 1 info, 1 skip, 1 error\n",
		"profile wire: not conformant — 3 of 3 MUST case(s) judged, 2 passed, 1 failed\n",
		"profile streams: not conformant",
		"verdict: not conformant — 2 fail, 1 error, 1 warn out of 9 cases (exit 1).\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the output lacks %q:\n%s", want, out)
		}
	}
	for _, hidden := range []string{"wire/1.2/prefix-big-endian", "wire/8/large-descriptor", "streams/5/gap-report  ("} {
		if strings.Contains(out, hidden) {
			t.Errorf("without -v the output shows %s", hidden)
		}
	}
	verbose := text(t, r, true)
	for _, want := range []string{"PASS  MUST   wire/1.2/prefix-big-endian  (ranvier-wire §1.2)\n", "INFO         wire/8/large-descriptor", "note: a 4 MiB descriptor decoded intact", "SKIP  MUST   streams/5/gap-report"} {
		if !strings.Contains(verbose, want) {
			t.Errorf("-v lacks %q:\n%s", want, verbose)
		}
	}
	if regexp.MustCompile(`INFO\s+INFO`).MatchString(verbose) {
		t.Errorf("a line reads INFO INFO:\n%s", verbose)
	}
}

// TestTextRecap: after the summary line, each failing case once with the
// command that reproduces it; known failures marked.
func TestTextRecap(t *testing.T) {
	r := fixture()
	out := text(t, r, false)
	i := strings.Index(out, "\nfailing (3):\n")
	if i < 0 || i < strings.Index(out, "wall time") {
		t.Fatalf("no recap after the summary line:\n%s", out)
	}
	recap := out[i:]
	for _, id := range []string{"wire/1.3/byte-at-a-time", "streams/3.1/keyed-on-pair", "streams/3.2/reorder"} {
		if !regexp.MustCompile(`\n  ` + regexp.QuoteMeta(id) + ` +` + regexp.QuoteMeta(reproduce(id)) + `\n`).MatchString(recap) {
			t.Errorf("the recap lacks %s with its reproduce:\n%s", id, recap)
		}
	}
	b, _ := ParseBaseline(strings.NewReader("wire/1.3/byte-at-a-time  splits\n"))
	res := b.Apply(r, day("2026-01-01"))
	r.Baseline = &res
	if !strings.Contains(text(t, r, false), reproduce("wire/1.3/byte-at-a-time")+"  (known)") {
		t.Error("a known failure is not marked in the recap")
	}
}

// TestTextEscapesSUTText: what a SUT said cannot clear the screen, rewrite
// a line or start a line of its own (a forged PASS).
func TestTextEscapesSUTText(t *testing.T) {
	r := fixture()
	forged := "\x1b[2J\x1b[H\rPASS  MUST   wire/1.3/forged  (x)\n\u202eevil\x9b31m\u009b2J"
	r.Cases[1].Message = "the SUT answered Error: " + forged
	r.Cases[1].Evidence[0].Got = forged + "\n" + forged
	r.Cases[1].Notes = []string{forged}
	r.Cases[7].Evidence[0].Stderr = forged
	r.SUT.Spec = "./x\x1b[31m"
	out := text(t, r, false)
	if strings.ContainsAny(out, "\x1b\r\u202e\u009b") || strings.Contains(out, "\x9b") {
		t.Errorf("a control character reached the terminal:\n%q", out)
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "PASS") {
			t.Errorf("a SUT forged a line: %q", line)
		}
	}
	if !strings.Contains(out, `\x1b[2J\x1b[H\x0dPASS  MUST   wire/1.3/forged  (x)\n\u{202e}evil\x9b31m\u{009b}2J`) {
		t.Errorf("the message is not shown escaped:\n%s", out)
	}
}

// lostRecord is a run whose SUT was lost after 3 timeouts, 60 cases not
// run.
func lostRecord() *Record {
	r := fixture()
	r.Cases = r.Cases[:2]
	for i := range 3 {
		r.Cases = append(r.Cases, CaseResult{ID: fmt.Sprintf("wire/3/t%d", i), Level: MUST, Profile: "wire", Outcome: Error, ErrorKind: KindTimeout,
			Message: "sut timeout: the SUT did not answer in time", Reproduce: reproduce(fmt.Sprintf("wire/3/t%d", i))})
	}
	for i := range 60 {
		r.Cases = append(r.Cases, CaseResult{ID: fmt.Sprintf("wire/4/n%02d", i), Level: MUST, Profile: "wire", Outcome: Error, ErrorKind: KindLost,
			Message: "not run: the SUT was presumed lost after wire/3/t2", Reproduce: reproduce("x")})
	}
	r.Lost = &Lost{Reason: "3 consecutive ops unanswered", After: "wire/3/t2", NotRun: 60,
		Last: &SUTFailure{Kind: KindTimeout, Message: "sut timeout: the SUT did not answer in time", Exit: "signal: killed", Stderr: "last words"}}
	r.Summarize()
	return r
}

// TestTextLostOnce: a lost SUT is reported once, with why and how many
// cases were not run, never one block per case.
func TestTextLostOnce(t *testing.T) {
	out := text(t, lostRecord(), false)
	if n := strings.Count(out, "presumed lost"); n != 2 { // the block and the verdict
		t.Errorf("%d mentions of the lost SUT, want the block and the verdict:\n%s", n, out)
	}
	for _, want := range []string{
		"ERROR  the SUT was presumed lost after wire/3/t2: 3 consecutive ops unanswered\n",
		"       last error (timeout): sut timeout: the SUT did not answer in time\n",
		"       exit: signal: killed\n",
		"last words",
		"       60 case(s) not run, recorded as error (lost)\n",
		"verdict: SUT lost",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "wire/4/n") {
		t.Errorf("cases not run are listed one by one:\n%s", out)
	}
	if n := strings.Count(out, "\n"); n > 60 { // one block per case not run would be 180
		t.Errorf("%d lines for a lost SUT", n)
	}
}

// TestTextStartErrorOnce: a SUT that could not be started is reported once.
func TestTextStartErrorOnce(t *testing.T) {
	r := fixture()
	r.StartError = &SUTFailure{Kind: KindStart, Message: "sut start: the SUT never said Hello", Exit: "exit status 7", Stderr: "boom\n"}
	for i := range r.Cases {
		r.Cases[i] = CaseResult{ID: r.Cases[i].ID, Level: MUST, Outcome: Error, ErrorKind: KindStart, Message: "not run: " + r.StartError.Message, Reproduce: "x"}
	}
	r.ExitCode = 3
	r.Summarize()
	out := text(t, r, false)
	want := "ERROR  the SUT could not be started: sut start: the SUT never said Hello\n" +
		"       exit: exit status 7\n" +
		"       the SUT's standard error ended with:\n" +
		"         boom\n" +
		"       9 case(s) not run, recorded as error (start)\n"
	if !strings.HasPrefix(out, want) {
		t.Errorf("the output starts\n%s\nwant\n%s", out, want)
	}
	if strings.Contains(out, "not run: ") || strings.Contains(out, "failing (") {
		t.Errorf("the cases not run are listed:\n%s", out)
	}
}

func TestVisible(t *testing.T) {
	for in, want := range map[string]string{
		"plain\ttext\n":   "plain\ttext\n",
		"\x1b[31m":        `\x1b[31m`,
		"a\rb":            `a\x0db`,
		"\x7f\xff":        `\x7f\xff`,
		"\u009b2J":        `\u{009b}2J`,
		"\u202eabc\u2066": `\u{202e}abc\u{2066}`,
		"é ✓":             "é ✓",
	} {
		if got := Visible(in); got != want {
			t.Errorf("Visible(%q) = %q, want %q", in, got, want)
		}
	}
	if got := visibleLine("a\nPASS"); got != `a\nPASS` {
		t.Errorf("visibleLine kept a newline: %q", got)
	}
}

func TestClip(t *testing.T) {
	if got := Clip("héllo", 2); got != "h…[5 bytes dropped]" {
		t.Errorf("Clip = %q", got)
	}
	if got := ClipTail("héllo", 4); got != "[2 bytes dropped]…llo" && got != "[3 bytes dropped]…llo" {
		t.Errorf("ClipTail = %q", got)
	}
	if got := Clip("short", 10); got != "short" {
		t.Errorf("Clip = %q", got)
	}
}

// TestDiffAndBaselineEscape: conform diff and the baseline report print
// messages SUTs wrote; no control character reaches the terminal raw.
func TestDiffAndBaselineEscape(t *testing.T) {
	old, now := fixture(), fixture()
	now.Cases[0].Outcome = Fail
	now.Cases[0].Message = "\x1b[2Jgone"
	var b strings.Builder
	if err := WriteDiff(&b, Diff(old, now)); err != nil {
		t.Fatal(err)
	}
	res := (&Baseline{}).Apply(now, day("2026-01-01"))
	if err := WriteBaselineText(&b, res); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "\x1b") || !strings.Contains(b.String(), `\x1b[2Jgone`) {
		t.Errorf("escapes not made visible:\n%q", b.String())
	}
}
