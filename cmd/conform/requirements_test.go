package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/conform-suite/conform/reports"
	"github.com/conform-suite/conform/requirements"
)

// reqIndex is a small synthetic index: wire has a traced MUST, a waived MUST,
// an untraced MUST and a traced SHOULD; streams has one MUST, traced only
// when judged is set. The real index is not used, so that these counts do
// not move as it grows.
func reqIndex(t *testing.T, streamsJudged bool) func() (*requirements.Coverage, error) {
	t.Helper()
	e := func(id, section, level string) map[string]any {
		return map[string]any{"id": id, "section": section, "level": level, "form": "keyword", "summary": "Summary of " + id + "."}
	}
	waived := e("ranvier-wire§1.2#2", "1.2", "MUST")
	waived["waiver"] = map[string]string{"reason": "open", "why": "Left free."}
	file := func(name string, es ...map[string]any) *fstest.MapFile {
		b, err := json.Marshal(map[string]any{"document": name, "title": name, "requirements": es})
		if err != nil {
			t.Fatal(err)
		}
		return &fstest.MapFile{Data: b}
	}
	fsys := fstest.MapFS{
		"ranvier-wire.json": file("ranvier-wire", e("ranvier-wire§1.2#1", "1.2", "MUST"), waived,
			e("ranvier-wire§1.3#1", "1.3", "MUST"), e("ranvier-wire§1.3#2", "1.3", "SHOULD")),
		"ranvier-streams.json": file("ranvier-streams", e("ranvier-streams§2.1#1", "2.1", "MUST")),
	}
	cs := []requirements.Case{
		{ID: "wire/1.2/a", Level: reports.MUST, Requirements: []string{"ranvier-wire§1.2#1"}},
		{ID: "wire/1.3/b", Level: reports.SHOULD, Requirements: []string{"ranvier-wire§1.3#2"}},
	}
	if streamsJudged {
		cs = append(cs, requirements.Case{ID: "streams/2.1/c", Level: reports.MUST, Requirements: []string{"ranvier-streams§2.1#1"}})
	}
	return func() (*requirements.Coverage, error) {
		x, err := requirements.Load(fsys)
		if err != nil {
			return nil, err
		}
		return requirements.Compute(x, cs, requirements.CaseLinks(cs))
	}
}

func TestRequirementsCommand(t *testing.T) {
	tests := []struct {
		name          string
		args          []string
		streamsJudged bool
		broken        bool
		code          int
		stdout        []string // substrings
		notStdout     []string
		stderr        string
		untraced      int // with --untraced --json: the entries listed
	}{
		{name: "the index and its coverage", code: 0,
			stdout: []string{
				"ranvier-wire§1.3#1\tMUST\tuntraced\t-\t",
				"ranvier-wire§1.2#2\tMUST\twaived\topen: Left free.\t",
				"ranvier-wire     MUST        3      1       1       1      33.3%   66.7%",
				"ranvier-wire     SHOULD      1      1       0       0     100.0%  100.0%",
				"ranvier-wire     all         4      2       1       1      50.0%   75.0%",
				"ranvier-streams  MUST        1      0       0       1       0.0%    0.0%",
			}},
		{name: "untraced MUSTs exit 1", args: []string{"--untraced"}, code: 1,
			stdout:    []string{"ranvier-wire§1.3#1\t", "ranvier-streams§2.1#1\t"},
			notStdout: []string{"ranvier-wire§1.3#2", "ranvier-wire§1.2#2"},
			stderr:    "2 MUST requirements with neither a case nor a waiver"},
		{name: "an untraced SHOULD is no failure", args: []string{"--untraced", "--document", "ranvier-streams"}, streamsJudged: true, code: 0,
			stderr: "0 MUST requirements"},
		{name: "narrowed to a document with one", args: []string{"--untraced", "--document", "ranvier-streams"}, code: 1,
			stdout: []string{"ranvier-streams§2.1#1"}, notStdout: []string{"ranvier-wire"}},
		{name: "narrowed to a document without", args: []string{"--document", "ranvier-streams"}, streamsJudged: true, code: 0,
			stdout: []string{"ranvier-streams§2.1#1\tMUST\ttraced\tstreams/2.1/c\t"}, notStdout: []string{"ranvier-wire"}},
		{name: "json", args: []string{"--json"}, code: 0, stdout: []string{`"document": "ranvier-wire"`, `"untraced": 1`}},
		{name: "untraced as json", args: []string{"--untraced", "--json"}, code: 1, untraced: 2},
		{name: "none untraced as json", args: []string{"--untraced", "--json", "--document", "ranvier-streams"}, streamsJudged: true, code: 0, untraced: 0},
		{name: "unknown document", args: []string{"--document", "ranvier"}, code: 2, stderr: "the index holds ranvier-wire, ranvier-streams"},
		{name: "positional argument", args: []string{"wire"}, code: 2, stderr: "usage: conform requirements"},
		{name: "unknown flag", args: []string{"--all"}, code: 2, stderr: "flag provided but not defined"},
		{name: "a broken index", broken: true, code: 1, stderr: "conform: index broken"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			load := reqIndex(t, tt.streamsJudged)
			if tt.broken {
				load = func() (*requirements.Coverage, error) { return nil, errors.New("index broken") }
			}
			var stdout, stderr bytes.Buffer
			code := requirementsMain(tt.args, &stdout, &stderr, load)
			if code != tt.code {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.code, stdout.String(), stderr.String())
			}
			for _, s := range tt.stdout {
				if !strings.Contains(stdout.String(), s) {
					t.Errorf("stdout lacks %q:\n%s", s, stdout.String())
				}
			}
			for _, s := range tt.notStdout {
				if strings.Contains(stdout.String(), s) {
					t.Errorf("stdout holds %q:\n%s", s, stdout.String())
				}
			}
			if !strings.Contains(stderr.String(), tt.stderr) {
				t.Errorf("stderr %q lacks %q", stderr.String(), tt.stderr)
			}
			if len(tt.args) > 1 && tt.args[0] == "--untraced" && tt.args[1] == "--json" {
				var list []map[string]any
				if err := json.Unmarshal(stdout.Bytes(), &list); err != nil || list == nil || len(list) != tt.untraced {
					t.Errorf("--untraced --json: %v, %d entries, want %d:\n%s", err, len(list), tt.untraced, stdout.String())
				}
			}
		})
	}
}
