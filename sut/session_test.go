package sut

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"runtime"
	"runtime/metrics"
	"strings"
	"testing"
	"time"

	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/ref/wire"
	"github.com/conform-suite/conform/reports"
	"google.golang.org/protobuf/encoding/protowire"
)

// script is a SUT's output, played back to a Session: Read hands out out in
// chunks of at most chunk bytes (all of it when chunk is 0), then io.EOF.
// What the session writes is discarded.
type script struct {
	out   []byte
	chunk int
}

func (s *script) Read(p []byte) (int, error) {
	if len(s.out) == 0 {
		return 0, io.EOF
	}
	n := len(p)
	if s.chunk > 0 {
		n = min(n, s.chunk)
	}
	n = copy(p[:n], s.out)
	s.out = s.out[n:]
	return n, nil
}

func (s *script) Write(p []byte) (int, error)      { return len(p), nil }
func (s *script) SetReadDeadline(time.Time) error  { return nil }
func (s *script) SetWriteDeadline(time.Time) error { return nil }
func frame(p []byte) []byte                        { return binary.BigEndian.AppendUint32(nil, uint32(len(p))) }
func framed(p []byte) []byte                       { return append(frame(p), p...) }
func hello(t testing.TB, enc Encoding) []byte {
	return framed(must(t)(enc.Marshal(&conformpb.Hello{Implementation: "t"})))
}
func must(t testing.TB) func([]byte, error) []byte {
	return func(b []byte, err error) []byte { t.Helper(); ok(t, err); return b }
}
func ok(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
func request() *conformpb.Request {
	return &conformpb.Request{Op: &conformpb.Request_Decode{Decode: &conformpb.Decode{}}}
}
func answer(t testing.TB, id uint64, msg string) []byte {
	return framed(must(t)(Binary.Marshal(&conformpb.Response{Id: id, Result: &conformpb.Response_Error{Error: &conformpb.Error{Message: msg}}})))
}

func wantError(t *testing.T, err error, kind reports.ErrorKind, says ...string) {
	t.Helper()
	var se *Error
	if !errors.As(err, &se) || se.Kind != kind {
		t.Fatalf("got %v, want a sut.Error of kind %s", err, kind)
	}
	for _, s := range says {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("%q does not say %q", err.Error(), s)
		}
	}
}

