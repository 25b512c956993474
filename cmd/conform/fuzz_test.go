package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/conform-suite/conform/campaign"
	"github.com/conform-suite/conform/internal/hang"
	"github.com/conform-suite/conform/internal/waittest"
	"github.com/conform-suite/conform/suites"
	"github.com/conform-suite/conform/sut/builtin"
	"github.com/conform-suite/conform/sut/fault"
)

// findings returns the finding files of a campaign directory.
func findings(t *testing.T, out string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(campaign.FindingsDir(out), "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func TestFuzzList(t *testing.T) {
	r := conform(t, 30*time.Second, nil, "fuzz", "--list")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, want := range []string{"wire.read-frames\t", "wire.decode\t", "streams.track\t", "tlv.decode\t", "tlv.canonicalize\t", "tlv.hop\t", "doppler.check\t", "doppler.reassemble\t"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("--list does not name %s:\n%s", strings.TrimSpace(want), r.stdout)
		}
	}
}

func TestFuzzUsage(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"fuzz", "--sut", "builtin:reference", "--execs", "10"},                                     // no --out
		{"fuzz", "--sut", "builtin:reference", "--out", t.TempDir()},                                // no bound
		{"fuzz", "--sut", "builtin:reference", "--execs", "1", "--target", "no.such", "--out", "x"}, // no target
		{"fuzz", "--sut", "builtin:nothing", "--execs", "1", "--out", t.TempDir()},                  // no carrier
		{"fuzz", "--sut", "builtin:reference", "--execs", "1", "--out", t.TempDir(), "--seed-corpus", "/nonexistent"},
		{"fuzz", "worker", "--sut", "builtin:reference"},                  // no --queue
		{"fuzz", "--queue", "nats://127.0.0.1:1/x", "--out", t.TempDir()}, // no --execs
		{"replay"},
		{"replay", "/nonexistent.json", "--sut", "builtin:reference"},
		{"fuzz", "promote", "x.json"},
	} {
		if r := conform(t, 30*time.Second, nil, args...); r.code != exitUsage {
			t.Errorf("conform %v: exit %d, want %d\n%s", args, r.code, exitUsage, r.stderr)
		}
	}
}

