package main

import (
	"context"
	"fmt"
	"io"
)

// cmdFuzz runs a fuzzing campaign (conform fuzz, fuzz worker, fuzz promote).
func cmdFuzz(_ context.Context, _ []string, _ io.Reader, _, stderr io.Writer) int {
	fmt.Fprintln(stderr, "conform fuzz: not implemented yet")
	return exitUsage
}

// cmdReplay reruns one finding.
func cmdReplay(_ context.Context, _ []string, _ io.Reader, _, stderr io.Writer) int {
	fmt.Fprintln(stderr, "conform replay: not implemented yet")
	return exitUsage
}
