package wire_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"

	messagepb "github.com/conform-suite/conform/proto/ranvier/message/v1"
	"github.com/conform-suite/conform/ref/wire"
	"google.golang.org/protobuf/proto"
	"pgregory.net/rapid"
)

// payloadGen draws payloads, often empty or tiny, sometimes a few KiB.
var payloadGen = rapid.OneOf(
	rapid.SliceOfN(rapid.Byte(), 0, 4),
	rapid.SliceOfN(rapid.Byte(), 0, 64),
	rapid.SliceOfN(rapid.Byte(), 0, 4096),
)

// drawChunked writes stream to r in chunks whose sizes rapid draws (zero
// included: an empty read), draining after each chunk with check.
func drawChunked(t *rapid.T, r *wire.Reader, stream []byte, check func(fed int, frames [][]byte, err error)) {
	fed := 0
	for fed < len(stream) {
		n := rapid.IntRange(0, len(stream)-fed).Draw(t, "chunk")
		if rapid.IntRange(0, 3).Draw(t, "small") == 0 {
			n = min(n, rapid.IntRange(0, 5).Draw(t, "tiny"))
		}
		r.Write(stream[fed : fed+n])
		fed += n
		frames, err := drain(r)
		check(fed, frames, err)
	}
}

// TestPropertyAnyChunking: ranvier-wire §1.3 — any chunking of any sequence
// of frames yields exactly those frames, in order, and leaves a clean end.
func TestPropertyAnyChunking(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		payloads := rapid.SliceOfN(payloadGen, 0, 12).Draw(t, "payloads")
		var stream []byte
		for _, p := range payloads {
			var err error
			if stream, err = wire.AppendFrame(stream, p); err != nil {
				t.Fatal(err)
			}
		}
		var r wire.Reader
		var got [][]byte
		drawChunked(t, &r, stream, func(_ int, frames [][]byte, err error) {
			if err != nil {
				t.Fatalf("framing error on valid frames: %v", err)
			}
			got = append(got, frames...)
		})
		if len(got) != len(payloads) {
			t.Fatalf("%d frames, wrote %d", len(got), len(payloads))
		}
		for i := range got {
			if !bytes.Equal(got[i], payloads[i]) {
				t.Fatalf("frame %d = % x, wrote % x", i, got[i], payloads[i])
			}
		}
		if err := r.End(); err != nil || r.Buffered() != 0 {
			t.Fatalf("End() = %v with %d buffered", err, r.Buffered())
		}
	})
}

// TestPropertyOneIncompleteFrame: ranvier-wire §1.3 SHOULD — after every
// complete frame has been taken, the reader holds at most one incomplete
// frame: fewer than four bytes, or fewer than four plus the length the
// pending prefix claims. Streams are valid frames with a truncated tail, or
// arbitrary bytes biased toward small prefixes.
func TestPropertyOneIncompleteFrame(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var stream []byte
		if rapid.Bool().Draw(t, "garbage") {
			stream = rapid.SliceOfN(rapid.SampledFrom([]byte{0, 0, 0, 1, 2, 3, 0x10, 0xff}), 0, 600).Draw(t, "stream")
		} else {
			for _, p := range rapid.SliceOfN(payloadGen, 0, 6).Draw(t, "payloads") {
				stream, _ = wire.AppendFrame(stream, p)
			}
			if len(stream) > 0 {
				stream = stream[:rapid.IntRange(0, len(stream)).Draw(t, "cut")]
			}
		}
		var r wire.Reader
		consumed := 0
		var sticky error
		drawChunked(t, &r, stream, func(fed int, frames [][]byte, err error) {
			for _, f := range frames {
				if sticky != nil {
					t.Fatalf("frame after a framing error")
				}
				if want := stream[consumed+wire.PrefixLen : consumed+wire.PrefixLen+len(f)]; !bytes.Equal(f, want) {
					t.Fatalf("frame at %d = % x, stream has % x", consumed, f, want)
				}
				if claim := binary.BigEndian.Uint32(stream[consumed:]); int(claim) != len(f) {
					t.Fatalf("frame at %d is %d bytes, prefix claims %d", consumed, len(f), claim)
				}
				consumed += wire.PrefixLen + len(f)
			}
			if err == nil && sticky == nil && r.Buffered() != fed-consumed {
				t.Fatalf("Buffered() = %d, fed %d and consumed %d", r.Buffered(), fed, consumed)
			}
			if (err != nil || sticky != nil) && r.Buffered() != 0 {
				t.Fatalf("Buffered() = %d after a framing error: the lost stream is still held", r.Buffered())
			}
			if err != nil {
				var tl *wire.TooLargeError
				if !errors.As(err, &tl) {
					t.Fatalf("unexpected error %v", err)
				}
				if fed-consumed < wire.PrefixLen || tl.Claimed != uint64(binary.BigEndian.Uint32(stream[consumed:])) || tl.Claimed <= wire.MaxPayload {
					t.Fatalf("TooLarge %d at %d does not match the stream", tl.Claimed, consumed)
				}
				sticky = err
				return
			}
			if sticky != nil {
				t.Fatalf("TooLarge forgotten: Next returned no error after %v", sticky)
			}
			held := r.Buffered()
			if held >= wire.PrefixLen {
				if claim := int(binary.BigEndian.Uint32(stream[consumed:])); held >= wire.PrefixLen+claim {
					t.Fatalf("holding %d bytes after draining, pending frame is %d", held, wire.PrefixLen+claim)
				}
			}
		})
	})
}

