package natsc_test

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/conform-suite/conform/internal/hang"
	"github.com/conform-suite/conform/natsserver"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/reports"
	"github.com/conform-suite/conform/sut"
	"github.com/conform-suite/conform/sut/natsc"
	"github.com/nats-io/nats.go"
	"google.golang.org/protobuf/proto"
)

// hangGuard bounds anything in these tests that could hang, on an idle
// machine; hang.Guard stretches it on a loaded one. It is never a measure
// of speed.
const hangGuard = time.Minute

// withinHangGuard runs f and fails the test if it has not returned within
// hangGuard.
func withinHangGuard(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(hang.Guard(t, hangGuard)):
		t.Fatalf("%s did not return within %v", what, hangGuard)
	}
}

// kindOf is the record's error kind for what Do returned: the *sut.Error's
// kind, KindOpError for an Error answer, "" for an answer.
func kindOf(resp *conformpb.Response, err error) reports.ErrorKind {
	var se *sut.Error
	switch {
	case errors.As(err, &se):
		return se.Kind
	case err != nil:
		return "not a *sut.Error: " + reports.ErrorKind(err.Error())
	case resp.GetError() != nil:
		return reports.KindOpError
	}
	return ""
}

// heapInUse returns the bytes the heap holds after a collection.
func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

func decodeOp() *conformpb.Request {
	return &conformpb.Request{Op: &conformpb.Request_Decode{Decode: &conformpb.Decode{
		Inputs: []*conformpb.DecodeInput{{MessageType: "ranvier.message.v1.StreamInfo"}}}}}
}

// TestHostileResponders is the NATS leg of the hostile-SUT matrix: whatever
// answers on BASE.conform, each request ends in bounded time with an error of
// the right kind (or the answer itself), the client stays usable for the
// next request, and what the SUT sent is not kept.
//
// Each responder says Hello properly, then misbehaves. A responder that
// holds a request waits until the test releases it, after the first
// request has given up: a late answer then meets the second request in
// flight, and must not be taken for its answer.
func TestHostileResponders(t *testing.T) {
	srv, err := natsserver.Start(context.Background(), natsserver.Options{MaxPayload: defaultMaxPayload})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()

	ok := func(id uint64) []byte {
		b, _ := proto.Marshal(&conformpb.Response{Id: id, Result: &conformpb.Response_Decode{Decode: &conformpb.DecodeResult{}}})
		return b
	}
	// The largest Error answer the broker carries.
	hugeError := func(id uint64) []byte {
		r := &conformpb.Response{Id: id, Result: &conformpb.Response_Error{Error: &conformpb.Error{}}}
		r.GetError().Message = strings.Repeat("\x1b[2J", (defaultMaxPayload-proto.Size(r)-8)/4)
		b, _ := proto.Marshal(r)
		return b
	}

	type answerer func(req *conformpb.Request, prev uint64, release <-chan struct{}) []byte
	tests := []struct {
		name string
		// answer returns what to answer a request with; nil answers nothing.
		answer answerer
		// leave: the responder unsubscribes once it has said Hello.
		leave bool
		// opTimeout is the first request's; the second waits up to
		// hangGuard.
		opTimeout     time.Duration
		first, second reports.ErrorKind
		detail        string // in the first error's text
	}{
		{name: "garbage",
			answer: func(*conformpb.Request, uint64, <-chan struct{}) []byte { return []byte{0xff, 0xff, 0xff, 0xff, 0x0f} },
			first:  reports.KindProtocol, second: reports.KindProtocol, detail: "is not a Response"},
		{name: "empty answer",
			answer: func(*conformpb.Request, uint64, <-chan struct{}) []byte { return []byte{} },
			first:  reports.KindProtocol, second: reports.KindProtocol, detail: "id 0"},
		{name: "huge error",
			answer: func(req *conformpb.Request, _ uint64, _ <-chan struct{}) []byte { return hugeError(req.Id) },
			first:  reports.KindOpError, second: reports.KindOpError},
		{name: "another request's id",
			answer: func(_ *conformpb.Request, prev uint64, _ <-chan struct{}) []byte { return ok(prev) },
			first:  reports.KindProtocol, second: reports.KindProtocol, detail: "the request was 1"},
		{name: "nobody",
			leave: true,
			first: reports.KindCrash, second: reports.KindCrash, detail: "nobody answers on hostile.nobody.conform"},
		{name: "silent",
			answer:    func(*conformpb.Request, uint64, <-chan struct{}) []byte { return nil },
			opTimeout: 200 * time.Millisecond,
			first:     reports.KindTimeout, second: reports.KindTimeout, detail: "within the op timeout"},
		{name: "late",
			answer: func(req *conformpb.Request, _ uint64, release <-chan struct{}) []byte {
				<-release
				return ok(req.Id)
			},
			opTimeout: 200 * time.Millisecond,
			first:     reports.KindTimeout, second: ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ep, _ := natsc.ParseEndpoint(srv.URL() + "/hostile." + strings.ReplaceAll(strings.ReplaceAll(tc.name, " ", "-"), "'", ""))
			nc, err := nats.Connect(ep.Server)
			if err != nil {
				t.Fatal(err)
			}
			defer nc.Close()
			release := make(chan struct{})
			var prev uint64
			hello, _ := proto.Marshal(&conformpb.Hello{Implementation: "hostile", Profiles: []string{"wire"}})
			sub, err := nc.Subscribe(ep.Subject(), func(m *nats.Msg) {
				if len(m.Data) == 0 {
					m.Respond(hello)
					return
				}
				req := new(conformpb.Request)
				proto.Unmarshal(m.Data, req)
				if b := tc.answer(req, prev, release); b != nil {
					m.Respond(b)
				}
				prev = req.Id
			})
			if err != nil {
				t.Fatal(err)
			}
			nc.Flush()
			c, err := natsc.Dial(context.Background(), ep, 10*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if tc.leave {
				sub.Unsubscribe()
				nc.Flush()
			}
			before := heapInUse()

			opTimeout := tc.opTimeout
			if opTimeout == 0 {
				opTimeout = hangGuard
			}
			var resp *conformpb.Response
			withinHangGuard(t, "the first request", func() {
				ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
				defer cancel()
				resp, err = c.Do(ctx, decodeOp())
			})
			if got := kindOf(resp, err); got != tc.first {
				t.Errorf("first request: kind %q (%v), want %q", got, err, tc.first)
			}
			if err != nil && !strings.Contains(err.Error(), tc.detail) {
				t.Errorf("first request: %q does not say %q", err, tc.detail)
			}
			close(release)
			withinHangGuard(t, "the second request", func() {
				wait := 10 * time.Second // a hang guard for an answer on its way
				if tc.second == reports.KindTimeout {
					wait = opTimeout
				}
				ctx, cancel := context.WithTimeout(context.Background(), wait)
				defer cancel()
				resp, err = c.Do(ctx, decodeOp())
			})
			if got := kindOf(resp, err); got != tc.second {
				t.Errorf("second request: kind %q (%v), want %q", got, err, tc.second)
			}
			if tc.second == "" && resp.GetId() != 2 {
				t.Errorf("second request answered with id %d, want 2", resp.GetId())
			}
			resp = nil
			// What the SUT sent (up to the broker's 1 MiB an answer) is
			// not kept once the request is over.
			grew := int64(heapInUse()) - int64(before)
			if grew > 8<<20 {
				t.Errorf("the heap grew by %d bytes over two requests", grew)
			}
			t.Logf("heap after two requests: %+d bytes", grew)
		})
	}
}
