package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/conform-suite/conform/suite"
	"github.com/conform-suite/conform/suites"
)

// cmdReferenceNode is conform reference node [--mutant NAME]: the reference's
// control-plane node (or a mutant's), configured from the RANVIER_*
// variables a runtime sets (ranvier-wire §3.2). It is the node_command the
// reference's Hello reports, so that conform can launch the reference as a
// node exactly as it launches a binding. It exits 0 after a Stop, and 1 when
// refused, when the configuration is unusable, or when interrupted.
func cmdReferenceNode(ctx context.Context, reg *suite.Registry, args []string, _ io.Reader, _, stderr io.Writer) int {
	fs := newFlags("reference node", stderr)
	name := fs.String("mutant", "", "run this mutant's node instead of the reference's (conform mutants lists them)")
	pos, err := parse(fs, args)
	if err != nil {
		return flagExit(err)
	}
	if len(pos) > 0 {
		fmt.Fprintf(stderr, "conform reference node: unexpected argument %q\n", pos[0])
		return exitUsage
	}
	if err := suites.RunNode(ctx, reg, *name, os.Getenv); err != nil {
		fmt.Fprintf(stderr, "conform reference node: %v\n", err)
		return 1
	}
	return 0
}
