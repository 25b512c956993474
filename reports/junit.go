package reports

import (
	"encoding/xml"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// junitFieldLimit bounds each evidence field in the JUnit file, so that one
// case's megabyte input does not make the file unreadable for a CI server.
const junitFieldLimit = 8 << 10

// WriteJUnit writes r as JUnit XML, the dialect GitHub Actions (through the
// usual test-report actions), GitLab and Jenkins read.
//
// The document is one <testsuites> holding one <testsuite> per suite (wire,
// streams, …) in record order, with one <testcase> per case: its classname
// is suite/section ("wire/1.3"), its name the case ID, its time the case's
// duration in seconds. Outcomes map as follows:
//
//   - fail: a <failure> whose message is the case's message and whose text
//     is the evidence (input, expected, got, diff, stderr) and the command
//     that reproduces the case;
//   - warn: a <failure> when r.Strict is set; otherwise a passing testcase
//     with the evidence in <system-out>, since a broken SHOULD does not fail
//     the run;
//   - error: an <error> whose type is the error kind (crash, timeout, …);
//   - skip: a <skipped> with the reason as its message;
//   - info: a passing testcase with the notes in <system-out>;
//   - pass: an empty testcase.
//
// Each <testsuite> carries the run's context (SUT, carrier, seed, conform
// and corpus versions) as <properties>. Text that XML cannot carry (control
// characters, invalid UTF-8) is replaced by U+FFFD.
func WriteJUnit(w io.Writer, r *Record) error {
	doc := junitDocument(r)
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return fmt.Errorf("writing JUnit XML: %w", err)
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("writing JUnit XML: %w", err)
	}
	if err := enc.Close(); err != nil {
		return fmt.Errorf("writing JUnit XML: %w", err)
	}
	if _, err := io.WriteString(w, "\n"); err != nil {
		return fmt.Errorf("writing JUnit XML: %w", err)
	}
	return nil
}

// junitSuites is the <testsuites> root.
type junitSuites struct {
	XMLName   xml.Name     `xml:"testsuites"`
	Name      string       `xml:"name,attr"`
	Tests     int          `xml:"tests,attr"`
	Failures  int          `xml:"failures,attr"`
	Errors    int          `xml:"errors,attr"`
	Skipped   int          `xml:"skipped,attr"`
	Time      string       `xml:"time,attr"`
	Timestamp string       `xml:"timestamp,attr,omitempty"`
	Suites    []junitSuite `xml:"testsuite"`
}

// junitSuite is one <testsuite>.
type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Time       string          `xml:"time,attr"`
	Timestamp  string          `xml:"timestamp,attr,omitempty"`
	Properties []junitProperty `xml:"properties>property,omitempty"`
	Cases      []junitCase     `xml:"testcase"`
	SystemOut  *junitText      `xml:"system-out,omitempty"`
}

// junitProperty is one <property>.
type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

