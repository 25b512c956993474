// Package suite describes a suite of conformance cases to the rest of
// conform. A Suite is one value holding everything conform knows about the
// suite — its name, the documents it enforces, its profiles, its catalogue,
// the reference's handlers of its conform.v1 ops, its mutants and its fuzz
// targets — and a Registry is the list of suites a conform binary carries.
// Every part of conform that needs to know which suites exist (run, list,
// explain, selftest, fuzz, the reference SUT) reads the Registry; none
// switches on a suite's name.
//
// Adding a suite means writing its own packages (reference, cases, mutants,
// fuzz targets) and a descriptor, and adding the descriptor to the list in
// package suites. docs/architecture.md walks through it.
package suite

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/conform-suite/conform/campaign/gen"
	"github.com/conform-suite/conform/cases"
	"github.com/conform-suite/conform/sut/impl"
	"github.com/conform-suite/conform/sut/mutant"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// ReconstructedPrefix begins the ID of every requirement of kind
// reconstructed: a pin this project chose where the documents are silent. A
// case naming one carries the tag cases.Reconstructed.
const ReconstructedPrefix = "reconstructed§"

// A Suite describes one suite.
type Suite struct {
	// Name is the first part of every case ID of the suite, such as "wire".
	Name string
	// Title says in a few words what the suite judges.
	Title string
	// Documents are the source documents whose rules the suite's cases
	// judge, by name (such as "ranvier-wire").
	Documents []string
	// Profiles are what a SUT declares to implement the suite's cases, in
	// the order conform lists them. Every case of the suite belongs to one.
	Profiles []Profile
	// Load returns the suite's cases and describes the corpus they use.
	Load func() (*Catalogue, error)
	// Ops are the conform.v1 ops the suite's cases send, each with the
	// reference's handler (impl.Handler makes one of a typed function).
	Ops []impl.Op
	// Mutants returns the suite's mutants: the reference with one named bug
	// each, every one caught by at least one MUST case of the suite.
	Mutants func() []mutant.Mutant
	// Targets are the suite's fuzz targets, each named <suite>.<what>:
	// what conform fuzz sends generated inputs to, comparing the SUT's
	// answers with the reference's (docs/fuzzing.md). A suite with none is
	// not fuzzed.
	Targets []gen.Target
	// FuzzSeeds, if set, returns byte strings every fuzz target of the
	// suite starts from besides the inputs its cases send: the bytes of
	// its corpus vectors.
	FuzzSeeds func() ([]gen.Raw, error)
	// Retired lists the case IDs the suite shipped and withdrew, with the
	// reason. A retired ID is never reused: a case ID names one requirement
	// for good.
	Retired map[string]string
}

// A Profile is a part of a suite a SUT can implement on its own.
type Profile struct {
	// Name is what a SUT's Hello declares, such as "wire" or "doppler-nats".
	Name string
	// Summary says in one line what a SUT implementing the profile does.
	Summary string
	// Live marks a profile whose cases drive the SUT over real sockets or
	// subjects; its cases carry the tag "live" in the record.
	Live bool
	// Launched marks a profile whose cases launch the SUT as a process of
	// its own (a Ranvier node): an implementation declares it only when it
	// says how it is launched (its Hello's node_command).
	Launched bool
}

// A Catalogue is a suite's cases, or every suite's, with the corpus they
// use.
type Catalogue struct {
	// Cases are the cases, sorted by ID.
	Cases []cases.Case
	// Corpus names each vector set and its digest, for the record: "wire/v1
	// sha256:…, streams/v1 sha256:…".
	Corpus string
	// Vectors describes every vector, by ID, for explain.
	Vectors map[string]Vector
}

// Select returns the cases keep accepts, in catalogue order. The cases
// carry what the registry gave them, the live tag included, so a run of
// them is the run conform run would make.
func (c *Catalogue) Select(keep func(cases.Case) bool) []cases.Case {
	var out []cases.Case
	for _, k := range c.Cases {
		if keep(k) {
			out = append(out, k)
		}
	}
	return out
}

// Vector is what explain prints about a corpus vector.
type Vector struct {
	ID, Spec, Title string
	// Describe renders the vector's input in short (its bytes in hex, or a
	// script of steps) and what it says a conforming implementation
	// answers, as the vector file states it (its fields other than its
	// name and input, in JSON). It is called only when asked: every
	// conform process loads the catalogue, only explain prints a vector,
	// and rendering them all, megabyte inputs included, cost each load
	// nine tenths of its time.
	Describe func() (input, expected string)
}

