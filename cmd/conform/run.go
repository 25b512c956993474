package main

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/conform-suite/conform/cases"
	"github.com/conform-suite/conform/cases/live"
	"github.com/conform-suite/conform/natsserver"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/reports"
	"github.com/conform-suite/conform/runner"
	"github.com/conform-suite/conform/suite"
	"github.com/conform-suite/conform/sut"
	"github.com/conform-suite/conform/sut/dial"
	"github.com/conform-suite/conform/sut/impl"
	"github.com/conform-suite/conform/sut/natsc"
	"github.com/conform-suite/conform/sut/observe"
	"github.com/conform-suite/conform/sut/tcp"
)

// DefaultSeed seeds every random choice a case makes unless --seed is given.
const DefaultSeed = 1

// sutUsage lists every carrier a --sut value may name.
const sutUsage = `the SUT (system under test), one of:
  ./PROGRAM, /PATH/PROGRAM   a program speaking conform.v1 on stdin/stdout
  exec:PROGRAM ARGS…         the same, with arguments
  tcp://HOST:PORT            a SUT serving conform.v1 on TCP (a device on a rig)
  lib:PATH.so                a C ABI library (include/conform.h), loaded in a child host process
  nats://HOST:PORT/BASE      a SUT answering conform.v1 requests on BASE.conform
  builtin:reference          conform's reference, in process
  builtin:mutant/NAME        the reference with one named bug (conform mutants lists them)
  builtin:fault/NAME         a misbehaving SUT, as a child process (conform faults lists them)`

