package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/conform-suite/conform/campaign"
	"github.com/conform-suite/conform/campaign/queue"
	"github.com/conform-suite/conform/suite"
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
	// lineEvery is how often a campaign on a terminal redraws its progress
	// line.
	lineEvery = 200 * time.Millisecond
)

// Exit codes of conform fuzz, fuzz worker and replay, besides 0 and
// exitUsage.
const (
	// exitFindings: the campaign's findings directory holds a finding (for
	// replay: the finding reproduces).
	exitFindings = 1
	// exitCouldNotRun: the campaign could not run, or stopped before its
	// end, without a finding.
	exitCouldNotRun = 3
)

// fuzzExitCodes is the exit status section of conform fuzz -h.
const fuzzExitCodes = `
Exit status (conform fuzz, its --queue coordinator, conform fuzz worker):
  0  the campaign ran and DIR/findings holds no finding (an interrupted
     campaign too: what ran found nothing)
  1  DIR/findings holds a finding, new or from an earlier run of the campaign
  2  a command line conform cannot use, including an --out or --queue that
     holds another campaign (see --resume, --replace), and a worker whose
     SUT, conform or seed pool is not the campaign's
  3  the campaign could not run, or stopped before its end, with no finding:
     the SUT did not start or say Hello, the broker is unreachable or has no
     JetStream, the SUT implements none of the targets or answered no
     request, --duration ended before the first input, the SUT was lost
     (16 failed requests in a row), units failed
conform replay exits 1 when the finding reproduces, 0 when it does not, 2
for a file or command line it cannot use, 3 when the SUT did not start or
no run judged every input (the finding could not be judged either way).
`

