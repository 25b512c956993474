package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"net/url"

	"github.com/conform-suite/conform/cases"
	"github.com/conform-suite/conform/cases/catalog"
	"github.com/conform-suite/conform/natsserver"
	"github.com/conform-suite/conform/reports"
	"github.com/conform-suite/conform/runner"
	"github.com/conform-suite/conform/sut"
	"github.com/conform-suite/conform/sut/dial"
	"github.com/conform-suite/conform/sut/impl"
	"github.com/conform-suite/conform/sut/observe"
)

// DefaultSeed seeds every random choice a case makes unless --seed is given.
const DefaultSeed = 1

func cmdRun(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("run", stderr)
	spec := fs.String("sut", "", "the SUT: builtin:reference, builtin:mutant/NAME, builtin:fault/NAME, exec:CMD, or a program path")
	var profiles, globs listFlag
	fs.Var(&profiles, "profile", "run only these profiles or suites (comma-separated, repeatable)")
	fs.Var(&globs, "case", "run only cases whose ID matches this glob (repeatable; * stops at /, a trailing ** matches all below)")
	seed := fs.Int64("seed", DefaultSeed, "seed for every random choice a case makes")
	strict := fs.Bool("strict", false, "treat a broken SHOULD (warn) as a failure")
	timeout := fs.Duration("timeout", runner.DefaultTimeout, "timeout for each op")
	maxTimeouts := fs.Int("max-timeouts", runner.DefaultMaxTimeouts, "consecutive timeouts after which the SUT is presumed lost")
	jsonOut := fs.String("json", "", "write the record to this file (atomically)")
	junitOut := fs.String("junit", "", "write the record as JUnit XML to this file")
	mdOut := fs.String("markdown", "", "write a Markdown summary to this file (for a pull request or GITHUB_STEP_SUMMARY)")
	htmlOut := fs.String("html", "", "write the record as one self-contained HTML page to this file")
	baselinePath := fs.String("baseline", "", "a file of known failures: exit 0 when only those fail")
	strictBaseline := fs.Bool("strict-baseline", false, "with --baseline, also fail on unexpected passes and stale or expired entries")
	verbose := fs.Bool("v", false, "print every case, passes included")
	natsURL := fs.String("nats-url", "", "the NATS server live doppler cases use (nats://host:port); without it conform starts one embedded on loopback when a selected case needs it")
	peer := fs.String("peer", "", "observe a device with no shim: a Ranvier publisher at tcp://host:port[/NAME] that conform dials as subscriber to NAME (default conform), with --profile ranvier-publisher")
	nodeCmd := fs.String("node-cmd", "", "the command that starts the SUT as a Ranvier control-plane node, launched with RANVIER_* set (overrides the Hello's node_command)")
	pos, err := parse(fs, args)
	if err != nil {
		return flagExit(err)
	}
	if len(pos) > 0 {
		fmt.Fprintf(stderr, "conform run: unexpected argument %q\n", pos[0])
		return exitUsage
	}
	observed := *spec == "" && (*peer != "" || *nodeCmd != "")
	if *spec == "" && !observed {
		fmt.Fprintln(stderr, "conform run: --sut is required (try --sut builtin:reference), or --peer/--node-cmd to observe a device with no shim")
		return exitUsage
	}
	if observed && len(profiles) == 0 {
		fmt.Fprintln(stderr, "conform run: observing a device needs --profile (ranvier-publisher with --peer, ranvier-node with --node-cmd)")
		return exitUsage
	}
	env, err := runEnv(*natsURL, *peer, *nodeCmd)
	if err != nil {
		fmt.Fprintf(stderr, "conform run: %v\n", err)
		return exitUsage
	}
	defer env.close()
	var baseline *reports.Baseline
	if *baselinePath != "" {
		b, err := reports.ReadBaseline(*baselinePath)
		if err != nil {
			fmt.Fprintf(stderr, "conform run: %v\n", err)
			return exitUsage
		}
		baseline = b
	}
	cat, err := catalog.Load()
	if err != nil {
		fmt.Fprintf(stderr, "conform: %v\n", err)
		return 1
	}
	selected, err := runner.Select(cat.Cases, profiles, globs)
	if err != nil {
		fmt.Fprintf(stderr, "conform run: %v\n", err)
		return exitUsage
	}
	if len(selected) == 0 {
		fmt.Fprintln(stderr, "conform run: no case matches the selection (conform list shows the catalogue)")
		return exitUsage
	}

	var client sut.Client
	if observed {
		client = observe.New(observedCarrier(*peer, *nodeCmd), profiles, env.NodeCommand)
		*spec = observedCarrier(*peer, *nodeCmd)
	} else {
		client, err = dial.Open(ctx, *spec, dial.Options{Self: self(), HelloTimeout: *timeout})
	}
	var usageErr *dial.UsageError
	if errors.As(err, &usageErr) {
		fmt.Fprintf(stderr, "conform run: %v\n", err)
		return exitUsage
	}
	cfg := runner.Config{
		Spec: *spec, Client: client, Cases: selected, Profiles: profiles, CaseGlobs: globs,
		Seed: *seed, Strict: *strict, Timeout: *timeout, MaxTimeouts: *maxTimeouts,
		Corpus: cat.Corpus, Version: impl.Version(), Env: env.Env,
	}
	if observed {
		cfg.SUTFlags = observedFlags(*peer, *nodeCmd, profiles)
	}
	if err != nil {
		// The SUT never said Hello: every selected case is recorded as an
		// error so the record shows what was attempted.
		fmt.Fprintf(stderr, "conform run: %v\n", err)
		var se *sut.Error
		if errors.As(err, &se) && se.Stderr != "" {
			fmt.Fprintf(stderr, "the SUT's standard error ended with:\n%s\n", se.Stderr)
		}
		cfg.Client = nil
	} else {
		defer client.Close()
		if len(env.NodeCommand) == 0 {
			env.NodeCommand = client.Hello().GetNodeCommand()
		}
	}
	if isTerminal(stderr) {
		cfg.Progress = progressLine(stderr, len(selected))
	}
	rec := runner.Run(ctx, cfg)
	if cfg.Progress != nil {
		fmt.Fprint(stderr, "\r\033[K")
	}
	if ctx.Err() != nil {
		rec.Interrupted = true
		rec.ExitCode = runner.ExitCode(rec)
	}
	if baseline != nil {
		res := baseline.Apply(rec, time.Now())
		rec.Baseline = &res
		rec.ExitCode = res.ExitCode(*strictBaseline)
	}
	if err := writeRecord(rec, *jsonOut, *junitOut, *mdOut, *htmlOut); err != nil {
		fmt.Fprintf(stderr, "conform run: %v\n", err)
		return 1
	}
	reports.WriteText(stdout, rec, *verbose)
	if rec.Baseline != nil {
		reports.WriteBaselineText(stdout, *rec.Baseline)
	}
	return rec.ExitCode
}

