package impl

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"

	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/ref/doppler"
	"github.com/conform-suite/conform/ref/doppler/dpnats"
)

// Reassembler is one subscription's reassembly; *doppler.Reassembler is the
// reference.
type Reassembler interface {
	Add(msg []byte) (f doppler.Frame, ok bool, err error)
	Pending() (seq uint64, ok bool)
}

// DopplerSender is one socket's sender; *doppler.Sender is the reference.
type DopplerSender interface {
	Publish(f doppler.Frame) ([][]byte, error)
	Send(f doppler.Frame) ([]byte, error)
	NextSequence() uint64
}

// DopplerParts are the doppler suite's swappable parts of an Impl.
type DopplerParts struct {
	// Check runs the receiver's header checks on a message of msgLen bytes
	// whose first bytes are prefix, as doppler.CheckLength.
	Check func(prefix []byte, msgLen uint64, o doppler.Order) doppler.Verdict
	// CodeOf is the return code of a verdict, as Verdict.Code.
	CodeOf func(doppler.Verdict) doppler.Code
	// DecodeHeader and DecodeChunkBlock read the fields of an accepted
	// message.
	DecodeHeader     func(b []byte, o doppler.Order) (doppler.Header, error)
	DecodeChunkBlock func(b []byte, o doppler.Order) (doppler.ChunkBlock, error)
	// NewReassembler returns a fresh receiver's reassembly, judging each
	// message with check (the Check part, as the codec and the live
	// sockets both pass it).
	NewReassembler func(o doppler.Order, check func(msg []byte, o doppler.Order) doppler.Verdict) Reassembler
	// Chunk cuts a frame into PUB messages, as doppler.Chunk.
	Chunk func(f doppler.Frame, maxPayload int, o doppler.Order) ([][]byte, error)
	// CheckPush decides whether PUSH may send a frame, as doppler.CheckPush.
	CheckPush func(payloadBytes uint64, maxPayload int) error
	// NewFrame builds the frame a conforming sender sends, as
	// doppler.NewFrame.
	NewFrame func(t doppler.Type, o doppler.Order, payload []byte) (doppler.Frame, error)
	// AppendHeader writes a header, as doppler.AppendHeader.
	AppendHeader func(dst []byte, o doppler.Order, h doppler.Header) []byte
	// NewSender returns a fresh socket's sender. The reference's cuts with
	// the Chunk part and refuses with the CheckPush part, so that a bug in
	// either shows in what a socket sends.
	NewSender func(o doppler.Order, maxPayload int) DopplerSender

	// The live parts (dopplerlive.go), used only by the doppler-nats ops.

	// Names derives a live socket's subjects and JetStream objects from its
	// endpoint (doppler §5), as doppler.Endpoint's methods.
	Names func(ep doppler.Endpoint) dpnats.Names
	// RawType is the type the raw-bytes face of REQ/REP sends as (doppler
	// §2): doppler.TypeRaw.
	RawType doppler.Type
	// Ack acknowledges a frame a PULL socket received, as Delivery.Ack.
	Ack func(ctx context.Context, d *dpnats.Delivery) error
	// SendError is what a live send reports for the error a socket
	// returned; the reference reports it as it is.
	SendError func(err error) error
	// ParseEndpoint reads a join's endpoint (doppler §5, §9), as
	// doppler.ParseEndpoint.
	ParseEndpoint func(s string) (doppler.Endpoint, error)
	// SocketOrder is the byte order a socket joined in order o writes and
	// reads (doppler §3): o itself.
	SocketOrder func(o doppler.Order) doppler.Order
	// SubscribeTo is the type a SUB joined for type t subscribes to
	// (doppler §5): t itself, dpnats.AnyType for every type.
	SubscribeTo func(t doppler.Type) doppler.Type
	// Wait performs one of the live ops that wait — "flush" (the round trip
	// of doppler §6b), "drain" (the ordered exit, answered once closed) and
	// "push" (a PUSH send, answered once the server acknowledged it) — by
	// calling wait; the reference returns what wait returns.
	Wait func(ctx context.Context, what string, wait func(context.Context) error) error
	// Stamp applies a frame's timestamp override (doppler §7) to the socket
	// about to send it: set is the socket's override, ns the frame's
	// DopplerLiveFrame.timestamp_ns (nil when absent). The reference sets
	// the override when ns is present and does nothing otherwise.
	Stamp func(socket any, set func(ns uint64), ns *uint64)
	// Transport are the live sockets' transport decisions (dpnats.Parts's
	// Connect, MaxPayload, Now, AwaitSubscription, EnsureStream and
	// EmitsTelemetry); the zero value is dpnats's own. The clock op reads
	// Transport.Now, the clock the senders stamp with.
	Transport dpnats.Parts

	// live holds the open live sockets; shared by the copies of the parts.
	live *dopplerLive
}

