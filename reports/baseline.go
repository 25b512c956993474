package reports

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"
)

// Baseline is a parsed baseline: the list of a binding's known failures, so
// that its CI fails on new failures only. A baseline is a UTF-8 text file,
// one entry a line:
//
//	# The C binding has no gap accounting yet.
//	streams/**                    gap accounting unimplemented  issue=https://example.org/b/12
//	wire/1.3/byte-at-a-time       splits reads wrongly  expires=2026-03-31
//
// The format, exactly:
//
//   - Blank lines, and lines whose first non-blank character is '#', are
//     ignored. A '#' elsewhere is ordinary text (URLs hold them), so there
//     are no end-of-line comments.
//   - An entry's words are separated by spaces or tabs. The first word is a
//     case ID or a glob, matched as MatchID does: path.Match syntax ('*' and
//     '?' stop at '/'), a trailing "**" or "/" matching every ID under that
//     prefix.
//   - A word "issue=URL" links the entry to an issue; the URL must be
//     absolute (have a scheme).
//   - A word "expires=YYYY-MM-DD" bounds the entry: it excuses failures up to
//     and including that day (in the caller's time zone, see Apply) and is
//     expired from the next day on.
//   - Each of issue= and expires= may appear once, anywhere after the
//     pattern. All the other words, joined by single spaces, are the reason,
//     which is required.
//   - A pattern may be listed only once.
//
// A line's leading and trailing blanks, and a trailing carriage return, are
// ignored.
type Baseline struct {
	// Entries are the file's entries in file order.
	Entries []BaselineEntry `json:"entries"`
}

// BaselineEntry is one line of a baseline.
type BaselineEntry struct {
	// Pattern is the case ID or glob.
	Pattern string `json:"pattern"`
	Reason  string `json:"reason"`
	// Issue is the issue link, or "".
	Issue string `json:"issue,omitempty"`
	// Expires is the last day the entry excuses failures (midnight UTC of
	// that date), or the zero time when it does not expire.
	Expires time.Time `json:"expires,omitzero"`
	// Line is the entry's line number in its file, counting from 1.
	Line int `json:"line"`
}

// dateLayout is the layout of expires=.
const dateLayout = "2006-01-02"

// ExpiredOn reports whether e is expired on the calendar day of today, in
// today's location: whether that day is after e.Expires.
func (e BaselineEntry) ExpiredOn(today time.Time) bool {
	if e.Expires.IsZero() {
		return false
	}
	y, m, d := today.Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC).After(e.Expires)
}

// String returns e as a baseline line.
func (e BaselineEntry) String() string {
	s := e.Pattern + "  " + e.Reason
	if e.Issue != "" {
		s += "  issue=" + e.Issue
	}
	if !e.Expires.IsZero() {
		s += "  expires=" + e.Expires.Format(dateLayout)
	}
	return s
}

// maxBaselineErrors is how many line errors ParseBaseline reports at once.
const maxBaselineErrors = 20

// ParseBaseline reads a baseline in the format Baseline documents. Its error
// names the line of every mistake ("line 3: …"), up to twenty of them. An
// input above MaxBaselineSize is refused.
func ParseBaseline(r io.Reader) (*Baseline, error) {
	return parseBaseline(r, "line ")
}

// MaxBaselineSize bounds a baseline file: far above any list of known
// failures conform's catalogue can need, and small enough that reading it
// whole costs little.
const MaxBaselineSize = 16 << 20

// ReadBaseline reads the baseline file at path; its errors read
// "path:3: …". A file above MaxBaselineSize is refused.
func ReadBaseline(path string) (*Baseline, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading baseline: %w", err)
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() && st.Size() > MaxBaselineSize {
		return nil, fmt.Errorf("reading baseline %s: larger than %d MiB", path, MaxBaselineSize>>20)
	}
	b, err := parseBaseline(f, path+":")
	if err != nil {
		return nil, fmt.Errorf("baseline %s:\n%w", path, err)
	}
	return b, nil
}

