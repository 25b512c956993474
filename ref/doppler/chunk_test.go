package doppler

import (
	"errors"
	"testing"

	"pgregory.net/rapid"
)

// TestChunkSizeOfTheSpecExample: the 1.6 MB CF64 frame of doppler §4 at the
// 1 MiB default splits into 65 530-sample chunks (the doppler pins'
// floor((max_payload − 64 − 24) / elem) × elem).
func TestChunkSizeOfTheSpecExample(t *testing.T) {
	size, err := ChunkSize(DefaultMaxPayload, 16)
	if err != nil || size != 65530*16 {
		t.Fatalf("ChunkSize(1 MiB, 16) = %d, %v; want %d", size, err, 65530*16)
	}
	f := patterned(t, TypeCF64, LittleEndian, 100_000, 5)
	m := chunks(t, f, DefaultMaxPayload, LittleEndian)
	if len(m) != 2 || len(m[0]) != DefaultMaxPayload-8 || len(m[1]) != 88+(100_000-65530)*16 {
		t.Errorf("chunks of %d and %d bytes", len(m[0]), len(m[1]))
	}
}

// TestChunkBoundary: a frame is chunked exactly when 64 + payload_bytes
// exceeds max_payload (the doppler pins (docs/requirements.md)).
func TestChunkBoundary(t *testing.T) {
	for _, tc := range []struct {
		payload, maxPayload int
		chunked             bool
	}{
		{936, 1000, false}, {937, 1000, true}, {0, 64, false}, {1, 64, true}, {0, 63, true},
	} {
		if got := NeedsChunking(uint64(tc.payload), tc.maxPayload); got != tc.chunked {
			t.Errorf("NeedsChunking(%d, %d) = %v", tc.payload, tc.maxPayload, got)
		}
	}
	f := patterned(t, TypeRaw, LittleEndian, 936, 0)
	if m := chunks(t, f, 1000, LittleEndian); len(m) != 1 || len(m[0]) != 1000 {
		t.Errorf("a frame of exactly max_payload became %d messages", len(m))
	}
	f = patterned(t, TypeRaw, LittleEndian, 937, 0)
	if m := chunks(t, f, 1000, LittleEndian); len(m) != 2 {
		t.Errorf("a frame one byte over max_payload became %d messages", len(m))
	}
}

func TestChunkRefuses(t *testing.T) {
	f := patterned(t, TypeCF64, LittleEndian, 10, 0)
	if _, err := Chunk(f, 64+24+15, LittleEndian); !errors.Is(err, ErrTooLarge) {
		t.Errorf("a max_payload with no room for one element: %v", err)
	}
	bad := f
	bad.Header.NumSamples++
	if _, err := Chunk(bad, 1000, LittleEndian); !errors.Is(err, ErrInvalid) {
		t.Errorf("a frame whose count lies: %v", err)
	}
	bad = f
	bad.Header.Flags = FlagChunked
	if _, err := Chunk(bad, 1000, LittleEndian); !errors.Is(err, ErrInvalid) {
		t.Errorf("a frame already CHUNKED: %v", err)
	}
	if _, err := NewFrame(TypeCF32, LittleEndian, make([]byte, 12)); !errors.Is(err, ErrInvalid) {
		t.Errorf("a payload of one and a half CF32 samples: %v", err)
	}
}

// TestChunkThenReassemble is the alignment property of doppler §4: for any
// type, size, max_payload and byte order, chunking gives messages that pass
// the header check, fit max_payload, share the sequence, split only between
// elements, and reassemble — in any order, with repeats — to the frame.
func TestChunkThenReassemble(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		typ := rapid.SampledFrom(Types()).Draw(t, "type")
		o := rapid.SampledFrom([]Order{LittleEndian, BigEndian}).Draw(t, "order")
		elem := typ.ElemSize()
		maxPayload := rapid.IntRange(HeaderSize+ChunkBlockSize+elem, 4096).Draw(t, "maxPayload")
		n := rapid.IntRange(0, 8192/elem).Draw(t, "samples")
		seq := rapid.Uint64().Draw(t, "sequence")

		p := make([]byte, n*elem)
		for i := range p {
			p[i] = byte(i ^ i>>8)
		}
		f, err := NewFrame(typ, o, p)
		if err != nil {
			t.Fatal(err)
		}
		f.Header.Sequence = seq
		msgs, err := Chunk(f, maxPayload, o)
		if err != nil {
			t.Fatal(err)
		}
		size, _ := ChunkSize(maxPayload, elem)
		for i, m := range msgs {
			if len(m) > maxPayload {
				t.Fatalf("message %d is %d bytes over max_payload %d", i, len(m), maxPayload)
			}
			v := Check(m, o)
			h, _ := DecodeHeader(m, o)
			if v != Accepted {
				t.Fatalf("message %d refused: %v", i, v)
			}
			if h.Sequence != seq {
				t.Fatalf("message %d has sequence %d, want %d", i, h.Sequence, seq)
			}
			if len(msgs) > 1 {
				c, _ := DecodeChunkBlock(m[HeaderSize:], o)
				if int(c.Index) != i || int(c.Count) != len(msgs) || c.TotalBytes != uint64(len(p)) {
					t.Fatalf("message %d: chunk block %+v", i, c)
				}
				if i < len(msgs)-1 && h.PayloadBytes != uint64(size) {
					t.Fatalf("chunk %d carries %d bytes, want %d", i, h.PayloadBytes, size)
				}
				if h.PayloadBytes%uint64(elem) != 0 || h.PayloadBytes == 0 {
					t.Fatalf("chunk %d of %d bytes splits a %d-byte element", i, h.PayloadBytes, elem)
				}
			}
		}

		order := rapid.Permutation(msgs).Draw(t, "arrival")
		dups := rapid.SliceOfN(rapid.IntRange(0, len(msgs)-1), 0, 3).Draw(t, "repeats")
		for _, d := range dups { // a repeat may land before or after its original
			at := rapid.IntRange(0, len(order)).Draw(t, "at")
			order = append(order[:at], append([][]byte{msgs[d]}, order[at:]...)...)
		}
		r := &Reassembler{Order: o, EagerBytes: uint64(rapid.IntRange(1, 1<<16).Draw(t, "eager"))}
		var got []Frame
		for _, m := range order {
			g, ok, err := r.Add(m)
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			if ok {
				got = append(got, g)
			}
		}
		if len(msgs) > 1 && len(got) > 1 {
			t.Fatalf("delivered %d frames", len(got))
		}
		if len(got) == 0 {
			t.Fatal("nothing delivered")
		}
		if got[0].Header != f.Header || string(got[0].Payload) != string(p) {
			t.Fatalf("reassembled %+v (%d bytes), want %+v", got[0].Header, len(got[0].Payload), f.Header)
		}
	})
}
