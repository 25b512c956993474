package dpnats

import (
	"context"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/conform-suite/conform/ref/doppler"
)

// Parts are the pieces a socket is built from: those of package doppler (the
// header check, reassembly, the sender and the names derived from an
// endpoint) and the transport decisions doppler §3, §5, §7 and §8 make (how
// to dial, which max_payload to use, the clock, when a subscription is
// ready, how the work queue is made to exist, who may send telemetry). The
// zero value is the reference throughout, which is what every socket of the
// reference uses. conform sets them to run the roles with one piece
// replaced — a binding's, or a mutant's with one named bug — so that a bug
// in a piece shows on a real broker exactly as it does in the codec.
type Parts struct {
	// Check is the receiver's header check (doppler §3), as doppler.Check.
	Check func(msg []byte, o doppler.Order) doppler.Verdict
	// NewReassembler returns one subscription's reassembly (doppler §4),
	// judging each message with check. Nil means a doppler.Reassembler.
	NewReassembler func(o doppler.Order, check func(msg []byte, o doppler.Order) doppler.Verdict) Reassembler
	// NewSender returns one socket's sender (doppler §4, §7), as
	// doppler.NewSender.
	NewSender func(o doppler.Order, maxPayload int) Sender
	// Names derives subjects and JetStream objects from an endpoint
	// (doppler §5). Nil means the endpoint's own methods.
	Names func(ep doppler.Endpoint) Names

	// Connect dials the server, as nats.Connect, with the socket's options
	// (reconnect without limit, §8), to which it may add. Nil means
	// nats.Connect.
	Connect func(url string, opts ...nats.Option) (*nats.Conn, error)
	// MaxPayload is the max_payload a socket uses, given what its
	// connection reports (§8). Nil means the reported value, or
	// doppler.DefaultMaxPayload when the server reports none (0 or less).
	MaxPayload func(reported int64) int
	// Now is the clock a sender stamps frames with (§7). Nil means Now.
	Now func() uint64
	// AwaitSubscription returns, when a receiving socket is created, once
	// its subscription has reached the server; flush is the socket's round
	// trip. Nil means calling flush.
	AwaitSubscription func(ctx context.Context, flush func(context.Context) error) error
	// EnsureStream makes the work-queue stream exist for a Pusher (§5);
	// cfg is WorkStreamConfig's. Nil adopts an existing stream of cfg's
	// name as it is and creates one with cfg when there is none.
	EnsureStream func(ctx context.Context, js jetstream.JetStream, cfg jetstream.StreamConfig) error
	// EmitsTelemetry reports whether a socket of a sending role
	// ("publisher", "requester", "replier", "pusher") may send telemetry
	// frames. Nil allows the publisher alone (§3).
	EmitsTelemetry func(role string) bool
}

// Reassembler is one subscription's reassembly; *doppler.Reassembler is the
// reference.
type Reassembler interface {
	Add(msg []byte) (f doppler.Frame, ok bool, err error)
}

// Sender is one socket's sequence counter and framer; *doppler.Sender is the
// reference.
type Sender interface {
	Publish(f doppler.Frame) ([][]byte, error)
	Send(f doppler.Frame) ([]byte, error)
	NextSequence() uint64
}

// Names are the subjects and JetStream objects of one endpoint;
// doppler.Endpoint is the reference.
type Names interface {
	PubSubject(t doppler.Type) string
	PubWildcard() string
	ReqSubject() string
	WorkSubject(t doppler.Type) string
	WorkWildcard() string
	StreamName() string
	ConsumerName() string
}

// withDefaults fills the unset parts with package doppler's. maxFrame bounds
// the default reassembly (Options.MaxFrameBytes).
func (p Parts) withDefaults(maxFrame uint64) Parts {
	if p.Check == nil {
		p.Check = doppler.Check
	}
	if p.NewReassembler == nil {
		p.NewReassembler = func(o doppler.Order, check func([]byte, doppler.Order) doppler.Verdict) Reassembler {
			return &doppler.Reassembler{Order: o, MaxFrameBytes: maxFrame, Check: check}
		}
	}
	if p.NewSender == nil {
		p.NewSender = func(o doppler.Order, maxPayload int) Sender { return doppler.NewSender(o, maxPayload) }
	}
	if p.Names == nil {
		p.Names = func(ep doppler.Endpoint) Names { return ep }
	}
	if p.Connect == nil {
		p.Connect = nats.Connect
	}
	if p.MaxPayload == nil {
		p.MaxPayload = reportedMaxPayload
	}
	if p.Now == nil {
		p.Now = Now
	}
	if p.AwaitSubscription == nil {
		p.AwaitSubscription = func(ctx context.Context, flush func(context.Context) error) error { return flush(ctx) }
	}
	if p.EnsureStream == nil {
		p.EnsureStream = ensureStream
	}
	if p.EmitsTelemetry == nil {
		p.EmitsTelemetry = publisherAlone
	}
	return p
}

// reportedMaxPayload is the max_payload a connection reports, with the 1 MiB
// fallback of doppler §8 when it reports none.
func reportedMaxPayload(reported int64) int {
	if reported <= 0 {
		return doppler.DefaultMaxPayload
	}
	return int(reported)
}

// publisherAlone is doppler §3's rule: only a Publisher emits telemetry.
func publisherAlone(role string) bool { return role == "publisher" }

// emitsTelemetry applies p's EmitsTelemetry, or the reference's rule when
// it is nil, before the socket's parts are resolved.
func (p Parts) emitsTelemetry(role string) bool {
	if p.EmitsTelemetry == nil {
		return publisherAlone(role)
	}
	return p.EmitsTelemetry(role)
}