// referenceDoppler returns the reference's doppler parts and declares the
// profile.
func referenceDoppler(im *Impl) DopplerParts {
	im.Profiles = append(im.Profiles, "doppler", "doppler-nats")
	return DopplerParts{
		Check:            doppler.CheckLength,
		CodeOf:           doppler.Verdict.Code,
		DecodeHeader:     doppler.DecodeHeader,
		DecodeChunkBlock: doppler.DecodeChunkBlock,
		NewReassembler: func(o doppler.Order, check func([]byte, doppler.Order) doppler.Verdict) Reassembler {
			return &doppler.Reassembler{Order: o, Check: check}
		},
		Chunk:        doppler.Chunk,
		CheckPush:    doppler.CheckPush,
		NewFrame:     doppler.NewFrame,
		AppendHeader: doppler.AppendHeader,
		NewSender: func(o doppler.Order, maxPayload int) DopplerSender {
			s := doppler.NewSender(o, maxPayload)
			s.Chunk, s.CheckPush = im.Doppler.Chunk, im.Doppler.CheckPush
			return s
		},
		Names:         func(ep doppler.Endpoint) dpnats.Names { return ep },
		RawType:       doppler.TypeRaw,
		Ack:           func(ctx context.Context, dl *dpnats.Delivery) error { return dl.Ack(ctx) },
		SendError:     func(err error) error { return err },
		ParseEndpoint: doppler.ParseEndpoint,
		SocketOrder:   func(o doppler.Order) doppler.Order { return o },
		SubscribeTo:   func(t doppler.Type) doppler.Type { return t },
		Wait:          func(ctx context.Context, _ string, wait func(context.Context) error) error { return wait(ctx) },
		Stamp: func(_ any, set func(uint64), ns *uint64) {
			if ns != nil {
				set(*ns)
			}
		},
		live: newDopplerLive(),
	}
}

// checkMessage is the Check part for a whole message, as the reassembly and
// the live sockets call it.
func (d *DopplerParts) checkMessage(msg []byte, o doppler.Order) doppler.Verdict {
	return d.Check(msg, uint64(len(msg)), o)
}

// doppler answers one doppler op.
func (im *Impl) doppler(ctx context.Context, op *conformpb.DopplerOp) (*conformpb.DopplerResult, error) {
	d := &im.Doppler
	res := new(conformpb.DopplerResult)
	whole := op
	switch op := op.Op.(type) {
	case *conformpb.DopplerOp_Check:
		res.Result = &conformpb.DopplerResult_Check{Check: d.check(op.Check)}
	case *conformpb.DopplerOp_Reassemble:
		res.Result = &conformpb.DopplerResult_Reassemble{Reassemble: d.reassemble(op.Reassemble)}
	case *conformpb.DopplerOp_Chunk:
		r, err := d.chunk(op.Chunk)
		if err != nil {
			return nil, err
		}
		res.Result = &conformpb.DopplerResult_Chunk{Chunk: r}
	case *conformpb.DopplerOp_PushCheck:
		res.Result = &conformpb.DopplerResult_PushCheck{PushCheck: d.pushCheck(op.PushCheck)}
	case *conformpb.DopplerOp_EncodeHeader:
		r, err := d.encodeHeader(op.EncodeHeader)
		if err != nil {
			return nil, err
		}
		res.Result = &conformpb.DopplerResult_EncodeHeader{EncodeHeader: r}
	case *conformpb.DopplerOp_Sequence:
		r, err := d.sequence(op.Sequence)
		if err != nil {
			return nil, err
		}
		res.Result = &conformpb.DopplerResult_Sequence{Sequence: r}
	default:
		r, err := d.liveOp(ctx, whole)
		if err != nil {
			return nil, err
		}
		if r == nil {
			return nil, &UnimplementedError{Detail: fmt.Sprintf("doppler op %T is not implemented by %s", op, im.Name)}
		}
		res = r
	}
	return res, nil
}

