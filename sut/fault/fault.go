// Package fault holds conform's fault SUTs: programs that break conform.v1
// in one named way each — a crash, a hang (after or before the Hello, or on
// every restart), garbage, a length claiming 4 GiB, a 15 MiB error message,
// text on stdout, a flood, an early exit, a wrong id, slowness, a
// descendant that escapes the process group. They run as real child
// processes (conform fault NAME, over the exec carrier), so that a crash is
// a crash, and they prove that every such SUT yields error outcomes, never
// a pass, and never stops the run, grows conform's memory without bound or
// keeps it from exiting. Serve also runs them over any byte stream, such as
// a TCP connection.
package fault

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/conform-suite/conform/proc"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/ref/wire"
	"github.com/conform-suite/conform/sut"
	"github.com/conform-suite/conform/sut/impl"
)

// A Fault is one way of misbehaving.
type Fault struct {
	// Name is a slug, as in builtin:fault/<name>.
	Name string
	// Suite is the case-ID prefix of the cases it affects: all of them.
	Suite string
	// Bug says what it does, in one line.
	Bug string
	// NoHello is set for a fault that never gets a Hello across, so that
	// conform run records every case as a start error and exits 3.
	NoHello bool
	// beforeHello, if set, runs before the session; it may end the process
	// or never return.
	beforeHello func(r io.Reader)
	// answer, if set, writes the answer to the n-th request (from 1) in
	// place of resp, the reference's; nil means resp, framed.
	answer func(w io.Writer, n int, req *conformpb.Request, resp []byte) error
	// prefix, if set, is written before every answer, the Hello included.
	prefix string
}

// Environment variables that tune the faults, for tests.
const (
	// EnvAfter is the request (from 1) at which crash misbehaves; default 3.
	EnvAfter = "CONFORM_FAULT_AFTER"
	// EnvDelay is how long slow waits before each answer; default 15s.
	EnvDelay = "CONFORM_FAULT_DELAY"
	// EnvState names the file by which lost tells a restart from its first
	// start. Unset, it is a file in the temporary directory named for the
	// parent process, removed by a later start once that parent has gone.
	EnvState = "CONFORM_FAULT_STATE"
)

// HugeErrorSize is the length of huge-error's Error.message.
const HugeErrorSize = 15 << 20

func after() int {
	if n, err := strconv.Atoi(os.Getenv(EnvAfter)); err == nil && n > 0 {
		return n
	}
	return 3
}

func delay() time.Duration {
	if d, err := time.ParseDuration(os.Getenv(EnvDelay)); err == nil {
		return d
	}
	return 15 * time.Second
}

// crash ends the process by SIGABRT, as C's abort does: traceback "crash"
// makes the runtime end an unrecovered panic by raising it, so the process
// dies by a signal as a crashing native binding does.
func crash(why string) {
	debug.SetTraceback("crash")
	panic(why)
}

// idle reads r to its end, and exits: a SUT that never answers.
func idle(r io.Reader) {
	_, _ = io.Copy(io.Discard, r)
	os.Exit(0)
}

