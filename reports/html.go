package reports

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"slices"
	"strings"
	"sync"
	"time"
)

// htmlFieldLimit bounds each evidence field on the HTML page.
const htmlFieldLimit = 64 << 10

//go:embed html.tmpl
var htmlTemplateText string

// htmlTemplate is parsed once, on first use rather than at start-up: every
// process conform starts (a node, a restarted fault SUT) would otherwise pay
// for a page only a run with --html writes. Executing a template is safe
// for concurrent use.
var htmlTemplate = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("page").Funcs(template.FuncMap{"visible": Visible}).Parse(htmlTemplateText))
})

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
// The cases are listed failing first — fail, error, warn, then the cases not
// run because the SUT was lost or not started, skip, info and pass — each
// group in record order, so that the page opens on what went wrong even
// without JavaScript, where every case shows. When any case failed, erred
// or warned, the filters start with only those shown (skip, info and pass
// one click away); otherwise every case shows. A URL fragment such as
// #outcome=fail,error&suite=wire&q=window presets them. Once its script
// has run, the page sets data-js="ready" and data-shown (the number of cases
// shown) on its <html> element.
//
// Above the cases, the page gives the verdict on each profile the SUT
// declares, and why the SUT could not be started or was lost.
//
// All text is escaped by html/template.
func WriteHTML(w io.Writer, r *Record) error {
	if err := htmlTemplate().Execute(w, htmlPageOf(r)); err != nil {
		return fmt.Errorf("writing HTML report: %w", err)
	}
	return nil
}

// htmlPage is the template's data.
type htmlPage struct {
	R *Record
	// Carrier is the record's carrier when it says more than the SUT
	// spec does, else "".
	Carrier  string
	Profiles []ProfileVerdict
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
	p := htmlPage{R: r, Verdict: verdictOf(r), Hello: hello(r), Outcomes: Outcomes, Profiles: r.Summary.ByProfile}
	if r.SUT.Carrier != r.SUT.Spec {
		p.Carrier = r.SUT.Carrier
	}
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
	anyProblem := false
	for _, c := range r.Cases {
		suiteN[SuiteOf(c.ID)]++
		levelN[string(c.Level)]++
		outcomeN[string(c.Outcome)]++
		if problem(c.Outcome) {
			anyProblem = true
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
		quiet := o == Pass || o == Info || o == Skip
		outcomeOpts = append(outcomeOpts, htmlOption{Value: string(o), N: outcomeN[string(o)], Checked: !quiet || !anyProblem})
	}
	p.Filters = []htmlFilter{
		{Dim: "suite", Label: "Suite", Options: suiteOpts},
		{Dim: "level", Label: "Level", Options: levelOpts},
		{Dim: "outcome", Label: "Outcome", Options: outcomeOpts},
	}

	ordered := slices.Clone(r.Cases)
	slices.SortStableFunc(ordered, func(a, b CaseResult) int { return htmlRank(r, a) - htmlRank(r, b) })
	for _, c := range ordered {
		hc := htmlCase{CaseResult: c, Suite: SuiteOf(c.ID), Open: Failing(c, r.Strict) && !notRunCase(r, c)}
		hc.Message = Visible(Clip(c.Message, htmlFieldLimit))
		hc.Notes = nil
		for _, n := range c.Notes {
			hc.Notes = append(hc.Notes, Visible(Clip(n, htmlFieldLimit)))
		}
		for _, e := range c.Evidence {
			he := htmlEvidence{Message: Visible(Clip(e.Message, htmlFieldLimit))}
			for _, f := range evidenceFields(e) {
				hf := htmlField{Name: f.Name, Class: f.Name, Text: Visible(Clip(f.Value, htmlFieldLimit))}
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

// problem reports whether o is an outcome a reader must see first.
func problem(o Outcome) bool {
	return o != Pass && o != Info && o != Skip
}

// notRunCase reports whether c was recorded without being run: the SUT was
// lost before it, or could not be started.
func notRunCase(r *Record, c CaseResult) bool {
	return c.Outcome == Error && (c.ErrorKind == KindLost && r.Lost != nil || c.ErrorKind == KindStart && r.StartError != nil)
}

// htmlRank orders the cases on the page: what went wrong first.
func htmlRank(r *Record, c CaseResult) int {
	switch {
	case c.Outcome == Fail:
		return 0
	case notRunCase(r, c):
		return 3
	case c.Outcome == Error:
		return 1
	case c.Outcome == Warn:
		return 2
	case c.Outcome == Skip:
		return 4
	case c.Outcome == Info:
		return 5
	case c.Outcome == Pass:
		return 6
	}
	return 1 // an outcome this conform does not know: never hidden below
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
