package graph

import (
	"errors"
	"time"

	"github.com/conform-suite/conform/ref/tlv"
)

// ErrPending is what Waiter.Result answers while the await is outstanding.
var ErrPending = errors.New("graph: await pending")

// A Waiter is an outstanding await: the readiness form of a data read (graph
// model §Assign, propagate… RFC-0008 Amendment 2). It completes on the next
// assign at its vertex (a data write, a branch write landing there, or Assign),
// with the value a read of that vertex alone serves at that instant; it never
// completes on a field write or a propagate. It times out, with
// tr::flow::timeout, when Graph.Expire finds its deadline passed.
type Waiter struct {
	addr     string
	deadline time.Time
	timed    bool
	done     bool
	value    *tlv.Node
	err      error
}

// Done reports whether the await has completed.
func (w *Waiter) Done() bool { return w.done }

// Result returns the await's answer: the value, or the error it completed
// with, or ErrPending while it is outstanding.
func (w *Waiter) Result() (*tlv.Node, error) {
	if !w.done {
		return nil, ErrPending
	}
	return w.value, w.err
}

// NewWaiter returns an outstanding await on addr that its maker completes
// with Complete. It is for an Endpoint that answers an await itself — a value
// wrapping a Graph that serves some awaits its own way — rather than through
// the graph's own waiters.
func NewWaiter(addr string) *Waiter { return &Waiter{addr: addr} }

// Complete completes the await with value v, or with err when err is not nil.
// Completing an await that has completed does nothing.
func (w *Waiter) Complete(v *tlv.Node, err error) { w.finish(v, err) }

func (w *Waiter) finish(v *tlv.Node, err error) {
	if w.done {
		return
	}
	w.done, w.value, w.err = true, v, err
}

// Await registers an await on addr for caller c. A field selector — any, even
// :subscribers or :acl — answers tr::schema::not_found: the field is real, the
// await surface is not (graph model §Owner-declared application fields, #585).
// A missing or retired vertex is tr::path::not_found; the READ right is
// needed. A positive timeout sets a deadline on the injected clock.
func (g *Graph) Await(c Caller, addr string, timeout time.Duration) (*Waiter, error) {
	a, err := ParseAddress(addr)
	if err != nil {
		return nil, err
	}
	return g.AwaitAddr(c, a, timeout)
}

// AwaitAddr is Await for a parsed address.
func (g *Graph) AwaitAddr(c Caller, a Address, timeout time.Duration) (*Waiter, error) {
	if a.HasField {
		return nil, fail("await", a.String(), tlv.StatusSchemaNotFound, "an await takes no field selector")
	}
	v := g.lookup(string(a.Path))
	if v == nil {
		return nil, fail("await", a.String(), tlv.StatusPathNotFound, "no live vertex")
	}
	if !g.allowed(c, v, ActRead) {
		return nil, g.denied("await", a.String(), c, ActRead)
	}
	w := &Waiter{addr: a.String()}
	if timeout > 0 {
		w.deadline, w.timed = g.now().Add(timeout), true
	}
	v.waiters = append(v.waiters, w)
	return w, nil
}

// event applies what an event of kind k at v does to the awaits outstanding
// on v (Policy.Wakes): under the model, an assign or a handler write
// completes every one with what a read of v alone serves now.
func (g *Graph) event(v *vertex, k EventKind) {
	if len(v.waiters) == 0 {
		return
	}
	wake := g.policy.wakes(Event{Kind: k, Path: v.path(), Handler: v.handler != nil})
	if !wake.Complete {
		return
	}
	ws := v.waiters
	v.waiters = nil
	for _, w := range ws {
		var val *tlv.Node
		if wake.Serve {
			val = ownValue(v)
		}
		if val != nil {
			w.finish(val, nil)
		} else {
			w.finish(nil, fail("await", w.addr, tlv.StatusPathNotFound, "the vertex serves no value"))
		}
	}
}

// Expire completes, with tr::flow::timeout, every await whose deadline is at
// or before the clock's now, and returns how many it completed.
func (g *Graph) Expire() int {
	now := g.now()
	n := 0
	for _, v := range g.vertices {
		kept := v.waiters[:0]
		for _, w := range v.waiters {
			if w.timed && !w.deadline.After(now) {
				w.finish(nil, fail("await", w.addr, tlv.StatusFlowTimeout, "deadline passed"))
				n++
				continue
			}
			kept = append(kept, w)
		}
		v.waiters = kept
	}
	return n
}
