package requirements

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/conform-suite/conform/cases"
	"github.com/conform-suite/conform/reports"
)

// Case is what coverage needs of a conformance case: its ID, its level, and
// the requirements it names (cases.Case.Requirements).
type Case struct {
	ID           string
	Level        reports.Level
	Requirements []string
}

// judges reports whether a case of level l passes a verdict: MUST fails,
// SHOULD warns, while MAY and INFO only record.
func judges(l reports.Level) bool { return l == reports.MUST || l == reports.SHOULD }

// Links maps requirement IDs to the IDs of the cases that name them, each
// list without repeats.
type Links map[string][]string

func (l Links) add(req, c string) {
	if !slices.Contains(l[req], c) {
		l[req] = append(l[req], c)
	}
}

// Merge adds every link of o to l.
func (l Links) Merge(o Links) {
	for req, cs := range o {
		for _, c := range cs {
			l.add(req, c)
		}
	}
}

// CaseLinks returns the links the cases declare: each case's Requirements.
func CaseLinks(cs []Case) Links {
	l := Links{}
	for _, c := range cs {
		for _, req := range c.Requirements {
			l.add(req, c.ID)
		}
	}
	return l
}

// Disposition is what became of a requirement.
type Disposition string

// The dispositions.
const (
	// Traced: a case judges it — a MUST or SHOULD case names it, or, for a
	// MAY, any case records it.
	Traced Disposition = "traced"
	// Waived: no case judges it, and its waiver says why none should.
	Waived Disposition = "waived"
	// Untraced: neither a case nor a waiver.
	Untraced Disposition = "untraced"
	// Withdrawn: no longer a requirement; counted nowhere.
	Withdrawn Disposition = "withdrawn"
)

// CaseRef names a case and its level.
type CaseRef struct {
	ID    string        `json:"id"`
	Level reports.Level `json:"level"`
}

// Status is one requirement with its disposition.
type Status struct {
	*Requirement
	Disposition Disposition `json:"disposition"`
	// Judged are the MUST and SHOULD cases that name the requirement.
	Judged []CaseRef `json:"judged,omitempty"`
	// Recorded are the MAY and INFO cases that name it: they record what an
	// implementation does and never fail.
	Recorded []CaseRef `json:"recorded,omitempty"`
}

// Counts are the requirements of one level, or of all, by disposition.
// Withdrawn entries are counted nowhere.
type Counts struct {
	Total    int `json:"total"`
	Traced   int `json:"traced"`
	Waived   int `json:"waived"`
	Untraced int `json:"untraced"`
}

func (c *Counts) count(d Disposition) {
	switch d {
	case Traced:
		c.Traced++
	case Waived:
		c.Waived++
	case Untraced:
		c.Untraced++
	default:
		return
	}
	c.Total++
}

// Percent returns n as a percentage of the total, 0 when there is none.
func (c Counts) Percent(n int) float64 {
	if c.Total == 0 {
		return 0
	}
	return 100 * float64(n) / float64(c.Total)
}

// DocumentCoverage is one document's coverage.
type DocumentCoverage struct {
	Document string `json:"document"`
	Title    string `json:"title"`
	// All counts every level; ByLevel counts each.
	All     Counts                   `json:"all"`
	ByLevel map[reports.Level]Counts `json:"by_level"`
	// Statuses are the document's requirements in index order.
	Statuses []Status `json:"requirements"`
}

// Levels returns the levels of requirements, strongest first.
func Levels() []reports.Level { return []reports.Level{reports.MUST, reports.SHOULD, reports.MAY} }

// FindingKind names a disagreement between a requirement's level and the
// level of the cases that name it.
type FindingKind string

// The kinds of level finding.
const (
	// RecordedOnly: a MUST or SHOULD named only by MAY or INFO cases, which
	// never fail; it counts as untraced.
	RecordedOnly FindingKind = "recorded-only"
	// JudgedAtShould: a MUST whose every judging case is a SHOULD case, so
	// breaking it only warns.
	JudgedAtShould FindingKind = "must-judged-at-should"
	// MayJudged: a MAY named by a MUST or SHOULD case, which fails or warns
	// on behaviour the source leaves free.
	MayJudged FindingKind = "may-judged"
)

// Finding is one level disagreement.
type Finding struct {
	Kind        FindingKind   `json:"kind"`
	Requirement string        `json:"requirement"`
	Level       reports.Level `json:"level"`
	Cases       []CaseRef     `json:"cases"`
}

func (f Finding) String() string {
	var ids []string
	for _, c := range f.Cases {
		ids = append(ids, c.ID+" ("+string(c.Level)+")")
	}
	cs := strings.Join(ids, ", ")
	switch f.Kind {
	case RecordedOnly:
		return fmt.Sprintf("%s (%s) is named only by cases that never fail: %s", f.Requirement, f.Level, cs)
	case JudgedAtShould:
		return fmt.Sprintf("%s (MUST) is judged only at SHOULD: %s", f.Requirement, cs)
	case MayJudged:
		return fmt.Sprintf("%s (MAY) is judged as a requirement: %s", f.Requirement, cs)
	}
	return fmt.Sprintf("%s: %s: %s", f.Requirement, f.Kind, cs)
}

// Coverage is the index measured against the catalogue.
type Coverage struct {
	Documents []DocumentCoverage `json:"documents"`
	Findings  []Finding          `json:"findings"`
}

