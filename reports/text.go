package reports

import (
	"fmt"
	"io"
	"strings"
)

// textFieldLimit bounds each evidence field on a terminal, and
// textLineLimit each one-line message; the record keeps more (MaxField,
// MaxMessage), the HTML page all of what the record keeps.
const (
	textFieldLimit = 2 << 10
	textLineLimit  = 1 << 10
)

// textRecapIDs bounds the IDs a notice lists inline.
const textRecapIDs = 10

// WriteText writes the terminal summary of r, for a person reading a
// terminal or a CI log:
//
//   - every failing, erring and warning case in full, in record order: its
//     outcome, level, ID and spec section, its message, evidence and notes,
//     and the command that reproduces it alone; with verbose, every other
//     case too (passes one line each);
//   - a SUT that could not be started, or was lost, once: why, how its
//     process ended, the tail of its standard error, and how many cases
//     were not run (those cases are not listed one by one);
//   - how many cases were not shown, without verbose;
//   - the summary line: the SUT, the number of cases, the run's wall time
//     and the count of each outcome;
//   - the verdict on each profile the SUT declares, and the run's verdict;
//   - a recap of the failing cases, one line each: the ID and the command
//     that reproduces it.
//
// Everything the SUT supplied is clipped and has its control characters
// and escape sequences made visible, so that no SUT can clear a terminal,
// rewrite a line or print a line that looks like conform's own.
func WriteText(w io.Writer, r *Record, verbose bool) error {
	var b strings.Builder
	notRun := func(c CaseResult) bool {
		return c.Outcome == Error && (c.ErrorKind == KindLost && r.Lost != nil || c.ErrorKind == KindStart && r.StartError != nil)
	}
	hidden := map[Outcome]int{}
	for _, c := range r.Cases {
		if notRun(c) {
			continue
		}
		switch {
		case c.Outcome == Fail || c.Outcome == Warn || c.Outcome == Error:
			writeTextCase(&b, c, true)
		case verbose:
			writeTextCase(&b, c, c.Outcome != Pass)
		default:
			hidden[c.Outcome]++
		}
	}
	if f := r.StartError; f != nil {
		fmt.Fprintf(&b, "ERROR  %s: %s\n", f.StartHeadline(), visibleLine(Clip(f.Message, textLineLimit)))
		writeTextFailure(&b, f)
		if n := countKind(r, KindStart); n > 0 {
			fmt.Fprintf(&b, "       %d case(s) not run, recorded as error (%s)\n", n, KindStart)
		}
	}
	if l := r.Lost; l != nil {
		fmt.Fprintf(&b, "ERROR  the SUT was presumed lost after %s: %s\n", l.After, visibleLine(l.Reason))
		if l.Last != nil {
			fmt.Fprintf(&b, "       last error (%s): %s\n", l.Last.Kind, visibleLine(Clip(l.Last.Message, textLineLimit)))
			writeTextFailure(&b, l.Last)
		}
		fmt.Fprintf(&b, "       %d case(s) not run, recorded as error (%s)\n", l.NotRun, KindLost)
	}

	var notices []string
	if len(r.Undeclared) > 0 {
		notices = append(notices, fmt.Sprintf("skipped: the SUT's Hello does not declare profile(s) %s", strings.Join(r.Undeclared, ", ")))
	}
	if len(r.Unimplemented) > 0 {
		notices = append(notices, fmt.Sprintf("coverage: %d case(s) in declared profiles answered Unimplemented: %s", len(r.Unimplemented), strings.Join(clipList(r.Unimplemented, textRecapIDs), ", ")))
	}
	if r.Interrupted {
		notices = append(notices, "the run was interrupted: the record holds the cases that ran")
	}
	var shown []string
	for _, o := range []Outcome{Pass, Info, Skip} {
		if hidden[o] > 0 {
			shown = append(shown, fmt.Sprintf("%d %s", hidden[o], o))
		}
	}
	if len(shown) > 0 {
		notices = append(notices, fmt.Sprintf("not shown: %s (-v shows every case)", strings.Join(shown, ", ")))
	}
	if len(notices) > 0 {
		b.WriteString("\n" + strings.Join(notices, "\n") + "\n")
	}

	fmt.Fprintf(&b, "\n%s: %d cases, %.2fs wall time:", visibleLine(r.SUT.Spec), r.Summary.Total, r.DurationSec)
	for _, o := range Outcomes {
		fmt.Fprintf(&b, " %d %s", r.Summary.Counts[o], o)
		if o != Error {
			b.WriteString(",")
		}
	}
	b.WriteString("\n")
	var notSelected []string
	for _, v := range r.Summary.ByProfile {
		if v.Status == ProfileNotSelected {
			notSelected = append(notSelected, v.Profile)
			continue
		}
		fmt.Fprintf(&b, "profile %s\n", visibleLine(v.String()))
	}
	if len(notSelected) > 0 {
		fmt.Fprintf(&b, "declared, not selected: %s\n", visibleLine(strings.Join(notSelected, ", ")))
	}
	v := verdictOf(r)
	fmt.Fprintf(&b, "verdict: %s — %s\n", v.Headline, visibleLine(v.Detail))

	writeTextRecap(&b, r, notRun)
	_, err := io.WriteString(w, b.String())
	return err
}

