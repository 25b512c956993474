// Package observe is the client for a device conform watches with no shim:
// conform run --peer (the device is a Ranvier publisher conform dials) or
// --node-cmd alone (the device is a node conform launches). There is no
// conform.v1 session; the Hello declares the profiles chosen on the command
// line and every op is answered Unimplemented, so only the cases that judge
// the wire alone can pass or fail.
package observe

import (
	"context"
	"fmt"

	conformpb "github.com/conform-suite/conform/proto/conform/v1"
)

// Client is a sut.Client with no SUT behind it.
type Client struct {
	carrier string
	hello   *conformpb.Hello
}

// New returns a client described in the record as carrier (for example
// "peer tcp://10.0.0.7:7000"), declaring profiles and, when it is not empty,
// the node command a ranvier-node case launches.
func New(carrier string, profiles, nodeCommand []string) *Client {
	return &Client{carrier: carrier, hello: &conformpb.Hello{
		Implementation: "observed device",
		Language:       "unknown",
		Profiles:       profiles,
		NodeCommand:    nodeCommand,
	}}
}

// Hello returns the declared Hello.
func (c *Client) Hello() *conformpb.Hello { return c.hello }

// Do answers every op Unimplemented: an observed device has no shim.
func (c *Client) Do(_ context.Context, req *conformpb.Request) (*conformpb.Response, error) {
	return &conformpb.Response{Id: req.GetId(), Result: &conformpb.Response_Unimplemented{Unimplemented: &conformpb.Unimplemented{
		Detail: fmt.Sprintf("an observed device answers no conform.v1 op (%T)", req.GetOp()),
	}}}, nil
}

// Carrier describes the observed device.
func (c *Client) Carrier() string { return c.carrier }

// Close releases nothing.
func (c *Client) Close() error { return nil }
