package wire_test

import (
	"bytes"
	"testing"

	"github.com/conform-suite/conform/ref/wire"
)

// frame64KiB is one frame carrying a 64 KiB payload, prefix included.
var frame64KiB = func() []byte {
	p := make([]byte, 64<<10)
	for i := range p {
		p[i] = byte(i * 7)
	}
	f, err := wire.AppendFrame(nil, p)
	if err != nil {
		panic(err)
	}
	return f
}()

// BenchmarkReader64KiB is the frame reader in steady state on 64 KiB frames:
// each op writes one whole frame and takes it with Next. The goal is 0
// allocs/op; compare its MB/s with BenchmarkCopy64KiB, which moves the same
// bytes with one copy.
func BenchmarkReader64KiB(b *testing.B) {
	var r wire.Reader
	b.ReportAllocs()
	b.SetBytes(int64(len(frame64KiB)))
	for b.Loop() {
		r.Write(frame64KiB)
		if _, ok, _ := r.Next(); !ok {
			b.Fatal("no frame")
		}
	}
}

// BenchmarkReader64KiBIn4KiBReads is the same stream arriving in 4 KiB
// socket reads, draining after each.
func BenchmarkReader64KiBIn4KiBReads(b *testing.B) {
	var r wire.Reader
	b.ReportAllocs()
	b.SetBytes(int64(len(frame64KiB)))
	for b.Loop() {
		frames := 0
		for in := frame64KiB; len(in) > 0; {
			n := min(4096, len(in))
			r.Write(in[:n])
			in = in[n:]
			if _, ok, _ := r.Next(); ok {
				frames++
			}
		}
		if frames != 1 {
			b.Fatal("no frame")
		}
	}
}

// BenchmarkCopy64KiB is the baseline for BenchmarkReader64KiB: one copy of
// the same bytes into a reused buffer, the least a reader that owns its
// buffer can do.
func BenchmarkCopy64KiB(b *testing.B) {
	dst := make([]byte, len(frame64KiB))
	b.ReportAllocs()
	b.SetBytes(int64(len(frame64KiB)))
	for b.Loop() {
		copy(dst, frame64KiB)
	}
}

// BenchmarkReaderSampleFrame is the 22-byte frame of ranvier-wire §4.5, one
// read per frame.
func BenchmarkReaderSampleFrame(b *testing.B) {
	var r wire.Reader
	b.ReportAllocs()
	b.SetBytes(int64(len(sampleFrame)))
	for b.Loop() {
		r.Write(sampleFrame)
		if _, ok, _ := r.Next(); !ok {
			b.Fatal("no frame")
		}
	}
}

// BenchmarkReaderSampleFrameBatched is the §4.5 frame with 186 of them in
// each 4 KiB read, as a busy connection delivers them; one op is one frame.
func BenchmarkReaderSampleFrameBatched(b *testing.B) {
	const perRead = 4096 / 22
	batch := bytes.Repeat(sampleFrame, perRead)
	var r wire.Reader
	b.ReportAllocs()
	b.SetBytes(int64(len(sampleFrame)))
	n := 0
	for b.Loop() {
		if n == 0 {
			r.Write(batch)
			n = perRead
		}
		if _, ok, _ := r.Next(); !ok {
			b.Fatal("no frame")
		}
		n--
	}
}

// BenchmarkAppendFrame frames the §4.5 payload into a reused buffer.
func BenchmarkAppendFrame(b *testing.B) {
	buf := make([]byte, 0, 64)
	b.ReportAllocs()
	b.SetBytes(int64(len(sampleFrame)))
	for b.Loop() {
		var err error
		buf, err = wire.AppendFrame(buf[:0], samplePayload)
		if err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAppendFrame64KiB frames a 64 KiB payload into a reused buffer.
func BenchmarkAppendFrame64KiB(b *testing.B) {
	payload := frame64KiB[wire.PrefixLen:]
	buf := make([]byte, 0, len(frame64KiB))
	b.ReportAllocs()
	b.SetBytes(int64(len(frame64KiB)))
	for b.Loop() {
		buf, _ = wire.AppendFrame(buf[:0], payload)
	}
}

// BenchmarkDecodeFrameSample decodes the §4.5 payload.
func BenchmarkDecodeFrameSample(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(samplePayload)))
	for b.Loop() {
		if _, err := wire.DecodeFrame(samplePayload); err != nil {
			b.Fatal(err)
		}
	}
}
