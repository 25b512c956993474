package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/conform-suite/conform/internal/hang"
	"github.com/conform-suite/conform/suites"
)

// TestRunEnvUsage: a malformed live-case flag is a usage error named in one
// line, before any SUT is started.
func TestRunEnvUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--sut", "builtin:reference", "--nats-url", "http://127.0.0.1:4222"}, "want nats://host:port"},
		{[]string{"--sut", "builtin:reference", "--nats-url", "nats://127.0.0.1"}, "want nats://host:port"},
		{[]string{"--peer", "127.0.0.1:7000", "--profile", "ranvier-publisher"}, "want tcp://host:port"},
		{[]string{"--peer", "tcp://127.0.0.1:7000"}, "needs --profile"},
		{[]string{"--node-cmd", "'unterminated", "--profile", "ranvier-node"}, "not a command line"},
		{[]string{"--profile", "wire"}, "--sut is required"},
	} {
		var stdout, stderr bytes.Buffer
		code := Main(context.Background(), suites.Default(), append([]string{"run"}, tc.args...), nil, &stdout, &stderr)
		if code != exitUsage || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("run %q: exit %d, stderr %q; want exit %d mentioning %q", tc.args, code, stderr.String(), exitUsage, tc.want)
		}
	}
}

func TestRunEnvBroker(t *testing.T) {
	env, err := runEnv("nats://127.0.0.1:4999", "", "")
	if err != nil {
		t.Fatal(err)
	}
	defer env.close()
	u, err := env.Broker(context.Background())
	if err != nil || u != "nats://127.0.0.1:4999" {
		t.Errorf("named broker: %q, %v", u, err)
	}
	env, err = runEnv("", "tcp://127.0.0.1:7000", "node --flag 'a b'")
	if err != nil {
		t.Fatal(err)
	}
	defer env.close()
	if env.Peer != "tcp://127.0.0.1:7000" || strings.Join(env.NodeCommand, "|") != "node|--flag|a b" {
		t.Errorf("peer %q, node command %q", env.Peer, env.NodeCommand)
	}
	u, err = env.Broker(context.Background())
	if err != nil || !strings.HasPrefix(u, "nats://127.0.0.1:") {
		t.Errorf("embedded broker: %q, %v", u, err)
	}
}

// runMain runs conform in process and returns its exit code and output.
func runMain(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	return runMainContext(t, context.Background(), args...)
}

// runMainContext runs conform in process within ctx, bounded by a hang
// guard, and returns its exit code and output.
func runMainContext(t *testing.T, ctx context.Context, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, hang.Guard(t, 90*time.Second))
	defer cancel()
	var out, errb syncBuffer
	code = Main(ctx, suites.Default(), args, nil, &out, &errb)
	if ctx.Err() != nil {
		t.Fatalf("conform %v did not end within its hang guard\n%s", args, errb.String())
	}
	return code, out.String(), errb.String()
}

// TestRunUsageNamesTheBadValue: every bad flag value is a usage error (exit
// 2) that names it, with the valid choices where they are few, before any
// SUT is started.
func TestRunUsageNamesTheBadValue(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"run", "--sut", "builtin:reference", "--profile", "bogus"}, []string{"--profile bogus", "no such profile", "tlv, wire;", "ranvier-node", "are live"}},
		{[]string{"run", "--sut", "builtin:reference", "--profile", "wire,bogus,nope"}, []string{"--profile bogus,nope"}},
		{[]string{"list", "--profile", "nope"}, []string{"conform list: --profile nope: no such profile"}},
		{[]string{"run", "--sut", "builtin:reference", "--timeout", "0"}, []string{"--timeout 0s: want a duration above zero"}},
		{[]string{"run", "--sut", "builtin:reference", "--timeout", "-1s"}, []string{"--timeout -1s: want a duration above zero"}},
		{[]string{"run", "--sut", "builtin:reference", "--max-timeouts", "0"}, []string{"--max-timeouts 0: want at least 1"}},
		{[]string{"run", "--sut", "builtin:reference", "--parallel", "-1"}, []string{"--parallel -1: want 1 or more"}},
		{[]string{"run", "--sut", "nats://127.0.0.1:4222/lab", "--parallel", "4"}, []string{"--parallel 4: a SUT on a NATS subject is one session"}},
		{[]string{"run", "--sut", "builtin:reference", "--json", filepath.Join(dir, "missing", "r.json")}, []string{"--json " + filepath.Join(dir, "missing", "r.json") + ": cannot write there", "does not exist"}},
		{[]string{"run", "--sut", "builtin:reference", "--html", dir}, []string{"--html " + dir + ": cannot write there", "is a directory"}},
		{[]string{"run", "--sut", "builtin:reference", "--strict-baseline"}, []string{"--strict-baseline needs --baseline"}},
		{[]string{"run", "--sut", "builtin:reference", "--case", "nothing/*"}, []string{"no case matches --profile (all) --case nothing/*"}},
		{[]string{"diff", filepath.Join(dir, "none.json"), filepath.Join(dir, "none.json")}, []string{"conform diff: reading record"}},
		{[]string{"baseline", filepath.Join(dir, "none.json")}, []string{"conform baseline: reading record"}},
	} {
		code, _, stderr := runMain(t, tc.args...)
		if code != exitUsage {
			t.Errorf("%q: exit %d, want %d\n%s", tc.args, code, exitUsage, stderr)
		}
		for _, w := range tc.want {
			if !strings.Contains(stderr, w) {
				t.Errorf("%q: stderr %q lacks %q", tc.args, stderr, w)
			}
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("the checks left %d files behind", len(entries))
	}
}