// cmdFuzz runs a fuzzing campaign (conform fuzz, fuzz worker, fuzz
// promote, fuzz campaigns).
func cmdFuzz(ctx context.Context, reg *suite.Registry, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		switch args[0] {
		case "worker":
			return cmdFuzzWorker(ctx, reg, args[1:], stdout, stderr)
		case "promote":
			return cmdFuzzPromote(reg, args[1:], stdout, stderr)
		case "campaigns":
			return cmdFuzzCampaigns(ctx, args[1:], stdout, stderr)
		}
	}
	fs := newFlags("fuzz", stderr)
	list := fs.Bool("list", false, "print the fuzz targets and exit")
	spec := fs.String("sut", "", "the SUT: builtin:reference, builtin:mutant/NAME, exec:CMD, tcp://HOST:PORT, lib:PATH, nats://HOST:PORT/BASE or a program path; with --queue optional: the SUT whose Hello the workers' must match")
	var targets, seedDirs listFlag
	fs.Var(&targets, "target", "fuzz this target, a suite's targets, or all (repeatable, comma-separated)")
	fs.Var(&seedDirs, "seed-corpus", "import the raw files of this directory, in go-fuzz corpus layout, as seeds (repeatable)")
	duration := fs.Duration("duration", 0, "stop after this long: the request in flight is cancelled then")
	execs := fs.Uint64("execs", 0, "run this many inputs per target")
	seed := fs.Int64("seed", defaultFuzzSeed, "the campaign seed: with the seed pool it fixes every input")
	out := fs.String("out", "", "the campaign directory: findings/ and checkpoint.json")
	resume := fs.Bool("resume", false, "continue the campaign in --out from its checkpoint; only the same campaign (SUT, seed, targets, seed pool, conform) resumes")
	timeout := fs.Duration("timeout", campaign.DefaultTimeout, "timeout for each op; a SUT that takes longer is killed and the batch is a timeout finding")
	queueURL := fs.String("queue", "", "coordinate a campaign spread over rigs: publish work units to nats://HOST:PORT/CAMPAIGN and collect the findings of the workers (conform fuzz worker)")
	unitSize := fs.Uint64("unit-size", defaultUnitSize, "with --queue, inputs per work unit")
	replace := fs.Bool("replace", false, "with --queue, when the broker holds another campaign of that name, delete it (its units, outcomes and findings there; files already in --out stay) and start this one")
	natsURL := fs.String("nats-url", "", "the NATS server the doppler live target publishes on (nats://host:port); without it conform starts one embedded on loopback when that target runs")
	ackWait := fs.Duration("ack-wait", 0, "with --queue, how long a unit may go without word from its worker before it is redelivered (0: the queue's default)")
	fs.Usage = func() {
		fmt.Fprint(stderr, `usage: conform fuzz --sut SPEC --out DIR (--duration D | --execs N) [flags]
       conform fuzz --queue nats://HOST:PORT/CAMPAIGN --execs N --out DIR [--sut SPEC] [flags]
       conform fuzz worker --queue nats://HOST:PORT/CAMPAIGN --sut SPEC [flags]
       conform fuzz campaigns --queue nats://HOST:PORT [--delete] [NAME...]
       conform fuzz promote FINDING.json --spec SECTION [flags]

`)
		fs.PrintDefaults()
		fmt.Fprint(stderr, fuzzExitCodes)
	}
	pos, err := parse(fs, args)
	if err != nil {
		return flagExit(err)
	}
	if len(pos) > 0 {
		fmt.Fprintf(stderr, "conform fuzz: unexpected argument %q\n", pos[0])
		return exitUsage
	}
	all := campaign.Targets(reg)
	if *list {
		for _, t := range all {
			fmt.Fprintf(stdout, "%s\t%s\n", t.Name, t.Doc)
		}
		return 0
	}
	if len(targets) == 0 {
		targets = listFlag{"all"}
	}
	selected, err := campaign.Select(all, targets)
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
		if *unitSize == 0 {
			*unitSize = defaultUnitSize
		}
		return fuzzCoordinate(ctx, reg, coordination{queueURL: *queueURL, spec: *spec, timeout: *timeout, targets: selected,
			seed: *seed, execs: *execs, unitSize: *unitSize, ackWait: *ackWait, out: *out, seedDirs: seedDirs, replace: *replace}, stderr)
	case *replace:
		fmt.Fprintln(stderr, "conform fuzz: --replace is for --queue campaigns; a local campaign starts afresh in another --out")
		return exitUsage
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
	client, code := openSUT(ctx, reg, "fuzz", *spec, *timeout, stderr)
	if client == nil {
		return code
	}
	defer client.Close()
	pool, err := loadSeeds(ctx, reg, selected, seedDirs, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "conform fuzz: %v\n", err)
		return exitUsage
	}
	e := campaign.NewEngine(client, reg, *spec, pool, *seed, *timeout, nil)
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
		case term && time.Since(lastLine) >= lineEvery:
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
	var mismatch *campaign.MismatchError
	if errors.As(err, &mismatch) {
		fmt.Fprintf(stderr, "conform fuzz: --resume: %v\n(start this campaign in another --out, or resume with the command that started that one)\n", err)
		return exitUsage
	}
	var unsupported []string
	for _, t := range selected {
		if e.Unsupported(t) != "" {
			unsupported = append(unsupported, t.Name)
		}
	}
	// A campaign in which the SUT answered nothing — it implements none of
	// the targets, hung past the campaign's end, or the campaign ended
	// before its first input — judged nothing, and must not pass for a
	// clean one. Only a resumed campaign that had no input left to run
	// sends nothing and is done.
	judged := e.Judged > 0 || (e.Execs == 0 && *duration == 0 && s.InputsLeft == 0)
	state := "done"
	switch {
	case err != nil:
		state = fmt.Sprintf("stopped: %v", err)
	case ctx.Err() != nil:
		state = "interrupted (continue with --resume)"
	case !judged && len(unsupported) == len(selected):
		state = "nothing judged: the SUT implements none of the targets"
	case !judged && e.Execs == 0:
		state = "nothing judged: the campaign ended before its first input"
	case !judged:
		state = "nothing judged: the SUT answered no request"
	}
	fmt.Fprintf(stderr, "conform fuzz: %s: %s; findings in %s\n", state, statusLine(s), campaign.FindingsDir(*out))
	if len(unsupported) > 0 && len(unsupported) < len(selected) {
		fmt.Fprintf(stderr, "conform fuzz: not run, the SUT does not implement them: %s\n", strings.Join(unsupported, ", "))
	}
	switch {
	case s.Findings > 0:
		return exitFindings
	case err != nil, !judged && ctx.Err() == nil:
		return exitCouldNotRun
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
	if s.Unconfirmed > 0 {
		line += fmt.Sprintf(", %d differences not seen again (not findings)", s.Unconfirmed)
	}
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

// openSUT opens the SUT, reporting a bad spec as usage and a SUT that never
// said Hello as exitCouldNotRun.
func openSUT(ctx context.Context, reg *suite.Registry, cmd, spec string, timeout time.Duration, stderr io.Writer) (sut.Client, int) {
	client, err := dial.Open(ctx, spec, dial.Options{Suites: reg, Self: self(), HelloTimeout: timeout})
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
		return nil, exitCouldNotRun
	}
	return client, 0
}

