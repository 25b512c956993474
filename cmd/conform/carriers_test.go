package main

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/conform-suite/conform/internal/hang"
	"github.com/conform-suite/conform/reports"
)

// serverArgv0 is the name the reference server is started under, so that
// assertNoChildren (which looks for processes started as bin) tells it
// apart from what a run leaves behind.
const serverArgv0 = "conform-reference-server"

// startTCPReference starts "conform reference --listen tcp://127.0.0.1:0"
// and returns the address it printed on stderr.
func startTCPReference(t *testing.T, extra ...string) string {
	t.Helper()
	return startReference(t, "tcp://127.0.0.1:", append([]string{"--listen", "tcp://127.0.0.1:0"}, extra...)...)
}

// startReference starts "conform reference ARGS", waits for its first
// stderr line "listening on ADDR…" and returns ADDR, which must begin with
// want. The server is stopped with SIGTERM when the test ends, and must
// exit 0.
func startReference(t *testing.T, want string, args ...string) string {
	t.Helper()
	line := startServer(t, true, append([]string{"reference"}, args...)...)
	addr, found := strings.CutPrefix(line, "listening on ")
	addr, _, _ = strings.Cut(addr, " ")
	if !found || !strings.HasPrefix(addr, want) || strings.HasSuffix(addr, ":0") {
		t.Fatalf("first stderr line %q is not \"listening on %s…\"", line, want)
	}
	return addr
}

// startServer starts "conform ARGS" as a server of its own and returns the
// first line it prints, on stderr or on stdout, where a server says where it
// listens. It is stopped with SIGTERM when the test ends, and must exit 0.
func startServer(t *testing.T, onStderr bool, args ...string) string {
	t.Helper()
	cmd := &exec.Cmd{Path: bin, Args: append([]string{serverArgv0}, args...)}
	pipe := cmd.StdoutPipe
	if onStderr {
		pipe = cmd.StderrPipe
	}
	out, err := pipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			default: // only the first line is wanted; never block the server
			}
		}
		close(lines)
		done <- cmd.Wait()
	}()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("conform %s exited with %v after SIGTERM", args[0], err)
			}
		case <-time.After(hang.Guard(t, 10*time.Second)):
			cmd.Process.Kill()
			<-done
			t.Errorf("conform %s did not stop after SIGTERM", args[0])
		}
	})
	select {
	case line, ok := <-lines:
		if !ok {
			t.Fatalf("conform %s exited without printing its address", args[0])
		}
		return line
	case <-time.After(hang.Guard(t, 30*time.Second)):
		t.Fatalf("conform %s printed no address", args[0])
	}
	return ""
}

// TestReferenceOverTCP: the reference served by conform reference --listen
// passes every case over tcp://, in both encodings, over one connection and
// (--parallel 4) over a connection for each live case running beside the
// others.
func TestReferenceOverTCP(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ enc, parallel []string }{{nil, nil}, {[]string{"--json"}, []string{"--parallel", "4"}}} {
		t.Run(fmt.Sprint("encoding", tc.enc, tc.parallel), func(t *testing.T) {
			t.Parallel()
			addr := startTCPReference(t, tc.enc...)
			rec := filepath.Join(t.TempDir(), "rec.json")
			// Every suite but the Ranvier live one, whose sockets are the
			// SUT's own and do not depend on the carrier.
			args := append([]string{"run", "--sut", addr, "--profile", "wire,streams,tlv,doppler,doppler-nats,graph", "--json", rec}, tc.parallel...)
			r := conform(t, 2*time.Minute, nil, args...)
			if r.code != 0 {
				t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			if n := count(r.rec, reports.Pass); n < 40 {
				t.Errorf("%d cases pass, want at least 40", n)
			}
			for _, o := range []reports.Outcome{reports.Fail, reports.Error, reports.Warn, reports.Skip} {
				if n := count(r.rec, o); n != 0 {
					t.Errorf("%d cases %s\n%s", n, o, r.stdout)
				}
			}
			if r.rec.SUT.Carrier != addr {
				t.Errorf("record carrier %q, want %q", r.rec.SUT.Carrier, addr)
			}
		})
	}
}

func TestTCPUnreachable(t *testing.T) {
	// Port 1 on loopback: nothing listens there.
	r := conform(t, 30*time.Second, nil, "run", "--sut", "tcp://127.0.0.1:1", "--case", "wire/1.2/*")
	if r.code != 3 || !strings.Contains(r.stderr, "cannot connect") {
		t.Errorf("exit %d, stderr %q; want 3 and a connect error", r.code, r.stderr)
	}
	r = conform(t, 30*time.Second, nil, "run", "--sut", "tcp://nohostport")
	if r.code != 2 {
		t.Errorf("a bad tcp:// address: exit %d, want 2", r.code)
	}
}

// needGCC skips a test that builds C when the tools are missing, saying so.
func needGCC(t *testing.T) {
	t.Helper()
	for _, tool := range []string{"gcc", "make"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("skipping: %s is not installed, so the C example cannot be built", tool)
		}
	}
}

