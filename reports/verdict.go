package reports

import (
	"fmt"
	"slices"
	"strings"
)

// ProfileStatus is the verdict on one profile the SUT declares. The words
// are fixed: CI scripts read them.
type ProfileStatus string

const (
	// ProfileConformant: every MUST case of the profile the run selected
	// was judged and passed, and no case of the profile failed or erred.
	ProfileConformant ProfileStatus = "conformant"
	// ProfileNotConformant: a case of the profile failed.
	ProfileNotConformant ProfileStatus = "not-conformant"
	// ProfileErrors: a case of the profile ended in error (the SUT crashed,
	// hung, broke conform.v1 or was lost); none failed.
	ProfileErrors ProfileStatus = "errors"
	// ProfileIncomplete: MUST cases of the profile were answered
	// Unimplemented although the SUT declares it; none failed or erred.
	// An incomplete profile fails the run unless accepted (Accepted).
	ProfileIncomplete ProfileStatus = "incomplete"
	// ProfilePartial: some MUST cases were judged and passed, others were
	// skipped for a reason that is not the SUT's (conform could not run
	// them, such as node cases with no node command).
	ProfilePartial ProfileStatus = "partial"
	// ProfileNotJudged: the run selected cases of the profile, but no MUST
	// case of it was judged.
	ProfileNotJudged ProfileStatus = "not-judged"
	// ProfileNotSelected: the run selected no case of the profile.
	ProfileNotSelected ProfileStatus = "not-selected"
)

// Accepted values of ProfileVerdict.Accepted.
const (
	AcceptedByFlag     = "allow-unimplemented"
	AcceptedByBaseline = "baseline"
)

// ProfileVerdict is the verdict on one profile the SUT declares: how many
// of its MUST cases the run selected, judged (pass or fail) and passed.
type ProfileVerdict struct {
	Profile string        `json:"profile"`
	Status  ProfileStatus `json:"status"`
	// Cases counts the profile's cases in the record, at every level.
	Cases int `json:"cases"`
	// Must counts the profile's MUST cases in the record (the selection).
	Must int `json:"must"`
	// MustInCatalogue counts the profile's MUST cases in conform's
	// catalogue, or is 0 when unknown; above Must, the run selected only
	// part of the profile.
	MustInCatalogue int `json:"must_in_catalogue,omitempty"`
	// MustJudged counts the MUST cases that passed or failed.
	MustJudged int `json:"must_judged"`
	MustPassed int `json:"must_passed"`
	// MustUnimplemented counts the MUST cases the SUT answered
	// Unimplemented.
	MustUnimplemented int `json:"must_unimplemented"`
	// MustSkipped counts the MUST cases skipped for another reason.
	MustSkipped int `json:"must_skipped"`
	// Failed and Errors count the profile's cases, at every level, that
	// failed (fail; warn is a fail under --strict) or ended in error.
	Failed int `json:"failed"`
	Errors int `json:"errors"`
	// Accepted names what accepts an incomplete profile: AcceptedByFlag
	// (--allow-unimplemented) or AcceptedByBaseline (baseline entries cover
	// every unimplemented MUST case); "" when nothing does.
	Accepted string `json:"accepted,omitempty"`
}

// PartialSelection reports whether the run selected only part of the
// profile's MUST cases.
func (v ProfileVerdict) PartialSelection() bool {
	return v.MustInCatalogue > v.Must && v.Status != ProfileNotSelected
}

// Blocking reports whether the verdict alone fails the run: an incomplete
// profile nothing accepts. (Failures and errors fail the run through the
// counts.)
func (v ProfileVerdict) Blocking() bool {
	return v.Status == ProfileIncomplete && v.Accepted == ""
}

