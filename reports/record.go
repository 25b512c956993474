// Package reports defines conform's record — one JSON document per run, with
// a published JSON Schema (record.schema.json) — and its writers. Every other
// rendering (the terminal summary, JUnit XML, Markdown and HTML) is computed
// from a Record, never separately; so are baselines and record diffs.
package reports

import (
	_ "embed"
	"encoding/json"
	"time"
)

// SchemaID names the record format; it changes when a field changes meaning.
// Version 2 added the verdict per declared profile (summary.by_profile), the
// reasons a SUT could not be started or was lost (start_error, lost),
// allow_unimplemented, and the baseline's unimplemented, outside_selection
// and nothing_judged.
const SchemaID = "https://conform.invalid/schema/record/v2"

// SchemaV1 names the previous record format, which ReadJSON still reads
// (conform diff compares a record from before an upgrade with one after).
const SchemaV1 = "https://conform.invalid/schema/record/v1"

// Schema is the JSON Schema of the record.
//
//go:embed record.schema.json
var Schema []byte

// Level is a requirement's RFC 2119 level. The words are fixed: CI scripts
// read them.
type Level string

const (
	MUST   Level = "MUST"   // MUST and MUST NOT
	SHOULD Level = "SHOULD" // SHOULD and SHOULD NOT
	MAY    Level = "MAY"
	INFO   Level = "INFO" // behaviour the spec leaves open
)

// Outcome is a case's result. The words are fixed: CI scripts read them.
type Outcome string

const (
	Pass  Outcome = "pass"
	Fail  Outcome = "fail"  // a MUST broken
	Warn  Outcome = "warn"  // a SHOULD broken; a fail under --strict
	Info  Outcome = "info"  // recorded, never judged
	Skip  Outcome = "skip"  // unimplemented, or profile not selected or declared
	Error Outcome = "error" // the SUT crashed, hung or broke conform.v1
)

// ErrorKind says why a case ended in error. The words are fixed: the record
// and CI scripts read them. Code matches a kind by comparing values, never by
// reading a message.
type ErrorKind string

const (
	// KindCrash: the SUT exited or the connection to it was lost.
	KindCrash ErrorKind = "crash"
	// KindTimeout: the SUT did not answer within the op timeout.
	KindTimeout ErrorKind = "timeout"
	// KindProtocol: the SUT broke conform.v1 itself — garbage, a length
	// above the ceiling, an answer to another request or of another op.
	KindProtocol ErrorKind = "protocol"
	// KindStart: the SUT could not be started or never said Hello.
	KindStart ErrorKind = "start"
	// KindOpError: the SUT answered the op with conform.v1's Error.
	KindOpError ErrorKind = "op-error"
	// KindLost: the case was not run because the SUT was presumed lost.
	KindLost ErrorKind = "lost"
	// KindInterrupted: the run was interrupted while the case ran.
	KindInterrupted ErrorKind = "interrupted"
	// KindHarness: conform itself failed (a bug, a deadline it missed, a
	// resource it could not get); never the SUT's fault.
	KindHarness ErrorKind = "harness"
)

// Outcomes lists every outcome in the order summaries print them.
var Outcomes = []Outcome{Pass, Fail, Warn, Info, Skip, Error}

// Record is the conformance record of one run.
type Record struct {
	Schema string `json:"schema"`
	// Conform is the version of conform that ran.
	Conform string `json:"conform"`
	// Corpus names the golden vectors used and their digest.
	Corpus      string    `json:"corpus"`
	Started     time.Time `json:"started"`
	DurationSec float64   `json:"duration_sec"`
	// Interrupted is set when the run stopped before every selected case
	// ran (Ctrl+C, or the SUT lost); the record holds what did run.
	Interrupted bool   `json:"interrupted"`
	SUT         SUT    `json:"sut"`
	Seed        int64  `json:"seed"`
	Strict      bool   `json:"strict"`
	Selection   Select `json:"selection"`
	// Undeclared lists selected profiles the SUT's Hello does not declare.
	Undeclared []string `json:"undeclared_profiles"`
	// Unimplemented lists cases the SUT answered Unimplemented although it
	// declared their profile: coverage it claims and does not have.
	Unimplemented []string `json:"declared_but_unimplemented"`
	// AllowUnimplemented is set by --allow-unimplemented: a declared
	// profile whose MUST cases answered Unimplemented does not fail the run.
	AllowUnimplemented bool `json:"allow_unimplemented"`
	// StartError, when set, says why the SUT could not be started or was
	// refused before any case ran; every case is then recorded as error of
	// kind start and the exit code is 3.
	StartError *SUTFailure `json:"start_error,omitempty"`
	// Lost, when set, says why the SUT was presumed lost during the run;
	// the cases after that point are recorded as error of kind lost, not
	// run.
	Lost    *Lost        `json:"lost,omitempty"`
	Cases   []CaseResult `json:"cases"`
	Summary Summary      `json:"summary"`
	// Baseline is set when a baseline of known failures was applied: the
	// exit code then follows it.
	Baseline *BaselineResult `json:"baseline,omitempty"`
	// MustInCatalogue counts, per profile, the MUST cases the catalogue of
	// the conform that ran holds, so that a verdict can say when a run
	// selected only part of a profile. Absent when unknown.
	MustInCatalogue map[string]int `json:"must_in_catalogue,omitempty"`
	ExitCode        int            `json:"exit_code"`
}

