package mutant

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	controlpb "github.com/conform-suite/conform/proto/ranvier/control/v1"
	messagepb "github.com/conform-suite/conform/proto/ranvier/message/v1"
	"github.com/conform-suite/conform/ref/wire"
	"github.com/conform-suite/conform/sut/impl"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
)

var wireMutants = append(wireCodecMutants, []Mutant{
	framingMutant("little-endian-prefix", "reads and writes the length prefix little-endian (ranvier-wire §1.2)",
		wire.Framing{Order: binary.LittleEndian}),
	readerMutant("zero-length-is-end", "reads a zero-length payload as the end of the stream (ranvier-wire §1.2)",
		func() wire.FrameReader { return new(zeroLengthEnds) }),
	readerMutant("resync-after-too-large", "after a TooLarge prefix, scans forward for a plausible prefix (ranvier-wire §6.2)",
		func() wire.FrameReader { return newResyncs() }),
	framingMutant("no-ceiling", "accepts any length prefix and waits for the bytes (ranvier-wire §2)",
		wire.Framing{Ceiling: math.MaxUint32}),
	framingMutant("ceiling-off-by-one", "refuses a payload of exactly 16,777,216 bytes (ranvier-wire §2)",
		wire.Framing{Ceiling: wire.MaxPayload - 1}),
	readerMutant("truncated-tail-delivered", "delivers the bytes buffered at end of stream as a last frame (ranvier-wire §1.3)",
		func() wire.FrameReader { return &deliversTail{mirrored: newMirrored()} }),
	{
		Name: "decode-failure-closes", Suite: "wire",
		Bug: "treats a payload that fails to decode as a framing error and closes (ranvier-wire §6.3)",
		apply: func(im *impl.Impl) {
			next := im.NewSubscriber
			im.NewSubscriber = func(r wire.FrameReader) impl.Subscriber {
				return &closeOnUndecodable{Subscriber: next(r)}
			}
		},
	},
	{
		Name: "refuse-unknown-fields", Suite: "wire",
		Bug: "fails to decode a message carrying a field number it does not know (ranvier-wire §7.2)",
		apply: func(im *impl.Impl) {
			next := im.Decode
			im.Decode = func(name string, p []byte) (proto.Message, error) {
				m, err := next(name, p)
				if err == nil && hasUnknown(m.ProtoReflect()) {
					return nil, errors.New("unknown field")
				}
				return m, err
			}
			subscribeThroughDecode(im)
		},
	},
	{
		Name: "one-byte-order", Suite: "wire",
		Bug: "reads and writes fixed64 fields big-endian, the prefix's byte order (ranvier-wire §1.2)",
		apply: func(im *impl.Impl) {
			nextDecode, nextEncode := im.Decode, im.Encode
			im.Decode = func(name string, p []byte) (proto.Message, error) {
				m, err := nextDecode(name, p)
				if err == nil {
					swapFixed64(m.ProtoReflect())
				}
				return m, err
			}
			im.Encode = func(m proto.Message) ([]byte, error) {
				c := proto.Clone(m)
				swapFixed64(c.ProtoReflect())
				return nextEncode(c)
			}
			subscribeThroughDecode(im)
		},
	},
}...)

// framingMutant is the mutant whose frame reader and writer are the
// reference's with Framing f.
func framingMutant(name, bug string, f wire.Framing) Mutant {
	return Mutant{Name: name, Suite: "wire", Bug: bug, apply: func(im *impl.Impl) {
		im.NewReader = func() wire.FrameReader { return &wire.Reader{Framing: f} }
		im.AppendFrame = f.AppendFrame
	}}
}

// readerMutant is the mutant whose frame reader newReader makes.
func readerMutant(name, bug string, newReader func() wire.FrameReader) Mutant {
	return Mutant{Name: name, Suite: "wire", Bug: bug, apply: func(im *impl.Impl) { im.NewReader = newReader }}
}

// subscribeThroughDecode makes im's data-plane subscriber the reference's
// receive step decoding with im.Decode, so that a bug in the decoder shows
// in what the subscriber delivers.
func subscribeThroughDecode(im *impl.Impl) {
	im.NewSubscriber = func(r wire.FrameReader) impl.Subscriber {
		return &wire.Subscriber{Reader: r, Decode: func(p []byte) (*messagepb.Frame, error) {
			m, err := im.Decode("ranvier.message.v1.Frame", p)
			if err != nil {
				return nil, err
			}
			return m.(*messagepb.Frame), nil
		}}
	}
}

