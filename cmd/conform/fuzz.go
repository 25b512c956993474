package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/conform-suite/conform/campaign"
	"github.com/conform-suite/conform/campaign/queue"
	"github.com/conform-suite/conform/sut"
	"github.com/conform-suite/conform/sut/dial"
)

// Defaults of conform fuzz.
const (
	defaultFuzzSeed = 1
	// defaultUnitSize is how many inputs of one target a queue work unit
	// holds: a few seconds of work on a fast SUT, so that a worker that
	// dies loses little.
	defaultUnitSize = 20_000
	// logEvery is how often a campaign not on a terminal logs its progress.
	logEvery = 10 * time.Second
)

// cmdFuzz runs a fuzzing campaign (conform fuzz, fuzz worker, fuzz promote).
func cmdFuzz(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		switch args[0] {
		case "worker":
			return cmdFuzzWorker(ctx, args[1:], stdout, stderr)
		case "promote":
			return cmdFuzzPromote(args[1:], stdout, stderr)
		}
	}
	fs := newFlags("fuzz", stderr)
	list := fs.Bool("list", false, "print the fuzz targets and exit")
	spec := fs.String("sut", "", "the SUT: builtin:reference, builtin:mutant/NAME, exec:CMD, tcp://HOST:PORT, lib:PATH, nats://HOST:PORT/BASE or a program path")
	var targets, seedDirs listFlag
	fs.Var(&targets, "target", "fuzz this target, a suite's targets, or all (repeatable, comma-separated)")
	fs.Var(&seedDirs, "seed-corpus", "import the raw files of this directory, in go-fuzz corpus layout, as seeds (repeatable)")
	duration := fs.Duration("duration", 0, "stop after this long")
	execs := fs.Uint64("execs", 0, "run this many inputs per target")
	seed := fs.Int64("seed", defaultFuzzSeed, "the campaign seed: with the seed pool it fixes every input")
	out := fs.String("out", "", "the campaign directory: findings/ and checkpoint.json")
	resume := fs.Bool("resume", false, "continue the campaign in --out from its checkpoint")
	timeout := fs.Duration("timeout", campaign.DefaultTimeout, "timeout for each op; a SUT that takes longer is killed and the batch is a timeout finding")
	queueURL := fs.String("queue", "", "coordinate a campaign spread over rigs: publish work units to nats://HOST:PORT/CAMPAIGN and collect the findings of the workers (conform fuzz worker)")
	unitSize := fs.Uint64("unit-size", defaultUnitSize, "with --queue, inputs per work unit")
	natsURL := fs.String("nats-url", "", "the NATS server the doppler live target publishes on (nats://host:port); without it conform starts one embedded on loopback when that target runs")
	ackWait := fs.Duration("ack-wait", 0, "with --queue, how long a unit may go without word from its worker before it is redelivered (0: the queue's default)")
	pos, err := parse(fs, args)
	if err != nil {
		return flagExit(err)
	}
	if len(pos) > 0 {
		fmt.Fprintf(stderr, "conform fuzz: unexpected argument %q\n", pos[0])
		return exitUsage
	}
	if *list {
		for _, t := range campaign.Targets() {
			fmt.Fprintf(stdout, "%s\t%s\n", t.Name, t.Doc)
		}
		return 0
	}
	if len(targets) == 0 {
		targets = listFlag{"all"}
	}
	selected, err := campaign.Select(targets)
	switch {
	case err != nil:
		fmt.Fprintf(stderr, "conform fuzz: %v\n", err)
		return exitUsage
	case *out == "":
		fmt.Fprintln(stderr, "conform fuzz: --out DIR is required: findings and the checkpoint are written there")
		return exitUsage
	case *queueURL != "":
		if *execs == 0 {
			fmt.Fprintln(stderr, "conform fuzz: --queue needs --execs: the campaign is cut into units of inputs")
			return exitUsage
		}
		return fuzzCoordinate(ctx, *queueURL, selected, *seed, *execs, *unitSize, *ackWait, *out, seedDirs, stderr)
	case *spec == "":
		fmt.Fprintln(stderr, "conform fuzz: --sut is required (or --list, or --queue to coordinate workers)")
		return exitUsage
	case *duration == 0 && *execs == 0:
		fmt.Fprintln(stderr, "conform fuzz: give --duration or --execs")
		return exitUsage
	}
	if cp, err := campaign.ReadCheckpoint(*out); err != nil || (cp != nil && !*resume) {
		if err == nil {
			err = fmt.Errorf("%s already holds a campaign: pass --resume to continue it, or choose another --out", *out)
		}
		fmt.Fprintf(stderr, "conform fuzz: %v\n", err)
		return exitUsage
	}
	client, code := openSUT(ctx, "fuzz", *spec, *timeout, stderr)
	if client == nil {
		return code
	}
	defer client.Close()
	pool, err := campaign.LoadSeeds(ctx, seedDirs, logTo(stderr))
	if err != nil {
		fmt.Fprintf(stderr, "conform fuzz: %v\n", err)
		return exitUsage
	}
	e := campaign.NewEngine(client, *spec, pool, *seed, *timeout, nil)
	closeBroker, code := setBroker(e, "fuzz", *natsURL, stderr)
	if code != 0 {
		return code
	}
	defer closeBroker()
	cfg := campaign.Config{
		Targets: selected, Execs: *execs, Duration: *duration, Out: *out, Resume: *resume,
		Logf: logTo(stderr),
	}
	term := isTerminal(stderr)
	var mu sync.Mutex
	lastLog, lastLine := time.Now(), time.Time{}
	cfg.Progress = func(s campaign.Status) {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case term && time.Since(lastLine) >= 200*time.Millisecond:
			lastLine = time.Now()
			fmt.Fprintf(stderr, "\r\033[K%s", statusLine(s))
		case !term && time.Since(lastLog) >= logEvery:
			lastLog = time.Now()
			fmt.Fprintf(stderr, "conform fuzz: %s\n", statusLine(s))
		}
	}
	if term {
		cfg.Logf = func(format string, args ...any) {
			fmt.Fprintf(stderr, "\r\033[K"+format+"\n", args...)
		}
	}
	s, err := e.Run(ctx, cfg)
	if term {
		fmt.Fprint(stderr, "\r\033[K")
	}
	state := "done"
	switch {
	case err != nil:
		state = fmt.Sprintf("stopped: %v", err)
	case ctx.Err() != nil:
		state = "interrupted (continue with --resume)"
	}
	fmt.Fprintf(stderr, "conform fuzz: %s: %s; findings in %s\n", state, statusLine(s), campaign.FindingsDir(*out))
	if s.Findings > 0 || err != nil {
		return 1
	}
	return 0
}