// writeTextCase writes one case: a header line, and with full its message,
// evidence, notes and reproduce command.
func writeTextCase(b *strings.Builder, c CaseResult, full bool) {
	level := string(c.Level)
	if strings.EqualFold(level, string(c.Outcome)) {
		level = "" // never "INFO  INFO"
	}
	fmt.Fprintf(b, "%-5s %-6s %s  (%s)\n", strings.ToUpper(string(c.Outcome)), level, c.ID, c.Spec)
	if !full {
		return
	}
	if c.Message != "" {
		kind := ""
		if c.ErrorKind != "" {
			kind = "[" + string(c.ErrorKind) + "] "
		}
		fmt.Fprintf(b, "      %s%s\n", kind, visibleLine(Clip(c.Message, textLineLimit)))
	}
	for _, e := range c.Evidence {
		fmt.Fprintf(b, "      - %s\n", visibleLine(Clip(e.Message, textLineLimit)))
		for _, f := range evidenceFields(e) {
			fmt.Fprintf(b, "        %s: %s\n", f.Name, textBlock(f.Value, "          "))
		}
		if e.Expected != "" && e.Expected == e.Got && e.Diff == "" {
			b.WriteString("        note: expected and got read the same; the difference lies in what they do not show (a field's presence, a type)\n")
		}
	}
	for _, n := range c.Notes {
		fmt.Fprintf(b, "      note: %s\n", visibleLine(Clip(n, textLineLimit)))
	}
	if c.Reproduce != "" && c.Outcome != Pass {
		fmt.Fprintf(b, "      reproduce: %s\n", visibleLine(c.Reproduce))
	}
}

// writeTextFailure writes how a SUT process ended and its standard error.
func writeTextFailure(b *strings.Builder, f *SUTFailure) {
	if f.Exit != "" {
		fmt.Fprintf(b, "       exit: %s\n", visibleLine(f.Exit))
	}
	if s := strings.TrimRight(f.Stderr, "\n"); s != "" {
		fmt.Fprintf(b, "       the SUT's standard error ended with:\n         %s\n", textBlock(ClipTail(s, textFieldLimit), "         "))
	}
}

// writeTextRecap writes, after the summary, one line per failing case with
// the command that reproduces it; cases not run are counted, not listed.
func writeTextRecap(b *strings.Builder, r *Record, notRun func(CaseResult) bool) {
	known := map[string]bool{}
	if r.Baseline != nil {
		for _, c := range r.Baseline.Known {
			known[c.ID] = true
		}
	}
	var failing []CaseResult
	width := 0
	for _, c := range r.Cases {
		if Failing(c, r.Strict) && !notRun(c) {
			failing = append(failing, c)
			width = max(width, len(c.ID))
		}
	}
	if len(failing) == 0 {
		return
	}
	fmt.Fprintf(b, "\nfailing (%d):\n", len(failing))
	for _, c := range failing {
		mark := ""
		if known[c.ID] {
			mark = "  (known)"
		}
		fmt.Fprintf(b, "  %-*s  %s%s\n", width, c.ID, visibleLine(c.Reproduce), mark)
	}
}

// textBlock renders a field value for the terminal: clipped, its unsafe
// characters made visible, and every line after the first indented by
// indent, so that nothing a SUT sent starts a line of its own.
func textBlock(s, indent string) string {
	s = strings.TrimRight(Visible(Clip(s, textFieldLimit)), "\n")
	return strings.ReplaceAll(s, "\n", "\n"+indent)
}

// countKind counts r's error cases of one kind.
func countKind(r *Record, k ErrorKind) int {
	n := 0
	for _, c := range r.Cases {
		if c.Outcome == Error && c.ErrorKind == k {
			n++
		}
	}
	return n
}
