package mutant

import (
	"encoding/binary"
	"errors"
	"fmt"

	messagepb "github.com/conform-suite/conform/proto/ranvier/message/v1"
	"github.com/conform-suite/conform/ref/wire"
	"github.com/conform-suite/conform/sut/impl"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
)

var wireMutants = append(wireCodecMutants, []Mutant{
	{
		Name: "little-endian-prefix", Suite: "wire",
		Bug: "reads and writes the length prefix little-endian (ranvier-wire §1.2)",
		apply: func(im *impl.Impl) {
			im.NewReader = func() wire.FrameReader { return &buggyReader{order: binary.LittleEndian, ceiling: wire.MaxPayload} }
			im.AppendFrame = func(dst, p []byte) ([]byte, error) {
				if len(p) > wire.MaxPayload {
					return dst, &wire.PayloadTooLargeError{Size: uint64(len(p))}
				}
				return append(binary.LittleEndian.AppendUint32(dst, uint32(len(p))), p...), nil
			}
		},
	},
	{
		Name: "zero-length-is-end", Suite: "wire",
		Bug: "reads a zero-length payload as the end of the stream (ranvier-wire §1.2)",
		apply: func(im *impl.Impl) {
			im.NewReader = func() wire.FrameReader { return &buggyReader{ceiling: wire.MaxPayload, zeroEnds: true} }
		},
	},
	{
		Name: "resync-after-too-large", Suite: "wire",
		Bug: "after a TooLarge prefix, scans forward for a plausible prefix (ranvier-wire §6.2)",
		apply: func(im *impl.Impl) {
			im.NewReader = func() wire.FrameReader { return &buggyReader{ceiling: wire.MaxPayload, resync: true} }
		},
	},
	{
		Name: "no-ceiling", Suite: "wire",
		Bug: "accepts any length prefix and waits for the bytes (ranvier-wire §2)",
		apply: func(im *impl.Impl) {
			im.NewReader = func() wire.FrameReader { return &buggyReader{} }
			im.AppendFrame = func(dst, p []byte) ([]byte, error) {
				return append(binary.BigEndian.AppendUint32(dst, uint32(len(p))), p...), nil
			}
		},
	},
	{
		Name: "ceiling-off-by-one", Suite: "wire",
		Bug: "refuses a payload of exactly 16,777,216 bytes (ranvier-wire §2)",
		apply: func(im *impl.Impl) {
			im.NewReader = func() wire.FrameReader { return &buggyReader{ceiling: wire.MaxPayload - 1} }
			im.AppendFrame = func(dst, p []byte) ([]byte, error) {
				if len(p) >= wire.MaxPayload {
					return dst, &wire.PayloadTooLargeError{Size: uint64(len(p))}
				}
				return wire.AppendFrame(dst, p)
			}
		},
	},
	{
		Name: "truncated-tail-delivered", Suite: "wire",
		Bug: "delivers the bytes buffered at end of stream as a last frame (ranvier-wire §1.3)",
		apply: func(im *impl.Impl) {
			im.NewReader = func() wire.FrameReader { return &buggyReader{ceiling: wire.MaxPayload, deliverTail: true} }
		},
	},
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
			im.NewSubscriber = func(r wire.FrameReader) impl.Subscriber {
				return &wire.Subscriber{Reader: r, Decode: func(p []byte) (*messagepb.Frame, error) {
					m, err := im.Decode("ranvier.message.v1.Frame", p)
					if err != nil {
						return nil, err
					}
					return m.(*messagepb.Frame), nil
				}}
			}
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
			im.NewSubscriber = func(r wire.FrameReader) impl.Subscriber {
				return &wire.Subscriber{Reader: r, Decode: func(p []byte) (*messagepb.Frame, error) {
					m, err := im.Decode("ranvier.message.v1.Frame", p)
					if err != nil {
						return nil, err
					}
					return m.(*messagepb.Frame), nil
				}}
			}
		},
	},
}...)

// buggyReader is a frame reader with switchable bugs. With every switch off
// and ceiling set to wire.MaxPayload it behaves as the reference.
type buggyReader struct {
	order       binary.ByteOrder // nil: big-endian
	ceiling     uint64           // 0: none
	zeroEnds    bool
	resync      bool
	deliverTail bool

	buf    []byte
	ended  bool
	failed error
}

func (r *buggyReader) Write(p []byte) (int, error) {
	if !r.ended {
		r.buf = append(r.buf, p...)
	}
	return len(p), nil
}

func (r *buggyReader) Next() ([]byte, bool, error) {
	if r.failed != nil {
		return nil, false, r.failed
	}
	if r.ended {
		if r.deliverTail && len(r.buf) > wire.PrefixLen {
			tail := r.buf[wire.PrefixLen:]
			r.buf = nil
			return tail, true, nil
		}
		return nil, false, nil
	}
	for {
		if len(r.buf) < wire.PrefixLen {
			return nil, false, nil
		}
		order := r.order
		if order == nil {
			order = binary.BigEndian
		}
		n := uint64(order.Uint32(r.buf))
		if r.ceiling > 0 && n > r.ceiling {
			if r.resync {
				r.buf = r.buf[1:]
				continue
			}
			r.failed = &wire.TooLargeError{Claimed: n}
			return nil, false, r.failed
		}
		if n == 0 && r.zeroEnds {
			r.ended = true
			r.buf = nil
			return nil, false, nil
		}
		if uint64(len(r.buf)-wire.PrefixLen) < n {
			return nil, false, nil
		}
		end := wire.PrefixLen + int(n)
		payload := r.buf[wire.PrefixLen:end]
		r.buf = r.buf[end:]
		return payload, true, nil
	}
}

func (r *buggyReader) End() error {
	r.ended = true
	if r.failed != nil {
		return r.failed
	}
	if len(r.buf) > 0 && !r.deliverTail {
		return wire.ErrTruncated
	}
	return nil
}

func (r *buggyReader) Buffered() int { return len(r.buf) }

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
		Name: "undeclared-enum-dropped", Suite: "wire",
		Bug: "drops an enum value its schema does not declare, as a closed enum does (ranvier-wire §7.4)",
		apply: func(im *impl.Impl) {
			onEachDecoded(im, func(x proto.Message) error {
				m := x.ProtoReflect()
				m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
					if fd.Kind() == protoreflect.EnumKind && !fd.IsList() && fd.Enum().Values().ByNumber(v.Enum()) == nil {
						m.Clear(fd)
					}
					return true
				})
				return nil
			})
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
