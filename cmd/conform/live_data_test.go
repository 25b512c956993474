package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/conform-suite/conform/internal/waittest"
	"github.com/conform-suite/conform/reports"
)

// isDataPlane reports whether a live case is one of the data-plane cases
// (profiles ranvier-subscriber and ranvier-publisher).
func isDataPlane(c reports.CaseResult) bool {
	return c.Profile == "ranvier-subscriber" || c.Profile == "ranvier-publisher"
}

// TestLiveDataPlane: the reference, in process and as a child process
// speaking conform.v1 on stdio, passes every data-plane live case on real
// loopback sockets, and each case carries the tag live. The in-process run
// selects the whole live suite; the child's, to keep the test short, the
// two data-plane profiles. (The e2e tests run one conform at a time: each
// asserts that no conform process outlives it.)
func TestLiveDataPlane(t *testing.T) {
	t.Parallel()
	cases := []struct{ sut, profile string }{
		{"builtin:reference", "live"},
		{"exec:" + bin + " reference", "ranvier-subscriber,ranvier-publisher"},
	}
	dir := t.TempDir()
	argss := make([][]string, len(cases))
	for i, tc := range cases {
		argss[i] = []string{"run", "--sut", tc.sut, "--profile", tc.profile, "--json", filepath.Join(dir, fmt.Sprintf("record%d.json", i))}
	}
	for i, r := range runAll(t, 90*time.Second, nil, argss...) {
		t.Run(strings.Fields(cases[i].sut)[0], func(t *testing.T) {
			n := 0
			for _, c := range r.rec.Cases {
				if !isDataPlane(c) {
					continue
				}
				n++
				if c.Outcome != reports.Pass {
					t.Errorf("%s: %s: %s %v", c.ID, c.Outcome, c.Message, c.Evidence)
				}
				if !strings.HasPrefix(c.ID, "live/") || !contains(c.Tags, "live") {
					t.Errorf("%s: tags %v, want the live suite and the tag live", c.ID, c.Tags)
				}
			}
			if n < 20 {
				t.Errorf("%d data-plane live cases ran, want at least 20", n)
			}
		})
	}
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// TestLiveDataMutantsExit1: a run against a live data-plane mutant exits 1,
// with the case that catches it selected (cases/catalog's mutation table
// runs every mutant against the whole suite).
func TestLiveDataMutantsExit1(t *testing.T) {
	t.Parallel()
	mutants := []struct{ name, cases string }{
		{"publisher-atomic-sequence", "live/2.3/*"},
		{"publisher-resends-whole-buffer", "live/1.4/*"},
		{"subscriber-closes-on-read-timeout", "live/6.5/subscriber-*"},
	}
	argss := make([][]string, len(mutants))
	for i, m := range mutants {
		argss[i] = []string{"run", "--sut", "builtin:mutant/" + m.name, "--profile", "live", "--case", m.cases}
	}
	for i, r := range runAll(t, 60*time.Second, nil, argss...) {
		t.Run(mutants[i].name, func(t *testing.T) {
			if r.code != 1 {
				t.Errorf("exit code %d, want 1\n%s", r.code, r.stdout)
			}
		})
	}
}

// startLivePublisher starts "conform live-publisher ARGS" as a process of
// its own and returns the --peer URL it prints. It is stopped with SIGTERM
// when the test ends, and must exit 0.
func startLivePublisher(t *testing.T, args ...string) string {
	t.Helper()
	line := startServer(t, false, append([]string{"live-publisher"}, args...)...)
	if !strings.HasPrefix(line, "tcp://127.0.0.1:") {
		t.Fatalf("conform live-publisher printed %q, not its tcp://127.0.0.1:PORT/NAME", line)
	}
	return line
}

// TestLiveObservationProfile: conform run --peer, with no --sut, judges the
// reference publisher run as a separate process by the wire alone: the
// cases that can pass, and the ones that need a shim skip. Against a
// mutant's publisher the same run exits 1.
func TestLiveObservationProfile(t *testing.T) {
	t.Parallel()
	// Big samples through a small send buffer, so that a slow reader makes
	// the publisher's writes stop part-way.
	heavy := []string{"--size", "32768", "--interval", "20ms", "--threads", "1", "--send-buffer", "8192"}
	var g waittest.Group
	defer g.Wait()
	for _, tc := range []struct {
		name   string
		args   []string
		cases  []string
		code   int
		caught string
	}{
		{"reference", nil, nil, 0, ""},
		{"reference-heavy", heavy, []string{"live/6.5/*", "live/1.4/*"}, 0, ""},
		{"publisher-sends-before-request", []string{"--mutant", "publisher-sends-before-request"}, []string{"live/4.1/*"}, 1, "live/4.1/publisher-nothing-before-request"},
		{"publisher-resends-whole-buffer", append([]string{"--mutant", "publisher-resends-whole-buffer"}, heavy...), []string{"live/1.4/*"}, 1, "live/1.4/publisher-resumes-partial-write"},
	} {
		// At once in this test's place: each run mostly waits on the
		// publisher's intervals.
		g.Run(t, tc.name, func(t *testing.T) {
			peer := startLivePublisher(t, tc.args...)
			out := filepath.Join(t.TempDir(), "record.json")
			args := []string{"run", "--peer", peer, "--profile", "ranvier-publisher", "--json", out}
			for _, c := range tc.cases {
				args = append(args, "--case", c)
			}
			r := conform(t, 60*time.Second, nil, args...)
			if r.code != tc.code {
				t.Errorf("exit code %d, want %d\n%s", r.code, tc.code, r.stdout)
			}
			if tc.code == 0 {
				if n := count(r.rec, reports.Pass); tc.cases == nil && n < 10 {
					t.Errorf("%d cases passed by observation alone, want at least 10\n%s", n, r.stdout)
				}
				for _, c := range r.rec.Cases {
					if c.Outcome != reports.Pass && c.Outcome != reports.Skip {
						t.Errorf("%s: %s: %s", c.ID, c.Outcome, c.Message)
					}
				}
			}
			if tc.caught != "" {
				for _, c := range r.rec.Cases {
					if c.ID == tc.caught && c.Outcome != reports.Fail {
						t.Errorf("%s is %s against the mutant, want fail", c.ID, c.Outcome)
					}
				}
			}
		})
	}
}