// queueExit maps an error from the queue to an exit code: a refused
// campaign is the command line's, an unreachable broker or anything else
// means the campaign could not run.
func queueExit(err error) int {
	var refused *queue.RefusedError
	if errors.As(err, &refused) {
		return exitUsage
	}
	return exitCouldNotRun
}

// coordination is what a coordinator was asked to run.
type coordination struct {
	queueURL, spec   string
	timeout, ackWait time.Duration
	targets          []*campaign.Target
	seed             int64
	execs, unitSize  uint64
	out              string
	seedDirs         []string
	replace          bool
}

// coordinatorAdmit is a coordinator's Admit: the campaign stored must be the
// one asked for, but for a SUT one side does not name: the campaign's stays
// when the coordinator names none, and the coordinator's is pinned when the
// campaign names none yet.
func coordinatorAdmit(mine campaign.Identity) func([]byte) ([]byte, error) {
	return func(raw []byte) ([]byte, error) {
		stored, err := decodeIdentity(raw)
		if err != nil {
			return nil, err
		}
		if d := mine.Differences(stored); len(d) > 0 {
			return nil, fmt.Errorf("it holds another campaign: %s", strings.Join(d, "; "))
		}
		if stored.SUT == nil && mine.SUT != nil {
			stored.SUT = mine.SUT
			return json.Marshal(stored)
		}
		return nil, nil
	}
}

// workerAdmit is a worker's Admit: its conform, seed pool and SUT must be
// the campaign's (the campaign's seed, targets and ranges come with its
// units); a campaign that names no SUT yet takes the worker's.
func workerAdmit(mine campaign.Identity) func([]byte) ([]byte, error) {
	return func(raw []byte) ([]byte, error) {
		stored, err := decodeIdentity(raw)
		if err != nil {
			return nil, err
		}
		probe := mine
		probe.Seed, probe.Targets, probe.Execs, probe.UnitSize = stored.Seed, stored.Targets, stored.Execs, stored.UnitSize
		if d := probe.Differences(stored); len(d) > 0 {
			for i := range d {
				d[i] = strings.Replace(d[i], " here, ", " on this worker, ", 1)
			}
			return nil, fmt.Errorf("this worker cannot run it: %s", strings.Join(d, "; "))
		}
		if stored.SUT == nil {
			stored.SUT = mine.SUT
			return json.Marshal(stored)
		}
		return nil, nil
	}
}

// decodeIdentity reads a campaign's identity record.
func decodeIdentity(raw []byte) (campaign.Identity, error) {
	var id campaign.Identity
	if err := json.Unmarshal(raw, &id); err != nil || id.Format == 0 {
		return id, fmt.Errorf("its identity record is not one this conform reads (%.80q)", raw)
	}
	return id, nil
}

