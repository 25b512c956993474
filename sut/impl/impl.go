// Package impl answers conform.v1 ops with an implementation assembled from
// parts. Reference returns the parts of conform's reference (the ref/...
// packages); a mutant (sut/mutant) swaps one part for a part with one named
// bug, so the reference and every mutant share a single op handler and differ
// only where the bug is.
package impl

import (
	"bytes"
	"context"
	"crypto/sha256"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"runtime/debug"
	"strings"
	"sync"

	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	messagepb "github.com/conform-suite/conform/proto/ranvier/message/v1"
	"github.com/conform-suite/conform/ref/streams"
	"github.com/conform-suite/conform/ref/wire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/anypb"
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

	// Ops answers each op, keyed by the op's message name (the message a
	// Request's op field holds, such as conform.v1.ReadFrames, or the type an
	// extension op packs). The suites' descriptors supply the reference's
	// handlers (suite.Registry.Reference); a mutant may replace one.
	Ops map[protoreflect.FullName]OpHandler
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
// finding report: the module version of a released build (or the
// pseudo-version the go command gives a build in a repository); else the
// commit it was built from, "devel+<commit>" ("-dirty" for uncommitted
// changes); else, for a build that carries neither (go run, go test, or
// GOFLAGS=-buildvcs=false), the content part of the executable's Go build
// ID, "devel+build:<id>", or failing that the digest of the executable,
// "devel+sha256:<digest>". A record can always be traced to the code, or
// at least the binary, that made it.
func Version() string { return version() }

// version is computed once per process.
var version = sync.OnceValue(func() string {
	bi, ok := debug.ReadBuildInfo()
	if ok {
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
		if rev != "" {
			return "devel+" + rev[:min(len(rev), 12)] + dirty
		}
	}
	// The Go build ID's last part is a hash of the binary's content that the
	// linker has already computed; hashing the executable again costs tens
	// of milliseconds, paid by every start of a builtin SUT.
	if id := contentID(); id != "" {
		return "devel+build:" + id[:min(len(id), 12)]
	}
	if sum, err := executableDigest(); err == nil {
		return "devel+sha256:" + sum[:12]
	}
	return "devel"
})

// contentID returns the content part of the running executable's Go build
// ID ("action/…/content"), read from the ELF note the go command writes, or
// "" where the executable is not ELF or carries no build ID.
func contentID() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	f, err := elf.Open(exe)
	if err != nil {
		return ""
	}
	defer f.Close()
	sec := f.Section(".note.go.buildid")
	if sec == nil || sec.Size > 1<<10 {
		return ""
	}
	note, err := sec.Data()
	// An ELF note: name size, descriptor size, type (4 bytes each), the
	// name "Go\x00\x00", then the descriptor, which is the ID.
	if err != nil || len(note) < 16 || string(note[12:16]) != "Go\x00\x00" {
		return ""
	}
	size := f.ByteOrder.Uint32(note[4:8])
	if uint64(size) > uint64(len(note)-16) {
		return ""
	}
	id := string(note[16 : 16+size])
	content := id[strings.LastIndexByte(id, '/')+1:]
	if content == "" || strings.ContainsFunc(content, func(r rune) bool { return r <= ' ' || r > '~' }) {
		return ""
	}
	return content
}

// executableDigest returns the hex SHA-256 of the running executable.
func executableDigest() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", err
	}
	f, err := os.Open(exe)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return fmt.Sprintf("%x", h.Sum(nil)), nil
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

// An OpHandler answers one conform.v1 op with im's parts: op is the message
// the Request's op field holds (or, for an extension op, the message its Any
// packs), and the result is the message the Response carries in the field of
// the same name. An *UnimplementedError answers Unimplemented; any other
// error answers Error.
type OpHandler func(ctx context.Context, im *Impl, op proto.Message) (proto.Message, error)

// An Op is one conform.v1 op and a handler of it.
type Op struct {
	// Message is the op's message name: the message a Request's op field
	// holds (conform.v1.ReadFrames), or the type an extension op packs.
	Message protoreflect.FullName
	// Handle answers the op with an implementation's parts.
	Handle OpHandler
}

