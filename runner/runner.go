// Package runner runs a selection of cases against one SUT and produces the
// record. It owns the judgement: how a case's checks, its level and --strict
// become an outcome; what a lost SUT does to the cases after it; what an
// interrupted run leaves behind.
package runner

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/conform-suite/conform/cases"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/reports"
	"github.com/conform-suite/conform/sut"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// DefaultTimeout bounds one op when Config.Timeout is zero.
const DefaultTimeout = cases.DefaultOpTimeout

// DefaultMaxTimeouts is how many consecutive unanswered ops (timeouts,
// failed restarts) presume the SUT lost.
const DefaultMaxTimeouts = 3

// SoftMemoryLimit is the soft memory limit a run asks of the Go runtime
// (conform run sets it unless GOMEMLIMIT does): a SUT answering every
// request with megabytes then makes the garbage collector and scavenger
// return the freed answers to the system promptly instead of letting them
// pile up. It is soft: a run that needs more memory gets it.
const SoftMemoryLimit = 96 << 20

// Config is one run.
type Config struct {
	// Spec is the --sut value, for the record and reproduce commands.
	Spec string
	// SUTFlags, when set, are the flags that name the SUT in a reproduce
	// command instead of --sut Spec: an observed device is named by --peer
	// or --node-cmd and its --profile.
	SUTFlags []string
	Client   sut.Client
	// Cases is the selection, in the order to run.
	Cases []cases.Case
	// Profiles are the profiles or suites selected (empty: all), for the
	// record.
	Profiles []string
	// CaseGlobs are the --case patterns, for the record.
	CaseGlobs []string
	Seed      int64
	Strict    bool
	// Timeout bounds each op; MaxTimeouts consecutive timeouts presume the
	// SUT lost and the remaining cases are recorded as error at once.
	Timeout     time.Duration
	MaxTimeouts int
	// Corpus names the vectors, with their digest.
	Corpus  string
	Version string
	// Env is what live cases need beyond the SUT (a broker, a peer, a node
	// command); nil for a run of codec cases alone.
	Env *cases.Env
	// Progress, if set, is called after each case.
	Progress func(reports.CaseResult)

	// Started is when the run began, for its wall time; zero means when Run
	// is called. conform run sets it before starting the SUT, so that the
	// record's duration includes the start.
	Started time.Time
	// StartErr, with a nil Client, says why the SUT could not be started
	// or never said Hello; a *sut.Error gives the record its kind, exit
	// status and standard error.
	StartErr error
	// Remote is set when the SUT is not a process conform started itself
	// (tcp://, nats://): nothing it sends may make conform run a command,
	// so the cases see its Hello without node_command.
	Remote bool
	// SkipProfiles skips every selected case of a profile, with the reason
	// given, without reaching the SUT: conform cannot run them (for
	// example node cases with no node command conform may launch).
	SkipProfiles map[string]string
	// AllowUnimplemented accepts declared profiles whose MUST cases the SUT
	// answers Unimplemented (--allow-unimplemented).
	AllowUnimplemented bool
	// Catalogue is every case conform has, when known, so that the record
	// can say when a run selected only part of a profile.
	Catalogue []cases.Case

	// Parallel bounds how many cases run at once; below 2 they run one
	// after another. Only live cases (tag "live"), which mostly wait on real
	// time, run beside one another; the other cases, which compute and may
	// carry inputs of many megabytes, run one at a time, beside the live
	// ones. Whatever the order in which cases end, the record, Progress and
	// the lost-SUT breaker see them in the order of Cases.
	Parallel int
	// Open opens one more session with the SUT, for a case that runs beside
	// others: another process of a SUT conform starts, another connection to
	// one it reaches. A conform.v1 session carries one request at a time, so
	// without Open every case runs on Client, one after another, whatever
	// Parallel says. The runner closes the sessions it opened before Run
	// returns; the caller closes Client. A session that cannot be opened is
	// not an error of any case: the run goes on over the sessions it has,
	// and Notice is told why.
	Open func(ctx context.Context) (sut.Client, error)
	// Notice, if set, is told what the runner changed about the run on its
	// own account, such as running over fewer sessions than Parallel.
	Notice func(msg string)
	// Limits, if set, bounds the cases running at once across every run
	// that shares it, such as the mutation table's, on top of each run's
	// own bounds.
	Limits *Limits
}

