// Package mutation runs the mutation table: the reference against every case,
// and every mutant against the cases of its own suite, recording which MUST
// cases catch each. It is conform proving its own power — a mutant no MUST
// case catches is a hole in the suite — and both conform selftest and the
// catalogue's tests run it.
package mutation

import (
	"context"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/conform-suite/conform/cases"
	"github.com/conform-suite/conform/reports"
	"github.com/conform-suite/conform/runner"
	"github.com/conform-suite/conform/sut/builtin"
	"github.com/conform-suite/conform/sut/impl"
	"github.com/conform-suite/conform/sut/mutant"
)

// DefaultConcurrency is how many runs go at once when Config.Concurrency is
// zero. The live cases sleep far more than they compute, so this is above the
// core count on purpose.
const DefaultConcurrency = 16

// Config is one mutation table.
type Config struct {
	// Cases is the whole catalogue.
	Cases []cases.Case
	// Mutants are the mutants to run; nil means mutant.All().
	Mutants []mutant.Mutant
	Seed    int64
	// Env is the live cases' environment (the broker).
	Env *cases.Env
	// Self runs a binary that serves "reference node [--mutant NAME]", the
	// node the ranvier-node cases launch; without it the node cases skip.
	Self []string
	// Concurrency bounds the runs going at once.
	Concurrency int
	// Corpus and Version go into each record.
	Corpus, Version string
}

// Row is one mutant's run.
type Row struct {
	Mutant mutant.Mutant
	Record *reports.Record
	// Caught lists the MUST cases of the mutant's suite that failed.
	Caught []string
}

// Table is the outcome: the reference's run and one row per mutant, in the
// order of Config.Mutants.
type Table struct {
	Reference *reports.Record
	Rows      []Row
}

// OK reports whether the suite proved its power: the reference passed or
// recorded every case, and every mutant was caught by a MUST case.
func (t *Table) OK() bool {
	if ReferenceFailures(t.Reference) != nil {
		return false
	}
	for _, r := range t.Rows {
		if len(r.Caught) == 0 {
			return false
		}
	}
	return true
}

// ReferenceFailures returns the reference's cases that neither passed nor
// were recorded as info: each is a bug in the reference or in the case.
func ReferenceFailures(ref *reports.Record) []reports.CaseResult {
	var bad []reports.CaseResult
	for _, c := range ref.Cases {
		if c.Outcome != reports.Pass && c.Outcome != reports.Info {
			bad = append(bad, c)
		}
	}
	return bad
}

// CasesFor returns the cases that can catch m: those of its suite, narrowed
// to its profile when it names one.
func CasesFor(all []cases.Case, m mutant.Mutant) []cases.Case {
	var out []cases.Case
	for _, c := range all {
		if c.Suite() == m.Suite && (m.Profile == "" || c.Profile == m.Profile) {
			out = append(out, c)
		}
	}
	return out
}

// Run runs the table. When ctx is cancelled the runs still going stop
// between ops and their records are marked interrupted.
func Run(ctx context.Context, cfg Config) *Table {
	if cfg.Mutants == nil {
		cfg.Mutants = mutant.All()
	}
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = DefaultConcurrency
	}
	t := &Table{Rows: make([]Row, len(cfg.Mutants))}
	sem := make(chan struct{}, cfg.Concurrency)
	var wg sync.WaitGroup
	do := func(spec, name string, im *impl.Impl, cs []cases.Case, into **reports.Record) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			if len(cfg.Self) > 0 {
				im.SetNodeCommand(mutant.NodeCommand(cfg.Self, name))
			}
			*into = runner.Run(ctx, runner.Config{
				Spec: spec, Client: builtin.New(spec, im), Cases: cs, Seed: cfg.Seed,
				Env: cfg.Env, Corpus: cfg.Corpus, Version: cfg.Version,
			})
		}()
	}
	// The reference runs every case; its profiles go side by side, as the
	// mutants do, and their records are merged in catalogue order.
	parts := splitByProfile(cfg.Cases)
	refs := make([]*reports.Record, len(parts))
	for i := range parts {
		do("builtin:reference", "", impl.Reference(), parts[i], &refs[i])
	}
	for i, m := range cfg.Mutants {
		t.Rows[i].Mutant = m
		do("builtin:mutant/"+m.Name, m.Name, m.Impl(), CasesFor(cfg.Cases, m), &t.Rows[i].Record)
	}
	wg.Wait()
	t.Reference = merge(refs)
	for i := range t.Rows {
		r := &t.Rows[i]
		for _, c := range r.Record.Cases {
			if c.Level == reports.MUST && c.Outcome == reports.Fail && reports.SuiteOf(c.ID) == r.Mutant.Suite {
				r.Caught = append(r.Caught, c.ID)
			}
		}
	}
	return t
}

// Idle returns the IDs of the MUST cases among cs that no mutant of the table
// caught. Such a case passes against every bug conform knows how to make: it
// proves nothing until a mutant shows it can fail.
func (t *Table) Idle(cs []cases.Case) []string {
	caught := map[string]bool{}
	for _, r := range t.Rows {
		for _, id := range r.Caught {
			caught[id] = true
		}
	}
	var idle []string
	for _, c := range cs {
		if c.Level == reports.MUST && !caught[c.ID] {
			idle = append(idle, c.ID)
		}
	}
	return idle
}

// splitByProfile groups cs by profile, keeping each group in catalogue order.
func splitByProfile(cs []cases.Case) [][]cases.Case {
	index := map[string]int{}
	var parts [][]cases.Case
	for _, c := range cs {
		i, ok := index[c.Profile]
		if !ok {
			i = len(parts)
			index[c.Profile] = i
			parts = append(parts, nil)
		}
		parts[i] = append(parts[i], c)
	}
	return parts
}

// merge joins the records of one SUT's runs over parts of a selection into
// the record of one run over all of it.
func merge(recs []*reports.Record) *reports.Record {
	if len(recs) == 0 {
		return &reports.Record{}
	}
	out := *recs[0]
	out.Cases, out.Unimplemented = nil, nil
	undeclared := map[string]bool{}
	for _, r := range recs {
		out.Cases = append(out.Cases, r.Cases...)
		out.Unimplemented = append(out.Unimplemented, r.Unimplemented...)
		out.Interrupted = out.Interrupted || r.Interrupted
		out.DurationSec = max(out.DurationSec, r.DurationSec)
		for _, p := range r.Undeclared {
			undeclared[p] = true
		}
	}
	out.Undeclared = slices.Sorted(maps.Keys(undeclared))
	slices.SortFunc(out.Cases, func(a, b reports.CaseResult) int { return strings.Compare(a.ID, b.ID) })
	out.Summarize()
	out.ExitCode = runner.ExitCode(&out)
	return &out
}
