package meaning

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"sort"

	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/ref/wire"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// maxExpand bounds what a condition expands a Blob fill to: an input larger
// than this is read as far as it goes.
const maxExpand = 64 << 20

// expand returns the bytes a Blob describes, cut at maxExpand.
func expand(b *conformpb.Blob) []byte {
	f := b.GetFill()
	if f == nil {
		return b.GetData()
	}
	n := min(f.GetLength(), maxExpand)
	if len(f.GetPattern()) == 0 {
		return nil
	}
	out := make([]byte, n)
	for i := 0; i < len(out); i += len(f.GetPattern()) {
		copy(out[i:], f.GetPattern())
	}
	return out
}

// framesOf splits a byte stream into the payloads of its whole frames, as a
// Ranvier reader yields them, stopping at a prefix over the ceiling.
func framesOf(b []byte) [][]byte {
	var out [][]byte
	for len(b) >= 4 {
		n := binary.BigEndian.Uint32(b)
		if n > wire.MaxPayload || uint64(len(b)-4) < uint64(n) {
			break
		}
		out = append(out, b[4:4+n])
		b = b[4+n:]
	}
	return out
}

// twoVariants reports whether a payload decodes as a Frame whose payload
// oneof is set twice, by an announce and a sample: ranvier-wire §8 item 1
// leaves what a receiver makes of it unspecified.
func twoVariants(p []byte) bool {
	var announce, sample bool
	for len(p) > 0 {
		num, typ, n := protowire.ConsumeTag(p)
		if n < 0 {
			return false
		}
		p = p[n:]
		m := protowire.ConsumeFieldValue(num, typ, p)
		if m < 0 {
			return false
		}
		p = p[m:]
		if typ == protowire.BytesType {
			announce = announce || num == 1
			sample = sample || num == 2
		}
	}
	return announce && sample
}

// receiveFrames returns the payloads of the frames a Receive input's chunks
// carry, memoized for the comparison.
func receiveFrames(c *Context) [][]byte {
	in, ok := c.Input.(*conformpb.ReadInput)
	if !ok {
		return nil
	}
	return c.memoize("receive-frames", func() any {
		var b []byte
		for _, ch := range in.GetChunks() {
			b = append(b, expand(ch)...)
			if len(b) > maxExpand {
				break
			}
		}
		return framesOf(b)
	}).([][]byte)
}

// frameDefined holds for a ReceiveEvent whose frame is not one ranvier-wire
// §8 item 1 leaves open.
var frameDefined = &Condition{
	Doc: "unless the frame's Frame sets both announce and sample (ranvier-wire §8 item 1: a receiver's behaviour is not specified)",
	Holds: func(c *Context) bool {
		fs := receiveFrames(c)
		i := -1
		if valid(c.Want()) {
			i = int(get(c.Want(), "frame").Uint())
		} else if valid(c.Got()) {
			i = int(get(c.Got(), "frame").Uint())
		}
		return i < 0 || i >= len(fs) || !twoVariants(fs[i])
	},
}

// noTwoVariants holds when no frame of a Receive input sets both variants.
var noTwoVariants = &Condition{
	Doc: "unless a frame sets both announce and sample (ranvier-wire §8 item 1)",
	Holds: func(c *Context) bool {
		for _, f := range receiveFrames(c) {
			if twoVariants(f) {
				return false
			}
		}
		return true
	},
}

// decodeDefined holds for a Decode input whose answer the documents fix:
// not a Frame setting both variants.
var decodeDefined = &Condition{
	Doc: "unless the payload is a Frame setting both announce and sample (ranvier-wire §8 item 1)",
	Holds: func(c *Context) bool {
		in, ok := c.Input.(*conformpb.DecodeInput)
		return !ok || in.GetMessageType() != "ranvier.message.v1.Frame" || !twoVariants(in.GetPayload())
	},
}

// EncodeJSONDefined reports whether the answer to encoding text as the
// Ranvier message type name is fixed: the text is not valid JSON (it must be
// refused), or it is JSON with no key repeated that the ProtoJSON mapping of
// the type reads (it must be encoded). JSON that repeats a key, or that is
// valid JSON outside the mapping, leaves the answer open.
func EncodeJSONDefined(name, text string) bool {
	mt, err := wire.MessageType(name)
	if err != nil || !json.Valid([]byte(text)) {
		return true
	}
	if repeatsKey([]byte(text)) {
		return false
	}
	return protojson.Unmarshal([]byte(text), mt.New().Interface()) == nil
}