// SUT is what the record knows about the implementation.
type SUT struct {
	// Spec is the --sut value.
	Spec    string `json:"spec"`
	Carrier string `json:"carrier"`
	// Hello is the SUT's Hello in canonical JSON, or null if none came.
	Hello json.RawMessage `json:"hello"`
}

// Select is what the user selected.
type Select struct {
	Profiles []string `json:"profiles"`
	Cases    []string `json:"cases"`
}

// CaseResult is one case's entry.
type CaseResult struct {
	ID      string   `json:"id"`
	Title   string   `json:"title"`
	Spec    string   `json:"spec"`
	Level   Level    `json:"level"`
	Profile string   `json:"profile"`
	Tags    []string `json:"tags"`
	Outcome Outcome  `json:"outcome"`
	// ErrorKind is set with outcome error: crash, timeout, protocol, start,
	// op-error (the SUT answered Error), lost (not run: the SUT was presumed
	// lost), interrupted or harness (a bug in conform).
	ErrorKind ErrorKind `json:"error_kind,omitempty"`
	// Message says why, for any outcome but pass.
	Message     string     `json:"message,omitempty"`
	DurationSec float64    `json:"duration_sec"`
	Evidence    []Evidence `json:"evidence"`
	// Notes are what an informational case observed.
	Notes []string `json:"notes,omitempty"`
	// Reproduce is the command that reruns this case alone.
	Reproduce string `json:"reproduce,omitempty"`
}

// Evidence is one observation behind a non-pass outcome.
type Evidence struct {
	Message string `json:"message"`
	// Input is what was sent, as hex or a description.
	Input    string `json:"input,omitempty"`
	Expected string `json:"expected,omitempty"`
	Got      string `json:"got,omitempty"`
	// Diff is a structural diff of expected against got.
	Diff string `json:"diff,omitempty"`
	// Stderr is the tail of the SUT's standard error, for an error.
	Stderr string `json:"stderr,omitempty"`
}

// SUTFailure is why a SUT could not be reached: the error a carrier
// reported, with how the SUT's process ended and what it last wrote to its
// standard error, where conform started it.
type SUTFailure struct {
	Kind ErrorKind `json:"kind"`
	// Message says what happened, for a person.
	Message string `json:"message"`
	// Exit is the exit status or signal of the SUT's process, such as
	// "exit status 2" or "signal: segmentation fault", when it ended.
	Exit string `json:"exit,omitempty"`
	// Stderr is the tail of the SUT's standard error.
	Stderr string `json:"stderr,omitempty"`
}

// StartHeadline says, for a person, what a start error means: the SUT could
// not be started — or, for one of kind interrupted, that the run was
// interrupted while it started, which says nothing against the SUT.
func (f *SUTFailure) StartHeadline() string {
	if f.Kind == KindInterrupted {
		return "the run was interrupted while the SUT was starting"
	}
	return "the SUT could not be started"
}

// Lost records a SUT presumed lost during a run.
type Lost struct {
	// Reason says why, such as "3 consecutive timeouts or failed restarts".
	Reason string `json:"reason"`
	// After is the ID of the case whose failure tipped the SUT into lost.
	After string `json:"after"`
	// NotRun counts the cases recorded as error of kind lost without being
	// run.
	NotRun int `json:"not_run"`
	// Last is the last error the SUT gave.
	Last *SUTFailure `json:"last_error,omitempty"`
}

// Summary counts outcomes.
type Summary struct {
	Total   int                        `json:"total"`
	Counts  map[Outcome]int            `json:"counts"`
	ByLevel map[Level]map[Outcome]int  `json:"by_level"`
	BySuite map[string]map[Outcome]int `json:"by_suite"`
	// ByProfile is the verdict on each profile the SUT declares, in the
	// order its Hello lists them.
	ByProfile []ProfileVerdict `json:"by_profile"`
}

// Summarize counts r's cases into r.Summary.
func (r *Record) Summarize() {
	s := Summary{
		Counts:  map[Outcome]int{},
		ByLevel: map[Level]map[Outcome]int{},
		BySuite: map[string]map[Outcome]int{},
	}
	for _, o := range Outcomes {
		s.Counts[o] = 0
	}
	for _, c := range r.Cases {
		s.Total++
		s.Counts[c.Outcome]++
		if s.ByLevel[c.Level] == nil {
			s.ByLevel[c.Level] = map[Outcome]int{}
		}
		s.ByLevel[c.Level][c.Outcome]++
		suite := SuiteOf(c.ID)
		if s.BySuite[suite] == nil {
			s.BySuite[suite] = map[Outcome]int{}
		}
		s.BySuite[suite][c.Outcome]++
	}
	s.ByProfile = profileVerdicts(r)
	r.Summary = s
}

// SuiteOf returns the suite of a case ID, its part before the first '/'.
func SuiteOf(id string) string {
	for i := 0; i < len(id); i++ {
		if id[i] == '/' {
			return id[:i]
		}
	}
	return id
}