var faults = []Fault{
	{Name: "crash", Suite: "*", Bug: "aborts (SIGABRT, as C's abort) on the n-th request (CONFORM_FAULT_AFTER, default 3)",
		answer: func(w io.Writer, n int, _ *conformpb.Request, resp []byte) error {
			if n >= after() {
				crash(fmt.Sprintf("fault crash: request %d", n))
			}
			return write(w, frame(resp))
		}},
	{Name: "hang", Suite: "*", Bug: "says Hello, then reads requests and never answers",
		answer: func(io.Writer, int, *conformpb.Request, []byte) error { return nil }},
	{Name: "garbage", Suite: "*", Bug: "answers every request with bytes that are not a conform.v1 message",
		answer: func(w io.Writer, _ int, _ *conformpb.Request, _ []byte) error {
			return write(w, frame([]byte("\xff\xfe this is not protobuf \x00\x01\x02")))
		}},
	{Name: "oversize", Suite: "*", Bug: "answers with a length prefix claiming 4 GiB - 1 (above the 16 MiB ceiling)",
		answer: func(w io.Writer, _ int, _ *conformpb.Request, _ []byte) error {
			return write(w, []byte{0xff, 0xff, 0xff, 0xff, 1, 2, 3})
		}},
	{Name: "flood", Suite: "*", Bug: "answers the first request with an endless stream of bytes",
		answer: func(w io.Writer, _ int, _ *conformpb.Request, _ []byte) error {
			chunk := make([]byte, 64<<10)
			for i := range chunk {
				chunk[i] = byte(i)
			}
			for {
				if err := write(w, chunk); err != nil {
					return err
				}
			}
		}},
	{Name: "early-exit", Suite: "*", Bug: "exits with status 1 before saying Hello", NoHello: true,
		beforeHello: func(io.Reader) {
			fmt.Fprintln(os.Stderr, "fault early-exit: giving up before Hello")
			os.Exit(1)
		}},
	{Name: "hang-before-hello", Suite: "*", Bug: "reads the opening request and never says Hello, at every start", NoHello: true,
		beforeHello: idle},
	{Name: "lost", Suite: "*", Bug: "says Hello, then aborts at its first request; every restart hangs before its Hello (CONFORM_FAULT_STATE)",
		beforeHello: func(r io.Reader) {
			if restarted() {
				fmt.Fprintln(os.Stderr, "fault lost: restarted, and never saying Hello")
				idle(r)
			}
		},
		answer: func(io.Writer, int, *conformpb.Request, []byte) error {
			crash("fault lost: crashing, never to come back")
			return nil
		}},
	{Name: "wrong-id", Suite: "*", Bug: "answers each request with the id of another request",
		answer: func(w io.Writer, _ int, req *conformpb.Request, _ []byte) error {
			resp := &conformpb.Response{Id: req.Id + 1000, Result: &conformpb.Response_Error{Error: &conformpb.Error{Message: "wrong id"}}}
			b, _ := sut.Binary.Marshal(resp)
			return write(w, frame(b))
		}},
	{Name: "huge-error", Suite: "*", Bug: "answers every request with an Error whose message is 15 MiB",
		answer: func(w io.Writer, _ int, req *conformpb.Request, _ []byte) error {
			resp := &conformpb.Response{Id: req.Id, Result: &conformpb.Response_Error{Error: &conformpb.Error{
				Message: strings.Repeat("E", HugeErrorSize),
			}}}
			b, _ := sut.Binary.Marshal(resp)
			return write(w, frame(b))
		}},
	{Name: "stdout-text", Suite: "*", Bug: "prints a line of text on stdout before each answer, its Hello included", NoHello: true,
		prefix: "hello from a debug print\n"},
	{Name: "escape", Suite: "*", Bug: "starts a descendant in a session of its own that holds its stderr open for 10 minutes, says Hello, and never answers",
		beforeHello: func(io.Reader) {
			if err := spawnEscapee(); err != nil {
				fmt.Fprintln(os.Stderr, "fault escape:", err)
				os.Exit(1)
			}
		},
		answer: func(io.Writer, int, *conformpb.Request, []byte) error { return nil }},
	{Name: "slow", Suite: "*", Bug: "answers correctly but only after a delay longer than the op timeout (CONFORM_FAULT_DELAY, default 15s)",
		answer: func(w io.Writer, _ int, _ *conformpb.Request, resp []byte) error {
			time.Sleep(delay())
			return write(w, frame(resp))
		}},
}

// All returns every fault.
func All() []Fault { return append([]Fault(nil), faults...) }

// Lookup returns the fault named name.
func Lookup(name string) (Fault, bool) {
	for _, f := range faults {
		if f.Name == name {
			return f, true
		}
	}
	return Fault{}, false
}

func frame(p []byte) []byte {
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(p))), p...)
}

func write(w io.Writer, b []byte) error {
	_, err := w.Write(b)
	return err
}

// restarted reports whether lost has started before for the same parent,
// and records that it has. Without EnvState the state file names the parent
// (a proc.Owner), so that a later start can remove the files of parents
// that have gone.
func restarted() bool {
	path := os.Getenv(EnvState)
	if path == "" {
		sweepStates()
		path = filepath.Join(os.TempDir(), statePrefix+proc.OwnerOf(os.Getppid()).String())
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return errors.Is(err, os.ErrExist)
	}
	f.Close()
	return false
}

const statePrefix = "conform-fault-lost-"

// sweepStates removes the state files of parents that are no longer running.
func sweepStates() {
	files, _ := filepath.Glob(filepath.Join(os.TempDir(), statePrefix+"*"))
	for _, f := range files {
		if o, err := proc.ParseOwner(strings.TrimPrefix(filepath.Base(f), statePrefix)); err == nil && !o.Alive() {
			_ = os.Remove(f)
		}
	}
}

// Serve runs the fault on r and w: it says Hello as ref (a fresh reference)
// does, then misbehaves. It returns when r ends.
func (f Fault) Serve(ctx context.Context, ref *impl.Impl, r io.Reader, w io.Writer) error {
	if f.beforeHello != nil {
		f.beforeHello(r)
	}
	ref.Name = "conform fault " + f.Name
	var fr wire.Reader
	buf := make([]byte, 64<<10)
	n := 0
	for {
		payload, ok, err := fr.Next()
		if err != nil {
			return err
		}
		if !ok {
			m, err := r.Read(buf)
			fr.Write(buf[:m])
			if err != nil && m == 0 {
				if errors.Is(err, io.EOF) {
					return nil
				}
				return err
			}
			continue
		}
		if f.prefix != "" {
			if err := write(w, []byte(f.prefix)); err != nil {
				return err
			}
		}
		if n == 0 {
			b, _ := sut.Binary.Marshal(ref.Hello())
			n++
			if err := write(w, frame(b)); err != nil {
				return err
			}
			continue
		}
		req := new(conformpb.Request)
		if err := sut.Binary.Unmarshal(payload, req); err != nil {
			return err
		}
		resp := ref.Handle(ctx, req)
		resp.Id = req.Id
		b, _ := sut.Binary.Marshal(resp)
		if f.answer == nil {
			err = write(w, frame(b))
		} else {
			err = f.answer(w, n, req, b)
		}
		if err != nil {
			return err
		}
		n++
	}
}
