package reports

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/conform-suite/conform/internal/schemacheck"
)

// TestRecordMatchesSchema validates records holding every field of the Go
// types — profile verdicts, a start error, a lost SUT, an applied baseline
// — against record.schema.json, so that the two cannot drift apart.
func TestRecordMatchesSchema(t *testing.T) {
	s, err := schemacheck.Compile(SchemaID, Schema)
	if err != nil {
		t.Fatal(err)
	}
	full := fixture()
	full.MustInCatalogue = map[string]int{"wire": 40, "streams": 12}
	full.Lost = &Lost{Reason: "3 consecutive ops unanswered", After: "streams/3.2/reorder", NotRun: 0,
		Last: &SUTFailure{Kind: KindTimeout, Message: "no answer", Exit: "signal: killed", Stderr: "tail"}}
	b, err := ParseBaseline(strings.NewReader("wire/1.3/byte-at-a-time  splits\nstreams/9/x  elsewhere\n"))
	if err != nil {
		t.Fatal(err)
	}
	res := b.ApplyWithin(full, time.Now(), []string{"streams/9/x"})
	full.Baseline = &res
	full.Summarize()
	notStarted := fixture()
	notStarted.StartError = &SUTFailure{Kind: KindStart, Message: "the SUT never said Hello", Exit: "exit status 7", Stderr: "boom"}
	notStarted.AllowUnimplemented = true
	notStarted.ExitCode = 3
	notStarted.Summarize()
	empty := &Record{Schema: SchemaID, SUT: SUT{Hello: json.RawMessage("null")}}
	empty.Summarize()
	for name, r := range map[string]*Record{"full": full, "not started": notStarted, "empty": empty} {
		js, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Validate(js); err != nil {
			t.Errorf("%s: the record does not match record.schema.json: %v\n%s", name, err, js)
		}
	}
	if len(full.Summary.ByProfile) != 2 || len(res.OutsideSelection) != 1 {
		t.Errorf("the fixture lacks what it should exercise: %+v, %+v", full.Summary.ByProfile, res.OutsideSelection)
	}
}