// TestRunHelp: conform run -h lists every carrier, the profiles and the
// suites, and says how to select a whole suite.
func TestRunHelp(t *testing.T) {
	code, _, stderr := runMain(t, "run", "-h")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, w := range []string{"./PROGRAM", "exec:PROGRAM", "tcp://HOST:PORT", "lib:PATH.so", "nats://HOST:PORT/BASE", "builtin:reference", "builtin:mutant/NAME", "builtin:fault/NAME",
		"doppler, doppler-nats, graph,", "selecting all its profiles: live", "-parallel", "--case 'doppler/**'", "-allow-unimplemented"} {
		if !strings.Contains(stderr, w) {
			t.Errorf("run -h lacks %q:\n%s", w, stderr)
		}
	}
}

// TestListProfileIsNotSuite: --profile doppler is the doppler profile, not
// the doppler suite with its doppler-nats cases.
func TestListProfileIsNotSuite(t *testing.T) {
	_, prof, _ := runMain(t, "list", "--profile", "doppler")
	_, suite, _ := runMain(t, "list", "--case", "doppler/**")
	_, nats, _ := runMain(t, "list", "--profile", "doppler-nats")
	np, ns, nn := strings.Count(prof, "\n"), strings.Count(suite, "\n"), strings.Count(nats, "\n")
	if np == 0 || nn == 0 || np+nn != ns {
		t.Errorf("--profile doppler lists %d, doppler-nats %d, the suite %d", np, nn, ns)
	}
	if strings.Contains(prof, "\tdoppler-nats\t") {
		t.Error("--profile doppler lists doppler-nats cases")
	}
}

// TestParallelism: a SUT conform starts gets DefaultParallel sessions
// unless --parallel says otherwise; one it reaches or observes over the
// network gets one, since a device may serve one session at a time.
func TestParallelism(t *testing.T) {
	for _, tc := range []struct {
		flag       int
		spec, peer string
		want       int
	}{
		{0, "builtin:reference", "", DefaultParallel},
		{0, "exec:./shim", "", DefaultParallel},
		{0, "./shim", "", DefaultParallel},
		{0, "lib:./x.so", "", DefaultParallel},
		{0, "node-cmd ./node", "", DefaultParallel},
		{0, "tcp://10.0.0.7:7000", "", 1},
		{0, "nats://broker:4222/lab", "", 1},
		{0, "peer tcp://10.0.0.7:7000", "tcp://10.0.0.7:7000", 1},
		{3, "tcp://10.0.0.7:7000", "", 3},
		{1, "builtin:reference", "", 1},
	} {
		if got := parallelism(tc.flag, tc.spec, tc.peer); got != tc.want {
			t.Errorf("parallelism(%d, %q, %q) = %d, want %d", tc.flag, tc.spec, tc.peer, got, tc.want)
		}
	}
}

// TestTimingLine: the last line of conform run's text output sets the
// run's wall time against the sum of its cases' times, by suite, with the
// bound on cases at once and the longest case.
func TestTimingLine(t *testing.T) {
	t.Parallel()
	line := regexp.MustCompile(`(?m)^time: \d+\.\d\ds wall for (\d+\.\d\d)s of cases \(wire (\d+\.\d\d)s\), up to (\d+) live cases at once; longest wire/\S+ \d+\.\d\ds\n\z`)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, fmt.Sprint(DefaultParallel)},
		{[]string{"--parallel", "1"}, "1"},
	} {
		code, stdout, stderr := runMain(t, append([]string{"run", "--sut", "builtin:reference", "--profile", "wire"}, tc.args...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d\n%s", tc.args, code, stderr)
		}
		m := line.FindStringSubmatch(stdout)
		if m == nil {
			t.Fatalf("%v: no timing line ends the output:\n%s", tc.args, stdout)
		}
		if m[1] != m[2] || m[3] != tc.want {
			t.Errorf("%v: %q: the sum %s is not the wire suite's %s, or the bound is not %s", tc.args, m[0], m[1], m[2], tc.want)
		}
	}
}
