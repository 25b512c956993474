package fuzzwire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/conform-suite/conform/corpus"
	"github.com/conform-suite/conform/fuzz/allocs"
	"github.com/conform-suite/conform/fuzz/seeds"
	"github.com/conform-suite/conform/ref/wire"
	"google.golang.org/protobuf/proto"
)

// model is ranvier-wire §1.3 and §2 applied to a whole input at once,
// written directly from the spec: the frames as offsets into the input, and
// the state the input leaves.
type model struct {
	frames   [][2]int // payload start and end
	tooLarge bool
	claimed  uint64
	buffered int
}

func parse(in []byte) model {
	var m model
	off := 0
	for {
		rest := in[off:]
		if len(rest) < 4 {
			break
		}
		n := uint64(rest[0])<<24 | uint64(rest[1])<<16 | uint64(rest[2])<<8 | uint64(rest[3])
		if n > 16777216 {
			m.tooLarge, m.claimed = true, n
			break
		}
		if uint64(len(rest)-4) < n {
			break
		}
		m.frames = append(m.frames, [2]int{off + 4, off + 4 + int(n)})
		off += 4 + int(n)
	}
	m.buffered = len(in) - off
	if m.tooLarge {
		m.buffered = 0 // a refused stream is released, not held
	}
	return m
}

// chunks turns fuzz bytes into read sizes: each byte is one read of that
// many bytes, zero being an empty read and 255 the rest of the input;
// no bytes means one byte at a time. The sizes repeat as needed.
func chunks(spec []byte) func() int {
	spec = bytes.Clone(spec) // never append to the fuzzer's own input
	total := 0
	for _, b := range spec {
		total += int(b)
	}
	if total == 0 {
		spec = append(spec, 1)
	}
	i := -1
	return func() int {
		i++
		if b := spec[i%len(spec)]; b != 255 {
			return int(b)
		}
		return 1 << 30
	}
}

// run feeds in to a fresh Reader in the reads next gives (or all at once
// when next is nil), draining after each, and checks every frame against
// the model as it comes. It returns the reader and the last error.
func run(t *testing.T, in []byte, want model, next func() int) (*wire.Reader, error) {
	r := new(wire.Reader)
	got := 0
	var last error
	for fed := 0; fed < len(in) || fed == 0; {
		n := len(in) - fed
		if next != nil {
			n = min(next(), n)
		}
		r.Write(in[fed : fed+n])
		fed += n
		for {
			p, ok, err := r.Next()
			if err != nil {
				last = err
				break
			}
			last = nil
			if !ok {
				break
			}
			if got == len(want.frames) {
				t.Fatalf("frame %d (% x) beyond the %d the input holds", got, p, len(want.frames))
			}
			if f := want.frames[got]; !bytes.Equal(p, in[f[0]:f[1]]) {
				t.Fatalf("frame %d = % x, want % x", got, p, in[f[0]:f[1]])
			}
			got++
		}
		if len(in) == 0 {
			break
		}
	}
	if got != len(want.frames) {
		t.Fatalf("%d frames, the input holds %d", got, len(want.frames))
	}
	return r, last
}