// fuzzCoordinate publishes a campaign's units to the queue and writes the
// findings workers report, until every unit is done.
func fuzzCoordinate(ctx context.Context, reg *suite.Registry, c coordination, stderr io.Writer) int {
	ep, err := queue.ParseEndpoint(c.queueURL)
	if err != nil {
		fmt.Fprintf(stderr, "conform fuzz: --queue: %v\n", err)
		return exitUsage
	}
	pool, err := loadSeeds(ctx, reg, c.targets, c.seedDirs, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "conform fuzz: %v\n", err)
		return exitUsage
	}
	// The SUT the coordinator names is known by its Hello, which the
	// workers' must match. The coordinator asks for it and runs nothing.
	var sutID *campaign.SUTIdentity
	if c.spec != "" {
		client, code := openSUT(ctx, reg, "fuzz", c.spec, c.timeout, stderr)
		if client == nil {
			return code
		}
		sutID = campaign.NewEngine(client, reg, c.spec, pool, c.seed, c.timeout, nil).SUTOf()
		client.Close()
	}
	if err := os.MkdirAll(c.out, 0o755); err != nil {
		fmt.Fprintf(stderr, "conform fuzz: %v\n", err)
		return exitCouldNotRun
	}
	id := campaign.NewIdentity(pool, c.seed, c.targets, sutID)
	id.Execs, id.UnitSize = c.execs, c.unitSize
	mine, err := json.Marshal(id)
	if err != nil {
		fmt.Fprintf(stderr, "conform fuzz: %v\n", err)
		return exitCouldNotRun
	}
	units := campaign.Units(c.targets, pool, c.seed, c.execs, c.unitSize)
	opts := queue.Options{AckWait: c.ackWait, Logf: logTo(stderr), Identity: mine, Admit: coordinatorAdmit(id)}
	co, err := queue.NewCoordinator(ctx, ep, opts)
	var refused *queue.RefusedError
	if errors.As(err, &refused) && c.replace {
		fmt.Fprintf(stderr, "conform fuzz: --replace: deleting campaign %s: %v\n", ep, refused.Err)
		if err = queue.DeleteCampaign(ctx, ep); err == nil {
			co, err = queue.NewCoordinator(ctx, ep, opts)
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "conform fuzz: %v\n", err)
		if errors.As(err, &refused) {
			fmt.Fprintf(stderr, "conform fuzz: give this campaign another name, or pass --replace to delete %s and start it (conform fuzz campaigns --queue %s lists the campaigns there)\n", ep.Campaign, ep.URL)
		}
		return queueExit(err)
	}
	defer co.Close()
	if stored, err := decodeIdentity(co.Identity()); err == nil {
		fmt.Fprintf(stderr, "conform fuzz: campaign %s: %s\n", ep, describeIdentity(stored))
	}
	known, err := campaign.KnownSignatures(c.out)
	if err != nil {
		fmt.Fprintf(stderr, "conform fuzz: %v\n", err)
		return exitCouldNotRun
	}
	onDisk := map[string]bool{}
	for _, sig := range known {
		onDisk[sig] = true
	}
	// Every finding the campaign stored is handed over, those an earlier
	// coordinator wrote elsewhere too: --out gets them all.
	onFinding := func(f queue.Finding) error {
		if onDisk[f.Signature] {
			return nil
		}
		fd, err := campaign.ParseFinding(f.Body)
		if err != nil || fd.Signature != f.Signature {
			fmt.Fprintf(stderr, "conform fuzz: a worker reported a finding that is not one (%.80q); dropped\n", f.Signature)
			return nil
		}
		path, err := campaign.WriteFinding(c.out, fd)
		if err != nil {
			return err
		}
		onDisk[fd.Signature] = true
		fmt.Fprintf(stderr, "conform fuzz: finding %s (%s) written to %s\n", fd.Signature, fd.Kind, path)
		return nil
	}
	pr := &queueProgress{w: stderr, term: isTerminal(stderr), every: logEvery, seen: map[string]string{}}
	var last queue.Status
	progress := func(s queue.Status) {
		last = s
		pr.update(s, len(onDisk), time.Now(), false)
	}
	fmt.Fprintf(stderr, "conform fuzz: coordinating %d units on %s\n", len(units), ep)
	err = co.Run(ctx, queueUnits(units), onFinding, progress)
	pr.update(last, len(onDisk), time.Now(), true)
	for _, w := range last.Workers {
		if w.Units > 0 {
			fmt.Fprintf(stderr, "conform fuzz: worker %s: %d units, %d inputs (%.0f/s while busy)\n", w.Name, w.Units, w.Inputs, w.Rate())
		}
	}
	findings := len(onDisk)
	nothingJudged := last.Units > 0 && last.Done == last.Units && last.Unsupported == last.Units
	switch {
	case ctx.Err() != nil:
		fmt.Fprintf(stderr, "conform fuzz: interrupted; run the same command again to continue (units already done are not rerun)\n")
	case err != nil:
		fmt.Fprintf(stderr, "conform fuzz: %v\n", err)
	case nothingJudged:
		fmt.Fprintln(stderr, "conform fuzz: nothing judged: the workers' SUT implements none of the targets")
	default:
		fmt.Fprintf(stderr, "conform fuzz: done: %d findings in %s\n", findings, campaign.FindingsDir(c.out))
	}
	switch {
	case findings > 0:
		return exitFindings
	case ctx.Err() != nil:
		return 0
	case err != nil, nothingJudged:
		return exitCouldNotRun // units failed, the broker failed, or nothing was judged
	}
	return 0
}

