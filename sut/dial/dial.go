// Package dial turns a --sut value into a sut.Client: it is the one place
// that knows every carrier.
package dial

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	osexec "os/exec"
	"runtime"
	"strings"
	"time"

	"github.com/conform-suite/conform/suite"
	"github.com/conform-suite/conform/sut"
	"github.com/conform-suite/conform/sut/builtin"
	"github.com/conform-suite/conform/sut/exec"
	"github.com/conform-suite/conform/sut/fault"
	"github.com/conform-suite/conform/sut/lib"
	"github.com/conform-suite/conform/sut/mutant"
	"github.com/conform-suite/conform/sut/natsc"
	"github.com/conform-suite/conform/sut/tcp"
)

// Options configure Open.
type Options struct {
	// Suites gives the builtin: SUTs, the reference and its mutants.
	Suites *suite.Registry
	// Self is the command that runs conform itself, used to start
	// builtin:fault SUTs as real child processes. Usually os.Executable().
	Self []string
	// HelloTimeout bounds the wait for a program's Hello.
	HelloTimeout time.Duration
	// Env is added to a started program's environment.
	Env []string
}

// UsageError reports a --sut value that names no carrier conform has.
type UsageError struct{ Spec, Reason string }

func (e *UsageError) Error() string { return fmt.Sprintf("--sut %q: %s", e.Spec, e.Reason) }

// Open reaches the SUT that spec names:
//
//	builtin:reference          the reference, in process
//	builtin:mutant/NAME        the reference with one named bug
//	builtin:fault/NAME         a misbehaving SUT, as a child process
//	exec:PROGRAM ARGS…         a program speaking conform.v1 on stdio
//	./PROGRAM, /PATH/PROGRAM   the same, without the prefix
//	tcp://HOST:PORT            a SUT serving conform.v1 on TCP
//	lib:PATH                   a C ABI library, loaded in a child host process
//	nats://HOST:PORT/BASE      a SUT answering conform.v1 requests on BASE.conform
//
// A spec that cannot name a SUT is a *UsageError saying why and naming the
// value: a scheme conform has no carrier for, a malformed address, a
// program or library that is not there, a directory, a file that is not
// executable, or a bare name that is not in $PATH (with the ./ to write when
// a file of that name is in the working directory). A SUT that cannot be
// started or never says Hello is a *sut.Error of kind KindStart.
func Open(ctx context.Context, spec string, opts Options) (sut.Client, error) {
	switch {
	case (spec == "builtin:reference" || strings.HasPrefix(spec, "builtin:mutant/")) && opts.Suites == nil:
		return nil, &UsageError{spec, "this conform has no built-in suites"}
	case spec == "builtin:reference":
		im := opts.Suites.Reference()
		if len(opts.Self) > 0 {
			im.SetNodeCommand(mutant.NodeCommand(opts.Self, ""))
		}
		return builtin.New(spec, im), nil
	case strings.HasPrefix(spec, "builtin:mutant/"):
		name := strings.TrimPrefix(spec, "builtin:mutant/")
		im, ok := opts.Suites.MutantImpl(name)
		if !ok {
			return nil, &UsageError{spec, "no such mutant (conform mutants lists them)"}
		}
		if len(opts.Self) > 0 {
			im.SetNodeCommand(mutant.NodeCommand(opts.Self, name))
		}
		return builtin.New(spec, im), nil
	case strings.HasPrefix(spec, "builtin:fault/"):
		name := strings.TrimPrefix(spec, "builtin:fault/")
		if _, ok := fault.Lookup(name); !ok {
			return nil, &UsageError{spec, "no such fault (conform faults lists them)"}
		}
		if len(opts.Self) == 0 {
			return nil, &UsageError{spec, "cannot start a fault SUT: conform does not know its own path"}
		}
		argv := append(append([]string(nil), opts.Self...), "fault", name)
		return exec.Start(ctx, argv, exec.Options{HelloTimeout: opts.HelloTimeout, Env: opts.Env})
	case strings.HasPrefix(spec, "builtin:"):
		return nil, &UsageError{spec, "builtin SUTs are reference, mutant/NAME and fault/NAME"}
	case strings.HasPrefix(spec, "exec:"):
		argv, err := SplitCommand(strings.TrimPrefix(spec, "exec:"))
		if err != nil {
			return nil, &UsageError{spec, err.Error()}
		}
		if err := CheckProgram(argv[0]); err != nil {
			return nil, &UsageError{spec, err.Error()}
		}
		return exec.Start(ctx, argv, exec.Options{HelloTimeout: opts.HelloTimeout, Env: opts.Env})
	case strings.HasPrefix(spec, tcp.Scheme):
		addr, err := tcp.ParseAddr(spec)
		if err != nil {
			return nil, &UsageError{spec, err.Error()}
		}
		if strings.HasSuffix(addr, ":0") {
			return nil, &UsageError{spec, "port 0 names no SUT: give the port the SUT listens on"}
		}
		return tcp.Dial(ctx, spec, tcp.Options{HelloTimeout: opts.HelloTimeout})
	case strings.HasPrefix(spec, lib.Scheme):
		path := strings.TrimPrefix(spec, lib.Scheme)
		if path == "" {
			return nil, &UsageError{spec, "no library named (lib:./libmybinding.so)"}
		}
		if err := lib.CheckPath(path); err != nil {
			return nil, &UsageError{spec, err.Error()}
		}
		if len(opts.Self) == 0 {
			return nil, &UsageError{spec, "cannot start the library host: conform does not know its own path"}
		}
		return lib.Open(ctx, spec, lib.Options{Self: opts.Self, HelloTimeout: opts.HelloTimeout, Env: opts.Env})
	case strings.HasPrefix(spec, natsc.Scheme):
		ep, err := natsc.ParseEndpoint(spec)
		if err != nil {
			return nil, &UsageError{spec, err.Error()}
		}
		return natsc.Dial(ctx, ep, opts.HelloTimeout)
	case spec == "":
		return nil, &UsageError{spec, "empty"}
	}
	if scheme, ok := schemeOf(spec); ok {
		if _, err := os.Stat(spec); err != nil {
			return nil, &UsageError{spec, fmt.Sprintf("unknown carrier %q: the carriers are %s", scheme, carriers)}
		}
	}
	argv, err := SplitCommand(spec)
	if err != nil {
		return nil, &UsageError{spec, err.Error()}
	}
	if err := CheckProgram(argv[0]); err != nil {
		return nil, &UsageError{spec, err.Error()}
	}
	return exec.Start(ctx, argv, exec.Options{HelloTimeout: opts.HelloTimeout, Env: opts.Env})
}

