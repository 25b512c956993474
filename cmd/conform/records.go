package main

import (
	"context"
	"fmt"
	"io"

	"github.com/conform-suite/conform/reports"
	"github.com/conform-suite/conform/suite"
)

// cmdBaseline prints a baseline listing every case a record failed, so that
// a binding adopting conform can start from where it stands.
func cmdBaseline(_ context.Context, reg *suite.Registry, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("baseline", stderr)
	pos, err := parse(fs, args)
	if err != nil {
		return flagExit(err)
	}
	if len(pos) != 1 {
		fmt.Fprintln(stderr, "usage: conform baseline RECORD.json")
		return exitUsage
	}
	rec, err := reports.ReadJSON(pos[0])
	if err != nil {
		// A record that cannot be read is a usage error.
		fmt.Fprintf(stderr, "conform baseline: %v\n", err)
		return exitUsage
	}
	fmt.Fprint(stdout, reports.FromRecord(rec))
	return 0
}

// cmdDiff compares two records and names regressions and fixes; it exits 1
// when there is a regression, so an upgrade of either side can be gated, and
// 2 when a record cannot be read (never 1, which a gate reads as a
// regression).
func cmdDiff(_ context.Context, reg *suite.Registry, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("diff", stderr)
	pos, err := parse(fs, args)
	if err != nil {
		return flagExit(err)
	}
	if len(pos) != 2 {
		fmt.Fprintln(stderr, "usage: conform diff OLD.json NEW.json")
		return exitUsage
	}
	var recs [2]*reports.Record
	for i, p := range pos {
		if recs[i], err = reports.ReadJSON(p); err != nil {
			fmt.Fprintf(stderr, "conform diff: %v\n", err)
			return exitUsage
		}
	}
	d := reports.Diff(recs[0], recs[1])
	if err := reports.WriteDiff(stdout, d); err != nil {
		fmt.Fprintf(stderr, "conform diff: %v\n", err)
		return 1
	}
	if d.HasRegressions() {
		return 1
	}
	return 0
}
