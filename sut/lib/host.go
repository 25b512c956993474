package lib

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"unsafe"

	"github.com/ebitengine/purego"

	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/ref/wire"
	"github.com/conform-suite/conform/sut"
	"github.com/conform-suite/conform/sut/exec"
)

// The C ABI's two symbols (include/conform.h).
const (
	symCall = "conform_call"
	symFree = "conform_free"
)

// binding is a loaded library's two functions.
type binding struct {
	call func(req *byte, n uintptr, resp **byte, respLen *uintptr) int32
	free func(resp *byte)
}

// load opens the shared library at path and binds its two symbols.
func load(path string) (*binding, error) {
	if strings.ContainsRune(path, '/') {
		// dlopen's own message for a missing file can be empty.
		st, err := os.Stat(path)
		if err != nil {
			return nil, fmt.Errorf("no library at %s: %w", path, err)
		}
		if st.IsDir() {
			return nil, fmt.Errorf("%s is a directory, not a library", path)
		}
	}
	h, err := purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_LOCAL)
	if err != nil {
		if strings.TrimSpace(err.Error()) == "" {
			return nil, fmt.Errorf("loading %s failed (dlopen gave no reason)", path)
		}
		return nil, fmt.Errorf("loading %s: %w", path, err)
	}
	b := new(binding)
	for _, s := range []struct {
		name string
		fn   any
	}{{symCall, &b.call}, {symFree, &b.free}} {
		addr, err := purego.Dlsym(h, s.name)
		if err != nil {
			return nil, fmt.Errorf("%s does not export %s: %w", path, s.name, err)
		}
		purego.RegisterFunc(s.fn, addr)
	}
	return b, nil
}

// result is where conform_call writes its answer. It lives on the heap so
// that its address stays valid for the whole foreign call.
type result struct {
	p *byte
	n uintptr
}

// one passes one bare payload to conform_call and returns a Go copy of the
// answer, which it hands back to conform_free.
func (b *binding) one(req []byte) ([]byte, error) {
	// conform_call is never given NULL, even for the empty request.
	ptr := new(byte)
	if len(req) > 0 {
		ptr = &req[0]
	}
	out := new(result)
	rc := b.call(ptr, uintptr(len(req)), &out.p, &out.n)
	if rc != 0 {
		return nil, fmt.Errorf("%s returned %d", symCall, rc)
	}
	if out.p == nil {
		return nil, fmt.Errorf("%s returned 0 with a NULL response", symCall)
	}
	// The length is the library's claim: checked before anything is
	// allocated or read on the strength of it.
	if out.n > wire.MaxPayload {
		b.free(out.p)
		return nil, fmt.Errorf("%s answered %d bytes, above the %d-byte frame ceiling", symCall, out.n, wire.MaxPayload)
	}
	answer := make([]byte, out.n)
	copy(answer, unsafe.Slice(out.p, out.n))
	b.free(out.p)
	return answer, nil
}

// ServeHost is the lib: carrier's child process ("conform lib-host PATH"):
// it serves the library at path with Host on the private descriptors the
// carrier passes (exec.RequestFD and exec.AnswerFD), after pointing its own
// standard output at its standard error and its standard input at the null
// device. What the library prints then lands in the stderr tail the harness
// keeps, and cannot corrupt the framing.
func ServeHost(ctx context.Context, path string) error {
	in := os.NewFile(exec.RequestFD, "conform-requests")
	out := os.NewFile(exec.AnswerFD, "conform-answers")
	for _, f := range []*os.File{in, out} {
		if _, err := f.Stat(); err != nil {
			return fmt.Errorf("descriptor %d is not open (lib-host is started by the lib: carrier, which passes conform.v1 on descriptors %d and %d): %w",
				f.Fd(), exec.RequestFD, exec.AnswerFD, err)
		}
	}
	if err := redirectStdio(); err != nil {
		return fmt.Errorf("pointing stdout at stderr: %w", err)
	}
	return Host(ctx, path, in, out)
}

