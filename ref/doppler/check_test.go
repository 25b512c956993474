package doppler

import (
	"fmt"
	"math"
	"testing"
)

// validHeader returns the header of an n-element frame of type typ as a
// conforming sender of order o writes it.
func validHeader(typ Type, o Order, n uint64) Header {
	h := NewHeader(typ, o)
	h.Sequence = 3
	h.TimestampNs = 1_700_000_000_000_000_000
	h.NumSamples = n
	h.PayloadBytes = n * uint64(typ.ElemSize())
	h.SampleRateHz = 2.4e6
	return h
}

// message encodes h in order o, then a chunk block when h is CHUNKED, then
// payload zero bytes — whatever h claims.
func message(o Order, h Header, payload int) []byte {
	b := AppendHeader(nil, o, h)
	if h.Chunked() {
		b = AppendChunkBlock(b, o, ChunkBlock{Count: 2, Index: 0, TotalSamples: 2 * h.NumSamples, TotalBytes: 2 * h.PayloadBytes})
	}
	return append(b, make([]byte, payload)...)
}

// TestCheckAccepts covers the doppler pins' valid frames: each sample
// format, the raw-bytes face and telemetry, in both byte orders, read by a
// receiver of the same order; chunk messages and empty frames too.
func TestCheckAccepts(t *testing.T) {
	for _, o := range []Order{LittleEndian, BigEndian} {
		for _, typ := range Types() {
			for _, n := range []uint64{0, 1, 1000} {
				h := validHeader(typ, o, n)
				msg := message(o, h, int(h.PayloadBytes))
				v := Check(msg, o)
				got, _ := DecodeHeader(msg, o)
				if v != Accepted || got != h {
					t.Errorf("§3 %v %v n=%d: %v, header %+v", o, typ, n, v, got)
				}
				h.Flags |= FlagChunked
				if v := Check(message(o, h, int(h.PayloadBytes)), o); v != Accepted {
					t.Errorf("§3/§4 %v %v n=%d chunk: %v", o, typ, n, v)
				}
			}
		}
		h := validHeader(TypeCF32, o, 4)
		h.VersionMinor = 9
		if v := Check(message(o, h, 32), o); v != Accepted {
			t.Errorf("§3 %v: minor version 9 refused: %v", o, v)
		}
		h = validHeader(TypeCF32, o, 4)
		h.DataRep = [4]byte{'X', 'X', 'X', 'X'}
		if v := Check(message(o, h, 32), o); v != Accepted {
			t.Errorf("§3 %v: a wrong data_rep decided the verdict: %v", o, v)
		}
	}
}

