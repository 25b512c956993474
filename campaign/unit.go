package campaign

import (
	"context"
	"errors"
	"fmt"
)

// A Unit is a piece of a campaign that one worker runs: inputs [Start, End)
// of one target under one campaign seed. Corpus names the seeds in the
// range, so that a worker can tell when its seed pool is not the one the
// coordinator cut the campaign from.
type Unit struct {
	ID     string
	Target string
	Seed   int64
	Start  uint64
	End    uint64
	Corpus []string
}

// Units cuts a campaign of execs inputs per target into units of at most
// size inputs, named <target>/<start>-<end> after their input range: a unit
// ID means the same inputs in every campaign of the same identity, and two
// campaigns that cut their ranges differently share no unit ID.
func Units(targets []*Target, pool *Seeds, seed int64, execs, size uint64) []Unit {
	var out []Unit
	if size == 0 {
		return nil
	}
	for _, t := range targets {
		for start := uint64(0); start < execs; start += size {
			end := min(start+size, execs)
			if end < start {
				end = execs // start+size wrapped around
			}
			out = append(out, Unit{
				ID: UnitID(t.Name, start, end), Target: t.Name, Seed: seed,
				Start: start, End: end, Corpus: names(pool.For(t), start, end),
			})
			if end == execs {
				break
			}
		}
	}
	return out
}

// UnitID names the unit of inputs [start, end) of target.
func UnitID(target string, start, end uint64) string {
	return fmt.Sprintf("%s/%d-%d", target, start, end)
}

// A UnitResult is what running a unit did.
type UnitResult struct {
	// Inputs counts the inputs run.
	Inputs uint64
	// Unsupported says why the unit's target was not run: the SUT does not
	// implement it. Empty when it was run.
	Unsupported string
}

// RunUnit runs one unit on e and reports its findings. A target the SUT
// does not implement ends the unit without error, saying so in the result:
// there is nothing to find in it on this SUT.
func RunUnit(ctx context.Context, e *Engine, u Unit, report Report, logf func(string, ...any)) (UnitResult, error) {
	t, ok := e.Lookup(u.Target)
	if !ok {
		return UnitResult{}, fmt.Errorf("unit %s: no fuzz target %q in this conform", u.ID, u.Target)
	}
	if !e.Seeds.Has(t) {
		return UnitResult{}, fmt.Errorf("unit %s: the seed pool was not loaded for %s, a target of another campaign", u.ID, u.Target)
	}
	if have := names(e.Seeds.For(t), u.Start, u.End); !equalStrings(have, u.Corpus) && logf != nil {
		logf("unit %s: this worker's seed pool differs from the coordinator's (other --seed-corpus, or another conform version); its inputs differ too", u.ID)
	}
	e.Seed = u.Seed
	before := e.Execs
	err := e.RunRange(ctx, t, u.Start, u.End, report, nil)
	res := UnitResult{Inputs: e.Execs - before}
	if errors.Is(err, errUnsupported) {
		res.Unsupported = e.unsupported[t.Name]
		if logf != nil {
			logf("unit %s: %s", u.ID, res.Unsupported)
		}
		return res, nil
	}
	return res, err
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