// Limits bound the cases running at once across runs that go side by side:
// live cases, which mostly wait, and the others, which compute. A Limits is
// safe for concurrent use by the runs that share it.
type Limits struct {
	live, other chan struct{}
}

// NewLimits returns Limits that let live live cases and other other cases
// run at once; a bound below 1 is 1.
func NewLimits(live, other int) *Limits {
	return &Limits{live: make(chan struct{}, max(live, 1)), other: make(chan struct{}, max(other, 1))}
}

// acquire waits for room for a case, live or not, and returns the function
// that gives it back; it fails only when ctx ends first. Nil Limits bound
// nothing.
func (l *Limits) acquire(ctx context.Context, live bool) (release func(), err error) {
	if l == nil {
		return func() {}, nil
	}
	ch := l.other
	if live {
		ch = l.live
	}
	select {
	case ch <- struct{}{}:
		return func() { <-ch }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// LiveTag is the tag of the cases that drive the SUT over real sockets or
// subjects; the suite registry gives it to every case of a live profile.
const LiveTag = "live"

// Run runs cfg.Cases and returns the record. When ctx is cancelled the run
// stops between ops, and the record holds the cases that finished, marked
// interrupted.
//
// A SUT that does not answer — an op past its timeout, a restart that fails
// or never reaches Hello — counts towards the lost-SUT breaker; after
// cfg.MaxTimeouts such failures in a row the SUT is presumed lost, and the
// remaining cases are recorded at once as error of kind lost. Whatever the
// SUT sent is bounded in the record (reports.CaseResult.Bound).
//
// With cfg.Parallel above 1 and cfg.Open set, live cases run side by side,
// each over a session opened for it; the record, Progress and the breaker
// see every case in the order of cfg.Cases all the same, so that the record
// is the one a run of one case after another would make of the same
// answers.
func Run(ctx context.Context, cfg Config) *reports.Record {
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.MaxTimeouts <= 0 {
		cfg.MaxTimeouts = DefaultMaxTimeouts
	}
	start := cfg.Started
	if start.IsZero() {
		start = time.Now()
	}
	rec := &reports.Record{
		Schema:             reports.SchemaID,
		Conform:            cfg.Version,
		Corpus:             cfg.Corpus,
		Started:            start.UTC(),
		Seed:               cfg.Seed,
		Strict:             cfg.Strict,
		Selection:          reports.Select{Profiles: cfg.Profiles, Cases: cfg.CaseGlobs},
		SUT:                reports.SUT{Spec: cfg.Spec, Hello: []byte("null")},
		AllowUnimplemented: cfg.AllowUnimplemented,
		MustInCatalogue:    mustInCatalogue(cfg.Catalogue),
	}
	hello := new(conformpb.Hello)
	switch {
	case cfg.Client != nil:
		rec.SUT.Carrier = cfg.Client.Carrier()
		hello = cfg.Client.Hello()
		if b, err := protojson.Marshal(boundHello(hello)); err == nil {
			rec.SUT.Hello = b
		}
		if len(hello.GetProfiles()) == 0 {
			rec.StartError = &reports.SUTFailure{Kind: reports.KindStart, Message: noProfileMessage}
		}
	default:
		rec.StartError = failure(cfg.StartErr)
		if rec.StartError == nil {
			rec.StartError = &reports.SUTFailure{Kind: reports.KindStart, Message: "the SUT could not be started"}
		}
	}
	if cfg.Remote && len(hello.GetNodeCommand()) > 0 {
		// The cases never see a command a remote SUT names.
		hello = proto.CloneOf(hello)
		hello.NodeCommand = nil
	}
	declared := map[string]bool{}
	for _, p := range hello.GetProfiles() {
		declared[p] = true
	}
	s := &schedule{cfg: cfg, hello: hello, rec: rec, declared: declared, undeclared: map[string]bool{}}
	s.run(ctx)
	undeclared := s.undeclared
	for p := range undeclared {
		rec.Undeclared = append(rec.Undeclared, p)
	}
	slices.Sort(rec.Undeclared)
	rec.DurationSec = time.Since(start).Seconds()
	rec.Summarize()
	rec.ExitCode = ExitCode(rec)
	return rec
}

// noProfileMessage refuses a Hello that declares no profile.
const noProfileMessage = "the SUT's Hello declares no profile: conform.v1's Hello.profiles must name the profiles the SUT implements (for example \"wire\"), and only their cases are judged"

// failure turns a start or op error into what the record keeps of it.
func failure(err error) *reports.SUTFailure {
	if err == nil {
		return nil
	}
	f := &reports.SUTFailure{Kind: reports.KindStart, Message: err.Error()}
	var se *sut.Error
	if errors.As(err, &se) {
		f.Kind, f.Exit, f.Stderr = se.Kind, se.Exit, se.Stderr
	}
	f.Bound()
	return f
}

// boundHello returns h, or a copy with each text cut to a bound, for the
// record: a SUT's Hello is untrusted like the rest of what it sends.
func boundHello(h *conformpb.Hello) *conformpb.Hello {
	const maxText, maxList = 256, 64
	if proto.Size(h) <= 4<<10 {
		return h
	}
	h = proto.CloneOf(h)
	h.Implementation = reports.Clip(h.Implementation, maxText)
	h.Version = reports.Clip(h.Version, maxText)
	h.Language = reports.Clip(h.Language, maxText)
	for _, l := range []*[]string{&h.Profiles, &h.NodeCommand} {
		if len(*l) > maxList {
			*l = append((*l)[:maxList:maxList], fmt.Sprintf("[%d more dropped]", len(*l)-maxList))
		}
		for i := range *l {
			(*l)[i] = reports.Clip((*l)[i], maxText)
		}
	}
	return h
}

// mustInCatalogue counts the MUST cases of each profile in all.
func mustInCatalogue(all []cases.Case) map[string]int {
	if len(all) == 0 {
		return nil
	}
	n := map[string]int{}
	for _, c := range all {
		if c.Level == reports.MUST {
			n[c.Profile]++
		}
	}
	return n
}

// Exit codes, as DESIGN.md fixes them.
const (
	ExitOK       = 0 // conformant, or only known failures
	ExitFailures = 1 // failures or errors
	ExitUsage    = 2
	ExitNoSUT    = 3 // the SUT could not be started or never said Hello
)

// ExitCode returns the exit code a record earns without a baseline:
//
//   - 3 when the SUT could not be started, never said Hello, or declared
//     no profile;
//   - 1 when any case failed or erred (warn counts only under --strict,
//     where it is already a fail), or the run was interrupted (while
//     the SUT was starting too);
//   - 1 when a declared profile is incomplete — MUST cases answered
//     Unimplemented — and --allow-unimplemented does not accept it;
//   - 1 when the run selected cases that could be judged and judged none;
//   - 0 otherwise.
func ExitCode(r *reports.Record) int {
	switch {
	case r.StartError != nil && r.StartError.Kind == reports.KindInterrupted:
		return ExitFailures // interrupted, not a SUT that could not start
	case r.StartError != nil || r.SUT.Carrier == "":
		return ExitNoSUT
	case r.Summary.Counts[reports.Fail] > 0 || r.Summary.Counts[reports.Error] > 0 || r.Interrupted:
		return ExitFailures
	case len(r.Incomplete()) > 0 || r.NothingJudged():
		return ExitFailures
	}
	return ExitOK
}

// Reproduce returns the command that reruns one case alone.
func Reproduce(spec, id string, seed int64) string {
	return fmt.Sprintf("conform run --sut %s --case %s --seed %d", shellQuote(spec), id, seed)
}

func reproduce(cfg Config, id string) string {
	if len(cfg.SUTFlags) == 0 {
		return Reproduce(cfg.Spec, id, cfg.Seed)
	}
	var b strings.Builder
	b.WriteString("conform run")
	for _, f := range cfg.SUTFlags {
		b.WriteString(" " + shellQuote(f))
	}
	fmt.Fprintf(&b, " --case %s --seed %d", id, cfg.Seed)
	return b.String()
}

func shellQuote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n'\"\\$`*?[]{}()<>|&;#~!") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func result(c cases.Case, o reports.Outcome, kind reports.ErrorKind, msg string) reports.CaseResult {
	return reports.CaseResult{
		ID: c.ID, Title: c.Title, Spec: c.Spec, Level: c.Level, Profile: c.Profile,
		Tags: c.Tags, Outcome: o, ErrorKind: kind, Message: msg,
	}
}

// CaseSeed derives a case's seed from the run's seed and its ID, so that a
// case run alone with --case sees the same randomness as in a full run.
func CaseSeed(seed int64, id string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(id))
	return h.Sum64() ^ uint64(seed)
}