// Compute measures x against the cases cs and the links that name which
// case judges which requirement. A link naming a requirement the index does
// not hold (or has withdrawn), a case the catalogue does not hold, or a
// waived requirement that a case judges is an error: each is reported.
func Compute(x *Index, cs []Case, links Links) (*Coverage, error) {
	level := map[string]reports.Level{}
	for _, c := range cs {
		level[c.ID] = c.Level
	}
	var errs []error
	for _, req := range slices.Sorted(maps.Keys(links)) {
		r, ok := x.Lookup(req)
		switch {
		case !ok:
			errs = append(errs, fmt.Errorf("%s, named by %s, is not in the requirements index", req, strings.Join(links[req], ", ")))
		case r.Withdrawn != "":
			errs = append(errs, fmt.Errorf("%s, named by %s, is withdrawn: %s", req, strings.Join(links[req], ", "), r.Withdrawn))
		}
		for _, c := range links[req] {
			if _, ok := level[c]; !ok {
				errs = append(errs, fmt.Errorf("%s is traced to case %s, which the catalogue does not hold", req, c))
			}
		}
	}

	cov := &Coverage{Findings: []Finding{}} // [] in JSON, not null
	for _, d := range x.Documents {
		dc := DocumentCoverage{Document: d.Name, Title: d.Title, ByLevel: map[reports.Level]Counts{}}
		for i := range d.Requirements {
			r := &d.Requirements[i]
			st := Status{Requirement: r}
			for _, c := range links[r.ID] {
				l, ok := level[c]
				if !ok {
					continue
				}
				if judges(l) {
					st.Judged = append(st.Judged, CaseRef{c, l})
				} else {
					st.Recorded = append(st.Recorded, CaseRef{c, l})
				}
			}
			byID := func(a, b CaseRef) int { return strings.Compare(a.ID, b.ID) }
			slices.SortFunc(st.Judged, byID)
			slices.SortFunc(st.Recorded, byID)
			st.Disposition = disposition(r, st)
			if r.Waiver != nil && len(st.Judged) > 0 {
				errs = append(errs, fmt.Errorf("%s is waived (%s) yet judged by %s: drop the waiver or the link", r.ID, r.Waiver.Reason, refs(st.Judged)))
			}
			cov.Findings = append(cov.Findings, findings(r, st)...)
			dc.All.count(st.Disposition)
			c := dc.ByLevel[r.Level]
			c.count(st.Disposition)
			dc.ByLevel[r.Level] = c
			dc.Statuses = append(dc.Statuses, st)
		}
		cov.Documents = append(cov.Documents, dc)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("requirements coverage: %w", err)
	}
	return cov, nil
}

func disposition(r *Requirement, st Status) Disposition {
	switch {
	case r.Withdrawn != "":
		return Withdrawn
	case len(st.Judged) > 0:
		return Traced
	case r.Waiver != nil:
		return Waived
	case r.Level == reports.MAY && len(st.Recorded) > 0:
		return Traced
	}
	return Untraced
}

func findings(r *Requirement, st Status) []Finding {
	if r.Withdrawn != "" {
		return nil
	}
	var out []Finding
	switch r.Level {
	case reports.MUST, reports.SHOULD:
		if len(st.Judged) == 0 && len(st.Recorded) > 0 && r.Waiver == nil {
			out = append(out, Finding{Kind: RecordedOnly, Requirement: r.ID, Level: r.Level, Cases: st.Recorded})
		}
		if r.Level == reports.MUST && len(st.Judged) > 0 && !slices.ContainsFunc(st.Judged, func(c CaseRef) bool { return c.Level == reports.MUST }) {
			out = append(out, Finding{Kind: JudgedAtShould, Requirement: r.ID, Level: r.Level, Cases: st.Judged})
		}
	case reports.MAY:
		if len(st.Judged) > 0 {
			out = append(out, Finding{Kind: MayJudged, Requirement: r.ID, Level: r.Level, Cases: st.Judged})
		}
	}
	return out
}

func refs(cs []CaseRef) string {
	var ids []string
	for _, c := range cs {
		ids = append(ids, c.ID)
	}
	return strings.Join(ids, ", ")
}

// Untraced returns every requirement of the given level with neither a
// judging case nor a waiver, in index order.
func (c *Coverage) Untraced(l reports.Level) []Status {
	var out []Status
	for _, d := range c.Documents {
		for _, st := range d.Statuses {
			if st.Level == l && st.Disposition == Untraced {
				out = append(out, st)
			}
		}
	}
	return out
}

// Only returns the coverage of the named document alone.
func (c *Coverage) Only(doc string) (*Coverage, bool) {
	for _, d := range c.Documents {
		if d.Document != doc {
			continue
		}
		out := &Coverage{Documents: []DocumentCoverage{d}, Findings: []Finding{}}
		for _, f := range c.Findings {
			if strings.HasPrefix(f.Requirement, doc+"§") {
				out.Findings = append(out.Findings, f)
			}
		}
		return out, true
	}
	return nil, false
}

// Names returns the documents covered, in order.
func (c *Coverage) Names() []string {
	var out []string
	for _, d := range c.Documents {
		out = append(out, d.Document)
	}
	return out
}

// Measure measures the shipped index against a catalogue: cs are its cases
// and hasVector says whether a corpus vector exists (a reconstructed entry
// names the vectors that exhibit it). It is what conform requirements and
// docs/requirements.md report.
func Measure(cs []cases.Case, hasVector func(id string) bool) (*Index, *Coverage, error) {
	x, err := Default()
	if err != nil {
		return nil, nil, err
	}
	if err := CheckVectors(x, hasVector); err != nil {
		return nil, nil, err
	}
	refs := make([]Case, len(cs))
	for i, c := range cs {
		refs[i] = Case{ID: c.ID, Level: c.Level, Requirements: c.Requirements}
	}
	links := CaseLinks(refs)
	cov, err := Compute(x, refs, links)
	if err != nil {
		return nil, nil, err
	}
	return x, cov, nil
}