// zeroLengthEnds is the reference reader that takes a zero-length frame for
// the end of the stream: it yields nothing from there on and holds nothing.
type zeroLengthEnds struct {
	wire.Reader
	ended bool
}

func (r *zeroLengthEnds) Write(p []byte) (int, error) {
	if r.ended {
		return len(p), nil
	}
	return r.Reader.Write(p)
}

func (r *zeroLengthEnds) Next() ([]byte, bool, error) {
	if r.ended {
		return nil, false, nil
	}
	p, ok, err := r.Reader.Next()
	if ok && len(p) == 0 {
		r.ended, r.Reader = true, wire.Reader{}
		return nil, false, nil
	}
	return p, ok, err
}

func (r *zeroLengthEnds) End() error {
	if r.ended {
		return nil
	}
	return r.Reader.End()
}

// mirrored is the reference reader beside a copy of the bytes it holds and
// has not yielded, for the mutants that act on bytes it would never give
// out.
type mirrored struct {
	r   *wire.Reader
	raw []byte
}

func newMirrored() mirrored { return mirrored{r: new(wire.Reader)} }

func (m *mirrored) Write(p []byte) (int, error) {
	m.raw = append(m.raw, p...)
	return m.r.Write(p)
}

func (m *mirrored) Next() ([]byte, bool, error) {
	p, ok, err := m.r.Next()
	if ok {
		m.raw = m.raw[wire.PrefixLen+len(p):]
	}
	return p, ok, err
}

func (m *mirrored) End() error    { return m.r.End() }
func (m *mirrored) Buffered() int { return m.r.Buffered() }

// resyncs is the reference reader that, at a TooLarge prefix, drops the
// prefix's first byte and reads on from the next.
type resyncs struct{ mirrored }

func newResyncs() *resyncs { return &resyncs{newMirrored()} }

func (r *resyncs) Next() ([]byte, bool, error) {
	for {
		p, ok, err := r.mirrored.Next()
		var tooLarge *wire.TooLargeError
		if !errors.As(err, &tooLarge) {
			return p, ok, err
		}
		r.raw = r.raw[1:]
		r.r = new(wire.Reader)
		r.r.Write(r.raw)
	}
}

// deliversTail is the reference reader that, after the end of the stream,
// yields what it held past a length prefix as one last frame.
type deliversTail struct {
	mirrored
	ended bool
}

func (r *deliversTail) Write(p []byte) (int, error) {
	if r.ended {
		return len(p), nil
	}
	return r.mirrored.Write(p)
}

func (r *deliversTail) Next() ([]byte, bool, error) {
	if !r.ended {
		return r.mirrored.Next()
	}
	if _, _, err := r.r.Next(); err != nil {
		return nil, false, err
	}
	if len(r.raw) <= wire.PrefixLen {
		return nil, false, nil
	}
	tail := r.raw[wire.PrefixLen:]
	r.raw, r.r = nil, new(wire.Reader)
	return tail, true, nil
}

func (r *deliversTail) End() error {
	r.ended = true
	if err := r.r.End(); !errors.Is(err, wire.ErrTruncated) {
		return err
	}
	return nil
}

// closeOnUndecodable closes the connection at the first undecodable frame.
type closeOnUndecodable struct {
	impl.Subscriber
	closed bool
}

func (s *closeOnUndecodable) Receive(p []byte, emit func(wire.Event)) error {
	if s.closed {
		return nil
	}
	var err error
	s.Subscriber.Receive(p, func(ev wire.Event) {
		if s.closed {
			return
		}
		if ev.Action == wire.SkippedUndecodable {
			s.closed = true
			err = fmt.Errorf("frame %d: undecodable", ev.Index)
			return
		}
		emit(ev)
	})
	return err
}

func (s *closeOnUndecodable) Closed() bool { return s.closed || s.Subscriber.Closed() }

func hasUnknown(m protoreflect.Message) bool {
	if len(m.GetUnknown()) > 0 {
		return true
	}
	found := false
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if fd.Message() != nil && !fd.IsList() && !fd.IsMap() {
			found = hasUnknown(v.Message())
		} else if fd.Message() != nil && fd.IsList() {
			for i := 0; i < v.List().Len() && !found; i++ {
				found = hasUnknown(v.List().Get(i).Message())
			}
		}
		return !found
	})
	return found
}

