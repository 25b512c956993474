// Package lib reaches a SUT built as a shared library with conform's C ABI
// (include/conform.h): the library exports
//
//	int  conform_call(const uint8_t *req, size_t len, uint8_t **resp, size_t *resp_len);
//	void conform_free(uint8_t *resp);
//
// and each conform.v1 message crosses it as one bare payload, without a
// length prefix. The first call carries the empty request and returns the
// Hello, in the binary or the JSON encoding as on the other carriers.
//
// conform never loads the library into its own process. Open starts a child
// host process ("conform lib-host PATH", which runs Host) over the exec
// carrier, so a segfault or an abort in the library kills only the host: the
// op is recorded as an error naming the signal, the host is restarted on the
// next op and the run goes on. conform.v1 travels between conform and the
// host on private descriptors (exec.Options.PrivateFDs), and the host points
// its standard output at its standard error, so a library that prints
// cannot corrupt the framing: what it prints lands in the stderr tail.
package lib

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/reports"
	"github.com/conform-suite/conform/sut"
	"github.com/conform-suite/conform/sut/exec"
)

// Scheme is the prefix of a --sut value that names this carrier.
const Scheme = "lib:"

// HostCommand is the conform subcommand that runs Host.
const HostCommand = "lib-host"

// Options configure Open.
type Options struct {
	// Self is the command that runs conform itself (usually
	// os.Executable()); the host process is Self + ["lib-host", PATH].
	Self []string
	// HelloTimeout bounds the wait for the library's Hello.
	HelloTimeout time.Duration
	// Env is added to the host process's environment.
	Env []string
}

// Client is a sut.Client for a C ABI library, loaded in a child host
// process that is restarted after a crash, a timeout or a protocol error.
type Client struct {
	path string
	*exec.Client
}

// Open starts a host process for the library at path (with or without the
// lib: prefix) and waits for the library's Hello. A library that cannot be
// loaded, lacks a symbol or never answers the opening call yields an
// *sut.Error of kind KindStart carrying the host's standard error.
func Open(ctx context.Context, path string, opts Options) (*Client, error) {
	path = strings.TrimPrefix(path, Scheme)
	if path == "" {
		return nil, &sut.Error{Kind: reports.KindStart, Detail: "no library named"}
	}
	if len(opts.Self) == 0 {
		return nil, &sut.Error{Kind: reports.KindStart, Detail: "cannot start the library host: conform does not know its own path"}
	}
	if err := CheckPath(path); err != nil {
		return nil, &sut.Error{Kind: reports.KindStart, Detail: err.Error()}
	}
	argv := append(append([]string(nil), opts.Self...), HostCommand, loadPath(path))
	c, err := exec.Start(ctx, argv, exec.Options{HelloTimeout: opts.HelloTimeout, Env: opts.Env, PrivateFDs: true})
	if err != nil {
		return nil, err
	}
	return &Client{path: path, Client: c}, nil
}

// CheckPath reports a library path that cannot be loaded whatever the
// library holds: a path (one with a slash) where there is no file, or a
// directory. A bare file name is looked up by the dynamic loader in the
// system's library path, and is left to it.
func CheckPath(path string) error {
	if !strings.ContainsRune(path, '/') {
		return nil
	}
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("no library at %s (no such file)", path)
	case err != nil:
		return fmt.Errorf("cannot read the library %s: %w", path, err)
	case st.IsDir():
		return fmt.Errorf("%s is a directory, not a library", path)
	}
	return nil
}

// loadPath returns the path the host should load: an existing file as an
// absolute path (dlopen looks a bare file name up in the system's library
// path, not in the working directory), anything else unchanged.
func loadPath(path string) string {
	if _, err := os.Stat(path); err != nil {
		return path
	}
	if abs, err := filepath.Abs(path); err == nil {
		return abs
	}
	return path
}

// Hello returns the Hello the library answered its opening call with.
func (c *Client) Hello() *conformpb.Hello { return c.Client.Hello() }

// Carrier describes the client for the record: lib:PATH.
func (c *Client) Carrier() string { return Scheme + c.path }