// statusLine is the progress line: inputs, inputs per second, findings,
// SUT restarts and what is left.
func statusLine(s campaign.Status) string {
	rate := 0.0
	if s.Elapsed > 0 {
		rate = float64(s.Execs) / s.Elapsed.Seconds()
	}
	line := fmt.Sprintf("%d inputs (%.0f/s), %d findings, %d SUT restarts", s.Execs, rate, s.Findings, s.Restarts)
	switch {
	case s.Left > 0:
		line += fmt.Sprintf(", %s left", s.Left.Round(time.Second))
	case s.InputsLeft > 0:
		line += fmt.Sprintf(", %d inputs left", s.InputsLeft)
	}
	return line
}

func logTo(w io.Writer) func(string, ...any) {
	return func(format string, args ...any) { fmt.Fprintf(w, "conform fuzz: "+format+"\n", args...) }
}

// openSUT opens the SUT, reporting a bad spec as usage (2) and a SUT that
// never said Hello as 3.
func openSUT(ctx context.Context, cmd, spec string, timeout time.Duration, stderr io.Writer) (sut.Client, int) {
	client, err := dial.Open(ctx, spec, dial.Options{Self: self(), HelloTimeout: timeout})
	var usageErr *dial.UsageError
	switch {
	case errors.As(err, &usageErr):
		fmt.Fprintf(stderr, "conform %s: %v\n", cmd, err)
		return nil, exitUsage
	case err != nil:
		fmt.Fprintf(stderr, "conform %s: %v\n", cmd, err)
		var se *sut.Error
		if errors.As(err, &se) && se.Stderr != "" {
			fmt.Fprintf(stderr, "the SUT's standard error ended with:\n%s\n", se.Stderr)
		}
		return nil, 3
	}
	return client, 0
}