func cmdRun(ctx context.Context, reg *suite.Registry, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	started := time.Now()
	fs := newFlags("run", stderr)
	spec := fs.String("sut", "", sutUsage)
	var profiles, globs listFlag
	fs.Var(&profiles, "profile", "run only these profiles (comma-separated, repeatable); a name that is both a profile and a suite (doppler) is the profile; a suite that is no profile (live) selects the whole suite; --case 'SUITE/**' selects any whole suite")
	fs.Var(&globs, "case", "run only cases whose ID matches this glob (repeatable; * stops at /, a trailing ** matches all below)")
	seed := fs.Int64("seed", DefaultSeed, "seed for every random choice a case makes")
	strict := fs.Bool("strict", false, "treat a broken SHOULD (warn) as a failure")
	timeout := fs.Duration("timeout", runner.DefaultTimeout, "timeout for each op, and for the SUT's Hello (above zero)")
	maxTimeouts := fs.Int("max-timeouts", runner.DefaultMaxTimeouts, "consecutive unanswered ops (timeouts, failed restarts) after which the SUT is presumed lost (at least 1)")
	jsonOut := fs.String("json", "", "write the record to this file (atomically)")
	junitOut := fs.String("junit", "", "write the record as JUnit XML to this file")
	mdOut := fs.String("markdown", "", "write a Markdown summary to this file (for a pull request or GITHUB_STEP_SUMMARY)")
	htmlOut := fs.String("html", "", "write the record as one self-contained HTML page to this file")
	baselinePath := fs.String("baseline", "", "a file of known failures (and of unimplemented cases accepted): exit 0 when only those fail")
	strictBaseline := fs.Bool("strict-baseline", false, "with --baseline, also fail on unexpected passes and stale or expired entries")
	allowUnimplemented := fs.Bool("allow-unimplemented", false, "do not fail a declared profile whose MUST cases the SUT answers Unimplemented (a binding still growing); the verdict still says incomplete")
	verbose := fs.Bool("v", false, "print every case, passes and informational cases included")
	natsURL := fs.String("nats-url", "", "the NATS server live doppler cases use (nats://host:port); without it conform starts one embedded on loopback when a selected case needs it")
	peer := fs.String("peer", "", "observe a device with no shim: a Ranvier publisher at tcp://host:port[/NAME] that conform dials as subscriber to NAME (default conform), with --profile ranvier-publisher")
	parallel := fs.Int("parallel", 0, fmt.Sprintf("run up to N live cases at once, each over a session of its own (0: %d for a SUT conform starts, 1 for one it reaches over tcp:// or nats:// or observes with --peer); 1 runs one case at a time over one session", DefaultParallel))
	nodeCmd := fs.String("node-cmd", "", "the command that starts the SUT as a Ranvier control-plane node, launched with RANVIER_* set (overrides the Hello's node_command, which conform honours only for a SUT it started itself: never over tcp:// or nats://)")
	fs.Usage = func() { runUsage(fs, reg) }
	pos, err := parse(fs, args)
	if err != nil {
		return flagExit(err)
	}
	if len(pos) > 0 {
		fmt.Fprintf(stderr, "conform run: unexpected argument %q\n", pos[0])
		return exitUsage
	}
	if *timeout <= 0 {
		fmt.Fprintf(stderr, "conform run: --timeout %v: want a duration above zero, such as 10s or 500ms\n", *timeout)
		return exitUsage
	}
	if *parallel < 0 {
		fmt.Fprintf(stderr, "conform run: --parallel %d: want 1 or more (0 picks the default)\n", *parallel)
		return exitUsage
	}
	if *parallel > 1 && strings.HasPrefix(*spec, natsc.Scheme) {
		fmt.Fprintf(stderr, "conform run: --parallel %d: a SUT on a NATS subject is one session, whose requests it answers in turn; its cases run one at a time (--parallel 1)\n", *parallel)
		return exitUsage
	}
	if *maxTimeouts < 1 {
		fmt.Fprintf(stderr, "conform run: --max-timeouts %d: want at least 1\n", *maxTimeouts)
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
	if *strictBaseline && *baselinePath == "" {
		fmt.Fprintln(stderr, "conform run: --strict-baseline needs --baseline FILE")
		return exitUsage
	}
	outputs := []struct{ flag, path string }{{"--json", *jsonOut}, {"--junit", *junitOut}, {"--markdown", *mdOut}, {"--html", *htmlOut}}
	for _, o := range outputs {
		if o.path == "" {
			continue
		}
		// Found now, not after a run of minutes.
		if err := reports.CheckOutput(o.path); err != nil {
			fmt.Fprintf(stderr, "conform run: %s %s: cannot write there: %v\n", o.flag, o.path, err)
			return exitUsage
		}
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
			fmt.Fprintf(stderr, "conform run: --baseline: %v\n", err)
			return exitUsage
		}
		baseline = b
	}
	cat, err := reg.Catalogue()
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
		fmt.Fprintf(stderr, "conform run: no case matches --profile %s --case %s (conform list shows the catalogue)\n", orAll(profiles), orAll(globs))
		return exitUsage
	}
	var (
		client sut.Client
		open   func(context.Context) (sut.Client, error)
	)
	if observed {
		carrier := observedCarrier(*peer, *nodeCmd)
		client = observe.New(carrier, profiles, env.NodeCommand)
		*spec = carrier
		// An observed device has no conform.v1 session to share: each case
		// dials it or launches it on its own.
		open = func(context.Context) (sut.Client, error) { return observe.New(carrier, profiles, env.NodeCommand), nil }
	} else {
		opts := dial.Options{Suites: reg, Self: self(), HelloTimeout: *timeout}
		client, err = dial.Open(ctx, *spec, opts)
		open = func(ctx context.Context) (sut.Client, error) { return dial.Open(ctx, *spec, opts) }
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
		Started: started, AllowUnimplemented: *allowUnimplemented, Catalogue: cat.Cases,
		Parallel: parallelism(*parallel, *spec, *peer), Open: open,
		Notice: func(msg string) { fmt.Fprintf(stderr, "conform run: %s\n", reports.Printable(msg)) },
	}
	if observed {
		cfg.SUTFlags = observedFlags(*peer, *nodeCmd, profiles)
	}
	if err != nil {
		// The SUT never said Hello: every selected case is recorded as an
		// error, and the text report says why, with the SUT's standard
		// error; standard error gets the one line a log search finds.
		fmt.Fprintf(stderr, "conform run: %s\n", reports.Printable(reports.Clip(err.Error(), 1<<10)))
		cfg.Client, cfg.StartErr = nil, err
	} else {
		defer client.Close()
		if !observed {
			nodeCommand(&cfg, env.Env, client.Hello(), *spec)
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
		ids := make([]string, len(cat.Cases))
		for i, c := range cat.Cases {
			ids[i] = c.ID
		}
		res := baseline.ApplyWithin(rec, time.Now(), ids)
		rec.Baseline = &res
		rec.Summarize() // a profile whose gaps the baseline accepts says so
		rec.ExitCode = res.ExitCode(*strictBaseline)
	}
	code := report(rec, outputFiles{*jsonOut, *junitOut, *mdOut, *htmlOut}, *verbose, stdout, stderr)
	writeTiming(stdout, rec, cfg.Parallel)
	return code
}

