package natsserver_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/goleak"

	"github.com/conform-suite/conform/natsserver"
)

// TestMain fails the package when any goroutine outlives the tests. No
// nats-server or nats.go goroutine is ignored: Shutdown waits for the server's
// own goroutines (accept loops, JetStream's store and monitors) to return,
// and goleak retries for a while before it reports, so nothing background
// needs an exception. Should a nats-server upgrade add a goroutine that
// Shutdown does not join, it belongs here as an explicit
// goleak.IgnoreTopFunction with the reason.
func TestMain(m *testing.M) {
	if dir := os.Getenv(envServeIn); dir != "" {
		// A conform stand-in for TestKilledOwnerIsSwept: start a server
		// with its store in dir, say where, and wait to be killed.
		s, err := natsserver.Start(context.Background(), natsserver.Options{TempDir: dir})
		if err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		fmt.Println(s.StoreDir())
		time.Sleep(10 * time.Minute)
		os.Exit(1)
	}
	goleak.VerifyTestMain(m)
}

// envServeIn makes the test binary a process that serves, for a test that
// kills it.
const envServeIn = "NATSSERVER_TEST_SERVE_IN"

// TestKilledOwnerIsSwept: a process holding an embedded server is killed by
// SIGKILL, so its store directory stays; the next Start in the same parent
// directory removes it, and leaves a running server's alone.
func TestKilledOwnerIsSwept(t *testing.T) {
	parent := t.TempDir()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), envServeIn+"="+parent)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(out).ReadString('\n')
	cmd.Process.Kill()
	cmd.Wait()
	dead := strings.TrimSpace(line)
	if !strings.HasPrefix(dead, parent) {
		t.Fatalf("the child printed %q", line)
	}
	if _, err := os.Stat(dead); err != nil {
		t.Fatalf("the killed server's store directory is already gone: %v", err)
	}
	// A kill in the moment after the mkdir leaves an empty directory: its
	// name alone must say that its owner is gone.
	empty := dead + "-empty"
	if err := os.Mkdir(empty, 0o700); err != nil {
		t.Fatal(err)
	}
	alive := start(t, natsserver.Options{TempDir: parent})
	for _, d := range []string{dead, empty} {
		if _, err := os.Stat(d); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("the killed server's store %s survived the next Start: %v", d, err)
		}
	}
	// A legacy directory without an owner, young: left alone.
	young := filepath.Join(parent, "conform-nats-js-young")
	if err := os.Mkdir(young, 0o700); err != nil {
		t.Fatal(err)
	}
	removed, err := natsserver.Sweep(parent)
	if err != nil || len(removed) != 0 {
		t.Errorf("Sweep with only live or young stores removed %v (%v)", removed, err)
	}
	for _, d := range []string{alive.StoreDir(), young} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("%s was swept: %v", d, err)
		}
	}
}

func start(t *testing.T, o natsserver.Options) *natsserver.Server {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s, err := natsserver.Start(ctx, o)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(s.Shutdown)
	return s
}