// fuzzCoordinate publishes a campaign's units to the queue and writes the
// findings workers report, until every unit is done.
func fuzzCoordinate(ctx context.Context, queueURL string, targets []*campaign.Target, seed int64, execs, unitSize uint64, ackWait time.Duration, out string, seedDirs []string, stderr io.Writer) int {
	ep, err := queue.ParseEndpoint(queueURL)
	if err != nil {
		fmt.Fprintf(stderr, "conform fuzz: --queue: %v\n", err)
		return exitUsage
	}
	if unitSize == 0 {
		unitSize = defaultUnitSize
	}
	pool, err := campaign.LoadSeeds(ctx, seedDirs, logTo(stderr))
	if err != nil {
		fmt.Fprintf(stderr, "conform fuzz: %v\n", err)
		return exitUsage
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		fmt.Fprintf(stderr, "conform fuzz: %v\n", err)
		return 1
	}
	units := campaign.Units(targets, pool, seed, execs, unitSize)
	c, err := queue.NewCoordinator(ctx, ep, queue.Options{AckWait: ackWait, Logf: logTo(stderr)})
	if err != nil {
		fmt.Fprintf(stderr, "conform fuzz: %v\n", err)
		return 1
	}
	defer c.Close()
	known, err := campaign.KnownSignatures(out)
	if err != nil {
		fmt.Fprintf(stderr, "conform fuzz: %v\n", err)
		return 1
	}
	findings := len(known)
	onFinding := func(f queue.Finding) error {
		var fd campaign.Finding
		if err := json.Unmarshal(f.Body, &fd); err != nil || fd.Signature != f.Signature {
			fmt.Fprintf(stderr, "conform fuzz: a worker reported a finding that is not one (%s); dropped\n", f.Signature)
			return nil
		}
		path, err := campaign.WriteFinding(out, &fd)
		if err != nil {
			return err
		}
		findings++
		fmt.Fprintf(stderr, "conform fuzz: finding %s (%s) written to %s\n", fd.Signature, fd.Kind, path)
		return nil
	}
	lastLog := time.Time{}
	progress := func(s queue.Status) {
		if time.Since(lastLog) >= logEvery || s.Done+s.Failed == s.Units {
			lastLog = time.Now()
			fmt.Fprintf(stderr, "conform fuzz: %d of %d units done, %d failed, %d findings\n", s.Done, s.Units, s.Failed, findings)
		}
	}
	fmt.Fprintf(stderr, "conform fuzz: coordinating %d units on %s\n", len(units), ep)
	err = c.Run(ctx, queueUnits(units), onFinding, progress)
	switch {
	case ctx.Err() != nil:
		fmt.Fprintf(stderr, "conform fuzz: interrupted; run the same command again to continue (units already done are not rerun)\n")
	case err != nil:
		fmt.Fprintf(stderr, "conform fuzz: %v\n", err)
		return 1
	default:
		fmt.Fprintf(stderr, "conform fuzz: done: %d findings in %s\n", findings, campaign.FindingsDir(out))
	}
	if findings > 0 {
		return 1
	}
	return 0
}