// DopplerOrder converts a conform.v1 byte order.
func DopplerOrder(o conformpb.DopplerByteOrder) doppler.Order {
	if o == conformpb.DopplerByteOrder_DOPPLER_BYTE_ORDER_BIG_ENDIAN {
		return doppler.BigEndian
	}
	return doppler.LittleEndian
}

// DopplerType converts a conform.v1 frame type; the enumerations share
// their numbers.
func DopplerType(t conformpb.DopplerFrameType) (doppler.Type, error) {
	dt := doppler.Type(t)
	if !dt.Valid() {
		return 0, fmt.Errorf("frame type %v is not one of the seven", t)
	}
	return dt, nil
}

// DopplerVerdict converts a reference verdict to conform.v1; the slugs
// match the enumeration's names.
func DopplerVerdict(v doppler.Verdict) conformpb.DopplerVerdict {
	switch v {
	case doppler.Accepted:
		return conformpb.DopplerVerdict_DOPPLER_VERDICT_ACCEPTED
	case doppler.ShortMessage:
		return conformpb.DopplerVerdict_DOPPLER_VERDICT_SHORT_MESSAGE
	case doppler.NotDoppler:
		return conformpb.DopplerVerdict_DOPPLER_VERDICT_NOT_DOPPLER
	case doppler.CrossEndian:
		return conformpb.DopplerVerdict_DOPPLER_VERDICT_CROSS_ENDIAN
	case doppler.OtherMajor:
		return conformpb.DopplerVerdict_DOPPLER_VERDICT_OTHER_MAJOR_VERSION
	case doppler.UnknownFlags:
		return conformpb.DopplerVerdict_DOPPLER_VERDICT_UNKNOWN_FLAGS
	case doppler.ShortChunkBlock:
		return conformpb.DopplerVerdict_DOPPLER_VERDICT_SHORT_CHUNK_BLOCK
	case doppler.PayloadMismatch:
		return conformpb.DopplerVerdict_DOPPLER_VERDICT_PAYLOAD_MISMATCH
	case doppler.UnknownKind:
		return conformpb.DopplerVerdict_DOPPLER_VERDICT_UNKNOWN_KIND
	case doppler.UnknownFormat:
		return conformpb.DopplerVerdict_DOPPLER_VERDICT_UNKNOWN_FORMAT
	case doppler.CountMismatch:
		return conformpb.DopplerVerdict_DOPPLER_VERDICT_COUNT_MISMATCH
	}
	return conformpb.DopplerVerdict_DOPPLER_VERDICT_UNSPECIFIED
}

// DopplerHeader converts a decoded header to conform.v1.
func DopplerHeader(h doppler.Header) *conformpb.DopplerHeader {
	return &conformpb.DopplerHeader{
		Magic: h.Magic, VersionMajor: uint32(h.VersionMajor), VersionMinor: uint32(h.VersionMinor),
		Flags: h.Flags, Kind: uint32(h.Kind), Format: uint32(h.Format), DataRep: append([]byte(nil), h.DataRep[:]...),
		Sequence: h.Sequence, TimestampNs: h.TimestampNs, NumSamples: h.NumSamples,
		PayloadBytes: h.PayloadBytes, SampleRateHz: h.SampleRateHz,
	}
}

// DopplerPayload describes a delivered payload for conform.v1.
func DopplerPayload(b []byte) *conformpb.DopplerPayload {
	p := &conformpb.DopplerPayload{Length: uint64(len(b))}
	if len(b) <= MaxInlineData {
		p.Bytes = append([]byte{}, b...)
	} else {
		sum := sha256.Sum256(b)
		p.Sha256 = sum[:]
	}
	return p
}