func TestStartServesLoopbackWith64MiBAndJetStream(t *testing.T) {
	s := start(t, natsserver.Options{})
	if !strings.HasPrefix(s.URL(), "nats://127.0.0.1:") {
		t.Fatalf("URL %q is not a loopback nats:// URL", s.URL())
	}
	nc, err := nats.Connect(s.URL())
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer nc.Close()
	if got := nc.MaxPayload(); got < 64<<20 {
		t.Fatalf("connection reports max_payload %d, want at least 64 MiB", got)
	}
	if got := s.MaxPayload(); int64(got) != nc.MaxPayload() {
		t.Fatalf("Server.MaxPayload %d, connection reports %d", got, nc.MaxPayload())
	}

	// A 20 MiB message, published and received whole.
	sub, err := nc.SubscribeSync("big")
	if err != nil {
		t.Fatalf("subscribe: %v", err)
	}
	msg := bytes.Repeat([]byte("0123456789abcdef"), 20<<20/16)
	if err := nc.Publish("big", msg); err != nil {
		t.Fatalf("publish 20 MiB: %v", err)
	}
	got, err := sub.NextMsg(10 * time.Second)
	if err != nil {
		t.Fatalf("receive 20 MiB: %v", err)
	}
	if !bytes.Equal(got.Data, msg) {
		t.Fatalf("received %d bytes, not the %d published", len(got.Data), len(msg))
	}

	// JetStream: a stream stores a message and a consumer hands it back.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatalf("jetstream: %v", err)
	}
	st, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "T", Subjects: []string{"t.>"}})
	if err != nil {
		t.Fatalf("create stream: %v", err)
	}
	if _, err := js.Publish(ctx, "t.x", []byte("stored")); err != nil {
		t.Fatalf("JetStream publish: %v", err)
	}
	cons, err := st.CreateConsumer(ctx, jetstream.ConsumerConfig{Durable: "C", AckPolicy: jetstream.AckExplicitPolicy})
	if err != nil {
		t.Fatalf("create consumer: %v", err)
	}
	m, err := cons.Next(jetstream.FetchMaxWait(5 * time.Second))
	if err != nil {
		t.Fatalf("fetch: %v", err)
	}
	if string(m.Data()) != "stored" {
		t.Fatalf("fetched %q", m.Data())
	}
	if err := m.DoubleAck(ctx); err != nil {
		t.Fatalf("ack: %v", err)
	}
	if _, err := os.Stat(s.StoreDir()); err != nil {
		t.Fatalf("store directory: %v", err)
	}
}

func TestSmallMaxPayloadIsReported(t *testing.T) {
	s := start(t, natsserver.Options{MaxPayload: 64 << 10})
	nc, err := nats.Connect(s.URL())
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer nc.Close()
	if got := nc.MaxPayload(); got != 64<<10 {
		t.Fatalf("max_payload %d, want 65536", got)
	}
	if err := nc.Publish("x", make([]byte, 64<<10+1)); err == nil {
		t.Fatalf("publishing one byte over max_payload succeeded")
	}
}

func TestShutdownRemovesStoreAndStopsServer(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s, err := natsserver.Start(ctx, natsserver.Options{})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	url, dir := s.URL(), s.StoreDir()
	s.Shutdown()
	s.Shutdown() // a second call does nothing
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("store directory %s still there after Shutdown (stat: %v)", dir, err)
	}
	if nc, err := nats.Connect(url, nats.Timeout(time.Second)); err == nil {
		nc.Close()
		t.Fatalf("connected to %s after Shutdown", url)
	}
}

func TestStartHonoursContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if s, err := natsserver.Start(ctx, natsserver.Options{}); err == nil {
		s.Shutdown()
		t.Fatalf("Start with a cancelled context succeeded")
	}
}

func TestLogfReceivesLinesOnlyWhenSet(t *testing.T) {
	var mu sync.Mutex
	var lines []string
	s := start(t, natsserver.Options{Logf: func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		lines = append(lines, format)
	}})
	s.Shutdown()
	mu.Lock()
	defer mu.Unlock()
	if len(lines) == 0 {
		t.Fatalf("Logf was set and received nothing")
	}
	if !strings.HasPrefix(lines[0], "[INF] ") {
		t.Fatalf("first line %q has no level prefix", lines[0])
	}
}

func TestTwoServersAreIndependent(t *testing.T) {
	a := start(t, natsserver.Options{})
	b := start(t, natsserver.Options{})
	if a.URL() == b.URL() || a.StoreDir() == b.StoreDir() {
		t.Fatalf("two servers share %s / %s", a.URL(), a.StoreDir())
	}
}

// BenchmarkStart measures the embedded server's start to ready: Start
// returns once the server accepts clients with JetStream enabled. Shutdown
// is outside the timer.
func BenchmarkStart(b *testing.B) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	var total time.Duration
	for range b.N {
		t0 := time.Now()
		s, err := natsserver.Start(ctx, natsserver.Options{})
		if err != nil {
			b.Fatalf("Start: %v", err)
		}
		total += time.Since(t0)
		b.StopTimer()
		s.Shutdown()
		b.StartTimer()
	}
	b.ReportMetric(total.Seconds()*1e3/float64(b.N), "ms/start")
}
