package tcp

import (
	"context"
	"errors"
	"net"
	"sync"

	"github.com/conform-suite/conform/sut"
)

// Server serves a sut.Handler over conform.v1 on a TCP listener: each
// accepted connection is one session, served by sut.Serve until the harness
// closes it.
type Server struct {
	ln     net.Listener
	h      sut.Handler
	enc    sut.Encoding
	ctx    context.Context
	cancel context.CancelFunc

	mu    sync.Mutex
	conns map[net.Conn]struct{}
	wg    sync.WaitGroup
	done  chan struct{}
	err   error
}

// Listen binds addr (host:port or tcp://host:port; port 0 picks a free port)
// and serves h on every connection accepted there, answering in enc, until
// ctx ends or Close is called. Addr reports the bound address.
func Listen(ctx context.Context, addr string, h sut.Handler, enc sut.Encoding) (*Server, error) {
	a, err := ParseAddr(addr)
	if err != nil {
		return nil, err
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", a)
	if err != nil {
		return nil, err
	}
	sctx, cancel := context.WithCancel(ctx)
	s := &Server{
		ln: ln, h: h, enc: enc, ctx: sctx, cancel: cancel,
		conns: map[net.Conn]struct{}{},
		done:  make(chan struct{}),
	}
	// Closing the listener and every connection is what ends the goroutines
	// below, whichever of ctx and Close comes first.
	stop := context.AfterFunc(sctx, s.shutdown)
	go func() {
		s.err = s.accept()
		stop()
		s.shutdown()
		s.wg.Wait()
		close(s.done)
	}()
	return s, nil
}

// Addr returns the address the server is bound to.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// URL returns the server's address as a --sut value: tcp://host:port.
func (s *Server) URL() string { return Scheme + s.ln.Addr().String() }

// Wait blocks until the server has stopped (ctx ended or Close was called)
// and every connection's session has ended. It returns the error that
// stopped the listener, or nil after a requested stop.
func (s *Server) Wait() error {
	<-s.done
	return s.err
}

// Close stops accepting, closes every open connection and waits for their
// sessions to end.
func (s *Server) Close() error {
	s.cancel()
	return s.Wait()
}

func (s *Server) accept() error {
	for {
		conn, err := s.ln.Accept()
		if err != nil {
			if s.ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return nil
			}
			return err
		}
		s.mu.Lock()
		if s.conns == nil {
			s.mu.Unlock()
			conn.Close()
			return nil
		}
		s.conns[conn] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		go s.serve(conn)
	}
}

func (s *Server) serve(conn net.Conn) {
	defer s.wg.Done()
	// A session that ends in error (garbage from the harness, a reset
	// connection) ends only that connection; the server goes on.
	_ = sut.Serve(s.ctx, conn, conn, s.h, s.enc)
	conn.Close()
	s.mu.Lock()
	delete(s.conns, conn)
	s.mu.Unlock()
}

// shutdown closes the listener and every open connection. It may run more
// than once.
func (s *Server) shutdown() {
	s.ln.Close()
	s.mu.Lock()
	for c := range s.conns {
		c.Close()
	}
	s.conns = nil
	s.mu.Unlock()
}
