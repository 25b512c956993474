package doppler

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
)

// Endpoint is a parsed doppler endpoint, nats://host:port/<base> (doppler §5).
// The authority becomes the server URL verbatim; the base is a name from
// which every role derives its subjects and JetStream objects.
type Endpoint struct {
	// Server is the URL a NATS client dials: "nats://" and the endpoint's
	// authority, credentials included, unaltered.
	Server string
	// Base is the name the subjects are built from; DefaultBase when the
	// endpoint has no path.
	Base string
}

// ParseEndpoint parses an endpoint of the form nats://host:port/<base>. Only
// the nats scheme is accepted, naming one server (doppler §9): an authority
// holding a comma, which a NATS client would read as a seed list of several
// servers, is refused. The path is optional and names
// the base; since the base is a name and not a subject, and also names a
// JetStream stream, it may not contain '.', '*', '>', '/', '\\' or
// whitespace, and a query or fragment is refused rather than folded into it.
func ParseEndpoint(s string) (Endpoint, error) {
	fail := func(why string) (Endpoint, error) {
		return Endpoint{}, &Error{Code: ErrInvalid, Op: "parse endpoint", Detail: fmt.Sprintf("%q: %s", s, why)}
	}
	rest, ok := strings.CutPrefix(s, endpointScheme)
	if !ok {
		return fail("the scheme must be " + endpointScheme)
	}
	authority, base, _ := strings.Cut(rest, "/")
	if authority == "" {
		return fail("no host")
	}
	if strings.Contains(authority, ",") {
		return fail("an endpoint names one server, not a comma-separated seed list")
	}
	if strings.ContainsAny(rest, "?#") {
		return fail("a query or fragment has no meaning in an endpoint")
	}
	if base == "" {
		base = DefaultBase
	}
	if strings.ContainsAny(base, ".*>/\\") || strings.IndexFunc(base, isSpaceOrControl) >= 0 {
		return fail(fmt.Sprintf("base %q is not a plain name", base))
	}
	return Endpoint{Server: endpointScheme + authority, Base: base}, nil
}

// UniqueBase returns a base no other run, rig or test shares a broker
// with: prefix and 48 random bits in hex. prefix must be a plain name.
func UniqueBase(prefix string) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

func isSpaceOrControl(r rune) bool { return r <= ' ' || r == 0x7f }

// String returns the endpoint in the form ParseEndpoint reads.
func (e Endpoint) String() string {
	return e.Server + "/" + e.Base
}

// PubSubject returns the PUB/SUB subject for frames of type t,
// <base>.pub.<type>.
func (e Endpoint) PubSubject(t Type) string { return e.Base + subjectPub + t.Token() }

// PubWildcard returns the subject a subscriber takes for every type,
// <base>.pub.*; the header, not the subject, is the authority on a frame's
// type (doppler §5).
func (e Endpoint) PubWildcard() string { return e.Base + subjectPub + "*" }

// ReqSubject returns the REQ/REP subject, <base>.req.
func (e Endpoint) ReqSubject() string { return e.Base + subjectReq }

// WorkSubject returns the PUSH/PULL subject for frames of type t,
// <base>.work.<type>.
func (e Endpoint) WorkSubject(t Type) string { return e.Base + subjectWork + t.Token() }

// WorkWildcard returns the subjects the work-queue stream captures,
// <base>.work.*.
func (e Endpoint) WorkWildcard() string { return e.Base + subjectWork + "*" }

// StreamName returns the JetStream work-queue stream, DP_WORK_<base>.
func (e Endpoint) StreamName() string { return streamPrefix + e.Base }

// ConsumerName returns the durable pull consumer, DP_PULL_<base>.
func (e Endpoint) ConsumerName() string { return consumerPrefix + e.Base }
