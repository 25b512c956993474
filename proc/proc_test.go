package proc

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/conform-suite/conform/internal/hang"
)

// The test binary plays the children: with envRole set it runs the role
// named there instead of the tests.
const envRole = "PROC_TEST_ROLE"

// hangGuard bounds every wait in these tests on an idle machine;
// hang.Guard stretches it on a loaded one. It is a guard against a hang,
// never a timing assertion: each bound it protects is far shorter.
const hangGuard = 20 * time.Second

func TestMain(m *testing.M) {
	if role := os.Getenv(envRole); role != "" {
		os.Exit(playRole(role))
	}
	os.Exit(m.Run())
}

func playRole(role string) int {
	switch role {
	case "sleep":
		time.Sleep(10 * time.Minute)
	case "stderr":
		fmt.Fprint(os.Stderr, strings.Repeat("x", 10000)+"the end")
		os.Exit(3)
	case "escape":
		// A descendant in a session of its own that holds stderr, then
		// the child itself idles.
		spawnEscapee(false)
		time.Sleep(10 * time.Minute)
	case "escape-exit":
		// The same, and the child exits at once.
		spawnEscapee(false)
		os.Exit(0)
	case "parent":
		// A conform stand-in: it starts a child through proc that starts
		// an escapee, prints the child's pid and waits to be killed.
		p, err := Start(Config{Argv: []string{os.Args[0]}, Env: append(os.Environ(), envRole+"=escape")})
		if err != nil {
			fmt.Println("error", err)
			return 1
		}
		fmt.Println(p.Pid())
		time.Sleep(10 * time.Minute)
	case "subreaper":
		return subreaperRole()
	case "forker":
		// Starts a descendant that drops every mark (an empty environment)
		// and leaves the session, prints its pid, and exits.
		fmt.Println(spawnEscapee(true))
		os.Exit(0)
	default:
		fmt.Fprintln(os.Stderr, "unknown role", role)
		return 2
	}
	return 0
}

// spawnEscapee starts the test binary playing "sleep" in a new session,
// holding this process's stderr, and returns its pid. With bare it gets an
// environment holding nothing but its role, so no mark finds it.
func spawnEscapee(bare bool) int {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), envRole+"=sleep")
	if bare {
		cmd.Env = []string{envRole + "=sleep"}
	}
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "spawning:", err)
		os.Exit(1)
	}
	return cmd.Process.Pid
}

// subreaperRole proves, inside a process of its own, that a subreaper
// reaps the orphans of its children: a child (forker) starts an unmarked
// descendant and exits; the descendant is re-parented here; Shutdown kills
// and reaps it.
func subreaperRole() int {
	if err := Subreap(); err != nil {
		fmt.Println("subreap:", err)
		return 1
	}
	r, w, _ := os.Pipe()
	p, err := Start(Config{Argv: []string{os.Args[0]}, Env: append(os.Environ(), envRole+"=forker"), Stdout: w})
	w.Close()
	if err != nil {
		fmt.Println("start:", err)
		return 1
	}
	line, _ := bufio.NewReader(r).ReadString('\n')
	orphan, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		fmt.Println("no pid from the forker:", line)
		return 1
	}
	p.WaitExit(context.Background(), hangGuard)
	p.Stop()
	if st, ok := readStat(orphan); !ok || st.ppid != os.Getpid() {
		fmt.Printf("the orphan %d was not re-parented here: %+v %v\n", orphan, st, ok)
		return 1
	}
	Shutdown()
	if _, ok := readStat(orphan); ok {
		fmt.Printf("the orphan %d is still there after Shutdown\n", orphan)
		return 1
	}
	fmt.Println("ok")
	return 0
}

func start(t *testing.T, role string) *Process {
	t.Helper()
	p, err := Start(Config{Argv: []string{os.Args[0]}, Env: append(os.Environ(), envRole+"="+role)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Stop)
	return p
}

// marked returns the live processes carrying token. A child's environment
// shows its mark only once it has exec'd, so a caller looking for a process
// it expects polls (see eventually).
func marked(token string) []int {
	var out []int
	for _, pid := range pids() {
		if pid == os.Getpid() {
			continue
		}
		env, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
		if err != nil || !hasToken(env, func(t string) bool { return t == token }) {
			continue
		}
		if st, ok := readStat(pid); ok && st.state != 'Z' {
			out = append(out, pid)
		}
	}
	return out
}

// eventually polls cond until it holds or hangGuard passes.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(hang.Guard(t, hangGuard))
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after %v: %s", hangGuard, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func needProc(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("skipping: the descendants of a child are found through Linux's /proc")
	}
}

