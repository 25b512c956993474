//go:build unix

package reports

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestWriteRespectsUmask: a new file gets 0666 less the umask, as any
// program's output does.
func TestWriteRespectsUmask(t *testing.T) {
	old := syscall.Umask(0o027)
	defer syscall.Umask(old)
	path := filepath.Join(t.TempDir(), "r.json")
	if err := WriteFileAtomic(path, []byte("x")); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, want 0640 under umask 027 (%v)", st.Mode().Perm(), err)
	}
}

// envHelper makes the test binary a writer that creates its temporary
// file and waits to be killed.
const envHelper = "CONFORM_TEST_KILLED_WRITER"

func TestMain(m *testing.M) {
	if path := os.Getenv(envHelper); path != "" {
		dir, base := filepath.Split(path)
		if _, _, err := createTemp(dir, base); err != nil {
			os.Exit(2)
		}
		os.Stdout.WriteString("ready\n")
		time.Sleep(time.Minute)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestWriteSweepsKilledWriter: a writer killed with SIGKILL in the middle
// of a write leaves its temporary file; the next write of the same file
// removes it, and leaves another writer's alone.
func TestWriteSweepsKilledWriter(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "record.json")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envHelper+"="+path)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if line, err := bufio.NewReader(out).ReadString('\n'); err != nil || line != "ready\n" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("helper: %q %v", line, err)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	left, _ := filepath.Glob(filepath.Join(dir, ".record.json.conform-*.tmp"))
	if len(left) != 1 {
		t.Fatalf("the killed writer left %v, want its one temporary file", left)
	}
	// A live writer's temporary file (ours) must survive the sweep.
	f, mine, err := createTemp(dir, "record.json")
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := WriteFileAtomic(path, []byte("done")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(left[0]); !os.IsNotExist(err) {
		t.Errorf("the killed writer's %s survived the next write", left[0])
	}
	if _, err := os.Stat(mine); err != nil {
		t.Errorf("a live writer's temporary file was swept: %v", err)
	}
	os.Remove(mine)
	onlyFiles(t, dir, "record.json")
}
