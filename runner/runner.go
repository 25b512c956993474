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
	"slices"
	"strings"
	"time"

	"github.com/conform-suite/conform/cases"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/reports"
	"github.com/conform-suite/conform/sut"
	"google.golang.org/protobuf/encoding/protojson"
)

// DefaultTimeout bounds one op when Config.Timeout is zero.
const DefaultTimeout = 10 * time.Second

// DefaultMaxTimeouts is how many consecutive timeouts presume the SUT lost.
const DefaultMaxTimeouts = 3

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
}

// Run runs cfg.Cases and returns the record. When ctx is cancelled the run
// stops between ops, and the record holds the cases that finished, marked
// interrupted.
func Run(ctx context.Context, cfg Config) *reports.Record {
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.MaxTimeouts <= 0 {
		cfg.MaxTimeouts = DefaultMaxTimeouts
	}
	start := time.Now()
	rec := &reports.Record{
		Schema:    reports.SchemaID,
		Conform:   cfg.Version,
		Corpus:    cfg.Corpus,
		Started:   start.UTC(),
		Seed:      cfg.Seed,
		Strict:    cfg.Strict,
		Selection: reports.Select{Profiles: cfg.Profiles, Cases: cfg.CaseGlobs},
		SUT:       reports.SUT{Spec: cfg.Spec, Hello: []byte("null")},
	}
	hello := new(conformpb.Hello)
	if cfg.Client != nil {
		rec.SUT.Carrier = cfg.Client.Carrier()
		hello = cfg.Client.Hello()
		if b, err := protojson.Marshal(hello); err == nil {
			rec.SUT.Hello = b
		}
	}
	declared := map[string]bool{}
	for _, p := range hello.GetProfiles() {
		declared[p] = true
	}
	undeclared := map[string]bool{}
	timeouts := 0
	var lost *cases.Abort
	for _, c := range cfg.Cases {
		if ctx.Err() != nil {
			rec.Interrupted = true
			break
		}
		var res reports.CaseResult
		switch {
		case cfg.Client == nil:
			res = result(c, reports.Error, "start", "the SUT could not be started")
		case !declared[c.Profile]:
			undeclared[c.Profile] = true
			res = result(c, reports.Skip, "", fmt.Sprintf("profile %s is not declared in the SUT's Hello", c.Profile))
		case lost != nil:
			res = result(c, reports.Error, "lost", "not run: "+lost.Message)
		default:
			var timedOut bool
			res, timedOut = runCase(ctx, cfg, hello, c)
			if timedOut {
				timeouts++
			} else if res.Outcome != reports.Error || res.ErrorKind != "interrupted" {
				timeouts = 0
			}
			if timeouts >= cfg.MaxTimeouts {
				lost = &cases.Abort{Message: fmt.Sprintf("the SUT was presumed lost after %d consecutive timeouts", timeouts)}
			}
			if res.ErrorKind == "interrupted" {
				rec.Interrupted = true
			}
			if res.Outcome == reports.Skip && res.ErrorKind == "" && strings.HasPrefix(res.Message, "unimplemented") {
				rec.Unimplemented = append(rec.Unimplemented, c.ID)
			}
		}
		if res.Outcome != reports.Pass {
			res.Reproduce = reproduce(cfg, c.ID)
		}
		rec.Cases = append(rec.Cases, res)
		if cfg.Progress != nil {
			cfg.Progress(res)
		}
		if rec.Interrupted {
			break
		}
	}
	for p := range undeclared {
		rec.Undeclared = append(rec.Undeclared, p)
	}
	slices.Sort(rec.Undeclared)
	rec.DurationSec = time.Since(start).Seconds()
	rec.Summarize()
	rec.ExitCode = ExitCode(rec)
	return rec
}

// Exit codes, as DESIGN.md fixes them.
const (
	ExitOK       = 0 // conformant, or only known failures
	ExitFailures = 1 // failures or errors
	ExitUsage    = 2
	ExitNoSUT    = 3 // the SUT could not be started or never said Hello
)

