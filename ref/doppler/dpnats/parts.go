package dpnats

import "github.com/conform-suite/conform/ref/doppler"

// Parts are the pieces of package doppler a socket is built from: the header
// check, reassembly, the sender and the names derived from an endpoint. The
// zero value uses package doppler throughout, which is what every socket of
// the reference does. conform sets them to run the roles with one piece
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
	return p
}