func swapFixed64(m protoreflect.Message) {
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.Kind() == protoreflect.Fixed64Kind && !fd.IsList():
			var b [8]byte
			binary.LittleEndian.PutUint64(b[:], v.Uint())
			m.Set(fd, protoreflect.ValueOfUint64(binary.BigEndian.Uint64(b[:])))
		case fd.Message() != nil && !fd.IsList() && !fd.IsMap():
			swapFixed64(v.Message())
		case fd.Message() != nil && fd.IsList():
			for i := 0; i < v.List().Len(); i++ {
				swapFixed64(v.List().Get(i).Message())
			}
		}
		return true
	})
}

// wireCodecMutants break the framing writer, the reader's first step, and
// the codec's reading of §4 and §7.
var wireCodecMutants = []Mutant{
	{
		Name: "empty-payload-not-framed", Suite: "wire",
		Bug: "writes nothing for an empty payload, taking it for nothing to send (ranvier-wire §1.2, §4.5)",
		apply: func(im *impl.Impl) {
			next := im.AppendFrame
			im.AppendFrame = func(dst, p []byte) ([]byte, error) {
				if len(p) == 0 {
					return dst, nil
				}
				return next(dst, p)
			}
		},
	},
	{
		Name: "short-prefix-zero-padded", Suite: "wire",
		Bug: "reads a length prefix from fewer than four bytes, as if the missing bytes were zero (ranvier-wire §1.3 step 1)",
		apply: func(im *impl.Impl) {
			im.NewReader = func() wire.FrameReader { return new(padsShortPrefix) }
		},
	},
	{
		Name: "timestamps-as-varint", Suite: "wire",
		Bug: "writes fixed64 fields as varints, as a schema copy declaring them uint64 would (ranvier-wire §4.3)",
		apply: func(im *impl.Impl) {
			next := im.Encode
			im.Encode = func(m proto.Message) ([]byte, error) {
				b, err := next(m)
				if err != nil {
					return b, err
				}
				return fixedToVarint(b), nil
			}
		},
	},
	{
		Name: "values-parsed", Suite: "wire",
		Bug: "parses a Sample's values as a protobuf message and fails the decode when they are not one (ranvier-wire §4.3)",
		apply: func(im *impl.Impl) {
			onEachDecoded(im, func(s *messagepb.Sample) error { return protowireParses(s.GetValues()) })
		},
	},
	{
		Name: "wire-descriptor-parsed", Suite: "wire",
		Bug: "parses SchemaInfo.descriptor as a FileDescriptorSet and fails the decode when it is not one (ranvier-wire §4.4)",
		apply: func(im *impl.Impl) {
			onEachDecoded(im, func(s *messagepb.SchemaInfo) error {
				return proto.Unmarshal(s.GetDescriptor_(), new(descriptorpb.FileDescriptorSet))
			})
		},
	},
	{
		Name: "empty-payload-undecodable", Suite: "wire",
		Bug: "refuses to decode an empty payload, though it is a message with every field absent (ranvier-wire §4.5, §6.4)",
		apply: func(im *impl.Impl) {
			next := im.Decode
			im.Decode = func(name string, p []byte) (proto.Message, error) {
				if len(p) == 0 {
					return nil, fmt.Errorf("%s: empty payload", name)
				}
				return next(name, p)
			}
		},
	},
	{
		Name: "undeclared-enum-as-neighbour", Suite: "wire",
		Bug: "decodes an enum value its schema does not declare as the nearest declared value below it (ranvier-wire §7.4)",
		apply: func(im *impl.Impl) {
			onEachDecoded(im, func(x proto.Message) error {
				m := x.ProtoReflect()
				m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
					if fd.Kind() == protoreflect.EnumKind && !fd.IsList() && fd.Enum().Values().ByNumber(v.Enum()) == nil {
						m.Set(fd, protoreflect.ValueOfEnum(nearestBelow(fd.Enum(), v.Enum())))
					}
					return true
				})
				return nil
			})
		},
	},
	{
		Name: "register-fields-swapped", Suite: "wire",
		Bug: "numbers Register's node_id 3 and token 2, the other way round from the pinned control.v1 (ranvier-wire §5.2, reconstructed§ranvier-fields#14)",
		apply: func(im *impl.Impl) {
			swap := func(r *controlpb.Register) { r.NodeId, r.Token = r.Token, r.NodeId }
			onEachDecoded(im, func(r *controlpb.Register) error { swap(r); return nil })
			next := im.Encode
			im.Encode = func(m proto.Message) ([]byte, error) {
				c := proto.Clone(m)
				_ = eachMessage(c.ProtoReflect(), func(x protoreflect.Message) error {
					if r, ok := x.Interface().(*controlpb.Register); ok {
						swap(r)
					}
					return nil
				})
				return next(c)
			}
		},
	},
	{
		Name: "endpoint-fields-swapped", Suite: "wire",
		Bug: "numbers Endpoint's stream_name 2 and address 1, the other way round from the pinned control.v1 (ranvier-wire §5.2, reconstructed§ranvier-fields#15)",
		apply: func(im *impl.Impl) {
			swap := func(e *controlpb.Endpoint) { e.StreamName, e.Address = e.Address, e.StreamName }
			onEachDecoded(im, func(e *controlpb.Endpoint) error { swap(e); return nil })
			next := im.Encode
			im.Encode = func(m proto.Message) ([]byte, error) {
				c := proto.Clone(m)
				_ = eachMessage(c.ProtoReflect(), func(x protoreflect.Message) error {
					if e, ok := x.Interface().(*controlpb.Endpoint); ok {
						swap(e)
					}
					return nil
				})
				return next(c)
			}
		},
	},
	{
		Name: "lenient-truncated-decode", Suite: "wire",
		Bug: "decodes the complete fields of a payload that ends mid-field instead of failing (ranvier-wire §7.5)",
		apply: func(im *impl.Impl) {
			next := im.Decode
			im.Decode = func(name string, p []byte) (proto.Message, error) {
				m, err := next(name, p)
				if err != nil {
					return next(name, salvage(p))
				}
				return m, err
			}
		},
	},
}

