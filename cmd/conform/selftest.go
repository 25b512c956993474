package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/conform-suite/conform/cases/catalog"
	"github.com/conform-suite/conform/reports"
	"github.com/conform-suite/conform/runner"
	"github.com/conform-suite/conform/sut/builtin"
	"github.com/conform-suite/conform/sut/impl"
	"github.com/conform-suite/conform/sut/mutant"
)

// cmdSelftest proves the suite's power: the reference passes every case and
// each mutant is caught by at least one MUST case of its suite.
func cmdSelftest(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("selftest", stderr)
	seed := fs.Int64("seed", DefaultSeed, "seed for every random choice a case makes")
	if _, err := parse(fs, args); err != nil {
		return flagExit(err)
	}
	cat, err := catalog.Load()
	if err != nil {
		fmt.Fprintf(stderr, "conform: %v\n", err)
		return 1
	}
	run := func(spec string, im *impl.Impl) *reports.Record {
		return runner.Run(ctx, runner.Config{
			Spec: spec, Client: builtin.New(spec, im), Cases: cat.Cases,
			Seed: *seed, Corpus: cat.Corpus, Version: impl.Version(),
		})
	}
	ok := true
	ref := run("builtin:reference", impl.Reference())
	fmt.Fprintf(stdout, "builtin:reference: %d cases: %d pass, %d info, %d fail, %d warn, %d error, %d skip\n\n",
		ref.Summary.Total, ref.Summary.Counts[reports.Pass], ref.Summary.Counts[reports.Info],
		ref.Summary.Counts[reports.Fail], ref.Summary.Counts[reports.Warn], ref.Summary.Counts[reports.Error], ref.Summary.Counts[reports.Skip])
	if ref.ExitCode != 0 || ref.Summary.Counts[reports.Warn] > 0 {
		ok = false
		reports.WriteText(stdout, ref, false)
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "MUTANT\tSUITE\tCAUGHT BY (MUST)\tCASES")
	for _, m := range mutant.All() {
		rec := run("builtin:mutant/"+m.Name, m.Impl())
		var caught []string
		for _, c := range rec.Cases {
			if c.Level == reports.MUST && c.Outcome == reports.Fail {
				caught = append(caught, c.ID)
			}
		}
		shown := caught
		if len(shown) > 3 {
			shown = append(shown[:3:3], fmt.Sprintf("… %d more", len(caught)-3))
		}
		status := fmt.Sprint(len(caught))
		if len(caught) == 0 {
			status = "NOT CAUGHT"
			ok = false
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", m.Name, m.Suite, status, strings.Join(shown, ", "))
	}
	tw.Flush()
	if !ok {
		fmt.Fprintln(stdout, "\nselftest FAILED: the reference must pass every case and every mutant must be caught")
		return 1
	}
	fmt.Fprintln(stdout, "\nselftest passed: the reference passes every case; every mutant is caught by a MUST case")
	return 0
}