// Host loads the C ABI library at path and serves conform.v1 with it on a
// byte stream: it reads framed messages from stdin, passes each bare payload
// to conform_call and writes the answer back on stdout, framed. ServeHost
// runs it in the lib: carrier's child process, so that a library that
// crashes takes down only that process.
//
// The first answer is the library's Hello, and fixes the session's encoding.
// A later call that returns non-zero, answers NULL or answers more than the
// frame ceiling is reported to the harness as a conform.v1 Error response
// carrying the request's id; when the Hello itself fails there is no session
// to answer in, and Host returns an error.
//
// Host returns nil when stdin ends cleanly, and ctx's error when ctx ends
// while it waits for a request. Before the first call it restores the
// default action of the signals a faulty library raises (SIGSEGV, SIGBUS,
// SIGFPE, SIGILL, SIGABRT, SIGTRAP) — before loading it, since a library's
// constructors run as it loads — so that such a fault kills the process by
// that signal and the harness can name it.
func Host(ctx context.Context, path string, stdin io.Reader, stdout io.Writer) error {
	if err := resetCrashSignals(); err != nil {
		return fmt.Errorf("restoring default signal actions: %w", err)
	}
	b, err := load(path)
	if err != nil {
		return err
	}
	frames := make(chan frameResult)
	done := make(chan struct{})
	defer close(done)
	go readFrames(stdin, frames, done)

	var enc sut.Encoding
	opened := false
	for {
		var f frameResult
		select {
		case f = <-frames:
		case <-ctx.Done():
			return ctx.Err()
		}
		if f.err != nil {
			if errors.Is(f.err, io.EOF) {
				return nil
			}
			return f.err
		}
		answer, err := b.one(f.payload)
		if !opened {
			if err != nil {
				return fmt.Errorf("the opening call (for the Hello) failed: %w", err)
			}
			enc = sut.Sniff(answer)
			opened = true
		} else if err != nil {
			if answer, err = errorResponse(enc, f.payload, err); err != nil {
				return err
			}
		}
		if err := wire.WriteFrame(ctx, stdout, answer); err != nil {
			return err
		}
	}
}

// errorResponse builds the conform.v1 Response reporting a failed call, in
// enc, with the id of the request it answers when that can be read.
func errorResponse(enc sut.Encoding, reqPayload []byte, cause error) ([]byte, error) {
	req := new(conformpb.Request)
	_ = enc.Unmarshal(reqPayload, req)
	resp := &conformpb.Response{Id: req.GetId(), Result: &conformpb.Response_Error{Error: &conformpb.Error{
		Message: "the library failed: " + cause.Error(),
	}}}
	b, err := enc.Marshal(resp)
	if err != nil {
		return nil, fmt.Errorf("encoding the Error response for %v: %w", cause, err)
	}
	return b, nil
}

type frameResult struct {
	payload []byte
	err     error
}

// readFrames splits r into frames until it ends or done is closed; the last
// thing it sends is an error (io.EOF at a clean end).
func readFrames(r io.Reader, out chan<- frameResult, done <-chan struct{}) {
	send := func(f frameResult) bool {
		select {
		case out <- f:
			return true
		case <-done:
			return false
		}
	}
	var fr wire.Reader
	buf := make([]byte, 64<<10)
	for {
		payload, ok, err := fr.Next()
		if err != nil {
			send(frameResult{err: err})
			return
		}
		if ok {
			if !send(frameResult{payload: append([]byte(nil), payload...)}) {
				return
			}
			continue
		}
		n, err := r.Read(buf)
		fr.Write(buf[:n])
		if err != nil && n == 0 {
			if errors.Is(err, io.EOF) {
				if end := fr.End(); end != nil {
					err = end
				}
			}
			send(frameResult{err: err})
			return
		}
	}
}