// repeatsKey reports whether any JSON object in b names a key twice. b must
// be valid JSON.
func repeatsKey(b []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var walk func() (bool, error)
	walk = func() (bool, error) {
		tok, err := dec.Token()
		if err != nil {
			return false, err
		}
		d, ok := tok.(json.Delim)
		if !ok {
			return false, nil
		}
		switch d {
		case '{':
			seen := map[string]bool{}
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return false, err
				}
				key, _ := k.(string)
				if seen[key] {
					return true, nil
				}
				seen[key] = true
				if rep, err := walk(); rep || err != nil {
					return rep, err
				}
			}
		case '[':
			for dec.More() {
				if rep, err := walk(); rep || err != nil {
					return rep, err
				}
			}
		}
		_, err = dec.Token() // the closing delimiter
		return false, err
	}
	rep, err := walk()
	return rep && (err == nil || errors.Is(err, io.EOF))
}

var encodeDefined = &Condition{
	Doc: "unless the input JSON repeats a key or is JSON the ProtoJSON mapping of the type does not read",
	Holds: func(c *Context) bool {
		in, ok := c.Input.(*conformpb.EncodeInput)
		return !ok || EncodeJSONDefined(in.GetMessageType(), in.GetJson())
	},
}

// rejson re-renders canonical JSON of the Ranvier message type name, so
// that two renderings of one message compare equal; text that does not
// parse is left as it is, so that it still differs.
func rejson(name, s string) string {
	mt, err := wire.MessageType(name)
	if s == "" || err != nil {
		return s
	}
	m := mt.New().Interface()
	if protojson.Unmarshal([]byte(s), m) != nil {
		return s
	}
	b, err := protojson.Marshal(m)
	if err != nil {
		return s
	}
	return string(b)
}

// remarshal re-encodes b, a Ranvier message of type name, deterministically;
// bytes that do not decode are left as they are.
func remarshal(name string, b []byte) []byte {
	if len(b) == 0 {
		return b
	}
	m, err := wire.Decode(name, b)
	if err != nil {
		return b
	}
	out, err := wire.Encode(m)
	if err != nil {
		return b
	}
	return out
}

// reorder writes an encoding's fields in descending field-number order,
// keeping the order of a number's repeats: the same message, in the other
// field order protobuf allows (ranvier-wire §4.6).
func reorder(b []byte) []byte {
	type fieldBytes struct {
		num protowire.Number
		raw []byte
	}
	var fs []fieldBytes
	for p := b; len(p) > 0; {
		num, typ, n := protowire.ConsumeTag(p)
		if n < 0 {
			return b
		}
		m := protowire.ConsumeFieldValue(num, typ, p[n:])
		if m < 0 {
			return b
		}
		fs = append(fs, fieldBytes{num, p[:n+m]})
		p = p[n+m:]
	}
	sort.SliceStable(fs, func(i, j int) bool { return fs[i].num > fs[j].num })
	var out []byte
	for _, f := range fs {
		out = append(out, f.raw...)
	}
	return out
}

// indent re-indents JSON text, as another writer might lay it out.
func indent(s string) string {
	var b bytes.Buffer
	if json.Indent(&b, []byte(s), "", "   ") != nil {
		return s
	}
	return b.String()
}

func setString(m protoreflect.Message, name protoreflect.Name, f func(string) string) {
	if valid(m) && has(m, name) {
		fd := field(m, name)
		m.Set(fd, protoreflect.ValueOfString(f(m.Get(fd).String())))
	}
}

func setBytes(m protoreflect.Message, name protoreflect.Name, f func([]byte) []byte) {
	if valid(m) && has(m, name) {
		fd := field(m, name)
		m.Set(fd, protoreflect.ValueOfBytes(f(m.Get(fd).Bytes())))
	}
}

var frameJSONForm = &Form{
	Doc: "as canonical JSON of a ranvier.message.v1.Frame, parsed and re-rendered (ProtoJSON leaves spacing and 64-bit quoting to the writer); an undeclared enum value as its raw integer or as 0 alike (ranvier-wire §7.4)",
	Apply: func(c *Context, w, g protoreflect.Message) {
		sides(w, g, func(m protoreflect.Message) {
			payload := eventFrame(c, m)
			setString(m, "frame_json", func(s string) string {
				return rejsonWith("ranvier.message.v1.Frame", s, func(f protoreflect.Message) { undeclaredAsRaw("ranvier.message.v1.Frame", payload, f) })
			})
		})
	},
	Vary: func(c *Context, m protoreflect.Message, r Rand) {
		payload := eventFrame(c, m)
		setString(m, "frame_json", func(s string) string {
			return indent(rejsonWith("ranvier.message.v1.Frame", s, func(f protoreflect.Message) { undeclaredAsZero("ranvier.message.v1.Frame", payload, f) }))
		})
	},
}