func parseBaseline(r io.Reader, where string) (*Baseline, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxBaselineSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxBaselineSize {
		return nil, fmt.Errorf("larger than %d MiB: not a list of known failures", MaxBaselineSize>>20)
	}
	b := &Baseline{}
	var errs []error
	seen := map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		e, err := parseBaselineLine(line)
		if err == nil {
			if prev, dup := seen[e.Pattern]; dup {
				err = fmt.Errorf("%s is already listed on line %d", e.Pattern, prev)
			}
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s%d: %w", where, n, err))
			if len(errs) == maxBaselineErrors {
				errs = append(errs, errors.New("too many errors"))
				break
			}
			continue
		}
		e.Line = n
		seen[e.Pattern] = n
		b.Entries = append(b.Entries, e)
	}
	if err := sc.Err(); err != nil {
		errs = append(errs, fmt.Errorf("%s%d: %w", where, n+1, err))
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return b, nil
}

func parseBaselineLine(line string) (BaselineEntry, error) {
	words := strings.Fields(line)
	e := BaselineEntry{Pattern: words[0]}
	if err := CheckPattern(e.Pattern); err != nil {
		return e, err
	}
	if strings.HasPrefix(e.Pattern, "issue=") || strings.HasPrefix(e.Pattern, "expires=") {
		return e, fmt.Errorf("the line must start with a case ID or glob, not %s", e.Pattern)
	}
	var reason []string
	var sawIssue, sawExpires bool
	for _, w := range words[1:] {
		switch {
		case strings.HasPrefix(w, "issue="):
			if sawIssue {
				return e, errors.New("issue= is given twice")
			}
			sawIssue = true
			e.Issue = strings.TrimPrefix(w, "issue=")
			u, err := url.Parse(e.Issue)
			if err != nil || u.Scheme == "" || e.Issue == "" {
				return e, fmt.Errorf("issue=%s is not an absolute URL", e.Issue)
			}
		case strings.HasPrefix(w, "expires="):
			if sawExpires {
				return e, errors.New("expires= is given twice")
			}
			sawExpires = true
			v := strings.TrimPrefix(w, "expires=")
			t, err := time.Parse(dateLayout, v)
			if err != nil {
				return e, fmt.Errorf("expires=%s is not a date in the form YYYY-MM-DD", v)
			}
			e.Expires = t
		default:
			reason = append(reason, w)
		}
	}
	e.Reason = strings.Join(reason, " ")
	if e.Reason == "" {
		return e, fmt.Errorf("%s has no reason: every entry says why the case is allowed to fail", e.Pattern)
	}
	return e, nil
}

// BaselineCase is a case of the record as a baseline sees it.
type BaselineCase struct {
	ID        string    `json:"id"`
	Level     Level     `json:"level"`
	Outcome   Outcome   `json:"outcome"`
	ErrorKind ErrorKind `json:"error_kind,omitempty"`
	Message   string    `json:"message,omitempty"`
	Reproduce string    `json:"reproduce,omitempty"`
	// Entry is, for a known failure, the entry that excuses it; for a new
	// failure, the expired entry that would have excused it, or nil; for an
	// unexpected pass, the entry that lists it.
	Entry *BaselineEntry `json:"entry,omitempty"`
}

