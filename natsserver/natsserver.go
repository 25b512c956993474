// Package natsserver runs a nats-server embedded in the calling process, for
// the tests and live cases that need a real broker when none is given
// (DESIGN.md: "else an embedded nats-server that conform starts on
// loopback").
//
// The server is github.com/nats-io/nats-server/v2 itself, not a mock and not
// an external binary: it listens on a random loopback port, allows messages
// of DefaultMaxPayload (64 MiB) unless told otherwise, and has JetStream
// enabled with its store in a temporary directory that Shutdown removes. It
// logs nothing unless Options.Logf is set. The store directory names the
// process that owns it, so that when that process is killed before its
// Shutdown, the next Start (or Sweep) removes what it left.
//
// A typical use:
//
//	srv, err := natsserver.Start(ctx, natsserver.Options{})
//	if err != nil { … }
//	defer srv.Shutdown()
//	nc, err := nats.Connect(srv.URL())
package natsserver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/conform-suite/conform/proc"
)

// Defaults applied to the zero fields of Options.
const (
	// DefaultMaxPayload is the largest message the server accepts when
	// Options.MaxPayload is zero: 64 MiB, the least DESIGN.md asks of a
	// broker that carries conform.v1 and doppler's live cases.
	DefaultMaxPayload = 64 << 20

	// DefaultReadyTimeout bounds the wait for the server to accept clients
	// when Options.ReadyTimeout is zero.
	DefaultReadyTimeout = 10 * time.Second

	// minMaxPending is the least per-client outbound buffer the server is
	// given. nats-server refuses a max_payload above max_pending, and a
	// buffer that holds exactly one largest message turns one slow reader
	// into a disconnected one, so the buffer is kept at four of the largest
	// message and never below nats-server's own default of 64 MiB.
	minMaxPending = 64 << 20

	// readySlice is how often Start rechecks its context while it waits
	// for the server to become ready.
	readySlice = 25 * time.Millisecond
)

// Options configure an embedded server. The zero value is the server conform
// uses when no broker is given.
type Options struct {
	// MaxPayload is the server's max_payload in bytes, the largest message
	// a client may publish. Zero means DefaultMaxPayload. A test of
	// chunking sets it small (64 KiB, say) so that modest frames chunk.
	MaxPayload int32

	// ReadyTimeout bounds the wait for the server to accept clients, on top
	// of the context's own deadline. Zero means DefaultReadyTimeout.
	ReadyTimeout time.Duration

	// Logf, when set, receives the server's log lines, each prefixed with
	// its level ("[INF] ", "[WRN] ", "[ERR] ", "[FTL] ", and with Debug
	// "[DBG] "). When nil the server logs nothing.
	Logf func(format string, args ...any)

	// Debug also passes the server's debug lines to Logf.
	Debug bool

	// TempDir is the directory the JetStream store directory is created
	// in. Empty means os.TempDir().
	TempDir string

	// Username and Password, when Username is set, are the only
	// credentials the server admits.
	Username, Password string
}

// Server is a running embedded nats-server. Its methods are safe for
// concurrent use.
type Server struct {
	srv        *server.Server
	storeDir   string
	maxPayload int32
	once       sync.Once
}

// Start starts an embedded nats-server on 127.0.0.1 at a port the kernel
// picks, with JetStream enabled and its store in a new temporary directory,
// and returns once the server accepts clients and JetStream is available.
// It fails, leaving nothing running and no directory behind, when the
// server cannot be configured or started, or when it is not ready before
// ctx is done or Options.ReadyTimeout passes.
func Start(ctx context.Context, o Options) (*Server, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("natsserver: start: %w", err)
	}
	maxPayload := o.MaxPayload
	if maxPayload == 0 {
		maxPayload = DefaultMaxPayload
	}
	if maxPayload < 0 {
		return nil, fmt.Errorf("natsserver: start: max_payload %d is negative", maxPayload)
	}
	readyTimeout := o.ReadyTimeout
	if readyTimeout <= 0 {
		readyTimeout = DefaultReadyTimeout
	}

	parent := o.TempDir
	if parent == "" {
		parent = os.TempDir()
	}
	// What a conform killed before its Shutdown left behind.
	_, _ = Sweep(parent)
	// The directory's name says whose it is. An owner file written into it
	// would leave a moment, after the mkdir, in which a SIGKILL leaves a
	// directory that names no owner and so is never swept.
	dir, err := os.MkdirTemp(parent, storePrefix+proc.Self().String()+"-*")
	if err != nil {
		return nil, fmt.Errorf("natsserver: start: JetStream store directory: %w", err)
	}
	opts := &server.Options{
		ServerName: "conform-embedded",
		Host:       "127.0.0.1",
		Port:       server.RANDOM_PORT,
		MaxPayload: maxPayload,
		MaxPending: max(minMaxPending, 4*int64(maxPayload)),
		JetStream:  true,
		StoreDir:   dir,
		NoLog:      o.Logf == nil,
		NoSigs:     true,
		Debug:      o.Debug,
		Username:   o.Username,
		Password:   o.Password,
	}
	srv, err := server.NewServer(opts)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("natsserver: start: configure nats-server: %w", err)
	}
	if o.Logf != nil {
		srv.SetLogger(logger(o.Logf), o.Debug, false)
	}
	s := &Server{srv: srv, storeDir: dir, maxPayload: maxPayload}

	srv.Start()
	if err := s.waitReady(ctx, readyTimeout); err != nil {
		s.Shutdown()
		return nil, err
	}
	return s, nil
}

