package sut

import (
	"context"
	"errors"
	"fmt"
	"io"

	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/ref/wire"
)

// Session is the harness's end of a conform.v1 session over a byte stream,
// framed as Ranvier frames its data (ranvier-wire §1). It is shared by the
// carriers that reach a SUT through a pipe or a socket.
//
// A Session never allocates on the strength of a length the SUT sent: a
// prefix above the 16 MiB ceiling is a protocol error, and a SUT that writes
// more than it was asked is stopped by backpressure, not buffered without end.
type Session struct {
	w      io.Writer
	frames chan frameResult
	done   chan struct{}
	enc    Encoding
	hello  *conformpb.Hello
	nextID uint64
	broken error
}

type frameResult struct {
	payload []byte
	err     error
}

// Open starts a session on a SUT that reads from w and writes to r: it sends
// the empty opening request, reads the SUT's Hello and sniffs the encoding
// from it. The caller owns r and w and must close them (or end the process
// behind them) after Close, so that the session's reading goroutine ends.
func Open(ctx context.Context, r io.Reader, w io.Writer) (*Session, error) {
	s := &Session{
		w:      w,
		frames: make(chan frameResult, 1),
		done:   make(chan struct{}),
	}
	go s.readLoop(r)
	if err := s.write(ctx, nil); err != nil {
		s.Close()
		return nil, err
	}
	payload, err := s.read(ctx)
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("waiting for Hello: %w", err)
	}
	s.enc = Sniff(payload)
	hello := new(conformpb.Hello)
	if err := s.enc.Unmarshal(payload, hello); err != nil {
		s.Close()
		return nil, &Error{Kind: KindProtocol, Detail: "the SUT's first answer is not a Hello", Err: err}
	}
	s.hello = hello
	return s, nil
}

// readLoop turns the SUT's output into frames until the stream ends, an
// error occurs or the session is closed.
func (s *Session) readLoop(r io.Reader) {
	var fr wire.Reader
	buf := make([]byte, 64<<10)
	send := func(f frameResult) bool {
		select {
		case s.frames <- f:
			return true
		case <-s.done:
			return false
		}
	}
	for {
		for {
			payload, ok, err := fr.Next()
			if err != nil {
				send(frameResult{err: &Error{Kind: KindProtocol, Detail: "the SUT sent a frame length above the ceiling", Err: err}})
				return
			}
			if !ok {
				break
			}
			if !send(frameResult{payload: append([]byte(nil), payload...)}) {
				return
			}
		}
		n, err := r.Read(buf)
		fr.Write(buf[:n])
		if err != nil && n == 0 {
			if errors.Is(err, io.EOF) && fr.Buffered() > 0 {
				err = fmt.Errorf("stream ended inside a frame (%d bytes buffered): %w", fr.Buffered(), err)
			}
			send(frameResult{err: &Error{Kind: KindCrash, Detail: "the SUT's output ended", Err: err}})
			return
		}
	}
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

// write sends one frame. The write runs apart so that a SUT that stops
// reading cannot hold the harness past ctx; the carrier's teardown (killing
// the process, closing the socket) ends it.
func (s *Session) write(ctx context.Context, payload []byte) error {
	frame, err := wire.AppendFrame(nil, payload)
	if err != nil {
		return fmt.Errorf("request too large for conform.v1: %w", err)
	}
	errc := make(chan error, 1)
	go func() {
		_, err := s.w.Write(frame)
		errc <- err
	}()
	select {
	case err := <-errc:
		if err != nil {
			return &Error{Kind: KindCrash, Detail: "writing to the SUT failed", Err: err}
		}
		return nil
	case <-ctx.Done():
		return &Error{Kind: KindTimeout, Detail: "the SUT did not read its request in time", Err: ctx.Err()}
	}
}

func (s *Session) read(ctx context.Context) ([]byte, error) {
	select {
	case f := <-s.frames:
		return f.payload, f.err
	case <-ctx.Done():
		return nil, &Error{Kind: KindTimeout, Detail: "the SUT did not answer in time", Err: ctx.Err()}
	}
}

// Close stops the session's reading goroutine once its input is closed.
func (s *Session) Close() {
	select {
	case <-s.done:
	default:
		close(s.done)
	}
	if s.broken == nil {
		s.broken = errors.New("session closed")
	}
}
