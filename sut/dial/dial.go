// Package dial turns a --sut value into a sut.Client: it is the one place
// that knows every carrier.
package dial

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/conform-suite/conform/sut"
	"github.com/conform-suite/conform/sut/builtin"
	"github.com/conform-suite/conform/sut/exec"
	"github.com/conform-suite/conform/sut/fault"
	"github.com/conform-suite/conform/sut/impl"
	"github.com/conform-suite/conform/sut/lib"
	"github.com/conform-suite/conform/sut/mutant"
	"github.com/conform-suite/conform/sut/natsc"
	"github.com/conform-suite/conform/sut/tcp"
)

// Options configure Open.
type Options struct {
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
// A spec naming no known carrier is a *UsageError; a SUT that cannot be
// started or never says Hello is a *sut.Error of kind KindStart.
func Open(ctx context.Context, spec string, opts Options) (sut.Client, error) {
	switch {
	case spec == "builtin:reference":
		im := impl.Reference()
		if len(opts.Self) > 0 {
			im.SetNodeCommand(mutant.NodeCommand(opts.Self, ""))
		}
		return builtin.New(spec, im), nil
	case strings.HasPrefix(spec, "builtin:mutant/"):
		name := strings.TrimPrefix(spec, "builtin:mutant/")
		m, ok := mutant.Lookup(name)
		if !ok {
			return nil, &UsageError{spec, "no such mutant (conform mutants lists them)"}
		}
		im := m.Impl()
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
		return exec.Start(ctx, argv, exec.Options{HelloTimeout: opts.HelloTimeout, Env: opts.Env})
	case strings.HasPrefix(spec, tcp.Scheme):
		if _, err := tcp.ParseAddr(spec); err != nil {
			return nil, &UsageError{spec, err.Error()}
		}
		return tcp.Dial(ctx, spec, tcp.Options{HelloTimeout: opts.HelloTimeout})
	case strings.HasPrefix(spec, lib.Scheme):
		if strings.TrimPrefix(spec, lib.Scheme) == "" {
			return nil, &UsageError{spec, "no library named (lib:./libmybinding.so)"}
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
	case strings.Contains(spec, "://"):
		return nil, &UsageError{spec, "unknown carrier"}
	case spec == "":
		return nil, &UsageError{spec, "empty"}
	default:
		argv, err := SplitCommand(spec)
		if err != nil {
			return nil, &UsageError{spec, err.Error()}
		}
		return exec.Start(ctx, argv, exec.Options{HelloTimeout: opts.HelloTimeout, Env: opts.Env})
	}
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
