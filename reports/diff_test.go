package reports

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestDiffClassification(t *testing.T) {
	tests := []struct {
		old, new Outcome
		want     string // regression, fix, changed, unchanged
	}{
		{Pass, Fail, "regression"},
		{Pass, Error, "regression"},
		{Pass, Warn, "regression"},
		{Info, Fail, "regression"},
		{Skip, Error, "regression"},
		{Skip, Warn, "regression"},
		{Fail, Pass, "fix"},
		{Error, Pass, "fix"},
		{Warn, Pass, "fix"},
		{Fail, Error, "changed"},
		{Warn, Fail, "changed"},
		{Pass, Skip, "changed"},
		{Fail, Skip, "changed"},
		{Skip, Pass, "changed"},
		{Info, Pass, "changed"},
		{Fail, Info, "changed"},
		{Pass, Pass, "unchanged"},
		{Fail, Fail, "unchanged"},
	}
	for _, tt := range tests {
		t.Run(string(tt.old)+"→"+string(tt.new), func(t *testing.T) {
			older, newer := fixture(), fixture()
			older.Cases[0].Outcome = tt.old
			newer.Cases[0].Outcome = tt.new
			d := Diff(older, newer)
			lists := map[string][]CaseChange{"regression": d.Regressions, "fix": d.Fixes, "changed": d.Changed}
			for kind, l := range lists {
				want := 0
				if kind == tt.want {
					want = 1
				}
				if len(l) != want {
					t.Errorf("%d %s(s), want %d: %+v", len(l), kind, want, d)
				}
			}
			if want := len(older.Cases) - 1; tt.want != "unchanged" && d.Unchanged != want {
				t.Errorf("unchanged %d, want %d", d.Unchanged, want)
			}
			if tt.want == "unchanged" && d.Unchanged != len(older.Cases) {
				t.Errorf("unchanged %d, want %d", d.Unchanged, len(older.Cases))
			}
			if got := d.HasRegressions(); got != (tt.want == "regression") {
				t.Errorf("HasRegressions() = %v", got)
			}
		})
	}
}

func TestDiffAddedRemoved(t *testing.T) {
	older, newer := fixture(), fixture()
	older.Cases = older.Cases[:len(older.Cases)-1] // the skip is new
	newer.Cases = newer.Cases[1:]                  // the first pass is gone
	newer.Cases = append(newer.Cases, CaseResult{ID: "wire/9/new-and-failing", Level: MUST, Outcome: Fail, Message: "broken"})
	newer.Seed = 7
	newer.Conform = "v0.5.0"
	d := Diff(older, newer)
	var added, removed []string
	for _, c := range d.Added {
		added = append(added, c.ID)
		if c.Old != "" {
			t.Errorf("added %s has old outcome %q", c.ID, c.Old)
		}
	}
	for _, c := range d.Removed {
		removed = append(removed, c.ID)
		if c.New != "" {
			t.Errorf("removed %s has new outcome %q", c.ID, c.New)
		}
	}
	if want := []string{"streams/5/gap-report", "wire/9/new-and-failing"}; !slices.Equal(added, want) {
		t.Errorf("added %q, want %q", added, want)
	}
	if want := []string{"wire/1.2/prefix-big-endian"}; !slices.Equal(removed, want) {
		t.Errorf("removed %q, want %q", removed, want)
	}
	if !d.HasRegressions() {
		t.Error("a case added failing is not a regression")
	}
	notes := strings.Join(d.Notes, "\n")
	for _, want := range []string{"conform differs: v0.4.0 → v0.5.0", "the seed differs: 1 → 7"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q: %q", want, d.Notes)
		}
	}
}

func TestWriteDiff(t *testing.T) {
	older, newer := fixture(), fixture()
	newer.Cases[0].Outcome = Fail // pass → fail
	newer.Cases[0].Message = "now broken"
	newer.Cases[0].Reproduce = reproduce(newer.Cases[0].ID)
	newer.Cases[1].Outcome = Pass // fail → pass
	var b strings.Builder
	if err := WriteDiff(&b, Diff(older, newer)); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"old: ./mybinding (mybinding 1.2.3 (c)), started 2026-03-01T12:00:00Z: 9 cases: 3 pass, 2 fail,",
		"regressions (1):\n  pass → fail    MUST   wire/1.2/prefix-big-endian  now broken\n",
		"reproduce: " + reproduce("wire/1.2/prefix-big-endian"),
		"fixes (1):\n  fail → pass    MUST   wire/1.3/byte-at-a-time  2 check(s) failed",
		"1 regression(s), 1 fix(es), 0 other change(s), 0 added, 0 removed, 7 unchanged",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the diff lacks %q:\n%s", want, out)
		}
	}
	b.Reset()
	WriteDiff(&b, Diff(older, older))
	if !strings.Contains(b.String(), "no case changed.") {
		t.Errorf("identical records:\n%s", b.String())
	}
}

func TestReadJSON(t *testing.T) {
	dir := t.TempDir()
	r := fixture()
	path := filepath.Join(dir, "rec.json")
	if err := WriteJSON(path, r); err != nil {
		t.Fatal(err)
	}
	got, err := ReadJSON(path)
	if err != nil {
		t.Fatalf("ReadJSON: %v", err)
	}
	if !reflect.DeepEqual(got.Cases, r.Cases) || got.SUT.Spec != r.SUT.Spec || !got.Started.Equal(r.Started) || !reflect.DeepEqual(got.Summary, r.Summary) {
		t.Errorf("the record read back differs:\n%+v\nwant\n%+v", got, r)
	}
	tests := []struct {
		name, content, want string
	}{
		{"not JSON", "<xml/>", "invalid character"},
		{"no schema", `{"cases":[]}`, "not a conform record"},
		{"other schema", `{"schema":"https://conform.invalid/schema/record/v9"}`, `schema "https://conform.invalid/schema/record/v9"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "-")+".json")
			os.WriteFile(p, []byte(tt.content), 0o644)
			_, err := ReadJSON(p)
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), p) {
				t.Errorf("ReadJSON error %v, want one naming %s and saying %q", err, p, tt.want)
			}
		})
	}
	if _, err := ReadJSON(filepath.Join(dir, "missing.json")); err == nil {
		t.Error("ReadJSON of a missing file: no error")
	}
}