// checkEnd checks the terminal state of r against the model: the sticky
// TooLarge, or waiting with exactly the unconsumed bytes held; and End.
func checkEnd(t *testing.T, how string, in []byte, r *wire.Reader, last error, want model) {
	var tl *wire.TooLargeError
	if want.tooLarge {
		if !errors.As(last, &tl) || tl.Claimed != want.claimed {
			t.Fatalf("%s: last error %v, want TooLarge claiming %d", how, last, want.claimed)
		}
	} else if last != nil {
		t.Fatalf("%s: error %v on input the model waits on", how, last)
	}
	if r.Buffered() != want.buffered {
		t.Fatalf("%s: Buffered() = %d, want %d", how, r.Buffered(), want.buffered)
	}
	if held := r.Buffered(); !want.tooLarge && held >= 4 {
		// §1.3: after draining, at most one incomplete frame is held.
		if claim := binary.BigEndian.Uint32(in[len(in)-held:]); uint64(held) >= 4+uint64(claim) {
			t.Fatalf("%s: holding %d bytes whose prefix claims %d", how, held, claim)
		}
	}
	end := r.End()
	switch {
	case want.tooLarge:
		if !errors.As(end, &tl) || tl.Claimed != want.claimed {
			t.Fatalf("%s: End() = %v, want the TooLarge", how, end)
		}
	case want.buffered > 0:
		if !errors.Is(end, wire.ErrTruncated) {
			t.Fatalf("%s: End() = %v with %d buffered, want ErrTruncated", how, end, want.buffered)
		}
	default:
		if end != nil {
			t.Fatalf("%s: End() = %v at a frame boundary", how, end)
		}
	}
	if p, ok, _ := r.Next(); ok {
		t.Fatalf("%s: frame % x after End", how, p)
	}
}

// allocBound is what feeding n bytes may allocate: the buffer's growth, a
// small multiple of n, and slack for the runtime; never what a prefix
// claims.
func allocBound(n int) uint64 { return 1<<20 + 4*uint64(n) }

// FuzzReader: ranvier-wire §1.3 — for any input and any chunking, the
// frames, the terminal error and the bytes held are those of feeding the
// whole input at once, and both match the model; §2 — memory follows what
// arrived, not what a prefix claims.
func FuzzReader(f *testing.F) {
	for _, v := range corpus.MustWire().All() {
		f.Add([]byte(v.Input), []byte(nil))
		f.Add([]byte(v.Input), []byte{3, 0, 7})
		f.Add([]byte(v.Input), []byte{255})
	}
	f.Add([]byte{0x01, 0x00, 0x00, 0x00}, []byte{1})
	f.Add([]byte{0x00, 0xff, 0xff, 0xff, 0x00}, []byte{2})
	extra := seeds.GoFuzzCorpus(f, "protobuf", "http2", "tls")
	for i, d := range extra {
		f.Add(d, []byte{byte(i%7 + 1), byte(i % 3)})
	}
	f.Logf("FuzzReader: %d seeds from the go-fuzz corpus", len(extra))

	f.Fuzz(func(t *testing.T, in, chunking []byte) {
		want := parse(in)
		var whole, chunked *wire.Reader
		var wholeErr, chunkedErr error
		if n := allocs.During(func() { whole, wholeErr = run(t, in, want, nil) }); n > allocBound(len(in)) {
			t.Fatalf("%d bytes allocated reading %d bytes at once", n, len(in))
		}
		if n := allocs.During(func() { chunked, chunkedErr = run(t, in, want, chunks(chunking)) }); n > allocBound(len(in)) {
			t.Fatalf("%d bytes allocated reading %d bytes in chunks", n, len(in))
		}
		checkEnd(t, "whole", in, whole, wholeErr, want)
		checkEnd(t, "chunked", in, chunked, chunkedErr, want)

		// §2: four bytes claiming up to 16 MiB (or more) are four bytes.
		if len(in) >= 4 {
			var r wire.Reader
			var p []byte
			var ok bool
			var err error
			n := allocs.During(func() {
				r.Write(in[:4])
				p, ok, err = r.Next()
			})
			claim := binary.BigEndian.Uint32(in)
			switch {
			case n > 1<<20:
				t.Fatalf("%d bytes allocated for the prefix % x", n, in[:4])
			case claim == 0:
				if !ok || len(p) != 0 || r.Buffered() != 0 {
					t.Fatalf("prefix 00 00 00 00: %v, %v, %d buffered", ok, err, r.Buffered())
				}
			case ok || (claim <= wire.MaxPayload && r.Buffered() != 4) || (claim > wire.MaxPayload && r.Buffered() != 0):
				t.Fatalf("prefix % x alone: frame %v, %d buffered", in[:4], ok, r.Buffered())
			case (claim > wire.MaxPayload) != (err != nil):
				t.Fatalf("prefix % x alone: err %v", in[:4], err)
			}
		}
	})
}

