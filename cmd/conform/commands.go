package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/conform-suite/conform/runner"
	"github.com/conform-suite/conform/suite"
	"github.com/conform-suite/conform/sut"
	"github.com/conform-suite/conform/sut/fault"
	"github.com/conform-suite/conform/sut/impl"
	"github.com/conform-suite/conform/sut/lib"
	"github.com/conform-suite/conform/sut/mutant"
	"github.com/conform-suite/conform/sut/natsc"
	"github.com/conform-suite/conform/sut/tcp"
)

func cmdList(_ context.Context, reg *suite.Registry, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("list", stderr)
	var profiles, globs listFlag
	fs.Var(&profiles, "profile", "list only these profiles or suites")
	fs.Var(&globs, "case", "list only cases whose ID matches this glob")
	if _, err := parse(fs, args); err != nil {
		return flagExit(err)
	}
	cat, err := reg.Catalogue()
	if err != nil {
		fmt.Fprintf(stderr, "conform: %v\n", err)
		return 1
	}
	sel, err := runner.Select(cat.Cases, profiles, globs)
	if err != nil {
		fmt.Fprintf(stderr, "conform list: %v\n", err)
		return exitUsage
	}
	for _, c := range sel {
		fmt.Fprintf(stdout, "%s\t%s\t%s\t%s\t%s\n", c.ID, c.Level, c.Profile, c.Spec, c.Title)
	}
	return 0
}

func cmdReference(ctx context.Context, reg *suite.Registry, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "node" {
		return cmdReferenceNode(ctx, reg, args[1:], stdin, stdout, stderr)
	}
	ref := reg.Reference()
	if s := self(); len(s) > 0 {
		ref.SetNodeCommand(mutant.NodeCommand(s, "")) // the Hello's node_command
	}
	fs := newFlags("reference", stderr)
	asJSON := fs.Bool("json", false, "answer in conform.v1's canonical JSON rather than binary protobuf")
	listen := fs.String("listen", "", "serve on TCP at tcp://HOST:PORT instead of stdio (port 0 picks a free port; the bound address is printed on stderr)")
	natsURL := fs.String("nats", "", "serve as NATS request/reply on BASE.conform at nats://HOST:PORT/BASE instead of stdio (reconnects to the broker for as long as it runs)")
	if _, err := parse(fs, args); err != nil {
		return flagExit(err)
	}
	enc := sut.Binary
	if *asJSON {
		enc = sut.JSON
	}
	if *natsURL != "" {
		ep, err := natsc.ParseEndpoint(*natsURL)
		if err != nil {
			fmt.Fprintf(stderr, "conform reference: --nats: %v\n", err)
			return exitUsage
		}
		// The server logs from nats.go's goroutines, beside this one's
		// "listening on" line.
		var mu sync.Mutex
		logf := func(format string, args ...any) {
			mu.Lock()
			defer mu.Unlock()
			fmt.Fprintf(stderr, "conform reference: "+format+"\n", args...)
		}
		srv, err := natsc.Listen(ctx, ep, ref, enc, natsc.ListenOptions{Logf: logf})
		if err != nil {
			fmt.Fprintf(stderr, "conform reference: %v\n", err)
			return 1
		}
		mu.Lock()
		fmt.Fprintf(stderr, "listening on %s (subject %s)\n", ep, ep.Subject())
		mu.Unlock()
		// Serve until interrupted (SIGINT or SIGTERM end ctx).
		if err := srv.Wait(); err != nil {
			fmt.Fprintf(stderr, "conform reference: %v\n", err)
			return 1
		}
		return 0
	}
	if *listen != "" {
		if _, err := tcp.ParseAddr(*listen); err != nil {
			fmt.Fprintf(stderr, "conform reference: --listen: %v\n", err)
			return exitUsage
		}
		srv, err := tcp.Listen(ctx, *listen, ref, enc)
		if err != nil {
			fmt.Fprintf(stderr, "conform reference: %v\n", err)
			return 1
		}
		fmt.Fprintf(stderr, "listening on %s\n", srv.URL())
		// Serve until interrupted (SIGINT or SIGTERM end ctx).
		if err := srv.Wait(); err != nil {
			fmt.Fprintf(stderr, "conform reference: %v\n", err)
			return 1
		}
		return 0
	}
	if err := sut.Serve(ctx, stdin, stdout, ref, enc); err != nil {
		fmt.Fprintf(stderr, "conform reference: %v\n", err)
		return 1
	}
	return 0
}

// cmdLibHost is the child process of the lib: carrier: it loads a C ABI
// library and serves conform.v1 with it on the descriptors the carrier
// passes (3 and 4), its own stdout pointed at its stderr.
func cmdLibHost(ctx context.Context, reg *suite.Registry, args []string, _ io.Reader, _, stderr io.Writer) int {
	if len(args) != 1 {
		fmt.Fprintln(stderr, "usage: conform lib-host PATH")
		return exitUsage
	}
	if err := lib.ServeHost(ctx, args[0]); err != nil {
		fmt.Fprintf(stderr, "conform lib-host %s: %v\n", args[0], err)
		return 1
	}
	return 0
}

func cmdMutants(_ context.Context, reg *suite.Registry, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	if _, err := parse(newFlags("mutants", stderr), args); err != nil {
		return flagExit(err)
	}
	for _, m := range reg.Mutants() {
		fmt.Fprintf(stdout, "%s\t%s\t%s\n", m.Name, m.Suite, m.Bug)
	}
	return 0
}

func cmdFaults(_ context.Context, reg *suite.Registry, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	if _, err := parse(newFlags("faults", stderr), args); err != nil {
		return flagExit(err)
	}
	for _, f := range fault.All() {
		fmt.Fprintf(stdout, "%s\t%s\t%s\n", f.Name, f.Suite, f.Bug)
	}
	return 0
}

func cmdFault(ctx context.Context, reg *suite.Registry, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) != 1 {
		fmt.Fprintln(stderr, "usage: conform fault NAME")
		return exitUsage
	}
	f, ok := fault.Lookup(args[0])
	if !ok {
		fmt.Fprintf(stderr, "conform fault: no fault %q\n", args[0])
		return exitUsage
	}
	// The process's own stdout, not the writer Main was given: a fault
	// such as flood writes to it directly and without end.
	if err := f.Serve(ctx, reg.Reference(), stdin, os.Stdout); err != nil {
		fmt.Fprintf(stderr, "conform fault %s: %v\n", f.Name, err)
		return 1
	}
	return 0
}

func cmdVersion(_ context.Context, reg *suite.Registry, _ []string, _ io.Reader, stdout, _ io.Writer) int {
	fmt.Fprintf(stdout, "conform %s\n", impl.Version())
	return 0
}
