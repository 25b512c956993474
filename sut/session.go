package sut

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/ref/wire"
)

// ReadStream is the SUT's output as the harness reads it: a pipe (*os.File)
// or a connection (net.Conn), whose reads a deadline can bound.
type ReadStream interface {
	io.Reader
	SetReadDeadline(time.Time) error
}

// WriteStream is the SUT's input as the harness writes it.
type WriteStream interface {
	io.Writer
	SetWriteDeadline(time.Time) error
}

// Session is the harness's end of a conform.v1 session over a byte stream,
// framed as Ranvier frames its data (ranvier-wire §1). It is shared by the
// carriers that reach a SUT through a pipe or a socket.
//
// Reads and writes are plain blocking calls bounded by deadlines taken from
// the op's context, so a round trip costs two system calls and no
// goroutine. A Session never allocates on the strength of a length the SUT
// sent: a prefix above the 16 MiB ceiling is a protocol error. It reads one
// answer per request, so a SUT that writes more than it was asked fills its
// pipe and blocks rather than filling the harness's memory.
type Session struct {
	r      ReadStream
	w      WriteStream
	fr     wire.Reader
	buf    []byte
	enc    Encoding
	hello  *conformpb.Hello
	nextID uint64
	broken error
}

// Open starts a session on a SUT that reads w and writes r: it sends the
// empty opening request, reads the SUT's Hello and sniffs the encoding from
// it. The caller owns r and w and closes them after Close.
func Open(ctx context.Context, r ReadStream, w WriteStream) (*Session, error) {
	s := &Session{r: r, w: w, buf: make([]byte, 64<<10)}
	if err := s.write(ctx, nil); err != nil {
		return nil, err
	}
	payload, err := s.read(ctx)
	if err != nil {
		return nil, fmt.Errorf("waiting for Hello: %w", err)
	}
	s.enc = Sniff(payload)
	hello := new(conformpb.Hello)
	if err := s.enc.Unmarshal(payload, hello); err != nil {
		return nil, &Error{Kind: KindProtocol, Detail: "the SUT's first answer is not a Hello", Err: err}
	}
	s.hello = hello
	return s, nil
}

// Hello returns the SUT's Hello.
func (s *Session) Hello() *conformpb.Hello { return s.hello }

// Encoding returns the encoding sniffed from the SUT's Hello.
func (s *Session) Encoding() Encoding { return s.enc }

// Broken returns the error that ended the session, or nil while it is usable.
func (s *Session) Broken() error { return s.broken }

// Do sends req with the next id and waits for the matching response. After
// any error the session is broken: the byte stream can no longer be trusted
// to be aligned, and every later call returns the same error.
func (s *Session) Do(ctx context.Context, req *conformpb.Request) (*conformpb.Response, error) {
	if s.broken != nil {
		return nil, s.broken
	}
	resp, err := s.do(ctx, req)
	if err != nil {
		s.broken = err
	}
	return resp, err
}

func (s *Session) do(ctx context.Context, req *conformpb.Request) (*conformpb.Response, error) {
	s.nextID++
	req.Id = s.nextID
	b, err := s.enc.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("encoding request: %w", err)
	}
	if err := s.write(ctx, b); err != nil {
		return nil, err
	}
	payload, err := s.read(ctx)
	if err != nil {
		return nil, err
	}
	resp := new(conformpb.Response)
	if err := s.enc.Unmarshal(payload, resp); err != nil {
		return nil, &Error{Kind: KindProtocol, Detail: fmt.Sprintf("answer to request %d is not a Response", req.Id), Err: err}
	}
	if resp.Id != req.Id {
		return nil, &Error{Kind: KindProtocol, Detail: fmt.Sprintf("answer carries id %d, the request was %d", resp.Id, req.Id)}
	}
	if resp.Result == nil {
		return nil, &Error{Kind: KindProtocol, Detail: fmt.Sprintf("answer to request %d carries no result", req.Id)}
	}
	return resp, nil
}

// bound applies ctx to one blocking call through set, a stream's deadline
// setter: its deadline as the deadline, and its cancellation as an
// immediate one. The returned function lifts both.
func bound(ctx context.Context, set func(time.Time) error) (release func()) {
	d, _ := ctx.Deadline()
	set(d)
	stop := context.AfterFunc(ctx, func() { set(time.Now()) })
	return func() {
		stop()
		set(time.Time{})
	}
}

// write sends one frame.
func (s *Session) write(ctx context.Context, payload []byte) error {
	frame, err := wire.AppendFrame(nil, payload)
	if err != nil {
		return fmt.Errorf("request too large for conform.v1: %w", err)
	}
	defer bound(ctx, s.w.SetWriteDeadline)()
	if _, err := s.w.Write(frame); err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return &Error{Kind: KindTimeout, Detail: "the SUT did not read its request in time", Err: err}
		}
		return &Error{Kind: KindCrash, Detail: "writing to the SUT failed", Err: err}
	}
	return nil
}

// read returns the next frame's payload, a copy the caller owns.
func (s *Session) read(ctx context.Context) ([]byte, error) {
	defer bound(ctx, s.r.SetReadDeadline)()
	for {
		payload, ok, err := s.fr.Next()
		if err != nil {
			return nil, &Error{Kind: KindProtocol, Detail: "the SUT sent a frame length above the ceiling", Err: err}
		}
		if ok {
			return append([]byte(nil), payload...), nil
		}
		n, err := s.r.Read(s.buf)
		s.fr.Write(s.buf[:n])
		switch {
		case err == nil || n > 0:
		case errors.Is(err, os.ErrDeadlineExceeded):
			return nil, &Error{Kind: KindTimeout, Detail: "the SUT did not answer in time", Err: err}
		case errors.Is(err, io.EOF) && s.fr.Buffered() > 0:
			return nil, &Error{Kind: KindCrash, Detail: "the SUT's output ended inside a frame", Err: err}
		default:
			return nil, &Error{Kind: KindCrash, Detail: "the SUT's output ended", Err: err}
		}
	}
}

// Close marks the session finished; the caller closes the streams.
func (s *Session) Close() {
	if s.broken == nil {
		s.broken = errors.New("session closed")
	}
}