// refusal is the one refusal an answer with room for one reports: the
// first of refusals, its detail the whole error, so that the cause a
// doppler.Error wraps (a transport's own error) is not lost from the record.
func (d *DopplerParts) refusal(err error) *conformpb.DopplerRefusal {
	r := d.refusals(err)[0]
	if msg := err.Error(); len(msg) > len(r.Detail) && strings.HasPrefix(msg, r.Detail) {
		r.Detail = msg
	}
	return r
}

// refusals converts an error to the refusals it reports: one for a
// *doppler.Error, one per joined error, and DP_ERR for anything else.
func (d *DopplerParts) refusals(err error) []*conformpb.DopplerRefusal {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []*conformpb.DopplerRefusal
		for _, e := range j.Unwrap() {
			out = append(out, d.refusals(e)...)
		}
		return out
	}
	r := &conformpb.DopplerRefusal{Code: int32(doppler.ErrGeneric), Detail: err.Error()}
	var e *doppler.Error
	if errors.As(err, &e) {
		r.Code = int32(e.Code)
		if e.Verdict != doppler.Accepted {
			r.Verdict = DopplerVerdict(e.Verdict)
			r.Code = int32(d.CodeOf(e.Verdict))
		}
		r.Sequence, r.HasSequence = e.Sequence, e.HasSequence
	} else if c, ok := err.(doppler.Code); ok {
		r.Code = int32(c)
	}
	return []*conformpb.DopplerRefusal{r}
}

func (d *DopplerParts) check(op *conformpb.DopplerCheck) *conformpb.DopplerCheckResult {
	o := DopplerOrder(op.Order)
	res := new(conformpb.DopplerCheckResult)
	for _, in := range op.Inputs {
		msgLen := uint64(len(in.Message))
		if in.TransportLength != nil {
			msgLen = in.GetTransportLength()
		}
		v := d.Check(in.Message, msgLen, o)
		out := &conformpb.DopplerCheckOutput{Verdict: DopplerVerdict(v), Code: int32(d.CodeOf(v))}
		if v == doppler.Accepted {
			if h, err := d.DecodeHeader(in.Message, o); err == nil {
				out.Header = DopplerHeader(h)
				if h.Chunked() && len(in.Message) >= doppler.HeaderSize+doppler.ChunkBlockSize {
					if c, err := d.DecodeChunkBlock(in.Message[doppler.HeaderSize:], o); err == nil {
						out.Chunk = &conformpb.DopplerChunkBlock{ChunkIndex: c.Index, ChunkCount: c.Count,
							TotalSamples: c.TotalSamples, TotalBytes: c.TotalBytes}
					}
				}
			}
		}
		res.Outputs = append(res.Outputs, out)
	}
	return res
}

func (d *DopplerParts) reassemble(op *conformpb.DopplerReassemble) *conformpb.DopplerReassembleResult {
	o := DopplerOrder(op.Order)
	res := new(conformpb.DopplerReassembleResult)
	for _, in := range op.Inputs {
		r := d.NewReassembler(o, d.checkMessage)
		out := new(conformpb.DopplerReassembleOutput)
		for i, msg := range in.Messages {
			f, ok, err := r.Add(msg)
			if ok {
				out.Events = append(out.Events, &conformpb.DopplerReassembleEvent{Message: uint32(i),
					Event: &conformpb.DopplerReassembleEvent_Delivered{Delivered: &conformpb.DopplerFrame{
						Header: DopplerHeader(f.Header), Payload: DopplerPayload(f.Payload)}}})
			}
			for _, ref := range d.refusals(err) {
				out.Events = append(out.Events, &conformpb.DopplerReassembleEvent{Message: uint32(i),
					Event: &conformpb.DopplerReassembleEvent_Refused{Refused: ref}})
			}
		}
		out.PendingSequence, out.Pending = r.Pending()
		res.Outputs = append(res.Outputs, out)
	}
	return res
}