func queueUnits(us []campaign.Unit) []queue.Unit {
	out := make([]queue.Unit, len(us))
	for i, u := range us {
		out[i] = queue.Unit{ID: u.ID, Target: u.Target, Seed: u.Seed, Start: u.Start, End: u.End, Corpus: u.Corpus}
	}
	return out
}

// cmdFuzzWorker pulls work units from a campaign's queue and runs each
// against the local SUT, until interrupted.
func cmdFuzzWorker(ctx context.Context, args []string, _, stderr io.Writer) int {
	fs := newFlags("fuzz worker", stderr)
	queueURL := fs.String("queue", "", "the campaign's queue, nats://HOST:PORT/CAMPAIGN")
	spec := fs.String("sut", "", "the local SUT")
	var seedDirs listFlag
	fs.Var(&seedDirs, "seed-corpus", "the same --seed-corpus directories the coordinator was given (repeatable)")
	timeout := fs.Duration("timeout", campaign.DefaultTimeout, "timeout for each op")
	name := fs.String("name", "", "this worker's name in the campaign (default host/pid)")
	natsURL := fs.String("nats-url", "", "the NATS server the doppler live target publishes on (nats://host:port); without it conform starts one embedded on loopback when that target runs")
	pos, err := parse(fs, args)
	if err != nil {
		return flagExit(err)
	}
	if len(pos) > 0 {
		fmt.Fprintf(stderr, "conform fuzz worker: unexpected argument %q\n", pos[0])
		return exitUsage
	}
	if *queueURL == "" || *spec == "" {
		fmt.Fprintln(stderr, "conform fuzz worker: --queue and --sut are required")
		return exitUsage
	}
	ep, err := queue.ParseEndpoint(*queueURL)
	if err != nil {
		fmt.Fprintf(stderr, "conform fuzz worker: --queue: %v\n", err)
		return exitUsage
	}
	pool, err := campaign.LoadSeeds(ctx, seedDirs, logTo(stderr))
	if err != nil {
		fmt.Fprintf(stderr, "conform fuzz worker: %v\n", err)
		return exitUsage
	}
	client, code := openSUT(ctx, "fuzz worker", *spec, *timeout, stderr)
	if client == nil {
		return code
	}
	defer client.Close()
	e := campaign.NewEngine(client, *spec, pool, 0, *timeout, nil)
	closeBroker, code := setBroker(e, "fuzz worker", *natsURL, stderr)
	if code != 0 {
		return code
	}
	defer closeBroker()
	run := func(ctx context.Context, u queue.Unit, report func(queue.Finding) error) error {
		fmt.Fprintf(stderr, "conform fuzz worker: unit %s: %s [%d, %d)\n", u.ID, u.Target, u.Start, u.End)
		return campaign.RunUnit(ctx, e, campaign.Unit{ID: u.ID, Target: u.Target, Seed: u.Seed, Start: u.Start, End: u.End, Corpus: u.Corpus},
			func(f *campaign.Finding) error {
				b, err := json.MarshalIndent(f, "", "  ")
				if err != nil {
					return err
				}
				fmt.Fprintf(stderr, "conform fuzz worker: finding %s (%s)\n", f.Signature, f.Kind)
				return report(queue.Finding{Signature: f.Signature, Body: b})
			}, logTo(stderr))
	}
	err = queue.RunWorker(ctx, ep, queue.Options{Worker: *name, Logf: logTo(stderr)}, run)
	if err != nil && ctx.Err() == nil {
		fmt.Fprintf(stderr, "conform fuzz worker: %v\n", err)
		return 1
	}
	return 0
}

// setBroker gives e the NATS server --nats-url names, or an embedded one
// started when a target first needs it, and returns the function that shuts
// an embedded one down. It returns a non-zero exit code when the flag is
// malformed.
func setBroker(e *campaign.Engine, cmd, natsURL string, stderr io.Writer) (func(), int) {
	broker, closeBroker, err := brokerFlag(natsURL)
	if err != nil {
		fmt.Fprintf(stderr, "conform %s: %v\n", cmd, err)
		return nil, exitUsage
	}
	e.Broker = broker
	return closeBroker, 0
}

