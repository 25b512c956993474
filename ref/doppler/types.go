package doppler

import "fmt"

// Kind says what a frame's payload is: samples (KindIQ) or telemetry records
// (KindTLM). doppler §3 keeps it apart from Format so that format only ever
// holds a BLUE sample code.
type Kind uint16

// String returns "IQ", "TLM", or the number for a kind a receiver refuses.
func (k Kind) String() string {
	switch k {
	case KindIQ:
		return "IQ"
	case KindTLM:
		return "TLM"
	}
	return fmt.Sprintf("Kind(%d)", uint16(k))
}

// Format is a Midas BLUE format code, two ASCII characters packed with the
// first in the low byte (doppler §3).
type Format uint16

// String returns the two characters of the code, or the number when either
// byte is not printable ASCII (FormatNone included).
func (f Format) String() string {
	lo, hi := byte(f), byte(f>>8)
	if lo > ' ' && lo < 0x7f && hi > ' ' && hi < 0x7f {
		return string([]byte{lo, hi})
	}
	return fmt.Sprintf("Format(%#04x)", uint16(f))
}

// ElemSize returns the size in bytes of one element of a frame of this kind
// and format — a complex sample, a raw byte, or a telemetry record — and
// false when a receiver refuses the pair (the doppler pins (docs/requirements.md), check 5).
func ElemSize(k Kind, f Format) (int, bool) {
	n := elemSize(k, f)
	return int(n), n != 0
}

// Type names one of the seven things a doppler socket carries: the five
// sample formats, the raw-bytes face of REQ/REP, and telemetry. It is the
// caller's vocabulary; the wire says the same thing with a Kind and a Format.
type Type uint8

// typeDesc is what a Type stands for on the wire and in a subject.
type typeDesc struct {
	kind   Kind
	format Format
	elem   int
	token  string
	name   string
}

// TypeOf returns the Type a header's kind and format name, and false when a
// receiver refuses the pair.
func TypeOf(k Kind, f Format) (Type, bool) {
	for _, t := range Types() {
		if d, _ := describe(t); d.kind == k && d.format == f {
			return t, true
		}
	}
	return 0, false
}

// Types returns every Type, in the order of doppler §5's subject tokens.
func Types() []Type {
	return []Type{TypeCI8, TypeCI16, TypeCI32, TypeCF32, TypeCF64, TypeRaw, TypeTLM}
}

// Kind returns the kind a frame of this type carries.
func (t Type) Kind() Kind {
	d, _ := describe(t)
	return d.kind
}

// Format returns the format code a frame of this type carries.
func (t Type) Format() Format {
	d, _ := describe(t)
	return d.format
}

// ElemSize returns the size of one element of this type, 0 for an invalid Type.
func (t Type) ElemSize() int {
	d, _ := describe(t)
	return d.elem
}

// Token returns the subject token of this type ("ci8", …, "raw", "tlm").
func (t Type) Token() string {
	d, _ := describe(t)
	return d.token
}

// Valid reports whether t is one of the seven types.
func (t Type) Valid() bool {
	_, ok := describe(t)
	return ok
}

// String returns the type's name as doppler's documentation writes it
// ("CI8", "CF64", "RAW", "TLM").
func (t Type) String() string {
	if d, ok := describe(t); ok {
		return d.name
	}
	return fmt.Sprintf("Type(%d)", uint8(t))
}