// TestFuzzMutantReplayPromote fuzzes a mutant until it yields a finding,
// then replays the finding against the mutant (exit 1), the reference in
// process and over exec (exit 0), and promotes it to a corpus vector.
func TestFuzzMutantReplayPromote(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	r := conform(t, 60*time.Second, nil, "fuzz", "--sut", "builtin:mutant/zero-length-is-end", "--target", "wire.read-frames",
		"--execs", "3000", "--seed", "9", "--out", out)
	if r.code != 1 {
		t.Fatalf("fuzz: exit %d, want 1 (findings)\n%s", r.code, r.stderr)
	}
	files := findings(t, out)
	if len(files) == 0 {
		t.Fatalf("no finding written\n%s", r.stderr)
	}
	f, err := campaign.ReadFinding(files[0])
	if err != nil {
		t.Fatal(err)
	}
	if f.Target != "wire.read-frames" || f.Seed != 9 || f.Conform == "" || f.SUT != "builtin:mutant/zero-length-is-end" || len(f.Inputs) == 0 {
		t.Errorf("finding lacks what a finding holds: %+v", f)
	}
	if f.Kind == campaign.KindDiff && (f.Diff == "" || f.SUTAnswer == nil || f.ReferenceAnswer == nil) {
		t.Errorf("a diff finding without both answers and the diff: %s", files[0])
	}
	if r := conform(t, 30*time.Second, nil, "replay", files[0], "--sut", "builtin:mutant/zero-length-is-end"); r.code != 1 {
		t.Errorf("replay against the mutant: exit %d, want 1\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := conform(t, 30*time.Second, nil, "replay", files[0], "--sut", "builtin:reference"); r.code != 0 {
		t.Errorf("replay against the reference: exit %d, want 0\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := conform(t, 30*time.Second, nil, "replay", files[0], "--sut", "exec:"+bin+" reference"); r.code != 0 {
		t.Errorf("replay against the reference over exec: exit %d, want 0\n%s%s", r.code, r.stdout, r.stderr)
	}
	p := conform(t, 30*time.Second, nil, "fuzz", "promote", files[0], "--spec", "ranvier-wire §1.2", "--id", "wire/v1/fuzz-zero-length")
	if p.code != 0 {
		t.Fatalf("promote: exit %d\n%s", p.code, p.stderr)
	}
	var v struct {
		ID, Spec, Input, End string
	}
	if err := json.Unmarshal([]byte(p.stdout), &v); err != nil || v.ID != "wire/v1/fuzz-zero-length" || v.Spec != "ranvier-wire §1.2" || v.End == "" {
		t.Errorf("promoted vector %q (%v)", p.stdout, err)
	}
}

func TestFuzzReferenceClean(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	r := conform(t, 60*time.Second, nil, "fuzz", "--sut", "exec:"+bin+" reference", "--target", "all", "--execs", "300", "--out", out)
	if r.code != 0 {
		t.Fatalf("exit %d, want 0\n%s", r.code, r.stderr)
	}
	if files := findings(t, out); len(files) > 0 {
		t.Errorf("findings against the reference: %v", files)
	}
	if !strings.Contains(r.stderr, "0 findings") {
		t.Errorf("no summary line:\n%s", r.stderr)
	}
}

// TestFuzzResumeAfterKill kills a running campaign with SIGKILL once it has
// written a finding, then resumes it: the finding is still there, whole,
// and the campaign continues from its checkpoint rather than from the
// start.
func TestFuzzResumeAfterKill(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	args := []string{"fuzz", "--sut", "builtin:mutant/window-256", "--target", "streams", "--duration", "60s", "--out", out}
	cmd := exec.Command(bin, args...)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	guard := hang.Guard(t, 40*time.Second)
	deadline := time.Now().Add(guard)
	for len(findings(t, out)) == 0 || !fileExists(campaign.CheckpointPath(out)) {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("no finding within %v\n%s", guard, errb.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(1500 * time.Millisecond) // let a checkpoint move past the start
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	before := findings(t, out)
	for _, f := range before {
		if _, err := campaign.ReadFinding(f); err != nil {
			t.Errorf("after kill -9: %v", err)
		}
	}
	cp, err := campaign.ReadCheckpoint(out)
	if err != nil || cp == nil {
		t.Fatalf("checkpoint after kill -9: %v", err)
	}
	var done, furthest uint64
	for _, n := range cp.Next {
		done += n
		furthest = max(furthest, n)
	}
	if r := conform(t, 30*time.Second, nil, args...); r.code != exitUsage {
		t.Errorf("a second campaign in the same --out without --resume: exit %d, want %d", r.code, exitUsage)
	}
	// A budget in inputs rather than time, so that however loaded the
	// machine the resume has inputs past the checkpoint to run, which it
	// must, and no more.
	execs := strconv.FormatUint(furthest+200, 10)
	r := conform(t, 60*time.Second, nil, "fuzz", "--sut", "builtin:mutant/window-256", "--target", "streams", "--execs", execs, "--out", out, "--resume")
	if r.code != 1 {
		t.Fatalf("resume: exit %d, want 1 (findings)\n%s", r.code, r.stderr)
	}
	after := findings(t, out)
	for _, f := range before {
		if !slicesContains(after, f) {
			t.Errorf("finding %s lost on resume", f)
		}
	}
	cp2, err := campaign.ReadCheckpoint(out)
	if err != nil {
		t.Fatal(err)
	}
	var done2 uint64
	for name, n := range cp2.Next {
		if n < cp.Next[name] {
			t.Errorf("%s went back from %d to %d", name, cp.Next[name], n)
		}
		done2 += n
	}
	if done2 <= done || cp2.Execs <= cp.Execs {
		t.Errorf("resume ran nothing new: %d then %d inputs", done, done2)
	}
}

// TestFuzzFaultSUTs fuzzes SUTs that crash and hang: the campaign ends on
// time with crash and timeout findings, and leaves no process behind.
func TestFuzzFaultSUTs(t *testing.T) {
	t.Parallel()
	// The op timeout bounds every restart's Hello too, so it leaves a
	// loaded machine room to start the fault's process; only the hang pays
	// it per op, and so runs fewer inputs.
	var g waittest.Group
	defer g.Wait()
	for _, tc := range []struct{ fault, kind, timeout, execs string }{
		{"crash", campaign.KindCrash, "10s", "600"},
		{"hang", campaign.KindTimeout, "2s", "60"},
		{"garbage", campaign.KindProtocol, "10s", "600"},
	} {
		// At once in this test's place: the hang's seven restarts wait
		// 14 s on its timeouts, and as a parallel subtest it began
		// behind the package's other tests.
		g.Run(t, tc.fault, func(t *testing.T) {
			out := t.TempDir()
			mark := processMark(t)
			r := conform(t, 90*time.Second, []string{fault.EnvAfter + "=3", mark}, "fuzz", "--sut", "builtin:fault/"+tc.fault,
				"--target", "wire.read-frames", "--execs", tc.execs, "--timeout", tc.timeout, "--out", out)
			if r.code != 1 {
				t.Fatalf("exit %d, want 1\n%s", r.code, r.stderr)
			}
			files := findings(t, out)
			kinds := map[string]bool{}
			for _, f := range files {
				fd, err := campaign.ReadFinding(f)
				if err != nil {
					t.Fatal(err)
				}
				kinds[fd.Kind] = true
				if fd.SUTError == nil {
					t.Errorf("%s finding without the SUT's error", fd.Kind)
				}
			}
			if !kinds[tc.kind] {
				t.Errorf("no %s finding among %v\n%s", tc.kind, files, r.stderr)
			}
			if !strings.Contains(r.stderr, "SUT restarts") {
				t.Errorf("no restart count in the summary:\n%s", r.stderr)
			}
			if left := marked(t, mark, 0); len(left) > 0 {
				t.Errorf("processes left behind after the campaign: %v", left)
			}
		})
	}
}

// processMark returns an environment entry unique to this test, which every
// process conform starts inherits.
func processMark(t *testing.T) string {
	return fmt.Sprintf("CONFORM_TEST_MARK=%s-%d", strings.ReplaceAll(t.Name(), "/", "-"), time.Now().UnixNano())
}

// markWait bounds how long marked waits for the marked processes to come
// to the number expected: a child just started may not have exec'd yet
// (until then it shows its parent's environment), and one just killed may
// not have been reaped. It is a hang guard, not a timing expectation.
const markWait = 30 * time.Second

// marked returns the processes whose environment holds mark, read from
// /proc, once there are want of them or markWait has passed, whichever
// comes first; the test is skipped where there is no /proc.
func marked(t *testing.T, mark string, want int) []string {
	t.Helper()
	deadline := time.Now().Add(markWait)
	for {
		got := markedNow(t, mark)
		if len(got) == want || time.Now().After(deadline) {
			return got
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// markedNow returns the processes whose environment holds mark now.
func markedNow(t *testing.T, mark string) []string {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Skip("no /proc to look for processes left behind")
	}
	var out []string
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil || !bytes.Contains(env, []byte(mark+"\x00")) {
			continue
		}
		cmd, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		out = append(out, e.Name()+": "+strings.ReplaceAll(string(cmd), "\x00", " "))
	}
	return out
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func slicesContains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// TestMarkedFindsAChild: marked sees a process that carries the mark, once
// it has exec'd, however loaded the machine, and stops seeing it once the
// process has been reaped; it sees no process for another mark.
func TestMarkedFindsAChild(t *testing.T) {
	mark := processMark(t)
	cmd := exec.Command("sleep", "30")
	cmd.Env = append(os.Environ(), mark)
	if err := cmd.Start(); err != nil {
		t.Skip("no sleep to start:", err)
	}
	defer cmd.Wait()
	defer cmd.Process.Kill()
	if left := marked(t, mark, 1); len(left) != 1 || !strings.Contains(left[0], "sleep 30") {
		t.Errorf("marked = %v while one marked process, sleep 30, runs", left)
	}
	if other := markedNow(t, mark+"-other"); len(other) != 0 {
		t.Errorf("marked sees %v for a mark no process carries", other)
	}
	cmd.Process.Kill()
	cmd.Wait()
	if left := marked(t, mark, 0); len(left) != 0 {
		t.Errorf("marked = %v after the process ended", left)
	}
}

// TestFuzzHelpExitCodes: conform fuzz -h says what each exit status means.
func TestFuzzHelpExitCodes(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := Main(context.Background(), suites.Default(), []string{"fuzz", "-h"}, nil, &stdout, &stderr); code != 0 {
		t.Fatalf("fuzz -h: exit %d", code)
	}
	for _, want := range []string{"Exit status", "\n  0  ", "\n  1  DIR/findings holds a finding", "\n  2  a command line",
		"\n  3  the campaign could not run", "broker is unreachable", "conform fuzz campaigns", "--replace"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("fuzz -h does not say %q:\n%s", want, stderr.String())
		}
	}
}

// TestFuzzCouldNotRun: a SUT that does not start, a broker that does not
// answer, a SUT that answers nothing before the campaign ends and a
// campaign that ends before its first input exit 3, not 0 or 1. The
// hanging SUT also shows --duration's bound: with an op timeout of an
// hour, a one-second campaign ends well inside the hang guard. (On a
// loaded machine the second may pass before the hanging SUT is sent its
// first input: nothing is judged either way.)
func TestFuzzCouldNotRun(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		args []string
		say  string
	}{
		{"SUT exits before Hello", []string{"fuzz", "--sut", "builtin:fault/early-exit", "--execs", "10"}, "early-exit"},
		{"broker unreachable", []string{"fuzz", "--queue", "nats://127.0.0.1:1/x", "--execs", "10"}, "127.0.0.1:1"},
		{"SUT hangs", []string{"fuzz", "--sut", "builtin:fault/hang", "--target", "wire.read-frames", "--duration", "1s", "--timeout", "1h"}, "nothing judged: "},
		{"no input before the end", []string{"fuzz", "--sut", "builtin:reference", "--target", "wire.read-frames", "--duration", "1ns"}, "nothing judged: the campaign ended before its first input"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mark := processMark(t)
			r := conform(t, 30*time.Second, []string{mark}, append(tc.args, "--out", t.TempDir())...)
			if r.code != exitCouldNotRun || !strings.Contains(r.stderr, tc.say) {
				t.Errorf("exit %d, want %d, saying %q\n%s", r.code, exitCouldNotRun, tc.say, r.stderr)
			}
			if left := marked(t, mark, 0); len(left) > 0 {
				t.Errorf("processes left behind: %v", left)
			}
		})
	}
}

// TestFuzzResumeAnotherSUTRefused: --resume of a campaign with another SUT
// exits 2 and names the difference.
func TestFuzzResumeAnotherSUTRefused(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	ctx := context.Background()
	var stderr bytes.Buffer
	if code := Main(ctx, suites.Default(), []string{"fuzz", "--sut", "builtin:reference", "--target", "tlv.pack-policy", "--execs", "100", "--out", out}, nil, io.Discard, &stderr); code != 0 {
		t.Fatalf("first run: exit %d\n%s", code, stderr.String())
	}
	stderr.Reset()
	code := Main(ctx, suites.Default(), []string{"fuzz", "--sut", "builtin:mutant/encode-length-wraps", "--target", "tlv.pack-policy", "--execs", "200", "--out", out, "--resume"}, nil, io.Discard, &stderr)
	if code != exitUsage || !strings.Contains(stderr.String(), `SUT implementation: "conform mutant encode-length-wraps" here, "conform reference" in the campaign`) {
		t.Errorf("--resume with another SUT: exit %d\n%s", code, stderr.String())
	}
}

// TestReplayEvidence replays a finding whose one input holds two entries,
// as conform replay does: it reproduces against the mutant, showing the
// input and the differing fields in conform.v1's terms and nothing of Go,
// and does not against the reference.
func TestReplayEvidence(t *testing.T) {
	ctx := context.Background()
	input := `{"inputs":[{"chunks":[{"data":"AAAAAQc="}]},{"chunks":[{"data":"AAAAAAAAAAEH"}],"endOfStream":true}]}`
	f := &campaign.Finding{Version: campaign.FindingVersion, Target: "wire.read-frames", Kind: campaign.KindDiff,
		Inputs: []json.RawMessage{json.RawMessage(input)}}
	tg, inputs, err := f.ParseInputs(campaign.Targets(suites.Default()))
	if err != nil {
		t.Fatal(err)
	}
	m, _ := suites.Default().MutantImpl("zero-length-is-end")
	e := campaign.NewEngine(builtin.New("builtin:mutant/zero-length-is-end", m), suites.Default(), "", new(campaign.Seeds), 1, time.Minute, nil)
	obs, err := e.Evaluate(ctx, tg, inputs)
	if err != nil || len(obs) == 0 {
		t.Fatalf("the mutant shows nothing on %s: %v", input, err)
	}
	f.Signature = obs[0].Signature
	path := filepath.Join(t.TempDir(), "f.json")
	b, _ := json.Marshal(f)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := Main(ctx, suites.Default(), []string{"replay", path, "--sut", "builtin:mutant/zero-length-is-end"}, nil, &stdout, &stderr); code != exitFindings {
		t.Fatalf("replay against the mutant: exit %d\n%s%s", code, stdout.String(), stderr.String())
	}
	out := stdout.String()
	for _, want := range []string{"reproduces against builtin:mutant/zero-length-is-end",
		`input: {"inputs":[{"chunks":[{"data":"AAAAAAAAAAEH"}],"endOfStream":true}]}`, "yields"} {
		if !strings.Contains(out, want) {
			t.Errorf("replay output lacks %q:\n%s", want, out)
		}
	}
	for _, bad := range []string{"conformpb.", "protocmp", "Inverse(", "readView", "struct {"} {
		if strings.Contains(out, bad) {
			t.Errorf("replay output shows %q:\n%s", bad, out)
		}
	}
	stdout.Reset()
	if code := Main(ctx, suites.Default(), []string{"replay", path, "--sut", "builtin:reference"}, nil, &stdout, &stderr); code != 0 {
		t.Errorf("replay against the reference: exit %d\n%s%s", code, stdout.String(), stderr.String())
	}
}
