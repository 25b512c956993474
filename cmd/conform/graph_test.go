package main

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/conform-suite/conform/reports"
)

// TestGraphProfile runs the graph profile end to end: against the reference,
// in process and as a child over stdio, every graph case passes or is
// informational and at least 45 pass; against graph mutants, conform exits 1.
func TestGraphProfile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, spec := range []string{"builtin:reference", "exec:" + bin + " reference"} {
		t.Run(spec, func(t *testing.T) {
			rec := filepath.Join(dir, "rec.json")
			r := conform(t, 2*time.Minute, nil, "run", "--sut", spec, "--profile", "graph", "--json", rec)
			if r.code != 0 {
				t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			if n := count(r.rec, reports.Pass); n < 45 {
				t.Errorf("%d graph cases pass, want at least 45", n)
			}
			for _, o := range []reports.Outcome{reports.Fail, reports.Error, reports.Warn, reports.Skip} {
				if n := count(r.rec, o); n != 0 {
					t.Errorf("%d graph cases %s\n%s", n, o, r.stdout)
				}
			}
		})
	}
	for _, m := range []string{"subscribers-index-clears-any-payload", "sweep-capped-at-root", "tombstone-on-retire"} {
		t.Run(m, func(t *testing.T) {
			rec := filepath.Join(dir, m+".json")
			r := conform(t, 2*time.Minute, nil, "run", "--sut", "builtin:mutant/"+m, "--profile", "graph", "--json", rec)
			if r.code != 1 {
				t.Fatalf("exit %d, want 1\n%s", r.code, r.stdout)
			}
			if r.rec.Summary.ByLevel[reports.MUST][reports.Fail] == 0 {
				t.Errorf("no MUST case failed")
			}
		})
	}
}
