package wire_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/conform-suite/conform/ref/wire"
)

// TestAppendFrameTable: §1.2 — a big-endian four-byte length counting the
// payload alone, then the payload, appended after whatever dst holds.
func TestAppendFrameTable(t *testing.T) {
	tests := []struct {
		name    string
		dst     []byte
		payload []byte
		want    []byte
	}{
		{"§1.2/empty message", nil, nil, h("00 00 00 00")},
		{"§1.2/empty non-nil payload", nil, []byte{}, h("00 00 00 00")},
		{"§4.5/Request gaze", nil, h("0a 04 67 61 7a 65"), h("00 00 00 06 0a 04 67 61 7a 65")},
		{"§4.5/Frame sample", nil, samplePayload, sampleFrame},
		{"§5.3/Alive{}", nil, h("1a 00"), h("00 00 00 02 1a 00")},
		{"§1.2/big-endian 256", nil, make([]byte, 256), cat(h("00 00 01 00"), make([]byte, 256))},
		{"§1.4/appends after dst", h("00 00 00 00"), h("1a 00"), h("00 00 00 00 00 00 00 02 1a 00")},
	}
	for _, tt := range tests {
		got, err := wire.AppendFrame(bytes.Clone(tt.dst), tt.payload)
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if !bytes.Equal(got, tt.want) {
			t.Errorf("%s: got % x, want % x", tt.name, got, tt.want)
		}
	}
}

// TestAppendFrameCeiling: §2 — a payload of exactly MaxPayload is framed
// with the prefix 01 00 00 00; one byte more is refused with a
// *PayloadTooLargeError and nothing is written into dst, not even into its
// spare capacity.
func TestAppendFrameCeiling(t *testing.T) {
	payload := make([]byte, wire.MaxPayload+1)
	payload[0], payload[wire.MaxPayload-1], payload[wire.MaxPayload] = 0x11, 0x22, 0x33

	dst := make([]byte, 3, 64)
	for i := range dst[:cap(dst)] {
		dst[:cap(dst)][i] = 0xaa
	}
	got, err := wire.AppendFrame(dst, payload)
	var ptl *wire.PayloadTooLargeError
	if !errors.As(err, &ptl) || ptl.Size != wire.MaxPayload+1 {
		t.Fatalf("MaxPayload+1: err %v, want *PayloadTooLargeError{Size: %d}", err, wire.MaxPayload+1)
	}
	if len(got) != len(dst) || cap(got) != cap(dst) || &got[:1][0] != &dst[:1][0] {
		t.Errorf("refusal returned len %d cap %d, want dst unchanged (len %d cap %d)", len(got), cap(got), len(dst), cap(dst))
	}
	if !bytes.Equal(dst[:cap(dst)], bytes.Repeat([]byte{0xaa}, cap(dst))) {
		t.Errorf("refusal wrote into dst: % x", dst[:cap(dst)])
	}
	if want := "16777217"; !bytes.Contains([]byte(err.Error()), []byte(want)) {
		t.Errorf("error %q does not name the size", err)
	}

	got, err = wire.AppendFrame(dst, payload[:wire.MaxPayload])
	if err != nil {
		t.Fatalf("exactly MaxPayload refused: %v", err)
	}
	if len(got) != 3+wire.PrefixLen+wire.MaxPayload {
		t.Fatalf("len %d", len(got))
	}
	if !bytes.Equal(got[:7], h("aa aa aa 01 00 00 00")) || got[7] != 0x11 || got[len(got)-1] != 0x22 {
		t.Errorf("frame of MaxPayload starts % x ... ends % x", got[:8], got[len(got)-1:])
	}
	// And a Reader accepts what the writer accepted.
	var r wire.Reader
	r.Write(got[3:])
	p, ok, err := r.Next()
	if !ok || err != nil || len(p) != wire.MaxPayload {
		t.Errorf("reading back the MaxPayload frame: %d bytes, %v, %v", len(p), ok, err)
	}
}

// TestWriteFrameRefusesAndWritesNothing: §2, §6.1 — a refused payload
// reaches the socket as nothing at all.
func TestWriteFrameRefusesAndWritesNothing(t *testing.T) {
	w := &scripted{}
	err := wire.WriteFrame(context.Background(), w, make([]byte, wire.MaxPayload+1))
	var ptl *wire.PayloadTooLargeError
	if !errors.As(err, &ptl) || ptl.Size != wire.MaxPayload+1 {
		t.Errorf("err %v, want *PayloadTooLargeError", err)
	}
	if w.calls != 0 || w.buf.Len() != 0 {
		t.Errorf("refused frame made %d writes of %d bytes", w.calls, w.buf.Len())
	}
}

// TestWriteFrameOneUnit: §1.4 — the prefix and the payload leave in one
// buffer, so a writer that takes everything sees one call per frame and no
// other frame's bytes can come between them.
func TestWriteFrameOneUnit(t *testing.T) {
	w := &scripted{}
	for _, p := range [][]byte{samplePayload, nil, h("0a 04 67 61 7a 65")} {
		if err := wire.WriteFrame(context.Background(), w, p); err != nil {
			t.Fatal(err)
		}
	}
	if w.calls != 3 {
		t.Errorf("%d writes for 3 frames", w.calls)
	}
	want := cat(sampleFrame, h("00 00 00 00"), h("00 00 00 06 0a 04 67 61 7a 65"))
	if !bytes.Equal(w.buf.Bytes(), want) {
		t.Errorf("wrote % x, want % x", w.buf.Bytes(), want)
	}
}

