// Command conform is the conformance suite and fuzzing harness for Ranvier,
// libtracer's TLV graph protocol and doppler. It holds no protocol logic:
// this package parses flags, wires the packages together and chooses exit
// codes.
//
// Usage:
//
//	conform run --sut SPEC [--profile P] [--case GLOB] [--seed N] [--strict] [--timeout D]
//	            [--json FILE] [--junit FILE] [--markdown FILE] [--html FILE] [--baseline FILE [--strict-baseline]]
//	conform baseline RECORD
//	conform diff OLD NEW
//	conform list [--profile P] [--case GLOB]
//	conform explain ID
//	conform reference [--json]
//	conform mutants
//	conform faults
//	conform selftest
//	conform version
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := Main(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// exitUsage is the exit code for a command line conform cannot use.
const exitUsage = 2

type command struct {
	name, summary string
	run           func(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int
	hidden        bool
}

func commands() []command {
	return []command{
		{name: "run", summary: "run the conformance cases against a SUT", run: cmdRun},
		{name: "list", summary: "print the case catalogue", run: cmdList},
		{name: "explain", summary: "print one case's requirement, spec reference and vectors", run: cmdExplain},
		{name: "reference", summary: "serve the reference implementation over conform.v1 on stdio", run: cmdReference},
		{name: "mutants", summary: "list the mutants: name, suite, bug", run: cmdMutants},
		{name: "faults", summary: "list the fault SUTs: name, suite, bug", run: cmdFaults},
		{name: "baseline", summary: "print a baseline of the cases a record failed", run: cmdBaseline},
		{name: "diff", summary: "compare two records: regressions and fixes", run: cmdDiff},
		{name: "fuzz", summary: "fuzz a SUT against the reference: findings minimised, deduplicated, replayable", run: cmdFuzz},
		{name: "replay", summary: "rerun one fuzz finding against a SUT: exit 1 when it reproduces", run: cmdReplay},
		{name: "selftest", summary: "run the reference and every mutant and print the mutation table", run: cmdSelftest},
		{name: "version", summary: "print conform's version", run: cmdVersion},
		{name: "fault", summary: "serve one fault SUT on stdio", run: cmdFault, hidden: true},
		{name: "lib-host", summary: "serve a C ABI library on stdio (the lib: carrier's child process)", run: cmdLibHost, hidden: true},
		{name: "live-publisher", summary: "run the reference's data-plane publisher as a process of its own (a device for --peer)", run: cmdLivePublisher, hidden: true},
	}
}

// Main runs conform with args and returns the exit code.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stderr)
		if len(args) == 0 {
			return exitUsage
		}
		return 0
	}
	for _, c := range commands() {
		if c.name == args[0] {
			return c.run(ctx, args[1:], stdin, stdout, stderr)
		}
	}
	fmt.Fprintf(stderr, "conform: unknown command %q\n\n", args[0])
	usage(stderr)
	return exitUsage
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: conform <command> [flags]")
	fmt.Fprintln(w)
	for _, c := range commands() {
		if !c.hidden {
			fmt.Fprintf(w, "  %-10s %s\n", c.name, c.summary)
		}
	}
	fmt.Fprintln(w, "\nconform <command> -h describes a command's flags.")
}

// parse parses args with fs, allowing flags after positional arguments, and
// returns the positional arguments. A bad flag is reported on fs's output.
func parse(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

func newFlags(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("conform "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

// flagExit maps a flag parsing error to an exit code: -h is not a failure.
func flagExit(err error) int {
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	return exitUsage
}

// listFlag is a repeatable flag whose values may also be comma-separated.
type listFlag []string

func (l *listFlag) String() string { return fmt.Sprint([]string(*l)) }

func (l *listFlag) Set(v string) error {
	for _, p := range splitComma(v) {
		*l = append(*l, p)
	}
	return nil
}

func splitComma(s string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == ',' {
			if i > start {
				out = append(out, s[start:i])
			}
			start = i + 1
		}
	}
	return out
}
