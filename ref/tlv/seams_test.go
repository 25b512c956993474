package tlv_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"

	"pgregory.net/rapid"

	"github.com/conform-suite/conform/ref/tlv"
)

// sameOutcome reports whether two decodes agree: the same tree, trailer and
// refusal status, or both panics-free refusals with the same status.
func sameOutcome(a *tlv.Node, at tlv.Trailer, aerr error, b *tlv.Node, bt tlv.Trailer, berr error) bool {
	if (aerr == nil) != (berr == nil) {
		return false
	}
	if aerr != nil {
		as, _ := tlv.StatusOf(aerr)
		bs, _ := tlv.StatusOf(berr)
		return as == bs && aerr.Error() == berr.Error()
	}
	return a.Equal(b) && at == bt
}

// TestDecoderSeamsZeroIsSpecified: a Decoder given the specified decisions
// explicitly — HeaderChecks, StandardHeader, VerifyCheck, a walk of every PL
// — decodes every frame, good or corrupt, exactly as the zero Decoder.
func TestDecoderSeamsZeroIsSpecified(t *testing.T) {
	explicit := tlv.Decoder{
		Checks: tlv.HeaderChecks(),
		Header: tlv.StandardHeader{},
		Verify: tlv.VerifyCheck,
		Walk:   func(_ tlv.Type, opt tlv.Opt) bool { return opt.PL() },
	}
	rapid.Check(t, func(t *rapid.T) {
		m := genModel(3, false).Draw(t, "tree")
		b := withTrailer(m.encode(), rapid.SampledFrom([]int{0, 4, 8}).Draw(t, "ts"), rapid.IntRange(0, 2).Draw(t, "crc"), 7)
		if rapid.Bool().Draw(t, "corrupt") {
			b[rapid.IntRange(0, len(b)-1).Draw(t, "at")] ^= rapid.ByteRange(1, 255).Draw(t, "xor")
		}
		r := drawRope(t, b)
		var zero tlv.Decoder
		n, tr, err := zero.DecodeFrame(r)
		en, etr, eerr := explicit.DecodeFrame(r)
		if !sameOutcome(n, tr, err, en, etr, eerr) {
			t.Fatalf("zero: %v %+v %v; explicit: %v %+v %v", n, tr, err, en, etr, eerr)
		}
	})
	if got := tlv.HeaderChecks(); len(got) != 3 {
		t.Errorf("HeaderChecks: %d checks, want type, reserved bits and CRC code", len(got))
	}
}

// TestDecoderChecks: the checks a Decoder runs are its Checks, in order; a
// check left out lets its header through, and one added refuses.
func TestDecoderChecks(t *testing.T) {
	typeZero := tlvBytes(0x00, false, []byte{1})
	reserved := append([]byte(nil), tlvBytes(0x01, false, []byte{1})...)
	reserved[1] |= 0x40
	crc3 := append([]byte(nil), tlvBytes(0x01, false, []byte{1})...)
	crc3[1] |= 0x30
	for _, frame := range [][]byte{typeZero, reserved, crc3} {
		if _, err := tlv.Decode(tlv.NewRope(frame)); err == nil {
			t.Errorf("% x: the zero Decoder accepts it", frame)
		}
		d := tlv.Decoder{Checks: []tlv.HeaderCheck{}}
		if _, err := d.Decode(tlv.NewRope(frame)); err != nil {
			t.Errorf("% x: no checks, refused: %v", frame, err)
		}
	}
	refuseAll := tlv.Decoder{Checks: []tlv.HeaderCheck{func(h tlv.HeaderAt) error {
		return &tlv.DecodeError{Status: tlv.StatusMalformed, Offset: h.Offset, Reason: "every header"}
	}}}
	if _, err := refuseAll.Decode(tlv.NewRope(tlvBytes(0x01, false, []byte{1}))); err == nil {
		t.Error("a check that refuses every header did not refuse")
	}
}

// TestDecoderVerify: a Decoder verifies checks with its Verify, given what
// the check covers and where the payload lies in it.
func TestDecoderVerify(t *testing.T) {
	frame := withTrailer(tlvBytes(0x01, false, []byte("abc")), 4, 1, 9)
	frame[len(frame)-1] ^= 1 // a wrong check
	if _, err := tlv.Decode(tlv.NewRope(frame)); err == nil {
		t.Fatal("the zero Decoder accepts a wrong check")
	}
	var seen tlv.TrailerCheck
	d := tlv.Decoder{Verify: func(c tlv.TrailerCheck) error { seen = c; return nil }}
	if _, err := d.Decode(tlv.NewRope(frame)); err != nil {
		t.Fatalf("a Verify that passes everything: %v", err)
	}
	if !seen.Payload().EqualBytes([]byte("abc")) || seen.Covered.Len() != 4+3+4 || seen.Kind != tlv.CRC32C || seen.At != int64(len(frame)-4) {
		t.Errorf("Verify saw %+v", seen)
	}
	if err := tlv.VerifyCheck(seen); err == nil {
		t.Error("VerifyCheck passes the wrong check")
	}
}