// eventFrame returns the payload of the frame a ReceiveEvent reports on,
// from the Receive input, or nil when the input is unknown.
func eventFrame(c *Context, ev protoreflect.Message) []byte {
	fs := receiveFrames(c)
	i := get(ev, "frame").Uint()
	if i >= uint64(len(fs)) {
		return nil
	}
	return fs[i]
}

var decodeJSONForm = &Form{
	Doc: "as canonical JSON of the input's message type, parsed and re-rendered; an enum value the type does not declare reads as its raw integer or as 0 alike (ranvier-wire §7.4: the value survives decoding, and an implementation MAY surface it)",
	Apply: func(c *Context, w, g protoreflect.Message) {
		in, ok := c.Input.(*conformpb.DecodeInput)
		if !ok {
			return
		}
		sides(w, g, func(m protoreflect.Message) {
			setString(m, "json", func(s string) string {
				return rejsonWith(in.GetMessageType(), s, func(m protoreflect.Message) { undeclaredAsRaw(in.GetMessageType(), in.GetPayload(), m) })
			})
		})
	},
	Vary: func(c *Context, m protoreflect.Message, r Rand) {
		in, ok := c.Input.(*conformpb.DecodeInput)
		if ok {
			// The other reading §7.4 allows: every undeclared value as 0.
			setString(m, "json", func(s string) string {
				return rejsonWith(in.GetMessageType(), s, func(m protoreflect.Message) { undeclaredAsZero(in.GetMessageType(), in.GetPayload(), m) })
			})
		}
		setString(m, "json", indent)
	},
}

// rejsonWith re-renders canonical JSON of the Ranvier message type name, as
// rejson does, after f rewrites the parsed message; text that does not
// parse is left as it is.
func rejsonWith(name, s string, f func(protoreflect.Message)) string {
	mt, err := wire.MessageType(name)
	if s == "" || err != nil {
		return s
	}
	m := mt.New().Interface()
	if protojson.Unmarshal([]byte(s), m) != nil {
		return s
	}
	f(m.ProtoReflect())
	b, err := protojson.Marshal(m)
	if err != nil {
		return s
	}
	return string(b)
}

// undeclaredAsRaw sets, in m (a decoding of payload as the Ranvier type
// name), every enum field that payload carries at a value its enum does
// not declare, and that m reads as 0, to that raw value: the two readings
// ranvier-wire §7.4 allows compare equal.
func undeclaredAsRaw(name string, payload []byte, m protoreflect.Message) {
	eachUndeclared(name, payload, m, func(m protoreflect.Message, fd protoreflect.FieldDescriptor, raw protoreflect.EnumNumber) {
		if m.Get(fd).Enum() == 0 {
			m.Set(fd, protoreflect.ValueOfEnum(raw))
		}
	})
}

// undeclaredAsZero reads every undeclared enum value payload carries as 0.
func undeclaredAsZero(name string, payload []byte, m protoreflect.Message) {
	eachUndeclared(name, payload, m, func(m protoreflect.Message, fd protoreflect.FieldDescriptor, raw protoreflect.EnumNumber) {
		if m.Get(fd).Enum() == raw {
			m.Clear(fd)
		}
	})
}

// eachUndeclared calls f for every singular enum field that the reference's
// decoding of payload holds at an undeclared value, with m's message
// holding the same field (walking singular messages both sides set).
func eachUndeclared(name string, payload []byte, m protoreflect.Message, f func(protoreflect.Message, protoreflect.FieldDescriptor, protoreflect.EnumNumber)) {
	ref, err := wire.Decode(name, payload)
	if err != nil {
		return
	}
	var walk func(r, m protoreflect.Message)
	walk = func(r, m protoreflect.Message) {
		r.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
			switch {
			case fd.IsList() || fd.IsMap():
			case fd.Kind() == protoreflect.EnumKind && fd.Enum().Values().ByNumber(v.Enum()) == nil:
				f(m, fd, v.Enum())
			case fd.Kind() == protoreflect.MessageKind && m.Has(fd):
				walk(v.Message(), m.Mutable(fd).Message())
			}
			return true
		})
	}
	walk(ref.ProtoReflect(), m)
}

