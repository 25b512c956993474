package graph

import (
	"errors"
	"fmt"

	"github.com/conform-suite/conform/ref/tlv"
)

// An Error is a refusal by the graph: the operation, the address it named, and
// the libtracer status a node answers with on the wire.
type Error struct {
	Op     string     // "read", "write", "await", "assign", "propagate", "retire", …
	Addr   string     // the address as given
	Status tlv.Status // the answer on the wire
	Reason string     // why, for a human
}

func (e *Error) Error() string {
	return fmt.Sprintf("graph: %s %s: %s: %s", e.Op, e.Addr, e.Status, e.Reason)
}

// StatusOf returns the libtracer status err carries: a *Error's, or that of an
// error from ref/tlv (a refused record or path). It returns false when err
// carries none, including when err is nil.
func StatusOf(err error) (tlv.Status, bool) {
	var ge *Error
	if errors.As(err, &ge) {
		return ge.Status, true
	}
	return tlv.StatusOf(err)
}

func fail(op, addr string, st tlv.Status, format string, args ...any) *Error {
	return &Error{Op: op, Addr: addr, Status: st, Reason: fmt.Sprintf(format, args...)}
}

// wrap turns an error from ref/tlv into a *Error for op at addr, keeping its
// status (tr::tlv::malformed when it carries none).
func wrap(op, addr string, err error) *Error {
	var ge *Error
	if errors.As(err, &ge) {
		return ge
	}
	st, ok := tlv.StatusOf(err)
	if !ok {
		st = tlv.StatusMalformed
	}
	return &Error{Op: op, Addr: addr, Status: st, Reason: err.Error()}
}