// Handler makes an Op of a typed handler function, such as ReadFrames.
func Handler[O, R proto.Message](h func(context.Context, *Impl, O) (R, error)) Op {
	var zero O
	return Op{
		Message: zero.ProtoReflect().Descriptor().FullName(),
		Handle: func(ctx context.Context, im *Impl, op proto.Message) (proto.Message, error) {
			o, ok := op.(O)
			if !ok {
				return nil, fmt.Errorf("conform bug: op %T given to the handler of %T", op, zero)
			}
			r, err := h(ctx, im, o)
			if err != nil {
				return nil, err
			}
			return r, nil
		},
	}
}

// Handle answers one request through im.Ops. A panic in a handler — a
// mutant's, say — is answered as an Error rather than taking the process
// down with it.
func (im *Impl) Handle(ctx context.Context, req *conformpb.Request) (resp *conformpb.Response) {
	defer func() {
		if p := recover(); p != nil {
			resp = errorResponse(fmt.Errorf("panic: %v", p))
		}
	}()
	m := req.ProtoReflect()
	fd := m.WhichOneof(m.Descriptor().Oneofs().ByName("op"))
	if fd == nil {
		return unimplemented("the request carries no op")
	}
	op := m.Get(fd).Message().Interface()
	ext, isExt := op.(*anypb.Any)
	if isExt {
		inner, err := ext.UnmarshalNew()
		if err != nil {
			return unimplemented(fmt.Sprintf("extension op %s is not known to %s", ext.GetTypeUrl(), im.Name))
		}
		op = inner
	}
	name := op.ProtoReflect().Descriptor().FullName()
	h := im.Ops[name]
	if h == nil {
		return unimplemented(fmt.Sprintf("op %s is not implemented by %s", name, im.Name))
	}
	res, err := h(ctx, im, op)
	var unimpl *UnimplementedError
	if errors.As(err, &unimpl) {
		return unimplemented(unimpl.Detail)
	}
	if err != nil {
		return errorResponse(err)
	}
	resp = new(conformpb.Response)
	if isExt {
		packed, err := anypb.New(res)
		if err != nil {
			return errorResponse(fmt.Errorf("packing the result of %s: %w", name, err))
		}
		resp.Result = &conformpb.Response_Extension{Extension: packed}
		return resp
	}
	rm := resp.ProtoReflect()
	rfd := rm.Descriptor().Fields().ByName(fd.Name())
	if rfd == nil || res == nil || rfd.Message().FullName() != res.ProtoReflect().Descriptor().FullName() {
		return errorResponse(fmt.Errorf("conform bug: the handler of %s answered %T, not the result conform.v1 pairs with it", name, res))
	}
	rm.Set(rfd, protoreflect.ValueOfMessage(res.ProtoReflect()))
	return resp
}

func unimplemented(detail string) *conformpb.Response {
	return &conformpb.Response{Result: &conformpb.Response_Unimplemented{Unimplemented: &conformpb.Unimplemented{Detail: detail}}}
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

// checkFills refuses a request when the fills of its blobs together pass
// MaxExpansion, before any is made: counted only as each was made, a
// request of many fills made a gigabyte of bytes before it was refused.
// Each op lists its own blobs; a walk of the request by reflection cost a
// fifth of a small read_frames op.
func checkFills(blobs iter.Seq[*conformpb.Blob]) error {
	var total uint64
	for b := range blobs {
		n := b.GetFill().GetLength()
		if total += n; total > MaxExpansion || total < n {
			return fmt.Errorf("the request's fills expand beyond %d bytes", MaxExpansion)
		}
	}
	return nil
}

// chunks lists the chunks of read inputs, the blobs of read_frames and
// receive.
func chunks(inputs []*conformpb.ReadInput) iter.Seq[*conformpb.Blob] {
	return func(yield func(*conformpb.Blob) bool) {
		for _, in := range inputs {
			for _, c := range in.GetChunks() {
				if !yield(c) {
					return
				}
			}
		}
	}
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
	return fill(f.Pattern, int(f.Length)), nil
}

// fill returns n bytes repeating pattern, which is not empty unless n is
// 0. bytes.Repeat doubles what it has copied: a pattern copied once per
// repetition took 25 times as long for a MaxBlob fill of one byte.
func fill(pattern []byte, n int) []byte {
	if n == 0 {
		return []byte{}
	}
	return bytes.Repeat(pattern, (n+len(pattern)-1)/len(pattern))[:n]
}
