package sut

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"
	"unicode/utf8"

	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/ref/wire"
	"github.com/conform-suite/conform/reports"
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
// sent: a prefix above the 16 MiB ceiling is a protocol error, and the
// buffer of a long answer grows with what has arrived, to at most twice
// that. It reads one answer per request, so a SUT that writes more than it
// was asked fills its pipe and blocks rather than filling the harness's
// memory; and it keeps no buffer of an answer after returning it, so one
// 15 MiB answer does not stay 15 MiB of the harness's memory.
type Session struct {
	r      ReadStream
	w      WriteStream
	in     []byte // readSize bytes; in[off:end] has arrived and not been used
	off    int
	end    int
	enc    Encoding
	hello  *conformpb.Hello
	nextID uint64
	broken error
}

// readSize is the size of a Session's read buffer: an answer that fits is
// decoded where it landed, and a longer one is read into a buffer of its own.
const readSize = 64 << 10

// Open starts a session on a SUT that reads w and writes r: it sends the
// empty opening request, reads the SUT's Hello and sniffs the encoding from
// it. The caller owns r and w and closes them after Close.
func Open(ctx context.Context, r ReadStream, w WriteStream) (*Session, error) {
	s := &Session{r: r, w: w, in: make([]byte, readSize)}
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
		return nil, &Error{Kind: reports.KindProtocol, Detail: "the SUT's first answer is not a Hello: " + describe(payload), Err: err}
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
		return nil, &Error{Kind: reports.KindProtocol, Detail: fmt.Sprintf("answer to request %d is not a Response: %s", req.Id, describe(payload)), Err: err}
	}
	if resp.Id != req.Id {
		return nil, &Error{Kind: reports.KindProtocol, Detail: fmt.Sprintf("answer carries id %d, the request was %d", resp.Id, req.Id)}
	}
	if resp.Result == nil {
		return nil, &Error{Kind: reports.KindProtocol, Detail: fmt.Sprintf("answer to request %d carries no result", req.Id)}
	}
	capNotes(resp)
	return resp, nil
}

// capNotes bounds the text of an Error or Unimplemented answer to reports.MaxMessage
// bytes. That text is for a person, never judged, and the harness keeps it
// in the record: a SUT answering every request with a 15 MiB message must
// not make conform hold, or write, 15 MiB per case.
func capNotes(resp *conformpb.Response) {
	switch r := resp.Result.(type) {
	case *conformpb.Response_Error:
		r.Error.Message = reports.Clip(r.Error.GetMessage(), reports.MaxMessage)
	case *conformpb.Response_Unimplemented:
		r.Unimplemented.Detail = reports.Clip(r.Unimplemented.GetDetail(), reports.MaxMessage)
	}
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
			return &Error{Kind: reports.KindTimeout, Detail: "the SUT did not read its request in time", Err: err}
		}
		return &Error{Kind: reports.KindCrash, Detail: "writing to the SUT failed", Err: err}
	}
	return nil
}

// read returns the next frame's payload. A payload that fit the read
// buffer aliases it and is valid until the next read; the caller decodes it
// at once (decoding copies what it keeps).
func (s *Session) read(ctx context.Context) ([]byte, error) {
	defer bound(ctx, s.r.SetReadDeadline)()
	for s.end-s.off < wire.PrefixLen {
		if err := s.fill(); err != nil {
			return nil, s.ended(err, s.in[s.off:s.end], -1)
		}
	}
	n := int64(binary.BigEndian.Uint32(s.in[s.off:]))
	if n > wire.MaxPayload {
		held := s.in[s.off:s.end]
		if looksLikeText(held) {
			return nil, &Error{Kind: reports.KindProtocol, Detail: fmt.Sprintf(
				"the SUT wrote text into its protocol stream, where a 4-byte length should be: %s (a SUT must write conform.v1 frames alone on its output, and its logs to stderr)",
				quoteStart(held))}
		}
		return nil, &Error{Kind: reports.KindProtocol, Detail: fmt.Sprintf(
			"the SUT sent a frame length of %d bytes, above the %d-byte ceiling (its bytes: % x)", n, wire.MaxPayload, held[:min(len(held), 16)])}
	}
	s.off += wire.PrefixLen
	if avail := int64(s.end - s.off); avail >= n {
		p := s.in[s.off : s.off+int(n) : s.off+int(n)]
		s.off += int(n)
		return p, nil
	}
	// A long answer: its own buffer, grown as bytes arrive, never to more
	// than the length claimed or twice what has arrived.
	p := make([]byte, 0, min(n, int64(readSize)*2))
	p = append(p, s.in[s.off:s.end]...)
	s.off, s.end = 0, 0
	for int64(len(p)) < n {
		if len(p) == cap(p) {
			p = append(make([]byte, 0, min(n, 2*int64(cap(p)))), p...)
		}
		m, err := s.r.Read(p[len(p):cap(p)])
		p = p[:len(p)+m]
		if err != nil && m == 0 {
			return nil, s.ended(err, p, n)
		}
	}
	return p, nil
}

