package impl

import (
	"context"
	"errors"
	"fmt"

	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/ref/wire"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/reflect/protoreflect"
)

func (im *Impl) readFrames(op *conformpb.ReadFrames) (*conformpb.ReadFramesResult, error) {
	if err := checkFills(chunks(op.Inputs)); err != nil {
		return nil, err
	}
	res := new(conformpb.ReadFramesResult)
	for i, in := range op.Inputs {
		out, err := im.readOne(in)
		if err != nil {
			return nil, fmt.Errorf("input %d: %w", i, err)
		}
		res.Outputs = append(res.Outputs, out)
	}
	return res, nil
}

func (im *Impl) readOne(in *conformpb.ReadInput) (*conformpb.ReadOutput, error) {
	r := im.NewReader()
	out := new(conformpb.ReadOutput)
	var failed error
	drain := func() *conformpb.ChunkYield {
		y := new(conformpb.ChunkYield)
		for failed == nil {
			payload, ok, err := r.Next()
			if err != nil {
				failed = err
				break
			}
			if !ok {
				break
			}
			y.Frames = append(y.Frames, NewData(payload))
		}
		return y
	}
	for _, c := range in.Chunks {
		b, err := Expand(c)
		if err != nil {
			return nil, err
		}
		if failed == nil {
			r.Write(b)
		}
		out.Yields = append(out.Yields, drain())
	}
	switch {
	case failed != nil:
	case in.EndOfStream:
		if err := r.End(); err != nil {
			failed = err
		}
		out.Yields = append(out.Yields, drain())
	}
	var tooLarge *wire.TooLargeError
	switch {
	case errors.As(failed, &tooLarge):
		out.End = conformpb.ReadEnd_READ_END_TOO_LARGE
		out.Claimed = tooLarge.Claimed
	case errors.Is(failed, wire.ErrTruncated):
		out.End = conformpb.ReadEnd_READ_END_TRUNCATED
	case failed != nil:
		return nil, failed
	case in.EndOfStream:
		out.End = conformpb.ReadEnd_READ_END_CLOSED
	case r.Buffered() > 0:
		out.End = conformpb.ReadEnd_READ_END_WAITING
	default:
		out.End = conformpb.ReadEnd_READ_END_IDLE
	}
	out.Buffered = uint64(r.Buffered())
	return out, nil
}

func (im *Impl) writeFrames(ctx context.Context, op *conformpb.WriteFrames) (*conformpb.WriteFramesResult, error) {
	payloads := func(yield func(*conformpb.Blob) bool) {
		for _, in := range op.Inputs {
			if !yield(in.GetPayload()) {
				return
			}
		}
	}
	if err := checkFills(payloads); err != nil {
		return nil, err
	}
	res := new(conformpb.WriteFramesResult)
	for i, in := range op.Inputs {
		payload, err := Expand(in.Payload)
		if err != nil {
			return nil, fmt.Errorf("input %d: %w", i, err)
		}
		var written []byte
		if len(in.PartialWrites) == 0 {
			written, err = im.AppendFrame(nil, payload)
		} else {
			sink, serr := newShortSink(in.PartialWrites)
			if serr != nil {
				return nil, fmt.Errorf("input %d: %w", i, serr)
			}
			var frame []byte
			frame, err = im.AppendFrame(nil, payload)
			if err == nil {
				err = im.SendAll(ctx, sink, frame)
			}
			written = sink.got
		}
		out := &conformpb.WriteOutput{Written: NewData(written)}
		var tooLarge *wire.PayloadTooLargeError
		switch {
		case errors.As(err, &tooLarge):
			out.Refused = true
			out.RefusedSize = tooLarge.Size
		case err != nil:
			return nil, fmt.Errorf("input %d: %w", i, err)
		}
		res.Outputs = append(res.Outputs, out)
	}
	return res, nil
}

