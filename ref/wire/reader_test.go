package wire_test

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/conform-suite/conform/corpus"
	"github.com/conform-suite/conform/ref/wire"
	"github.com/google/go-cmp/cmp"
)

// h decodes spaced hex, the way the spec prints bytes.
func h(s string) []byte {
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		panic(err)
	}
	return b
}

// sampleFrame is the Frame{sample} of ranvier-wire §4.5, prefix included.
var sampleFrame = h("00 00 00 12 12 10 09 01 00 00 00 00 00 00 00 10 01 1a 01 41 28 01")

// samplePayload is sampleFrame without its prefix.
var samplePayload = sampleFrame[wire.PrefixLen:]

// prefix returns a frame prefix claiming n bytes.
func prefix(n uint32) []byte { return binary.BigEndian.AppendUint32(nil, n) }

// cat concatenates byte slices.
func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

// drain takes every frame r will yield now, copying each payload.
func drain(r wire.FrameReader) (frames [][]byte, err error) {
	for {
		p, ok, err := r.Next()
		if err != nil {
			return frames, err
		}
		if !ok {
			return frames, nil
		}
		frames = append(frames, bytes.Clone(p))
	}
}

// feed writes in to a fresh Reader in chunks of at most size bytes (all at
// once for size <= 0), draining after each chunk.
func feed(in []byte, size int) (*wire.Reader, [][]byte, error) {
	r := new(wire.Reader)
	if size <= 0 {
		size = len(in) + 1
	}
	var frames [][]byte
	var err error
	for len(in) > 0 {
		n := min(size, len(in))
		r.Write(in[:n])
		in = in[n:]
		var got [][]byte
		got, err = drain(r)
		frames = append(frames, got...)
	}
	if len(frames) == 0 && err == nil {
		_, err = drain(r)
	}
	return r, frames, err
}

var bytesEqual = cmp.Comparer(bytes.Equal)

