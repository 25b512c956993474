package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/conform-suite/conform/cases"
	"github.com/conform-suite/conform/mutation"
	"github.com/conform-suite/conform/reports"
	"github.com/conform-suite/conform/requirements"
	"github.com/conform-suite/conform/suite"
	"github.com/conform-suite/conform/sut/mutant"
)

// cmdExplain prints what one case judges and why: its level, the
// requirements it enforces, what it sends and expects, and the mutants it
// catches.
func cmdExplain(ctx context.Context, reg *suite.Registry, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("explain", stderr)
	withMutants := fs.Bool("mutants", true, "run the case against each mutant of its suite and list those it catches")
	pos, err := parse(fs, args)
	if err != nil {
		return flagExit(err)
	}
	if len(pos) != 1 {
		fmt.Fprintln(stderr, "usage: conform explain ID")
		return exitUsage
	}
	cat, err := reg.Catalogue()
	if err != nil {
		fmt.Fprintf(stderr, "conform: %v\n", err)
		return 1
	}
	c, ok := cat.Lookup(pos[0])
	if !ok {
		if why, retired := reg.Retired(pos[0]); retired {
			fmt.Fprintf(stdout, "%s is retired: %s\n", pos[0], why)
			return 0
		}
		fmt.Fprintf(stderr, "conform explain: no case %q (conform list shows the catalogue)\n", pos[0])
		return exitUsage
	}
	index, err := requirements.Default()
	if err != nil {
		fmt.Fprintf(stderr, "conform: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "%s\n\n  %s\n\n", c.ID, c.Title)
	fmt.Fprintf(stdout, "level:    %s — %s\nprofile:  %s\nspec:     %s\n", c.Level, levelWhy(c.Level), c.Profile, c.Spec)
	if len(c.Tags) > 0 {
		fmt.Fprintf(stdout, "tags:     %s\n", strings.Join(c.Tags, ", "))
	}
	if len(c.Requirements) > 0 {
		fmt.Fprintln(stdout, "judges:")
		for _, id := range c.Requirements {
			r, ok := index.Lookup(id)
			if !ok {
				fmt.Fprintf(stdout, "  %s  (not in the index)\n", id)
				continue
			}
			fmt.Fprintf(stdout, "  %s  %s (%s)\n    %s\n", r.ID, r.Level, r.Form, r.Summary)
			if r.Values != "" {
				fmt.Fprintf(stdout, "    pinned: %s\n", r.Values)
			}
		}
	}
	if len(c.Vectors) > 0 {
		fmt.Fprintln(stdout, "vectors:")
		for _, id := range c.Vectors {
			v, ok := cat.Vectors[id]
			if !ok {
				continue
			}
			input, expected := v.Describe()
			fmt.Fprintf(stdout, "  %s  (%s)\n    %s\n    input: %s\n", v.ID, v.Spec, v.Title, input)
			if expected != "" {
				fmt.Fprintf(stdout, "    expected: %s\n", expected)
			}
		}
	}
	if *withMutants {
		explainCatchers(ctx, reg, c, stdout)
	}
	return 0
}

// levelWhy says what a case's level makes of a broken check.
func levelWhy(l reports.Level) string {
	switch l {
	case reports.MUST:
		return "a broken check fails the case: the requirement is a MUST or MUST NOT"
	case reports.SHOULD:
		return "a broken check warns (fails under --strict): the requirement is a SHOULD"
	case reports.MAY:
		return "recorded, never judged: the documents allow either answer"
	default:
		return "recorded, never judged: the documents leave this open"
	}
}

// explainCatchers runs c against the reference and every mutant of its
// suite and prints the mutants it catches. The table is computed, not
// stored: it is what the case does today, against the mutants this build
// has, and a live case's answer takes the seconds its waits take.
func explainCatchers(ctx context.Context, reg *suite.Registry, c cases.Case, stdout io.Writer) {
	if c.Level != reports.MUST && c.Level != reports.SHOULD {
		fmt.Fprintln(stdout, "caught mutants: none by design — the case is recorded, never judged")
		return
	}
	mutants := reg.Mutants()
	mutants = slices.DeleteFunc(mutants, func(m mutant.Mutant) bool { return len(mutation.CasesFor([]cases.Case{c}, m)) == 0 })
	start := time.Now()
	table := mutationTable(ctx, mutation.Config{Suites: reg, Cases: []cases.Case{c}, Mutants: mutants, Seed: DefaultSeed})
	var caught []string
	for _, r := range table.Rows {
		for _, res := range r.Record.Cases {
			if res.ID == c.ID && (res.Outcome == reports.Fail || res.Outcome == reports.Warn) {
				caught = append(caught, fmt.Sprintf("  %s  %s", r.Mutant.Name, r.Mutant.Bug))
			}
		}
	}
	took := time.Since(start).Round(10 * time.Millisecond)
	fmt.Fprintf(stdout, "caught mutants: %d of the %d mutants of its suite and profile (run now, %v):\n", len(caught), len(mutants), took)
	if len(caught) == 0 {
		fmt.Fprintln(stdout, "  none: a judged case that no mutant fails proves nothing yet (conform selftest reports it)")
	}
	for _, l := range caught {
		fmt.Fprintln(stdout, l)
	}
	if bad := mutation.ReferenceFailures(table.Reference); len(bad) > 0 {
		fmt.Fprintf(stdout, "the reference itself: %s — %s\n", bad[0].Outcome, strings.TrimSpace(bad[0].Message))
	}
}
