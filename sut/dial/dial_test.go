package dial_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/conform-suite/conform/reports"
	"github.com/conform-suite/conform/runner"
	"github.com/conform-suite/conform/suites"
	"github.com/conform-suite/conform/sut"
	"github.com/conform-suite/conform/sut/dial"
	"github.com/conform-suite/conform/sut/fault"
	"go.uber.org/goleak"
)

// With CONFORM_TEST_SELF set, the test binary plays conform itself: it
// serves the reference or a fault, as `conform reference` and `conform fault
// NAME` do, so that Open's fault SUTs run as real child processes.
const envSelf = "CONFORM_TEST_SELF"

func TestMain(m *testing.M) {
	if os.Getenv(envSelf) != "" {
		os.Exit(serveSelf(os.Args[len(os.Args)-2:]))
	}
	goleak.VerifyTestMain(m)
}

func serveSelf(args []string) int {
	ctx := context.Background()
	var err error
	switch {
	case args[1] == "reference":
		err = sut.Serve(ctx, os.Stdin, os.Stdout, suites.Default().Reference(), sut.Binary)
	case args[0] == "fault":
		f, ok := fault.Lookup(args[1])
		if !ok {
			return 2
		}
		err = f.Serve(ctx, suites.Default().Reference(), os.Stdin, os.Stdout)
	default:
		fmt.Fprintln(os.Stderr, "unexpected arguments", args)
		return 2
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

func opts() dial.Options {
	return dial.Options{Suites: suites.Default(), Self: []string{os.Args[0]}, HelloTimeout: 5 * time.Second, Env: []string{envSelf + "=1"}}
}

// TestRunLeavesNothingBehind runs a selection of cases over each kind of
// SUT and checks, through goleak in TestMain and here, that neither a
// goroutine nor a child process outlives Close.
func TestRunLeavesNothingBehind(t *testing.T) {
	cat, err := suites.Default().Catalogue()
	if err != nil {
		t.Fatal(err)
	}
	sel, err := runner.Select(cat.Cases, nil, []string{"wire/1.2/*", "wire/2/*"})
	if err != nil {
		t.Fatal(err)
	}
	for _, spec := range []string{"builtin:reference", "exec:" + os.Args[0] + " self reference", "builtin:fault/hang", "builtin:fault/crash", "builtin:fault/flood"} {
		t.Run(spec, func(t *testing.T) {
			c, err := dial.Open(context.Background(), spec, opts())
			if err != nil {
				t.Fatal(err)
			}
			// A short timeout keeps the hanging faults quick; the working
			// SUTs get room for the 16 MiB boundary cases on a loaded machine.
			timeout := 10 * time.Second
			if strings.HasPrefix(spec, "builtin:fault/") {
				timeout = 300 * time.Millisecond
			}
			rec := runner.Run(context.Background(), runner.Config{Spec: spec, Client: c, Cases: sel, Timeout: timeout})
			c.Close()
			if spec == "builtin:reference" || spec[:5] == "exec:" {
				if rec.ExitCode != 0 {
					t.Errorf("exit %d", rec.ExitCode)
				}
			} else if rec.Summary.Counts[reports.Error] == 0 {
				t.Errorf("a fault SUT produced no error")
			}
			if err := goleak.Find(); err != nil {
				t.Errorf("after Close: %v", err)
			}
		})
	}
}

func TestOpenRefusesUnknownSpecs(t *testing.T) {
	for _, spec := range []string{"", "builtin:mutant/none", "builtin:fault/none", "builtin:other", "gopher://x", "exec:'unterminated"} {
		_, err := dial.Open(context.Background(), spec, opts())
		var ue *dial.UsageError
		if !errors.As(err, &ue) {
			t.Errorf("Open(%q) = %v, want a *UsageError", spec, err)
		}
	}
}

// TestUsageErrorsSayWhat: each --sut mistake is refused before anything
// runs, naming the value and saying what is wrong with it.
func TestUsageErrorsSayWhat(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	if err := os.WriteFile("shim.py", []byte("print('hi')\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir("adir", 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		spec string
		says []string
	}{
		{"foo:bar", []string{`--sut "foo:bar"`, `unknown carrier "foo:"`, "tcp://HOST:PORT"}},
		{"gopher://x", []string{`unknown carrier "gopher:"`}},
		{"tcp://127.0.0.1:99999", []string{`"tcp://127.0.0.1:99999"`, `the port "99999" is not a number from 0 to 65535`}},
		{"tcp://127.0.0.1:0", []string{"port 0 names no SUT"}},
		{"shim.py", []string{`no program "shim.py" in $PATH`, "write ./shim.py"}},
		{"exec:shim.py --flag", []string{"write ./shim.py"}},
		{"./shim.py", []string{"./shim.py is not executable", "exec:python3 ./shim.py"}},
		{dir, []string{dir + " is a directory, not a program"}},
		{"./adir", []string{"./adir is a directory"}},
		{"./missing", []string{"no program at ./missing (no such file)"}},
		{"no-such-program-anywhere", []string{`no program "no-such-program-anywhere" in $PATH`}},
		{"lib:./missing.so", []string{"no library at ./missing.so (no such file)"}},
		{"lib:./adir", []string{"./adir is a directory, not a library"}},
	}
	for _, tt := range tests {
		_, err := dial.Open(context.Background(), tt.spec, opts())
		var ue *dial.UsageError
		if !errors.As(err, &ue) {
			t.Errorf("Open(%q) = %v, want a *UsageError", tt.spec, err)
			continue
		}
		for _, s := range tt.says {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("Open(%q): %q does not say %q", tt.spec, err, s)
			}
		}
	}
}

func TestSplitCommand(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"conform reference", []string{"conform", "reference"}},
		{`python3 "my shim.py" --x`, []string{"python3", "my shim.py", "--x"}},
		{`a 'b c' d\ e`, []string{"a", "b c", "d e"}},
		{`"say \"hi\""`, []string{`say "hi"`}},
		{"  spaced\targs  ", []string{"spaced", "args"}},
	}
	for _, tt := range tests {
		got, err := dial.SplitCommand(tt.in)
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("SplitCommand(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{"", "   ", `"open`} {
		if _, err := dial.SplitCommand(bad); err == nil {
			t.Errorf("SplitCommand(%q) succeeded", bad)
		}
	}
}
