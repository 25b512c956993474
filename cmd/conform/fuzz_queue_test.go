package main

import (
	"bytes"
	"context"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/conform-suite/conform/campaign"
	"github.com/conform-suite/conform/natsserver"
)

// syncBuffer is a bytes.Buffer a child process writes while the test reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func startConform(t *testing.T, out *syncBuffer, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Stderr = out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	return cmd
}

func waitFor(t *testing.T, what string, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s did not happen within %v", what, d)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestFuzzQueueTwoWorkersOneKilled spreads a campaign over two worker
// processes through JetStream on an embedded server, kills one of them with
// SIGKILL in the middle of a unit, and checks that the unit is redelivered
// to the other, that the campaign completes and that the coordinator writes
// the findings.
func TestFuzzQueueTwoWorkersOneKilled(t *testing.T) {
	srv, err := natsserver.Start(context.Background(), natsserver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	ep := srv.URL() + "/e2e"
	out := t.TempDir()
	sutSpec := "builtin:mutant/zero-length-is-end"

	var coordLog, aLog, bLog syncBuffer
	coord := startConform(t, &coordLog, "fuzz", "--queue", ep, "--target", "wire.read-frames,wire.receive",
		"--execs", "60000", "--unit-size", "15000", "--ack-wait", "2s", "--out", out)
	waitFor(t, "the coordinator publishing", 30*time.Second, func() bool { return strings.Contains(coordLog.String(), "coordinating") })

	a := startConform(t, &aLog, "fuzz", "worker", "--queue", ep, "--sut", sutSpec, "--name", "a")
	unitLine := regexp.MustCompile(`unit (\S+): `)
	var killed string
	waitFor(t, "worker a taking a unit", 30*time.Second, func() bool {
		m := unitLine.FindStringSubmatch(aLog.String())
		if m != nil {
			killed = m[1]
		}
		return m != nil
	})
	a.Process.Signal(syscall.SIGKILL)
	a.Wait()
	b := startConform(t, &bLog, "fuzz", "worker", "--queue", ep, "--sut", sutSpec, "--name", "b")

	done := make(chan error, 1)
	go func() { done <- coord.Wait() }()
	select {
	case <-done:
	case <-time.After(90 * time.Second):
		t.Fatalf("the campaign did not complete\ncoordinator:\n%s\nworker b:\n%s", coordLog.String(), bLog.String())
	}
	b.Process.Signal(syscall.SIGINT)
	b.Wait()
	if code := coord.ProcessState.ExitCode(); code != 1 {
		t.Errorf("coordinator exit %d, want 1 (findings)\n%s", code, coordLog.String())
	}
	if !strings.Contains(bLog.String(), "unit "+killed+":") {
		t.Errorf("unit %s, killed with worker a, was not redelivered to worker b\nworker a:\n%s\nworker b:\n%s", killed, aLog.String(), bLog.String())
	}
	files := findings(t, out)
	if len(files) == 0 {
		t.Fatalf("no finding written\ncoordinator:\n%s", coordLog.String())
	}
	for _, f := range files {
		if _, err := campaign.ReadFinding(f); err != nil {
			t.Error(err)
		}
	}
	if !strings.Contains(coordLog.String(), "8 of 8 units done") {
		t.Errorf("the coordinator does not report every unit done:\n%s", coordLog.String())
	}
	assertNoChildren(t)
}