// carriers lists the --sut forms, for a message about an unknown one.
const carriers = "exec:CMD, a program path (./PROGRAM), tcp://HOST:PORT, lib:PATH, nats://HOST:PORT/BASE and builtin:reference, builtin:mutant/NAME, builtin:fault/NAME"

// schemeOf returns the scheme spec starts with — letters, then letters,
// digits, '+', '-' or '.', then ':' — when it has one. A single letter is
// not taken for one, so that a Windows path (C:\…) stays a path.
func schemeOf(spec string) (string, bool) {
	i := strings.IndexByte(spec, ':')
	if i < 2 {
		return "", false
	}
	for j, c := range spec[:i] {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case j > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'):
		default:
			return "", false
		}
	}
	return spec[:i+1], true
}

// CheckProgram reports why name cannot be run as a SUT, or nil: a path (one
// with a slash) where there is no file, a directory, or a file without
// execute permission; a bare name that is not in $PATH, suggesting ./NAME
// when the working directory holds a file of that name (a program in the
// working directory is run as ./NAME, never by its bare name).
func CheckProgram(name string) error {
	if !strings.ContainsRune(name, '/') {
		if _, err := osexec.LookPath(name); err == nil {
			return nil
		}
		if st, err := os.Stat(name); err == nil && !st.IsDir() {
			return fmt.Errorf("no program %q in $PATH, but there is a file %q here: write ./%s to run it", name, name, name)
		}
		return fmt.Errorf("no program %q in $PATH", name)
	}
	st, err := os.Stat(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("no program at %s (no such file)", name)
	case err != nil:
		return fmt.Errorf("cannot run %s: %w", name, err)
	case st.IsDir():
		return fmt.Errorf("%s is a directory, not a program", name)
	case runtime.GOOS != "windows" && st.Mode().Perm()&0o111 == 0:
		return fmt.Errorf("%s is not executable (chmod +x it, or name its interpreter: exec:python3 %s)", name, name)
	}
	return nil
}

// SplitCommand splits a command line into words the way a POSIX shell does
// for plain words and single or double quotes, without expansions.
func SplitCommand(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0 && c == quote:
			quote = 0
		case quote == '"' && c == '\\' && i+1 < len(s) && strings.IndexByte(`"\$`+"`", s[i+1]) >= 0:
			i++
			cur.WriteByte(s[i])
		case quote != 0:
			cur.WriteByte(c)
		case c == '\'' || c == '"':
			quote = c
			inWord = true
		case c == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
			inWord = true
		case c == ' ' || c == '\t' || c == '\n':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unterminated %c quote", quote)
	}
	if inWord {
		words = append(words, cur.String())
	}
	if len(words) == 0 {
		return nil, fmt.Errorf("no program named")
	}
	return words, nil
}
