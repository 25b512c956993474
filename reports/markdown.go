package reports

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// Limits that keep the Markdown summary within what a pull-request comment
// (65,536 characters) and GITHUB_STEP_SUMMARY (1 MiB) accept.
const (
	// mdCasesPerOutcome is how many cases of one outcome are listed in full.
	mdCasesPerOutcome = 50
	// mdEvidencePerCase is how many evidence entries a case shows.
	mdEvidencePerCase = 3
	// mdFieldLimit bounds each evidence field.
	mdFieldLimit = 600
)

// WriteMarkdown writes r as GitHub-flavoured Markdown, for a pull-request
// comment or GITHUB_STEP_SUMMARY: a headline verdict, the run's context, a
// table of counts per suite and outcome, then the cases that did not pass,
// grouped by outcome (fail, error, warn, then skip and info), each with its
// level, spec section, first evidence message and reproduce command in a
// code span, its evidence folded in a <details> block. Skipped cases are
// grouped by reason and informational ones folded, so that a large run stays
// compact; at most 50 cases of one outcome are listed in full.
func WriteMarkdown(w io.Writer, r *Record) error {
	var b strings.Builder
	v := verdictOf(r)
	mark := "✅"
	if !v.OK {
		mark = "❌"
	}
	fmt.Fprintf(&b, "## %s conform: %s\n\n", mark, mdEscape(v.Headline))
	fmt.Fprintf(&b, "%s\n\n", mdEscape(v.Detail))

	fmt.Fprintf(&b, "SUT %s", mdCode(r.SUT.Spec))
	if h := hello(r).String(); h != "" {
		fmt.Fprintf(&b, " — %s", mdEscape(h))
	}
	fmt.Fprintf(&b, " · seed %d", r.Seed)
	if r.Strict {
		b.WriteString(" · strict")
	}
	if r.Conform != "" {
		fmt.Fprintf(&b, " · conform %s", mdCode(r.Conform))
	}
	if r.Corpus != "" {
		fmt.Fprintf(&b, " · corpus %s", mdCode(shortCorpus(r.Corpus)))
	}
	fmt.Fprintf(&b, " · %.1fs\n\n", r.DurationSec)

	if r.Interrupted {
		b.WriteString("> **Interrupted:** the run stopped before every selected case ran; the record holds the cases that did.\n\n")
	}
	if len(r.Undeclared) > 0 {
		fmt.Fprintf(&b, "> Skipped: the SUT's Hello does not declare profile(s) %s.\n\n", mdCodes(r.Undeclared))
	}
	if len(r.Unimplemented) > 0 {
		fmt.Fprintf(&b, "> **Coverage:** %d case(s) in profiles the SUT declares answered Unimplemented.\n\n", len(r.Unimplemented))
	}
	if f := r.StartError; f != nil {
		fmt.Fprintf(&b, "> **%s** (%s): %s", capitalize(f.StartHeadline()), f.Kind, mdEscape(Clip(f.Message, 300)))
		if f.Exit != "" {
			fmt.Fprintf(&b, " — %s", mdCode(Clip(f.Exit, 100)))
		}
		b.WriteString("\n\n")
		if f.Stderr != "" {
			b.WriteString(mdFence(Visible(ClipTail(f.Stderr, mdFieldLimit))) + "\n\n")
		}
	}
	if l := r.Lost; l != nil {
		fmt.Fprintf(&b, "> **The SUT was presumed lost** after %s: %s; %d case(s) were not run.\n\n", mdCode(l.After), mdEscape(l.Reason), l.NotRun)
	}
	writeMarkdownProfiles(&b, r)

	writeMarkdownCounts(&b, r)

	byOutcome := map[Outcome][]CaseResult{}
	for _, c := range r.Cases {
		byOutcome[c.Outcome] = append(byOutcome[c.Outcome], c)
	}
	for _, o := range []Outcome{Fail, Error, Warn} {
		writeMarkdownCases(&b, o, byOutcome[o])
	}
	writeMarkdownSkips(&b, byOutcome[Skip], r.Unimplemented)
	writeMarkdownInfo(&b, byOutcome[Info])

	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("writing Markdown summary: %w", err)
	}
	return nil
}

