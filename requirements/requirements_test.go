package requirements_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/conform-suite/conform/reports"
	"github.com/conform-suite/conform/requirements"
	"github.com/google/go-cmp/cmp"
)

// entry is a requirement as written in an index file; the tests edit these
// rather than JSON text.
type entry = map[string]any

func req(id, section, level, summary string) entry {
	return entry{"id": id, "section": section, "level": level, "form": "keyword", "summary": summary}
}

func doc(name string, es ...entry) []byte {
	b, err := json.Marshal(map[string]any{"document": name, "title": "The " + name + " document", "requirements": es})
	if err != nil {
		panic(err)
	}
	return b
}

// synthetic is a small index over two source documents and reconstructed:
// every disposition, every level, both kinds of section.
func synthetic() fstest.MapFS {
	waived := req("ranvier-wire§1.2#3", "1.2", "MUST", "A rule nobody can observe.")
	waived["waiver"] = map[string]string{"reason": "not-observable", "why": "Nothing shows it."}
	openMay := req("ranvier-wire§8#1", "8", "MAY", "Something the document leaves free.")
	openMay["waiver"] = map[string]string{"reason": "open", "why": "The document decides nothing."}
	withdrawn := req("ranvier-wire§8#2", "8", "MUST", "A rule taken back.")
	withdrawn["withdrawn"] = "The document dropped it."
	pin := req("reconstructed§tlv-header#1", "tlv-header", "MUST", "The header is four bytes.")
	pin["kind"], pin["fills"], pin["values"], pin["vectors"] = "reconstructed", "libtracer-graph-model §the-structured-tlv", "type | flags | len\n1 byte | 1 byte | 2 bytes", []string{"tlv/v1/header"}
	return fstest.MapFS{
		"ranvier-wire.json": {Data: doc("ranvier-wire",
			req("ranvier-wire§1.2#1", "1.2", "MUST", "The prefix is four bytes."),
			req("ranvier-wire§1.2#2", "1.2", "MUST", "The prefix is big-endian."),
			waived,
			req("ranvier-wire§1.3#1", "1.3", "SHOULD", "A reader bounds its memory."),
			req("ranvier-wire§1.3#2", "1.3", "MUST", "A MUST only a MAY case sees."),
			req("ranvier-wire§4.6#1", "4.6", "MAY", "A writer may order fields freely."),
			openMay, withdrawn,
		)},
		"libtracer-graph-model.json": {Data: doc("libtracer-graph-model",
			req("libtracer-graph-model§the-write-sequence#1", "the-write-sequence", "MUST", "Writes are ordered."),
		)},
		"reconstructed.json": {Data: doc("reconstructed", pin)},
	}
}

// syntheticCases judge the synthetic index: 1.2#1 at MUST, 1.3#1 at SHOULD,
// 1.3#2 only from a MAY case, the MAY 4.6#1 at MUST, the pin at MUST.
func syntheticCases() []requirements.Case {
	return []requirements.Case{
		{ID: "wire/1.2/a", Level: reports.MUST, Requirements: []string{"ranvier-wire§1.2#1"}},
		{ID: "wire/1.2/b", Level: reports.MUST, Requirements: []string{"ranvier-wire§1.2#2"}},
		{ID: "wire/1.3/bounded", Level: reports.SHOULD, Requirements: []string{"ranvier-wire§1.3#1"}},
		{ID: "live/5.2/redial", Level: reports.MAY, Requirements: []string{"ranvier-wire§1.3#2"}},
		{ID: "wire/4.6/order", Level: reports.MUST, Requirements: []string{"ranvier-wire§4.6#1"}},
		{ID: "tlv/x/header", Level: reports.MUST, Requirements: []string{"reconstructed§tlv-header#1"}},
	}
}

func TestLoadSynthetic(t *testing.T) {
	x, err := requirements.Load(synthetic())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range x.Documents {
		names = append(names, d.Name)
	}
	// Presentation order, whatever the files' order: sources, then reconstructed.
	if want := []string{"ranvier-wire", "libtracer-graph-model", "reconstructed"}; !cmp.Equal(names, want) {
		t.Errorf("documents %v, want %v", names, want)
	}
	r, ok := x.Lookup("reconstructed§tlv-header#1")
	if !ok || r.Fills != "libtracer-graph-model §the-structured-tlv" || len(r.Vectors) != 1 {
		t.Errorf("the pin loaded as %+v", r)
	}
}

