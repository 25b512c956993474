// Package impl answers conform.v1 ops with an implementation assembled from
// parts. Reference returns the parts of conform's reference (the ref/...
// packages); a mutant (sut/mutant) swaps one part for a part with one named
// bug, so the reference and every mutant share a single op handler and differ
// only where the bug is.
package impl

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"runtime/debug"

	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	messagepb "github.com/conform-suite/conform/proto/ranvier/message/v1"
	"github.com/conform-suite/conform/ref/streams"
	"github.com/conform-suite/conform/ref/wire"
	"google.golang.org/protobuf/proto"
)

// Subscriber is a data-plane subscriber's receive step; *wire.Subscriber is
// the reference.
type Subscriber interface {
	Receive(p []byte, emit func(wire.Event)) error
	End() error
	Closed() bool
	Unreadable() uint64
}

// Impl is an implementation of the conform.v1 ops. Every field must be set;
// Reference returns a complete one.
type Impl struct {
	// Name is the implementation's name in its Hello.
	Name string
	// Profiles are the profiles its Hello declares.
	Profiles []string

	// NewReader returns a fresh frame reader.
	NewReader func() wire.FrameReader
	// AppendFrame frames a payload, as wire.AppendFrame.
	AppendFrame func(dst, payload []byte) ([]byte, error)
	// SendAll writes a buffer through a writer that may accept part of it.
	SendAll func(ctx context.Context, w io.Writer, b []byte) error
	// NewSubscriber returns a subscriber reading a connection with r.
	NewSubscriber func(r wire.FrameReader) Subscriber
	// Decode decodes a payload as a named message type.
	Decode func(name string, payload []byte) (proto.Message, error)
	// Encode encodes a message.
	Encode func(m proto.Message) ([]byte, error)

	// The streams parts (streamsops.go).

	// NewTracker returns a fresh sequence tracker for a subscription to name.
	NewTracker func(name string) Tracker
	// NewQueue subscribes to name with opts: a queue whose tracker sees each
	// sample on arrival. It refuses what streams.NewSubscription refuses.
	NewQueue func(name string, opts streams.Options) (Queue, error)
	// NewFrameCounter returns a fresh per-connection frame counter.
	NewFrameCounter func() FrameCounter
	// NewRuntime returns a fresh publisher-side runtime reading clock.
	NewRuntime func(clock func() uint64) Runtime
	// ReadAnnouncement reads a decoded StreamInfo.
	ReadAnnouncement func(streams.StreamInfo) streams.Announcement
	// ShowAnnouncement renders a read announcement for conform.v1, where an
	// empty string is absent.
	ShowAnnouncement func(streams.Announcement) *conformpb.AnnouncementRead
	// NewAnnouncements returns a fresh record of announcements heard.
	NewAnnouncements func() Announcements
	// NewLatency returns a fresh latency meter.
	NewLatency func() LatencyMeter

	// The other suites' parts, each in the file named for its ops.
	TLV     TLVParts     // tlvops.go
	Doppler DopplerParts // dopplerops.go
	Live    LiveParts    // liveops.go
	Control ControlParts // controlops.go
	Graph   GraphParts   // graphops.go

	// NodeCommand is the Hello's node_command: how conform launches this
	// implementation as a control-plane node. Empty when it is not one.
	NodeCommand []string
}

// Reference returns the reference implementation's parts.
func Reference() *Impl {
	im := &Impl{
		Name:        "conform reference",
		Profiles:    []string{"wire", "streams"},
		NewReader:   func() wire.FrameReader { return new(wire.Reader) },
		AppendFrame: wire.AppendFrame,
		SendAll:     wire.SendAll,
		NewSubscriber: func(r wire.FrameReader) Subscriber {
			return &wire.Subscriber{Reader: r, Decode: func(p []byte) (*messagepb.Frame, error) {
				m, err := wire.Decode("ranvier.message.v1.Frame", p)
				if err != nil {
					return nil, err
				}
				return m.(*messagepb.Frame), nil
			}}
		},
		Decode: wire.Decode,
		Encode: wire.Encode,

		NewTracker: func(string) Tracker { return streams.NewTracker() },
		NewQueue: func(_ string, opts streams.Options) (Queue, error) {
			return streams.NewSubscription(opts)
		},
		NewFrameCounter:  func() FrameCounter { return new(streams.FrameCounter) },
		NewRuntime:       func(clock func() uint64) Runtime { return refRuntime{streams.NewRuntime(clock)} },
		ReadAnnouncement: streams.ReadAnnouncement,
		ShowAnnouncement: AnnouncementRead,
		NewAnnouncements: func() Announcements { return new(streams.Announcements) },
		NewLatency:       func() LatencyMeter { return new(streams.Latency) },
	}
	im.TLV = referenceTLV(im)
	im.Doppler = referenceDoppler(im)
	im.Live = referenceLive(im)
	im.Control = referenceControl(im)
	im.Graph = referenceGraph(im)
	return im
}

