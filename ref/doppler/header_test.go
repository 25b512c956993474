package doppler

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestMagicIsDPLRSTRM pins Magic against the bytes the doppler pins (docs/requirements.md) prints
// for a little-endian host, and its swap against a big-endian one.
func TestMagicIsDPLRSTRM(t *testing.T) {
	if got := binary.LittleEndian.Uint64([]byte("DPLRSTRM")); got != Magic {
		t.Errorf("Magic = %#x, \"DPLRSTRM\" read little-endian is %#x", Magic, got)
	}
	if got := binary.BigEndian.Uint64([]byte("DPLRSTRM")); got != magicSwapped {
		t.Errorf("magicSwapped = %#x, \"DPLRSTRM\" read big-endian is %#x", magicSwapped, got)
	}
}

// TestHeaderLayout writes a header whose every field is distinct and reads
// each field back at the offset the doppler pins' table gives, in both
// orders, so a drifted offset cannot hide behind a symmetric round trip.
func TestHeaderLayout(t *testing.T) {
	h := Header{
		Magic: Magic, VersionMajor: 2, VersionMinor: 7, Flags: FlagChunked,
		Kind: KindTLM, Format: FormatCD, DataRep: [4]byte{'E', 'E', 'E', 'I'},
		Sequence: 0x1112131415161718, TimestampNs: 0x2122232425262728,
		NumSamples: 0x3132333435363738, PayloadBytes: 0x4142434445464748,
		SampleRateHz: 1.5,
	}
	for _, tc := range []struct {
		order Order
		bo    binary.ByteOrder
	}{{LittleEndian, binary.LittleEndian}, {BigEndian, binary.BigEndian}} {
		b := AppendHeader(nil, tc.order, h)
		if len(b) != 64 {
			t.Fatalf("%v: header is %d bytes, want 64", tc.order, len(b))
		}
		fields := []struct {
			name     string
			off, len int
			want     uint64
		}{
			{"magic", 0, 8, Magic},
			{"version_major", 8, 2, 2},
			{"version_minor", 10, 2, 7},
			{"flags", 12, 4, uint64(FlagChunked)},
			{"kind", 16, 2, uint64(KindTLM)},
			{"format", 18, 2, uint64(FormatCD)},
			{"sequence", 24, 8, h.Sequence},
			{"timestamp_ns", 32, 8, h.TimestampNs},
			{"num_samples", 40, 8, h.NumSamples},
			{"payload_bytes", 48, 8, h.PayloadBytes},
			{"sample_rate_hz", 56, 8, 0x3FF8000000000000},
		}
		for _, f := range fields {
			var got uint64
			switch f.len {
			case 2:
				got = uint64(tc.bo.Uint16(b[f.off:]))
			case 4:
				got = uint64(tc.bo.Uint32(b[f.off:]))
			case 8:
				got = tc.bo.Uint64(b[f.off:])
			}
			if got != f.want {
				t.Errorf("%v: %s at offset %d = %#x, want %#x", tc.order, f.name, f.off, got, f.want)
			}
		}
		if !bytes.Equal(b[20:24], []byte("EEEI")) {
			t.Errorf("%v: data_rep at 20 = %q, want it written as given", tc.order, b[20:24])
		}
		back, err := DecodeHeader(b, tc.order)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(h, back); diff != "" {
			t.Errorf("%v: round trip (-want +got):\n%s", tc.order, diff)
		}
	}
}

// TestLittleEndianMagicBytes pins the first eight bytes of a little-endian
// header to the spelling the doppler pins (docs/requirements.md) gives: 44 50 4C 52 53 54 52 4D.
func TestLittleEndianMagicBytes(t *testing.T) {
	b := AppendHeader(nil, LittleEndian, NewHeader(TypeCF32, LittleEndian))
	if want := []byte{0x44, 0x50, 0x4C, 0x52, 0x53, 0x54, 0x52, 0x4D}; !bytes.Equal(b[:8], want) {
		t.Errorf("magic bytes % x, want % x", b[:8], want)
	}
	if got := AppendHeader(nil, BigEndian, NewHeader(TypeCF32, BigEndian)); !bytes.Equal(got[:8], []byte("MRTSRLPD")) {
		t.Errorf("big-endian magic bytes %q, want the reverse", got[:8])
	}
}

