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
	"runtime/debug"
	"syscall"

	"github.com/conform-suite/conform/natsserver"
	"github.com/conform-suite/conform/proc"
	"github.com/conform-suite/conform/runner"
	"github.com/conform-suite/conform/suite"
	"github.com/conform-suite/conform/suites"
)

func main() { os.Exit(run(os.Args[1:])) }

// run sets the process up and runs Main.
//
// Signals: a first SIGINT or SIGTERM cancels the context, so that the
// command finishes what it must (conform run writes its record, marked
// interrupted) and exits by itself; a second one kills every child at once
// and exits at once with 128 + the signal's number (130 for Ctrl+C, 143 for
// SIGTERM), whatever the command is doing.
//
// Memory: conform run asks the Go runtime for a soft limit
// (runner.SoftMemoryLimit) unless GOMEMLIMIT says otherwise.
//
// Children: the commands that start children (launchers) make conform a
// child subreaper, so that the orphans of a SUT's descendants are
// re-parented to conform and reaped by it; sweep what a conform killed by
// SIGKILL left behind (processes carrying its mark, JetStream store
// directories); and stop every child that is left when the command returns.
func run(args []string) int {
	launcher := len(args) > 0 && launches(args[0])
	if len(args) > 0 && args[0] == "run" && os.Getenv("GOMEMLIMIT") == "" {
		// The limit is the process's, so it is set here and not in Main:
		// tests run Main in process, beside fuzz campaigns that need far
		// more, and a garbage collector held to 96 MB made them crawl.
		debug.SetMemoryLimit(runner.SoftMemoryLimit)
	}
	if launcher {
		_ = proc.Subreap() // best effort: without it orphans go to init
		proc.Sweep()
		_, _ = natsserver.Sweep(os.TempDir())
		defer proc.Shutdown()
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	go func() {
		s := <-sigs
		cancel()
		if launcher {
			fmt.Fprintf(os.Stderr, "\nconform: %v: finishing up (again to exit at once)\n", s)
		}
		s = <-sigs
		proc.KillAll()
		fmt.Fprintf(os.Stderr, "\nconform: %v again: exiting at once\n", s)
		os.Exit(signalExit(s))
	}()
	return Main(ctx, suites.Default(), args, os.Stdin, os.Stdout, os.Stderr)
}

// launches reports whether the command cmd may start child processes.
func launches(cmd string) bool {
	switch cmd {
	case "run", "fuzz", "replay", "selftest", "explain":
		return true
	}
	return false
}

// signalExit is the exit code of a process ended by s, as a shell reports
// it: 128 + the signal's number.
func signalExit(s os.Signal) int {
	if n, ok := s.(syscall.Signal); ok {
		return 128 + int(n)
	}
	return 128 + 2
}

// exitUsage is the exit code for a command line conform cannot use.
const exitUsage = 2

type command struct {
	name, summary string
	run           func(ctx context.Context, reg *suite.Registry, args []string, stdin io.Reader, stdout, stderr io.Writer) int
	hidden        bool
}

func commands() []command {
	return []command{
		{name: "run", summary: "run the conformance cases against a SUT", run: cmdRun},
		{name: "list", summary: "print the case catalogue", run: cmdList},
		{name: "explain", summary: "print one case's requirement, spec reference and vectors", run: cmdExplain},
		{name: "requirements", summary: "print the requirements index and its coverage; --untraced: exit 1 on a MUST with no case or waiver", run: cmdRequirements},
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

// Main runs conform with args over the suites of reg and returns the exit
// code.
func Main(ctx context.Context, reg *suite.Registry, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stderr)
		if len(args) == 0 {
			return exitUsage
		}
		return 0
	}
	for _, c := range commands() {
		if c.name == args[0] {
			return c.run(ctx, reg, args[1:], stdin, stdout, stderr)
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