// shortSink is a socket that accepts at most limits[i % n] bytes on its i-th
// write, as a non-blocking socket with a small buffer does.
type shortSink struct {
	limits []uint32
	calls  int
	got    []byte
}

func newShortSink(limits []uint32) (*shortSink, error) {
	for _, l := range limits {
		if l > 0 {
			return &shortSink{limits: limits}, nil
		}
	}
	return nil, errors.New("partial_writes accepts no bytes at all")
}

func (s *shortSink) Write(p []byte) (int, error) {
	n := int(s.limits[s.calls%len(s.limits)])
	s.calls++
	n = min(n, len(p))
	s.got = append(s.got, p[:n]...)
	return n, nil
}

func (im *Impl) receive(op *conformpb.Receive) (*conformpb.ReceiveResult, error) {
	if err := checkFills(chunks(op.Inputs)); err != nil {
		return nil, err
	}
	res := new(conformpb.ReceiveResult)
	for i, in := range op.Inputs {
		sub := im.NewSubscriber(im.NewReader())
		out := new(conformpb.ReceiveOutput)
		var encErr error
		emit := func(ev wire.Event) {
			e := &conformpb.ReceiveEvent{Frame: ev.Index}
			switch ev.Action {
			case wire.Delivered:
				e.Action = conformpb.ReceiveAction_RECEIVE_ACTION_DELIVERED
				b, err := protojson.Marshal(ev.Frame)
				if err != nil && encErr == nil {
					encErr = err
				}
				e.FrameJson = string(b)
			case wire.SkippedUndecodable:
				e.Action = conformpb.ReceiveAction_RECEIVE_ACTION_SKIPPED_UNDECODABLE
			case wire.SkippedNoVariant:
				e.Action = conformpb.ReceiveAction_RECEIVE_ACTION_SKIPPED_NO_VARIANT
			}
			out.Events = append(out.Events, e)
		}
		for _, c := range in.Chunks {
			b, err := Expand(c)
			if err != nil {
				return nil, fmt.Errorf("input %d: %w", i, err)
			}
			// A framing error closes the connection; the error itself is
			// what the subscriber would log, and Closed reports it.
			_ = sub.Receive(b, emit)
		}
		if in.EndOfStream {
			// A truncated tail at end of stream is dropped, not an error.
			_ = sub.End()
		}
		if encErr != nil {
			return nil, fmt.Errorf("input %d: %w", i, encErr)
		}
		out.Closed = sub.Closed()
		out.Unreadable = sub.Unreadable()
		res.Outputs = append(res.Outputs, out)
	}
	return res, nil
}

func (im *Impl) decode(op *conformpb.Decode) *conformpb.DecodeResult {
	res := new(conformpb.DecodeResult)
	for _, in := range op.Inputs {
		out := new(conformpb.DecodeOutput)
		m, err := im.Decode(in.MessageType, in.Payload)
		var b []byte
		if err == nil {
			b, err = protojson.Marshal(m)
		}
		if err == nil && in.Reencode {
			out.Reencoded, err = im.Encode(m)
		}
		if err != nil {
			out.Failed = true
			out.Error = err.Error()
		} else {
			out.Json = string(b)
		}
		res.Outputs = append(res.Outputs, out)
	}
	return res
}

func (im *Impl) encode(op *conformpb.Encode) *conformpb.EncodeResult {
	res := new(conformpb.EncodeResult)
	for _, in := range op.Inputs {
		out := new(conformpb.EncodeOutput)
		var mt protoreflect.MessageType
		mt, err := wire.MessageType(in.MessageType)
		if err == nil {
			m := mt.New().Interface()
			if err = protojson.Unmarshal([]byte(in.Json), m); err == nil {
				out.Payload, err = im.Encode(m)
			}
		}
		if err != nil {
			out.Failed = true
			out.Error = err.Error()
		}
		res.Outputs = append(res.Outputs, out)
	}
	return res
}