var encodingForm = &Form{
	Doc: "as an encoding of the input's message type, decoded and re-marshalled deterministically (protobuf fixes no field order, ranvier-wire §4.6)",
	Apply: func(c *Context, w, g protoreflect.Message) {
		in, ok := c.Input.(*conformpb.EncodeInput)
		if !ok {
			return
		}
		sides(w, g, func(m protoreflect.Message) {
			setBytes(m, "payload", func(b []byte) []byte { return remarshal(in.GetMessageType(), b) })
		})
	},
	Vary: func(c *Context, m protoreflect.Message, r Rand) { setBytes(m, "payload", reorder) },
}

// yieldsForm makes an entry beyond one per chunk, with end_of_stream and no
// frames, equal to no entry: conform.proto says there "may be one entry
// more" and that a conforming reader yields nothing there.
var yieldsForm = &Form{
	Doc: "one entry per chunk; with end_of_stream an entry more may follow, and an absent one equals one with no frames",
	Apply: func(c *Context, w, g protoreflect.Message) {
		in, ok := c.Input.(*conformpb.ReadInput)
		if !ok || !in.GetEndOfStream() {
			return
		}
		n := len(in.GetChunks())
		sides(w, g, func(m protoreflect.Message) {
			if !has(m, "yields") {
				return
			}
			l := m.Mutable(field(m, "yields")).List()
			if l.Len() == n+1 && l.Get(n).Message().Get(field(l.Get(n).Message(), "frames")).List().Len() == 0 {
				l.Truncate(n)
				if n == 0 {
					m.Clear(field(m, "yields"))
				}
			}
		})
	},
	Vary: func(c *Context, m protoreflect.Message, r Rand) {
		in, ok := c.Input.(*conformpb.ReadInput)
		if !ok || !in.GetEndOfStream() {
			return
		}
		n := len(in.GetChunks())
		l := m.Mutable(field(m, "yields")).List()
		switch {
		case l.Len() == n:
			l.Append(l.NewElement())
		case l.Len() == n+1 && l.Get(n).Message().Get(field(l.Get(n).Message(), "frames")).List().Len() == 0:
			l.Truncate(n)
		}
	},
}

// readEnd is ReadOutput.end's condition helpers.
var (
	endTooLarge = &Condition{
		Doc:   "when end is TOO_LARGE",
		Holds: both(enumIs("end", protoreflect.EnumNumber(conformpb.ReadEnd_READ_END_TOO_LARGE))),
	}
	endBuffering = &Condition{
		Doc: "when end is WAITING or TRUNCATED",
		Holds: both(enumIs("end", protoreflect.EnumNumber(conformpb.ReadEnd_READ_END_WAITING),
			protoreflect.EnumNumber(conformpb.ReadEnd_READ_END_TRUNCATED))),
	}
	delivered = &Condition{
		Doc: "when action is DELIVERED, and unless the frame sets both announce and sample (ranvier-wire §8 item 1)",
		Holds: func(c *Context) bool {
			return both(enumIs("action", protoreflect.EnumNumber(conformpb.ReceiveAction_RECEIVE_ACTION_DELIVERED)))(c) && frameDefined.Holds(c)
		},
	}
	refusedSize = &Condition{Doc: "when refused", Holds: both(isTrue("refused"))}
)

// connectionDefined holds for a ConnectionCounts whose connection carried
// no Frame setting both variants.
var connectionDefined = &Condition{
	Doc: "unless a frame on the connection sets both announce and sample (ranvier-wire §8 item 1)",
	Holds: func(c *Context) bool {
		in, ok := c.Input.(*conformpb.ConnectionsInput)
		if !ok {
			return true
		}
		conn := uint64(0)
		if valid(c.Want()) {
			conn = get(c.Want(), "connection").Uint()
		} else {
			conn = get(c.Got(), "connection").Uint()
		}
		open := c.memoize("connections-open", func() any {
			streams := map[uint64][]byte{}
			for _, s := range in.GetSegments() {
				if len(streams[s.GetConnection()]) < maxExpand {
					streams[s.GetConnection()] = append(streams[s.GetConnection()], expand(s.GetBytes())...)
				}
			}
			bad := map[uint64]bool{}
			for k, b := range streams {
				for _, f := range framesOf(b) {
					bad[k] = bad[k] || twoVariants(f)
				}
			}
			return bad
		}).(map[uint64]bool)
		return !open[conn]
	},
}
