package reports

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"slices"
	"strings"
	"time"
)

// htmlFieldLimit bounds each evidence field on the HTML page.
const htmlFieldLimit = 64 << 10

//go:embed html.tmpl
var htmlTemplateText string

// htmlTemplate is parsed once; executing a template is safe for concurrent
// use, and nothing modifies it after initialisation.
var htmlTemplate = template.Must(template.New("page").Parse(htmlTemplateText))

// WriteHTML writes r as one self-contained HTML page: inline CSS and
// JavaScript, no font, image, script or style fetched from anywhere (a
// Content-Security-Policy forbids it), so that it opens from a CI artifact
// or a mail attachment as well as from disk.
//
// The page holds the verdict, the run's context, the counts per suite and
// per level, filters by suite, level and outcome with a text search, and
// every case with its evidence: inputs as hex dumps, expected and got, the
// diff with its removed and added lines marked, the SUT's standard error,
// notes, and the command that reproduces the case. Each case is a <details>
// element carrying data-suite, data-level, data-outcome and data-id
// attributes, which the filters read; failing and erring cases start open.
// Without JavaScript every case shows. The filters start with passing cases
// hidden when any case did not pass, and a URL fragment such as
// #outcome=fail,error&suite=wire&q=window presets them. Once its script
// has run, the page sets data-js="ready" and data-shown (the number of cases
// shown) on its <html> element.
//
// All text is escaped by html/template.
func WriteHTML(w io.Writer, r *Record) error {
	if err := htmlTemplate.Execute(w, htmlPageOf(r)); err != nil {
		return fmt.Errorf("writing HTML report: %w", err)
	}
	return nil
}

// htmlPage is the template's data.
type htmlPage struct {
	R        *Record
	Verdict  verdict
	Hello    helloInfo
	Started  string
	Outcomes []Outcome
	Suites   []htmlCountRow
	Levels   []htmlCountRow
	All      htmlCountRow
	Filters  []htmlFilter
	Cases    []htmlCase
}

// htmlCountRow is one row of a counts table.
type htmlCountRow struct {
	Name   string
	Counts []htmlCount
	Total  int
}

// htmlCount is one cell of a counts table.
type htmlCount struct {
	Outcome Outcome
	N       int
}

// htmlFilter is one group of filter checkboxes.
type htmlFilter struct {
	// Dim is the data- attribute it filters on: suite, level or outcome.
	Dim     string
	Label   string
	Options []htmlOption
}

// htmlOption is one checkbox.
type htmlOption struct {
	Value   string
	N       int
	Checked bool
}

// htmlCase is one case on the page.
type htmlCase struct {
	CaseResult
	Suite    string
	Open     bool
	Evidence []htmlEvidence
}

// htmlEvidence is one evidence entry on the page.
type htmlEvidence struct {
	Message string
	Fields  []htmlField
}

// htmlField is one field of an evidence entry.
type htmlField struct {
	Name  string
	Class string
	Text  string
	// Lines is set for a diff: its lines, each with a class.
	Lines []htmlLine
}

// htmlLine is one line of a diff.
type htmlLine struct {
	Class string
	Text  string
}

func htmlPageOf(r *Record) htmlPage {
	p := htmlPage{R: r, Verdict: verdictOf(r), Hello: hello(r), Outcomes: Outcomes}
	if !r.Started.IsZero() {
		p.Started = r.Started.UTC().Format(time.RFC3339)
	}
	row := func(name string, counts map[Outcome]int) htmlCountRow {
		cr := htmlCountRow{Name: name}
		for _, o := range Outcomes {
			cr.Counts = append(cr.Counts, htmlCount{o, counts[o]})
			cr.Total += counts[o]
		}
		return cr
	}
	suites := suiteNames(r)
	for _, s := range suites {
		p.Suites = append(p.Suites, row(s, r.Summary.BySuite[s]))
	}
	levels := levelsOf(r)
	for _, l := range levels {
		p.Levels = append(p.Levels, row(string(l), r.Summary.ByLevel[l]))
	}
	p.All = row("all", r.Summary.Counts)

	// The filters count what the page holds, so that they always agree
	// with the rows they show.
	suiteN, levelN, outcomeN := map[string]int{}, map[string]int{}, map[string]int{}
	anyNonPass := false
	for _, c := range r.Cases {
		suiteN[SuiteOf(c.ID)]++
		levelN[string(c.Level)]++
		outcomeN[string(c.Outcome)]++
		if c.Outcome != Pass {
			anyNonPass = true
		}
	}
	var suiteOpts, levelOpts, outcomeOpts []htmlOption
	for _, s := range suites {
		if suiteN[s] > 0 {
			suiteOpts = append(suiteOpts, htmlOption{Value: s, N: suiteN[s], Checked: true})
		}
	}
	for _, l := range levels {
		if levelN[string(l)] > 0 {
			levelOpts = append(levelOpts, htmlOption{Value: string(l), N: levelN[string(l)], Checked: true})
		}
	}
	outcomes := slices.Clone(Outcomes)
	for o := range outcomeN {
		if !slices.Contains(outcomes, Outcome(o)) {
			outcomes = append(outcomes, Outcome(o))
		}
	}
	for _, o := range outcomes {
		outcomeOpts = append(outcomeOpts, htmlOption{Value: string(o), N: outcomeN[string(o)], Checked: o != Pass || !anyNonPass})
	}
	p.Filters = []htmlFilter{
		{Dim: "suite", Label: "Suite", Options: suiteOpts},
		{Dim: "level", Label: "Level", Options: levelOpts},
		{Dim: "outcome", Label: "Outcome", Options: outcomeOpts},
	}

	for _, c := range r.Cases {
		hc := htmlCase{CaseResult: c, Suite: SuiteOf(c.ID), Open: Failing(c, r.Strict)}
		for _, e := range c.Evidence {
			he := htmlEvidence{Message: visible(clipText(e.Message, htmlFieldLimit))}
			for _, f := range evidenceFields(e) {
				hf := htmlField{Name: f.Name, Class: f.Name, Text: visible(clipText(f.Value, htmlFieldLimit))}
				switch f.Name {
				case "input":
					hf.Text = hexDump(hf.Text)
				case "diff":
					hf.Lines = diffLines(hf.Text)
				}
				he.Fields = append(he.Fields, hf)
			}
			hc.Evidence = append(hc.Evidence, he)
		}
		p.Cases = append(p.Cases, hc)
	}
	return p
}

// levelsOf returns the levels of r's cases and summary, MUST, SHOULD, MAY and
// INFO first.
func levelsOf(r *Record) []Level {
	levels := []Level{MUST, SHOULD, MAY, INFO}
	present := map[Level]bool{}
	for l := range r.Summary.ByLevel {
		present[l] = true
	}
	var extra []Level
	for _, c := range r.Cases {
		present[c.Level] = true
	}
	for l := range present {
		if !slices.Contains(levels, l) {
			extra = append(extra, l)
		}
	}
	slices.Sort(extra)
	var out []Level
	for _, l := range append(levels, extra...) {
		if present[l] {
			out = append(out, l)
		}
	}
	return out
}

// diffLines splits a structural diff into lines marked del ("-"), add
// ("+") or ctx.
func diffLines(s string) []htmlLine {
	var lines []htmlLine
	for _, l := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		class := "ctx"
		switch {
		case strings.HasPrefix(l, "-"):
			class = "del"
		case strings.HasPrefix(l, "+"):
			class = "add"
		}
		lines = append(lines, htmlLine{Class: class, Text: l})
	}
	return lines
}