// TestCExampleOverLib builds examples/c with its Makefile and runs every wire
// case against it over lib:, the way a binding author would.
func TestCExampleOverLib(t *testing.T) {
	t.Parallel()
	needGCC(t)
	dir := t.TempDir()
	so := filepath.Join(dir, "libexample.so")
	if b, err := exec.Command("make", "-s", "-C", filepath.Join("..", "..", "examples", "c"), "OUT="+so).CombinedOutput(); err != nil {
		t.Fatalf("make -C examples/c: %v\n%s", err, b)
	}
	rec := filepath.Join(dir, "rec.json")
	r := conform(t, 2*time.Minute, nil, "run", "--sut", "lib:"+so, "--profile", "wire", "--json", rec)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if n := count(r.rec, reports.Pass); n < 40 {
		t.Errorf("%d wire cases pass, want at least 40", n)
	}
	for _, o := range []reports.Outcome{reports.Fail, reports.Error, reports.Warn, reports.Skip} {
		if n := count(r.rec, o); n != 0 {
			t.Errorf("%d cases %s\n%s", n, o, r.stdout)
		}
	}
	if r.rec.SUT.Carrier != "lib:"+so {
		t.Errorf("record carrier %q", r.rec.SUT.Carrier)
	}
}

// TestLibCrashGoesOn: a library that segfaults on every third call is
// recorded as error naming the signal, and the run completes with a
// restarted host and no process left behind.
func TestLibCrashGoesOn(t *testing.T) {
	needGCC(t)
	dir := t.TempDir()
	so := filepath.Join(dir, "libcrash.so")
	src := filepath.Join("..", "..", "sut", "lib", "testdata", "crash.c")
	if b, err := exec.Command("gcc", "-D_GNU_SOURCE", "-shared", "-fPIC", "-I", filepath.Join("..", "..", "include"), "-o", so, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc crash.c: %v\n%s", err, b)
	}
	rec := filepath.Join(dir, "rec.json")
	r := conform(t, 2*time.Minute, nil, "run", "--sut", "lib:"+so, "--profile", "wire", "--json", rec)
	if r.code != 1 {
		t.Fatalf("exit %d, want 1\n%s%s", r.code, r.stdout, r.stderr)
	}
	errs, skips := count(r.rec, reports.Error), count(r.rec, reports.Skip)
	if errs < 5 || skips < 5 {
		t.Errorf("%d errors and %d skips: crashes and restarts should alternate", errs, skips)
	}
	if got := len(r.rec.Cases); got < 40 {
		t.Errorf("only %d cases recorded: the run must go on", got)
	}
	for _, c := range r.rec.Cases {
		if c.Outcome == reports.Error && (c.ErrorKind != reports.KindCrash || !strings.Contains(c.Message, "signal: segmentation fault")) {
			t.Errorf("%s: error %s %q does not name the signal", c.ID, c.ErrorKind, c.Message)
		}
	}
	if _, err := os.Stat(so); err != nil {
		t.Fatal(err)
	}
}

// alive reports whether pid is a process that has not exited (a zombie has).
func alive(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(stat)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(f) > 0 && f[0] != "Z" && f[0] != "X"
}