// TestReaderTable pins the reading rules of ranvier-wire §1.2, §1.3, §2 and
// §6.1: what each input yields, the error it ends in, and what is left
// buffered.
func TestReaderTable(t *testing.T) {
	big := bytes.Repeat([]byte{0x5a}, 256)
	tests := []struct {
		name     string
		in       []byte
		frames   [][]byte
		claimed  uint64 // nonzero: must end in *TooLargeError claiming this
		buffered int
	}{
		{name: "§1.3.1/nothing", in: nil},
		{name: "§1.3.1/one byte of a prefix waits", in: h("00"), buffered: 1},
		{name: "§1.3.1/two bytes of a prefix wait", in: h("00 00"), buffered: 2},
		{name: "§1.3.1/three bytes of a prefix wait", in: h("00 00 00"), buffered: 3},
		{name: "§1.3.4/prefix alone waits", in: h("00 00 00 05"), buffered: 4},
		{name: "§1.3.4/one payload byte short waits", in: h("00 00 00 05 01 02 03 04"), buffered: 8},
		{name: "§1.3.4/sample one byte short waits", in: sampleFrame[:len(sampleFrame)-1], buffered: len(sampleFrame) - 1},
		{name: "§1.3.5/sample frame", in: sampleFrame, frames: [][]byte{samplePayload}},
		{name: "§1.2/zero-length payload is a frame", in: h("00 00 00 00"), frames: [][]byte{{}}},
		{name: "§1.2/two zero-length frames, not end of stream", in: h("00 00 00 00 00 00 00 00"), frames: [][]byte{{}, {}}},
		{name: "§1.2/zero-length then a frame", in: cat(h("00 00 00 00"), sampleFrame), frames: [][]byte{{}, samplePayload}},
		{name: "§1.2/prefix counts the payload alone", in: h("00 00 00 02 1a 00 00"), frames: [][]byte{h("1a 00")}, buffered: 1},
		{name: "§1.2/big-endian prefix", in: cat(h("00 00 01 00"), big), frames: [][]byte{big}},
		{name: "§1.2/little-endian reading would be wrong", in: cat(h("00 01 00 00"), big), buffered: 4 + len(big)},
		{name: "§1.3/every complete frame in one read", in: cat(sampleFrame, h("00 00 00 00"), sampleFrame, h("00 00")), frames: [][]byte{samplePayload, {}, samplePayload}, buffered: 2},
		{name: "§2/ceiling 01 00 00 00 accepted and waits", in: h("01 00 00 00"), buffered: 4},
		{name: "§2/ceiling with some payload waits", in: h("01 00 00 00 aa bb"), buffered: 6},
		{name: "§2/above ceiling 01 00 00 01 refused", in: h("01 00 00 01"), claimed: 16777217, buffered: 0},
		{name: "§2/ff ff ff ff refused", in: h("ff ff ff ff"), claimed: 0xffffffff, buffered: 0},
		{name: "§2/80 00 00 00 refused", in: h("80 00 00 00"), claimed: 1 << 31, buffered: 0},
		{name: "§6.2/valid then too large", in: cat(sampleFrame, h("01 00 00 01 00")), frames: [][]byte{samplePayload}, claimed: 16777217, buffered: 0},
		{name: "§6.2/too large then valid: no resync", in: cat(h("01 00 00 01"), sampleFrame), claimed: 16777217, buffered: 0},
	}
	for _, tt := range tests {
		for _, size := range []int{0, 1, 2, 3, 5} {
			r, frames, err := feed(tt.in, size)
			if diff := cmp.Diff(tt.frames, frames, bytesEqual); diff != "" {
				t.Errorf("%s (chunks of %d): frames (-want +got):\n%s", tt.name, size, diff)
			}
			var tl *wire.TooLargeError
			switch {
			case tt.claimed != 0 && (!errors.As(err, &tl) || tl.Claimed != tt.claimed):
				t.Errorf("%s (chunks of %d): err %v, want TooLarge claiming %d", tt.name, size, err, tt.claimed)
			case tt.claimed == 0 && err != nil:
				t.Errorf("%s (chunks of %d): err %v; not yet is not wrong (§6.1)", tt.name, size, err)
			}
			if r.Buffered() != tt.buffered {
				t.Errorf("%s (chunks of %d): Buffered() = %d, want %d", tt.name, size, r.Buffered(), tt.buffered)
			}
		}
	}
}

// TestReaderZeroLengthIsNotEndOfStream: §1.2 — 00 00 00 00 is the empty
// message, a complete frame; the reader keeps reading after it.
func TestReaderZeroLengthIsNotEndOfStream(t *testing.T) {
	var r wire.Reader
	r.Write(h("00 00 00 00"))
	p, ok, err := r.Next()
	if !ok || err != nil || len(p) != 0 {
		t.Fatalf("Next() = %x, %v, %v; want an empty frame", p, ok, err)
	}
	if err := r.End(); err != nil {
		t.Errorf("End() after the empty frame = %v, want nil", err)
	}
	r.Write(sampleFrame)
	p, ok, err = r.Next()
	if !ok || err != nil || !bytes.Equal(p, samplePayload) {
		t.Fatalf("Next() after the empty frame = %x, %v, %v; want the sample", p, ok, err)
	}
}

// TestReaderTooLargeIsSticky: §6.2 — after a prefix above the ceiling the
// stream is no longer aligned; the reader refuses forever and never
// resynchronises, however many valid bytes follow.
func TestReaderTooLargeIsSticky(t *testing.T) {
	for _, bad := range [][]byte{h("01 00 00 01"), h("ff ff ff ff"), h("7f ff ff ff")} {
		var r wire.Reader
		r.Write(bad)
		_, _, first := r.Next()
		var tl *wire.TooLargeError
		if !errors.As(first, &tl) {
			t.Fatalf("% x: Next() err = %v, want *TooLargeError", bad, first)
		}
		claimed := tl.Claimed
		if want := uint64(binary.BigEndian.Uint32(bad)); claimed != want {
			t.Errorf("% x: Claimed = %d, want %d", bad, claimed, want)
		}
		if !strings.Contains(first.Error(), "16777216") {
			t.Errorf("error %q does not name the ceiling", first)
		}
		for i := 0; i < 5; i++ {
			r.Write(sampleFrame)
			r.Write(h("00 00 00 00"))
			p, ok, err := r.Next()
			if ok || p != nil || !errors.As(err, &tl) || tl.Claimed != claimed {
				t.Fatalf("% x: Next() after %d more valid frames = %x, %v, %v; want the same TooLarge", bad, 2*i+2, p, ok, err)
			}
		}
		if err := r.End(); !errors.As(err, &tl) || tl.Claimed != claimed || errors.Is(err, wire.ErrTruncated) {
			t.Errorf("% x: End() = %v, want the TooLarge", bad, err)
		}
	}
}