// onEachDecoded runs f on every message of type T that im's Decode yields,
// nested ones included; an error from f fails the decode.
func onEachDecoded[T proto.Message](im *impl.Impl, f func(T) error) {
	next := im.Decode
	im.Decode = func(name string, p []byte) (proto.Message, error) {
		m, err := next(name, p)
		if err != nil {
			return m, err
		}
		err = eachMessage(m.ProtoReflect(), func(m protoreflect.Message) error {
			if x, ok := m.Interface().(T); ok {
				return f(x)
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		return m, nil
	}
}

// eachMessage calls f on m and every message nested in it, stopping at the
// first error.
func eachMessage(m protoreflect.Message, f func(protoreflect.Message) error) error {
	if err := f(m); err != nil {
		return err
	}
	var err error
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.Message() == nil || fd.IsMap():
		case fd.IsList():
			for i := 0; i < v.List().Len() && err == nil; i++ {
				err = eachMessage(v.List().Get(i).Message(), f)
			}
		default:
			err = eachMessage(v.Message(), f)
		}
		return err == nil
	})
	return err
}

// protowireParses reports whether b parses as protobuf fields.
func protowireParses(b []byte) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		m := protowire.ConsumeFieldValue(num, typ, b[n:])
		if m < 0 {
			return protowire.ParseError(m)
		}
		b = b[n+m:]
	}
	return nil
}

// padsShortPrefix is a frame reader that, with one to three bytes buffered,
// reads them as the whole prefix, the missing bytes taken as zero.
type padsShortPrefix struct{ wire.Reader }

func (r *padsShortPrefix) Next() ([]byte, bool, error) {
	if n := r.Buffered(); n > 0 && n < wire.PrefixLen {
		r.Reader.Write(make([]byte, wire.PrefixLen-n))
	}
	return r.Reader.Next()
}

// nearestBelow returns the largest value ed declares below n, or its
// smallest value when none is below.
func nearestBelow(ed protoreflect.EnumDescriptor, n protoreflect.EnumNumber) protoreflect.EnumNumber {
	vs := ed.Values()
	best, found := vs.Get(0).Number(), false
	for i := range vs.Len() {
		if v := vs.Get(i).Number(); v < n && (!found || v > best) {
			best, found = v, true
		}
	}
	return best
}