// TestLoadRefuses edits one entry of the synthetic index at a time; each
// edit must be refused with a message naming what is wrong.
func TestLoadRefuses(t *testing.T) {
	tests := []struct {
		name string
		file string
		edit func(es []entry) []entry
		data []byte // replaces the file when set
		want string
	}{
		{name: "level", file: "ranvier-wire.json", edit: set(0, "level", "must"), want: `level "must" is not MUST, SHOULD or MAY`},
		{name: "INFO is not a requirement level", file: "ranvier-wire.json", edit: set(0, "level", "INFO"), want: `level "INFO"`},
		{name: "form", file: "ranvier-wire.json", edit: set(0, "form", "bullet"), want: `form "bullet"`},
		{name: "empty summary", file: "ranvier-wire.json", edit: set(0, "summary", " "), want: "summary is empty"},
		{name: "two-line summary", file: "ranvier-wire.json", edit: set(0, "summary", "one\ntwo"), want: "more than one line"},
		{name: "ID of another document", file: "ranvier-wire.json", edit: set(0, "id", "ranvier-streams§1.2#1"), want: "the ID is not ranvier-wire§1.2#<n>"},
		{name: "ID of another section", file: "ranvier-wire.json", edit: set(0, "id", "ranvier-wire§1.3#9"), want: "the ID is not ranvier-wire§1.2#<n>"},
		{name: "n from 0", file: "ranvier-wire.json", edit: set(0, "id", "ranvier-wire§1.2#0"), want: "the ID is not"},
		{name: "n with a leading zero", file: "ranvier-wire.json", edit: set(0, "id", "ranvier-wire§1.2#01"), want: "the ID is not"},
		{name: "bad section", file: "ranvier-wire.json", edit: func(es []entry) []entry {
			es[0]["section"], es[0]["id"] = "1.2 ", "ranvier-wire§1.2 #1"
			return es
		}, want: `section "1.2 "`},
		{name: "duplicate ID", file: "ranvier-wire.json", edit: set(1, "id", "ranvier-wire§1.2#1"), want: "ID used twice"},
		{name: "hole in the numbering", file: "ranvier-wire.json", edit: set(1, "id", "ranvier-wire§1.2#4"), want: "section 1.2: entries are numbered [1 3 4]"},
		{name: "waiver reason", file: "ranvier-wire.json", edit: set(2, "waiver", map[string]string{"reason": "too-hard", "why": "x"}), want: `waiver reason "too-hard"`},
		{name: "waiver without why", file: "ranvier-wire.json", edit: set(2, "waiver", map[string]string{"reason": "open"}), want: "waiver's why is empty"},
		{name: "kind in a source document", file: "ranvier-wire.json", edit: set(0, "kind", "reconstructed"), want: "only reconstructed.json holds reconstructed entries"},
		{name: "values in a source document", file: "ranvier-wire.json", edit: set(0, "values", "01"), want: "belong to reconstructed entries"},
		{name: "pin without kind", file: "reconstructed.json", edit: set(0, "kind", ""), want: `has kind "", want "reconstructed"`},
		{name: "pin without values", file: "reconstructed.json", edit: set(0, "values", ""), want: "states its values"},
		{name: "pin filling no document", file: "reconstructed.json", edit: set(0, "fills", "RECONSTRUCTED.md §2"), want: `fills "RECONSTRUCTED.md §2" does not begin with the source document`},
		{name: "pin vector", file: "reconstructed.json", edit: set(0, "vectors", []string{"header"}), want: `vector "header" is not suite/version/name`},
		{name: "unknown field", file: "ranvier-wire.json", edit: set(0, "cases", []string{"wire/1.2/a"}), want: `unknown field "cases"`},
		{name: "file named otherwise", file: "ranvier-wire.json", data: doc("ranvier-streams"), want: `document "ranvier-streams", want "ranvier-wire"`},
		{name: "unknown document", file: "RECONSTRUCTED.json", data: doc("RECONSTRUCTED"), want: `"RECONSTRUCTED" is neither a source document`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fsys := synthetic()
			switch {
			case tt.data != nil:
				fsys[tt.file] = &fstest.MapFile{Data: tt.data}
			default:
				var d struct {
					Document     string  `json:"document"`
					Title        string  `json:"title"`
					Requirements []entry `json:"requirements"`
				}
				if err := json.Unmarshal(fsys[tt.file].Data, &d); err != nil {
					t.Fatal(err)
				}
				fsys[tt.file] = &fstest.MapFile{Data: doc(d.Document, tt.edit(d.Requirements)...)}
			}
			_, err := requirements.Load(fsys)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Load: %v; want an error containing %q", err, tt.want)
			}
			if !strings.Contains(err.Error(), tt.file) {
				t.Errorf("the error does not name the file %s: %v", tt.file, err)
			}
		})
	}
}

