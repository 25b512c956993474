package tlv_test

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/conform-suite/conform/ref/tlv"
)

// reconstructed§tlv-trailer: the check values of "123456789".
func TestChecksumCheckValues(t *testing.T) {
	check := []byte("123456789")
	if got := tlv.Checksum(tlv.CRC32C, check); got != 0xE3069283 {
		t.Errorf("CRC-32C check 0x%08x, want 0xE3069283", got)
	}
	if got := tlv.Checksum(tlv.CRC64XZ, check); got != 0x995DC9BBDF1939FA {
		t.Errorf("CRC-64/XZ check 0x%016x, want 0x995DC9BBDF1939FA", got)
	}
}

// fixedClock is an injected egress clock (the TLV pins (docs/requirements.md): a case that needs a
// value injects the clock).
func fixedClock(ns int64) func() time.Time {
	return func() time.Time { return time.Unix(0, ns) }
}

// Every trailer combination: TS none/4/6/8 × CRC none/32C/64XZ. Egress writes
// exactly the bytes the independent oracle writes; ingress validates and strips
// them from every rope, leaving the frame at rest (reconstructed§tlv-trailer;
// graph model §Payload invariance).
func TestTrailerEveryCombination(t *testing.T) {
	const stamp = 0x0102030405060708
	rest := decodeVectors[5].in // nesting 3
	node := mustDecode(t, tlv.NewRope(rest))
	for _, ts := range []int{0, 4, 6, 8} {
		for _, crc := range []tlv.CRC{tlv.CRCNone, tlv.CRC32C, tlv.CRC64XZ} {
			t.Run(fmt.Sprintf("TS%d/%s", ts, crc), func(t *testing.T) {
				want := withTrailer(rest, ts, int(crc), stamp)
				e := tlv.Egress{TSWidth: ts, CRC: crc, Clock: fixedClock(stamp)}
				got, err := e.AppendTo(nil, node)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, want) {
					t.Fatalf("egress\n got % x\nwant % x", got, want)
				}
				if size := len(want) - len(rest); size != node.Opt().TrailerSize()+ts+map[tlv.CRC]int{0: 0, 1: 4, 2: 8}[crc] {
					t.Fatalf("trailer of %d bytes", size)
				}
				for name, r := range ropes(want) {
					var d tlv.Decoder
					n, tr, err := d.DecodeFrame(r)
					if err != nil {
						t.Fatalf("rope %s: %v", name, err)
					}
					if !n.Equal(node) || !bytes.Equal(n.Bytes(), rest) {
						t.Fatalf("rope %s: at rest %s, want %s", name, n, node)
					}
					if n.Opt()&(tlv.OptTS|tlv.OptCRC) != 0 {
						t.Fatalf("rope %s: stripping left opt %s", name, n.Opt())
					}
					wantTS := uint64(stamp) & (1<<(8*ts) - 1)
					if tr.TSWidth != ts || tr.CRC != crc || tr.Timestamp != wantTS {
						t.Fatalf("rope %s: trailer %+v", name, tr)
					}
				}
			})
		}
	}
}

// The CRC covers every byte before it: a flip anywhere in a checked frame is
// refused, and a flip in the payload or timestamp is a CRC mismatch
// (reconstructed§tlv-trailer).
func TestTrailerCRCCoversEveryByte(t *testing.T) {
	rest := decodeVectors[4].in
	for _, crc := range []int{1, 2} {
		frame := withTrailer(rest, 6, crc, 99)
		for i := range frame {
			for bit := range 8 {
				bad := bytes.Clone(frame)
				bad[i] ^= 1 << bit
				_, err := tlv.Decode(tlv.NewRope(bad))
				if err == nil {
					t.Fatalf("CRC %d: flip of bit %d at %d accepted", crc, bit, i)
				}
				if i >= 4 && i < len(rest)+6 {
					wantStatus(t, err, tlv.StatusCRCMismatch)
				}
			}
		}
	}
}

// A check over the payload alone (not the header) is wrong: the header as sent,
// TS and CRC bits set, is covered (reconstructed§tlv-trailer).
func TestTrailerCRCIncludesHeader(t *testing.T) {
	rest := hx("01 00 01 00 2a")
	bad := append(hx("01 10 01 00 2a"), 0, 0, 0, 0)
	sum := tlv.Checksum(tlv.CRC32C, hx("2a"))
	bad[5], bad[6], bad[7], bad[8] = byte(sum), byte(sum>>8), byte(sum>>16), byte(sum>>24)
	_, err := tlv.Decode(tlv.NewRope(bad))
	wantStatus(t, err, tlv.StatusCRCMismatch)
	mustDecode(t, tlv.NewRope(withTrailer(rest, 0, 1, 0)))
}

// A child's own trailer is validated but kept, because its bytes are the
// parent's payload (graph model §Nested TLV structure; §Payload invariance).
func TestTrailerOnChild(t *testing.T) {
	child := withTrailer(hx("01 00 01 00 2a"), 8, 2, 7)
	in := tlvBytes(0x0b, true, child)
	n := mustDecode(t, tlv.NewRope(in))
	if c := n.Children()[0]; c.Trailer().Len() != 16 || c.Opt().CRC() != tlv.CRC64XZ {
		t.Fatalf("child %s", c)
	}
	if !bytes.Equal(n.Bytes(), in) {
		t.Fatal("child trailer not re-emitted")
	}
	bad := bytes.Clone(in)
	bad[len(bad)-1] ^= 1
	_, err := tlv.Decode(tlv.NewRope(bad))
	wantStatus(t, err, tlv.StatusCRCMismatch)
}

// A structured TLV's trailer follows its children.
func TestTrailerOnStructuredRoot(t *testing.T) {
	rest := decodeVectors[6].in // nesting 4
	frame := withTrailer(rest, 4, 2, 5)
	for name, r := range ropes(frame) {
		n, err := tlv.Decode(r)
		if err != nil || !bytes.Equal(n.Bytes(), rest) {
			t.Fatalf("rope %s: %v", name, err)
		}
	}
}

// Egress refuses what it cannot write, and never reads a clock it was not given.
func TestEgressRefuses(t *testing.T) {
	n := tlv.NewLeaf(tlv.TypeValue, []byte{1})
	for _, e := range []tlv.Egress{
		{TSWidth: 4},
		{TSWidth: 5, Clock: fixedClock(0)},
		{CRC: tlv.CRCReserved},
	} {
		if _, err := e.AppendTo(nil, n); err == nil {
			t.Errorf("egress %+v accepted", e)
		}
	}
	var zero tlv.Egress
	got, err := zero.AppendTo(nil, n)
	if err != nil || !bytes.Equal(got, hx("01 00 01 00 01")) {
		t.Fatalf("zero egress: % x, %v", got, err)
	}
}

// Egress replaces a trailer the node carried, and never touches the payload.
func TestEgressReplacesTrailer(t *testing.T) {
	inner := withTrailer(hx("01 00 01 00 2a"), 4, 1, 3)
	n := mustDecode(t, tlv.NewRope(tlvBytes(0x0b, true, inner))).Children()[0]
	got, err := tlv.Egress{CRC: tlv.CRC64XZ}.AppendTo(nil, n)
	if err != nil {
		t.Fatal(err)
	}
	if want := withTrailer(hx("01 00 01 00 2a"), 0, 2, 0); !bytes.Equal(got, want) {
		t.Fatalf("got % x, want % x", got, want)
	}
}
