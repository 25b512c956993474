// Package requirements is conform's requirements index: every normative
// statement of the four source documents (ranvier-wire, ranvier-streams,
// libtracer-graph-model, doppler-streaming) and every pin this project chose
// where they are silent (reconstructed), each with a stable ID, its level, a
// one-line summary, and its disposition — the cases that judge it, or a
// waiver saying why none does.
//
// The index is data, versioned like the vectors, in corpus/requirements/v1:
// one JSON file per document. Load reads and validates it; Compute measures
// how much of it the catalogue's cases judge; WriteText, WriteUntraced and
// WriteMarkdown render the result for conform requirements and for
// docs/requirements.md.
package requirements

//go:generate go run ./internal/mkdoc -o ../docs/requirements.md

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/conform-suite/conform/corpus"
	"github.com/conform-suite/conform/reports"
)

// Reconstructed is the name of the pseudo-document holding the pins this
// project chose where the source documents are silent.
const Reconstructed = "reconstructed"

// SourceDocuments returns the names of the four source documents, in the
// order the index presents them.
func SourceDocuments() []string {
	return []string{"ranvier-wire", "ranvier-streams", "libtracer-graph-model", "doppler-streaming"}
}

// documentOrder returns the position of a document in presentation order:
// the source documents, then reconstructed.
func documentOrder(name string) int {
	if i := slices.Index(SourceDocuments(), name); i >= 0 {
		return i
	}
	if name == Reconstructed {
		return len(SourceDocuments())
	}
	return -1
}

// Form is how the source states a requirement.
type Form string

// The forms of a requirement.
const (
	Keyword Form = "keyword" // an RFC 2119 keyword
	Prose   Form = "prose"   // a rule stated without one: "never", "always", "is refused"
	Table   Form = "table"   // a rule given as a table row
)

// Reason is why no case judges a requirement. The set is fixed.
type Reason string

// The reasons a requirement may be waived.
const (
	// NotObservable: no harness can observe it through any carrier.
	NotObservable Reason = "not-observable"
	// BindsAuthors: it binds the document's authors or repository process,
	// not an implementation.
	BindsAuthors Reason = "binds-authors"
	// Open: the source leaves the behaviour open; it is judged nowhere,
	// though an INFO case may record it.
	Open Reason = "open"
	// OutOfScope: a feature the document says does not exist yet, or a
	// layer conform does not reach.
	OutOfScope Reason = "out-of-scope"
	// NeedsOp: testable in principle, but conform.v1 has no op reaching it
	// yet; the waiver says which op would.
	NeedsOp Reason = "needs-op"
)

// Reasons returns the reasons a waiver may give.
func Reasons() []Reason { return []Reason{NotObservable, BindsAuthors, Open, OutOfScope, NeedsOp} }

// Waiver records why no case judges a requirement.
type Waiver struct {
	Reason Reason `json:"reason"`
	// Why is one sentence.
	Why string `json:"why"`
}

// Requirement is one normative statement of a document, or one
// reconstructed pin.
type Requirement struct {
	// ID is <document>§<section>#<n>, for example ranvier-wire§1.2#1. It
	// never changes and is never reused.
	ID string `json:"id"`
	// Section is the document's own section number (1.2, 3.6a) or, for a
	// heading without one, the heading's slug.
	Section string `json:"section"`
	// Level is MUST (MUST, MUST NOT and unconditional prose or table rules),
	// SHOULD or MAY, as the source gives it.
	Level reports.Level `json:"level"`
	Form  Form          `json:"form"`
	// Summary states the requirement in one line, in this project's words.
	Summary string  `json:"summary"`
	Waiver  *Waiver `json:"waiver,omitempty"`
	// Withdrawn, when set, says why the entry no longer applies; the entry
	// stays so that its ID is never reused.
	Withdrawn string `json:"withdrawn,omitempty"`

	// Kind is "reconstructed" for a pin this project chose; such an entry
	// also carries Fills, Values and Vectors.
	Kind string `json:"kind,omitempty"`
	// Fills names the hole the pin fills: "<document> §<section>", or the
	// document and a few words where the hole has no section.
	Fills string `json:"fills,omitempty"`
	// Values states the pin's constants, layouts, codes or bytes in full.
	Values string `json:"values,omitempty"`
	// Vectors are the corpus vectors that exhibit the pin.
	Vectors []string `json:"vectors,omitempty"`
}

