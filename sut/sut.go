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
	"github.com/conform-suite/conform/reports"
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

// ErrorKind classifies an *Error; the kinds are the record's
// (reports.KindCrash, reports.KindTimeout, reports.KindProtocol, reports.KindStart).
type ErrorKind = reports.ErrorKind

// Error reports a SUT that failed conform.v1 rather than a case.
//
// Every string in it that the SUT supplied is bounded and printable: the
// carriers fill Detail and Stderr through Excerpt and Tail, and Error
// passes the underlying error's text through Excerpt, so that a SUT cannot
// grow the record or write control sequences to a terminal through it.
type Error struct {
	Kind ErrorKind
	// Detail says what happened, for a person.
	Detail string
	// Exit is the exit status or signal of a SUT process that ended, such
	// as "exit status 2" or "signal: segmentation fault".
	Exit string
	// Stderr is the tail of what the SUT wrote to its standard error, at
	// most MaxText bytes of it, escaped (see Tail).
	Stderr string
	// Err is the underlying error, if any.
	Err error
}

func (e *Error) Error() string {
	s := fmt.Sprintf("sut %s: %s", e.Kind, reports.Visible(reports.Clip(e.Detail, reports.MaxMessage)))
	if e.Exit != "" {
		s += " (" + e.Exit + ")"
	}
	if e.Err != nil {
		s += ": " + reports.Visible(reports.Clip(e.Err.Error(), reports.MaxMessage))
	}
	return s
}

func (e *Error) Unwrap() error { return e.Err }