// fill reads what the SUT sent next into the read buffer.
func (s *Session) fill() error {
	if s.off == s.end {
		s.off, s.end = 0, 0
	} else if s.off > 0 {
		s.end = copy(s.in, s.in[s.off:s.end])
		s.off = 0
	}
	m, err := s.r.Read(s.in[s.end:])
	s.end += m
	if m > 0 {
		return nil
	}
	if err == nil {
		err = io.ErrNoProgress
	}
	return err
}

// ended describes a read that failed after held arrived of a frame that
// claims want bytes (-1: its prefix had not arrived).
func (s *Session) ended(err error, held []byte, want int64) error {
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded):
		return &Error{Kind: reports.KindTimeout, Detail: "the SUT did not answer in time", Err: err}
	case !errors.Is(err, io.EOF):
		return &Error{Kind: reports.KindCrash, Detail: "reading from the SUT failed", Err: err}
	case want >= 0:
		return &Error{Kind: reports.KindCrash, Detail: fmt.Sprintf("the SUT's output ended inside a frame, after %d of the %d bytes its prefix claims", len(held), want), Err: err}
	case len(held) > 0 && looksLikeText(held):
		return &Error{Kind: reports.KindProtocol, Detail: fmt.Sprintf("the SUT wrote text into its protocol stream, then its output ended: %s", quoteStart(held)), Err: err}
	case len(held) > 0:
		return &Error{Kind: reports.KindCrash, Detail: fmt.Sprintf("the SUT's output ended inside a frame's length prefix (% x)", held), Err: err}
	}
	return &Error{Kind: reports.KindCrash, Detail: "the SUT's output ended", Err: err}
}

// looksLikeText reports whether b, the start of what should have been a
// frame, reads as text: printable UTF-8 and white space up to its first
// newline, or through its first 64 bytes. A real prefix above the ceiling
// starts with a byte of at least 0x01 followed by others that are rarely all
// printable.
func looksLikeText(b []byte) bool {
	b = firstLine(b)
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if r == utf8.RuneError && n == 1 && len(b) >= utf8.UTFMax {
			return false
		}
		if r == utf8.RuneError && n == 1 {
			return true // a character cut at the end of what arrived
		}
		if r < 0x20 && r != '\n' && r != '\r' && r != '\t' || r == 0x7f {
			return false
		}
		b = b[n:]
	}
	return true
}

// firstLine returns b through its first newline, and at most 64 bytes.
func firstLine(b []byte) []byte {
	b = b[:min(len(b), 64)]
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		return b[:i+1]
	}
	return b
}

// quoteStart quotes the first line of b, at most 32 bytes of it, escaped,
// with "…" when there is more.
func quoteStart(b []byte) string {
	const show = 32
	line := firstLine(b)
	if len(line) <= show && len(line) == len(b) {
		return strconv.Quote(string(line))
	}
	return strconv.Quote(string(line[:min(len(line), show)])) + "…"
}

// describe says what a payload that did not decode starts with.
func describe(p []byte) string {
	if looksLikeText(p) {
		return fmt.Sprintf("%d bytes of text, %s", len(p), quoteStart(p))
	}
	return fmt.Sprintf("%d bytes, % x", len(p), p[:min(len(p), 16)])
}

// Close marks the session finished; the caller closes the streams.
func (s *Session) Close() {
	if s.broken == nil {
		s.broken = errors.New("session closed")
	}
}