// ExitCode returns the exit code a record earns: 1 when any case failed or
// erred (warn counts only under --strict, where it is already a fail).
func ExitCode(r *reports.Record) int {
	if r.SUT.Carrier == "" {
		return ExitNoSUT
	}
	if r.Summary.Counts[reports.Fail] > 0 || r.Summary.Counts[reports.Error] > 0 || r.Interrupted {
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

func result(c cases.Case, o reports.Outcome, kind, msg string) reports.CaseResult {
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

func runCase(ctx context.Context, cfg Config, hello *conformpb.Hello, c cases.Case) (res reports.CaseResult, timedOut bool) {
	start := time.Now()
	do := func(ctx context.Context, req *conformpb.Request) (*conformpb.Response, error) {
		if err := ctx.Err(); err != nil {
			return nil, &cases.Abort{Outcome: reports.Error, Kind: "interrupted", Message: "the run was interrupted"}
		}
		octx, cancel := context.WithTimeout(ctx, cfg.Timeout)
		defer cancel()
		resp, err := cfg.Client.Do(octx, req)
		if err != nil {
			if ctx.Err() != nil {
				return nil, &cases.Abort{Outcome: reports.Error, Kind: "interrupted", Message: "the run was interrupted"}
			}
			var se *sut.Error
			if errors.As(err, &se) {
				if se.Kind == sut.KindTimeout {
					timedOut = true
				}
				return nil, &cases.Abort{Outcome: reports.Error, Kind: string(se.Kind), Message: se.Error(), Stderr: se.Stderr}
			}
			return nil, &cases.Abort{Outcome: reports.Error, Kind: "protocol", Message: err.Error()}
		}
		switch r := resp.Result.(type) {
		case *conformpb.Response_Unimplemented:
			return nil, &cases.Abort{Outcome: reports.Skip, Unimplemented: true, Message: "unimplemented: " + r.Unimplemented.GetDetail()}
		case *conformpb.Response_Error:
			return nil, &cases.Abort{Outcome: reports.Error, Kind: "op-error", Message: "the SUT answered Error: " + r.Error.GetMessage()}
		}
		return resp, nil
	}
	t := cases.NewT(ctx, hello, CaseSeed(cfg.Seed, c.ID), do)
	t.UseEnv(cfg.Env)
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
			res.Outcome, res.ErrorKind = reports.Error, "harness"
			res.Message = fmt.Sprintf("conform bug: the case panicked: %v", p)
			return
		}
		res.Outcome, res.ErrorKind, res.Message = a.Outcome, a.Kind, a.Message
		if a.Stderr != "" {
			t.Fail(reports.Evidence{Message: "the SUT's standard error ended with", Stderr: a.Stderr})
		}
	}()
	c.Run(t)
	return res, timedOut
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

// Select returns the cases of all whose suite or profile is in profiles
// (all of them when profiles is empty) and whose ID matches one of globs
// (all of them when globs is empty). A glob uses path.Match syntax, where *
// stops at '/', and a trailing /** or a bare prefix ending in / matches every
// ID under it.
func Select(all []cases.Case, profiles, globs []string) ([]cases.Case, error) {
	for _, g := range globs {
		if err := reports.CheckPattern(g); err != nil {
			return nil, fmt.Errorf("bad --case pattern %q: %w", g, err)
		}
	}
	var out []cases.Case
	for _, c := range all {
		if len(profiles) > 0 && !slices.Contains(profiles, c.Profile) && !slices.Contains(profiles, c.Suite()) {
			continue
		}
		if len(globs) > 0 && !slices.ContainsFunc(globs, func(g string) bool { return MatchID(g, c.ID) }) {
			continue
		}
		out = append(out, c)
	}
	return out, nil
}

// MatchID reports whether the case ID matches pattern, as reports.MatchID
// does: the one glob syntax of --case and of baselines.
func MatchID(pattern, id string) bool { return reports.MatchID(pattern, id) }
