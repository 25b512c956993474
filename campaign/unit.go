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
// size inputs, named <target>/<number>.
func Units(targets []*Target, pool *Seeds, seed int64, execs, size uint64) []Unit {
	var out []Unit
	for _, t := range targets {
		for k, start := 0, uint64(0); start < execs; k, start = k+1, start+size {
			end := min(start+size, execs)
			out = append(out, Unit{
				ID: fmt.Sprintf("%s/%06d", t.Name, k), Target: t.Name, Seed: seed,
				Start: start, End: end, Corpus: names(pool.For(t), start, end),
			})
		}
	}
	return out
}

// RunUnit runs one unit on e and reports its findings. A target the SUT
// does not implement ends the unit without error: there is nothing to find
// in it on this SUT.
func RunUnit(ctx context.Context, e *Engine, u Unit, report Report, logf func(string, ...any)) error {
	t, ok := Lookup(u.Target)
	if !ok {
		return fmt.Errorf("unit %s: no fuzz target %q in this conform", u.ID, u.Target)
	}
	if have := names(e.Seeds.For(t), u.Start, u.End); !equalStrings(have, u.Corpus) && logf != nil {
		logf("unit %s: this worker's seed pool differs from the coordinator's (other --seed-corpus, or another conform version); its inputs differ too", u.ID)
	}
	e.Seed = u.Seed
	err := e.RunRange(ctx, t, u.Start, u.End, report, nil)
	if errors.Is(err, errUnsupported) {
		if logf != nil {
			logf("unit %s: %s", u.ID, e.unsupported[t.Name])
		}
		return nil
	}
	return err
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