// TestCheckRefuses has one vector per refusal of the doppler pins (docs/requirements.md), in both
// byte orders.
func TestCheckRefuses(t *testing.T) {
	type vector struct {
		name    string
		section string
		typ     Type
		edit    func(*Header)
		payload int // payload bytes actually sent; -1 means what the edited header claims
		want    Verdict
	}
	vectors := []vector{
		{"magic of another format", "§3 check 1", TypeCF32, func(h *Header) { h.Magic = 0x0123456789ABCDEF }, -1, NotDoppler},
		{"magic of zeros", "§3 check 1", TypeCF32, func(h *Header) { h.Magic = 0 }, -1, NotDoppler},
		{"magic byte-swapped", "§3 check 1", TypeCF32, func(h *Header) { h.Magic = magicSwapped }, -1, CrossEndian},
		{"major version 1", "§3 check 2", TypeCF32, func(h *Header) { h.VersionMajor = 1 }, -1, OtherMajor},
		{"major version 3", "§3 check 2", TypeCF32, func(h *Header) { h.VersionMajor = 3 }, -1, OtherMajor},
		{"major version byte-swapped", "§3 check 2", TypeCF32, func(h *Header) { h.VersionMajor = 0x0200 }, -1, OtherMajor},
		{"flag 0x2", "§3 check 3", TypeCF32, func(h *Header) { h.Flags = 0x2 }, -1, UnknownFlags},
		{"flag 0x80000000 with CHUNKED", "§3 check 3", TypeCF32, func(h *Header) { h.Flags = 0x80000001 }, -1, UnknownFlags},
		{"payload_bytes one more than sent", "§3 check 4", TypeCI8, func(h *Header) { h.PayloadBytes += 1 }, 8, PayloadMismatch},
		{"payload_bytes one less than sent", "§3 check 4", TypeCI8, func(h *Header) { h.PayloadBytes -= 1 }, 8, PayloadMismatch},
		{"payload_bytes claims 2^64-1", "§3 check 4", TypeCI8, func(h *Header) { h.PayloadBytes = math.MaxUint64 }, 8, PayloadMismatch},
		{"payload_bytes counts the chunk block", "§3 check 4", TypeCI8, func(h *Header) { h.Flags = FlagChunked; h.PayloadBytes += 24 }, 8, PayloadMismatch},
		{"kind 2", "§3 check 5", TypeCF32, func(h *Header) { h.Kind = 2 }, -1, UnknownKind},
		{"kind 0xFFFF", "§3 check 5", TypeCF32, func(h *Header) { h.Kind = 0xFFFF }, -1, UnknownKind},
		{"format CC (not a doppler format)", "§3 check 5", TypeCF32, func(h *Header) { h.Format = 'C' | 'C'<<8 }, -1, UnknownFormat},
		{"format byte-swapped FC", "§3 check 5", TypeCF32, func(h *Header) { h.Format = 'F' | 'C'<<8 }, -1, UnknownFormat},
		{"IQ frame with format 0", "§3 check 5", TypeCF32, func(h *Header) { h.Format = FormatNone }, -1, UnknownFormat},
		{"telemetry frame with a sample format", "§3 check 5", TypeTLM, func(h *Header) { h.Format = FormatCF }, -1, UnknownFormat},
		{"num_samples one too many", "§3 check 5", TypeCF32, func(h *Header) { h.NumSamples++ }, -1, CountMismatch},
		{"num_samples one too few", "§3 check 5", TypeCF32, func(h *Header) { h.NumSamples-- }, -1, CountMismatch},
		{"num_samples counts bytes", "§3 check 5", TypeCF64, func(h *Header) { h.NumSamples = h.PayloadBytes }, -1, CountMismatch},
		// 2^60+1 CF64 samples are 2^64+16 bytes: a 64-bit product wraps to 16.
		{"count product wraps to payload_bytes", "§3 check 5", TypeCF64, func(h *Header) { h.NumSamples = 1<<60 + 1; h.PayloadBytes = 16 }, -1, CountMismatch},
		{"count product of 2^64-1 records", "§3 check 5", TypeTLM, func(h *Header) { h.NumSamples = math.MaxUint64; h.PayloadBytes = 0 }, -1, CountMismatch},
		{"telemetry counted in bytes", "§3 check 5", TypeTLM, func(h *Header) { h.NumSamples = h.PayloadBytes }, -1, CountMismatch},
	}
	for _, o := range []Order{LittleEndian, BigEndian} {
		for _, vec := range vectors {
			t.Run(fmt.Sprintf("%v/%s", o, vec.name), func(t *testing.T) {
				h := validHeader(vec.typ, o, 4)
				vec.edit(&h)
				payload := vec.payload
				if payload < 0 {
					payload = int(min(h.PayloadBytes, 1<<20))
				}
				msg := message(o, h, payload)
				if v := Check(msg, o); v != vec.want {
					t.Errorf("%s: verdict %v, want %v", vec.section, v, vec.want)
				}
				if vec.want.Code() != ErrInvalid {
					t.Errorf("%v maps to %v, every refusal is DP_ERR_INVALID", vec.want, vec.want.Code())
				}
			})
		}
	}
}

// TestCheckShortMessages: a message too short for the header, or for the
// chunk block its CHUNKED flag announces, is refused with its own verdict and
// without reading past its end (§3 check 4).
func TestCheckShortMessages(t *testing.T) {
	for _, o := range []Order{LittleEndian, BigEndian} {
		full := message(o, validHeader(TypeCI16, o, 0), 0)
		for n := 0; n < HeaderSize; n++ {
			if v := Check(full[:n:n], o); v != ShortMessage {
				t.Errorf("%v: %d bytes: %v, want short-message", o, n, v)
			}
		}
		h := validHeader(TypeCI16, o, 0)
		h.Flags = FlagChunked
		chunked := message(o, h, 0)
		for n := HeaderSize; n < HeaderSize+ChunkBlockSize; n++ {
			if v := Check(chunked[:n:n], o); v != ShortChunkBlock {
				t.Errorf("%v: CHUNKED in %d bytes: %v, want short-chunk-block", o, n, v)
			}
		}
		if v := Check(chunked, o); v != Accepted {
			t.Errorf("%v: an empty chunk of 88 bytes: %v", o, v)
		}
	}
}