// DefaultParallel is how many live cases conform run runs at once against
// a SUT it starts itself, each over a session of its own. Live cases wait
// on real time (periods, quiet intervals, redials) far more than they
// compute, so the bound is above the core count on purpose; it is kept low
// enough that a SUT started this many times, and the nodes its cases launch,
// fit on a small CI machine.
const DefaultParallel = 8

// parallelism returns the --parallel value a run uses. A SUT conform
// starts (a program, exec:, lib:, builtin:) may be started again for each
// session; one conform reaches (tcp://, nats://) or observes (--peer) is a
// device that may serve one session at a time, so it gets more only when
// --parallel asks.
func parallelism(flag int, spec, peer string) int {
	switch {
	case flag > 0:
		return flag
	case remoteSUT(spec) || peer != "":
		return 1
	}
	return DefaultParallel
}

// writeTiming writes the line that shows how much the cases overlapped: the
// run's wall time against the sum of its cases' times, that sum by suite,
// the bound on live cases at once, and the longest case.
func writeTiming(w io.Writer, rec *reports.Record, parallel int) {
	if len(rec.Cases) == 0 {
		return
	}
	var sum float64
	bySuite := map[string]float64{}
	longest := rec.Cases[0]
	for _, c := range rec.Cases {
		sum += c.DurationSec
		bySuite[reports.SuiteOf(c.ID)] += c.DurationSec
		if c.DurationSec > longest.DurationSec {
			longest = c
		}
	}
	suites := slices.SortedFunc(maps.Keys(bySuite), func(a, b string) int {
		return cmp.Or(cmp.Compare(bySuite[b], bySuite[a]), cmp.Compare(a, b))
	})
	parts := make([]string, len(suites))
	for i, s := range suites {
		parts[i] = fmt.Sprintf("%s %.2fs", s, bySuite[s])
	}
	fmt.Fprintf(w, "time: %.2fs wall for %.2fs of cases (%s), up to %d live cases at once; longest %s %.2fs\n",
		rec.DurationSec, sum, strings.Join(parts, ", "), parallel, longest.ID, longest.DurationSec)
}

// outputFiles are the files --json, --junit, --markdown and --html name.
type outputFiles struct{ json, junit, markdown, html string }

// report writes the run's files and its text summary, and returns the exit
// code: the record's, or at least 1 when a file could not be written. The
// summary is printed whatever happened to the files, so that a run of
// minutes is never lost to a full disk.
func report(rec *reports.Record, out outputFiles, verbose bool, stdout, stderr io.Writer) int {
	werr := writeRecord(rec, out.json, out.junit, out.markdown, out.html)
	reports.WriteText(stdout, rec, verbose)
	if rec.Baseline != nil {
		reports.WriteBaselineText(stdout, *rec.Baseline)
	}
	if werr != nil {
		fmt.Fprintf(stderr, "conform run: %v\n", werr)
		return max(rec.ExitCode, 1)
	}
	return rec.ExitCode
}

