package reports

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// MaxRecordSize bounds the record file ReadJSON reads. A record bounds what
// it keeps of each case (CaseResult.Bound), so a real one stays far below;
// a larger file is refused before it is read whole.
const MaxRecordSize = 256 << 20

// ReadJSON reads the record at path, as WriteJSON writes it. It fails when the
// file is larger than MaxRecordSize, is not JSON, or is not a conform record
// of this schema or the previous one (SchemaV1, whose records lack the
// fields version 2 added).
func ReadJSON(path string) (*Record, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading record: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxRecordSize+1))
	if err != nil {
		return nil, fmt.Errorf("reading record %s: %w", path, err)
	}
	if len(data) > MaxRecordSize {
		return nil, fmt.Errorf("reading record %s: larger than %d MiB: not a record conform wrote", path, MaxRecordSize>>20)
	}
	r, err := ParseRecord(data)
	if err != nil {
		return nil, fmt.Errorf("reading record %s: %w", path, err)
	}
	return r, nil
}

// ParseRecord decodes a record from its JSON, as ReadJSON does for a file.
func ParseRecord(data []byte) (*Record, error) {
	var r Record
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, err
	}
	switch r.Schema {
	case SchemaID, SchemaV1:
	case "":
		return nil, fmt.Errorf("not a conform record (no \"schema\": %q)", SchemaID)
	default:
		return nil, fmt.Errorf("schema %q, but this conform reads %q", r.Schema, SchemaID)
	}
	return &r, nil
}

// RecordDiff is what changed from one run's record to another's: the cases
// whose outcome changed, and the cases only one of them holds. Case lists
// follow the new record's order (Removed the old one's).
type RecordDiff struct {
	Old DiffRun `json:"old"`
	New DiffRun `json:"new"`
	// Notes name differences in how the two runs were made (SUT, its
	// version, conform, corpus, seed, --strict) that can explain changes.
	Notes []string `json:"notes"`
	// Regressions are cases that went from pass, info or skip to fail,
	// error or warn.
	Regressions []CaseChange `json:"regressions"`
	// Fixes are cases that went from fail, error or warn to pass.
	Fixes []CaseChange `json:"fixes"`
	// Changed are the other outcome changes, such as fail to error, or pass
	// to skip (lost coverage).
	Changed []CaseChange `json:"changed"`
	// Added are cases only the new record holds; their Old is "".
	Added []CaseChange `json:"added"`
	// Removed are cases only the old record holds; their New is "".
	Removed []CaseChange `json:"removed"`
	// Unchanged counts the cases with the same outcome in both.
	Unchanged int `json:"unchanged"`
}

// DiffRun is what a diff shows of one record.
type DiffRun struct {
	SUT string `json:"sut"`
	// Implementation is "name version (language)" from the SUT's Hello.
	Implementation string          `json:"implementation"`
	Conform        string          `json:"conform"`
	Corpus         string          `json:"corpus"`
	Started        time.Time       `json:"started"`
	Seed           int64           `json:"seed"`
	Strict         bool            `json:"strict"`
	Interrupted    bool            `json:"interrupted"`
	Counts         map[Outcome]int `json:"counts"`
	Total          int             `json:"total"`
}

// CaseChange is one case in a diff.
type CaseChange struct {
	ID    string `json:"id"`
	Level Level  `json:"level"`
	// Old and New are the outcomes; "" where the record lacks the case.
	Old Outcome `json:"old,omitempty"`
	New Outcome `json:"new,omitempty"`
	// Message is the newer record's message for the case (the old one's
	// for a removed case), and Reproduce the command that reruns it.
	Message   string `json:"message,omitempty"`
	Reproduce string `json:"reproduce,omitempty"`
}

// HasRegressions reports whether d names a regression, or a case added
// failing or erring.
func (d RecordDiff) HasRegressions() bool {
	if len(d.Regressions) > 0 {
		return true
	}
	for _, c := range d.Added {
		if c.New == Fail || c.New == Error {
			return true
		}
	}
	return false
}

// Diff compares the records older and newer case by case (by ID).
func Diff(older, newer *Record) RecordDiff {
	d := RecordDiff{Old: diffRun(older), New: diffRun(newer)}
	d.Notes = diffNotes(d.Old, d.New)
	before := map[string]CaseResult{}
	for _, c := range older.Cases {
		if _, dup := before[c.ID]; !dup {
			before[c.ID] = c
		}
	}
	seen := map[string]bool{}
	for _, c := range newer.Cases {
		if seen[c.ID] {
			continue
		}
		seen[c.ID] = true
		ch := CaseChange{ID: c.ID, Level: c.Level, New: c.Outcome, Message: oneLine(c.Message), Reproduce: c.Reproduce}
		o, ok := before[c.ID]
		if !ok {
			d.Added = append(d.Added, ch)
			continue
		}
		ch.Old = o.Outcome
		switch {
		case o.Outcome == c.Outcome:
			d.Unchanged++
		case !judgedBad(o.Outcome) && judgedBad(c.Outcome):
			d.Regressions = append(d.Regressions, ch)
		case judgedBad(o.Outcome) && c.Outcome == Pass:
			if ch.Message == "" {
				ch.Message = oneLine(o.Message)
			}
			d.Fixes = append(d.Fixes, ch)
		default:
			d.Changed = append(d.Changed, ch)
		}
	}
	for _, c := range older.Cases {
		if seen[c.ID] {
			continue
		}
		seen[c.ID] = true
		d.Removed = append(d.Removed, CaseChange{ID: c.ID, Level: c.Level, Old: c.Outcome, Message: oneLine(c.Message), Reproduce: c.Reproduce})
	}
	return d
}