// CredentialBroker starts a server that admits only user with password,
// and returns its URL and its Shutdown: what cases.Env.CredentialBroker
// asks of a run.
func CredentialBroker(ctx context.Context, user, password string) (url string, stop func(), err error) {
	if user == "" {
		return "", nil, errors.New("natsserver: a server with credentials needs a user name")
	}
	srv, err := Start(ctx, Options{Username: user, Password: password})
	if err != nil {
		return "", nil, err
	}
	return srv.URL(), srv.Shutdown, nil
}

// A store directory is named storePrefix + its owner (proc.Owner.String)
// + "-" + a random suffix.
const (
	storePrefix = "conform-nats-js-"
	// legacyAge is the age past which a store directory whose name names no
	// owner, left by a conform from before owners were named, is swept. A
	// younger one may be a directory another program is creating right now.
	legacyAge = 24 * time.Hour
)

// Sweep removes, from dir, the JetStream store directories of embedded
// servers whose conform is no longer running: a conform killed by SIGKILL
// cannot remove its own. A store directory's name names its owner (a
// process ID, start time and PID namespace, see proc.Owner); the
// directories of running owners are left alone. Start sweeps its parent
// directory, and conform sweeps os.TempDir() as it starts. Sweep returns the
// directories it removed.
func Sweep(dir string) ([]string, error) {
	stores, err := filepath.Glob(filepath.Join(dir, storePrefix+"*"))
	if err != nil {
		return nil, err
	}
	var removed []string
	var errs []error
	for _, store := range stores {
		if !stale(store) {
			continue
		}
		if err := os.RemoveAll(store); err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, store)
	}
	return removed, errors.Join(errs...)
}

// stale reports whether store belongs to no running conform.
func stale(store string) bool {
	st, err := os.Lstat(store)
	if err != nil || !st.IsDir() {
		return false
	}
	name := strings.TrimPrefix(filepath.Base(store), storePrefix)
	if i := strings.IndexByte(name, '-'); i >= 0 {
		if owner, err := proc.ParseOwner(name[:i]); err == nil {
			return !owner.Alive()
		}
	}
	return time.Since(st.ModTime()) > legacyAge
}

// waitReady waits, in short slices so that ctx is honoured, until the
// server accepts clients and JetStream is enabled.
func (s *Server) waitReady(ctx context.Context, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		if s.srv.ReadyForConnections(readySlice) && s.srv.JetStreamEnabled() {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("natsserver: start: waiting for the server to be ready: %w", err)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("natsserver: start: the server was not ready with JetStream after %v", timeout)
		}
		select {
		case <-ctx.Done():
		case <-time.After(readySlice):
		}
	}
}

// URL returns the URL a client dials, nats://127.0.0.1:<port>.
func (s *Server) URL() string { return s.srv.ClientURL() }

// MaxPayload returns the max_payload the server was started with, which is
// also what a connected client reports from nats.Conn.MaxPayload.
func (s *Server) MaxPayload() int32 { return s.maxPayload }

// StoreDir returns the temporary directory that holds the JetStream store.
// Shutdown removes it.
func (s *Server) StoreDir() string { return s.storeDir }

// NATS returns the underlying nats-server, for a test that needs to inspect
// it (its JetStream streams, its client count). Stopping it other than
// through Shutdown leaves the store directory behind.
func (s *Server) NATS() *server.Server { return s.srv }

// Shutdown stops the server, waits until it has stopped, and removes its
// JetStream store directory. Clients still connected are disconnected.
// Calling it again does nothing.
func (s *Server) Shutdown() {
	s.once.Do(func() {
		s.srv.Shutdown()
		s.srv.WaitForShutdown()
		_ = removeAll(s.storeDir)
	})
}

// removeAll removes dir, retrying briefly: the JetStream store can still be
// closing files in the moment after WaitForShutdown returns.
func removeAll(dir string) error {
	var err error
	for range 20 {
		if err = os.RemoveAll(dir); err == nil {
			return nil
		}
		time.Sleep(10 * time.Millisecond)
	}
	return errors.Join(fmt.Errorf("natsserver: remove %s", dir), err)
}

// logger adapts a printf-style function to nats-server's Logger.
type logger func(format string, args ...any)

func (l logger) Noticef(format string, v ...any) { l("[INF] "+format, v...) }
func (l logger) Warnf(format string, v ...any)   { l("[WRN] "+format, v...) }
func (l logger) Fatalf(format string, v ...any)  { l("[FTL] "+format, v...) }
func (l logger) Errorf(format string, v ...any)  { l("[ERR] "+format, v...) }
func (l logger) Debugf(format string, v ...any)  { l("[DBG] "+format, v...) }
func (l logger) Tracef(format string, v ...any)  { l("[TRC] "+format, v...) }

// Lazy is a server started on first use: a run where only some cases need a
// broker starts none when those cases are not selected. Its methods are safe
// for concurrent use.
type Lazy struct {
	opts Options
	mu   sync.Mutex
	srv  *Server
	err  error
}

// NewLazy returns a Lazy that starts a server with o when first asked.
func NewLazy(o Options) *Lazy { return &Lazy{opts: o} }

// URL starts the server if it is not running and returns its client URL. A
// failed start is remembered: every later call returns the same error rather
// than retrying for each case.
func (l *Lazy) URL(ctx context.Context) (string, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.srv == nil && l.err == nil {
		l.srv, l.err = Start(ctx, l.opts)
	}
	if l.err != nil {
		return "", l.err
	}
	return l.srv.URL(), nil
}

// Shutdown stops the server if it was started.
func (l *Lazy) Shutdown() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.srv != nil {
		l.srv.Shutdown()
		l.srv = nil
	}
}
