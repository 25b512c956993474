package natsc_test

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/conform-suite/conform/internal/hang"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/reports"
	"github.com/conform-suite/conform/suites"
	"github.com/conform-suite/conform/sut"
	"github.com/conform-suite/conform/sut/natsc"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// startBroker starts a nats-server with nats-server's own defaults (1 MiB
// max_payload) on 127.0.0.1:port, or on a port the kernel picks when port
// is server.RANDOM_PORT. These tests stop a broker and start another on the
// same port, which natsserver.Start, always on a fresh port, cannot do.
func startBroker(t *testing.T, port int) *server.Server {
	t.Helper()
	s, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: port, NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	go s.Start()
	if !s.ReadyForConnections(hangGuard) {
		s.Shutdown()
		t.Fatalf("no broker on 127.0.0.1:%d", port)
	}
	t.Cleanup(s.Shutdown)
	return s
}

func stopBroker(s *server.Server) {
	s.Shutdown()
	s.WaitForShutdown()
}

func brokerURL(s *server.Server) string {
	return fmt.Sprintf("nats://127.0.0.1:%d", s.Addr().(*net.TCPAddr).Port)
}

// logLines collects a Server's log and says when a line holding a given
// text has been logged.
type logLines struct {
	mu    sync.Mutex
	lines []string
	wait  map[string]chan struct{}
}

func (l *logLines) logf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	line := fmt.Sprintf(format, args...)
	l.lines = append(l.lines, line)
	for text, ch := range l.wait {
		if strings.Contains(line, text) {
			close(ch)
			delete(l.wait, text)
		}
	}
}

// logged returns a channel closed once a line holding text is logged.
func (l *logLines) logged(text string) <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	ch := make(chan struct{})
	if l.wait == nil {
		l.wait = map[string]chan struct{}{}
	}
	l.wait[text] = ch
	return ch
}

func (l *logLines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

// await fails the test unless ch closes within hangGuard.
func await(t *testing.T, ch <-chan struct{}, what string, log fmt.Stringer) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(hang.Guard(t, hangGuard)):
		t.Fatalf("%s: not within %v; the server logged:\n%s", what, hangGuard, log)
	}
}

// untilAnswered repeats a request until the reference answers it, within
// hangGuard: the client and the server each reconnect at their own pace.
func untilAnswered(t *testing.T, c *natsc.Client) {
	t.Helper()
	deadline := time.Now().Add(hang.Guard(t, hangGuard))
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, err := c.Do(ctx, decodeOp())
		cancel()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no answer within %v of the broker's return: %v", hangGuard, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestServerOutlivesBrokerOutage: conform reference --nats keeps answering
// after an outage longer than nats.go's default reconnection budget (60
// attempts), on a broker that comes back on the same port. The harness's
// requests meanwhile fail at once as a lost connection, never hang, and
// succeed again once the broker is back.
func TestServerOutlivesBrokerOutage(t *testing.T) {
	first := startBroker(t, server.RANDOM_PORT)
	port := first.Addr().(*net.TCPAddr).Port
	ep, _ := natsc.ParseEndpoint(brokerURL(first) + "/lab.dut")

	var log logLines
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, err := natsc.Listen(ctx, ep, suites.Default().Reference(), sut.Binary, natsc.ListenOptions{Logf: log.logf, ReconnectWait: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() { waited <- s.Wait() }()
	c, err := natsc.Dial(context.Background(), ep, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	untilAnswered(t, c)

	lost := log.logged("lost the broker")
	outlasted := log.logged("after 100 attempt")
	stopBroker(first)
	await(t, lost, "the server noticing the outage", &log)

	// The harness, meanwhile: an error of kind crash, at once.
	withinHangGuard(t, "a request while the broker is away", func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*hangGuard)
		defer cancel()
		_, err = c.Do(ctx, decodeOp())
	})
	if got := kindOf(nil, err); got != reports.KindCrash || !strings.Contains(err.Error(), "broker") {
		t.Errorf("a request while the broker is away: %q (%v), want a crash naming the broker", got, err)
	}

	await(t, outlasted, "100 attempts to reconnect", &log)
	back := log.logged("reconnected to")
	startBroker(t, port)
	await(t, back, "the server reconnecting", &log)
	untilAnswered(t, c)

	cancel()
	select {
	case err := <-waited:
		if err != nil {
			t.Errorf("Wait: %v", err)
		}
	case <-time.After(hang.Guard(t, hangGuard)):
		t.Fatal("Wait did not return")
	}
}

// TestBrokerLostMidRequest: a broker that goes away while a request waits
// for its answer ends that request at once as a lost connection (kind
// crash), not as a timeout of the SUT after the op timeout.
func TestBrokerLostMidRequest(t *testing.T) {
	b := startBroker(t, server.RANDOM_PORT)
	ep, _ := natsc.ParseEndpoint(brokerURL(b) + "/lab.silent")
	nc, err := nats.Connect(ep.Server, nats.NoReconnect())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	asked := make(chan struct{}, 1)
	hello := []byte(`{"implementation":"silent"}`)
	if _, err := nc.Subscribe(ep.Subject(), func(m *nats.Msg) {
		if len(m.Data) == 0 {
			m.Respond(hello)
			return
		}
		asked <- struct{}{} // and never answer
	}); err != nil {
		t.Fatal(err)
	}
	nc.Flush()
	c, err := natsc.Dial(context.Background(), ep, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	var resp *conformpb.Response
	done := make(chan struct{})
	go func() {
		defer close(done)
		ctx, cancel := context.WithTimeout(context.Background(), 2*hangGuard)
		defer cancel()
		resp, err = c.Do(ctx, decodeOp())
	}()
	<-asked
	stopBroker(b)
	await(t, done, "the request in flight ending", stringer("(no log)"))
	if got := kindOf(resp, err); got != reports.KindCrash || !strings.Contains(err.Error(), "lost while the request waited") {
		t.Errorf("got %q (%v), want a crash: the connection was lost", got, err)
	}
}

type stringer string

func (s stringer) String() string { return string(s) }
