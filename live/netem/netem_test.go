package netem_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/conform-suite/conform/live/netem"
)

// hang bounds every wait of these tests: a guard against a hang, never a
// measure of speed.
const hang = 20 * time.Second

// echo starts a TCP server that writes back whatever it reads, and returns
// its address.
func echo(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { _ = ln.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				_, _ = io.Copy(c, c)
			}()
		}
	}()
	return ln.Addr().String()
}

func start(t *testing.T, o netem.Options) *netem.Proxy {
	t.Helper()
	p, err := netem.Start(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, hang)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	_ = c.SetDeadline(time.Now().Add(hang))
	return c
}

// pattern returns n bytes that differ from one offset to the next.
func pattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + i/251)
	}
	return b
}

// TestForwardsBothWays: whatever the shaping, every byte crosses both ways
// unchanged and in order, messages larger than the proxy's read segment and
// its buffer included.
func TestForwardsBothWays(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts netem.Options
		n    int
	}{
		{"plain", netem.Options{}, 1000},
		{"large", netem.Options{}, 3 << 20},
		{"delayed", netem.Options{Up: netem.Link{Delay: 30 * time.Millisecond}, Down: netem.Link{Delay: 10 * time.Millisecond}}, 200 << 10},
		{"throttled", netem.Options{Up: netem.Link{Rate: 4 << 20}, Down: netem.Link{Rate: 8 << 20}}, 256 << 10},
		{"small-buffer", netem.Options{Buffer: 1, Up: netem.Link{Delay: time.Millisecond}}, 300 << 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o := tc.opts
			o.Upstream = echo(t)
			p := start(t, o)
			c := dial(t, p.Addr())
			want := pattern(tc.n)
			go func() { _, _ = c.Write(want) }()
			got := make([]byte, len(want))
			if _, err := io.ReadFull(c, got); err != nil {
				t.Fatalf("read back %v", err)
			}
			if !bytes.Equal(got, want) {
				t.Fatal("the bytes came back changed or out of order")
			}
		})
	}
}

// TestDelayHoldsEveryByte: a byte is never written on before its delay has
// passed since the proxy read it, in either direction.
func TestDelayHoldsEveryByte(t *testing.T) {
	const up, down = 150 * time.Millisecond, 100 * time.Millisecond
	p := start(t, netem.Options{Upstream: echo(t), Up: netem.Link{Delay: up}, Down: netem.Link{Delay: down}})
	c := dial(t, p.Addr())
	for i := range 3 {
		sent := time.Now()
		if _, err := c.Write([]byte{byte(i)}); err != nil {
			t.Fatal(err)
		}
		var b [1]byte
		if _, err := io.ReadFull(c, b[:]); err != nil {
			t.Fatal(err)
		}
		if took := time.Since(sent); took < up+down {
			t.Fatalf("round trip %d took %v; the two delays add up to %v", i, took, up+down)
		}
	}
}

// TestRateBoundsThroughput: n bytes at a rate r take at least what the rate
// allows once its first slice is written.
func TestRateBoundsThroughput(t *testing.T) {
	const rate, n = 256 << 10, 128 << 10
	p := start(t, netem.Options{Upstream: echo(t), Up: netem.Link{Rate: rate}})
	c := dial(t, p.Addr())
	sent := time.Now()
	go func() { _, _ = c.Write(pattern(n)) }()
	if _, err := io.ReadFull(c, make([]byte, n)); err != nil {
		t.Fatal(err)
	}
	slice := rate / 20
	if took, least := time.Since(sent), time.Duration(float64(n-slice)/rate*float64(time.Second)); took < least {
		t.Fatalf("%d bytes at %d bytes/s took %v, less than %v", n, rate, took, least)
	}
}

// TestFilterRewrites: a filter sees one direction's bytes and what it
// writes is what the other side reads.
func TestFilterRewrites(t *testing.T) {
	upper := func(dst io.Writer, src io.Reader) error {
		r := bufio.NewReader(src)
		line, err := r.ReadString('\n')
		if err != nil {
			return err
		}
		if _, err := io.WriteString(dst, strings.ToUpper(line)); err != nil {
			return err
		}
		_, err = io.Copy(dst, r)
		return err
	}
	p := start(t, netem.Options{Upstream: echo(t), DownFilter: upper, Down: netem.Link{Delay: time.Millisecond}})
	c := dial(t, p.Addr())
	if _, err := io.WriteString(c, "info {}\nrest as it is\n"); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(c)
	for _, want := range []string{"INFO {}\n", "rest as it is\n"} {
		got, err := r.ReadString('\n')
		if err != nil || got != want {
			t.Fatalf("read %q, %v; want %q", got, err, want)
		}
	}
}

