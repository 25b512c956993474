package tlv_test

import (
	"bytes"
	"testing"

	"github.com/conform-suite/conform/ref/tlv"
)

// A rope is storage, blind to structure: its bytes do not depend on how they
// are split (graph model §The two compositions).
func TestRope(t *testing.T) {
	b := []byte("0123456789")
	r := tlv.NewRope(b[:3], nil, b[3:4], []byte{}, b[4:])
	if r.Len() != 10 || r.NumViews() != 3 || !bytes.Equal(r.Bytes(), b) {
		t.Fatalf("rope %q of %d views", r.Bytes(), r.NumViews())
	}
	if !r.Equal(bytewise(b)) || !r.EqualBytes(b) || r.Equal(tlv.NewRope(b[1:])) || r.EqualBytes(b[:9]) {
		t.Fatal("Equal disagrees with the bytes")
	}
	for from := 0; from <= 10; from++ {
		for to := from; to <= 10; to++ {
			if s := r.Slice(from, to); !s.EqualBytes(b[from:to]) {
				t.Fatalf("Slice(%d, %d) = %q", from, to, s.Bytes())
			}
		}
	}
	c := tlv.Concat(r.Slice(5, 10), tlv.Rope{}, r.Slice(0, 5))
	if !c.EqualBytes([]byte("5678901234")) {
		t.Fatalf("Concat = %q", c.Bytes())
	}
	var w bytes.Buffer
	if n, err := c.WriteTo(&w); err != nil || n != 10 || w.String() != "5678901234" {
		t.Fatalf("WriteTo = %d, %v, %q", n, err, w.String())
	}
	if got := c.AppendTo([]byte("x")); string(got) != "x5678901234" {
		t.Fatalf("AppendTo = %q", got)
	}
	var zero tlv.Rope
	if zero.Len() != 0 || zero.NumViews() != 0 || !zero.Equal(tlv.NewRope()) {
		t.Fatal("the zero rope is not empty")
	}
	defer func() {
		if recover() == nil {
			t.Fatal("Slice out of range did not panic")
		}
	}()
	r.Slice(3, 11)
}

// Views share memory: Slice and Concat copy no byte.
func TestRopeSharesMemory(t *testing.T) {
	b := []byte("abcdef")
	s := tlv.Concat(tlv.NewRope(b).Slice(2, 4))
	for v := range s.Views() {
		if &v[0] != &b[2] {
			t.Fatal("a copy, not a view")
		}
	}
}
