package reports

import (
	"encoding/json"
	"strings"
	"time"
)

// hostile is text that every rendering must carry safely: markup, an XML
// CDATA terminator, a control character, backticks and a table pipe.
const hostile = "<script>alert(1)</script> & ]]> \x1b[31m `tick` | pipe"

// longHex is a 40-byte input, split into two reads, as the wire cases write
// their inputs.
var longHex = strings.TrimSpace(strings.Repeat("00 01 02 03 04 05 06 07 41 42 ", 3)) + " | " +
	strings.TrimSpace(strings.Repeat("ff ee ", 5)) + " | <end of stream>"

// reproduce returns the reproduce command runner.Reproduce writes.
func reproduce(id string) string {
	return "conform run --sut ./mybinding --case " + id + " --seed 1"
}

// fixture returns a record with two suites, every outcome, and evidence of
// every kind. Its cases, by outcome:
//
//	pass:  wire/1.2/prefix-big-endian, wire/2/ceiling-accepted, streams/3.4/window-is-64
//	fail:  wire/1.3/byte-at-a-time, streams/3.1/keyed-on-pair
//	warn:  wire/6.4/unreadable-counted
//	info:  wire/8/large-descriptor
//	skip:  streams/5/gap-report
//	error: streams/3.2/reorder (timeout)
func fixture() *Record {
	r := &Record{
		Schema:      SchemaID,
		Conform:     "v0.4.0",
		Corpus:      "wire/v1 sha256:76d00e3624cbe14ab6e373036dab146cc0137dc7e1ce336dbb46586ff756538f",
		Started:     time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC),
		DurationSec: 1.5,
		SUT: SUT{
			Spec: "./mybinding", Carrier: "exec",
			Hello: json.RawMessage(`{"implementation":"mybinding","version":"1.2.3","language":"c","profiles":["wire","streams"]}`),
		},
		Seed:          1,
		Unimplemented: []string{"streams/5/gap-report"},
		ExitCode:      1,
	}
	mk := func(id string, level Level, o Outcome) CaseResult {
		c := CaseResult{
			ID: id, Title: "title of " + id, Spec: "ranvier-wire §" + SectionOf(id), Level: level,
			Profile: SuiteOf(id), Outcome: o, DurationSec: 0.0125,
		}
		if o != Pass {
			c.Reproduce = reproduce(id)
		}
		return c
	}
	fail1 := mk("wire/1.3/byte-at-a-time", MUST, Fail)
	fail1.Message = "2 check(s) failed: a vector one byte per read"
	fail1.Evidence = []Evidence{
		{
			Message:  "a vector one byte per read",
			Input:    longHex,
			Expected: "{Frames:[] End:truncated}",
			Got:      "{Frames:[01 02] End:closed}",
			Diff:     "  wire.readView{\n- \tEnd: \"truncated\",\n+ \tEnd: \"closed\",\n  }\n",
		},
		{Message: "hostile evidence " + hostile, Got: hostile},
	}
	fail2 := mk("streams/3.1/keyed-on-pair", MUST, Fail)
	fail2.Message = "1 check(s) failed: tracking keyed on stream_ref alone"
	fail2.Evidence = []Evidence{{Message: "tracking keyed on stream_ref alone", Input: "00 01", Expected: "2 streams", Got: "1 stream"}}
	warn := mk("wire/6.4/unreadable-counted", SHOULD, Warn)
	warn.Message = "1 check(s) failed: unreadable frames are not counted"
	warn.Evidence = []Evidence{{Message: "unreadable frames are not counted", Expected: "1", Got: "0"}}
	info := mk("wire/8/large-descriptor", INFO, Info)
	info.Notes = []string{"a 4 MiB descriptor decoded intact"}
	skip := mk("streams/5/gap-report", MUST, Skip)
	skip.Message = "unimplemented: gap reports"
	errc := mk("streams/3.2/reorder", MUST, Error)
	errc.ErrorKind = "timeout"
	errc.Message = "the SUT did not answer within 10s"
	errc.Evidence = []Evidence{{Message: "the SUT's standard error ended with", Stderr: "panic: index out of range\ngoroutine 1 [running]:"}}
	r.Cases = []CaseResult{
		mk("wire/1.2/prefix-big-endian", MUST, Pass),
		fail1,
		mk("wire/2/ceiling-accepted", MUST, Pass),
		warn,
		info,
		mk("streams/3.4/window-is-64", MUST, Pass),
		fail2,
		errc,
		skip,
	}
	r.Summarize()
	return r
}

// caseIDs returns the IDs of r's cases with outcome o.
func caseIDs(r *Record, o Outcome) []string {
	var ids []string
	for _, c := range r.Cases {
		if c.Outcome == o {
			ids = append(ids, c.ID)
		}
	}
	return ids
}