// TestReaderEnd: §1.3 — bytes left buffered when a connection ends are a
// truncated stream and are never delivered; at a frame boundary the stream
// ends cleanly.
func TestReaderEnd(t *testing.T) {
	tests := []struct {
		name string
		in   []byte
		want error
	}{
		{"nothing", nil, nil},
		{"at a boundary", sampleFrame, nil},
		{"after an empty frame", h("00 00 00 00"), nil},
		{"one prefix byte", h("00"), wire.ErrTruncated},
		{"three prefix bytes", h("00 00 00"), wire.ErrTruncated},
		{"prefix alone", h("00 00 00 12"), wire.ErrTruncated},
		{"mid payload", sampleFrame[:10], wire.ErrTruncated},
		{"frame then partial", cat(sampleFrame, sampleFrame[:5]), wire.ErrTruncated},
		{"at the ceiling, waiting", h("01 00 00 00"), wire.ErrTruncated},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, _, err := feed(tt.in, 0)
			if err != nil {
				t.Fatal(err)
			}
			buffered := r.Buffered()
			if got := r.End(); !errors.Is(got, tt.want) || (tt.want == nil && got != nil) {
				t.Errorf("End() = %v, want %v", got, tt.want)
			}
			if p, ok, err := r.Next(); ok || err != nil {
				t.Errorf("Next() after End = %x, %v, %v; a partial frame is never delivered", p, ok, err)
			}
			if r.Buffered() != buffered {
				t.Errorf("End changed Buffered from %d to %d", buffered, r.Buffered())
			}
		})
	}
}

// TestReaderChunkingInvariance: §1.3 — the same frames whether the bytes
// arrive one at a time or all at once, for every golden vector.
func TestReaderChunkingInvariance(t *testing.T) {
	for _, v := range corpus.MustWire().All() {
		_, want, wantErr := feed(v.Input, 0)
		for size := 1; size <= len(v.Input); size++ {
			r, got, err := feed(v.Input, size)
			if diff := cmp.Diff(want, got, bytesEqual); diff != "" {
				t.Errorf("%s, chunks of %d: frames (-whole +chunked):\n%s", v.ID, size, diff)
			}
			if (err == nil) != (wantErr == nil) || (err != nil && err.Error() != wantErr.Error()) {
				t.Errorf("%s, chunks of %d: err %v, whole input gave %v", v.ID, size, err, wantErr)
			}
			if wantBuf := len(v.Input) - consumed(got); (err == nil && r.Buffered() != wantBuf) || (err != nil && r.Buffered() != 0) {
				t.Errorf("%s, chunks of %d: Buffered() = %d", v.ID, size, r.Buffered())
			}
		}
		if len(want) != len(v.Frames) {
			t.Errorf("%s: %d frames, vector has %d", v.ID, len(want), len(v.Frames))
		}
	}
}

// consumed returns the bytes on the wire the frames took.
func consumed(frames [][]byte) int {
	n := 0
	for _, f := range frames {
		n += wire.PrefixLen + len(f)
	}
	return n
}

// TestReaderPayloadsStayValidUntilWrite: the FrameReader contract — a
// payload is valid until the next Write, so every frame of one read can be
// held at once — and appending to one payload does not overwrite the next.
func TestReaderPayloadsStayValidUntilWrite(t *testing.T) {
	var r wire.Reader
	r.Write(cat(prefix(3), []byte("abc"), prefix(2), []byte("de"), prefix(1), []byte("f")))
	var held [][]byte
	for {
		p, ok, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		held = append(held, p)
	}
	_ = append(held[0], 'X', 'X', 'X', 'X', 'X', 'X')
	want := [][]byte{[]byte("abc"), []byte("de"), []byte("f")}
	if diff := cmp.Diff(want, held, bytesEqual); diff != "" {
		t.Errorf("held payloads (-want +got):\n%s", diff)
	}
}