// BaselineResult is a baseline applied to a record.
type BaselineResult struct {
	// Known are the failing cases an unexpired entry excuses, in record
	// order. A case is failing when its outcome is fail or error, or warn
	// under --strict.
	Known []BaselineCase `json:"known_failures"`
	// New are the failing cases no unexpired entry excuses, in record order.
	New []BaselineCase `json:"new_failures"`
	// UnexpectedPasses are the passing cases a baseline still lists, in
	// record order: cases an exact-ID entry names, and the cases a glob
	// entry matches when none of the cases it matches fails any more. (A
	// glob that still excuses a failure is needed; its passing cases are
	// not reported.) Each case appears once, with the first such entry.
	UnexpectedPasses []BaselineCase `json:"unexpected_passes"`
	// Stale are the unexpired entries that match no case of the record, in
	// file order.
	Stale []BaselineEntry `json:"stale_entries"`
	// Expired are the entries past their expiry date, in file order; they
	// excuse nothing.
	Expired []BaselineEntry `json:"expired_entries"`
	// Unimplemented are the MUST cases of profiles the SUT declares that
	// it answered Unimplemented and no unexpired entry accepts, in record
	// order; each makes its profile incomplete and fails the run. (Those an
	// entry accepts are among Known, with outcome skip.) Empty under
	// --allow-unimplemented, which accepts them all.
	Unimplemented []BaselineCase `json:"unimplemented"`
	// OutsideSelection are the unexpired entries that match no case of the
	// record but some case of conform's catalogue: the run's --profile or
	// --case left those cases out, so the entries are not stale.
	OutsideSelection []BaselineEntry `json:"outside_selection"`
	// Interrupted, NoSUT and NothingJudged carry the record's own verdict,
	// which no baseline excuses: an interrupted run, a SUT that could not
	// be started or never said Hello (record exit code 3), and a run that
	// judged none of the cases it could have.
	Interrupted   bool `json:"interrupted"`
	NoSUT         bool `json:"no_sut"`
	NothingJudged bool `json:"nothing_judged"`
}

// Apply classifies r's cases and b's entries against each other, judging
// expiry on the calendar day of today (pass time.Now()). When several
// entries match a case, the first unexpired one in file order excuses it.
// Warn counts as failing only when r.Strict is set. An unimplemented MUST
// case of a declared profile is a gap an entry may accept, as it may
// excuse a failure. Every entry matching no case of r is stale; see
// ApplyWithin for a run that selected part of the catalogue.
func (b *Baseline) Apply(r *Record, today time.Time) BaselineResult {
	return b.ApplyWithin(r, today, nil)
}

// ApplyWithin is Apply for a run that selected part of a catalogue whose
// case IDs are catalogue: an entry that matches no case of r but some ID of
// catalogue is outside the selection, not stale. A nil catalogue is r's
// own cases.
func (b *Baseline) ApplyWithin(r *Record, today time.Time, catalogue []string) BaselineResult {
	res := BaselineResult{Interrupted: r.Interrupted, NoSUT: r.ExitCode == 3 || r.StartError != nil, NothingJudged: r.NothingJudged()}
	unimpl := map[string]bool{}
	for _, id := range r.Unimplemented {
		unimpl[id] = true
	}
	var entries []BaselineEntry
	if b != nil {
		entries = b.Entries
	}
	expired := make([]bool, len(entries))
	for i, e := range entries {
		expired[i] = e.ExpiredOn(today)
	}
	matched := make([]bool, len(entries)) // matches any case
	matchesFailing := make([]bool, len(entries))
	passes := make([][]int, len(entries)) // indices into r.Cases
	for ci, c := range r.Cases {
		gap := c.Outcome == Skip && c.Level == MUST && unimpl[c.ID]
		failing := Failing(c, r.Strict) || gap
		active, lapsed := -1, -1
		for i, e := range entries {
			if !MatchID(e.Pattern, c.ID) {
				continue
			}
			matched[i] = true
			if failing {
				matchesFailing[i] = true
			}
			switch {
			case expired[i]:
				if lapsed < 0 {
					lapsed = i
				}
			default:
				if active < 0 {
					active = i
				}
				if c.Outcome == Pass {
					passes[i] = append(passes[i], ci)
				}
			}
		}
		if !failing {
			continue
		}
		bc := baselineCase(c)
		if active >= 0 {
			bc.Entry = &entries[active]
			res.Known = append(res.Known, bc)
			continue
		}
		if lapsed >= 0 {
			bc.Entry = &entries[lapsed]
		}
		switch {
		case !gap:
			res.New = append(res.New, bc)
		case !r.AllowUnimplemented:
			res.Unimplemented = append(res.Unimplemented, bc)
		}
	}
	byCase := map[int]int{} // case index → entry index
	for i, e := range entries {
		if expired[i] || (IsGlob(e.Pattern) && matchesFailing[i]) {
			continue
		}
		for _, ci := range passes[i] {
			if _, ok := byCase[ci]; !ok {
				byCase[ci] = i
			}
		}
	}
	for ci := range r.Cases {
		if i, ok := byCase[ci]; ok {
			bc := baselineCase(r.Cases[ci])
			bc.Entry = &entries[i]
			res.UnexpectedPasses = append(res.UnexpectedPasses, bc)
		}
	}
	for i, e := range entries {
		switch {
		case expired[i]:
			res.Expired = append(res.Expired, e)
		case matched[i]:
		case slices.ContainsFunc(catalogue, func(id string) bool { return MatchID(e.Pattern, id) }):
			res.OutsideSelection = append(res.OutsideSelection, e)
		default:
			res.Stale = append(res.Stale, e)
		}
	}
	return res
}

