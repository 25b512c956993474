package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"github.com/conform-suite/conform/reports"
)

// The benchmarks below show the gate's speed and memory goals (issue 16):
// the whole suite against builtin:reference within twice its longest case
// plus 2 s, in under 150 MB of peak resident memory, and conform selftest in
// under a minute, on a 2-core machine. They run the conform binary, as a
// user does, and report per run:
//
//	wall-s       the run's wall time (the same as ns/op, in seconds)
//	cases-s      the sum of its cases' times: wall-s far below it is overlap
//	longest-s    its longest case, and goal-s, twice that plus 2 s
//	peak-RSS-MB  the peak resident set of conform and what it waited for
//
// go test ./cmd/conform -run XXX -bench Gate -benchtime 1x

// BenchmarkGateRun runs the whole suite against builtin:reference, with
// the default --parallel and with --parallel 1.
func BenchmarkGateRun(b *testing.B) {
	for _, parallel := range []int{0, 1} {
		name := "parallel=default"
		if parallel > 0 {
			name = "parallel=" + strconv.Itoa(parallel)
		}
		b.Run(name, func(b *testing.B) {
			rec := filepath.Join(b.TempDir(), "rec.json")
			args := []string{"run", "--sut", "builtin:reference", "--json", rec}
			if parallel > 0 {
				args = append(args, "--parallel", strconv.Itoa(parallel))
			}
			var peak, wall, sum, longest float64
			for b.Loop() {
				rss := runForBench(b, args...)
				r := readBenchRecord(b, rec)
				peak = max(peak, rss)
				wall += r.DurationSec
				var s, l float64
				for _, c := range r.Cases {
					s += c.DurationSec
					l = max(l, c.DurationSec)
				}
				sum += s
				longest = max(longest, l)
			}
			n := float64(b.N)
			b.ReportMetric(wall/n, "wall-s")
			b.ReportMetric(sum/n, "cases-s")
			b.ReportMetric(longest, "longest-s")
			b.ReportMetric(2*longest+2, "goal-s")
			b.ReportMetric(peak, "peak-RSS-MB")
		})
	}
}

// BenchmarkGateSelftest runs conform selftest: the reference against every
// case, and every mutant against the cases of its suite.
func BenchmarkGateSelftest(b *testing.B) {
	var peak float64
	for b.Loop() {
		peak = max(peak, runForBench(b, "selftest"))
	}
	b.ReportMetric(peak, "peak-RSS-MB")
}

// runForBench runs conform with args and returns its peak resident set in
// MB, as the kernel accounts it for the process and the children it waited
// for (what /usr/bin/time reports). A run that fails stops the benchmark.
func runForBench(b *testing.B, args ...string) float64 {
	b.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = os.Environ()
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("conform %v: %v\n%s", args, err, out)
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0
	}
	return float64(ru.Maxrss) / 1024 // Linux reports KiB
}

func readBenchRecord(b *testing.B, path string) *reports.Record {
	b.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	r := new(reports.Record)
	if err := json.Unmarshal(data, r); err != nil {
		b.Fatal(err)
	}
	return r
}