// TestNewHeaderDataRep checks a sender writes its own order's BLUE token
// (doppler §3).
func TestNewHeaderDataRep(t *testing.T) {
	for order, want := range map[Order]string{LittleEndian: "EEEI", BigEndian: "IEEE"} {
		if h := NewHeader(TypeCI8, order); string(h.DataRep[:]) != want {
			t.Errorf("%v: data_rep %q, want %q", order, h.DataRep[:], want)
		}
	}
}

func TestChunkBlockLayout(t *testing.T) {
	c := ChunkBlock{Index: 0x01020304, Count: 0x05060708, TotalSamples: 0x1112131415161718, TotalBytes: 0x2122232425262728}
	for order, bo := range map[Order]binary.ByteOrder{LittleEndian: binary.LittleEndian, BigEndian: binary.BigEndian} {
		b := AppendChunkBlock(nil, order, c)
		if len(b) != 24 {
			t.Fatalf("%v: chunk block is %d bytes, want 24", order, len(b))
		}
		if bo.Uint32(b[0:]) != c.Index || bo.Uint32(b[4:]) != c.Count ||
			bo.Uint64(b[8:]) != c.TotalSamples || bo.Uint64(b[16:]) != c.TotalBytes {
			t.Errorf("%v: fields misplaced: % x", order, b)
		}
		back, err := DecodeChunkBlock(b, order)
		if err != nil || back != c {
			t.Errorf("%v: round trip %+v, %v", order, back, err)
		}
	}
	if _, err := DecodeChunkBlock(make([]byte, 23), LittleEndian); err == nil {
		t.Error("a 23-byte chunk block decoded")
	}
}

func TestDecodeHeaderShort(t *testing.T) {
	_, err := DecodeHeader(make([]byte, 63), LittleEndian)
	var e *Error
	if !asError(err, &e) || e.Verdict != ShortMessage || e.Code != ErrInvalid {
		t.Errorf("63 bytes: %v, want DP_ERR_INVALID short-message", err)
	}
}

// TestFormatCodes pins the BLUE packing (doppler §3): first character in the
// low byte, so the five sample codes run from 0x4243 to 0x4C43 and every code
// is at least 0x4200, never colliding with KindTLM.
func TestFormatCodes(t *testing.T) {
	for _, tc := range []struct {
		typ  Type
		code string
		elem int
	}{
		{TypeCI8, "CB", 2}, {TypeCI16, "CI", 4}, {TypeCI32, "CL", 8},
		{TypeCF32, "CF", 8}, {TypeCF64, "CD", 16}, {TypeRaw, "SB", 1},
	} {
		f := tc.typ.Format()
		if want := Format(binary.LittleEndian.Uint16([]byte(tc.code))); f != want {
			t.Errorf("%v format %#x, want %q packed little-endian %#x", tc.typ, uint16(f), tc.code, uint16(want))
		}
		if f.String() != tc.code || tc.typ.Kind() != KindIQ || tc.typ.ElemSize() != tc.elem {
			t.Errorf("%v: format %v kind %v elem %d, want %s IQ %d", tc.typ, f, tc.typ.Kind(), tc.typ.ElemSize(), tc.code, tc.elem)
		}
		if got, ok := TypeOf(KindIQ, f); !ok || got != tc.typ {
			t.Errorf("TypeOf(IQ, %v) = %v, %v", f, got, ok)
		}
	}
	if TypeTLM.Kind() != KindTLM || TypeTLM.Format() != FormatNone || TypeTLM.ElemSize() != 16 {
		t.Errorf("TLM: kind %v format %v elem %d, want TLM 0 16", TypeTLM.Kind(), TypeTLM.Format(), TypeTLM.ElemSize())
	}
	if _, ok := ElemSize(KindTLM, FormatCF); ok {
		t.Error("a telemetry frame with a sample format has an element size")
	}
	if _, ok := ElemSize(KindIQ, FormatNone); ok {
		t.Error("an IQ frame with format 0 has an element size")
	}
}