// Document is one document's requirements, in the order the document states
// them.
type Document struct {
	Name         string        `json:"document"`
	Title        string        `json:"title"`
	Requirements []Requirement `json:"requirements"`
}

// Index is the whole requirements index.
type Index struct {
	// Documents are the indexed documents in presentation order: the
	// source documents, then reconstructed.
	Documents []*Document
	byID      map[string]*Requirement
}

// Lookup returns the requirement with the given ID.
func (x *Index) Lookup(id string) (*Requirement, bool) {
	r, ok := x.byID[id]
	return r, ok
}

// Document returns the named document's entries.
func (x *Index) Document(name string) (*Document, bool) {
	for _, d := range x.Documents {
		if d.Name == name {
			return d, true
		}
	}
	return nil, false
}

// Default loads the index conform ships (corpus/requirements/v1).
func Default() (*Index, error) { return Load(corpus.Requirements()) }

// Load reads every document file (*.json) at the root of fsys, strictly —
// an unknown field is an error — and validates the whole index. Every
// problem found is reported, each naming its file and requirement.
func Load(fsys fs.FS) (*Index, error) {
	names, err := fs.Glob(fsys, "*.json")
	if err != nil {
		return nil, err
	}
	x := &Index{byID: map[string]*Requirement{}}
	var errs []error
	for _, name := range names {
		b, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, err
		}
		d := new(Document)
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(d); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
			continue
		}
		errs = append(errs, x.add(name, d)...)
	}
	if len(x.Documents) == 0 && len(errs) == 0 {
		errs = append(errs, errors.New("no document files"))
	}
	slices.SortFunc(x.Documents, func(a, b *Document) int { return documentOrder(a.Name) - documentOrder(b.Name) })
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("requirements index: %w", err)
	}
	return x, nil
}

var (
	numberedSection = regexp.MustCompile(`^(0|[1-9][0-9]*)(\.(0|[1-9][0-9]*))*[a-z]?$`)
	slugSection     = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)
	entryNumber     = regexp.MustCompile(`^[1-9][0-9]*$`)
)

// add validates one document file's contents and adds its entries, returning
// every problem found.
func (x *Index) add(file string, d *Document) []error {
	var errs []error
	fail := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: "+format, append([]any{file}, args...)...))
	}
	if want := strings.TrimSuffix(path.Base(file), ".json"); d.Name != want {
		fail("document %q, want %q (the file's name)", d.Name, want)
		return errs
	}
	if documentOrder(d.Name) < 0 {
		fail("%q is neither a source document (%s) nor %q", d.Name, strings.Join(SourceDocuments(), ", "), Reconstructed)
		return errs
	}
	if strings.TrimSpace(d.Title) == "" {
		fail("the document has no title")
	}
	// numbers collects each section's <n>s, to prove them contiguous.
	numbers := map[string][]int{}
	var sections []string
	for i := range d.Requirements {
		r := &d.Requirements[i]
		for _, e := range validate(d.Name, r) {
			fail("%s: %v", label(r, i), e)
		}
		if n, ok := numberOf(d.Name, r); ok {
			if _, seen := numbers[r.Section]; !seen {
				sections = append(sections, r.Section)
			}
			numbers[r.Section] = append(numbers[r.Section], n)
		}
		if r.ID == "" {
			continue
		}
		if _, dup := x.byID[r.ID]; dup {
			fail("%s: ID used twice", r.ID)
			continue
		}
		x.byID[r.ID] = r
	}
	for _, s := range sections {
		ns := slices.Sorted(slices.Values(numbers[s]))
		for i, n := range ns {
			if n != i+1 {
				fail("section %s: entries are numbered %v; they must run 1 to %d without a hole or a repeat", s, ns, len(ns))
				break
			}
		}
	}
	x.Documents = append(x.Documents, d)
	return errs
}