// Lookup returns the case with the given ID.
func (c *Catalogue) Lookup(id string) (cases.Case, bool) {
	i, ok := slices.BinarySearchFunc(c.Cases, id, func(c cases.Case, id string) int { return strings.Compare(c.ID, id) })
	if !ok {
		return cases.Case{}, false
	}
	return c.Cases[i], true
}

// A Registry is the suites a conform binary carries. Its zero value is not
// usable; make one with NewRegistry.
type Registry struct {
	suites []*Suite
	// catalogue is built once, on first use: loading every corpus and
	// defining every case is the costliest thing a registry does.
	catalogue func() (*Catalogue, error)
}

// NewRegistry returns a registry of ss, in that order. It refuses a
// registry in which two suites share a name, a profile, a mutant, an op or
// a fuzz target, a mutant that is incomplete or claims another suite, and a
// fuzz target whose declaration gen.Target.Resolve refuses or whose name is
// not its suite's.
func NewRegistry(ss ...*Suite) (*Registry, error) {
	names, profiles := map[string]bool{}, map[string]string{}
	ops := map[protoreflect.FullName]string{}
	mutants, targets := map[string]string{}, map[string]string{}
	for _, s := range ss {
		switch {
		case s.Name == "" || strings.ContainsAny(s.Name, "/. ,"):
			return nil, fmt.Errorf("suite %q: a name is one word, no '/', '.', ',' or space", s.Name)
		case names[s.Name]:
			return nil, fmt.Errorf("suite %q registered twice", s.Name)
		case len(s.Profiles) == 0 || s.Load == nil || s.Mutants == nil:
			return nil, fmt.Errorf("suite %q: profiles, Load and Mutants are required", s.Name)
		}
		names[s.Name] = true
		for _, p := range s.Profiles {
			if other, ok := profiles[p.Name]; ok {
				return nil, fmt.Errorf("profile %q is in suites %s and %s", p.Name, other, s.Name)
			}
			profiles[p.Name] = s.Name
		}
		for _, m := range s.Mutants() {
			if err := m.Check(); err != nil {
				return nil, fmt.Errorf("suite %s: %w", s.Name, err)
			}
			if m.Suite != s.Name {
				return nil, fmt.Errorf("suite %s: mutant %s says it is of suite %s", s.Name, m.Name, m.Suite)
			}
			if other, ok := mutants[m.Name]; ok {
				return nil, fmt.Errorf("mutant %s is in suites %s and %s", m.Name, other, s.Name)
			}
			mutants[m.Name] = s.Name
		}
		for _, op := range s.Ops {
			if other, ok := ops[op.Message]; ok {
				return nil, fmt.Errorf("op %s is in suites %s and %s", op.Message, other, s.Name)
			}
			ops[op.Message] = s.Name
		}
		for i := range s.Targets {
			t := &s.Targets[i]
			if _, err := t.Resolve(); err != nil {
				return nil, fmt.Errorf("suite %s: %w", s.Name, err)
			}
			if !strings.HasPrefix(t.Name, s.Name+".") {
				return nil, fmt.Errorf("suite %s: fuzz target %s is not named %s.<what>", s.Name, t.Name, s.Name)
			}
			if other, ok := targets[t.Name]; ok {
				return nil, fmt.Errorf("fuzz target %s is in suites %s and %s", t.Name, other, s.Name)
			}
			targets[t.Name] = s.Name
		}
	}
	r := &Registry{suites: ss}
	r.catalogue = sync.OnceValues(r.load)
	return r, nil
}

// Suites returns the registered suites, in registration order.
func (r *Registry) Suites() []*Suite { return r.suites }

// Lookup returns the suite named name.
func (r *Registry) Lookup(name string) (*Suite, bool) {
	for _, s := range r.suites {
		if s.Name == name {
			return s, true
		}
	}
	return nil, false
}

// Profiles returns every suite's profiles, suite by suite.
func (r *Registry) Profiles() []Profile {
	var out []Profile
	for _, s := range r.suites {
		out = append(out, s.Profiles...)
	}
	return out
}

// SuiteOfProfile returns the suite a profile belongs to.
func (r *Registry) SuiteOfProfile(profile string) (*Suite, bool) {
	for _, s := range r.suites {
		if slices.ContainsFunc(s.Profiles, func(p Profile) bool { return p.Name == profile }) {
			return s, true
		}
	}
	return nil, false
}

