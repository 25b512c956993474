// Package sut is how conform reaches a system under test (SUT): the Client
// interface every case talks through, the errors a misbehaving SUT produces,
// and the conform.v1 session over a byte stream that the exec and tcp
// carriers share.
//
// A case never knows which carrier reaches the SUT; the carriers live in
// subpackages (sut/exec, sut/builtin) and are selected by sut/dial.
package sut

import (
	"context"
	"fmt"

	conformpb "github.com/conform-suite/conform/proto/conform/v1"
)

// A Client reaches one SUT. Do is called by one goroutine at a time.
type Client interface {
	// Hello returns the Hello the SUT opened its current session with.
	Hello() *conformpb.Hello
	// Do sends req and returns the SUT's response. The client assigns the
	// request id. A SUT that crashes, hangs past ctx's deadline or breaks
	// conform.v1 yields an *Error; the client restarts or reconnects the
	// SUT, where it can, on the next call.
	Do(ctx context.Context, req *conformpb.Request) (*conformpb.Response, error)
	// Carrier describes how the SUT is reached, for the record.
	Carrier() string
	// Close stops the SUT, if the client started it, and releases it.
	Close() error
}

// ErrorKind classifies an *Error. The names are fixed: the record and CI
// scripts read them.
type ErrorKind string

const (
	// KindCrash: the SUT exited or the connection to it was lost.
	KindCrash ErrorKind = "crash"
	// KindTimeout: the SUT did not answer within the op timeout.
	KindTimeout ErrorKind = "timeout"
	// KindProtocol: the SUT broke conform.v1 itself — garbage, a length
	// above the ceiling, an answer to another request.
	KindProtocol ErrorKind = "protocol"
	// KindStart: the SUT could not be started or never said Hello.
	KindStart ErrorKind = "start"
)

// Error reports a SUT that failed conform.v1 rather than a case.
type Error struct {
	Kind ErrorKind
	// Detail says what happened, for a person.
	Detail string
	// Exit is the exit status or signal of a SUT process that ended, such
	// as "exit status 2" or "signal: segmentation fault".
	Exit string
	// Stderr is the tail of what the SUT wrote to its standard error.
	Stderr string
	// Err is the underlying error, if any.
	Err error
}

func (e *Error) Error() string {
	s := fmt.Sprintf("sut %s: %s", e.Kind, e.Detail)
	if e.Exit != "" {
		s += " (" + e.Exit + ")"
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *Error) Unwrap() error { return e.Err }