// longIgnored reads every header as the 4-byte form: the standard format
// given an opt without LL.
type longIgnored struct{ tlv.StandardHeader }

func (longIgnored) Size(opt tlv.Opt) int { return tlv.StandardHeader{}.Size(opt &^ tlv.OptLL) }
func (longIgnored) Length(h []byte, room int) (uint64, error) {
	h[1] &^= byte(tlv.OptLL)
	return tlv.StandardHeader{}.Length(h, room)
}

// countsHeader counts the header in the length field.
type countsHeader struct{ tlv.StandardHeader }

func (countsHeader) Length(h []byte, room int) (uint64, error) {
	n, err := tlv.StandardHeader{}.Length(h, room)
	hs := uint64(tlv.Opt(h[1]).HeaderSize())
	if err == nil && n < hs {
		return 0, errors.New("shorter than the header")
	}
	return n - hs, err
}

func (countsHeader) Append(dst []byte, t tlv.Type, opt tlv.Opt, n int) []byte {
	return tlv.StandardHeader{}.Append(dst, t, opt, n+opt.HeaderSize())
}

// TestHeaderFormat: a Decoder reads headers with its format, and an Encoder
// writes them with its own: a tree written with a format decodes with that
// format to the same tree (trailers kept as they were), and the zero Encoder
// writes as AppendTo.
func TestHeaderFormat(t *testing.T) {
	// 01 02 03 00 ... with LL read as a 4-byte header: a 3-byte payload.
	frame := []byte{0x01, byte(tlv.OptLL), 0x03, 0x00, 0xAA, 0xBB, 0xCC}
	d := tlv.Decoder{Header: longIgnored{}}
	n, err := d.Decode(tlv.NewRope(frame))
	if err != nil || !n.Payload().EqualBytes([]byte{0xAA, 0xBB, 0xCC}) {
		t.Fatalf("decoded with the 4-byte form: %v, %v", n, err)
	}
	rapid.Check(t, func(t *rapid.T) {
		m := genModel(3, false).Draw(t, "tree")
		want := mustDecode(t, tlv.NewRope(m.encode()))
		if got := (tlv.Encoder{}).AppendTo(nil, want); !bytes.Equal(got, m.encode()) {
			t.Fatalf("the zero Encoder wrote % x, AppendTo % x", got, m.encode())
		}
		if got := (tlv.Encoder{Header: tlv.StandardHeader{}}).AppendTo(nil, want); !bytes.Equal(got, m.encode()) {
			t.Fatalf("the standard Encoder wrote % x, AppendTo % x", got, m.encode())
		}
		b := tlv.Encoder{Header: countsHeader{}}.AppendTo(nil, want)
		if binary.LittleEndian.Uint16(b[2:]) == binary.LittleEndian.Uint16(m.encode()[2:]) && !want.Opt().LL() {
			t.Fatalf("the root's length was written as the standard one")
		}
		// A child's check covered its old header: the tree is compared, not
		// the checks.
		noVerify := func(tlv.TrailerCheck) error { return nil }
		got, err := (&tlv.Decoder{Header: countsHeader{}, Verify: noVerify}).Decode(drawRope(t, b))
		if err != nil || !got.Equal(want) {
			t.Fatalf("written and read counting the header: %v, %v; want %v", got, err, want)
		}
	})
}

// TestDecoderWalk: a structured TLV the Walk leaves unwalked keeps its
// payload as bytes and has no children, even when they would not decode.
func TestDecoderWalk(t *testing.T) {
	frame := tlvBytes(0x40, true, []byte{0x00, 0x00, 0x00}) // not a child
	if _, err := tlv.Decode(tlv.NewRope(frame)); err == nil {
		t.Fatal("the zero Decoder walks an unknown type with PL")
	}
	d := tlv.Decoder{Walk: func(typ tlv.Type, opt tlv.Opt) bool { return opt.PL() && typ != 0x40 }}
	n, err := d.Decode(tlv.NewRope(frame))
	if err != nil || n.Children() != nil || !n.Opt().PL() || !n.Payload().EqualBytes([]byte{0, 0, 0}) {
		t.Errorf("unwalked: %v, %v", n, err)
	}
}
