package tlv_test

import (
	"bytes"
	"testing"

	"github.com/conform-suite/conform/ref/tlv"
)

// threeLevels returns a three-level tree: a SETTINGS root, four POINTs, each a
// NAME and three VALUEs of valueSize bytes. With valueSize 70 it is about 1 KiB.
func threeLevels(valueSize int) []byte {
	var points [][]byte
	for p := range 4 {
		kids := [][]byte{tlvBytes(0x02, false, []byte{'p', byte('0' + p)})}
		for range 3 {
			kids = append(kids, tlvBytes(0x01, false, bytes.Repeat([]byte{byte(p)}, valueSize)))
		}
		points = append(points, tlvBytes(0x07, true, kids...))
	}
	return tlvBytes(0x0b, true, points...)
}

// Views, not copies: decoding allocates the same whatever the payload size
// (issue 5, Performance), from one segment or one byte per segment.
func TestDecodeAllocsIndependentOfPayloadSize(t *testing.T) {
	allocs := func(r tlv.Rope) float64 {
		return testing.AllocsPerRun(50, func() {
			if _, err := tlv.Decode(r); err != nil {
				t.Fatal(err)
			}
		})
	}
	small, large := threeLevels(70), threeLevels(4000)
	a, b := allocs(tlv.NewRope(small)), allocs(tlv.NewRope(large))
	if a != b {
		t.Errorf("one segment: %v allocations at %d bytes, %v at %d", a, len(small), b, len(large))
	}
	if c := allocs(bytewise(small)); c != a {
		t.Errorf("one byte per segment: %v allocations, one segment %v", c, a)
	}
}

func BenchmarkDecode(b *testing.B) {
	kib := threeLevels(70)
	for _, bc := range []struct {
		name string
		in   []byte
		r    tlv.Rope
	}{
		{"1KiB/one-segment", kib, tlv.NewRope(kib)},
		{"1KiB/byte-per-segment", kib, bytewise(kib)},
		{"16KiB/one-segment", threeLevels(1340), tlv.NewRope(threeLevels(1340))},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(bc.in)))
			for b.Loop() {
				if _, err := tlv.Decode(bc.r); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkEncode(b *testing.B) {
	n := mustDecode(b, tlv.NewRope(threeLevels(70)))
	buf := make([]byte, 0, 2048)
	b.ReportAllocs()
	for b.Loop() {
		buf = n.AppendTo(buf[:0])
	}
}

func BenchmarkCanonicalPath(b *testing.B) {
	const six = "/net/can/can0/esp/wheel/left"
	b.Run("six-segments/append", func(b *testing.B) {
		buf := make([]byte, 0, 64)
		b.ReportAllocs()
		for b.Loop() {
			buf, _ = tlv.AppendCanonicalPath(buf[:0], six)
		}
	})
	b.Run("six-segments/new", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = tlv.CanonicalPath(six)
		}
	})
}

func BenchmarkHop(b *testing.B) {
	r := testRouter(b)
	in := mustDecode(b, tlv.NewRope(fwdBefore))
	e := tlv.Egress{TSWidth: 8, CRC: tlv.CRC32C, Clock: fixedClock(1)}
	buf := make([]byte, 0, 256)
	b.ReportAllocs()
	for b.Loop() {
		res, err := r.Hop(in, 0)
		if err != nil {
			b.Fatal(err)
		}
		buf, _ = e.AppendTo(buf[:0], res.Frame)
	}
}
