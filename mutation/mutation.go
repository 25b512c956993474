// Package mutation runs the mutation table: the reference against every case,
// and every mutant against the cases of its own suite, recording which MUST
// cases catch each. It is conform proving its own power — a mutant no MUST
// case catches is a hole in the suite — and both conform selftest and the
// catalogue's tests run it.
package mutation

import (
	"context"
	"runtime"
	"slices"
	"sync"

	"github.com/conform-suite/conform/cases"
	"github.com/conform-suite/conform/reports"
	"github.com/conform-suite/conform/runner"
	"github.com/conform-suite/conform/suite"
	"github.com/conform-suite/conform/sut"
	"github.com/conform-suite/conform/sut/builtin"
	"github.com/conform-suite/conform/sut/impl"
	"github.com/conform-suite/conform/sut/mutant"
)

// DefaultConcurrency bounds the live cases running at once across the
// table's runs when Config.Concurrency is zero. Live cases wait on real time
// far more than they compute — the live mutants' runs use about a fifth of
// one core — so the bound is well above the core count; the other cases,
// which compute, run at most GOMAXPROCS at once. On a 2-core machine the
// whole table took 46 s at 32, 36 s at 48 and 35 s at 64, for the same CPU
// time: past 48 the longest runs' own waits (a doppler mutant's twenty
// deliveries that never come, ten seconds each, eight at a time) are the
// floor, while the node processes at once keep growing.
const DefaultConcurrency = 48

// parallel is how many cases of one run go at once, each over a fresh
// implementation of its own.
const parallel = 8

// Config is one mutation table.
type Config struct {
	// Suites gives the reference and the mutants.
	Suites *suite.Registry
	// Cases is the whole catalogue.
	Cases []cases.Case
	// Mutants are the mutants to run; nil means every mutant of Suites.
	Mutants []mutant.Mutant
	Seed    int64
	// Env is the live cases' environment (the broker).
	Env *cases.Env
	// Self runs a binary that serves "reference node [--mutant NAME]", the
	// node the ranvier-node cases launch; without it the node cases skip.
	Self []string
	// Concurrency bounds the live cases running at once across every run
	// of the table (each run's cases go up to 8 at once, each over a
	// session of its own: a fresh implementation).
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
//
// Every run starts at once; what bounds the work is the cases running at
// once across all of them (Config.Concurrency live cases, GOMAXPROCS
// others), so that a live mutant's waits overlap with everything else and
// the cases that compute never crowd out the live ones' timing.
func Run(ctx context.Context, cfg Config) *Table {
	if cfg.Mutants == nil {
		cfg.Mutants = cfg.Suites.Mutants()
	}
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = DefaultConcurrency
	}
	limits := runner.NewLimits(cfg.Concurrency, runtime.GOMAXPROCS(0))
	t := &Table{Rows: make([]Row, len(cfg.Mutants))}
	type job struct {
		spec, name string
		fresh      func() *impl.Impl
		cases      []cases.Case
		into       **reports.Record
		live       int // live cases: the waits that make a run long
	}
	jobs := []job{{spec: "builtin:reference", fresh: cfg.Suites.Reference, cases: cfg.Cases, into: &t.Reference}}
	for i, m := range cfg.Mutants {
		t.Rows[i].Mutant = m
		jobs = append(jobs, job{spec: "builtin:mutant/" + m.Name, name: m.Name, cases: CasesFor(cfg.Cases, m), into: &t.Rows[i].Record,
			fresh: func() *impl.Impl { return m.Apply(cfg.Suites.Reference()) }})
	}
	// The runs with most live cases start first: their waits are the
	// table's longest path, and everything else fits beside them.
	for i := range jobs {
		jobs[i].live = liveCases(jobs[i].cases)
	}
	slices.SortStableFunc(jobs, func(a, b job) int { return b.live - a.live })
	// Each session is a fresh implementation, as each process of a SUT
	// conform starts is: no case sees another's state.
	open := func(j job) *impl.Impl {
		im := j.fresh()
		if len(cfg.Self) > 0 {
			im.SetNodeCommand(mutant.NodeCommand(cfg.Self, j.name))
		}
		return im
	}
	run := func(j job, cs []cases.Case, parallel int, limits *runner.Limits) *reports.Record {
		return runner.Run(ctx, runner.Config{
			Spec: j.spec, Client: builtin.New(j.spec, open(j)), Cases: cs, Seed: cfg.Seed,
			Env: cfg.Env, Corpus: cfg.Corpus, Version: cfg.Version,
			Parallel: parallel, Limits: limits,
			Open: func(context.Context) (sut.Client, error) { return builtin.New(j.spec, open(j)), nil },
		})
	}
	var wg sync.WaitGroup
	for _, j := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			*j.into = run(j, j.cases, parallel, limits)
		}()
	}
	wg.Wait()
	// A case that ended in a harness error was not judged: conform missed
	// its own deadlines on every attempt the runner gave it. The table's own
	// load — dozens of live cases at once, beside whatever else the machine
	// runs — makes that likely on a small machine, and it is gone once
	// every run has ended; so each such case is judged once more, alone,
	// and that judgement replaces the unjudged one. Without this, a
	// mutant could look like a hole in the suite only because the machine
	// was busy.
	for _, j := range jobs {
		if ctx.Err() == nil {
			rejudge(*j.into, func(cs []cases.Case) *reports.Record { return run(j, cs, 1, nil) }, j.cases, unjudged,
				"the first judgement was a harness error")
		}
	}
	// A mutant whose bug is a matter of time (a runtime that declares a
	// node gone after one silent period, not three) shows it only when its
	// own timers run on time. In process, beside dozens of live cases and
	// whatever else the machine runs, they may run late enough to look
	// right, and the mutant looks like a hole in the suite. So a mutant no
	// MUST case caught has its live MUST cases judged once more, alone; a
	// case that cannot catch it fails to twice.
	rows := map[string]*Row{}
	for i := range t.Rows {
		r := &t.Rows[i]
		r.Caught = caught(r)
		rows[r.Mutant.Name] = r
	}
	for _, j := range jobs {
		if r := rows[j.name]; j.name != "" && r != nil && ctx.Err() == nil {
			judgeUncaughtAgain(r, j.cases, func(cs []cases.Case) *reports.Record { return run(j, cs, 1, nil) })
		}
	}
	return t
}