// TestPropertyAppendFrameRoundTrip: ranvier-wire §1.2, §1.4 — AppendFrame
// keeps dst, adds exactly four bytes and the payload, and a Reader gives
// the payload back.
func TestPropertyAppendFrameRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		dst := rapid.SliceOfN(rapid.Byte(), 0, 16).Draw(t, "dst")
		payload := payloadGen.Draw(t, "payload")
		orig := bytes.Clone(dst)
		out, err := wire.AppendFrame(dst, payload)
		if err != nil {
			t.Fatal(err)
		}
		if len(out) != len(dst)+wire.PrefixLen+len(payload) || !bytes.Equal(out[:len(dst)], orig) {
			t.Fatalf("AppendFrame(% x, %d bytes) = % x", orig, len(payload), out)
		}
		if got := binary.BigEndian.Uint32(out[len(dst):]); int(got) != len(payload) {
			t.Fatalf("prefix %d for %d bytes", got, len(payload))
		}
		var r wire.Reader
		r.Write(out[len(dst):])
		p, ok, err := r.Next()
		if !ok || err != nil || !bytes.Equal(p, payload) {
			t.Fatalf("read back % x, %v, %v", p, ok, err)
		}
		if err := r.End(); err != nil {
			t.Fatal(err)
		}
	})
}

// TestPropertyTooLargeNeverResyncs: ranvier-wire §6.2 — a prefix above the
// ceiling ends the stream for the reader, whatever follows it.
func TestPropertyTooLargeNeverResyncs(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		claim := rapid.Uint32Range(wire.MaxPayload+1, 1<<32-1).Draw(t, "claim")
		stream := binary.BigEndian.AppendUint32(nil, claim)
		for _, p := range rapid.SliceOfN(payloadGen, 0, 5).Draw(t, "after") {
			stream, _ = wire.AppendFrame(stream, p)
		}
		var r wire.Reader
		drawChunked(t, &r, stream, func(fed int, frames [][]byte, err error) {
			var tl *wire.TooLargeError
			if len(frames) != 0 {
				t.Fatalf("%d frames after a TooLarge prefix", len(frames))
			}
			if fed >= wire.PrefixLen && (!errors.As(err, &tl) || tl.Claimed != uint64(claim)) {
				t.Fatalf("fed %d: err %v, want TooLarge claiming %d", fed, err, claim)
			}
		})
	})
}

// TestPropertySubscriberChunking: the subscriber's verdicts (§6.3, §6.4)
// depend on the frames, not on how their bytes arrive.
func TestPropertySubscriberChunking(t *testing.T) {
	kinds := [][]byte{
		nil,
		h("3a 00"),
		h("12 10 09 01"),
		h("0a 03 0a 01 73"),
		mustEncode(&messagepb.Frame{Payload: &messagepb.Frame_Sample{Sample: wantSample}}),
	}
	rapid.Check(t, func(t *rapid.T) {
		var stream []byte
		for _, p := range rapid.SliceOfN(rapid.OneOf(rapid.SampledFrom(kinds), payloadGen), 0, 10).Draw(t, "payloads") {
			stream, _ = wire.AppendFrame(stream, p)
		}
		if rapid.Bool().Draw(t, "truncate") && len(stream) > 0 {
			stream = stream[:rapid.IntRange(0, len(stream)-1).Draw(t, "cut")]
		}
		var whole wire.Subscriber
		want, wantErr := receive(&whole, stream, 0)
		wantEnd := whole.End()

		var s wire.Subscriber
		var got []wire.Event
		for fed := 0; fed < len(stream); {
			n := rapid.IntRange(1, len(stream)-fed).Draw(t, "chunk")
			if err := s.Receive(stream[fed:fed+n], func(ev wire.Event) { got = append(got, ev) }); err != nil {
				t.Fatalf("chunked Receive: %v", err) // valid prefixes only
			}
			fed += n
		}
		if wantErr != nil {
			t.Fatalf("whole Receive: %v", wantErr)
		}
		if end := s.End(); (end == nil) != (wantEnd == nil) {
			t.Fatalf("End() = %v chunked, %v whole", end, wantEnd)
		}
		if len(got) != len(want) || s.Unreadable() != whole.Unreadable() {
			t.Fatalf("%d events (%d unreadable) chunked, %d (%d) whole", len(got), s.Unreadable(), len(want), whole.Unreadable())
		}
		for i := range got {
			if got[i].Index != want[i].Index || got[i].Action != want[i].Action || !proto.Equal(got[i].Frame, want[i].Frame) {
				t.Fatalf("event %d: %+v chunked, %+v whole", i, got[i], want[i])
			}
		}
	})
}

func mustEncode(m proto.Message) []byte {
	b, err := wire.Encode(m)
	if err != nil {
		panic(err)
	}
	return b
}