// Version is the conform version the Hello, the record and every fuzz
// finding report: the module version of a released build, else "devel" with
// the commit it was built from (and "-dirty" for uncommitted changes), so a
// record can always be traced to the code that made it.
func Version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "-dirty"
			}
		}
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if rev == "" {
		return "devel"
	}
	return "devel+" + rev + dirty
}

// Hello returns the implementation's Hello.
func (im *Impl) Hello() *conformpb.Hello {
	return &conformpb.Hello{
		Implementation: im.Name,
		Version:        Version(),
		Language:       "go",
		Profiles:       im.Profiles,
		Bounds:         &conformpb.Bounds{TlvMaxDepth: uint32(max(im.TLV.MaxDepth, 0))},
		NodeCommand:    im.NodeCommand,
	}
}

// Handle answers one request. A panic in a part — a mutant's, say — is
// answered as an Error rather than taking the process down with it.
func (im *Impl) Handle(ctx context.Context, req *conformpb.Request) (resp *conformpb.Response) {
	defer func() {
		if p := recover(); p != nil {
			resp = errorResponse(fmt.Errorf("panic: %v", p))
		}
	}()
	var err error
	resp = new(conformpb.Response)
	switch op := req.Op.(type) {
	case *conformpb.Request_ReadFrames:
		var r *conformpb.ReadFramesResult
		r, err = im.readFrames(op.ReadFrames)
		resp.Result = &conformpb.Response_ReadFrames{ReadFrames: r}
	case *conformpb.Request_WriteFrames:
		var r *conformpb.WriteFramesResult
		r, err = im.writeFrames(ctx, op.WriteFrames)
		resp.Result = &conformpb.Response_WriteFrames{WriteFrames: r}
	case *conformpb.Request_Receive:
		var r *conformpb.ReceiveResult
		r, err = im.receive(op.Receive)
		resp.Result = &conformpb.Response_Receive{Receive: r}
	case *conformpb.Request_Decode:
		resp.Result = &conformpb.Response_Decode{Decode: im.decode(op.Decode)}
	case *conformpb.Request_Encode:
		resp.Result = &conformpb.Response_Encode{Encode: im.encode(op.Encode)}
	case *conformpb.Request_Track:
		resp.Result = &conformpb.Response_Track{Track: im.track(op.Track)}
	case *conformpb.Request_DriveQueue:
		resp.Result = &conformpb.Response_DriveQueue{DriveQueue: im.driveQueue(op.DriveQueue)}
	case *conformpb.Request_ReceiveConnections:
		var r *conformpb.ReceiveConnectionsResult
		r, err = im.receiveConnections(op.ReceiveConnections)
		resp.Result = &conformpb.Response_ReceiveConnections{ReceiveConnections: r}
	case *conformpb.Request_Publish:
		resp.Result = &conformpb.Response_Publish{Publish: im.publish(op.Publish)}
	case *conformpb.Request_ReadAnnouncements:
		resp.Result = &conformpb.Response_ReadAnnouncements{ReadAnnouncements: im.readAnnouncements(op.ReadAnnouncements)}
	case *conformpb.Request_MatchAnnouncements:
		resp.Result = &conformpb.Response_MatchAnnouncements{MatchAnnouncements: im.matchAnnouncements(op.MatchAnnouncements)}
	case *conformpb.Request_Latency:
		resp.Result = &conformpb.Response_Latency{Latency: im.latency(op.Latency)}
	case *conformpb.Request_Tlv:
		var r *conformpb.TlvResult
		r, err = im.tlv(ctx, op.Tlv)
		resp.Result = &conformpb.Response_Tlv{Tlv: r}
	case *conformpb.Request_Doppler:
		var r *conformpb.DopplerResult
		r, err = im.doppler(ctx, op.Doppler)
		resp.Result = &conformpb.Response_Doppler{Doppler: r}
	case *conformpb.Request_Live:
		var r *conformpb.LiveResult
		r, err = im.live(ctx, op.Live)
		resp.Result = &conformpb.Response_Live{Live: r}
	case *conformpb.Request_Control:
		var r *conformpb.ControlResult
		r, err = im.control(ctx, op.Control)
		resp.Result = &conformpb.Response_Control{Control: r}
	case *conformpb.Request_Graph:
		var r *conformpb.GraphResult
		r, err = im.graph(ctx, op.Graph)
		resp.Result = &conformpb.Response_Graph{Graph: r}
	default:
		resp.Result = &conformpb.Response_Unimplemented{Unimplemented: &conformpb.Unimplemented{
			Detail: fmt.Sprintf("op %T is not implemented by %s", req.Op, im.Name)}}
	}
	var unimpl *UnimplementedError
	if errors.As(err, &unimpl) {
		return &conformpb.Response{Result: &conformpb.Response_Unimplemented{Unimplemented: &conformpb.Unimplemented{Detail: unimpl.Detail}}}
	}
	if err != nil {
		return errorResponse(err)
	}
	return resp
}

