package reports

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// WriteFileAtomic writes data to path so that a reader sees the old file or
// the new one, never half of either: it writes a temporary file beside the
// target, syncs it, and renames it into place.
//
//   - A symlink is written through, never replaced: the file it points to
//     (following every link, even to a file that does not exist yet) gets
//     the new content, and the link stays. A CI step that links a report
//     to where its runner reads it keeps working.
//   - A path that names something other than a regular file — a terminal,
//     a pipe, /dev/stdout — is written directly, as it cannot be replaced.
//   - A new file gets the permissions the umask leaves of 0666, as any
//     program's output does; a file that exists keeps its permissions.
//   - The temporary file is named ".NAME.conform-PID-RANDOM.tmp". A conform
//     killed while writing (kill -9, a power cut) leaves one behind; the
//     next write of the same file removes those whose process is gone.
func WriteFileAtomic(path string, data []byte) error {
	target, direct, err := resolveOutput(path)
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if direct {
		return writeDirect(path, data)
	}
	dir, base := filepath.Dir(target), filepath.Base(target)
	sweepTemps(dir, base)
	f, tmp, err := createTemp(dir, base)
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if st, serr := os.Stat(target); err == nil && serr == nil {
		err = os.Chmod(tmp, st.Mode().Perm())
	}
	if err == nil {
		err = os.Rename(tmp, target)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// CheckOutput reports, before a run, whether path can be written as
// WriteFileAtomic will write it: the directory of its target exists and
// takes new files, and the path is not a directory. It leaves nothing
// behind.
func CheckOutput(path string) error {
	target, direct, err := resolveOutput(path)
	if err != nil {
		return err
	}
	if direct {
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		return f.Close()
	}
	dir, base := filepath.Dir(target), filepath.Base(target)
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("directory %s does not exist", dir)
	case err != nil:
		return err
	case !st.IsDir():
		return fmt.Errorf("%s is not a directory", dir)
	}
	f, tmp, err := createTemp(dir, base)
	if err != nil {
		return fmt.Errorf("cannot create a file in %s: %w", dir, err)
	}
	f.Close()
	return os.Remove(tmp)
}

// resolveOutput returns the file that writing path replaces: path itself,
// or the end of the chain of symlinks it starts. direct is set when path
// exists and is not a regular file, which is written in place.
func resolveOutput(path string) (target string, direct bool, err error) {
	if st, err := os.Stat(path); err == nil {
		switch {
		case st.IsDir():
			return "", false, fmt.Errorf("%s is a directory", path)
		case !st.Mode().IsRegular():
			return path, true, nil
		}
	}
	target = path
	for range 40 {
		st, err := os.Lstat(target)
		if errors.Is(err, fs.ErrNotExist) {
			return target, false, nil
		}
		if err != nil {
			return "", false, err
		}
		if st.Mode()&fs.ModeSymlink == 0 {
			return target, false, nil
		}
		link, err := os.Readlink(target)
		if err != nil {
			return "", false, err
		}
		if !filepath.IsAbs(link) {
			link = filepath.Join(filepath.Dir(target), link)
		}
		target = link
	}
	return "", false, fmt.Errorf("%s: too many levels of symbolic links", path)
}

// writeDirect writes data to a path that is not a regular file.
func writeDirect(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// tempPrefix and tempSuffix frame a temporary file's name around the
// writer's process ID and a random number.
func tempPrefix(base string) string { return "." + base + ".conform-" }

const tempSuffix = ".tmp"

// createTemp creates a new temporary file for base in dir, with the mode
// the umask leaves of 0666.
func createTemp(dir, base string) (*os.File, string, error) {
	for range 100 {
		name := filepath.Join(dir, fmt.Sprintf("%s%d-%d%s", tempPrefix(base), os.Getpid(), rand.Uint32(), tempSuffix))
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return f, name, err
	}
	return nil, "", fmt.Errorf("cannot find a free temporary name in %s", dir)
}

// legacyTempAge is how old a temporary file of an earlier conform (named
// ".NAME.tmp-RANDOM", with no process ID) must be before a write sweeps it.
const legacyTempAge = time.Hour

// sweepTemps removes the temporary files for base in dir that a writer
// killed mid-write left: those whose process is gone. Errors are ignored:
// sweeping is housekeeping, never a reason to fail a write.
func sweepTemps(dir, base string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	prefix := tempPrefix(base)
	legacy := "." + base + ".tmp-"
	for _, e := range entries {
		name := e.Name()
		switch {
		case strings.HasPrefix(name, prefix) && strings.HasSuffix(name, tempSuffix):
			pid, _, _ := strings.Cut(strings.TrimSuffix(strings.TrimPrefix(name, prefix), tempSuffix), "-")
			n, err := strconv.Atoi(pid)
			if err != nil || n == os.Getpid() || processAlive(n) {
				continue
			}
		case strings.HasPrefix(name, legacy):
			info, err := e.Info()
			if err != nil || time.Since(info.ModTime()) < legacyTempAge {
				continue
			}
		default:
			continue
		}
		os.Remove(filepath.Join(dir, name))
	}
}

// WriteJSON writes r to path atomically, indented.
func WriteJSON(path string, r *Record) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding record: %w", err)
	}
	return WriteFileAtomic(path, append(b, '\n'))
}