// set returns an edit setting field k of entry i to v ("" deletes it).
func set(i int, k string, v any) func([]entry) []entry {
	return func(es []entry) []entry {
		if v == "" {
			delete(es[i], k)
		} else {
			es[i][k] = v
		}
		return es
	}
}

func coverage(t *testing.T, fsys fstest.MapFS, cs []requirements.Case) *requirements.Coverage {
	t.Helper()
	x, err := requirements.Load(fsys)
	if err != nil {
		t.Fatal(err)
	}
	cov, err := requirements.Compute(x, cs, requirements.CaseLinks(cs))
	if err != nil {
		t.Fatal(err)
	}
	return cov
}

func TestComputeCounts(t *testing.T) {
	cov := coverage(t, synthetic(), syntheticCases())
	wire, _ := cov.Only("ranvier-wire")
	d := wire.Documents[0]
	// 1.2#1 and 1.2#2 by their cases, 1.3#1 at SHOULD, 4.6#1 (a MAY)
	// by a MUST case; 1.2#3 and 8#1 waived; 1.3#2 only recorded; 8#2 withdrawn
	// and counted nowhere.
	want := map[string]requirements.Counts{
		"all":    {Total: 7, Traced: 4, Waived: 2, Untraced: 1},
		"MUST":   {Total: 4, Traced: 2, Waived: 1, Untraced: 1},
		"SHOULD": {Total: 1, Traced: 1},
		"MAY":    {Total: 2, Traced: 1, Waived: 1},
	}
	got := map[string]requirements.Counts{"all": d.All}
	for l, n := range d.ByLevel {
		got[string(l)] = n
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ranvier-wire counts (-want +got):\n%s", diff)
	}
	var dispositions []string
	for _, st := range d.Statuses {
		dispositions = append(dispositions, st.ID+" "+string(st.Disposition))
	}
	wantDisp := []string{
		"ranvier-wire§1.2#1 traced", "ranvier-wire§1.2#2 traced", "ranvier-wire§1.2#3 waived",
		"ranvier-wire§1.3#1 traced", "ranvier-wire§1.3#2 untraced", "ranvier-wire§4.6#1 traced",
		"ranvier-wire§8#1 waived", "ranvier-wire§8#2 withdrawn",
	}
	if diff := cmp.Diff(wantDisp, dispositions); diff != "" {
		t.Errorf("dispositions (-want +got):\n%s", diff)
	}
	if u := cov.Untraced(reports.MUST); len(u) != 2 || u[0].ID != "ranvier-wire§1.3#2" || u[1].ID != "libtracer-graph-model§the-write-sequence#1" {
		t.Errorf("untraced MUSTs: %v", ids(u))
	}
}

func ids(sts []requirements.Status) []string {
	var out []string
	for _, st := range sts {
		out = append(out, st.ID)
	}
	return out
}

