package wire_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"testing"

	"github.com/conform-suite/conform/ref/wire"
)

// TestFraming: a Framing other than the zero one writes and reads its own
// byte order and ceiling, and the zero Framing is ranvier-wire's, the one
// AppendFrame and a zero Reader use.
func TestFraming(t *testing.T) {
	payload := []byte("sample")
	for _, tc := range []struct {
		name    string
		f       wire.Framing
		prefix  []byte
		ceiling uint64
	}{
		{"zero", wire.Framing{}, []byte{0, 0, 0, 6}, wire.MaxPayload},
		{"little-endian", wire.Framing{Order: binary.LittleEndian}, []byte{6, 0, 0, 0}, wire.MaxPayload},
		{"lower ceiling", wire.Framing{Ceiling: 5}, []byte{0, 0, 0, 6}, 5},
		{"no ceiling", wire.Framing{Ceiling: math.MaxUint32}, []byte{0, 0, 0, 6}, math.MaxUint32},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.f.AppendFrame(nil, payload)
			var tooLarge *wire.PayloadTooLargeError
			switch {
			case uint64(len(payload)) > tc.ceiling:
				if !errors.As(err, &tooLarge) || got != nil {
					t.Fatalf("AppendFrame = %x, %v; want a refusal", got, err)
				}
			case err != nil || !bytes.Equal(got, append(tc.prefix, payload...)):
				t.Fatalf("AppendFrame = %x, %v; want prefix %x", got, err, tc.prefix)
			}
			// A prefix claiming one byte more than the ceiling is TooLarge;
			// one claiming the ceiling waits for its payload.
			for _, claim := range []uint64{tc.ceiling, tc.ceiling + 1} {
				if claim > math.MaxUint32 {
					continue
				}
				r := &wire.Reader{Framing: tc.f}
				var b [wire.PrefixLen]byte
				order := tc.f.Order
				if order == nil {
					order = binary.BigEndian
				}
				order.PutUint32(b[:], uint32(claim))
				r.Write(b[:])
				_, ok, err := r.Next()
				var tl *wire.TooLargeError
				if claim > tc.ceiling != errors.As(err, &tl) || ok {
					t.Errorf("claim %d, ceiling %d: Next = %v, %v", claim, tc.ceiling, ok, err)
				}
			}
		})
	}
	zero, _ := wire.AppendFrame(nil, payload)
	if want, _ := (wire.Framing{}).AppendFrame(nil, payload); !bytes.Equal(zero, want) {
		t.Errorf("AppendFrame = %x, the zero Framing writes %x", zero, want)
	}
}
