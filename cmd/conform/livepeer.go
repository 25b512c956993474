package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	messagepb "github.com/conform-suite/conform/proto/ranvier/message/v1"
	"github.com/conform-suite/conform/ref/live"
	"github.com/conform-suite/conform/suite"
	"github.com/conform-suite/conform/sut/tcp"
)

// cmdLivePublisher is conform live-publisher: the reference's data-plane
// publisher (or a mutant's) run as a process of its own, a stand-in for a
// device with no shim, so that the observation profile
// (conform run --peer … --profile ranvier-publisher) can be tried and tested
// against something real.
//
// It listens on --listen, opens --streams streams under --name — the first
// with a source clock domain, the others with none — and publishes one
// sample on each every --interval, handing every publish call a source
// timestamp (which a stream with no domain must drop, ranvier-wire §4.3).
// With --threads above 1 each stream is published from that many goroutines
// at once, as acquisition threads would (ranvier-streams §2.3). It
// prints tcp://HOST:PORT/NAME, the --peer value that observes it, on
// standard output, and serves until interrupted.
func cmdLivePublisher(ctx context.Context, reg *suite.Registry, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("live-publisher", stderr)
	listen := fs.String("listen", "tcp://127.0.0.1:0", "listen on tcp://HOST:PORT (port 0 picks a free port)")
	name := fs.String("name", "conform", "the stream name the streams publish under")
	n := fs.Int("streams", 2, "how many streams to open under the name")
	interval := fs.Duration("interval", 2*time.Millisecond, "how often each stream publishes")
	threads := fs.Int("threads", 2, "how many goroutines publish on each stream at once")
	size := fs.Int("size", 16, "the size of each sample's values, in bytes")
	sendBuffer := fs.Int("send-buffer", 0, "each connection's socket send buffer, in bytes (0: the system's)")
	mutantName := fs.String("mutant", "", "run this mutant's publisher instead of the reference's (conform mutants lists them)")
	pos, err := parse(fs, args)
	if err != nil {
		return flagExit(err)
	}
	if len(pos) > 0 {
		fmt.Fprintf(stderr, "conform live-publisher: unexpected argument %q\n", pos[0])
		return exitUsage
	}
	addr, err := tcp.ParseAddr(*listen)
	if err != nil {
		fmt.Fprintf(stderr, "conform live-publisher: --listen: %v\n", err)
		return exitUsage
	}
	if host, _, _ := net.SplitHostPort(addr); !isLoopback(host) {
		// No connection may cross a device boundary (ranvier-wire §3.4).
		fmt.Fprintf(stderr, "conform live-publisher: --listen %s: listen on loopback only (ranvier-wire §3.4)\n", *listen)
		return exitUsage
	}
	if *n < 1 || *threads < 1 || *size < 0 || *size > 1<<20 || *name == "" || *interval <= 0 {
		fmt.Fprintln(stderr, "conform live-publisher: --streams and --threads must be at least 1, --size at most 1 MiB, --name not empty, --interval positive")
		return exitUsage
	}
	im := reg.Reference()
	if *mutantName != "" {
		var ok bool
		if im, ok = reg.MutantImpl(*mutantName); !ok {
			fmt.Fprintf(stderr, "conform live-publisher: no such mutant %q (conform mutants lists them)\n", *mutantName)
			return exitUsage
		}
	}
	p, err := im.Live.NewPublisher(ctx, live.PublisherConfig{Addr: addr, WriteBuffer: *sendBuffer})
	if err != nil {
		fmt.Fprintf(stderr, "conform live-publisher: %v\n", err)
		return 1
	}
	defer p.Close()
	var streams []*live.PublishedStream
	for i := range *n {
		info := &messagepb.StreamInfo{
			Name: *name, Node: fmt.Sprintf("conform-reference-%d", i+1),
			Schema: &messagepb.SchemaInfo{SchemaId: "conform.v1.Reading"},
		}
		if i == 0 {
			info.SourceClockDomain = "device.conform-reference"
		}
		s, err := p.Open(info)
		if err != nil {
			fmt.Fprintf(stderr, "conform live-publisher: %v\n", err)
			return 1
		}
		streams = append(streams, s)
	}
	fmt.Fprintf(stdout, "tcp://%s/%s\n", p.Addr(), *name)
	start := time.Now()
	values := make([]byte, *size)
	var wg sync.WaitGroup
	for _, s := range streams {
		for range *threads {
			wg.Add(1)
			go func() {
				defer wg.Done()
				tick := time.NewTicker(*interval)
				defer tick.Stop()
				for {
					select {
					case <-ctx.Done():
						return
					case <-tick.C:
					}
					s.Publish(uint64(time.Since(start))+1, values)
				}
			}()
		}
	}
	wg.Wait()
	return 0
}

func isLoopback(host string) bool {
	ip := net.ParseIP(host)
	return host == "localhost" || (ip != nil && ip.IsLoopback())
}
