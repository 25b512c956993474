package doppler

import "testing"

// Run with -benchmem. The goals of issue 6 are a header check of at most
// 10 ns with 0 allocations, and a 1.6 MB CF64 frame reassembled with one copy
// of its payload: about 1.6 MB and one allocation per frame. Nothing here is
// asserted; timing belongs in benchmark output, not in tests.

func BenchmarkCheck(b *testing.B) {
	for _, o := range []Order{LittleEndian, BigEndian} {
		msg := message(o, validHeader(TypeCF32, o, 128), 1024)
		b.Run(o.String(), func(b *testing.B) {
			for b.Loop() {
				if v := Check(msg, o); v != Accepted {
					b.Fatal(v)
				}
			}
		})
	}
	b.Run("cross-endian", func(b *testing.B) {
		msg := message(BigEndian, validHeader(TypeCF32, BigEndian, 128), 1024)
		for b.Loop() {
			if v := Check(msg, LittleEndian); v != CrossEndian {
				b.Fatal(v)
			}
		}
	})
}

// BenchmarkReassembleCF64 reassembles doppler §4's example, 100 000 CF64
// samples (1.6 MB) in two chunks at the 1 MiB default max_payload. B/op is
// the frame buffer; a second copy of the payload would double it.
func BenchmarkReassembleCF64(b *testing.B) {
	f := patterned(b, TypeCF64, LittleEndian, 100_000, 0)
	msgs, err := Chunk(f, DefaultMaxPayload, LittleEndian)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(f.Payload)))
	var r Reassembler
	for b.Loop() {
		r = Reassembler{} // the same frame again would be a late repeat
		for _, m := range msgs {
			if _, _, err := r.Add(m); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkChunkCF64 splits the same frame: the sender's one copy.
func BenchmarkChunkCF64(b *testing.B) {
	f := patterned(b, TypeCF64, LittleEndian, 100_000, 0)
	b.SetBytes(int64(len(f.Payload)))
	for b.Loop() {
		if _, err := Chunk(f, DefaultMaxPayload, LittleEndian); err != nil {
			b.Fatal(err)
		}
	}
}