// runEnvironment is a run's cases.Env and what must be released after it.
type runEnvironment struct {
	*cases.Env
	close func()
}

// runEnv builds the environment live cases run in from conform run's flags.
// The embedded broker is started only when a case first asks for it.
func runEnv(natsURL, peer, nodeCmd string) (runEnvironment, error) {
	env := runEnvironment{Env: &cases.Env{Self: self()}, close: func() {}}
	broker, closeBroker, err := brokerFlag(natsURL)
	if err != nil {
		return env, err
	}
	env.Broker, env.close = broker, closeBroker
	if peer != "" {
		u, err := url.Parse(peer)
		if err != nil || u.Scheme != "tcp" || u.Host == "" || u.Port() == "" {
			return env, fmt.Errorf("--peer %q: want tcp://host:port", peer)
		}
		env.Peer = peer
	}
	if nodeCmd != "" {
		argv, err := dial.SplitCommand(nodeCmd)
		if err != nil || len(argv) == 0 {
			return env, fmt.Errorf("--node-cmd %q: not a command line: %v", nodeCmd, err)
		}
		env.NodeCommand = argv
	}
	return env, nil
}

// brokerFlag returns the NATS server a --nats-url value names, or, when it
// is empty, one started embedded on loopback the first time it is asked
// for; close shuts the embedded one down.
func brokerFlag(natsURL string) (broker func(context.Context) (string, error), close func(), err error) {
	if natsURL == "" {
		lazy := natsserver.NewLazy(natsserver.Options{})
		return lazy.URL, lazy.Shutdown, nil
	}
	u, err := url.Parse(natsURL)
	if err != nil || u.Scheme != "nats" || u.Host == "" || u.Port() == "" {
		return nil, nil, fmt.Errorf("--nats-url %q: want nats://host:port", natsURL)
	}
	return func(context.Context) (string, error) { return "nats://" + u.Host, nil }, func() {}, nil
}

// observedFlags are the flags that name an observed device in a reproduce
// command.
func observedFlags(peer, nodeCmd string, profiles []string) []string {
	var f []string
	if peer != "" {
		f = append(f, "--peer", peer)
	}
	if nodeCmd != "" {
		f = append(f, "--node-cmd", nodeCmd)
	}
	return append(f, "--profile", strings.Join(profiles, ","))
}

// observedCarrier names an observed device for the record.
func observedCarrier(peer, nodeCmd string) string {
	if peer != "" {
		return "peer " + peer
	}
	return "node-cmd " + nodeCmd
}

// writeRecord writes each rendering of rec that was asked for. Every file is
// written atomically, so a CI step never reads half a report.
func writeRecord(rec *reports.Record, jsonPath, junitPath, mdPath, htmlPath string) error {
	if jsonPath != "" {
		if err := reports.WriteJSON(jsonPath, rec); err != nil {
			return err
		}
	}
	render := []struct {
		path  string
		write func(io.Writer, *reports.Record) error
	}{
		{junitPath, reports.WriteJUnit},
		{mdPath, func(w io.Writer, r *reports.Record) error {
			if err := reports.WriteMarkdown(w, r); err != nil {
				return err
			}
			if r.Baseline != nil {
				return reports.WriteBaselineMarkdown(w, *r.Baseline)
			}
			return nil
		}},
		{htmlPath, reports.WriteHTML},
	}
	for _, rd := range render {
		if rd.path == "" {
			continue
		}
		var b bytes.Buffer
		if err := rd.write(&b, rec); err != nil {
			return fmt.Errorf("rendering %s: %w", rd.path, err)
		}
		if err := reports.WriteFileAtomic(rd.path, b.Bytes()); err != nil {
			return err
		}
	}
	return nil
}

// self returns the command that runs this conform binary.
func self() []string {
	exe, err := os.Executable()
	if err != nil {
		return nil
	}
	return []string{exe}
}

// isTerminal reports whether w is a terminal, where a live progress line
// helps; in a CI log it would only add noise.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// progressLine returns a runner progress callback that rewrites one line:
// cases done of total, failures so far, and the case just finished.
func progressLine(w io.Writer, total int) func(reports.CaseResult) {
	done, bad := 0, 0
	return func(c reports.CaseResult) {
		done++
		if c.Outcome == reports.Fail || c.Outcome == reports.Error {
			bad++
		}
		fmt.Fprintf(w, "\r\033[K[%d/%d] %d failing  %s", done, total, bad, c.ID)
	}
}