func baselineCase(c CaseResult) BaselineCase {
	return BaselineCase{
		ID: c.ID, Level: c.Level, Outcome: c.Outcome, ErrorKind: c.ErrorKind,
		Message: oneLine(c.Message), Reproduce: c.Reproduce,
	}
}

// ExitCode returns the exit code of a run gated by a baseline:
//
//   - 3 when the SUT could not be started or never said Hello;
//   - 1 on any new failure, or when the run was interrupted;
//   - 1 on an unimplemented MUST case of a declared profile that no entry
//     accepts (and --allow-unimplemented does not), or when the run judged
//     none of the cases it could have;
//   - 1 when strictBaseline is set and the baseline has unexpected passes,
//     stale entries or expired entries;
//   - 0 otherwise: every failure is a known one. Unexpected passes, stale
//     and expired entries are reported, but without strictBaseline they do
//     not fail the run; entries outside the selection never do.
func (res BaselineResult) ExitCode(strictBaseline bool) int {
	switch {
	case res.NoSUT:
		return 3
	case len(res.New) > 0 || res.Interrupted || len(res.Unimplemented) > 0 || res.NothingJudged:
		return 1
	case strictBaseline && (len(res.UnexpectedPasses) > 0 || len(res.Stale) > 0 || len(res.Expired) > 0):
		return 1
	}
	return 0
}

// Clean reports whether the baseline is exactly right for the record: no new
// failure, no unaccepted gap, no unexpected pass, no stale or expired entry.
func (res BaselineResult) Clean() bool {
	return len(res.New) == 0 && len(res.Unimplemented) == 0 && len(res.UnexpectedPasses) == 0 && len(res.Stale) == 0 && len(res.Expired) == 0
}

