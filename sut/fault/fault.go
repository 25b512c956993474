// Package fault holds conform's fault SUTs: programs that break conform.v1
// in one named way each — crash, hang, garbage, an oversize length, a flood,
// an early exit, a wrong id, slowness. They run as real child processes
// (conform fault NAME, over the exec carrier), so that a crash is a crash,
// and they prove that every such SUT yields error outcomes, never a pass,
// and never stops the run.
package fault

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strconv"
	"time"

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
	// answer replaces the reference's answer to the n-th request (from 1).
	// It returns the bytes to write, or nil to write nothing.
	answer func(n int, req *conformpb.Request, resp []byte) []byte
	// beforeHello, if set, runs instead of the session.
	beforeHello func()
}

// Environment variables that tune the faults, for tests.
const (
	// EnvAfter is the request (from 1) at which crash misbehaves; default 3.
	EnvAfter = "CONFORM_FAULT_AFTER"
	// EnvDelay is how long slow waits before each answer; default 15s.
	EnvDelay = "CONFORM_FAULT_DELAY"
)

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

var faults = []Fault{
	{Name: "crash", Suite: "*", Bug: "aborts (SIGABRT, as C's abort) on the n-th request (CONFORM_FAULT_AFTER, default 3)",
		answer: func(n int, _ *conformpb.Request, resp []byte) []byte {
			if n >= after() {
				// Traceback "crash" makes the runtime end an unrecovered
				// panic by raising SIGABRT, so the process dies by a signal
				// as a crashing native binding does.
				debug.SetTraceback("crash")
				panic(fmt.Sprintf("fault crash: request %d", n))
			}
			return frame(resp)
		}},
	{Name: "hang", Suite: "*", Bug: "says Hello, then reads requests and never answers",
		answer: func(int, *conformpb.Request, []byte) []byte { return nil }},
	{Name: "garbage", Suite: "*", Bug: "answers every request with bytes that are not a conform.v1 message",
		answer: func(int, *conformpb.Request, []byte) []byte {
			return frame([]byte("\xff\xfe this is not protobuf \x00\x01\x02"))
		}},
	{Name: "oversize", Suite: "*", Bug: "answers with a length prefix claiming 4 GiB - 1 (above the 16 MiB ceiling)",
		answer: func(int, *conformpb.Request, []byte) []byte { return []byte{0xff, 0xff, 0xff, 0xff, 1, 2, 3} }},
	{Name: "flood", Suite: "*", Bug: "answers the first request with an endless stream of bytes",
		answer: func(int, *conformpb.Request, []byte) []byte {
			chunk := make([]byte, 64<<10)
			for i := range chunk {
				chunk[i] = byte(i)
			}
			for {
				if _, err := os.Stdout.Write(chunk); err != nil {
					os.Exit(0)
				}
			}
		}},
	{Name: "early-exit", Suite: "*", Bug: "exits with status 1 before saying Hello",
		beforeHello: func() {
			fmt.Fprintln(os.Stderr, "fault early-exit: giving up before Hello")
			os.Exit(1)
		}},
	{Name: "wrong-id", Suite: "*", Bug: "answers each request with the id of another request",
		answer: func(_ int, req *conformpb.Request, _ []byte) []byte {
			resp := &conformpb.Response{Id: req.Id + 1000, Result: &conformpb.Response_Error{Error: &conformpb.Error{Message: "wrong id"}}}
			b, _ := sut.Binary.Marshal(resp)
			return frame(b)
		}},
	{Name: "slow", Suite: "*", Bug: "answers correctly but only after a delay longer than the op timeout (CONFORM_FAULT_DELAY, default 15s)",
		answer: func(_ int, _ *conformpb.Request, resp []byte) []byte {
			time.Sleep(delay())
			return frame(resp)
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

// Serve runs the fault on r and w: it says Hello as the reference does, then
// misbehaves. It returns when r ends.
func (f Fault) Serve(ctx context.Context, r io.Reader, w io.Writer) error {
	if f.beforeHello != nil {
		f.beforeHello()
	}
	ref := impl.Reference()
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
		if n == 0 {
			b, _ := sut.Binary.Marshal(ref.Hello())
			n++
			if _, err := w.Write(frame(b)); err != nil {
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
		if out := f.answer(n, req, b); out != nil {
			if _, err := w.Write(out); err != nil {
				return err
			}
		}
		n++
	}
}