// caseOutcome is what the runner learns from a case beyond its result.
type caseOutcome struct {
	// unanswered is set when an op found the SUT unresponsive: a timeout,
	// or a restart that failed or never reached Hello.
	unanswered *reports.SUTFailure
	// unimplemented is set when the SUT answered Unimplemented.
	unimplemented bool
}

func runCase(ctx context.Context, cfg Config, client sut.Client, hello *conformpb.Hello, c cases.Case) (res reports.CaseResult, out caseOutcome) {
	start := time.Now()
	interrupted := &cases.Abort{Outcome: reports.Error, Kind: reports.KindInterrupted, Message: "the run was interrupted"}
	do := func(ctx context.Context, req *conformpb.Request) (*conformpb.Response, error) {
		if err := ctx.Err(); err != nil {
			return nil, interrupted
		}
		octx, cancel := context.WithTimeout(ctx, cfg.Timeout)
		defer cancel()
		resp, err := client.Do(octx, req)
		if err != nil {
			if ctx.Err() != nil {
				return nil, interrupted
			}
			var se *sut.Error
			if errors.As(err, &se) {
				if se.Kind == reports.KindTimeout || se.Kind == reports.KindStart {
					out.unanswered = failure(se)
				}
				msg := se.Error()
				if se.Kind == reports.KindStart {
					// A restart's failure names how the process ended in the
					// record, not only on conform's standard error.
					msg = "restarting the SUT failed: " + msg
				}
				return nil, &cases.Abort{Outcome: reports.Error, Kind: se.Kind, Message: reports.Clip(msg, reports.MaxMessage), Stderr: reports.ClipTail(se.Stderr, reports.MaxStderr)}
			}
			return nil, &cases.Abort{Outcome: reports.Error, Kind: reports.KindProtocol, Message: reports.Clip(err.Error(), reports.MaxMessage)}
		}
		switch r := resp.Result.(type) {
		case *conformpb.Response_Unimplemented:
			return nil, &cases.Abort{Outcome: reports.Skip, Unimplemented: true, Message: "unimplemented: " + reports.Clip(r.Unimplemented.GetDetail(), reports.MaxMessage)}
		case *conformpb.Response_Error:
			// Only a bounded head of the SUT's message is kept: a SUT may
			// answer every op with megabytes of it.
			return nil, &cases.Abort{Outcome: reports.Error, Kind: reports.KindOpError, Message: "the SUT answered Error: " + reports.Clip(r.Error.GetMessage(), reports.MaxMessage)}
		}
		return resp, nil
	}
	t := cases.NewT(ctx, hello, CaseSeed(cfg.Seed, c.ID), do)
	t.UseEnv(cfg.Env)
	t.UseOpTimeout(cfg.Timeout)
	// A carrier that limits a message's size (a NATS broker's max_payload)
	// says so, read per case because a reconnection may change it.
	if l, ok := client.(interface{ MaxMessage() int }); ok {
		t.LimitMessages(l.MaxMessage())
	}
	res = result(c, reports.Pass, "", "")
	defer func() {
		res.DurationSec = time.Since(start).Seconds()
		res.Evidence = t.Evidence()
		res.Notes = t.Notes()
	}()
	defer func() {
		p := recover()
		if p == nil {
			res.Outcome, res.Message = judge(c.Level, cfg.Strict, t)
			return
		}
		a, ok := p.(*cases.Abort)
		if !ok {
			res.Outcome, res.ErrorKind = reports.Error, reports.KindHarness
			res.Message = fmt.Sprintf("conform bug: the case panicked: %v", p)
			return
		}
		res.Outcome, res.ErrorKind, res.Message = a.Outcome, a.Kind, a.Message
		out.unimplemented = a.Unimplemented
		if a.Stderr != "" {
			t.Fail(reports.Evidence{Message: "the SUT's standard error ended with", Stderr: a.Stderr})
		}
	}()
	cases.Perform(&c, t)
	return res, out
}

