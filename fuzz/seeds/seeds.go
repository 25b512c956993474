// Package seeds imports extra seed inputs for conform's native Go fuzz
// targets from an optional directory laid out like dvyukov/go-fuzz-corpus.
//
// The directory is not part of the module and the fuzz targets must pass
// without it: when it is absent, GoFuzzCorpus logs that and returns nothing.
// Its files are generic binary blobs (protobuf, HTTP/2, TLS records, …) that
// give a coverage-guided fuzzer a better start than trivial inputs; they are
// not valid inputs for any conform format.
package seeds

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"testing"
)

// EnvDir names the environment variable that overrides where the go-fuzz
// corpus is. Set it to a directory to use that directory, or to "off" to
// import nothing.
const EnvDir = "CONFORM_GO_FUZZ_CORPUS"

const (
	// MaxFileSize is the largest file imported; larger files are skipped.
	MaxFileSize = 64 << 10
	// MaxFiles bounds how many files one call to GoFuzzCorpus returns.
	MaxFiles = 300
)

// Dir returns the go-fuzz corpus directory named by the environment
// variable EnvDir, and whether it exists. The corpus is never part of this
// repository: without the variable (or with it set to "off") there are no
// extra seeds, and every target runs on its golden vectors alone.
func Dir() (string, bool) {
	d := os.Getenv(EnvDir)
	if d == "" || d == "off" {
		return "", false
	}
	return d, isDir(d)
}

// GoFuzzCorpus returns the contents of the seed files in the named
// subfolders of the go-fuzz corpus directory (see Dir), for f.Add.
//
// The layout is go-fuzz's: each subfolder, such as "protobuf" or
// "x509/pkix", holds its inputs in a corpus/ folder, one raw input per file
// with no framing or encoding. A subfolder without a corpus/ folder is read
// directly, which also covers layouts such as "gopacket/corpus_dns". Only
// regular files directly inside are read, in name order; files above
// MaxFileSize are skipped, and at most MaxFiles files are returned in all,
// shared evenly between the subfolders (a subfolder with fewer files passes
// its places on to the next).
//
// It logs on tb how many files it imported from where, or that the directory
// is absent, and returns nil then. A subfolder that does not exist is logged
// and skipped. Failing to read a file that was listed is a test failure.
func GoFuzzCorpus(tb testing.TB, subdirs ...string) [][]byte {
	tb.Helper()
	root, ok := Dir()
	if !ok {
		if root == "" {
			tb.Logf("seeds: no go-fuzz corpus directory (set %s to use one); no extra seeds", EnvDir)
		} else {
			tb.Logf("seeds: go-fuzz corpus directory %s is absent; no extra seeds", root)
		}
		return nil
	}
	var out [][]byte
	for i, sub := range subdirs {
		quota := (MaxFiles - len(out)) / (len(subdirs) - i)
		files, dir, err := list(root, sub)
		if err != nil {
			tb.Logf("seeds: %s: %v; skipped", filepath.Join(root, sub), err)
			continue
		}
		n, skipped := 0, 0
		for _, name := range files {
			if n == quota {
				break
			}
			path := filepath.Join(dir, name)
			if st, err := os.Stat(path); err == nil && st.Size() > MaxFileSize {
				skipped++
				continue
			}
			b, err := os.ReadFile(path)
			if err != nil {
				tb.Fatalf("seeds: %v", err)
			}
			if len(b) > MaxFileSize { // grew since it was listed
				skipped++
				continue
			}
			out = append(out, b)
			n++
		}
		tb.Logf("seeds: imported %d of %d files from %s (%d above %d bytes skipped)", n, len(files), dir, skipped, MaxFileSize)
	}
	return out
}

// list returns the names of the regular files of sub's corpus folder,
// sorted, and the folder they are in.
func list(root, sub string) ([]string, string, error) {
	dir := filepath.Join(root, sub, "corpus")
	if !isDir(dir) {
		dir = filepath.Join(root, sub)
		if !isDir(dir) {
			return nil, "", errors.New("no such folder")
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, "", err
	}
	var names []string
	for _, e := range entries {
		if e.Type()&fs.ModeType == 0 {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	return names, dir, nil
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}