// Catalogue returns every suite's cases, sorted by ID, with the corpus they
// use. The catalogue is built on first use and shared afterwards; callers
// must not modify it. An error means conform itself is broken (a malformed
// vector, a duplicated ID, a case of a profile its suite does not have).
func (r *Registry) Catalogue() (*Catalogue, error) { return r.catalogue() }

func (r *Registry) load() (*Catalogue, error) {
	out := &Catalogue{Vectors: map[string]Vector{}}
	for _, s := range r.suites {
		c, err := s.Load()
		if err != nil {
			return nil, fmt.Errorf("suite %s: %w", s.Name, err)
		}
		for _, k := range c.Cases {
			if k.Suite() != s.Name {
				return nil, fmt.Errorf("suite %s: case %s belongs to another suite", s.Name, k.ID)
			}
			i := slices.IndexFunc(s.Profiles, func(p Profile) bool { return p.Name == k.Profile })
			if i < 0 {
				return nil, fmt.Errorf("suite %s: case %s is of profile %q, which the suite does not have", s.Name, k.ID, k.Profile)
			}
			if s.Profiles[i].Live && !slices.Contains(k.Tags, "live") {
				k.Tags = append(slices.Clip(k.Tags), "live")
			}
			// A verdict that rests on a pin this project chose, rather than
			// on a document's own words, says so in the record.
			pinned := slices.ContainsFunc(k.Requirements, func(id string) bool { return strings.HasPrefix(id, ReconstructedPrefix) })
			if pinned && !slices.Contains(k.Tags, cases.Reconstructed) {
				k.Tags = append(slices.Clip(k.Tags), cases.Reconstructed)
			}
			out.Cases = append(out.Cases, k)
		}
		if c.Corpus != "" {
			if out.Corpus != "" {
				out.Corpus += ", "
			}
			out.Corpus += c.Corpus
		}
		for id, v := range c.Vectors {
			if _, dup := out.Vectors[id]; dup {
				return nil, fmt.Errorf("suite %s: vector %s is in another suite too", s.Name, id)
			}
			out.Vectors[id] = v
		}
	}
	if err := cases.Check(out.Cases); err != nil {
		return nil, err
	}
	out.Cases = cases.Sorted(out.Cases)
	return out, nil
}

// Retired returns why the case ID was withdrawn, if its suite retired it.
func (r *Registry) Retired(id string) (string, bool) {
	for _, s := range r.suites {
		if why, ok := s.Retired[id]; ok {
			return why, true
		}
	}
	return "", false
}

// Ops returns the reference's handler of every registered op.
func (r *Registry) Ops() map[protoreflect.FullName]impl.OpHandler {
	ops := map[protoreflect.FullName]impl.OpHandler{}
	for _, s := range r.suites {
		for _, op := range s.Ops {
			ops[op.Message] = op.Handle
		}
	}
	return ops
}

// Reference returns a fresh reference implementation answering every
// registered op and declaring every registered profile (a Launched one only
// once it is given a node command).
func (r *Registry) Reference() *impl.Impl {
	im := impl.Reference()
	im.Ops = r.Ops()
	for _, p := range r.Profiles() {
		if !p.Launched && !slices.Contains(im.Profiles, p.Name) {
			im.Profiles = append(im.Profiles, p.Name)
		}
	}
	return im
}

// Mutants returns every suite's mutants, sorted by suite and name.
func (r *Registry) Mutants() []mutant.Mutant {
	var out []mutant.Mutant
	for _, s := range r.suites {
		out = append(out, s.Mutants()...)
	}
	slices.SortStableFunc(out, func(a, b mutant.Mutant) int {
		if c := strings.Compare(a.Suite, b.Suite); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out
}

// Mutant returns the mutant named name.
func (r *Registry) Mutant(name string) (mutant.Mutant, bool) {
	for _, s := range r.suites {
		for _, m := range s.Mutants() {
			if m.Name == name {
				return m, true
			}
		}
	}
	return mutant.Mutant{}, false
}

// MutantImpl returns the implementation of the mutant named name: a fresh
// reference with its one bug.
func (r *Registry) MutantImpl(name string) (*impl.Impl, bool) {
	m, ok := r.Mutant(name)
	if !ok {
		return nil, false
	}
	return m.Apply(r.Reference()), true
}
