package doppler

import (
	"errors"
	"fmt"
	"strconv"
)

// Code is one of doppler's C return codes (the doppler pins (docs/requirements.md)). A Code is
// itself an error, so errors.Is(err, doppler.ErrTooLarge) asks whether a
// failure carries that code.
type Code int

// Error returns the code's C name, such as "DP_ERR_INVALID".
func (c Code) Error() string {
	if name := codeName(c); name != "" {
		return name
	}
	return "DP_ERR(" + strconv.Itoa(int(c)) + ")"
}

// String returns the same text as Error.
func (c Code) String() string { return c.Error() }

// Error is a failure with its doppler code and the context a binding author
// needs to see why: the operation, the header check's verdict when that check
// refused, the frame's sequence when one was involved, and a detail sentence.
type Error struct {
	Code    Code
	Op      string  // what was being done: "check", "reassemble", "chunk", "push", …
	Verdict Verdict // the header check's verdict, Accepted when it was not the cause
	// Sequence is the sequence of the frame concerned; HasSequence says
	// whether there was one.
	Sequence    uint64
	HasSequence bool
	Detail      string
}

// Error formats the code, operation, verdict, sequence and detail on one line.
func (e *Error) Error() string {
	s := "doppler: " + e.Op + ": " + e.Code.Error()
	if e.Verdict != Accepted {
		s += " (" + e.Verdict.String() + ")"
	}
	if e.HasSequence {
		s += fmt.Sprintf(" [frame %d]", e.Sequence)
	}
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}

// Unwrap returns the code, so errors.Is matches an *Error against a Code.
func (e *Error) Unwrap() error { return e.Code }

// withSequence returns err naming the frame of sequence seq: a copy of an
// *Error with its sequence set, or err as it is.
func withSequence(err error, seq uint64) error {
	var e *Error
	if !errors.As(err, &e) {
		return err
	}
	cp := *e
	cp.Sequence, cp.HasSequence = seq, true
	return &cp
}