// roundTrip checks that m, decoded from payload as name, re-encodes to
// bytes that decode to an equal message and re-encode identically.
func roundTrip(t *testing.T, name string, payload []byte, m proto.Message) {
	enc, err := wire.Encode(m)
	if err != nil {
		t.Fatalf("%s: decoded % x but cannot re-encode it: %v", name, payload, err)
	}
	back, err := wire.Decode(name, enc)
	if err != nil {
		t.Fatalf("%s: re-encoding % x gave % x, which does not decode: %v", name, payload, enc, err)
	}
	if !proto.Equal(m, back) {
		t.Fatalf("%s: % x decodes to %v, its re-encoding % x to %v", name, payload, m, enc, back)
	}
	if enc2, err := wire.Encode(back); err != nil || !bytes.Equal(enc, enc2) {
		t.Fatalf("%s: encoding is not stable: % x then % x (%v)", name, enc, enc2, err)
	}
}

// FuzzDecode: ranvier-wire §7 — every Ranvier message type (one per
// execution, chosen by the kind byte) decodes any payload without
// panicking; an accepted message re-encodes to bytes that
// decode to an equal message and re-encode identically; and the subscriber
// classifies the payload as its decoding says (§6.3, §6.4).
func FuzzDecode(f *testing.F) {
	// Each execution decodes the payload as one message type, chosen by
	// the kind byte, so that an execution costs one decoding and the
	// engine learns which type a payload exercises.
	names := wire.MessageTypeNames()
	for _, v := range corpus.MustWire().All() {
		for _, p := range append(v.Frames, v.Input) {
			for k := range names {
				f.Add([]byte(p), byte(k))
			}
		}
	}
	extra := seeds.GoFuzzCorpus(f, "protobuf")
	for i, d := range extra {
		f.Add(d, byte(i))
	}
	f.Logf("FuzzDecode: %d seeds from the go-fuzz corpus", len(extra))

	f.Fuzz(func(t *testing.T, payload []byte, kind byte) {
		orig := bytes.Clone(payload)
		name := names[int(kind)%len(names)]
		if m, err := wire.Decode(name, payload); err == nil {
			roundTrip(t, name, payload, m)
		}
		if !bytes.Equal(payload, orig) {
			t.Fatal("decoding modified its input")
		}

		// DecodeFrame is Decode for Frame, and the subscriber acts on it.
		fr, frErr := wire.DecodeFrame(payload)
		m, err := wire.Decode("ranvier.message.v1.Frame", payload)
		if (frErr == nil) != (err == nil) || (err == nil && !proto.Equal(fr, m)) {
			t.Fatalf("DecodeFrame (%v, %v) and Decode (%v, %v) disagree", fr, frErr, m, err)
		}
		framed, err := wire.AppendFrame(nil, payload)
		if err != nil {
			t.Skip("payload above the ceiling")
		}
		var s wire.Subscriber
		var events []wire.Event
		if err := s.Receive(framed, func(ev wire.Event) { events = append(events, ev) }); err != nil {
			t.Fatalf("Receive of one frame: %v", err)
		}
		if len(events) != 1 {
			t.Fatalf("%d events for one frame", len(events))
		}
		want := wire.Delivered
		switch {
		case frErr != nil:
			want = wire.SkippedUndecodable
		case fr.GetPayload() == nil:
			want = wire.SkippedNoVariant
		}
		if events[0].Action != want || (want == wire.Delivered && !proto.Equal(events[0].Frame, fr)) {
			t.Fatalf("subscriber: %v, want %v", events[0].Action, want)
		}
		if got := s.Unreadable(); (got == 1) != (want != wire.Delivered) {
			t.Fatalf("Unreadable() = %d after %v", got, want)
		}
	})
}
