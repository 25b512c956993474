package doppler

import (
	"errors"
	"testing"
)

// TestSequencePerLogicalFrame: a socket's sequence starts at 0 and a chunked
// frame consumes one number, not one per chunk (doppler §7).
func TestSequencePerLogicalFrame(t *testing.T) {
	s := NewSender(LittleEndian, 1000)
	small := patterned(t, TypeCI16, LittleEndian, 10, 99)
	big := patterned(t, TypeCI16, LittleEndian, 1000, 99) // 4000 bytes: 5 chunks
	var seqs []uint64
	for _, f := range []Frame{small, big, small, big} {
		msgs, err := s.Publish(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range msgs {
			h, _ := DecodeHeader(m, LittleEndian)
			if v := Check(m, LittleEndian); v != Accepted {
				t.Fatal(v)
			}
			seqs = append(seqs, h.Sequence)
		}
	}
	want := []uint64{0, 1, 1, 1, 1, 1, 2, 3, 3, 3, 3, 3}
	if len(seqs) != len(want) {
		t.Fatalf("sequences %v, want %v", seqs, want)
	}
	for i := range want {
		if seqs[i] != want[i] {
			t.Fatalf("sequences %v, want %v", seqs, want)
		}
	}
	if s.NextSequence() != 4 {
		t.Errorf("next sequence %d, want 4", s.NextSequence())
	}
}

// TestPushRefusesOversize: PUSH returns DP_ERR_TOO_LARGE for a frame that
// does not fit one message instead of chunking it (doppler §4), and the
// refused frame consumes no sequence number.
func TestPushRefusesOversize(t *testing.T) {
	if err := CheckPush(1000-64, 1000); err != nil {
		t.Errorf("a frame of exactly max_payload: %v", err)
	}
	err := CheckPush(1000-63, 1000)
	if !errors.Is(err, ErrTooLarge) {
		t.Errorf("a frame one byte over: %v, want DP_ERR_TOO_LARGE", err)
	}
	s := NewSender(BigEndian, 1000)
	if _, err := s.Send(patterned(t, TypeCF64, BigEndian, 100, 0)); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("Send of 1664 bytes at max_payload 1000: %v", err)
	}
	msg, err := s.Send(patterned(t, TypeCF64, BigEndian, 2, 0))
	if err != nil {
		t.Fatal(err)
	}
	h, _ := DecodeHeader(msg, BigEndian)
	if v := Check(msg, BigEndian); v != Accepted || h.Sequence != 0 || h.Chunked() {
		t.Errorf("first frame sent after a refusal: %v, sequence %d, chunked %v", v, h.Sequence, h.Chunked())
	}
}

func TestSenderDefaultsMaxPayload(t *testing.T) {
	if got := NewSender(LittleEndian, 0).MaxPayload(); got != 1<<20 {
		t.Errorf("max_payload %d when the server reports none, want 1 MiB (doppler §8)", got)
	}
}
