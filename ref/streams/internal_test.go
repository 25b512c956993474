package streams

import (
	"errors"
	"math"
	"testing"
	"unsafe"
)

// TestPairStateSize: the state kept per tracked pair — its key and its
// record — fits the 64-byte budget of issue 3. The record is fixed-size, so
// the tracker's memory is bounded by the number of pairs, not by the input.
func TestPairStateSize(t *testing.T) {
	key, rec := unsafe.Sizeof(pairKey{}), unsafe.Sizeof(track{})
	// The map holds the key and a pointer; the record lives behind it.
	per := key + unsafe.Sizeof((*track)(nil)) + rec
	if per > 64 {
		t.Errorf("per-pair state = %d bytes (key %d, record %d), want at most 64", per, key, rec)
	}
	// One word of history must hold exactly the window (§3.4).
	if bits := 8 * unsafe.Sizeof(track{}.seen); bits != ReorderWindow {
		t.Errorf("history holds %d positions, ReorderWindow is %d", bits, ReorderWindow)
	}
}

// TestRefsExhausted: once the last reference is allocated there is none to
// give, and none is reused (§2.6).
func TestRefsExhausted(t *testing.T) {
	rt := NewRuntime(func() uint64 { return 0 })
	rt.lastRef = math.MaxUint32 - 1
	s, err := rt.Open("last", "")
	if err != nil || s.Ref() != math.MaxUint32 {
		t.Fatalf("Open = %v, %v; want reference %d", s, err, uint32(math.MaxUint32))
	}
	if _, err := rt.Open("more", ""); !errors.Is(err, ErrRefsExhausted) {
		t.Errorf("Open after the last reference: %v, want ErrRefsExhausted", err)
	}
	if _, err := rt.Adopt("more"); !errors.Is(err, ErrRefsExhausted) {
		t.Errorf("Adopt after the last reference: %v, want ErrRefsExhausted", err)
	}
}