// describeIdentity says what a campaign is, in one line.
func describeIdentity(id campaign.Identity) string {
	targets := strings.Join(id.Targets, ",")
	if len(id.Targets) > 4 {
		targets = fmt.Sprintf("%d targets", len(id.Targets))
	}
	sutName := "the first worker's"
	if id.SUT != nil {
		sutName = id.SUT.String()
	}
	return fmt.Sprintf("%s, seed %d, %d inputs per target in units of %d, SUT %s, conform %s",
		targets, id.Seed, id.Execs, id.UnitSize, sutName, id.Conform)
}

// queueProgress prints a coordinator's progress: a line redrawn on a
// terminal or one every `every` in a log, and a line for each worker that
// joins or refuses the campaign, when it does.
type queueProgress struct {
	w     io.Writer
	term  bool
	every time.Duration
	last  time.Time
	seen  map[string]string // worker name → what was said of it
}

// update is called with each status the coordinator reports — on every
// change, and several times a second besides — and once more at the end
// with final set, which is always printed.
func (p *queueProgress) update(s queue.Status, findings int, now time.Time, final bool) {
	for _, w := range s.Workers {
		state := "joined: SUT " + workerSUT(w.Identity)
		if w.Refused != "" {
			state = "refused the campaign: " + w.Refused
		}
		if p.seen[w.Name] == state {
			continue
		}
		p.seen[w.Name] = state
		if p.term {
			fmt.Fprint(p.w, "\r\033[K")
		}
		fmt.Fprintf(p.w, "conform fuzz: worker %s %s\n", w.Name, state)
	}
	line := fmt.Sprintf("%d of %d units done", s.Done, s.Units)
	if s.Failed > 0 {
		line += fmt.Sprintf(", %d failed", s.Failed)
	}
	if s.Unsupported > 0 {
		line += fmt.Sprintf(" (%d not run: the SUT does not implement their target)", s.Unsupported)
	}
	line += fmt.Sprintf(", %d inputs (%.0f/s), %d findings, %d workers", s.Inputs, s.Rate(), findings, joined(s.Workers))
	switch {
	case p.term && (final || now.Sub(p.last) >= lineEvery):
		p.last = now
		fmt.Fprintf(p.w, "\r\033[K%s", line)
		if final {
			fmt.Fprintln(p.w)
		}
	case !p.term && (final || p.last.IsZero() || now.Sub(p.last) >= p.every):
		p.last = now
		fmt.Fprintf(p.w, "conform fuzz: %s\n", line)
	}
}

// joined counts the workers that joined the campaign and did not refuse it.
func joined(ws []queue.WorkerStatus) int {
	n := 0
	for _, w := range ws {
		if w.Refused == "" {
			n++
		}
	}
	return n
}