// writeMarkdownProfiles writes the verdict on each declared profile.
func writeMarkdownProfiles(b *strings.Builder, r *Record) {
	var shown []ProfileVerdict
	var notSelected []string
	for _, v := range r.Summary.ByProfile {
		if v.Status == ProfileNotSelected {
			notSelected = append(notSelected, v.Profile)
		} else {
			shown = append(shown, v)
		}
	}
	if len(shown) == 0 && len(notSelected) == 0 {
		return
	}
	if len(shown) > 0 {
		b.WriteString("| declared profile | verdict | MUST judged | MUST passed | unimplemented | failed | errors |\n|:--|:--|--:|--:|--:|--:|--:|\n")
		for _, v := range shown {
			status := string(v.Status)
			if v.Accepted != "" {
				status += " (accepted: " + v.Accepted + ")"
			}
			if v.PartialSelection() {
				status += fmt.Sprintf(" (selected %d of %d MUST)", v.Must, v.MustInCatalogue)
			}
			fmt.Fprintf(b, "| %s | %s | %d of %d | %d | %d | %d | %d |\n", mdEscape(v.Profile), mdEscape(status), v.MustJudged, v.Must, v.MustPassed, v.MustUnimplemented, v.Failed, v.Errors)
		}
		b.WriteString("\n")
	}
	if len(notSelected) > 0 {
		fmt.Fprintf(b, "Declared, not selected: %s.\n\n", mdCodes(notSelected))
	}
}

// writeMarkdownCounts writes the suite × outcome table.
func writeMarkdownCounts(b *strings.Builder, r *Record) {
	b.WriteString("| suite |")
	for _, o := range Outcomes {
		fmt.Fprintf(b, " %s |", o)
	}
	b.WriteString(" total |\n|:--|")
	for range Outcomes {
		b.WriteString("--:|")
	}
	b.WriteString("--:|\n")
	row := func(name string, counts map[Outcome]int) {
		fmt.Fprintf(b, "| %s |", name)
		total := 0
		for _, o := range Outcomes {
			n := counts[o]
			total += n
			switch {
			case n == 0:
				b.WriteString(" · |")
			case o == Fail || o == Error || (o == Warn && r.Strict):
				fmt.Fprintf(b, " **%d** |", n)
			default:
				fmt.Fprintf(b, " %d |", n)
			}
		}
		fmt.Fprintf(b, " %d |\n", total)
	}
	for _, s := range suiteNames(r) {
		row(mdEscape(s), r.Summary.BySuite[s])
	}
	if len(r.Summary.BySuite) != 1 {
		row("**all**", r.Summary.Counts)
	}
	b.WriteString("\n")
}

// writeMarkdownCases lists the cases of one judged outcome in full.
func writeMarkdownCases(b *strings.Builder, o Outcome, cs []CaseResult) {
	if len(cs) == 0 {
		return
	}
	fmt.Fprintf(b, "### %s (%d)\n\n", o, len(cs))
	for i, c := range cs {
		if i == mdCasesPerOutcome {
			fmt.Fprintf(b, "- … and %d more %s case(s): see the full record.\n", len(cs)-i, o)
			break
		}
		fmt.Fprintf(b, "- **%s** %s · %s", mdCode(c.ID), c.Level, mdEscape(c.Spec))
		if c.ErrorKind != "" {
			fmt.Fprintf(b, " · %s", mdEscape(string(c.ErrorKind)))
		}
		if m := oneLine(firstMessage(c)); m != "" {
			fmt.Fprintf(b, " — %s", mdEscape(Clip(m, 300)))
		}
		if c.Reproduce != "" {
			// A backslash before the newline is a hard line break.
			fmt.Fprintf(b, "\\\n  %s", mdCode(c.Reproduce))
		}
		b.WriteString("\n")
		if details := markdownEvidence(c); details != "" {
			b.WriteString("  <details><summary>evidence</summary>\n\n")
			b.WriteString(details)
			b.WriteString("  </details>\n")
		}
	}
	b.WriteString("\n")
}

// markdownEvidence renders c's evidence as indented fenced blocks, clipped.
func markdownEvidence(c CaseResult) string {
	var t strings.Builder
	if c.Message != "" && c.Message != firstMessage(c) {
		fmt.Fprintf(&t, "%s\n", Clip(c.Message, mdFieldLimit))
	}
	for i, e := range c.Evidence {
		if i == mdEvidencePerCase {
			fmt.Fprintf(&t, "… %d more evidence entries in the record\n", len(c.Evidence)-i)
			break
		}
		if i > 0 || t.Len() > 0 {
			t.WriteString("\n")
		}
		fmt.Fprintf(&t, "%s\n", Clip(e.Message, mdFieldLimit))
		for _, f := range evidenceFields(e) {
			v := strings.TrimRight(Clip(f.Value, mdFieldLimit), "\n")
			if strings.Contains(v, "\n") {
				fmt.Fprintf(&t, "%s:\n  %s\n", f.Name, strings.ReplaceAll(v, "\n", "\n  "))
			} else {
				fmt.Fprintf(&t, "%s: %s\n", f.Name, v)
			}
		}
	}
	for _, n := range c.Notes {
		fmt.Fprintf(&t, "note: %s\n", Clip(n, mdFieldLimit))
	}
	if t.Len() == 0 {
		return ""
	}
	return indentLines(mdFence(Visible(t.String())), "  ") + "\n"
}