// judgeUncaughtAgain runs again, through run, the live MUST cases of cs
// that passed against r's mutant when no MUST case caught it, and takes
// what they catch the second time.
func judgeUncaughtAgain(r *Row, cs []cases.Case, run func([]cases.Case) *reports.Record) {
	if len(r.Caught) > 0 {
		return
	}
	liveMust := map[string]bool{}
	for _, c := range cs {
		liveMust[c.ID] = c.Level == reports.MUST && slices.Contains(c.Tags, runner.LiveTag)
	}
	rejudge(r.Record, run, cs,
		func(c reports.CaseResult) bool { return liveMust[c.ID] && c.Outcome == reports.Pass },
		"the mutant was caught by no MUST case while the table ran")
	r.Caught = caught(r)
}

// unjudged reports whether c ended in a harness error: conform missed its
// own deadlines, and the case said nothing of the SUT.
func unjudged(c reports.CaseResult) bool {
	return c.Outcome == reports.Error && c.ErrorKind == reports.KindHarness
}

// caught returns the MUST cases of r's suite that failed against its
// mutant.
func caught(r *Row) []string {
	var ids []string
	for _, c := range r.Record.Cases {
		if c.Level == reports.MUST && c.Outcome == reports.Fail && reports.SuiteOf(c.ID) == r.Mutant.Suite {
			ids = append(ids, c.ID)
		}
	}
	return ids
}

// rejudge runs again, through run, every case of rec that again says is to
// be judged again, and puts the new results in their place, each saying it
// was judged again and why (because); rec's summary and exit code are then
// made anew.
func rejudge(rec *reports.Record, run func([]cases.Case) *reports.Record, cs []cases.Case, again func(reports.CaseResult) bool, because string) {
	at := map[string]int{}
	var redo []cases.Case
	for i, c := range rec.Cases {
		if again(c) {
			at[c.ID] = i
		}
	}
	for _, c := range cs {
		if _, ok := at[c.ID]; ok {
			redo = append(redo, c)
		}
	}
	if len(redo) == 0 {
		return
	}
	for _, c := range run(redo).Cases {
		i, ok := at[c.ID]
		if !ok {
			continue
		}
		c.Notes = append(c.Notes, "judged again, alone, after the table's other runs ended: "+because+" ("+reports.Clip(string(rec.Cases[i].Outcome)+": "+rec.Cases[i].Message, 200)+")")
		rec.Cases[i] = c
	}
	rec.Summarize()
	rec.ExitCode = runner.ExitCode(rec)
}

// liveCases counts the live cases of cs.
func liveCases(cs []cases.Case) int {
	n := 0
	for _, c := range cs {
		if slices.Contains(c.Tags, runner.LiveTag) {
			n++
		}
	}
	return n
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
