package graph

import (
	"time"

	"github.com/conform-suite/conform/ref/tlv"
)

// ApplyFwd applies a FWD at its terminus for the remote caller c (graph model
// §The shedding rule, "At the terminus"): it is Terminus with the graph as the
// endpoint.
func (g *Graph) ApplyFwd(c Caller, frame *tlv.Node) (reply *tlv.Node, w *Waiter, err error) {
	return Terminus(g, c, frame)
}

// An Endpoint is the operation surface a FWD terminus applies its op to: a
// *Graph, or a value that wraps one.
type Endpoint interface {
	WriteAddr(c Caller, a Address, value *tlv.Node) error
	ReadAddr(c Caller, a Address) (*tlv.Node, error)
	AwaitAddr(c Caller, a Address, timeout time.Duration) (*Waiter, error)
}

// Terminus applies a FWD at its terminus e for the remote caller c (graph model
// §The shedding rule, "At the terminus"): the envelope is shed and the op
// applied to the addressed vertex or field as a remote operation — a WRITE
// never creates its target. WRITE, READ and SUBSCRIBE (an append to
// :subscribers[] of the dst) answer at once with the FWD{REPLY} to send back: a
// RESULT (the answer of a READ, empty otherwise) or a STATUS carrying the
// refusal. AWAIT answers with a Waiter and no reply; build the reply with
// ReplyFrame when it completes. A frame that is not a well-formed FWD, or a
// REPLY (which a terminus does not apply), is an error, since it has no route
// to answer on.
func Terminus(e Endpoint, c Caller, frame *tlv.Node) (reply *tlv.Node, w *Waiter, err error) {
	f, err := tlv.DecodeFwd(frame)
	if err != nil {
		return nil, nil, wrap("fwd", "", err)
	}
	c.Remote, c.owner = true, false
	a, err := AddressFromRoute(f.Dst)
	if err == nil && f.Op == tlv.OpSubscribe {
		if a.HasField {
			err = fail("subscribe", a.String(), tlv.StatusSchemaNotFound, "a SUBSCRIBE takes a vertex, not a field")
		}
		a.Field, a.HasField = fieldSubscribers+selectorAppend, true
	}
	if err != nil && f.Op != tlv.OpReply {
		return ReplyFrame(f, nil, err), nil, nil
	}
	switch f.Op {
	case tlv.OpWrite, tlv.OpSubscribe:
		return ReplyFrame(f, nil, e.WriteAddr(c, a, f.Payload)), nil, nil
	case tlv.OpRead:
		v, err := e.ReadAddr(c, a)
		return ReplyFrame(f, v, err), nil, nil
	case tlv.OpAwait:
		w, err := e.AwaitAddr(c, a, 0)
		if err != nil {
			return ReplyFrame(f, nil, err), nil, nil
		}
		return nil, w, nil
	}
	return nil, nil, fail("fwd", a.String(), tlv.StatusMalformed, "a terminus does not apply op %d", f.Op)
}

// ReplyFrame returns the FWD{REPLY} to request: a STATUS carrying err's status
// when err is not nil (tr::tlv::malformed when it carries none), else a RESULT
// holding answer (empty when answer is nil).
func ReplyFrame(request tlv.Fwd, answer *tlv.Node, err error) *tlv.Node {
	if err != nil {
		st, ok := StatusOf(err)
		if !ok || st == tlv.StatusOK {
			st = tlv.StatusMalformed
		}
		return tlv.ReplyTo(request, tlv.Reply{Status: st})
	}
	return tlv.ReplyTo(request, tlv.Reply{Answer: answer})
}