// WriteBaselineText writes res for a terminal: a count line, then the new
// failures, unexpected passes, stale and expired entries (what to act on),
// then the known failures one line each.
func WriteBaselineText(w io.Writer, res BaselineResult) error {
	var b strings.Builder
	fmt.Fprintf(&b, "baseline: %d known failure(s), %d new failure(s), %d unaccepted unimplemented, %d unexpected pass(es), %d stale entr(ies), %d expired entr(ies)\n",
		len(res.Known), len(res.New), len(res.Unimplemented), len(res.UnexpectedPasses), len(res.Stale), len(res.Expired))
	for _, c := range res.New {
		fmt.Fprintf(&b, "  NEW FAILURE      %-6s %s  %s%s\n", c.Level, c.ID, outcomeWords(c), suffix(": ", c.Message))
		if c.Entry != nil {
			fmt.Fprintf(&b, "                   its entry (line %d, %s) expired on %s\n", c.Entry.Line, c.Entry.Pattern, c.Entry.Expires.Format(dateLayout))
		}
		if c.Reproduce != "" {
			fmt.Fprintf(&b, "                   reproduce: %s\n", c.Reproduce)
		}
	}
	for _, c := range res.Unimplemented {
		fmt.Fprintf(&b, "  UNIMPLEMENTED    %-6s %s  in a declared profile; an entry or --allow-unimplemented accepts it\n", c.Level, c.ID)
	}
	for _, c := range res.UnexpectedPasses {
		fmt.Fprintf(&b, "  UNEXPECTED PASS  %-6s %s  listed on line %d (%s): remove the entry\n", c.Level, c.ID, c.Entry.Line, c.Entry.Pattern)
	}
	for _, e := range res.Stale {
		fmt.Fprintf(&b, "  STALE ENTRY      line %d: %s matches no case in this record\n", e.Line, e.Pattern)
	}
	for _, e := range res.Expired {
		fmt.Fprintf(&b, "  EXPIRED ENTRY    line %d: %s expired on %s and excuses nothing\n", e.Line, e.Pattern, e.Expires.Format(dateLayout))
	}
	if n := len(res.OutsideSelection); n > 0 {
		fmt.Fprintf(&b, "  %d entr(ies) match only cases this run did not select (not stale)\n", n)
	}
	for _, c := range res.Known {
		fmt.Fprintf(&b, "  known failure    %-6s %s  %s (line %d: %s%s)\n", c.Level, c.ID, outcomeWords(c), c.Entry.Line, c.Entry.Reason, suffix("; ", c.Entry.Issue))
	}
	if res.NoSUT {
		b.WriteString("  the SUT could not be started or never said Hello: no baseline excuses that\n")
	}
	if res.Interrupted {
		b.WriteString("  the run was interrupted: no baseline excuses that\n")
	}
	if res.NothingJudged {
		b.WriteString("  the run judged none of the cases it could have: no baseline excuses that\n")
	}
	_, err := io.WriteString(w, Visible(b.String())) // messages come from the SUT
	return err
}

