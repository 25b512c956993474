package tcp_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/reports"
	"github.com/conform-suite/conform/suites"
	"github.com/conform-suite/conform/sut"
	"github.com/conform-suite/conform/sut/tcp"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func serve(t testing.TB, addr string, enc sut.Encoding) *tcp.Server {
	t.Helper()
	srv, err := tcp.Listen(context.Background(), addr, suites.Default().Reference(), enc)
	if err != nil {
		t.Fatalf("listen %s: %v", addr, err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

func dial(t testing.TB, addr string) *tcp.Client {
	t.Helper()
	c, err := tcp.Dial(context.Background(), addr, tcp.Options{ConnectTimeout: time.Second, HelloTimeout: 5 * time.Second})
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func decodeReq() *conformpb.Request {
	return &conformpb.Request{Op: &conformpb.Request_Decode{Decode: &conformpb.Decode{Inputs: []*conformpb.DecodeInput{
		{MessageType: "ranvier.message.v1.Request", Payload: []byte{0x0a, 0x04, 'g', 'a', 'z', 'e'}},
	}}}}
}

func do(c *tcp.Client) (*conformpb.Response, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return c.Do(ctx, decodeReq())
}

func wantOK(t *testing.T, c *tcp.Client, what string) {
	t.Helper()
	resp, err := do(c)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if js := resp.GetDecode().GetOutputs()[0].GetJson(); !strings.Contains(js, "gaze") {
		t.Fatalf("%s: decoded %q", what, js)
	}
}

func wantKind(t *testing.T, err error, kind sut.ErrorKind) *sut.Error {
	t.Helper()
	var se *sut.Error
	if !errors.As(err, &se) || se.Kind != kind {
		t.Fatalf("got %v, want a *sut.Error of kind %s", err, kind)
	}
	return se
}

func TestRoundTripBothEncodings(t *testing.T) {
	for _, enc := range []sut.Encoding{sut.Binary, sut.JSON} {
		t.Run(enc.String(), func(t *testing.T) {
			srv := serve(t, "tcp://127.0.0.1:0", enc)
			c := dial(t, srv.URL())
			if got := c.Hello().GetImplementation(); got != "conform reference" {
				t.Errorf("Hello names %q", got)
			}
			if c.Carrier() != srv.URL() {
				t.Errorf("carrier %q, want %q", c.Carrier(), srv.URL())
			}
			for i := range 3 {
				wantOK(t, c, fmt.Sprintf("op %d", i))
			}
		})
	}
}

// TestReconnectOnceThenError: the server drops the connection; the next op
// fails, the one after reconnects and succeeds; then the server is gone
// for good, and after one failed reconnection every op reports error.
func TestReconnectOnceThenError(t *testing.T) {
	srv := serve(t, "127.0.0.1:0", sut.Binary)
	addr := srv.Addr().String()
	c := dial(t, addr)
	wantOK(t, c, "first op")

	// Drop the connection by stopping the server, then serve again on the
	// same port.
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	_, err := do(c)
	wantKind(t, err, reports.KindCrash)
	srv2 := serve(t, addr, sut.Binary)
	wantOK(t, c, "after reconnecting")
	wantOK(t, c, "on the new connection")

	// Lost again, and this time nobody listens.
	srv2.Close()
	_, err = do(c)
	wantKind(t, err, reports.KindCrash)
	// The failed reconnection is a start failure, which the runner counts
	// toward presuming the SUT lost.
	_, err = do(c)
	se := wantKind(t, err, reports.KindStart)
	if !strings.Contains(se.Error(), "reconnecting once failed") || !strings.Contains(se.Error(), addr) {
		t.Errorf("error does not say what failed: %v", se)
	}
	// No second attempt: the client is spent, even once a server is back.
	serve(t, addr, sut.Binary)
	_, err = do(c)
	wantKind(t, err, reports.KindStart)
}

func TestTimeoutDropsConnection(t *testing.T) {
	// A server that says Hello and then never answers.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 4)
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				close(accepted)
				return
			}
			accepted <- conn
			go func() {
				buf := make([]byte, 4)
				if _, err := conn.Read(buf); err != nil {
					return
				}
				conn.Write([]byte{0, 0, 0, 0}) // an empty binary Hello
			}()
		}
	}()
	c := dial(t, ln.Addr().String())
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	_, err = c.Do(ctx, decodeReq())
	cancel()
	wantKind(t, err, reports.KindTimeout)
	c.Close()
	ln.Close()
	for conn := range accepted {
		conn.Close()
	}
}

func TestDialErrors(t *testing.T) {
	// A port nobody listens on: bind one, note it, close it.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	_, err = tcp.Dial(context.Background(), "tcp://"+addr, tcp.Options{ConnectTimeout: time.Second})
	wantKind(t, err, reports.KindStart)
	for _, bad := range []string{"tcp://", "tcp://host", "tcp://:80", "tcp://h:1/path"} {
		if _, err := tcp.ParseAddr(bad); err == nil {
			t.Errorf("ParseAddr(%q) accepted", bad)
		}
	}
}

// BenchmarkRoundTrip is one decode op per round trip over loopback TCP.
func BenchmarkRoundTrip(b *testing.B) {
	srv := serve(b, "127.0.0.1:0", sut.Binary)
	c := dial(b, srv.URL())
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Do(ctx, decodeReq()); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBatched256 sends 256 read_frames inputs per request, as
// sut/exec's benchmark of the same name does.
func BenchmarkBatched256(b *testing.B) {
	srv := serve(b, "127.0.0.1:0", sut.Binary)
	c := dial(b, srv.URL())
	ctx := context.Background()
	req := batched256()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Do(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*256), "ns/input")
}

func batched256() *conformpb.Request {
	req := &conformpb.Request{Op: &conformpb.Request_ReadFrames{ReadFrames: &conformpb.ReadFrames{}}}
	frame := []byte{0, 0, 0, 0x12, 0x12, 0x10, 0x09, 1, 0, 0, 0, 0, 0, 0, 0, 0x10, 1, 0x1a, 1, 0x41, 0x28, 1}
	for range 256 {
		req.GetReadFrames().Inputs = append(req.GetReadFrames().Inputs, &conformpb.ReadInput{Chunks: []*conformpb.Blob{{Data: frame[:7]}, {Data: frame[7:]}}})
	}
	return req
}