// String describes v in one line, such as "wire: not conformant — 53 of 53
// MUST cases judged, 51 passed, 2 failed".
func (v ProfileVerdict) String() string {
	if v.Status == ProfileNotSelected {
		return v.Profile + ": not selected"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s — %d of %d MUST case(s) judged, %d passed", v.Profile, strings.ReplaceAll(string(v.Status), "-", " "), v.MustJudged, v.Must, v.MustPassed)
	if v.Failed > 0 {
		fmt.Fprintf(&b, ", %d failed", v.Failed)
	}
	if v.Errors > 0 {
		fmt.Fprintf(&b, ", %d error(s)", v.Errors)
	}
	if v.MustUnimplemented > 0 {
		fmt.Fprintf(&b, ", %d unimplemented", v.MustUnimplemented)
		switch v.Accepted {
		case AcceptedByFlag:
			b.WriteString(" (accepted by --allow-unimplemented)")
		case AcceptedByBaseline:
			b.WriteString(" (accepted by the baseline)")
		}
	}
	if v.MustSkipped > 0 {
		fmt.Fprintf(&b, ", %d skipped", v.MustSkipped)
	}
	if v.PartialSelection() {
		fmt.Fprintf(&b, "; the run selected %d of the profile's %d MUST cases", v.Must, v.MustInCatalogue)
	}
	return b.String()
}

// profileVerdicts judges each profile r's Hello declares from r's cases.
func profileVerdicts(r *Record) []ProfileVerdict {
	declared := hello(r).Profiles
	if len(declared) == 0 {
		return nil
	}
	unimpl := map[string]bool{}
	for _, id := range r.Unimplemented {
		unimpl[id] = true
	}
	known := map[string]bool{}
	if r.Baseline != nil {
		for _, c := range r.Baseline.Known {
			known[c.ID] = true
		}
	}
	var out []ProfileVerdict
	seen := map[string]bool{}
	for _, p := range declared {
		if seen[p] {
			continue
		}
		seen[p] = true
		v := ProfileVerdict{Profile: p, MustInCatalogue: r.MustInCatalogue[p]}
		covered := true
		for _, c := range r.Cases {
			if c.Profile != p {
				continue
			}
			v.Cases++
			switch c.Outcome {
			case Fail:
				v.Failed++
			case Error:
				v.Errors++
			}
			if c.Level != MUST {
				continue
			}
			v.Must++
			switch {
			case c.Outcome == Pass:
				v.MustJudged++
				v.MustPassed++
			case c.Outcome == Fail:
				v.MustJudged++
			case c.Outcome == Skip && unimpl[c.ID]:
				v.MustUnimplemented++
				covered = covered && known[c.ID]
			case c.Outcome == Skip:
				v.MustSkipped++
			}
		}
		switch {
		case v.Cases == 0:
			v.Status = ProfileNotSelected
		case v.Failed > 0:
			v.Status = ProfileNotConformant
		case v.Errors > 0:
			v.Status = ProfileErrors
		case v.MustUnimplemented > 0:
			v.Status = ProfileIncomplete
		case v.MustJudged == 0:
			v.Status = ProfileNotJudged
		case v.MustSkipped > 0:
			v.Status = ProfilePartial
		default:
			v.Status = ProfileConformant
		}
		if v.MustUnimplemented > 0 {
			switch {
			case r.AllowUnimplemented:
				v.Accepted = AcceptedByFlag
			case covered && r.Baseline != nil:
				v.Accepted = AcceptedByBaseline
			}
		}
		out = append(out, v)
	}
	return out
}

// Incomplete returns the verdicts of r's declared profiles that are
// incomplete and accepted by nothing: each fails the run.
func (r *Record) Incomplete() []ProfileVerdict {
	var out []ProfileVerdict
	for _, v := range r.Summary.ByProfile {
		if v.Blocking() {
			out = append(out, v)
		}
	}
	return out
}

// NothingJudged reports whether r selected cases that could be judged (MUST
// or SHOULD) and judged none of them: no case passed, failed or warned. A
// run of informational cases alone judges nothing and is not reported.
func (r *Record) NothingJudged() bool {
	c := r.Summary.Counts
	if c[Pass]+c[Fail]+c[Warn] > 0 {
		return false
	}
	return slices.ContainsFunc(r.Cases, func(c CaseResult) bool { return c.Level == MUST || c.Level == SHOULD })
}

// verdict is the one-line judgement at the top of a rendering.
type verdict struct {
	// OK is set when the run gates green: exit code 0.
	OK bool
	// Headline is a short phrase ("conformant", "not conformant", …).
	Headline string
	// Detail completes it in one sentence.
	Detail string
}

// verdictOf judges r from its summary, its profile verdicts and its exit
// code. A record whose exit code is 0 although cases failed has had a
// baseline applied: its failures are all known. No headline says
// conformant unless every MUST case selected in the declared profiles was
// judged and passed and the selection covered those profiles whole.
func verdictOf(r *Record) verdict {
	c := r.Summary.Counts
	failing := c[Fail] + c[Error]
	if r.Strict {
		failing += c[Warn]
	}
	counts := fmt.Sprintf("%d fail, %d error", c[Fail], c[Error])
	if r.Strict || c[Warn] > 0 {
		counts += fmt.Sprintf(", %d warn", c[Warn])
	}
	ok := r.ExitCode == 0
	switch {
	case r.StartError != nil && r.StartError.Kind == KindInterrupted:
		return verdict{Headline: "interrupted", Detail: fmt.Sprintf("The run was interrupted while the SUT was starting; none of the %d selected case(s) ran, and nothing is judged against the SUT.", r.Summary.Total)}
	case r.ExitCode == 3 || r.StartError != nil:
		d := fmt.Sprintf("The SUT could not be started, never said Hello or was refused; the %d selected case(s) are recorded as error, not run.", r.Summary.Total)
		if r.StartError != nil {
			d = fmt.Sprintf("%s The %d selected case(s) are recorded as error, not run.", sentence(oneLine(Clip(r.StartError.Message, 300))), r.Summary.Total)
		}
		return verdict{Headline: "SUT not started", Detail: d}
	case failing > 0 && ok:
		return verdict{OK: true, Headline: "only known failures", Detail: fmt.Sprintf("%s out of %d cases, all accepted by the baseline (exit 0).", counts, r.Summary.Total)}
	case r.Lost != nil:
		return verdict{Headline: "SUT lost", Detail: fmt.Sprintf("The SUT was presumed lost after %s (%s); %d case(s) were not run. %s out of %d cases (exit %d).",
			r.Lost.After, oneLine(r.Lost.Reason), r.Lost.NotRun, counts, r.Summary.Total, r.ExitCode)}
	case c[Fail] > 0 || (r.Strict && c[Warn] > 0):
		return verdict{Headline: "not conformant", Detail: fmt.Sprintf("%s out of %d cases (exit %d).", counts, r.Summary.Total, r.ExitCode)}
	case c[Error] > 0:
		return verdict{Headline: "errors", Detail: fmt.Sprintf("%d case(s) ended in error: the SUT crashed, hung or broke conform.v1; no case failed (exit %d).", c[Error], r.ExitCode)}
	case r.Interrupted:
		return verdict{Headline: "interrupted", Detail: fmt.Sprintf("The run stopped early; the record holds the %d case(s) that ran (exit %d).", r.Summary.Total, r.ExitCode)}
	}
	if inc := r.Incomplete(); len(inc) > 0 {
		var parts []string
		for _, v := range inc {
			parts = append(parts, fmt.Sprintf("%s: %d of %d MUST case(s) answered Unimplemented", v.Profile, v.MustUnimplemented, v.Must))
		}
		return verdict{OK: ok, Headline: "incomplete", Detail: fmt.Sprintf("The SUT declares profiles it does not implement (%s); --allow-unimplemented or baseline entries accept that (exit %d).", strings.Join(parts, "; "), r.ExitCode)}
	}
	if r.NothingJudged() || r.Summary.Total > 0 && c[Pass]+c[Warn]+c[Fail] == 0 {
		why := "none of the selected cases was judged: they were skipped or informational"
		if len(r.Undeclared) > 0 && !slices.ContainsFunc(r.Summary.ByProfile, func(v ProfileVerdict) bool { return v.Status != ProfileNotSelected }) {
			why = "the SUT declares none of the selected profiles"
		}
		return verdict{OK: ok, Headline: "nothing judged", Detail: fmt.Sprintf("%s%s (%d case(s), exit %d).", strings.ToUpper(why[:1]), why[1:], r.Summary.Total, r.ExitCode)}
	}
	if !ok {
		return verdict{Headline: "failed", Detail: fmt.Sprintf("Exit %d with %s out of %d cases.", r.ExitCode, counts, r.Summary.Total)}
	}
	var judged, partial []string
	for _, v := range r.Summary.ByProfile {
		switch {
		case v.Status == ProfileNotSelected:
		case v.Status == ProfileConformant && !v.PartialSelection():
			judged = append(judged, fmt.Sprintf("%s (%d/%d MUST)", v.Profile, v.MustPassed, v.Must))
		default:
			partial = append(partial, v.String())
		}
	}
	if len(partial) > 0 {
		d := "Part of what the SUT declares was judged, and passed: " + strings.Join(partial, "; ") + "."
		if len(judged) > 0 {
			d += " Judged whole: " + strings.Join(judged, ", ") + "."
		}
		return verdict{OK: true, Headline: "partly judged", Detail: d}
	}
	what := ""
	if len(judged) > 0 {
		what = " Profiles judged: " + strings.Join(judged, ", ") + "."
	}
	if c[Warn] > 0 {
		return verdict{OK: true, Headline: "conformant, with warnings", Detail: fmt.Sprintf("%d SHOULD requirement(s) broken; %d of %d cases passed.%s", c[Warn], c[Pass], r.Summary.Total, what)}
	}
	return verdict{OK: true, Headline: "conformant", Detail: fmt.Sprintf("%d of %d cases passed, none failed.%s", c[Pass], r.Summary.Total, what)}
}

// sentence ends s with a full stop unless it ends with punctuation.
func sentence(s string) string {
	if s == "" || strings.ContainsAny(s[len(s)-1:], ".!?") {
		return s
	}
	return s + "."
}

// capitalize upper-cases the first letter of s, an ASCII headline.
func capitalize(s string) string {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}