// writeMarkdownSkips writes the skipped cases, grouped by reason.
func writeMarkdownSkips(b *strings.Builder, cs []CaseResult, unimplemented []string) {
	if len(cs) == 0 {
		return
	}
	fmt.Fprintf(b, "### skip (%d)\n\n", len(cs))
	var reasons []string
	byReason := map[string][]string{}
	for _, c := range cs {
		m := oneLine(c.Message)
		if m == "" {
			m = "no reason recorded"
		}
		if _, ok := byReason[m]; !ok {
			reasons = append(reasons, m)
		}
		byReason[m] = append(byReason[m], c.ID)
	}
	for _, m := range reasons {
		ids := byReason[m]
		fmt.Fprintf(b, "- %s: %d case(s)", mdEscape(Clip(m, 300)), len(ids))
		if len(ids) <= 3 {
			fmt.Fprintf(b, " — %s\n", mdCodes(ids))
			continue
		}
		b.WriteString("\n  <details><summary>cases</summary>\n\n")
		fmt.Fprintf(b, "  %s\n\n  </details>\n", mdCodes(clipList(ids, mdCasesPerOutcome)))
	}
	if len(unimplemented) > 0 {
		fmt.Fprintf(b, "- declared but unimplemented: %s\n", mdCodes(clipList(unimplemented, mdCasesPerOutcome)))
	}
	b.WriteString("\n")
}

// writeMarkdownInfo folds the informational cases and their notes.
func writeMarkdownInfo(b *strings.Builder, cs []CaseResult) {
	if len(cs) == 0 {
		return
	}
	fmt.Fprintf(b, "<details><summary>info (%d): observed, never judged</summary>\n\n", len(cs))
	for i, c := range cs {
		if i == mdCasesPerOutcome {
			fmt.Fprintf(b, "- … and %d more\n", len(cs)-i)
			break
		}
		fmt.Fprintf(b, "- %s %s · %s", mdCode(c.ID), c.Level, mdEscape(c.Spec))
		if len(c.Notes) > 0 {
			fmt.Fprintf(b, " — %s", mdEscape(Clip(oneLine(strings.Join(c.Notes, "; ")), 300)))
		}
		b.WriteString("\n")
	}
	b.WriteString("\n</details>\n")
}

// clipList returns at most n items of s, the last one saying how many more
// there are.
func clipList(s []string, n int) []string {
	if len(s) <= n {
		return s
	}
	return append(slices.Clip(s[:n]), fmt.Sprintf("… %d more", len(s)-n))
}

// mdCodes renders each item as a code span, comma-separated.
func mdCodes(items []string) string {
	out := make([]string, len(items))
	for i, s := range items {
		out[i] = mdCode(s)
	}
	return strings.Join(out, ", ")
}

// mdCode renders s as one inline code span, whatever backticks it holds.
func mdCode(s string) string {
	s = strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ").Replace(s)
	fence := strings.Repeat("`", longestRun(s, '`')+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		s = " " + s + " "
	}
	return fence + s + fence
}

// mdFence renders s as a fenced code block, whatever backticks it holds.
func mdFence(s string) string {
	fence := strings.Repeat("`", max(3, longestRun(s, '`')+1))
	return fence + "\n" + strings.TrimRight(s, "\n") + "\n" + fence
}

// mdEscape escapes the characters that Markdown or the HTML it allows would
// read as markup.
func mdEscape(s string) string {
	var b strings.Builder
	for _, r := range oneLine(Visible(s)) {
		switch r {
		case '\\', '`', '*', '_', '[', ']', '<', '>', '|', '#', '~', '!', '&':
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

func longestRun(s string, c byte) int {
	longest, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	return longest
}

func indentLines(s, prefix string) string {
	return prefix + strings.ReplaceAll(s, "\n", "\n"+prefix)
}

// shortCorpus abbreviates the digest in a corpus name.
func shortCorpus(s string) string {
	i := strings.Index(s, "sha256:")
	if i < 0 || len(s) < i+7+12 {
		return s
	}
	end := i + 7
	for end < len(s) && isHex(s[end]) {
		end++
	}
	if end-(i+7) <= 12 {
		return s
	}
	return s[:i+7+12] + s[end:]
}
