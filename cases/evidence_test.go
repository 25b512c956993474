package cases_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/conform-suite/conform/cases"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/reports"
	"github.com/conform-suite/conform/reports/evidence"
	"github.com/conform-suite/conform/runner"
	"github.com/conform-suite/conform/suites"
	"github.com/conform-suite/conform/sut"
	"github.com/conform-suite/conform/sut/builtin"
)

// checkEvidence reports every piece of a case's evidence a user should not
// read (evidence.Check).
func checkEvidence(t *testing.T, who string, c reports.CaseResult) {
	t.Helper()
	for _, e := range c.Evidence {
		if err := evidence.Check(e); err != nil {
			t.Errorf("%s: %s: evidence %q: %v\nexpected: %.200s\ngot: %.200s\ndiff: %.200s", who, c.ID, e.Message, err, e.Expected, e.Got, e.Diff)
		}
	}
}

// exhaustive are the cases that present every vector at every split point.
var exhaustive = map[string]bool{
	"tlv/the-two-compositions-storage-and-meaning/every-two-segment-split": true,
	"tlv/the-two-compositions-storage-and-meaning/three-segment-splits":    true,
	"tlv/the-two-compositions-storage-and-meaning/one-byte-per-segment":    true,
	"tlv/nested-tlv-structure/truncated-at-every-byte":                     true,
	"wire/8/large-descriptor": true,
}

// TestEvidenceInProtocolTerms runs every codec mutant against its suite's
// cases and reads all the evidence its failures give: no Go type, no go-cmp
// notation, and every check that shows what it expected and what it got
// names the fields that differ.
func TestEvidenceInProtocolTerms(t *testing.T) {
	reg := suites.Default()
	all := codecCases(t)
	for _, m := range reg.Mutants() {
		var cs []cases.Case
		for _, c := range all {
			// The 16 MiB boundary cases, and the TLV cases that present
			// every vector at every split point, judge and report as the
			// smaller cases do, at many times the cost: they are left out
			// (the fuzz target's seeds still read their evidence).
			if c.Suite() == m.Suite && (m.Profile == "" || c.Profile == m.Profile) && !slices.Contains(c.Tags, "large") && !exhaustive[c.ID] {
				cs = append(cs, c)
			}
		}
		if len(cs) == 0 {
			continue // a live mutant: its cases need sockets
		}
		t.Run(m.Name, func(t *testing.T) {
			t.Parallel()
			impl, _ := reg.MutantImpl(m.Name)
			rec := runner.Run(context.Background(), runner.Config{Spec: "builtin:mutant/" + m.Name, Client: builtin.New("builtin:mutant/"+m.Name, impl), Cases: cs, Seed: 1})
			for _, c := range rec.Cases {
				checkEvidence(t, m.Name, c)
			}
		})
	}
}

// noLength answers as the client it wraps, with every Data.length of a
// read_frames answer left out: a shim that forgets it.
type noLength struct{ sut.Client }

func (n noLength) Do(ctx context.Context, req *conformpb.Request) (*conformpb.Response, error) {
	resp, err := n.Client.Do(ctx, req)
	for _, out := range resp.GetReadFrames().GetOutputs() {
		for _, y := range out.GetYields() {
			for _, d := range y.GetFrames() {
				d.Length = 0
			}
		}
	}
	return resp, err
}

// TestOmittedLengthNamed: a shim that omits Data.length answers with frames
// that render like the expected ones everywhere but there; the evidence
// names the field.
func TestOmittedLengthNamed(t *testing.T) {
	var cs []cases.Case
	for _, c := range codecCases(t) {
		if c.ID == "wire/1.2/reader-prefix-big-endian" {
			cs = append(cs, c)
		}
	}
	if len(cs) != 1 {
		t.Fatal("wire/1.2/reader-prefix-big-endian is not in the catalogue")
	}
	client := noLength{builtin.New("builtin:reference", suites.Default().Reference())}
	rec := runner.Run(context.Background(), runner.Config{Spec: "no length", Client: client, Cases: cs, Seed: 1})
	c := rec.Cases[0]
	if c.Outcome != reports.Fail || len(c.Evidence) == 0 {
		t.Fatalf("%s is %s, want fail: %s", c.ID, c.Outcome, c.Message)
	}
	checkEvidence(t, "no length", c)
	if d := c.Evidence[0].Diff; !strings.Contains(d, "- yields[*].frames[0].length: 18") || !strings.Contains(d, "+ yields[*].frames[0].length: 0") {
		t.Errorf("the diff does not name Data.length:\n%s", d)
	}
}
