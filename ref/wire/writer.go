package wire

import (
	"context"
	"fmt"
	"io"
	"time"
)

// AppendFrame appends the frame carrying payload — a big-endian length
// prefix, then the payload — to dst and returns the extended slice. A payload
// above MaxPayload is refused with a *PayloadTooLargeError and dst is
// returned unchanged: a writer that refuses writes nothing (ranvier-wire §2).
func AppendFrame(dst, payload []byte) ([]byte, error) {
	return Framing{}.AppendFrame(dst, payload)
}

// WriteFrame frames payload and sends it on w with SendAll, as one logical
// unit: the prefix and the payload leave in one buffer so that no other
// frame's bytes can come between them (§1.4).
func WriteFrame(ctx context.Context, w io.Writer, payload []byte) error {
	frame, err := AppendFrame(make([]byte, 0, PrefixLen+len(payload)), payload)
	if err != nil {
		return err
	}
	return SendAll(ctx, w, frame)
}

// SendAll writes all of b to w, resuming after each partial write from the
// first byte not yet written (ranvier-wire §1.4): re-sending the whole buffer
// would repeat bytes already on the wire and misalign every later frame.
//
// w may accept fewer bytes than offered without an error, as a non-blocking
// socket does. A call that accepts nothing is a full buffer, not a broken
// peer (§6.5): SendAll waits briefly and tries again until ctx is done.
func SendAll(ctx context.Context, w io.Writer, b []byte) error {
	const idle = time.Millisecond
	for sent := 0; sent < len(b); {
		n, err := w.Write(b[sent:])
		if n < 0 || n > len(b)-sent {
			return fmt.Errorf("ranvier send: writer reported %d bytes written of %d offered", n, len(b)-sent)
		}
		sent += n
		if err != nil {
			return fmt.Errorf("ranvier send: %d of %d bytes written: %w", sent, len(b), err)
		}
		if n == 0 {
			select {
			case <-ctx.Done():
				return fmt.Errorf("ranvier send: %d of %d bytes written: %w", sent, len(b), ctx.Err())
			case <-time.After(idle):
			}
		}
	}
	return nil
}
