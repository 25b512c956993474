package seeds_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/conform-suite/conform/fuzz/seeds"
)

func write(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestGoFuzzCorpusLayout(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, "protobuf", "corpus", "b"), []byte("bb"))
	write(t, filepath.Join(root, "protobuf", "corpus", "a"), []byte("a"))
	write(t, filepath.Join(root, "protobuf", "corpus", "big"), make([]byte, seeds.MaxFileSize+1))
	write(t, filepath.Join(root, "protobuf", "corpus", "sub", "ignored"), []byte("x"))
	write(t, filepath.Join(root, "gopacket", "corpus_dns", "0"), []byte("dns"))
	t.Setenv(seeds.EnvDir, root)

	got := seeds.GoFuzzCorpus(t, "protobuf", "gopacket/corpus_dns", "missing")
	want := [][]byte{[]byte("a"), []byte("bb"), []byte("dns")}
	if len(got) != len(want) {
		t.Fatalf("got %d seeds %q, want %q", len(got), got, want)
	}
	for i := range want {
		if !bytes.Equal(got[i], want[i]) {
			t.Errorf("seed %d = %q, want %q", i, got[i], want[i])
		}
	}
}

func TestGoFuzzCorpusQuota(t *testing.T) {
	root := t.TempDir()
	for i := 0; i < seeds.MaxFiles; i++ {
		write(t, filepath.Join(root, "x", "corpus", string(rune('a'+i%26))+string(rune('a'+i/26))), []byte{byte(i)})
	}
	write(t, filepath.Join(root, "y", "corpus", "one"), []byte("y"))
	t.Setenv(seeds.EnvDir, root)
	got := seeds.GoFuzzCorpus(t, "y", "x")
	if len(got) != seeds.MaxFiles {
		t.Fatalf("got %d seeds, want %d", len(got), seeds.MaxFiles)
	}
	if string(got[0]) != "y" {
		t.Errorf("first seed %q, want the one file of y", got[0])
	}
}

func TestGoFuzzCorpusAbsent(t *testing.T) {
	t.Setenv(seeds.EnvDir, filepath.Join(t.TempDir(), "nope"))
	if got := seeds.GoFuzzCorpus(t, "protobuf"); got != nil {
		t.Errorf("absent directory gave %d seeds", len(got))
	}
	t.Setenv(seeds.EnvDir, "off")
	if got := seeds.GoFuzzCorpus(t, "protobuf"); got != nil {
		t.Errorf("off gave %d seeds", len(got))
	}
}

// TestNoDefaultDir: without the variable there is no corpus — the project
// never reaches outside its repository for seeds.
func TestNoDefaultDir(t *testing.T) {
	t.Setenv(seeds.EnvDir, "")
	if d, ok := seeds.Dir(); ok || d != "" {
		t.Errorf("Dir() = %q, %v without %s; want none", d, ok, seeds.EnvDir)
	}
}
