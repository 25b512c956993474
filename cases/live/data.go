package live

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/conform-suite/conform/cases"
	"github.com/conform-suite/conform/live/peer"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/reports"
)

// The data-plane profiles: the SUT as a subscriber that dials a publisher
// conform runs, and the SUT as a publisher that conform dials.
const (
	ProfileSubscriber = "ranvier-subscriber"
	ProfilePublisher  = "ranvier-publisher"
)

// The waits of the data-plane cases. None is a figure the specification
// fixes: each bounds something the SUT owes, generous for a loaded machine
// and short enough to keep the suite fast.
const (
	// dpOwed bounds anything the SUT owes: a dial, a Request, a frame, a
	// report's condition, a close.
	dpOwed = 3 * time.Second
	// dpQuiet is how long a case listens for something that must not
	// happen (bytes before a Request, a sample after a framing error).
	dpQuiet = 300 * time.Millisecond
	// dpGap paces adversarial writes so that the far end reads them apart.
	dpGap = 200 * time.Microsecond
)

// The 30-second socket timeout of ranvier-wire §6.5, compressed: a case that
// judges a silence longer than the timeout asks the SUT for this timeout
// (LiveSubscribe.read_timeout_ms) and stays silent for dpSilence, which is
// to dpReadTimeout a little more than 31 seconds is to 30, with a margin for
// scheduling so that the SUT's timeout has surely fired. An hour into a
// session (§4.2) is compressed to dpHour of silence, while the timestamps
// the harness stamps say an hour.
const (
	dpReadTimeout = 150 * time.Millisecond
	dpSilence     = 2 * dpReadTimeout
	dpHour        = 3 * dpReadTimeout
	hourNs        = uint64(time.Hour)
)

// dataCases are the data-plane cases: the SUT as subscriber and as publisher.
func dataCases() []cases.Case {
	var cs []cases.Case
	for _, c := range subscriberCases() {
		c.Profile = ProfileSubscriber
		cs = append(cs, c)
	}
	for _, c := range publisherCases() {
		c.Profile = ProfilePublisher
		cs = append(cs, c)
	}
	return cs
}

// dpHarness ends the case with an error that is conform's, not the SUT's.
func dpHarness(format string, args ...any) {
	panic(&cases.Abort{Outcome: reports.Error, Kind: "harness", Message: fmt.Sprintf(format, args...)})
}

// dpFatalf records a broken requirement after which the case cannot go on,
// and ends it.
func dpFatalf(t *cases.T, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	t.Failf("%s", msg)
	panic(&cases.Abort{Outcome: reports.Fail, Message: msg})
}

// dpSkip ends the case as skipped.
func dpSkip(format string, args ...any) {
	panic(&cases.Abort{Outcome: reports.Skip, Message: fmt.Sprintf(format, args...)})
}

// dpCtx returns a context bounded by d within the case's.
func dpCtx(t *cases.T, d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(t.Context(), d)
}

// liveOp sends one live op and returns its result.
func liveOp(t *cases.T, op *conformpb.LiveOp) *conformpb.LiveResult {
	resp := t.Do(&conformpb.Request{Op: &conformpb.Request_Live{Live: op}})
	r := resp.GetLive()
	if r == nil {
		t.Protocolf("a live op was answered with %T", resp.GetResult())
	}
	return r
}

// liveClose closes a SUT-side subscriber or publisher. It is deferred by the
// case that opened it and never ends the case itself: a failing close must
// not hide why the case stopped.
func liveClose(t *cases.T, subscriber, publisher uint32) {
	defer func() { recover() }()
	if subscriber == 0 && publisher == 0 {
		return
	}
	liveOp(t, &conformpb.LiveOp{Op: &conformpb.LiveOp_Close{Close: &conformpb.LiveClose{Subscriber: subscriber, Publisher: publisher}}})
}

func dpMillis(d time.Duration) uint32 { return uint32(d / time.Millisecond) }

// dpObservedName returns the stream name to request from an observed
// device: the path of conform run --peer (tcp://host:port/NAME), else
// DefaultObservedName.
func dpObservedName(peerURL string) string {
	u, err := url.Parse(peerURL)
	if err == nil {
		if name := strings.TrimPrefix(u.Path, "/"); name != "" {
			return name
		}
	}
	return DefaultObservedName
}

// DefaultObservedName is the stream name the ranvier-publisher cases request
// from a device observed with conform run --peer when the URL names none.
const DefaultObservedName = "conform"

// dpObservedAddr returns host:port of conform run --peer.
func dpObservedAddr(peerURL string) string {
	u, err := url.Parse(peerURL)
	if err != nil {
		dpHarness("--peer %q: %v", peerURL, err)
	}
	return u.Host
}

// dpCheckLoopback refuses an address off this machine: the live cases run
// on loopback only (ranvier-wire §3.3, §3.4).
func dpCheckLoopback(addr string) error {
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