// label names an entry in an error: its ID, or its position.
func label(r *Requirement, i int) string {
	if r.ID != "" {
		return r.ID
	}
	return fmt.Sprintf("entry %d", i+1)
}

// numberOf returns an entry's <n> when its ID is well formed.
func numberOf(doc string, r *Requirement) (int, bool) {
	rest, ok := strings.CutPrefix(r.ID, doc+"§"+r.Section+"#")
	if !ok || !entryNumber.MatchString(rest) {
		return 0, false
	}
	n, err := strconv.Atoi(rest)
	return n, err == nil
}

// validate returns what is wrong with one entry of document doc.
func validate(doc string, r *Requirement) []error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if !numberedSection.MatchString(r.Section) && !slugSection.MatchString(r.Section) {
		bad("section %q is neither a section number (1.2, 3.6a) nor a heading's slug", r.Section)
	}
	if _, ok := numberOf(doc, r); !ok {
		bad("the ID is not %s§%s#<n> with <n> counting from 1", doc, r.Section)
	}
	switch r.Level {
	case reports.MUST, reports.SHOULD, reports.MAY:
	default:
		bad("level %q is not MUST, SHOULD or MAY", r.Level)
	}
	switch r.Form {
	case Keyword, Prose, Table:
	default:
		bad("form %q is not keyword, prose or table", r.Form)
	}
	if err := oneLine("summary", r.Summary); err != nil {
		errs = append(errs, err)
	}
	if w := r.Waiver; w != nil {
		if !slices.Contains(Reasons(), w.Reason) {
			bad("waiver reason %q is not one of %v", w.Reason, Reasons())
		}
		if err := oneLine("waiver's why", w.Why); err != nil {
			errs = append(errs, err)
		}
	}
	if r.Withdrawn != "" {
		if err := oneLine("withdrawn", r.Withdrawn); err != nil {
			errs = append(errs, err)
		}
	}
	switch {
	case doc == Reconstructed && r.Kind != Reconstructed:
		bad("an entry of %s has kind %q, want %q", Reconstructed, r.Kind, Reconstructed)
	case doc != Reconstructed && r.Kind != "":
		bad("kind %q: only %s.json holds reconstructed entries", r.Kind, Reconstructed)
	case r.Kind == Reconstructed:
		if d, _, _ := strings.Cut(r.Fills, " "); !slices.Contains(SourceDocuments(), d) {
			bad("fills %q does not begin with the source document whose hole it fills (\"<document> §<section>\")", r.Fills)
		}
		if strings.TrimSpace(r.Values) == "" {
			bad("a reconstructed entry states its values")
		}
		for _, v := range r.Vectors {
			if strings.Count(v, "/") != 2 {
				bad("vector %q is not suite/version/name", v)
			}
		}
	}
	if r.Kind != Reconstructed && (r.Fills != "" || r.Values != "" || len(r.Vectors) > 0) {
		bad("fills, values and vectors belong to reconstructed entries")
	}
	return errs
}

// oneLine reports an empty or multi-line text field.
func oneLine(field, s string) error {
	switch {
	case strings.TrimSpace(s) == "":
		return fmt.Errorf("the %s is empty", field)
	case strings.ContainsAny(s, "\n\r"):
		return fmt.Errorf("the %s spans more than one line", field)
	}
	return nil
}

// CheckVectors reports every vector a reconstructed entry names that known
// does not hold (known is the corpus's, from the catalogue).
func CheckVectors(x *Index, known func(id string) bool) error {
	var errs []error
	for _, d := range x.Documents {
		for _, r := range d.Requirements {
			for _, v := range r.Vectors {
				if !known(v) {
					errs = append(errs, fmt.Errorf("%s names vector %s, which the corpus does not hold", r.ID, v))
				}
			}
		}
	}
	return errors.Join(errs...)
}