func TestExitAndStderr(t *testing.T) {
	p := start(t, "stderr")
	if !p.WaitExit(context.Background(), hang.Guard(t, hangGuard)) {
		t.Fatal("the child did not exit")
	}
	p.Stop()
	if got := p.Exit(); got != "exit status 3" || p.ExitCode() != 3 {
		t.Errorf("exit %q (%d), want exit status 3", got, p.ExitCode())
	}
	want := fmt.Sprintf("[%d bytes dropped]\n", 10000+len("the end")-DefaultStderrLimit)
	if got := p.Stderr(); !strings.HasPrefix(got, want) || !strings.HasSuffix(got, "the end") {
		t.Errorf("stderr %.60q…, want it to start %q and end with the child's last words", got, want)
	}
}

func TestStopKillsAndReaps(t *testing.T) {
	p := start(t, "sleep")
	p.Stop()
	select {
	case <-p.Exited():
	default:
		t.Fatal("Stop returned before the child was reaped")
	}
	if got := p.Exit(); got != "signal: killed" {
		t.Errorf("exit %q, want signal: killed", got)
	}
	p.Stop() // a second Stop does nothing
}

func TestStartFailure(t *testing.T) {
	_, err := Start(Config{Argv: []string{"/nonexistent/program"}})
	if err == nil || !strings.Contains(err.Error(), "/nonexistent/program") {
		t.Fatalf("got %v, want an error naming the program", err)
	}
	if _, err := Start(Config{}); err == nil {
		t.Fatal("an empty argv started")
	}
}

// TestEscapedDescendantDoesNotHoldStop: a descendant that left the child's
// session and holds its stderr is killed with the child, whether the child
// is stopped or exits by itself, and Stop returns.
func TestEscapedDescendantDoesNotHoldStop(t *testing.T) {
	needProc(t)
	for _, role := range []string{"escape", "escape-exit"} {
		t.Run(role, func(t *testing.T) {
			p := start(t, role)
			if role == "escape" {
				eventually(t, "the escapee never appeared", func() bool { return len(marked(p.token)) == 2 })
			} else if !p.WaitExit(context.Background(), hang.Guard(t, hangGuard)) {
				// The child exits once its escapee runs.
				t.Fatal("the child did not exit")
			}
			stopped := make(chan struct{})
			go func() {
				p.Stop()
				close(stopped)
			}()
			select {
			case <-stopped:
			case <-time.After(hang.Guard(t, hangGuard)):
				t.Fatalf("Stop did not return within %v", hangGuard)
			}
			eventually(t, "a marked process survived Stop", func() bool { return len(marked(p.token)) == 0 })
		})
	}
}

// TestParentDeathAndSweep kills a conform stand-in with SIGKILL: its child
// dies by the parent-death signal, and the escapee the child started,
// which nothing kills then, is ended by Sweep, as the next conform's start
// does.
//
// Any conform that starts on this machine meanwhile (go test runs the
// cmd/conform tests beside this package) sweeps the escapee too, as it
// should; the scenario is then tried again, since this test must see its
// own Sweep do it.
func TestParentDeathAndSweep(t *testing.T) {
	needProc(t)
	const tries = 5
	for i := 1; ; i++ {
		if parentDeathAndSweep(t) {
			return
		}
		if i == tries {
			t.Fatalf("in %d tries, the escapee was always gone before Sweep ran", tries)
		}
		t.Logf("try %d: the escapee was gone before Sweep ran (another conform's sweep?); trying again", i)
	}
}

