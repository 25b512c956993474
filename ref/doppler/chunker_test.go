package doppler

import (
	"bytes"
	"errors"
	"slices"
	"testing"
)

// TestChunkerDecisions: a Chunker cuts by its own two decisions and by
// nothing else — the messages still carry the frame, whole, to the
// reference's reassembly — and the zero Chunker is Chunk.
func TestChunkerDecisions(t *testing.T) {
	f := patterned(t, TypeCF32, LittleEndian, 1000, 3)
	const maxPayload = 2000
	want, err := Chunk(f, maxPayload, LittleEndian)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := (Chunker{}).Chunk(f, maxPayload, LittleEndian); err != nil || !slices.EqualFunc(got, want, bytes.Equal) {
		t.Fatalf("the zero Chunker differs from Chunk: %v", err)
	}
	for _, tc := range []struct {
		name   string
		c      Chunker
		chunks int
	}{
		{"every frame chunked", Chunker{NeedsChunking: func(uint64, int) bool { return true }}, len(want)},
		{"smaller chunks", Chunker{ChunkSize: func(int, int) (int, error) { return 800, nil }}, 10},
		{"never chunked", Chunker{NeedsChunking: func(uint64, int) bool { return false }}, 1},
	} {
		msgs, err := tc.c.Chunk(f, maxPayload, LittleEndian)
		if err != nil || len(msgs) != tc.chunks {
			t.Errorf("%s: %d messages, %v; want %d", tc.name, len(msgs), err, tc.chunks)
			continue
		}
		var r Reassembler
		for i, m := range msgs {
			got, ok, err := r.Add(m)
			if last := i == len(msgs)-1; ok != last || err != nil || ok && !bytes.Equal(got.Payload, f.Payload) {
				t.Errorf("%s: message %d: delivered %v, %v", tc.name, i, ok, err)
			}
		}
	}
	refuse := Chunker{ChunkSize: func(int, int) (int, error) { return 0, &Error{Code: ErrTooLarge, Op: "chunk"} }}
	var e *Error
	if _, err := refuse.Chunk(f, maxPayload, LittleEndian); !errors.As(err, &e) || !e.HasSequence || e.Sequence != 3 {
		t.Errorf("a ChunkSize refusal: %v, want it to name frame 3", err)
	}
}

// TestSenderParts: a Sender publishes through its Chunk and judges a send
// with its CheckPush, and numbers what they let through as ever.
func TestSenderParts(t *testing.T) {
	f := patterned(t, TypeCF32, LittleEndian, 1000, 0)
	s := NewSender(LittleEndian, 2000)
	if _, err := s.Send(f); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("Send of a frame above max_payload: %v, want DP_ERR_TOO_LARGE", err)
	}
	var cut int
	s.Chunk = func(f Frame, maxPayload int, o Order) ([][]byte, error) {
		cut++
		return Chunk(f, maxPayload, o)
	}
	s.CheckPush = func(uint64, int) error { return nil }
	if _, err := s.Publish(f); err != nil || cut != 1 {
		t.Errorf("Publish: %v, Chunk called %d times", err, cut)
	}
	m, err := s.Send(f)
	if err != nil || len(m) != HeaderSize+len(f.Payload) {
		t.Fatalf("Send with a CheckPush that refuses nothing: %d bytes, %v", len(m), err)
	}
	if h, _ := DecodeHeader(m, LittleEndian); h.Sequence != 1 || s.NextSequence() != 2 {
		t.Errorf("sent sequence %d, next %d; want 1 and 2", h.Sequence, s.NextSequence())
	}
}
