package live

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"

	"github.com/conform-suite/conform/cases"
	"github.com/conform-suite/conform/live/peer"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
)

// The data-plane profiles: the SUT as a subscriber that dials a publisher
// conform runs, and the SUT as a publisher that conform dials.
const (
	ProfileSubscriber = "ranvier-subscriber"
	ProfilePublisher  = "ranvier-publisher"
)

// The pins every data-plane conversation rests on: conform encodes the
// Request and the Frame with these reconstructed field numbers, and a SUT
// that numbers them otherwise fails every case that exchanges them.
const (
	pinRequest    = "reconstructed§ranvier-fields#10"
	pinFrame      = "reconstructed§ranvier-fields#11"
	pinSchemaInfo = "reconstructed§ranvier-fields#3"
)

// judges returns the requirements a case names: ids, then the pins its
// conversation rests on.
func judges(pins []string, ids ...string) []string {
	return append(slices.Clip(ids), pins...)
}

// The pins of each data-plane conversation: the SUT as subscriber reads
// conform's Frames and reports the schemas it attributes; the SUT as
// publisher reads conform's Request and writes Frames.
var (
	subscriberPins = []string{pinRequest, pinFrame, pinSchemaInfo}
	publisherPins  = []string{pinRequest, pinFrame}
)

// liveOp sends one live op and returns its result.
func liveOp(t *cases.T, op *conformpb.LiveOp) *conformpb.LiveResult {
	resp := t.Do(&conformpb.Request{Op: &conformpb.Request_Live{Live: op}})
	r := resp.GetLive()
	if r == nil {
		t.Protocolf("a live op was answered with %T", resp.GetResult())
	}
	return r
}

// liveClose closes a SUT-side subscriber or publisher (live.proto: a handle
// is never 0). It is deferred by the case that opened it and never ends the
// case itself: a failing close must not hide why the case stopped.
func liveClose(t *cases.T, subscriber, publisher uint32) {
	defer func() { recover() }()
	if subscriber == 0 && publisher == 0 {
		return
	}
	liveOp(t, &conformpb.LiveOp{Op: &conformpb.LiveOp_Close{Close: &conformpb.LiveClose{Subscriber: subscriber, Publisher: publisher}}})
}

// DefaultObservedName is the stream name the ranvier-publisher cases request
// from a device observed with conform run --peer when the URL names none.
const DefaultObservedName = "conform"

// observedName returns the stream name to request from an observed device:
// the path of conform run --peer (tcp://host:port/NAME), else
// DefaultObservedName.
func observedName(peerURL string) string {
	u, err := url.Parse(peerURL)
	if err == nil {
		if name := strings.TrimPrefix(u.Path, "/"); name != "" {
			return name
		}
	}
	return DefaultObservedName
}

// observedAddr returns host:port of conform run --peer.
func observedAddr(t *cases.T, peerURL string) string {
	u, err := url.Parse(peerURL)
	if err != nil {
		t.Harnessf("--peer %q: %v", peerURL, err)
	}
	return u.Host
}

// checkLoopback refuses an address off this machine: the live cases run on
// loopback only (ranvier-wire §3.3, §3.4).
func checkLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("%s is not a loopback address", host)
	}
	return nil
}

// describeTranscript summarises what a harness connection read, for
// evidence.
func describeTranscript(tr peer.Transcript) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d bytes, %d whole frames", tr.Bytes, tr.FrameCount)
	if tr.FramingError != nil {
		fmt.Fprintf(&b, ", framing error: %v", tr.FramingError)
	}
	switch {
	case tr.EOF:
		b.WriteString(", then end of stream")
	case tr.Err != nil:
		fmt.Fprintf(&b, ", then %v", tr.Err)
	}
	return b.String()
}

// paced sends frames to the SUT on c, cut by seg, and judges the outcome:
// a write the SUT stopped accepting or refused is the SUT's doing and is
// recorded with why (the SUT "went away while owed frames"); the case's own
// context ending is conform's, and ends the case as a harness error. The
// harness's pauses between writes are never bounded: only a write that
// makes no progress for owed is.
func paced(t *cases.T, c *peer.Conn, seg peer.Segmentation, what string, frames ...[]byte) bool {
	err := c.Pace(t.Context(), owed(t), seg, frames...)
	switch {
	case err == nil:
		return true
	case t.Context().Err() != nil:
		t.Harnessf("the case ended while conform was still writing %s: %v", what, err)
	case errors.Is(err, peer.ErrStalled):
		t.Failf("the SUT stopped reading while conform wrote %s: a write made no progress for %v: %v", what, owed(t), err)
	default:
		t.Failf("the SUT's end of the connection failed while conform wrote %s: %v", what, err)
	}
	return false
}
