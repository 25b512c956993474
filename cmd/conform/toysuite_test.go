package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/conform-suite/conform/internal/toysuite"
	"github.com/conform-suite/conform/reports"
	"github.com/conform-suite/conform/suite"
	"github.com/conform-suite/conform/suites"
)

// TestToySuite adds a suite written in a package of its own with one line —
// the append below — and runs it end to end through the commands a user
// types: it is listed and explained, the reference passes it, its mutant
// fails it, selftest finds the mutant caught by a MUST case, and its fuzz
// target (an op conform.v1 does not define) is listed, runs clean against
// the reference and finds the mutant, with a finding that replays.
func TestToySuite(t *testing.T) {
	t.Parallel()
	reg, err := suite.NewRegistry(append(suites.All(), toysuite.Suite())...)
	if err != nil {
		t.Fatal(err)
	}
	conform := func(args ...string) (int, string) {
		t.Helper()
		var out, errOut bytes.Buffer
		code := Main(context.Background(), reg, args, nil, &out, &errOut)
		return code, out.String() + errOut.String()
	}

	if code, out := conform("list", "--profile", "toy"); code != 0 || !strings.Contains(out, "toy/1/shouts\tMUST\ttoy") {
		t.Errorf("list: exit %d\n%s", code, out)
	}
	if code, out := conform("explain", "toy/1/shouts"); code != 0 || !strings.Contains(out, "toy-spec §1") {
		t.Errorf("explain: exit %d\n%s", code, out)
	}

	record := filepath.Join(t.TempDir(), "record.json")
	code, out := conform("run", "--sut", "builtin:reference", "--profile", "toy", "--json", record)
	if code != 0 {
		t.Fatalf("the reference: exit %d\n%s", code, out)
	}
	if c := caseOf(t, record, "toy/1/shouts"); c.Outcome != reports.Pass {
		t.Errorf("the reference: toy/1/shouts is %s: %s", c.Outcome, c.Message)
	}

	code, out = conform("run", "--sut", "builtin:mutant/toy-whispers", "--profile", "toy", "--json", record)
	if code != 1 {
		t.Fatalf("the mutant: exit %d, want 1\n%s", code, out)
	}
	if c := caseOf(t, record, "toy/1/shouts"); c.Outcome != reports.Fail {
		t.Errorf("the mutant: toy/1/shouts is %s, want fail", c.Outcome)
	}

	if code, out := conform("selftest", "--suite", "toy"); code != 0 || !strings.Contains(out, "toy-whispers") {
		t.Errorf("selftest: exit %d\n%s", code, out)
	}

	if code, out := conform("fuzz", "--list"); code != 0 || !strings.Contains(out, "toy.shout\twords answered in upper case (toy-spec §1)\n") {
		t.Errorf("fuzz --list: exit %d\n%s", code, out)
	}
	clean := t.TempDir()
	if code, out := conform("fuzz", "--sut", "builtin:reference", "--target", "toy.shout", "--execs", "300", "--out", clean); code != 0 {
		t.Errorf("fuzz against the reference: exit %d, want 0\n%s", code, out)
	}
	dirty := t.TempDir()
	code, out = conform("fuzz", "--sut", "builtin:mutant/toy-whispers", "--target", "toy", "--execs", "300", "--out", dirty)
	if code != 1 {
		t.Fatalf("fuzz against the mutant: exit %d, want 1\n%s", code, out)
	}
	found, err := filepath.Glob(filepath.Join(dirty, "findings", "toy.shout.diff-*.json"))
	if err != nil || len(found) == 0 {
		t.Fatalf("fuzz against the mutant: no toy.shout finding in %s (%v)\n%s", dirty, err, out)
	}
	code, out = conform("replay", found[0], "--sut", "builtin:mutant/toy-whispers")
	if code != 1 || !strings.Contains(out, "reproduces") || !strings.Contains(out, "stringValue: reference") {
		t.Errorf("replay against the mutant: exit %d, want 1 with the differing word\n%s", code, out)
	}
	if code, out := conform("replay", found[0], "--sut", "builtin:reference"); code != 0 {
		t.Errorf("replay against the reference: exit %d, want 0\n%s", code, out)
	}
}

// caseOf reads one case's result from a record file.
func caseOf(t *testing.T, path, id string) reports.CaseResult {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rec reports.Record
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatal(err)
	}
	for _, c := range rec.Cases {
		if c.ID == id {
			return c
		}
	}
	t.Fatalf("%s is not in the record", id)
	return reports.CaseResult{}
}