// WriteBaselineMarkdown writes res as a Markdown section, to follow
// WriteMarkdown's summary in a pull request or GITHUB_STEP_SUMMARY.
func WriteBaselineMarkdown(w io.Writer, res BaselineResult) error {
	var b strings.Builder
	fmt.Fprintf(&b, "### baseline\n\n%d known failure(s), **%d new failure(s)**, %d unaccepted unimplemented, %d unexpected pass(es), %d stale entr(ies), %d expired entr(ies).\n\n",
		len(res.Known), len(res.New), len(res.Unimplemented), len(res.UnexpectedPasses), len(res.Stale), len(res.Expired))
	for _, c := range res.New {
		fmt.Fprintf(&b, "- ❌ new failure %s %s", mdCode(c.ID), outcomeWords(c))
		if c.Message != "" {
			fmt.Fprintf(&b, " — %s", mdEscape(Clip(c.Message, 300)))
		}
		if c.Entry != nil {
			fmt.Fprintf(&b, " (its entry on line %d expired on %s)", c.Entry.Line, c.Entry.Expires.Format(dateLayout))
		}
		b.WriteString("\n")
	}
	for _, c := range clipCases(res.Unimplemented, mdCasesPerOutcome) {
		fmt.Fprintf(&b, "- ❌ unimplemented %s in a declared profile, accepted by no entry\n", mdCode(c.ID))
	}
	for _, c := range res.UnexpectedPasses {
		fmt.Fprintf(&b, "- 🎉 unexpected pass %s: remove line %d (%s)\n", mdCode(c.ID), c.Entry.Line, mdCode(c.Entry.Pattern))
	}
	for _, e := range res.Stale {
		fmt.Fprintf(&b, "- stale entry on line %d: %s matches no case\n", e.Line, mdCode(e.Pattern))
	}
	for _, e := range res.Expired {
		fmt.Fprintf(&b, "- expired entry on line %d: %s (expired %s)\n", e.Line, mdCode(e.Pattern), e.Expires.Format(dateLayout))
	}
	if len(res.Known) > 0 {
		fmt.Fprintf(&b, "\n<details><summary>known failures (%d)</summary>\n\n", len(res.Known))
		for _, c := range clipCases(res.Known, mdCasesPerOutcome) {
			fmt.Fprintf(&b, "- %s %s — %s", mdCode(c.ID), outcomeWords(c), mdEscape(c.Entry.Reason))
			if c.Entry.Issue != "" {
				fmt.Fprintf(&b, " ([issue](%s))", mdLinkTarget(c.Entry.Issue))
			}
			b.WriteString("\n")
		}
		if n := len(res.Known) - mdCasesPerOutcome; n > 0 {
			fmt.Fprintf(&b, "- … and %d more\n", n)
		}
		b.WriteString("\n</details>\n")
	}
	b.WriteString("\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func clipCases(cs []BaselineCase, n int) []BaselineCase {
	return cs[:min(n, len(cs))]
}

// mdLinkTarget makes a URL safe as a Markdown link destination.
func mdLinkTarget(u string) string {
	return "<" + strings.NewReplacer("<", "%3C", ">", "%3E", " ", "%20").Replace(u) + ">"
}

func outcomeWords(c BaselineCase) string {
	if c.ErrorKind != "" {
		return string(c.Outcome) + " (" + string(c.ErrorKind) + ")"
	}
	return string(c.Outcome)
}

func suffix(sep, s string) string {
	if s == "" {
		return ""
	}
	return sep + s
}

// FromRecord returns a baseline listing every failing case of r (fail and
// error, and warn under --strict), and every MUST case of a declared profile
// the SUT answered Unimplemented, by its exact ID, with its outcome and
// message as the reason: what `conform baseline RECORD` prints. Applied to
// the same record, it leaves no new failure and no unaccepted gap.
func FromRecord(r *Record) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# conform baseline: the known failures of %s", oneLine(r.SUT.Spec))
	if h := hello(r).String(); h != "" {
		fmt.Fprintf(&b, " (%s)", oneLine(h))
	}
	b.WriteString("\n")
	fmt.Fprintf(&b, "# from the record of the run started %s", r.Started.UTC().Format(time.RFC3339))
	if r.Conform != "" {
		fmt.Fprintf(&b, " by conform %s", oneLine(r.Conform))
	}
	b.WriteString("\n")
	b.WriteString("# One entry a line: ID-or-glob  reason  [issue=URL]  [expires=YYYY-MM-DD]\n")
	unimpl := map[string]bool{}
	for _, id := range r.Unimplemented {
		unimpl[id] = true
	}
	var failing []CaseResult
	width := 0
	for _, c := range r.Cases {
		if Failing(c, r.Strict) || c.Outcome == Skip && c.Level == MUST && unimpl[c.ID] {
			failing = append(failing, c)
			width = max(width, len(EscapeID(c.ID)))
		}
	}
	if len(failing) == 0 {
		b.WriteString("# No case failed: nothing to list.\n")
	}
	for _, c := range failing {
		reason := string(c.Outcome)
		if c.Outcome == Skip {
			reason = "declared, not implemented"
		}
		if c.ErrorKind != "" {
			reason += " (" + string(c.ErrorKind) + ")"
		}
		if m := oneLine(c.Message); m != "" {
			reason += ": " + Clip(m, 200)
		}
		fmt.Fprintf(&b, "%-*s  %s\n", width, EscapeID(c.ID), baselineReason(reason))
	}
	return b.String()
}

// baselineReason keeps reason from being read as issue= or expires= tokens.
func baselineReason(reason string) string {
	words := strings.Fields(reason)
	for i, w := range words {
		if strings.HasPrefix(w, "issue=") || strings.HasPrefix(w, "expires=") {
			words[i] = strings.Replace(w, "=", ":", 1)
		}
	}
	return strings.Join(words, " ")
}