// scripted is a writer that accepts accept[i%len(accept)] bytes at its i'th
// call (everything, if accept is empty), and fails with failErr once it has
// accepted failAt bytes (if failAt > 0). onCall, if set, runs before each
// call.
type scripted struct {
	accept  []int
	failAt  int
	failErr error
	onCall  func(call int)
	calls   int
	offered []int
	buf     bytes.Buffer
}

func (w *scripted) Write(p []byte) (int, error) {
	if w.onCall != nil {
		w.onCall(w.calls)
	}
	w.offered = append(w.offered, len(p))
	n := len(p)
	if len(w.accept) > 0 {
		n = min(n, w.accept[w.calls%len(w.accept)])
	}
	w.calls++
	var err error
	if w.failAt > 0 && w.buf.Len()+n >= w.failAt {
		n = w.failAt - w.buf.Len()
		err = w.failErr
	}
	w.buf.Write(p[:n])
	return n, err
}

// TestSendAllResumesAfterPartialWrites: §1.4 — on a socket that accepts a
// partial write, the writer resumes from the first byte not yet written and
// never repeats a byte already on the wire; a call that accepts nothing is a
// full buffer, not a broken peer (§6.5).
func TestSendAllResumesAfterPartialWrites(t *testing.T) {
	stream := cat(sampleFrame, h("00 00 00 00"), sampleFrame, make([]byte, 10))
	for _, accept := range [][]int{
		nil, {1}, {1, 0, 3}, {0, 0, 1}, {2, 5, 0, 0, 1}, {7}, {4}, {len(stream) - 1, 1}, {0, 1000},
	} {
		t.Run(fmt.Sprint(accept), func(t *testing.T) {
			w := &scripted{accept: accept}
			if err := wire.SendAll(context.Background(), w, stream); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(w.buf.Bytes(), stream) {
				t.Fatalf("wire carries % x, want % x", w.buf.Bytes(), stream)
			}
			// Each call is offered exactly what is still unsent.
			left := len(stream)
			for i, off := range w.offered {
				if off != left {
					t.Fatalf("call %d offered %d bytes, %d were unsent", i, off, left)
				}
				if len(accept) > 0 {
					left -= min(left, accept[i%len(accept)])
				} else {
					left = 0
				}
			}
			// And the frames on the wire read back intact.
			_, frames, err := feed(w.buf.Bytes()[:len(stream)-10], 0)
			if err != nil || len(frames) != 3 || !bytes.Equal(frames[2], samplePayload) {
				t.Errorf("read back %d frames, %v", len(frames), err)
			}
		})
	}
}

// TestSendAllEmpty: nothing to send is sent without calling the writer.
func TestSendAllEmpty(t *testing.T) {
	w := &scripted{accept: []int{0}}
	if err := wire.SendAll(context.Background(), w, nil); err != nil || w.calls != 0 {
		t.Errorf("SendAll(nil) = %v after %d calls", err, w.calls)
	}
}

// TestSendAllStopsOnCancel: a writer that accepts nothing is waited on
// until the caller's context is done, and SendAll then reports how far it
// got with the context's error. No clock is involved: the writer cancels
// the context itself.
func TestSendAllStopsOnCancel(t *testing.T) {
	for _, accept := range [][]int{{0}, {3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}} {
		ctx, cancel := context.WithCancel(context.Background())
		w := &scripted{accept: accept}
		w.onCall = func(call int) {
			if call == 4 {
				cancel()
			}
		}
		err := wire.SendAll(ctx, w, sampleFrame)
		cancel()
		if !errors.Is(err, context.Canceled) {
			t.Errorf("accept %v: err %v, want context.Canceled", accept, err)
		}
		if w.calls != 5 {
			t.Errorf("accept %v: %d calls, want the writer tried until cancellation (5)", accept, w.calls)
		}
		if !bytes.Equal(w.buf.Bytes(), sampleFrame[:w.buf.Len()]) {
			t.Errorf("accept %v: wire carries % x, not a prefix of the frame", accept, w.buf.Bytes())
		}
	}
	// Already cancelled, and the writer accepts nothing: one try, then stop.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	w := &scripted{accept: []int{0}}
	if err := wire.SendAll(ctx, w, sampleFrame); !errors.Is(err, context.Canceled) || w.calls != 1 {
		t.Errorf("cancelled context: err %v after %d calls", err, w.calls)
	}
}

// TestSendAllWriterErrors: an error from the writer ends the send, after
// the bytes it did accept; a writer that claims more than it was offered,
// or a negative count, is reported rather than trusted.
func TestSendAllWriterErrors(t *testing.T) {
	boom := errors.New("boom")
	w := &scripted{accept: []int{2}, failAt: 5, failErr: boom}
	err := wire.SendAll(context.Background(), w, sampleFrame)
	if !errors.Is(err, boom) {
		t.Errorf("err %v, want the writer's", err)
	}
	if !bytes.Equal(w.buf.Bytes(), sampleFrame[:5]) {
		t.Errorf("wire carries % x, want the first 5 bytes once", w.buf.Bytes())
	}
	for _, n := range []int{-1, len(sampleFrame) + 1} {
		err := wire.SendAll(context.Background(), liar(n), sampleFrame)
		if err == nil {
			t.Errorf("writer reporting %d of %d bytes: no error", n, len(sampleFrame))
		}
	}
	if err := wire.WriteFrame(context.Background(), liar(-1), samplePayload); err == nil {
		t.Error("WriteFrame: a writer reporting -1 bytes gave no error")
	}
}

type liar int

func (l liar) Write(p []byte) (int, error) { return int(l), nil }
