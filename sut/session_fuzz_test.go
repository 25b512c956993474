package sut

import (
	"context"
	"errors"
	"testing"

	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/reports"
)

// FuzzSessionAnswers feeds arbitrary bytes to a Session as a SUT's whole
// output, read in chunks of a fuzzed size: the Hello, in either encoding,
// then answers to requests until the output ends or breaks the protocol.
// The session must not panic or loop, must allocate no more than a bound
// set by what arrived (never by what a prefix claims), and must report
// every failure as an *Error whose text is bounded and printable.
func FuzzSessionAnswers(f *testing.F) {
	jsonHello := framed([]byte(`{"implementation":"shim","profiles":["wire"]}`))
	binHello := hello(f, Binary)
	seeds := [][]byte{
		nil,
		[]byte("hello, world\n"),
		[]byte("\x1b[2J"),
		{0xff, 0xff, 0xff, 0xff, 1, 2, 3},
		{0x00, 0xff, 0xff, 0xff},
		binHello,
		append(append([]byte{}, binHello...), answer(f, 1, "first")...),
		append(append(append([]byte{}, binHello...), answer(f, 1, "first")...), answer(f, 2, "second")...),
		append(append([]byte{}, binHello...), answer(f, 9, "wrong id")...),
		append(append([]byte{}, binHello...), framed([]byte{0x08, 0x01})...), // no result
		jsonHello,
		append(append([]byte{}, jsonHello...), framed([]byte(`{"id":"1","unimplemented":{}}`))...),
		append(append([]byte{}, jsonHello...), framed([]byte(`{"id":"1","error":{"message":"\u001b[2J"}}`))...),
		append(append([]byte{}, jsonHello...), framed([]byte(`{"id":"1","bogus":1}`))...),
		append(append([]byte{}, jsonHello...), 0, 0, 1),
	}
	for _, s := range seeds {
		f.Add(s, uint8(0))
		f.Add(s, uint8(1))
		f.Add(s, uint8(5))
	}
	f.Fuzz(func(t *testing.T, out []byte, chunk uint8) {
		before := heapAllocs()
		s, err := Open(context.Background(), &script{out: out, chunk: int(chunk)}, &script{})
		for i := 0; err == nil; i++ {
			if i > len(out) {
				t.Fatalf("%d answers from %d bytes", i, len(out))
			}
			_, err = s.Do(context.Background(), &conformpb.Request{Op: &conformpb.Request_Decode{Decode: &conformpb.Decode{}}})
		}
		if used, bound := heapAllocs()-before, uint64(2<<20+64*len(out)); used > bound {
			t.Errorf("%d bytes of output cost %d bytes of allocation, above %d", len(out), used, bound)
		}
		var se *Error
		if !errors.As(err, &se) {
			t.Fatalf("%T %v is not a *sut.Error", err, err)
		}
		msg := err.Error()
		if len(msg) > 3*reports.MaxMessage {
			t.Errorf("error text of %d bytes", len(msg))
		}
		if reports.Visible(msg) != msg {
			t.Errorf("error text holds a control character: %q", msg)
		}
	})
}
