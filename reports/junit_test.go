package reports

import (
	"bytes"
	"encoding/xml"
	"strings"
	"testing"
)

// Reading types, written independently of the writer's, as a CI server
// would read the file.
type readSuites struct {
	XMLName  xml.Name    `xml:"testsuites"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Errors   int         `xml:"errors,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Suites   []readSuite `xml:"testsuite"`
}

type readSuite struct {
	Name       string     `xml:"name,attr"`
	Tests      int        `xml:"tests,attr"`
	Failures   int        `xml:"failures,attr"`
	Errors     int        `xml:"errors,attr"`
	Skipped    int        `xml:"skipped,attr"`
	Properties []readProp `xml:"properties>property"`
	Cases      []readCase `xml:"testcase"`
	SystemOut  string     `xml:"system-out"`
}

type readProp struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type readCase struct {
	Classname string       `xml:"classname,attr"`
	Name      string       `xml:"name,attr"`
	Time      string       `xml:"time,attr"`
	Failure   *readProblem `xml:"failure"`
	Error     *readProblem `xml:"error"`
	Skipped   *readProblem `xml:"skipped"`
	SystemOut string       `xml:"system-out"`
}

type readProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

func parseJUnit(t *testing.T, r *Record) (readSuites, string) {
	t.Helper()
	var buf bytes.Buffer
	if err := WriteJUnit(&buf, r); err != nil {
		t.Fatalf("WriteJUnit: %v", err)
	}
	var doc readSuites
	if err := xml.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("the JUnit XML does not parse: %v\n%s", err, buf.String())
	}
	return doc, buf.String()
}

func TestJUnitCounts(t *testing.T) {
	type counts struct{ tests, failures, errors, skipped int }
	tests := []struct {
		name   string
		strict bool
		total  counts
		suites map[string]counts
	}{
		{
			name:  "warn passes",
			total: counts{9, 2, 1, 1},
			suites: map[string]counts{
				"wire":    {5, 1, 0, 0},
				"streams": {4, 1, 1, 1},
			},
		},
		{
			name:   "warn fails under strict",
			strict: true,
			total:  counts{9, 3, 1, 1},
			suites: map[string]counts{
				"wire":    {5, 2, 0, 0},
				"streams": {4, 1, 1, 1},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := fixture()
			r.Strict = tt.strict
			doc, _ := parseJUnit(t, r)
			if got := (counts{doc.Tests, doc.Failures, doc.Errors, doc.Skipped}); got != tt.total {
				t.Errorf("testsuites counts %+v, want %+v", got, tt.total)
			}
			if len(doc.Suites) != len(tt.suites) {
				t.Fatalf("%d testsuites, want %d", len(doc.Suites), len(tt.suites))
			}
			if doc.Suites[0].Name != "wire" || doc.Suites[1].Name != "streams" {
				t.Errorf("testsuites %q, %q: want wire, streams in record order", doc.Suites[0].Name, doc.Suites[1].Name)
			}
			for _, s := range doc.Suites {
				want := tt.suites[s.Name]
				if got := (counts{s.Tests, s.Failures, s.Errors, s.Skipped}); got != want {
					t.Errorf("testsuite %s counts %+v, want %+v", s.Name, got, want)
				}
				// The attributes agree with the elements.
				var el counts
				for _, c := range s.Cases {
					el.tests++
					switch {
					case c.Failure != nil:
						el.failures++
					case c.Error != nil:
						el.errors++
					case c.Skipped != nil:
						el.skipped++
					}
				}
				if el != want {
					t.Errorf("testsuite %s elements %+v, want %+v", s.Name, el, want)
				}
			}
		})
	}
}