// UnimplementedError is returned by an op's handler to answer Unimplemented
// rather than Error: the case is then skipped, never failed.
type UnimplementedError struct{ Detail string }

func (e *UnimplementedError) Error() string { return "unimplemented: " + e.Detail }

func errorResponse(err error) *conformpb.Response {
	return &conformpb.Response{Result: &conformpb.Response_Error{Error: &conformpb.Error{Message: err.Error()}}}
}

// MaxInlineData is the largest output a Data carries as bytes; above it a
// Data carries a SHA-256 digest instead (conform.proto, message Data).
const MaxInlineData = 1 << 20

// NewData describes b as conform.v1 Data.
func NewData(b []byte) *conformpb.Data {
	d := &conformpb.Data{Length: uint64(len(b))}
	if len(b) <= MaxInlineData {
		d.Bytes = append([]byte{}, b...)
	} else {
		sum := sha256.Sum256(b)
		d.Sha256 = sum[:]
	}
	return d
}

// MaxBlob bounds what a Blob may expand to. It is one byte over two frame
// ceilings, room for every boundary case, so that a corrupt request cannot
// make a SUT allocate without limit.
const MaxBlob = 2*wire.MaxPayload + 8

// MaxExpansion bounds the bytes all the fills of one request may expand to.
// A fill is a few bytes on the wire, so a 16 MiB request could otherwise
// describe terabytes and keep a SUT busy long after conform gave up on it;
// 1 GiB leaves room for a batch of boundary cases.
const MaxExpansion = 1 << 30

// expander expands the blobs of one request within MaxExpansion.
type expander struct{ used uint64 }

// expand returns the bytes b describes, counting them against the request.
func (x *expander) expand(b *conformpb.Blob) ([]byte, error) {
	if f := b.GetFill(); f != nil {
		if x.used+f.GetLength() > MaxExpansion || x.used+f.GetLength() < x.used {
			return nil, fmt.Errorf("the request's fills expand beyond %d bytes", MaxExpansion)
		}
		x.used += f.GetLength()
	}
	return Expand(b)
}

// Expand returns the bytes a Blob describes.
func Expand(b *conformpb.Blob) ([]byte, error) {
	if b.GetFill() == nil {
		return b.GetData(), nil
	}
	f := b.GetFill()
	if f.Length > MaxBlob {
		return nil, fmt.Errorf("blob fill of %d bytes exceeds the %d-byte limit", f.Length, MaxBlob)
	}
	if len(f.Pattern) == 0 && f.Length > 0 {
		return nil, fmt.Errorf("blob fill of %d bytes has an empty pattern", f.Length)
	}
	out := make([]byte, f.Length)
	for i := 0; i < len(out); i += len(f.Pattern) {
		copy(out[i:], f.Pattern)
	}
	return out, nil
}