// judgedBad reports whether o is a broken requirement or an error.
func judgedBad(o Outcome) bool { return o == Fail || o == Error || o == Warn }

func diffRun(r *Record) DiffRun {
	counts := map[Outcome]int{}
	for _, c := range r.Cases {
		counts[c.Outcome]++
	}
	return DiffRun{
		SUT: r.SUT.Spec, Implementation: hello(r).String(), Conform: r.Conform, Corpus: r.Corpus,
		Started: r.Started, Seed: r.Seed, Strict: r.Strict, Interrupted: r.Interrupted,
		Counts: counts, Total: len(r.Cases),
	}
}

func diffNotes(a, b DiffRun) []string {
	var notes []string
	differ := func(what, x, y string) {
		if x != y {
			notes = append(notes, fmt.Sprintf("%s differs: %s → %s", what, orNone(x), orNone(y)))
		}
	}
	differ("the SUT", a.SUT, b.SUT)
	differ("the implementation", a.Implementation, b.Implementation)
	differ("conform", a.Conform, b.Conform)
	differ("the corpus", a.Corpus, b.Corpus)
	if a.Seed != b.Seed {
		notes = append(notes, fmt.Sprintf("the seed differs: %d → %d (randomised inputs differ)", a.Seed, b.Seed))
	}
	if a.Strict != b.Strict {
		notes = append(notes, fmt.Sprintf("--strict differs: %v → %v (warn and fail trade places)", a.Strict, b.Strict))
	}
	if a.Interrupted || b.Interrupted {
		notes = append(notes, "a run was interrupted: cases it did not reach show as added or removed")
	}
	return notes
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// WriteDiff writes d for a terminal: both runs, the notes, then regressions,
// fixes, other changes, added and removed cases, each with its level and
// message, regressions with the command that reproduces them.
func WriteDiff(w io.Writer, d RecordDiff) error {
	var b strings.Builder
	run := func(label string, r DiffRun) {
		fmt.Fprintf(&b, "%s %s", label, r.SUT)
		if r.Implementation != "" {
			fmt.Fprintf(&b, " (%s)", r.Implementation)
		}
		if !r.Started.IsZero() {
			fmt.Fprintf(&b, ", started %s", r.Started.UTC().Format(time.RFC3339))
		}
		fmt.Fprintf(&b, ": %d cases:", r.Total)
		for i, o := range Outcomes {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, " %d %s", r.Counts[o], o)
		}
		b.WriteString("\n")
	}
	run("old:", d.Old)
	run("new:", d.New)
	for _, n := range d.Notes {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	section := func(title string, cs []CaseChange, reproduce bool) {
		if len(cs) == 0 {
			return
		}
		fmt.Fprintf(&b, "\n%s (%d):\n", title, len(cs))
		for _, c := range cs {
			change := string(c.New)
			switch {
			case c.Old == "":
				change = "+ " + string(c.New)
			case c.New == "":
				change = "- " + string(c.Old)
			default:
				change = string(c.Old) + " → " + string(c.New)
			}
			fmt.Fprintf(&b, "  %-14s %-6s %s", change, c.Level, c.ID)
			if c.Message != "" {
				fmt.Fprintf(&b, "  %s", Clip(c.Message, 200))
			}
			b.WriteString("\n")
			if reproduce && c.Reproduce != "" {
				fmt.Fprintf(&b, "  %-14s %-6s reproduce: %s\n", "", "", c.Reproduce)
			}
		}
	}
	section("regressions", d.Regressions, true)
	section("fixes", d.Fixes, false)
	section("other changes", d.Changed, false)
	section("added", d.Added, false)
	section("removed", d.Removed, false)
	if len(d.Regressions)+len(d.Fixes)+len(d.Changed)+len(d.Added)+len(d.Removed) == 0 {
		b.WriteString("\nno case changed.\n")
	}
	fmt.Fprintf(&b, "\n%d regression(s), %d fix(es), %d other change(s), %d added, %d removed, %d unchanged\n",
		len(d.Regressions), len(d.Fixes), len(d.Changed), len(d.Added), len(d.Removed), d.Unchanged)
	// Messages come from SUTs, the records from anywhere: no control
	// character reaches the terminal raw.
	if _, err := io.WriteString(w, Visible(b.String())); err != nil {
		return fmt.Errorf("writing diff: %w", err)
	}
	return nil
}