// TestReaderNoAllocationOnClaim: §2 — a reader MUST NOT allocate on the
// strength of a prefix. Four bytes claiming the ceiling, or anything above
// it, cost what four bytes cost.
func TestReaderNoAllocationOnClaim(t *testing.T) {
	for _, in := range [][]byte{h("01 00 00 00"), h("00 ff ff ff"), h("01 00 00 01"), h("ff ff ff ff")} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		var r wire.Reader
		r.Write(in)
		r.Next()
		r.Next()
		runtime.ReadMemStats(&after)
		if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<10 {
			t.Errorf("% x: %d bytes allocated for a 4-byte input", in, grew)
		}
		want := 4
		if binary.BigEndian.Uint32(in) > wire.MaxPayload {
			want = 0 // a refused stream is released
		}
		if r.Buffered() != want {
			t.Errorf("% x: Buffered() = %d, want %d", in, r.Buffered(), want)
		}
	}
}

// TestReaderReusesItsBuffer: §1.3 SHOULD — memory is bounded by what has
// arrived; consumed bytes are dropped rather than accumulated, so a
// long-lived connection in steady state allocates nothing per frame.
func TestReaderReusesItsBuffer(t *testing.T) {
	frame := cat(prefix(1000), bytes.Repeat([]byte{7}, 1000))
	var r wire.Reader
	for i := 0; i < 10; i++ { // warm up, including a split frame
		r.Write(frame[:3])
		r.Write(frame[3:])
		drain(&r)
	}
	step := func() {
		r.Write(frame[:500])
		r.Next()
		r.Write(frame[500:])
		if _, ok, _ := r.Next(); !ok {
			panic("no frame")
		}
	}
	if allocs := testing.AllocsPerRun(1000, step); allocs != 0 {
		t.Errorf("%v allocations per frame in steady state, want 0", allocs)
	}
	if r.Buffered() != 0 {
		t.Errorf("Buffered() = %d after 1000 whole frames", r.Buffered())
	}
	// Ten thousand frames, as in the Rust test the spec cites: memory
	// allocated stays well below the bytes that passed through.
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	var r2 wire.Reader
	for i := 0; i < 10000; i++ {
		r2.Write(frame[:7])
		r2.Write(frame[7:])
		if _, ok, err := r2.Next(); !ok || err != nil {
			t.Fatalf("frame %d: %v %v", i, ok, err)
		}
	}
	runtime.ReadMemStats(&after)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<10 {
		t.Errorf("%d bytes allocated for 10000 frames of %d bytes", grew, len(frame))
	}
}

// TestReaderImplementsFrameReader: *Reader is the reference FrameReader
// and its zero value is ready to use.
func TestReaderImplementsFrameReader(t *testing.T) {
	var fr wire.FrameReader = new(wire.Reader)
	if n, err := fr.Write(sampleFrame); n != len(sampleFrame) || err != nil {
		t.Errorf("Write = %d, %v; it never fails", n, err)
	}
	if n, err := fr.Write(nil); n != 0 || err != nil {
		t.Errorf("Write(nil) = %d, %v", n, err)
	}
	if fr.Buffered() != len(sampleFrame) {
		t.Errorf("Buffered() = %d", fr.Buffered())
	}
}

// TestConstants pins the two constants to literals, as ranvier-wire §1.2
// and §2 do, rather than to arithmetic on each other.
func TestConstants(t *testing.T) {
	if wire.PrefixLen != 4 {
		t.Errorf("PrefixLen = %d, want 4 (§1.2)", wire.PrefixLen)
	}
	if wire.MaxPayload != 16777216 {
		t.Errorf("MaxPayload = %d, want 16777216 (§2)", wire.MaxPayload)
	}
}