// TestTextInTheStream: a SUT that prints text where a frame should be is
// told so, with the text quoted, not told about a length of 1.7 GB.
func TestTextInTheStream(t *testing.T) {
	tests := []struct {
		name string
		out  []byte
		says []string
	}{
		{"a greeting", []byte("hello, world\n"), []string{"wrote text into its protocol stream", `"hello, world\n"`}},
		{"a long log line", []byte(strings.Repeat("log ", 100)), []string{"wrote text", `"log log log log log log log log "…`}},
		{"four bytes", []byte("hell"), []string{"wrote text", `"hell"`}},
		{"a line, then the Hello", append([]byte("debug: starting\n"), framed([]byte{0x0a, 0x01, 't'})...), []string{"wrote text", `"debug: starting\n"…`}},
		{"text, then the end", []byte("ok\n"), []string{"wrote text into its protocol stream, then its output ended", `"ok\n"`}},
		{"an escape sequence", []byte("\x1b[2J"), []string{"frame length of 458961482 bytes", "1b 5b 32 4a"}},
		{"JSON without framing", []byte(`{"implementation":"x"}`), []string{"wrote text", `"{\"implementation\":\"x\"}"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Open(context.Background(), &script{out: tt.out}, &script{})
			wantError(t, err, reports.KindProtocol, tt.says...)
			if strings.Contains(err.Error(), "claims") || strings.ContainsRune(err.Error(), 0x1b) {
				t.Errorf("%q", err)
			}
		})
	}
}

func TestBadFrames(t *testing.T) {
	h := hello(t, Binary)
	tests := []struct {
		name string
		out  []byte
		kind reports.ErrorKind
		says []string
	}{
		{"a 4 GiB length", append(append(h, 0xff, 0xff, 0xff, 0xff), 1, 2, 3), reports.KindProtocol,
			[]string{"frame length of 4294967295 bytes, above the 16777216-byte ceiling", "ff ff ff ff"}},
		{"the end inside a frame", append(h, 0, 0, 1, 0, 1, 2), reports.KindCrash, []string{"ended inside a frame, after 2 of the 256 bytes"}},
		{"the end inside a prefix", append(h, 0, 0), reports.KindCrash, []string{"inside a frame's length prefix (00 00)"}},
		{"the end", h, reports.KindCrash, []string{"output ended"}},
		{"garbage", append(h, framed([]byte("\xff\xfe not protobuf"))...), reports.KindProtocol, []string{"not a Response", "ff fe"}},
		{"a wrong id", append(h, answer(t, 7, "x")...), reports.KindProtocol, []string{"carries id 7, the request was 1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Open(context.Background(), &script{out: tt.out, chunk: 3}, &script{})
			ok(t, err)
			_, err = s.Do(context.Background(), request())
			wantError(t, err, tt.kind, tt.says...)
		})
	}
}

// TestLongAnswerIsNotKept: a 15 MiB answer arrives whole, in small chunks,
// and once it has been handed over the session keeps nothing of it.
func TestLongAnswerIsNotKept(t *testing.T) {
	const size = 15 << 20
	// Response{id: 1, error: {message: size × 'x'}}, streamed: only its
	// head is held by the test.
	msg := protowire.AppendTag(nil, 1, protowire.BytesType)
	msg = protowire.AppendVarint(msg, size)
	resp := protowire.AppendTag(nil, 1, protowire.VarintType)
	resp = protowire.AppendVarint(resp, 1)
	resp = protowire.AppendTag(resp, 3, protowire.BytesType)
	resp = protowire.AppendVarint(resp, uint64(len(msg)+size))
	head := append(hello(t, Binary), frame(make([]byte, len(resp)+len(msg)+size))...)
	head = append(append(head, resp...), msg...)
	out := io.MultiReader(bytes.NewReader(head), io.LimitReader(repeat('x'), size), bytes.NewReader(answer(t, 2, "short")))

	before := liveHeap()
	s, err := Open(context.Background(), stream{out}, &script{})
	ok(t, err)
	got, err := s.Do(context.Background(), request())
	ok(t, err)
	if msg := got.GetError().GetMessage(); !strings.HasSuffix(msg, fmt.Sprintf("[%d bytes dropped]", size-reports.MaxMessage)) || len(msg) > reports.MaxMessage+32 {
		t.Errorf("the 15 MiB message was kept as %d bytes ending %q", len(msg), msg[max(0, len(msg)-40):])
	}
	got = nil
	if grew := liveHeap() - before; grew > 4<<20 {
		t.Errorf("the live heap grew by %d bytes after a 15 MiB answer was handed over", grew)
	}
	got, err = s.Do(context.Background(), request())
	if err != nil || got.GetError().GetMessage() != "short" {
		t.Fatalf("the next answer: %v, %v", got, err)
	}
	runtime.KeepAlive(s)
}

// repeat is an endless stream of one byte.
type repeat byte

func (r repeat) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(r)
	}
	return len(p), nil
}

// stream is a ReadStream and WriteStream over a reader, writes discarded.
type stream struct{ io.Reader }

func (stream) Write(p []byte) (int, error)      { return len(p), nil }
func (stream) SetReadDeadline(time.Time) error  { return nil }
func (stream) SetWriteDeadline(time.Time) error { return nil }

// liveHeap returns the bytes of live heap objects after a collection.
func liveHeap() int64 {
	runtime.GC()
	m := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(m)
	return int64(m[0].Value.Uint64())
}

// TestClaimIsNotAllocated: a prefix claiming just under the ceiling, with
// few bytes behind it, costs what arrived, not what was claimed.
func TestClaimIsNotAllocated(t *testing.T) {
	out := append(hello(t, Binary), frame(make([]byte, wire.MaxPayload))...)
	out = append(out, bytes.Repeat([]byte{1}, 100)...)
	s, err := Open(context.Background(), &script{out: out}, &script{})
	ok(t, err)
	allocs := heapAllocs()
	_, err = s.Do(context.Background(), request())
	wantError(t, err, reports.KindCrash, "after 100 of the 16777216 bytes")
	if got := heapAllocs() - allocs; got > 1<<20 {
		t.Errorf("a 16 MiB claim with 100 bytes behind it allocated %d bytes", got)
	}
}

// heapAllocs returns the bytes allocated on the heap so far.
func heapAllocs() uint64 {
	m := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(m)
	return m[0].Value.Uint64()
}

func TestErrorIsBoundedAndEscaped(t *testing.T) {
	e := &Error{Kind: reports.KindProtocol, Detail: strings.Repeat("a", 10000) + "\x1b[2J", Err: errors.New("\x1b]0;title\x07")}
	s := e.Error()
	if len(s) > 2*reports.MaxMessage || !strings.Contains(s, fmt.Sprintf("[%d bytes dropped]", 10004-reports.MaxMessage)) {
		t.Errorf("Error() is %d bytes: %.80q…", len(s), s)
	}
	if strings.ContainsAny(s, "\x1b\x07") || !strings.Contains(s, `\x1b]0;title\x07`) {
		t.Errorf("control characters not escaped: %q", s[len(s)-40:])
	}
}
