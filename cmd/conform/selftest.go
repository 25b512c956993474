package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/conform-suite/conform/cases"
	"github.com/conform-suite/conform/mutation"
	"github.com/conform-suite/conform/natsserver"
	"github.com/conform-suite/conform/reports"
	"github.com/conform-suite/conform/suite"
	"github.com/conform-suite/conform/sut/impl"
	"github.com/conform-suite/conform/sut/mutant"
)

// cmdSelftest proves the suite's power: the reference passes every case and
// each mutant is caught by at least one MUST case of its suite.
func cmdSelftest(ctx context.Context, reg *suite.Registry, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("selftest", stderr)
	seed := fs.Int64("seed", DefaultSeed, "seed for every random choice a case makes")
	var only listFlag
	fs.Var(&only, "suite", "only the mutants and cases of these suites (comma-separated, repeatable)")
	if _, err := parse(fs, args); err != nil {
		return flagExit(err)
	}
	cat, err := reg.Catalogue()
	if err != nil {
		fmt.Fprintf(stderr, "conform: %v\n", err)
		return 1
	}
	cs, mutants := cat.Cases, reg.Mutants()
	if len(only) > 0 {
		cs = slices.DeleteFunc(slices.Clone(cs), func(c cases.Case) bool { return !slices.Contains(only, c.Suite()) })
		mutants = slices.DeleteFunc(mutants, func(m mutant.Mutant) bool { return !slices.Contains(only, m.Suite) })
		if len(cs) == 0 {
			fmt.Fprintf(stderr, "conform selftest: no suite named %v (conform list shows them)\n", []string(only))
			return exitUsage
		}
	}
	table := mutationTable(ctx, mutation.Config{Suites: reg, Cases: cs, Mutants: mutants, Seed: *seed, Corpus: cat.Corpus, Version: impl.Version()})
	ref := table.Reference
	fmt.Fprintf(stdout, "builtin:reference: %d cases: %d pass, %d info, %d fail, %d warn, %d error, %d skip\n\n",
		ref.Summary.Total, ref.Summary.Counts[reports.Pass], ref.Summary.Counts[reports.Info],
		ref.Summary.Counts[reports.Fail], ref.Summary.Counts[reports.Warn], ref.Summary.Counts[reports.Error], ref.Summary.Counts[reports.Skip])
	if len(mutation.ReferenceFailures(ref)) > 0 || ref.Summary.Counts[reports.Warn] > 0 {
		reports.WriteText(stdout, ref, false)
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "MUTANT\tSUITE\tCAUGHT BY (MUST)\tCASES")
	for _, r := range table.Rows {
		m, caught := r.Mutant, r.Caught
		shown := caught
		if len(shown) > 3 {
			shown = append(shown[:3:3], fmt.Sprintf("… %d more", len(caught)-3))
		}
		status := fmt.Sprint(len(caught))
		if len(caught) == 0 {
			status = "NOT CAUGHT"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", m.Name, m.Suite, status, strings.Join(shown, ", "))
	}
	tw.Flush()
	if !table.OK() || ref.Summary.Counts[reports.Warn] > 0 {
		fmt.Fprintln(stdout, "\nselftest FAILED: the reference must pass every case and every mutant must be caught")
		return 1
	}
	fmt.Fprintln(stdout, "\nselftest passed: the reference passes every case; every mutant is caught by a MUST case")
	return 0
}

// mutationTable runs cfg with what selftest and explain both give it: the
// live cases' broker, started on first use, and this binary as the node the
// ranvier-node cases launch. The broker carries no conform.v1, so it has
// NATS's own default max_payload, which keeps doppler's live chunking case
// small across the many runs of the table.
func mutationTable(ctx context.Context, cfg mutation.Config) *mutation.Table {
	broker := natsserver.NewLazy(natsserver.Options{MaxPayload: 1 << 20})
	defer broker.Shutdown()
	cfg.Env, cfg.Self = &cases.Env{Broker: broker.URL, CredentialBroker: natsserver.CredentialBroker}, self()
	return mutation.Run(ctx, cfg)
}