// cmdReplay reruns one finding.
func cmdReplay(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("replay", stderr)
	spec := fs.String("sut", "", "the SUT to replay the finding against")
	timeout := fs.Duration("timeout", campaign.DefaultTimeout, "timeout for each op")
	natsURL := fs.String("nats-url", "", "the NATS server the doppler live target publishes on (nats://host:port); without it conform starts one embedded on loopback when that target runs")
	pos, err := parse(fs, args)
	if err != nil {
		return flagExit(err)
	}
	if len(pos) != 1 || *spec == "" {
		fmt.Fprintln(stderr, "usage: conform replay FINDING.json --sut SPEC")
		return exitUsage
	}
	f, err := campaign.ReadFinding(pos[0])
	if err != nil {
		fmt.Fprintf(stderr, "conform replay: %v\n", err)
		return exitUsage
	}
	if _, _, err := f.ParseInputs(); err != nil {
		fmt.Fprintf(stderr, "conform replay: %v\n", err)
		return exitUsage
	}
	pool := new(campaign.Seeds)
	client, code := openSUT(ctx, "replay", *spec, *timeout, stderr)
	if client == nil {
		return code
	}
	defer client.Close()
	e := campaign.NewEngine(client, *spec, pool, f.Seed, *timeout, nil)
	closeBroker, code := setBroker(e, "replay", *natsURL, stderr)
	if code != 0 {
		return code
	}
	defer closeBroker()
	ok, others, err := e.Replay(ctx, f)
	if err != nil {
		fmt.Fprintf(stderr, "conform replay: %v\n", err)
		return exitUsage
	}
	for _, o := range others {
		fmt.Fprintf(stdout, "%s: another problem on these inputs: %s %s\n", filepath.Base(pos[0]), o.Kind, o.Detail)
	}
	if ok {
		fmt.Fprintf(stdout, "%s: reproduces against %s (%s %s)\n", f.Signature, *spec, f.Kind, f.Detail)
		return 1
	}
	fmt.Fprintf(stdout, "%s: does not reproduce against %s\n", f.Signature, *spec)
	return 0
}

// cmdFuzzPromote turns a finding into a corpus vector of its suite.
func cmdFuzzPromote(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("fuzz promote", stderr)
	specRef := fs.String("spec", "", `the spec section the vector enforces, for example "ranvier-wire §1.3" (required)`)
	id := fs.String("id", "", "the vector's ID, SUITE/v1/NAME (default: from the signature)")
	title := fs.String("title", "", "the vector's title (default: from the finding)")
	outPath := fs.String("o", "", "write the vector to this file instead of standard output")
	pos, err := parse(fs, args)
	if err != nil {
		return flagExit(err)
	}
	if len(pos) != 1 || *specRef == "" {
		fmt.Fprintln(stderr, `usage: conform fuzz promote FINDING.json --spec "ranvier-wire §1.3" [--id SUITE/v1/NAME] [-o FILE]`)
		return exitUsage
	}
	f, err := campaign.ReadFinding(pos[0])
	if err != nil {
		fmt.Fprintf(stderr, "conform fuzz promote: %v\n", err)
		return exitUsage
	}
	b, err := campaign.Promote(f, *specRef, *id, *title)
	if err != nil {
		fmt.Fprintf(stderr, "conform fuzz promote: %v\n", err)
		return 1
	}
	if *outPath == "" {
		stdout.Write(b)
		return 0
	}
	if err := campaign.WriteFileAtomic(*outPath, b); err != nil {
		fmt.Fprintf(stderr, "conform fuzz promote: %v\n", err)
		return 1
	}
	return 0
}