func TestComputeFindings(t *testing.T) {
	// 1.2#2 judged by a SHOULD case alone: wire/1.2/b names nothing here.
	cs := syntheticCases()
	for i := range cs {
		if cs[i].ID == "wire/1.2/b" {
			cs[i].Requirements = nil
		}
	}
	cs = append(cs, requirements.Case{ID: "wire/1.2/weak", Level: reports.SHOULD, Requirements: []string{"ranvier-wire§1.2#2"}})
	fsys := synthetic()
	cov := coverage(t, fsys, cs)
	var got []string
	for _, f := range cov.Findings {
		got = append(got, string(f.Kind)+" "+f.Requirement)
	}
	want := []string{
		"must-judged-at-should ranvier-wire§1.2#2",
		"recorded-only ranvier-wire§1.3#2",
		"may-judged ranvier-wire§4.6#1",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
	// The SHOULD 1.3#1 judged by a SHOULD case is no finding; a MUST with
	// one MUST case among SHOULD ones is none either.
	cs = append(cs, requirements.Case{ID: "wire/1.2/strong", Level: reports.MUST, Requirements: []string{"ranvier-wire§1.2#2"}})
	for _, f := range coverage(t, fsys, cs).Findings {
		if f.Requirement == "ranvier-wire§1.2#2" {
			t.Errorf("a MUST judged by a MUST case is reported: %v", f)
		}
	}
}

func TestComputeRefuses(t *testing.T) {
	tests := []struct {
		name  string
		cases []requirements.Case
		links requirements.Links // beyond the cases' own
		want  string
	}{
		{name: "a case naming a requirement the index lacks",
			cases: []requirements.Case{{ID: "wire/1.2/a", Level: reports.MUST, Requirements: []string{"ranvier-wire§1.2#9"}}},
			want:  "ranvier-wire§1.2#9, named by wire/1.2/a, is not in the requirements index"},
		{name: "a link naming a case the catalogue lacks",
			links: requirements.Links{"ranvier-wire§1.2#1": {"wire/1.2/gone"}},
			want:  "ranvier-wire§1.2#1 is traced to case wire/1.2/gone, which the catalogue does not hold"},
		{name: "a waived requirement judged",
			cases: []requirements.Case{{ID: "wire/1.2/c", Level: reports.MUST, Requirements: []string{"ranvier-wire§1.2#3"}}},
			want:  "ranvier-wire§1.2#3 is waived (not-observable) yet judged by wire/1.2/c"},
		{name: "a withdrawn requirement named",
			cases: []requirements.Case{{ID: "wire/8/c", Level: reports.INFO, Requirements: []string{"ranvier-wire§8#2"}}},
			want:  "ranvier-wire§8#2, named by wire/8/c, is withdrawn"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x, err := requirements.Load(synthetic())
			if err != nil {
				t.Fatal(err)
			}
			cs := append(syntheticCases(), tt.cases...)
			links := requirements.CaseLinks(cs)
			links.Merge(tt.links)
			if _, err := requirements.Compute(x, cs, links); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Compute: %v; want an error containing %q", err, tt.want)
			}
		})
	}
}

func TestCheckVectors(t *testing.T) {
	x, err := requirements.Load(synthetic())
	if err != nil {
		t.Fatal(err)
	}
	if err := requirements.CheckVectors(x, func(id string) bool { return id == "tlv/v1/header" }); err != nil {
		t.Errorf("a known vector: %v", err)
	}
	err = requirements.CheckVectors(x, func(string) bool { return false })
	if err == nil || !strings.Contains(err.Error(), "reconstructed§tlv-header#1 names vector tlv/v1/header") {
		t.Errorf("an unknown vector: %v", err)
	}
}

func TestWriteMarkdown(t *testing.T) {
	fsys := synthetic()
	fsys["ranvier-wire.json"].Data = bytes.Replace(fsys["ranvier-wire.json"].Data, []byte("The prefix is four bytes."), []byte("The prefix is a | b."), 1)
	var b bytes.Buffer
	if err := requirements.WriteMarkdown(&b, coverage(t, fsys, syntheticCases())); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	for _, want := range []string{
		"DO NOT EDIT",
		"## ranvier-wire — The ranvier-wire document",
		"### §1.2",
		"### the-write-sequence",
		"| `ranvier-wire§1.2#1` | MUST | The prefix is a \\| b. | `wire/1.2/a` |",
		"| `ranvier-wire§1.2#3` | MUST | A rule nobody can observe. | waived, *not-observable*: Nothing shows it. |",
		"**untraced**: recorded, never judged, by `live/5.2/redial` (MAY)",
		"| `ranvier-wire§4.6#1` | MAY | A writer may order fields freely. | `wire/4.6/order` (MUST) |",
		"withdrawn: The document dropped it.",
		"- **`reconstructed§tlv-header#1`** MUST — The header is four bytes.",
		"  - fills: libtracer-graph-model §the-structured-tlv",
		"  - vectors: `tlv/v1/header`\n  - judged by `tlv/x/header`\n",
		"  type | flags | len\n  1 byte | 1 byte | 2 bytes\n",
		"| ranvier-wire | all | 7 | 4 (57%) | 2 | 1 |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the Markdown lacks %q:\n%s", want, md)
		}
	}
}

func TestWriteText(t *testing.T) {
	var b bytes.Buffer
	if err := requirements.WriteText(&b, coverage(t, synthetic(), syntheticCases())); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"ranvier-wire§1.2#2\tMUST\ttraced\twire/1.2/b\tThe prefix is big-endian.\n",
		"ranvier-wire§1.2#3\tMUST\twaived\tnot-observable: Nothing shows it.\tA rule nobody can observe.\n",
		"ranvier-wire§1.3#2\tMUST\tuntraced\trecorded only, never judged, by live/5.2/redial\t",
		"level findings (2)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the text lacks %q:\n%s", want, out)
		}
	}
}