// readPid waits for a shell to write a process ID into path.
func readPid(t *testing.T, path string) int {
	t.Helper()
	deadline := time.Now().Add(hang.Guard(t, 30*time.Second))
	for {
		b, _ := os.ReadFile(path)
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && strings.HasSuffix(string(b), "\n") {
			return pid
		}
		if time.Now().After(deadline) {
			t.Fatalf("no process ID in %s", path)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitGone waits, up to a hang guard, for pid to end.
func waitGone(t *testing.T, pid int, what string) {
	t.Helper()
	deadline := time.Now().Add(hang.Guard(t, 20*time.Second))
	for alive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("%s (pid %d) is still running", what, pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func needLinuxShell(t *testing.T) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("skipping: relies on Linux's /proc and parent-death signal")
	}
	for _, tool := range []string{"bash", "setsid", "sleep"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("skipping: no %s", tool)
		}
	}
}

// TestEscapedDescendantDoesNotHoldConform is issue 13's reproduction: a
// SUT whose descendant leaves its session and holds its stderr. conform
// used to write its record and then wait on that stderr for ever; now it
// exits, and the descendant is gone.
func TestEscapedDescendantDoesNotHoldConform(t *testing.T) {
	needLinuxShell(t)
	pidfile := filepath.Join(t.TempDir(), "escapee")
	sut := fmt.Sprintf(`exec:bash -c 'setsid sleep 600 & echo $! > %s; exec %s reference'`, pidfile, bin)
	r := conform(t, 60*time.Second, nil, "run", "--sut", sut, "--case", "wire/1.2/*")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	waitGone(t, readPid(t, pidfile), "the SUT's setsid'd descendant")
}

// TestSecondSignalExitsAtOnce: a first SIGINT cancels, a second exits with
// 130 whatever conform is doing — here, conform reference blocked reading a
// stdin that stays open, which the first one cannot end. (Before, every
// SIGINT after the first was swallowed.)
func TestSecondSignalExitsAtOnce(t *testing.T) {
	cmd := exec.Command(bin, "reference")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	// The opening request, and its Hello back: conform is running, and its
	// signal handling in place.
	stdin.Write([]byte{0, 0, 0, 0})
	if _, err := bufio.NewReader(stdout).Peek(4); err != nil {
		t.Fatalf("no Hello: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	// Signals of one kind sent close together may arrive as one, so SIGINT
	// is repeated until conform exits; the first cannot end it.
	guard := time.After(hang.Guard(t, 20*time.Second))
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for wait := true; wait; {
		cmd.Process.Signal(syscall.SIGINT)
		select {
		case err = <-done:
			wait = false
		case <-tick.C:
		case <-guard:
			t.Fatal("conform did not exit after repeated SIGINTs")
		}
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Fatalf("exit %v, want exit status 130", err)
	}
}

// TestKill9LeavesNothing kills conform with SIGKILL in the middle of a run
// that started a SUT (with a setsid'd descendant) and the embedded NATS
// server. The SUT dies by its parent-death signal; what nothing could kill
// then — the descendant, the JetStream store directory — the next conform
// start sweeps.
func TestKill9LeavesNothing(t *testing.T) {
	needLinuxShell(t)
	dir := t.TempDir()
	tmp := filepath.Join(dir, "tmp")
	if err := os.Mkdir(tmp, 0o700); err != nil {
		t.Fatal(err)
	}
	escapee, sutPid := filepath.Join(dir, "escapee"), filepath.Join(dir, "sut")
	sut := fmt.Sprintf(`exec:bash -c 'setsid sleep 600 & echo $! > %s; echo $$ > %s; exec %s reference'`, escapee, sutPid, bin)
	cmd := exec.Command(bin, "run", "--sut", sut, "--profile", "doppler-nats")
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	sleeper, child := readPid(t, escapee), readPid(t, sutPid)
	deadline := time.Now().Add(hang.Guard(t, 30*time.Second))
	var stores []string
	for len(stores) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the run never started its embedded NATS server")
		}
		time.Sleep(20 * time.Millisecond)
		stores, _ = filepath.Glob(filepath.Join(tmp, "conform-nats-js-*"))
	}
	cmd.Process.Kill()
	cmd.Wait()

	waitGone(t, child, "the SUT after conform's SIGKILL")
	if _, err := os.Stat(stores[0]); err != nil {
		t.Fatalf("the store directory went with conform (%v): nothing left to sweep, the test proves nothing", err)
	}
	r := conform(t, 60*time.Second, []string{"TMPDIR=" + tmp}, "run", "--sut", "builtin:reference", "--case", "wire/1.2/*")
	if r.code != 0 {
		t.Fatalf("the next run: exit %d\n%s", r.code, r.stderr)
	}
	waitGone(t, sleeper, "the descendant after the next conform start")
	if _, err := os.Stat(stores[0]); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the store directory %s survived the next conform start: %v", stores[0], err)
	}
}

// TestSUTUsageErrors: a --sut value that names no SUT is a usage error
// (exit 2) naming the value.
func TestSUTUsageErrors(t *testing.T) {
	for _, tt := range []struct{ spec, says string }{
		{"foo:bar", `unknown carrier "foo:"`},
		{"tcp://127.0.0.1:99999", `the port "99999"`},
		{"/tmp", "/tmp is a directory"},
	} {
		r := conform(t, 30*time.Second, nil, "run", "--sut", tt.spec, "--case", "wire/1.2/*")
		if r.code != 2 || !strings.Contains(r.stderr, tt.says) || !strings.Contains(r.stderr, tt.spec) {
			t.Errorf("--sut %s: exit %d, stderr %q; want 2 and a message naming it, saying %q", tt.spec, r.code, r.stderr, tt.says)
		}
	}
}

// TestSUTStartedOnce: a SUT that cannot be started a second time while it
// runs (here it holds a lock directory, as one holding a device or a fixed
// port would) is not failed for it: conform says on stderr that it could
// not open another session, and runs the live cases one at a time over the
// first; every case passes.
func TestSUTStartedOnce(t *testing.T) {
	t.Parallel()
	needLinuxShell(t)
	lock := filepath.Join(t.TempDir(), "lock")
	sut := fmt.Sprintf(`exec:sh -c 'mkdir %s || exit 9; %s reference; rmdir %s'`, lock, bin, lock)
	rec := filepath.Join(t.TempDir(), "rec.json")
	r := conform(t, 2*time.Minute, nil, "run", "--sut", sut, "--case", "live/1.3/*", "--json", rec)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, "could not open another session with the SUT, so its cases go on one at a time") {
		t.Errorf("stderr does not say why the cases ran one at a time:\n%s", r.stderr)
	}
	if n := count(r.rec, reports.Pass); n < 4 {
		t.Errorf("%d cases pass, want the live/1.3 cases\n%s", n, r.stdout)
	}
}