// parentDeathAndSweep runs the scenario of TestParentDeathAndSweep once. It
// reports false when the escapee was gone before its Sweep could end it.
func parentDeathAndSweep(t *testing.T) bool {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), envRole+"=parent")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	line, _ := bufio.NewReader(out).ReadString('\n')
	child, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatalf("the parent printed %q", line)
	}
	owner := OwnerOf(cmd.Process.Pid)
	ownerMarked := func() []int {
		var out []int
		for _, pid := range pids() {
			env, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
			if err == nil && hasToken(env, func(t string) bool { return ownerOfToken(t) == owner.String() }) {
				if st, ok := readStat(pid); ok && st.state != 'Z' {
					out = append(out, pid)
				}
			}
		}
		return out
	}
	// The escapee is the marked process other than the child once it
	// plays its role: between its fork and its exec it still shows the
	// child's environment, and while it execs, none that can be read.
	// (Taken any earlier, a loaded machine showed it gone on a second look.)
	escapee := 0
	eventually(t, "the child and its escapee never appeared", func() bool {
		for _, pid := range ownerMarked() {
			env, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
			if pid != child && slices.Contains(strings.Split(string(env), "\x00"), envRole+"=sleep") {
				escapee = pid
			}
		}
		return escapee != 0
	})
	if m := ownerMarked(); !slices.Contains(m, child) || !slices.Contains(m, escapee) {
		t.Fatalf("the marked processes %v do not include the child %d and the escapee %d", m, child, escapee)
	}

	cmd.Process.Kill()
	cmd.Wait()
	eventually(t, "the child outlived its parent", func() bool {
		st, ok := readStat(child)
		return !ok || st.state == 'Z'
	})
	left := ownerMarked()
	if len(left) == 0 {
		return false
	}
	if len(left) != 1 || left[0] != escapee {
		t.Fatalf("after the parent's death %v carry its mark, want the escapee %d alone", left, escapee)
	}
	if n := Sweep(); n < 1 && len(ownerMarked()) != 0 {
		t.Errorf("Sweep killed %d processes", n)
	}
	eventually(t, "the escapee survived Sweep", func() bool { return len(ownerMarked()) == 0 })
	return true
}

func TestSubreaperReapsOrphans(t *testing.T) {
	needProc(t)
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), envRole+"=subreaper")
	done := make(chan struct{})
	var b []byte
	var err error
	go func() {
		b, err = cmd.CombinedOutput()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(hang.Guard(t, hangGuard)):
		cmd.Process.Kill()
		<-done
		t.Fatalf("the subreaper did not finish within %v", hangGuard)
	}
	if err != nil || strings.TrimSpace(string(b)) != "ok" {
		t.Fatalf("subreaper: %v\n%s", err, b)
	}
}

func TestRing(t *testing.T) {
	tests := []struct {
		limit  int
		writes []string
		want   string
	}{
		{8, []string{"abc"}, "abc"},
		{8, []string{"abcd", "efgh"}, "abcdefgh"},
		{8, []string{"abcd", "efgh", "ij"}, "[2 bytes dropped]\ncdefghij"},
		{4, []string{"0123456789"}, "[6 bytes dropped]\n6789"},
		{4, []string{"ab", "0123456789"}, "[8 bytes dropped]\n6789"},
	}
	for _, tt := range tests {
		r := NewRing(tt.limit)
		for _, w := range tt.writes {
			if n, err := r.Write([]byte(w)); n != len(w) || err != nil {
				t.Fatalf("Write(%q) = %d, %v", w, n, err)
			}
		}
		if got := r.String(); got != tt.want {
			t.Errorf("limit %d, writes %q: %q, want %q", tt.limit, tt.writes, got, tt.want)
		}
	}
}

func TestMarks(t *testing.T) {
	env := withMark([]string{"A=1", MarkVar + "=1.2.3"}, "4.5.6")
	if got := env[len(env)-1]; got != MarkVar+"=1.2.3 4.5.6" {
		t.Errorf("nested mark %q", got)
	}
	if len(env) != 2 {
		t.Errorf("environment %q", env)
	}
	raw := []byte("A=1\x00" + MarkVar + "=1.2.3 4.5.6\x00B=2")
	for tok, want := range map[string]bool{"1.2.3": true, "4.5.6": true, "4.5": false, "1.2.3 4.5.6": false} {
		if got := hasToken(raw, func(t string) bool { return t == tok }); got != want {
			t.Errorf("hasToken(%q) = %v", tok, got)
		}
	}
	if got := ownerOfToken("12.345.678.6"); got != "12.345.678" {
		t.Errorf("owner %q", got)
	}
	other := Self()
	other.NS++
	other.Pid = 1 << 30 // no such process here
	if !other.Alive() {
		t.Error("an owner in another PID namespace was judged dead")
	}
	other.NS = Self().NS
	if other.Alive() {
		t.Error("an owner with no process was judged alive")
	}
	o, err := ParseOwner(Self().String())
	if err != nil || o != Self() || !o.Alive() {
		t.Errorf("ParseOwner(Self) = %v, %v, alive %v", o, err, o.Alive())
	}
	if _, err := ParseOwner("nonsense"); err == nil {
		t.Error("ParseOwner accepted nonsense")
	}
}
