package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

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
		case <-time.After(10 * time.Second):
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
	case <-time.After(30 * time.Second):
		t.Fatalf("conform %s printed no address", args[0])
	}
	return ""
}

// TestReferenceOverTCP: the reference served by conform reference --listen
// passes every case over tcp://, in both encodings.
func TestReferenceOverTCP(t *testing.T) {
	for _, enc := range [][]string{nil, {"--json"}} {
		t.Run(fmt.Sprint("encoding", enc), func(t *testing.T) {
			addr := startTCPReference(t, enc...)
			rec := filepath.Join(t.TempDir(), "rec.json")
			// Every suite but the Ranvier live one, whose sockets are the
			// SUT's own and do not depend on the carrier.
			r := conform(t, 2*time.Minute, nil, "run", "--sut", addr, "--profile", "wire,streams,tlv,doppler,graph", "--json", rec)
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
		if c.Outcome == reports.Error && (c.ErrorKind != "crash" || !strings.Contains(c.Message, "signal: segmentation fault")) {
			t.Errorf("%s: error %s %q does not name the signal", c.ID, c.ErrorKind, c.Message)
		}
	}
	if _, err := os.Stat(so); err != nil {
		t.Fatal(err)
	}
}
