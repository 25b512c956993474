package fault_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/conform-suite/conform/internal/hang"
	"github.com/conform-suite/conform/proc"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/reports"
	"github.com/conform-suite/conform/suites"
	"github.com/conform-suite/conform/sut"
	sutexec "github.com/conform-suite/conform/sut/exec"
	"github.com/conform-suite/conform/sut/fault"
	"github.com/conform-suite/conform/sut/lib"
	"github.com/conform-suite/conform/sut/tcp"
)

// The test binary plays every child: with envRole set to "exec" it serves
// fault argv[1] on stdio, to "tcp" it serves it on a loopback port it
// prints, and to "lib-host" it is the lib: carrier's host.
const envRole = "CONFORM_FAULT_TEST_ROLE"

// envMark marks every process a scenario starts, and every process those
// start: the scenario's processes are found by it in /proc.
const envMark = "CONFORM_FAULT_TEST_MARK"

// hangGuard bounds each scenario on an idle machine; hang.Guard stretches
// it on a loaded one. It guards against a hang and is never a timing
// assertion: every wait inside a scenario is far shorter.
const hangGuard = 30 * time.Second

func TestMain(m *testing.M) {
	switch os.Getenv(envRole) {
	case "":
		os.Exit(m.Run())
	case "exec":
		os.Exit(serveFault(os.Args[1], os.Stdin, os.Stdout))
	case "tcp":
		os.Exit(serveTCP(os.Args[1]))
	case lib.HostCommand:
		if err := lib.ServeHost(context.Background(), os.Args[2]); err != nil {
			fmt.Fprintln(os.Stderr, "lib-host:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	fmt.Fprintln(os.Stderr, "unknown role")
	os.Exit(2)
}

func serveFault(name string, r *os.File, w *os.File) int {
	f, ok := fault.Lookup(name)
	if !ok {
		fmt.Fprintln(os.Stderr, "no fault", name)
		return 2
	}
	if err := f.Serve(context.Background(), suites.Default().Reference(), r, w); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// serveTCP serves the fault on every connection to a loopback port, whose
// address it prints. A fault that ends its process ends the server.
func serveTCP(name string) int {
	f, ok := fault.Lookup(name)
	if !ok {
		return 2
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	fmt.Println(ln.Addr())
	for {
		c, err := ln.Accept()
		if err != nil {
			return 1
		}
		go func() {
			defer c.Close()
			_ = f.Serve(context.Background(), suites.Default().Reference(), c, c)
		}()
	}
}

// A scenario is one fault over one carrier and what conform must make of it.
type scenario struct {
	carrier string // exec, tcp or lib
	fault   string // a fault's name; for lib, hostile.c's CONFORM_TESTLIB
	env     []string
	// start is the kind of the start error, when the SUT must not start.
	start reports.ErrorKind
	// ops are the kinds of the errors of the ops after a successful start,
	// in order: "" for an op answered, "answer" for an op answered with
	// an Error (checked by answer).
	ops []reports.ErrorKind
	// says is what the start error, the last op's error, or each answered
	// Error must say.
	says string
	// escapes: the SUT starts a descendant that must be found, then gone.
	escapes bool
}

const answered reports.ErrorKind = "answered-error"

func matrix() []scenario {
	var s []scenario
	add := func(carriers string, sc scenario) {
		for _, c := range strings.Fields(carriers) {
			sc.carrier = c
			s = append(s, sc)
		}
	}
	crashEnv := []string{fault.EnvAfter + "=1"}
	add("exec tcp", scenario{fault: "crash", env: crashEnv, ops: []reports.ErrorKind{reports.KindCrash}})
	add("exec tcp", scenario{fault: "hang", ops: []reports.ErrorKind{reports.KindTimeout}})
	add("exec", scenario{fault: "hang-before-hello", start: reports.KindStart, says: "did not say Hello within 1s"})
	add("tcp", scenario{fault: "hang-before-hello", start: reports.KindStart, says: "did not say Hello in time"})
	add("exec tcp", scenario{fault: "garbage", ops: []reports.ErrorKind{reports.KindProtocol}, says: "not a Response"})
	add("exec tcp", scenario{fault: "oversize", ops: []reports.ErrorKind{reports.KindProtocol}, says: "frame length of 4294967295 bytes"})
	add("exec tcp", scenario{fault: "huge-error", ops: []reports.ErrorKind{answered, answered}, says: "EEEE"})
	add("exec tcp", scenario{fault: "stdout-text", start: reports.KindStart, says: `wrote text into its protocol stream, where a 4-byte length should be: "hello from a debug print\n"`})
	add("exec tcp", scenario{fault: "wrong-id", ops: []reports.ErrorKind{reports.KindProtocol}, says: "carries id 1001, the request was 1"})
	add("exec tcp", scenario{fault: "flood", ops: []reports.ErrorKind{reports.KindProtocol}})
	add("exec tcp", scenario{fault: "early-exit", start: reports.KindStart})
	// Hello, one answer, a crash, and then a SUT that never says Hello
	// again: each restart is a start error bounded by the op's context.
	add("exec", scenario{fault: "lost", ops: []reports.ErrorKind{reports.KindCrash, reports.KindStart, reports.KindStart}, says: "did not say Hello within the op's time"})
	add("tcp", scenario{fault: "lost", ops: []reports.ErrorKind{reports.KindCrash, reports.KindStart, reports.KindStart}, says: "reconnecting once failed"})
	// A new escapee at each restart; every one must be gone at the end.
	add("exec", scenario{fault: "escape", ops: []reports.ErrorKind{reports.KindTimeout, reports.KindTimeout}, escapes: true})

	add("lib", scenario{fault: "crash", ops: []reports.ErrorKind{reports.KindCrash, reports.KindCrash}, says: "signal: segmentation fault"})
	add("lib", scenario{fault: "hang", ops: []reports.ErrorKind{reports.KindTimeout}})
	add("lib", scenario{fault: "hang-before-hello", start: reports.KindStart, says: "did not say Hello within 1s"})
	add("lib", scenario{fault: "exit-before-hello", start: reports.KindStart, says: "exited before its Hello (exit status 3)"})
	add("lib", scenario{fault: "abort-in-constructor", start: reports.KindStart, says: "(signal: aborted)"})
	add("lib", scenario{fault: "garbage", ops: []reports.ErrorKind{reports.KindProtocol}})
	add("lib", scenario{fault: "claim-4gib", ops: []reports.ErrorKind{answered, answered}, says: "answered 4294967296 bytes, above the 16777216-byte frame ceiling"})
	add("lib", scenario{fault: "claim-1tib", ops: []reports.ErrorKind{answered}, says: "answered 1099511627776 bytes, above"})
	add("lib", scenario{fault: "huge-error", ops: []reports.ErrorKind{answered, answered}, says: "EEEE"})
	add("lib", scenario{fault: "printf", ops: []reports.ErrorKind{"", ""}})
	add("lib", scenario{fault: "wrong-id", ops: []reports.ErrorKind{reports.KindProtocol}, says: "carries id 1001"})
	add("lib", scenario{fault: "escape", ops: []reports.ErrorKind{"", ""}, escapes: true})
	return s
}

// TestHostileSUTs runs every fault over every carrier where it applies and
// checks, for each: the kind of error conform records, that the scenario
// ends (a hang guard), that conform's memory stays bounded (heap allocated
// during the scenario and heap still live after it, from runtime/metrics),
// and that no process the scenario started survives it.
func TestHostileSUTs(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("skipping: the processes a scenario leaves are found through Linux's /proc")
	}
	hostile := buildHostile(t)
	for _, sc := range matrix() {
		t.Run(sc.carrier+"/"+sc.fault, func(t *testing.T) {
			if sc.carrier == "lib" && hostile == "" {
				t.Skip("skipping: no C compiler to build testdata/hostile.c")
			}
			mark := fmt.Sprintf("%s=%s-%d", envMark, strings.ReplaceAll(t.Name(), "/", "-"), time.Now().UnixNano())
			env := append([]string{mark, fault.EnvState + "=" + filepath.Join(t.TempDir(), "state")}, sc.env...)
			live := liveHeap()
			allocs := heapAllocs()
			done := make(chan struct{})
			go func() {
				defer close(done)
				play(t, sc, hostile, env, mark)
			}()
			select {
			case <-done:
			case <-time.After(hang.Guard(t, hangGuard)):
				t.Fatalf("the scenario did not end within %v", hangGuard)
			}
			// A 15 MiB answer costs its bytes a few times over while it is
			// decoded, and nothing once it has been handed over.
			allocated, grew := heapAllocs()-allocs, int64(liveHeap())-int64(live)
			t.Logf("allocated %.1f MiB, live heap %+.1f MiB", float64(allocated)/(1<<20), float64(grew)/(1<<20))
			if allocated > 160<<20 {
				t.Errorf("the scenario allocated %d MiB", allocated>>20)
			}
			if grew > 16<<20 {
				t.Errorf("the live heap grew by %d MiB across the scenario", grew>>20)
			}
			if left := waitNoneMarked(mark); len(left) > 0 {
				t.Errorf("processes survived the scenario: %v", left)
			}
		})
	}
}

// play runs one scenario. It runs in a goroutine of its own: it reports
// with Errorf and returns, never FailNow.
func play(t *testing.T, sc scenario, hostile string, env []string, mark string) {
	helloTimeout, opTimeout := 10*time.Second, 10*time.Second
	if sc.start != "" {
		helloTimeout = time.Second
	}
	c, stop, err := open(sc, hostile, env, helloTimeout)
	defer stop()
	if sc.start != "" {
		checkErr(t, "start", err, sc.start, sc.says)
		return
	}
	if err != nil {
		t.Errorf("start: %v", err)
		return
	}
	defer c.Close() // runs before stop
	if sc.escapes && !waitMarked(mark, 2) {
		t.Errorf("the escapee never appeared: %v", findMarked(mark))
	}
	for i, want := range sc.ops {
		timeout := opTimeout
		if want == reports.KindTimeout || want == reports.KindStart {
			timeout = 500 * time.Millisecond
		}
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		began := time.Now()
		resp, err := c.Do(ctx, decodeReq())
		cancel()
		what := fmt.Sprintf("op %d", i+1)
		switch want {
		case "":
			if err != nil || resp.GetError() != nil {
				t.Errorf("%s: %v %v", what, resp, err)
			}
		case answered:
			msg := resp.GetError().GetMessage()
			if err != nil || !strings.Contains(msg, sc.says) {
				t.Errorf("%s: an Error answer saying %q, got %.200v, %v", what, sc.says, resp, err)
			}
			if len(msg) > reports.MaxMessage+64 {
				t.Errorf("%s: an Error answer of %d bytes was handed over", what, len(msg))
			}
		default:
			says := ""
			if i == len(sc.ops)-1 {
				says = sc.says
			}
			checkErr(t, what, err, want, says)
			if want == reports.KindStart && time.Since(began) >= helloTimeout {
				t.Errorf("%s: the restart took %v, the whole Hello timeout, not the op's %v", what, time.Since(began), timeout)
			}
		}
	}
}

func checkErr(t *testing.T, what string, err error, kind reports.ErrorKind, says string) {
	t.Helper()
	var se *sut.Error
	if !errors.As(err, &se) || se.Kind != kind {
		t.Errorf("%s: got %v, want an error of kind %s", what, err, kind)
		return
	}
	if says != "" && !strings.Contains(err.Error(), says) && !strings.Contains(se.Exit, says) {
		t.Errorf("%s: %q does not say %q", what, err, says)
	}
	if len(se.Stderr) > 2*reports.MaxMessage || len(err.Error()) > 3*reports.MaxMessage {
		t.Errorf("%s: %d bytes of stderr, %d of message", what, len(se.Stderr), len(err.Error()))
	}
}

// open reaches the scenario's SUT over its carrier. Over tcp the server is
// a child started through proc, which stop stops.
func open(sc scenario, hostile string, env []string, helloTimeout time.Duration) (c sut.Client, stop func(), err error) {
	self := os.Args[0]
	switch sc.carrier {
	case "exec":
		c, err = sutexec.Start(context.Background(), []string{self, sc.fault},
			sutexec.Options{HelloTimeout: helloTimeout, Env: append(env, envRole+"=exec")})
		return c, func() {}, err
	case "lib":
		c, err = lib.Open(context.Background(), hostile, lib.Options{Self: []string{self}, HelloTimeout: helloTimeout,
			Env: append(env, envRole+"="+lib.HostCommand, "CONFORM_TESTLIB="+sc.fault)})
		return c, func() {}, err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, func() {}, err
	}
	defer r.Close()
	srv, err := proc.Start(proc.Config{Argv: []string{self, sc.fault}, Stdout: w,
		Env: append(append(os.Environ(), env...), envRole+"=tcp")})
	w.Close()
	if err != nil {
		return nil, func() {}, err
	}
	line, _ := bufio.NewReader(r).ReadString('\n')
	c, err = tcp.Dial(context.Background(), strings.TrimSpace(line), tcp.Options{HelloTimeout: helloTimeout})
	return c, srv.Stop, err
}

func decodeReq() *conformpb.Request {
	return &conformpb.Request{Op: &conformpb.Request_Decode{Decode: &conformpb.Decode{Inputs: []*conformpb.DecodeInput{
		{MessageType: "ranvier.message.v1.Request", Payload: []byte{0x0a, 0x04, 'g', 'a', 'z', 'e'}},
	}}}}
}

// buildHostile builds ../lib/testdata/hostile.c, or returns "" without gcc.
func buildHostile(t *testing.T) string {
	if _, err := exec.LookPath("gcc"); err != nil {
		return ""
	}
	out := filepath.Join(t.TempDir(), "libhostile.so")
	cmd := exec.Command("gcc", "-D_GNU_SOURCE", "-shared", "-fPIC", "-I", filepath.Join("..", "..", "include"),
		"-o", out, filepath.Join("..", "lib", "testdata", "hostile.c"))
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("gcc hostile.c: %v\n%s", err, b)
	}
	return out
}

// findMarked returns the live processes whose environment holds mark. A
// child shows its environment only once it has exec'd (before, /proc shows
// its parent's), so a search for a process that should be there polls.
func findMarked(mark string) []string {
	var out []string
	procs, _ := filepath.Glob("/proc/[0-9]*")
	for _, p := range procs {
		env, err := os.ReadFile(filepath.Join(p, "environ"))
		if err != nil || !strings.Contains("\x00"+string(env), "\x00"+mark+"\x00") {
			continue
		}
		stat, _ := os.ReadFile(filepath.Join(p, "stat"))
		s := string(stat)
		if f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:]); len(f) == 0 || f[0] == "Z" {
			continue
		}
		cmd, _ := os.ReadFile(filepath.Join(p, "cmdline"))
		pid, _ := strconv.Atoi(filepath.Base(p))
		out = append(out, fmt.Sprintf("%d: %s", pid, strings.ReplaceAll(string(cmd), "\x00", " ")))
	}
	return out
}

// waitMarked polls until at least n processes carry mark.
func waitMarked(mark string, n int) bool {
	deadline := time.Now().Add(hangGuard / 2)
	for len(findMarked(mark)) < n {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
	return true
}

// waitNoneMarked polls until no process carries mark, and returns those
// that still do after a guard.
func waitNoneMarked(mark string) []string {
	deadline := time.Now().Add(10 * time.Second)
	for {
		left := findMarked(mark)
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func heapAllocs() uint64 {
	m := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(m)
	return m[0].Value.Uint64()
}

func liveHeap() uint64 {
	runtime.GC()
	m := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(m)
	return m[0].Value.Uint64()
}