// judge turns a case's checks into an outcome according to its level.
func judge(level reports.Level, strict bool, t *cases.T) (reports.Outcome, string) {
	if level == reports.INFO || level == reports.MAY {
		return reports.Info, ""
	}
	if !t.Failed() {
		return reports.Pass, ""
	}
	n := len(t.Evidence())
	msg := fmt.Sprintf("%d check(s) failed: %s", n, t.Evidence()[0].Message)
	if level == reports.SHOULD && !strict {
		return reports.Warn, msg
	}
	return reports.Fail, msg
}

// Select returns the cases of all that the --profile and --case values
// select, in the order of all.
//
// Each name in profiles selects a profile or a suite: a name that is a
// profile (the Profile of a case of all) selects that profile's cases, even
// when a suite has the same name — "doppler" is the doppler codec profile,
// not the doppler suite with its doppler-nats cases; a name that is only a
// suite ("live") selects the whole suite. A whole suite is also selected
// by a glob, --case 'doppler/**'. No name selects every case. A name that
// is neither a profile nor a suite is an error that lists the valid names.
//
// Each glob uses path.Match syntax, where * stops at '/', and a trailing
// /** or a bare prefix ending in / matches every ID under it; no glob
// selects every case.
func Select(all []cases.Case, profiles, globs []string) ([]cases.Case, error) {
	for _, g := range globs {
		if err := reports.CheckPattern(g); err != nil {
			return nil, fmt.Errorf("bad --case pattern %q: %w", g, err)
		}
	}
	known, suites := map[string]bool{}, map[string]bool{}
	for _, c := range all {
		known[c.Profile] = true
		suites[c.Suite()] = true
	}
	byProfile, bySuite := map[string]bool{}, map[string]bool{}
	var bad []string
	for _, p := range profiles {
		switch {
		case known[p]:
			byProfile[p] = true
		case suites[p]:
			bySuite[p] = true
		default:
			bad = append(bad, p)
		}
	}
	if len(bad) > 0 {
		return nil, &SelectError{Names: bad, Profiles: slices.Sorted(maps.Keys(known)), Suites: onlySuites(suites, known)}
	}
	var out []cases.Case
	for _, c := range all {
		if len(profiles) > 0 && !byProfile[c.Profile] && !bySuite[c.Suite()] {
			continue
		}
		if len(globs) > 0 && !slices.ContainsFunc(globs, func(g string) bool { return MatchID(g, c.ID) }) {
			continue
		}
		out = append(out, c)
	}
	return out, nil
}

// SelectError reports --profile names that are neither a profile nor a
// suite.
type SelectError struct {
	// Names are the unknown names.
	Names []string
	// Profiles and Suites are the valid names: every profile, and the
	// suites that are not also a profile's name.
	Profiles, Suites []string
}

func (e *SelectError) Error() string {
	return fmt.Sprintf("--profile %s: no such profile or suite; profiles are %s; suites (each selecting all its profiles) are %s",
		strings.Join(e.Names, ","), strings.Join(e.Profiles, ", "), strings.Join(e.Suites, ", "))
}

// onlySuites returns the suites that are not also a profile, sorted.
func onlySuites(suites, profiles map[string]bool) []string {
	var out []string
	for s := range suites {
		if !profiles[s] {
			out = append(out, s)
		}
	}
	slices.Sort(out)
	return out
}

// MatchID reports whether the case ID matches pattern, as reports.MatchID
// does: the one glob syntax of --case and of baselines.
func MatchID(pattern, id string) bool { return reports.MatchID(pattern, id) }