// junitCase is one <testcase>.
type junitCase struct {
	Classname string        `xml:"classname,attr"`
	Name      string        `xml:"name,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitProblem `xml:"failure,omitempty"`
	Error     *junitProblem `xml:"error,omitempty"`
	Skipped   *junitProblem `xml:"skipped,omitempty"`
	SystemOut *junitText    `xml:"system-out,omitempty"`
}

// junitText is an element holding text as CDATA.
type junitText struct {
	Text string `xml:",cdata"`
}

// junitProblem is a <failure>, <error> or <skipped>.
type junitProblem struct {
	Message string `xml:"message,attr,omitempty"`
	Type    string `xml:"type,attr,omitempty"`
	// Text goes out as CDATA, so that a reader of the file sees the
	// evidence as it was, line by line.
	Text string `xml:",cdata"`
}

func junitDocument(r *Record) junitSuites {
	doc := junitSuites{
		Name: "conform " + r.SUT.Spec,
		Time: seconds(r.DurationSec),
	}
	if !r.Started.IsZero() {
		doc.Timestamp = r.Started.UTC().Format("2006-01-02T15:04:05") // JUnit timestamps carry no zone: UTC
	}
	props := junitProperties(r)
	for _, g := range groupBySuite(r) {
		s := junitSuite{Name: g.Name, Timestamp: doc.Timestamp, Properties: props}
		var total float64
		for _, c := range g.Cases {
			jc := junitCaseOf(c, r.Strict)
			switch {
			case jc.Failure != nil:
				s.Failures++
			case jc.Error != nil:
				s.Errors++
			case jc.Skipped != nil:
				s.Skipped++
			}
			s.Tests++
			total += c.DurationSec
			s.Cases = append(s.Cases, jc)
		}
		s.Time = seconds(total)
		if out := suiteNotes(r, g.Name); out != "" {
			s.SystemOut = &junitText{xmlSafe(out)}
		}
		doc.Tests += s.Tests
		doc.Failures += s.Failures
		doc.Errors += s.Errors
		doc.Skipped += s.Skipped
		doc.Suites = append(doc.Suites, s)
	}
	return doc
}

// junitProperties returns the run's context as JUnit properties.
func junitProperties(r *Record) []junitProperty {
	props := []junitProperty{
		{"sut", r.SUT.Spec},
		{"carrier", r.SUT.Carrier},
		{"seed", strconv.FormatInt(r.Seed, 10)},
		{"strict", strconv.FormatBool(r.Strict)},
		{"conform", r.Conform},
		{"corpus", r.Corpus},
	}
	if h := hello(r).String(); h != "" {
		props = append(props, junitProperty{"implementation", h})
	}
	if r.Interrupted {
		props = append(props, junitProperty{"interrupted", "true"})
	}
	for _, v := range r.Summary.ByProfile {
		props = append(props, junitProperty{"profile." + xmlSafe(v.Profile), xmlSafe(v.String())})
	}
	props = append(props, junitProperty{"verdict", xmlSafe(verdictOf(r).Headline)})
	return props
}

// suiteNotes returns what the record says about a suite as a whole: declared
// profiles answered Unimplemented, and an interruption.
func suiteNotes(r *Record, suite string) string {
	var b strings.Builder
	var unimpl []string
	for _, id := range r.Unimplemented {
		if SuiteOf(id) == suite {
			unimpl = append(unimpl, id)
		}
	}
	if len(unimpl) > 0 {
		fmt.Fprintf(&b, "%d case(s) in profiles the SUT declares answered Unimplemented: %s\n", len(unimpl), strings.Join(unimpl, ", "))
	}
	if r.Interrupted {
		b.WriteString("The run was interrupted: the record holds the cases that ran.\n")
	}
	if f := r.StartError; f != nil {
		fmt.Fprintf(&b, "%s (%s): %s\n", capitalize(f.StartHeadline()), f.Kind, oneLine(f.Message))
		if f.Exit != "" {
			fmt.Fprintf(&b, "exit: %s\n", f.Exit)
		}
		if f.Stderr != "" {
			fmt.Fprintf(&b, "the SUT's standard error ended with:\n%s\n", f.Stderr)
		}
	}
	if l := r.Lost; l != nil {
		fmt.Fprintf(&b, "The SUT was presumed lost after %s: %s; %d case(s) were not run.\n", l.After, l.Reason, l.NotRun)
	}
	for _, v := range r.Summary.ByProfile {
		if slices.ContainsFunc(r.Cases, func(c CaseResult) bool { return c.Profile == v.Profile && SuiteOf(c.ID) == suite }) {
			fmt.Fprintf(&b, "profile %s\n", v.String())
		}
	}
	return b.String()
}

func junitCaseOf(c CaseResult, strict bool) junitCase {
	jc := junitCase{
		Classname: xmlSafe(SuiteOf(c.ID) + "/" + SectionOf(c.ID)),
		Name:      xmlSafe(c.ID),
		Time:      seconds(c.DurationSec),
	}
	header := fmt.Sprintf("%s %s %s (%s)\n%s\n\n", strings.ToUpper(string(c.Outcome)), c.Level, c.ID, c.Spec, c.Title)
	text := xmlSafe(header + evidenceText(c, junitFieldLimit))
	message := oneLine(c.Message)
	if message == "" {
		message = oneLine(firstMessage(c))
	}
	message = xmlSafe(message)
	switch c.Outcome {
	case Fail:
		jc.Failure = &junitProblem{Message: message, Type: string(c.Level), Text: text}
	case Warn:
		if strict {
			jc.Failure = &junitProblem{Message: message, Type: string(c.Level), Text: text}
		} else {
			jc.SystemOut = &junitText{text}
		}
	case Error:
		kind := c.ErrorKind
		if kind == "" {
			kind = "error"
		}
		jc.Error = &junitProblem{Message: message, Type: xmlSafe(string(kind)), Text: text}
	case Skip:
		jc.Skipped = &junitProblem{Message: message}
	case Info:
		jc.SystemOut = &junitText{text}
	case Pass:
	default:
		// An outcome this conform does not know: report it, never hide it.
		jc.Error = &junitProblem{Message: xmlSafe(fmt.Sprintf("unknown outcome %q", c.Outcome)), Type: "unknown-outcome", Text: text}
	}
	return jc
}

// xmlSafe replaces what XML 1.0 cannot carry — control characters other
// than tab, newline and carriage return, surrogates, U+FFFE and U+FFFF,
// and invalid UTF-8 — by U+FFFD, since CDATA sections are written verbatim.
func xmlSafe(s string) string {
	ok := func(r rune) bool {
		return r == '\t' || r == '\n' || r == '\r' ||
			r >= 0x20 && r <= 0xD7FF || r >= 0xE000 && r <= 0xFFFD || r >= 0x10000 && r <= 0x10FFFF
	}
	clean := true
	for i, r := range s {
		if !ok(r) || r == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD") {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i, r := range s {
		if !ok(r) || r == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD") {
			r = utf8.RuneError
		}
		b.WriteRune(r)
	}
	return b.String()
}

// seconds formats a duration in seconds as JUnit writes it.
func seconds(s float64) string {
	if s < 0 {
		s = 0
	}
	return strconv.FormatFloat(s, 'f', 3, 64)
}