// TestCheckCrossEndian: a frame written in one order and read in the other
// is cross-endian, never "not doppler" and never accepted (doppler §3, §9).
func TestCheckCrossEndian(t *testing.T) {
	for _, o := range []Order{LittleEndian, BigEndian} {
		for _, typ := range Types() {
			h := validHeader(typ, o, 5)
			if v := Check(message(o, h, int(h.PayloadBytes)), o.Swap()); v != CrossEndian {
				t.Errorf("%v %v read %v: %v, want cross-endian", typ, o, o.Swap(), v)
			}
		}
	}
}

// TestCheckOrder: a message that fails several checks gets the verdict of
// the first, in §3's order.
func TestCheckOrder(t *testing.T) {
	o := LittleEndian
	h := validHeader(TypeCF32, o, 4)
	h.Magic, h.VersionMajor, h.Flags, h.PayloadBytes, h.Kind = magicSwapped, 1, 2, 99, 7
	steps := []struct {
		fix  func(*Header)
		want Verdict
	}{
		{func(*Header) {}, CrossEndian},
		{func(h *Header) { h.Magic = Magic }, OtherMajor},
		{func(h *Header) { h.VersionMajor = 2 }, UnknownFlags},
		{func(h *Header) { h.Flags = 0 }, PayloadMismatch},
		{func(h *Header) { h.PayloadBytes = 32 }, UnknownKind},
		{func(h *Header) { h.Kind = KindIQ; h.Format = 1 }, UnknownFormat},
		{func(h *Header) { h.Format = FormatCF; h.NumSamples = 5 }, CountMismatch},
		{func(h *Header) { h.NumSamples = 4 }, Accepted},
	}
	for i, s := range steps {
		s.fix(&h)
		if v := Check(message(o, h, 32), o); v != s.want {
			t.Errorf("step %d: %v, want %v", i, v, s.want)
		}
	}
}

// TestCheckLength judges a message by the transport's length while reading
// only the prefix it is given.
func TestCheckLength(t *testing.T) {
	o := LittleEndian
	h := validHeader(TypeCF64, o, 1<<20)
	prefix := AppendHeader(nil, o, h)
	if v := CheckLength(prefix, HeaderSize+16<<20, o); v != Accepted {
		t.Errorf("a 16 MiB message described by its header: %v", v)
	}
	if v := CheckLength(prefix, HeaderSize+16<<20-1, o); v != PayloadMismatch {
		t.Errorf("one byte short: %v", v)
	}
	if v := CheckLength(prefix[:HeaderSize-1], HeaderSize+16<<20, o); v != ShortMessage {
		t.Errorf("a prefix without the whole header: %v", v)
	}
	if v := CheckLength(prefix, HeaderSize-1, o); v != ShortMessage {
		t.Errorf("a transport length under the header: %v", v)
	}
}

func TestCheckDoesNotAllocate(t *testing.T) {
	msg := message(LittleEndian, validHeader(TypeCF32, LittleEndian, 8), 64)
	if n := testing.AllocsPerRun(100, func() { Check(msg, LittleEndian) }); n != 0 {
		t.Errorf("Check allocates %v times", n)
	}
}

func TestVerdictNames(t *testing.T) {
	seen := map[string]Verdict{}
	for v := Accepted; v <= CountMismatch; v++ {
		name := v.String()
		if prev, dup := seen[name]; dup || name == "" {
			t.Errorf("verdict %d named %q, as is %d", v, name, prev)
		}
		seen[name] = v
	}
	if CrossEndian.String() != "cross-endian" || NotDoppler.String() != "not-doppler" {
		t.Error("the two magic verdicts lost the names §3 gives them")
	}
}