func TestJUnitCases(t *testing.T) {
	r := fixture()
	doc, raw := parseJUnit(t, r)
	byName := map[string]readCase{}
	for _, s := range doc.Suites {
		for _, c := range s.Cases {
			byName[c.Name] = c
		}
	}
	if len(byName) != len(r.Cases) {
		t.Fatalf("%d testcases, want %d", len(byName), len(r.Cases))
	}
	tests := []struct {
		id        string
		classname string
		check     func(t *testing.T, c readCase)
	}{
		{"wire/1.2/prefix-big-endian", "wire/1.2", func(t *testing.T, c readCase) {
			if c.Failure != nil || c.Error != nil || c.Skipped != nil || c.SystemOut != "" {
				t.Errorf("a passing case has content: %+v", c)
			}
			if c.Time != "0.013" {
				t.Errorf("time %q, want 0.013", c.Time)
			}
		}},
		{"wire/1.3/byte-at-a-time", "wire/1.3", func(t *testing.T, c readCase) {
			if c.Failure == nil {
				t.Fatal("no <failure>")
			}
			if c.Failure.Message != "2 check(s) failed: a vector one byte per read" || c.Failure.Type != "MUST" {
				t.Errorf("failure message %q type %q", c.Failure.Message, c.Failure.Type)
			}
			for _, want := range []string{
				"input:", "00 01 02 03", "expected: {Frames:[] End:truncated}", "got: {Frames:[01 02] End:closed}",
				"diff:", `+ 	End: "closed"`, "reproduce: " + reproduce("wire/1.3/byte-at-a-time"),
				"<script>alert(1)</script> & ]]>", `\x1b[31m`,
			} {
				if !strings.Contains(c.Failure.Text, want) {
					t.Errorf("failure text lacks %q:\n%s", want, c.Failure.Text)
				}
			}
		}},
		{"wire/6.4/unreadable-counted", "wire/6.4", func(t *testing.T, c readCase) {
			if c.Failure != nil {
				t.Error("a warn is a <failure> without --strict")
			}
			if !strings.Contains(c.SystemOut, "unreadable frames are not counted") || !strings.Contains(c.SystemOut, "reproduce: ") {
				t.Errorf("the warn's evidence is not in system-out: %q", c.SystemOut)
			}
		}},
		{"wire/8/large-descriptor", "wire/8", func(t *testing.T, c readCase) {
			if c.Failure != nil || c.Error != nil || c.Skipped != nil {
				t.Errorf("info is not passing: %+v", c)
			}
			if !strings.Contains(c.SystemOut, "note: a 4 MiB descriptor decoded intact") {
				t.Errorf("system-out %q lacks the note", c.SystemOut)
			}
		}},
		{"streams/3.2/reorder", "streams/3.2", func(t *testing.T, c readCase) {
			if c.Error == nil {
				t.Fatal("no <error>")
			}
			if c.Error.Type != "timeout" || c.Error.Message != "the SUT did not answer within 10s" {
				t.Errorf("error type %q message %q", c.Error.Type, c.Error.Message)
			}
			if !strings.Contains(c.Error.Text, "panic: index out of range\n") || !strings.Contains(c.Error.Text, "error kind: timeout") {
				t.Errorf("error text lacks stderr or kind:\n%s", c.Error.Text)
			}
		}},
		{"streams/5/gap-report", "streams/5", func(t *testing.T, c readCase) {
			if c.Skipped == nil || c.Skipped.Message != "unimplemented: gap reports" {
				t.Errorf("skipped %+v", c.Skipped)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			c, ok := byName[tt.id]
			if !ok {
				t.Fatalf("no testcase %s", tt.id)
			}
			if c.Classname != tt.classname {
				t.Errorf("classname %q, want %q", c.Classname, tt.classname)
			}
			tt.check(t, c)
		})
	}
	props := map[string]string{}
	for _, p := range doc.Suites[0].Properties {
		props[p.Name] = p.Value
	}
	if props["sut"] != "./mybinding" || props["seed"] != "1" || props["implementation"] != "mybinding 1.2.3 (c)" {
		t.Errorf("properties %v", props)
	}
	if !strings.Contains(doc.Suites[1].SystemOut, "streams/5/gap-report") {
		t.Errorf("the streams suite does not name its declared-but-unimplemented case: %q", doc.Suites[1].SystemOut)
	}
	if !strings.HasPrefix(raw, `<?xml version="1.0" encoding="UTF-8"?>`) {
		t.Errorf("no XML declaration: %.60q", raw)
	}
}

func TestJUnitEmptyRecord(t *testing.T) {
	r := &Record{Schema: SchemaID}
	r.Summarize()
	doc, _ := parseJUnit(t, r)
	if doc.Tests != 0 || len(doc.Suites) != 0 {
		t.Errorf("empty record: %+v", doc)
	}
}

func TestXMLSafe(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain\ttext\n", "plain\ttext\n"},
		{"esc \x1b[0m", "esc \uFFFD[0m"},
		{"nul \x00", "nul \uFFFD"},
		{"bad utf-8 \xff", "bad utf-8 \uFFFD"},
		{"kept \uFFFD", "kept \uFFFD"},
		{"\uFFFE", "\uFFFD"},
	}
	for _, tt := range tests {
		if got := xmlSafe(tt.in); got != tt.want {
			t.Errorf("xmlSafe(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