// workerSUT names the SUT a worker runs, from its identity.
func workerSUT(raw []byte) string {
	var id campaign.Identity
	if json.Unmarshal(raw, &id) != nil || id.SUT == nil {
		return "unknown"
	}
	return id.SUT.String()
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
func cmdFuzzWorker(ctx context.Context, reg *suite.Registry, args []string, _, stderr io.Writer) int {
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
	// A --seed-corpus directory that cannot be read is a usage error, found
	// before the worker joins anything; the pool itself is the campaign's
	// targets', loaded when the worker joins it.
	if _, err := loadSeeds(ctx, reg, nil, seedDirs, io.Discard); err != nil {
		fmt.Fprintf(stderr, "conform fuzz worker: %v\n", err)
		return exitUsage
	}
	client, code := openSUT(ctx, reg, "fuzz worker", *spec, *timeout, stderr)
	if client == nil {
		return code
	}
	defer client.Close()
	pool := new(campaign.Seeds)
	e := campaign.NewEngine(client, reg, *spec, pool, 0, *timeout, nil)
	closeBroker, code := setBroker(e, "fuzz worker", *natsURL, stderr)
	if code != 0 {
		return code
	}
	defer closeBroker()
	// The worker's identity: its conform and SUT, and, once it joins a
	// campaign, the seed pool of that campaign's targets. The campaign's
	// seed, targets and ranges come with it and its units.
	id := campaign.NewIdentity(nil, 0, nil, e.SUTOf())
	mine, err := json.Marshal(id)
	if err != nil {
		fmt.Fprintf(stderr, "conform fuzz worker: %v\n", err)
		return exitCouldNotRun
	}
	fmt.Fprintf(stderr, "conform fuzz worker: SUT %s\n", id.SUT)
	all := campaign.Targets(reg)
	var poolOf []string // the targets pool was loaded for
	// The engine keeps the signatures the worker reported so that it
	// reports each once: once per campaign. A campaign deleted and
	// replaced under the same name (--replace) is joined again, and the
	// new one gets every finding its units show, those the worker reported
	// to the old one too.
	joined := false
	admit := func(stored []byte) ([]byte, error) {
		if sid, err := decodeIdentity(stored); err == nil && !slices.Equal(sid.Targets, poolOf) {
			var targets []*campaign.Target
			for _, name := range sid.Targets {
				if t, ok := campaign.Lookup(all, name); ok {
					targets = append(targets, t)
				}
			}
			p, err := loadSeeds(ctx, reg, targets, seedDirs, stderr)
			if err != nil {
				return nil, err
			}
			pool, poolOf = p, sid.Targets
		}
		probe := id
		probe.Corpus = pool.Digest()
		out, err := workerAdmit(probe)(stored)
		if err == nil {
			joined = true
		}
		return out, err
	}
	run := func(ctx context.Context, u queue.Unit, report func(queue.Finding) error) (queue.Result, error) {
		if joined {
			broker := e.Broker
			e = campaign.NewEngine(client, reg, *spec, pool, 0, *timeout, nil)
			e.Broker = broker
			joined = false
		}
		// A SUT its carrier restarted said Hello again: it must still be
		// the SUT this worker joined the campaign with.
		if d := id.SUT.Differences(e.SUTOf(), "when the worker joined", "now"); len(d) > 0 {
			return queue.Result{}, queue.Refuse(fmt.Errorf("this worker's SUT changed: %s", strings.Join(d, "; ")))
		}
		fmt.Fprintf(stderr, "conform fuzz worker: unit %s: %s [%d, %d)\n", u.ID, u.Target, u.Start, u.End)
		res, err := campaign.RunUnit(ctx, e, campaign.Unit{ID: u.ID, Target: u.Target, Seed: u.Seed, Start: u.Start, End: u.End, Corpus: u.Corpus},
			func(f *campaign.Finding) error {
				b, err := json.MarshalIndent(f, "", "  ")
				if err != nil {
					return err
				}
				fmt.Fprintf(stderr, "conform fuzz worker: finding %s (%s)\n", f.Signature, f.Kind)
				return report(queue.Finding{Signature: f.Signature, Body: b})
			}, logTo(stderr))
		return queue.Result{Inputs: res.Inputs, Unsupported: res.Unsupported}, err
	}
	// RunWorker calls admit and run from one goroutine, one at a time.
	err = queue.RunWorker(ctx, ep, queue.Options{Worker: *name, Logf: logTo(stderr), Identity: mine, Admit: admit}, run)
	if err != nil && ctx.Err() == nil {
		fmt.Fprintf(stderr, "conform fuzz worker: %v\n", err)
		return queueExit(err)
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
func cmdReplay(ctx context.Context, reg *suite.Registry, args []string, _ io.Reader, stdout, stderr io.Writer) int {
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
	if _, _, err := f.ParseInputs(campaign.Targets(reg)); err != nil {
		fmt.Fprintf(stderr, "conform replay: %v\n", err)
		return exitUsage
	}
	pool := new(campaign.Seeds)
	client, code := openSUT(ctx, reg, "replay", *spec, *timeout, stderr)
	if client == nil {
		return code
	}
	defer client.Close()
	e := campaign.NewEngine(client, reg, *spec, pool, f.Seed, *timeout, nil)
	closeBroker, code := setBroker(e, "replay", *natsURL, stderr)
	if code != 0 {
		return code
	}
	defer closeBroker()
	r, err := e.Reproduce(ctx, f)
	if err != nil {
		fmt.Fprintf(stderr, "conform replay: %v\n", err)
		return exitUsage
	}
	for _, o := range r.Others {
		fmt.Fprintf(stdout, "%s: another problem on these inputs: %s %s\n%s", filepath.Base(pos[0]), o.Kind, o.Detail, indent(r.Evidence(o)))
	}
	if r.Reproduced {
		o := r.Observation
		fmt.Fprintf(stdout, "%s: reproduces against %s (%s %s)\n%s", f.Signature, *spec, o.Kind, o.Detail, indent(r.Evidence(o)))
		return exitFindings
	}
	if r.Judged == 0 {
		// Not a fix: no run judged every input, so nothing was shown
		// either way.
		fmt.Fprintf(stdout, "%s: could not be judged against %s: each of its %d runs left an input out (the reference's report of a live input cut by its wait, on a machine too busy, or an input the carrier cannot carry); try again with a longer --timeout or on a quieter machine\n",
			f.Signature, *spec, r.LeftOut)
		return exitCouldNotRun
	}
	fmt.Fprintf(stdout, "%s: does not reproduce against %s (%d run(s) judged every input)\n", f.Signature, *spec, r.Judged)
	return 0
}

// indent indents each line of s by two spaces.
func indent(s string) string {
	if s == "" {
		return ""
	}
	return "  " + strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "\n", "\n  ") + "\n"
}

// cmdFuzzCampaigns lists the campaigns on a broker, or deletes some.
func cmdFuzzCampaigns(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("fuzz campaigns", stderr)
	queueURL := fs.String("queue", "", "the broker, nats://HOST:PORT")
	del := fs.Bool("delete", false, "delete the campaigns named: their units, outcomes, findings and identity on the broker")
	fs.Usage = func() {
		fmt.Fprint(stderr, `usage: conform fuzz campaigns --queue nats://HOST:PORT [NAME...]
       conform fuzz campaigns --queue nats://HOST:PORT --delete NAME...

Lists the fuzz campaigns on a broker: what each is (its identity), its units
ended and queued, its findings and workers. With --delete, deletes the
campaigns named. Exit status: 0 done, 2 a command line it cannot use, 3 the
broker is unreachable or has no JetStream.

`)
		fs.PrintDefaults()
	}
	names, err := parse(fs, args)
	if err != nil {
		return flagExit(err)
	}
	srv, err := queue.ParseServer(*queueURL)
	switch {
	case *queueURL == "":
		err = errors.New("--queue nats://HOST:PORT is required")
	case err == nil && srv.Campaign != "":
		names = append(names, srv.Campaign)
	}
	if err == nil && *del && len(names) == 0 {
		err = errors.New("--delete needs the names of the campaigns to delete")
	}
	if err != nil {
		fmt.Fprintf(stderr, "conform fuzz campaigns: %v\n", err)
		return exitUsage
	}
	for _, n := range names {
		if _, err := queue.ParseEndpoint(srv.URL + "/" + n); err != nil {
			fmt.Fprintf(stderr, "conform fuzz campaigns: %v\n", err)
			return exitUsage
		}
	}
	if *del {
		for _, n := range names {
			ep := queue.Endpoint{URL: srv.URL, Campaign: n}
			if err := queue.DeleteCampaign(ctx, ep); err != nil {
				fmt.Fprintf(stderr, "conform fuzz campaigns: %v\n", err)
				return exitCouldNotRun
			}
			fmt.Fprintf(stdout, "deleted %s\n", ep)
		}
		return 0
	}
	list, err := queue.ListCampaigns(ctx, srv.URL)
	if err != nil {
		fmt.Fprintf(stderr, "conform fuzz campaigns: %v\n", err)
		return exitCouldNotRun
	}
	shown := 0
	for _, c := range list {
		if len(names) > 0 && !slices.Contains(names, c.Name) {
			continue
		}
		shown++
		what := "made by an older conform: no identity (delete it to reuse its name)"
		if id, err := decodeIdentity(c.Identity); err == nil {
			what = describeIdentity(id)
		}
		fmt.Fprintf(stdout, "%s\t%d units ended, %d queued, %d findings, %d workers\t%s\n", c.Name, c.Ended, c.Queued, c.Findings, c.Workers, what)
	}
	if shown == 0 {
		fmt.Fprintf(stderr, "conform fuzz campaigns: no campaign on %s\n", srv.URL)
	}
	return 0
}

// cmdFuzzPromote turns a finding into a corpus vector of its suite.
func cmdFuzzPromote(reg *suite.Registry, args []string, stdout, stderr io.Writer) int {
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
	b, err := campaign.Promote(f, reg, *specRef, *id, *title)
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

// loadSeeds builds the seed pool of a campaign's targets from reg's cases,
// reference and fuzz seeds, and the directories given.
func loadSeeds(ctx context.Context, reg *suite.Registry, targets []*campaign.Target, dirs []string, stderr io.Writer) (*campaign.Seeds, error) {
	return campaign.LoadSeeds(ctx, reg, targets, dirs, logTo(stderr))
}
