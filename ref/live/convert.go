package live

import (
	"errors"
	"fmt"
	"net"
	"os"
	"time"

	messagepb "github.com/conform-suite/conform/proto/ranvier/message/v1"
	"github.com/conform-suite/conform/ref/streams"
	"github.com/conform-suite/conform/ref/wire"
)

// ToStreamInfo converts a decoded announcement to the plain value
// ref/streams reads. A nil info converts to the zero StreamInfo.
func ToStreamInfo(info *messagepb.StreamInfo) streams.StreamInfo {
	if info == nil {
		return streams.StreamInfo{}
	}
	out := streams.StreamInfo{
		Name:              info.GetName(),
		Node:              info.GetNode(),
		Origin:            int32(info.GetOrigin()),
		SourceClockDomain: info.GetSourceClockDomain(),
		HostID:            info.GetHostId(),
		BootID:            info.GetBootId(),
		StreamRef:         info.GetStreamRef(),
	}
	if s := info.GetSchema(); s != nil {
		out.Schema = &streams.SchemaInfo{SchemaID: s.GetSchemaId(), Descriptor: s.GetDescriptor_()}
	}
	if o := info.GetOperator(); o != nil {
		out.Operator = &streams.Identity{Name: o.GetName(), AssertedBy: int32(o.GetAssertedBy())}
	}
	if a := info.GetAuthorisation(); a != nil {
		out.Authorisation = &streams.Authorisation{
			Authority:        a.GetAuthority(),
			Reference:        a.GetReference(),
			ValidFromUnixNs:  a.GetValidFromUnixNs(),
			ValidUntilUnixNs: a.GetValidUntilUnixNs(),
		}
	}
	if p := info.GetProduction(); p != nil {
		out.Production = &streams.Production{}
		for _, s := range p.GetSettings() {
			out.Production.Settings = append(out.Production.Settings, streams.Setting{Key: s.GetKey(), Value: s.GetValue()})
		}
	}
	return out
}

// ToSample converts a decoded sample to the plain value ref/streams reads.
func ToSample(s *messagepb.Sample) streams.Sample {
	return streams.Sample{
		StreamRef:   s.GetStreamRef(),
		Sequence:    s.GetSequence(),
		MonotonicNs: s.GetMonotonicTimestampNs(),
		SourceNs:    s.GetSourceTimestampNs(),
		Values:      s.GetValues(),
	}
}

// FromSample converts a sample to the message that carries it.
func FromSample(s streams.Sample) *messagepb.Sample {
	return &messagepb.Sample{
		MonotonicTimestampNs: s.MonotonicNs,
		Sequence:             s.Sequence,
		Values:               s.Values,
		SourceTimestampNs:    s.SourceNs,
		StreamRef:            s.StreamRef,
	}
}

// sampleFrame returns the framed bytes of Frame{sample}.
func sampleFrame(s streams.Sample) ([]byte, error) {
	return frameOf(&messagepb.Frame{Payload: &messagepb.Frame_Sample{Sample: FromSample(s)}})
}

// announceFrame returns the framed bytes of Frame{announce}.
func announceFrame(info *messagepb.StreamInfo) ([]byte, error) {
	return frameOf(&messagepb.Frame{Payload: &messagepb.Frame_Announce{Announce: info}})
}

func frameOf(f *messagepb.Frame) ([]byte, error) {
	payload, err := wire.Encode(f)
	if err != nil {
		return nil, fmt.Errorf("encoding frame: %w", err)
	}
	return wire.AppendFrame(nil, payload)
}

// writeSlice bounds one blocking write, so that patience is judged, and a
// cancellation noticed, within this long.
const writeSlice = 100 * time.Millisecond

// ErrNoProgress reports a peer that accepted no byte for the whole patience:
// the one condition on which a slow reader is given up (ranvier-wire §6.5).
var ErrNoProgress = errors.New("peer accepted no bytes for the whole patience")

// WritePatient writes all of b to c, resuming after every partial write from
// the first byte not yet written (ranvier-wire §1.4). A full socket buffer is
// a slow peer, not a broken one (§6.5): the write waits, its patience reset by
// every byte of progress, and gives up only when the peer has accepted
// nothing for the whole of patience. done, when closed, abandons the write.
func WritePatient(c net.Conn, b []byte, patience time.Duration, done <-chan struct{}) error {
	defer c.SetWriteDeadline(time.Time{})
	last := time.Now()
	sent := 0
	for sent < len(b) {
		select {
		case <-done:
			return fmt.Errorf("write abandoned after %d of %d bytes: %w", sent, len(b), net.ErrClosed)
		default:
		}
		slice := min(writeSlice, patience-time.Since(last))
		if slice <= 0 {
			return fmt.Errorf("write stalled after %d of %d bytes: %w", sent, len(b), ErrNoProgress)
		}
		if err := c.SetWriteDeadline(time.Now().Add(slice)); err != nil {
			return fmt.Errorf("setting write deadline: %w", err)
		}
		n, err := c.Write(b[sent:])
		sent += n
		if n > 0 {
			last = time.Now()
		}
		if err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				continue
			}
			return fmt.Errorf("write failed after %d of %d bytes: %w", sent, len(b), err)
		}
	}
	return nil
}
