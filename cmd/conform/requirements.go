package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/conform-suite/conform/reports"
	"github.com/conform-suite/conform/requirements"
	"github.com/conform-suite/conform/suite"
)

func cmdRequirements(_ context.Context, reg *suite.Registry, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	return requirementsMain(args, stdout, stderr, shippedCoverage(reg))
}

// shippedCoverage measures the requirements index conform ships against
// reg's catalogue.
func shippedCoverage(reg *suite.Registry) func() (*requirements.Coverage, error) {
	return func() (*requirements.Coverage, error) {
		cat, err := reg.Catalogue()
		if err != nil {
			return nil, err
		}
		_, cov, err := requirements.Measure(cat.Cases, func(id string) bool { _, ok := cat.Vectors[id]; return ok })
		return cov, err
	}
}

// requirementsMain is conform requirements with the coverage it reports
// supplied by load, so that its exit codes can be tested on a small index.
func requirementsMain(args []string, stdout, stderr io.Writer, load func() (*requirements.Coverage, error)) int {
	fs := newFlags("requirements", stderr)
	untraced := fs.Bool("untraced", false, "list only the MUST requirements with neither a case nor a waiver; exit 1 when there is one")
	doc := fs.String("document", "", "only this document: "+strings.Join(append(requirements.SourceDocuments(), requirements.Reconstructed), ", "))
	asJSON := fs.Bool("json", false, "print JSON rather than text")
	pos, err := parse(fs, args)
	if err != nil {
		return flagExit(err)
	}
	if len(pos) > 0 {
		fmt.Fprintln(stderr, "usage: conform requirements [--untraced] [--document D] [--json]")
		return exitUsage
	}
	cov, err := load()
	if err != nil {
		fmt.Fprintf(stderr, "conform: %v\n", err)
		return 1
	}
	if *doc != "" {
		only, ok := cov.Only(*doc)
		if !ok {
			fmt.Fprintf(stderr, "conform requirements: --document %q: the index holds %s\n", *doc, strings.Join(cov.Names(), ", "))
			return exitUsage
		}
		cov = only
	}
	if *untraced {
		list := cov.Untraced(reports.MUST)
		if list == nil {
			list = []requirements.Status{} // [] in JSON, not null
		}
		if *asJSON {
			err = writeJSON(stdout, list)
		} else {
			err = requirements.WriteUntraced(stdout, cov, reports.MUST)
		}
		if err != nil {
			fmt.Fprintf(stderr, "conform requirements: %v\n", err)
			return 1
		}
		fmt.Fprintf(stderr, "%d MUST requirements with neither a case nor a waiver\n", len(list))
		if len(list) > 0 {
			return 1
		}
		return 0
	}
	if *asJSON {
		err = writeJSON(stdout, cov)
	} else {
		err = requirements.WriteText(stdout, cov)
	}
	if err != nil {
		fmt.Fprintf(stderr, "conform requirements: %v\n", err)
		return 1
	}
	return 0
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