// frame builds the frame a chunk or send input describes.
func (d *DopplerParts) frame(ct conformpb.DopplerFrameType, o doppler.Order, payload []byte) (doppler.Frame, error) {
	t, err := DopplerType(ct)
	if err != nil {
		return doppler.Frame{}, err
	}
	return d.NewFrame(t, o, payload)
}

// maxPayloadInt bounds a max_payload to an int.
func maxPayloadInt(n uint64) int {
	const limit = 1 << 40
	return int(min(n, limit))
}

func (d *DopplerParts) chunk(op *conformpb.DopplerChunk) (*conformpb.DopplerChunkResult, error) {
	o := DopplerOrder(op.Order)
	res := new(conformpb.DopplerChunkResult)
	for _, in := range op.Inputs {
		f, err := d.frame(in.Type, o, in.Payload)
		if err != nil {
			return nil, fmt.Errorf("chunk input: %w", err)
		}
		f.Header.Sequence, f.Header.TimestampNs, f.Header.SampleRateHz = in.Sequence, in.TimestampNs, in.SampleRateHz
		out := new(conformpb.DopplerChunkOutput)
		msgs, err := d.Chunk(f, maxPayloadInt(in.MaxPayload), o)
		if err != nil {
			out.Refused = d.refusal(err)
		}
		out.Messages = msgs
		res.Outputs = append(res.Outputs, out)
	}
	return res, nil
}

func (d *DopplerParts) pushCheck(op *conformpb.DopplerPushCheck) *conformpb.DopplerPushCheckResult {
	res := new(conformpb.DopplerPushCheckResult)
	for _, in := range op.Inputs {
		out := new(conformpb.DopplerPushOutput)
		if err := d.CheckPush(in.PayloadBytes, maxPayloadInt(in.MaxPayload)); err != nil {
			out.Code = d.refusals(err)[0].Code
		}
		res.Outputs = append(res.Outputs, out)
	}
	return res
}

func (d *DopplerParts) encodeHeader(op *conformpb.DopplerEncodeHeader) (*conformpb.DopplerEncodeHeaderResult, error) {
	res := new(conformpb.DopplerEncodeHeaderResult)
	for _, in := range op.Inputs {
		o := DopplerOrder(in.Order)
		f, err := d.frame(in.Type, o, nil)
		if err != nil {
			return nil, fmt.Errorf("encode_header input: %w", err)
		}
		h := f.Header
		h.Sequence, h.TimestampNs, h.SampleRateHz = in.Sequence, in.TimestampNs, in.SampleRateHz
		h.NumSamples = in.NumSamples
		elem := uint64(doppler.Type(in.Type).ElemSize())
		h.PayloadBytes = in.NumSamples * elem
		res.Outputs = append(res.Outputs, &conformpb.DopplerEncodeOutput{Header: d.AppendHeader(nil, o, h)})
	}
	return res, nil
}

func (d *DopplerParts) sequence(op *conformpb.DopplerSequence) (*conformpb.DopplerSequenceResult, error) {
	res := new(conformpb.DopplerSequenceResult)
	for _, in := range op.Inputs {
		o := DopplerOrder(in.Order)
		sockets := map[uint32]DopplerSender{}
		out := new(conformpb.DopplerSequenceOutput)
		for _, st := range in.Steps {
			s := sockets[st.Socket]
			if s == nil {
				s = d.NewSender(o, maxPayloadInt(in.MaxPayload))
				sockets[st.Socket] = s
			}
			f, err := d.frame(st.Type, o, st.Payload)
			if err != nil {
				return nil, fmt.Errorf("sequence step: %w", err)
			}
			sent := new(conformpb.DopplerSent)
			switch st.Role {
			case conformpb.DopplerSendRole_DOPPLER_SEND_ROLE_PUSH:
				var m []byte
				m, err = s.Send(f)
				if m != nil {
					sent.Messages = [][]byte{m}
				}
			default:
				sent.Messages, err = s.Publish(f)
			}
			if err != nil {
				sent.Refused = d.refusal(err)
			}
			out.Sent = append(out.Sent, sent)
		}
		res.Outputs = append(res.Outputs, out)
	}
	return res, nil
}
