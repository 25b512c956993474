// Package builtin reaches an implementation inside the conform process: the
// reference, or the reference with one named bug (a mutant).
package builtin

import (
	"context"
	"sync/atomic"

	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/reports"
	"github.com/conform-suite/conform/sut"
	"google.golang.org/protobuf/proto"
)

// Client is an in-process sut.Client. Requests and responses pass through the
// binary encoding, as they would across a process boundary, so a case cannot
// depend on sharing memory with the SUT.
//
// A Client is safe for concurrent use when its Handler is, as the reference
// and the mutants are; conform run still gives each session a fresh
// implementation (another Client), as it starts another process of a SUT
// it runs as a program, so that no case sees the state another left.
type Client struct {
	name   string
	h      sut.Handler
	nextID atomic.Uint64
}

// New returns a client for h, described in the record as name.
func New(name string, h sut.Handler) *Client { return &Client{name: name, h: h} }

func (c *Client) Hello() *conformpb.Hello { return c.h.Hello() }

func (c *Client) Carrier() string { return c.name }

func (c *Client) Close() error { return nil }

func (c *Client) Do(ctx context.Context, req *conformpb.Request) (*conformpb.Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, &sut.Error{Kind: reports.KindTimeout, Detail: "no time left for the op", Err: err}
	}
	req.Id = c.nextID.Add(1)
	in := new(conformpb.Request)
	if err := roundTrip(req, in); err != nil {
		return nil, err
	}
	resp := c.h.Handle(ctx, in)
	resp.Id = in.Id
	out := new(conformpb.Response)
	if err := roundTrip(resp, out); err != nil {
		return nil, &sut.Error{Kind: reports.KindProtocol, Detail: "the response does not encode", Err: err}
	}
	return out, nil
}

func roundTrip(from, to proto.Message) error {
	b, err := proto.Marshal(from)
	if err != nil {
		return err
	}
	return proto.Unmarshal(b, to)
}