// runUsage prints conform run -h: what a --sut value may be, the profiles
// and suites --profile takes, and every flag.
func runUsage(fs *flag.FlagSet, reg *suite.Registry) {
	w := fs.Output()
	fmt.Fprintln(w, "usage: conform run --sut SPEC [flags]")
	fmt.Fprintln(w, "       conform run --peer tcp://HOST:PORT[/NAME] --profile ranvier-publisher")
	fmt.Fprintln(w, "       conform run --node-cmd \"CMD ARGS\" --profile ranvier-node")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "--sut is "+sutUsage)
	var profiles, suites, both []string
	for _, p := range reg.Profiles() {
		profiles = append(profiles, p.Name)
	}
	slices.Sort(profiles)
	for _, s := range reg.Suites() {
		switch {
		case !slices.Contains(profiles, s.Name):
			suites = append(suites, s.Name)
		case len(s.Profiles) > 1:
			// Only then does the profile select less than the suite.
			both = append(both, s.Name)
		}
	}
	fmt.Fprintf(w, "\n--profile takes a profile: %s;\nor a suite that is no profile, selecting all its profiles: %s.\n", strings.Join(profiles, ", "), strings.Join(suites, ", "))
	for _, name := range both {
		fmt.Fprintf(w, "%s is both a profile and a suite: --profile %s is the profile; --case '%s/**' is the whole suite.\n", name, name, name)
	}
	fmt.Fprintln(w, "\nExit codes: 0 conformant (or only known failures), 1 failures, errors, or a declared profile incomplete,")
	fmt.Fprintln(w, "2 usage, 3 the SUT could not be started, never said Hello, or declared no profile.")
	fmt.Fprintln(w, "\nflags:")
	fs.PrintDefaults()
}

// orAll names a list flag's values, or "(all)".
func orAll(l listFlag) string {
	if len(l) == 0 {
		return "(all)"
	}
	return strings.Join(l, ",")
}

// nodeCommand decides how the node cases launch the SUT. A SUT conform
// started itself as a local process (a program, exec:, lib:, builtin:) may
// name its node command in its Hello; a remote one (tcp://, nats://) never
// makes conform run a command — whoever answers on a shared broker would
// otherwise get a shell as conform's user — so only --node-cmd launches it,
// and without it the node cases are skipped with that reason.
func nodeCommand(cfg *runner.Config, env *cases.Env, hello *conformpb.Hello, spec string) {
	if !remoteSUT(spec) {
		if len(env.NodeCommand) == 0 {
			env.NodeCommand = hello.GetNodeCommand()
		}
		return
	}
	cfg.Remote = true
	if len(env.NodeCommand) == 0 {
		cfg.SkipProfiles = map[string]string{
			live.ProfileNode: fmt.Sprintf("no node command: a SUT reached over %s is not a process conform started, so conform never runs a command its Hello names; give --node-cmd to launch it as a node", carrierScheme(spec)),
		}
	}
}

// remoteSUT reports whether spec names a SUT conform reaches but did not
// start.
func remoteSUT(spec string) bool {
	return strings.HasPrefix(spec, tcp.Scheme) || strings.HasPrefix(spec, natsc.Scheme)
}

// carrierScheme returns the scheme of a --sut value, such as "tcp://".
func carrierScheme(spec string) string {
	if i := strings.Index(spec, "://"); i >= 0 {
		return spec[:i+3]
	}
	return spec
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
	env.CredentialBroker = natsserver.CredentialBroker
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
// written atomically, so a CI step never reads half a report; one that
// fails does not keep the others from being written.
func writeRecord(rec *reports.Record, jsonPath, junitPath, mdPath, htmlPath string) error {
	var errs []error
	if jsonPath != "" {
		errs = append(errs, reports.WriteJSON(jsonPath, rec))
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
			errs = append(errs, fmt.Errorf("rendering %s: %w", rd.path, err))
			continue
		}
		errs = append(errs, reports.WriteFileAtomic(rd.path, b.Bytes()))
	}
	return errors.Join(errs...)
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