// TestSeverThenAcceptAgain: Sever closes every open connection at once and
// the proxy goes on accepting, as a server that restarts at the same
// address does.
func TestSeverThenAcceptAgain(t *testing.T) {
	p := start(t, netem.Options{Upstream: echo(t), Up: netem.Link{Delay: time.Hour}})
	a := dial(t, p.Addr())
	ctx, cancel := context.WithTimeout(context.Background(), hang)
	defer cancel()
	if err := p.AwaitAccepted(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Write([]byte("held for an hour")); err != nil {
		t.Fatal(err)
	}
	if n := p.Sever(); n != 1 {
		t.Fatalf("Sever closed %d connections, want 1", n)
	}
	if _, err := a.Read(make([]byte, 1)); err == nil {
		t.Fatal("a severed connection still reads")
	}
	b := dial(t, p.Addr())
	if err := p.AwaitAccepted(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if p.Accepted() != 2 {
		t.Fatalf("accepted %d, want 2", p.Accepted())
	}
	_ = b
}

// TestCloseEndsEverything: Close, or the end of the context Start was
// given, stops the listener and every connection, and returns once the
// proxy's goroutines are gone (the test's own Close in Cleanup would hang
// otherwise).
func TestCloseEndsEverything(t *testing.T) {
	for _, byContext := range []bool{false, true} {
		ctx, cancel := context.WithCancel(context.Background())
		p, err := netem.Start(ctx, netem.Options{Upstream: echo(t), Down: netem.Link{Delay: time.Hour}})
		if err != nil {
			t.Fatal(err)
		}
		c := dial(t, p.Addr())
		if _, err := c.Write([]byte("x")); err != nil {
			t.Fatal(err)
		}
		if byContext {
			cancel()
		} else if err := p.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Read(make([]byte, 1)); err == nil {
			t.Fatal("a connection of a closed proxy still reads")
		}
		if err := p.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
			t.Fatal(err)
		}
		if _, err := net.DialTimeout("tcp", p.Addr(), time.Second); err == nil {
			t.Fatal("a closed proxy still accepts")
		}
		cancel()
	}
}

// TestUpstreamUnreachable: a connection whose upstream cannot be dialled is
// closed, not left hanging.
func TestUpstreamUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().String()
	_ = ln.Close()
	p := start(t, netem.Options{Upstream: dead})
	c := dial(t, p.Addr())
	if _, err := c.Read(make([]byte, 1)); err == nil {
		t.Fatal("read from a connection with no upstream")
	}
}

func TestStartRefusesBadOptions(t *testing.T) {
	for _, o := range []netem.Options{
		{},
		{Upstream: "127.0.0.1:1", Up: netem.Link{Delay: -1}},
		{Upstream: "127.0.0.1:1", Down: netem.Link{Rate: -1}},
		{Upstream: "127.0.0.1:1", Listen: "256.0.0.1:0"},
	} {
		if p, err := netem.Start(context.Background(), o); err == nil {
			_ = p.Close()
			t.Errorf("Start(%+v) succeeded", o)
		}
	}
}

// TestShapeChangesOpenConnections: Shape applies to a connection already
// open, from the next byte on.
func TestShapeChangesOpenConnections(t *testing.T) {
	p := start(t, netem.Options{Upstream: echo(t)})
	c := dial(t, p.Addr())
	roundTrip := func() time.Duration {
		sent := time.Now()
		if _, err := c.Write([]byte{1}); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(c, make([]byte, 1)); err != nil {
			t.Fatal(err)
		}
		return time.Since(sent)
	}
	roundTrip()
	const up = 200 * time.Millisecond
	p.Shape(netem.Link{Delay: up}, netem.Link{})
	if took := roundTrip(); took < up {
		t.Fatalf("a round trip after Shape took %v, less than the %v delay", took, up)
	}
}
