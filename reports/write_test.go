package reports

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// onlyFiles fails when dir holds anything but names.
func onlyFiles(t *testing.T, dir string, names ...string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	if strings.Join(got, ",") != strings.Join(names, ",") {
		t.Errorf("%s holds %v, want %v", dir, got, names)
	}
}

// TestWriteThroughSymlink: a symlink is written through and stays a
// symlink, to an existing file or to one not yet there.
func TestWriteThroughSymlink(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real.json")
	if err := os.WriteFile(real, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink("real.json", link); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileAtomic(link, []byte("new")); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the symlink was replaced: %v %v", st.Mode(), err)
	}
	if got := read(t, real); got != "new" {
		t.Errorf("the link's target holds %q", got)
	}
	if st, _ := os.Stat(real); st.Mode().Perm() != 0o600 {
		t.Errorf("the target's mode became %v, want it kept at 0600", st.Mode().Perm())
	}
	// A link to a file that does not exist yet creates it, through a chain.
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(sub, "later.json"), filepath.Join(dir, "hop")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("hop", filepath.Join(dir, "dangling.json")); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileAtomic(filepath.Join(dir, "dangling.json"), []byte("x")); err != nil {
		t.Fatal(err)
	}
	if got := read(t, filepath.Join(sub, "later.json")); got != "x" {
		t.Errorf("the chain's end holds %q", got)
	}
	onlyFiles(t, dir, "dangling.json", "hop", "link.json", "real.json", "sub")
	// A loop is an error, not a hang.
	os.Symlink("loop-b", filepath.Join(dir, "loop-a"))
	os.Symlink("loop-a", filepath.Join(dir, "loop-b"))
	if err := WriteFileAtomic(filepath.Join(dir, "loop-a"), nil); err == nil {
		t.Error("a symlink loop was written")
	}
}

// TestWriteNotRegular: a device or pipe is written in place.
func TestWriteNotRegular(t *testing.T) {
	if _, err := os.Stat(os.DevNull); err != nil {
		t.Skip(err)
	}
	if err := WriteFileAtomic(os.DevNull, []byte("x")); err != nil {
		t.Errorf("writing %s: %v", os.DevNull, err)
	}
	if err := CheckOutput(os.DevNull); err != nil {
		t.Errorf("CheckOutput(%s): %v", os.DevNull, err)
	}
}

// TestCheckOutput: what cannot be written is found before a run, and the
// check leaves nothing behind.
func TestCheckOutput(t *testing.T) {
	dir := t.TempDir()
	if err := CheckOutput(filepath.Join(dir, "ok.json")); err != nil {
		t.Errorf("a writable path: %v", err)
	}
	onlyFiles(t, dir)
	for name, path := range map[string]string{
		"a missing directory": filepath.Join(dir, "missing", "r.json"),
		"a directory":         dir,
		"under a file":        filepath.Join(dir, "file", "r.json"),
	} {
		if name == "under a file" {
			os.WriteFile(filepath.Join(dir, "file"), nil, 0o644)
		}
		if err := CheckOutput(path); err == nil {
			t.Errorf("%s (%s): no error", name, path)
		}
	}
	if os.Geteuid() != 0 {
		ro := filepath.Join(dir, "ro")
		os.Mkdir(ro, 0o555)
		if err := CheckOutput(filepath.Join(ro, "r.json")); err == nil {
			t.Error("a read-only directory: no error")
		}
		if err := WriteFileAtomic(filepath.Join(ro, "r.json"), nil); err == nil {
			t.Error("a read-only directory was written")
		}
	}
}
