package meaning

import (
	"math"
	"math/bits"
	"sort"
	"time"

	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	dp "github.com/conform-suite/conform/ref/doppler"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// canonicalNaN is the NaN a form writes in place of any other: the JSON
// mapping carries "NaN", never its bits.
var canonicalNaN = math.NaN()

// orderOf returns the byte order a message's header is written in, read
// from its magic, and false when it is no doppler header.
func orderOf(msg []byte) (dp.Order, bool) {
	if len(msg) < dp.HeaderSize {
		return 0, false
	}
	for _, o := range []dp.Order{dp.LittleEndian, dp.BigEndian} {
		if h, err := dp.DecodeHeader(msg, o); err == nil && h.Magic == dp.Magic {
			return o, true
		}
	}
	return 0, false
}

// rewriteHeader returns msg with its header rewritten by f, every other
// byte as it was; msg itself is left alone. A message with no doppler
// header is returned as it is.
func rewriteHeader(msg []byte, f func(h *dp.Header)) []byte {
	o, ok := orderOf(msg)
	if !ok {
		return msg
	}
	h, _ := dp.DecodeHeader(msg, o)
	f(&h)
	out := dp.AppendHeader(nil, o, h)
	return append(out, msg[dp.HeaderSize:]...)
}

func nanCanonical(h *dp.Header) {
	if math.IsNaN(h.SampleRateHz) {
		h.SampleRateHz = canonicalNaN
	}
}

// otherNaN returns a NaN whose bits differ from x's.
func otherNaN(x float64) float64 {
	return math.Float64frombits(math.Float64bits(x) ^ 0x2)
}

// rewriteList rewrites each entry of m's repeated bytes field name.
func rewriteList(m protoreflect.Message, name protoreflect.Name, f func(i int, b []byte) []byte) {
	if !valid(m) || !has(m, name) {
		return
	}
	l := m.Mutable(field(m, name)).List()
	for i := 0; i < l.Len(); i++ {
		l.Set(i, protoreflect.ValueOfBytes(f(i, l.Get(i).Bytes())))
	}
}

var sampleRateForm = &Form{
	Doc: "as a float64, NaN equal to NaN whatever its bits (the JSON mapping does not carry them)",
	Apply: func(c *Context, w, g protoreflect.Message) {
		if !valid(w) || !valid(g) {
			return
		}
		if math.IsNaN(get(w, "sample_rate_hz").Float()) && math.IsNaN(get(g, "sample_rate_hz").Float()) {
			w.Set(field(w, "sample_rate_hz"), protoreflect.ValueOfFloat64(canonicalNaN))
			g.Set(field(g, "sample_rate_hz"), protoreflect.ValueOfFloat64(canonicalNaN))
		}
	},
	Vary: func(c *Context, m protoreflect.Message, r Rand) {
		if x := get(m, "sample_rate_hz").Float(); math.IsNaN(x) {
			m.Set(field(m, "sample_rate_hz"), protoreflect.ValueOfFloat64(otherNaN(x)))
		}
	},
}

// headerBytesForm compares written headers byte for byte, but a NaN sample
// rate as NaN whatever its bits.
func headerBytesForm(name protoreflect.Name, repeated bool) *Form {
	canon := func(b []byte) []byte { return rewriteHeader(b, nanCanonical) }
	vary := func(b []byte) []byte {
		return rewriteHeader(b, func(h *dp.Header) {
			if math.IsNaN(h.SampleRateHz) {
				h.SampleRateHz = otherNaN(h.SampleRateHz)
			}
		})
	}
	return &Form{
		Doc: "byte for byte, but a NaN sample_rate_hz as NaN whatever its bits (JSON cannot carry them from the harness)",
		Apply: func(c *Context, w, g protoreflect.Message) {
			sides(w, g, func(m protoreflect.Message) {
				if repeated {
					rewriteList(m, name, func(_ int, b []byte) []byte { return canon(b) })
				} else {
					setBytes(m, name, canon)
				}
			})
		},
		Vary: func(c *Context, m protoreflect.Message, r Rand) {
			if repeated {
				rewriteList(m, name, func(_ int, b []byte) []byte { return vary(b) })
			} else {
				setBytes(m, name, vary)
			}
		},
	}
}

// sequenceSockets returns, per step of a Sequence input, whether a step of
// the same socket before it is one a PUSH socket must refuse (its frame
// does not fit): whether such a refused frame consumes a sequence number is
// open (doppler/7/refused-send-consumes-a-number is INFO).
func afterRefusal(in *conformpb.DopplerSequenceInput) []bool {
	refused := map[uint32]bool{}
	out := make([]bool, len(in.GetSteps()))
	for i, st := range in.GetSteps() {
		out[i] = refused[st.GetSocket()]
		if st.GetRole() == conformpb.DopplerSendRole_DOPPLER_SEND_ROLE_PUSH && uint64(dp.HeaderSize)+uint64(len(st.GetPayload())) > in.GetMaxPayload() {
			refused[st.GetSocket()] = true
		}
	}
	return out
}

var sentForm = &Form{
	Doc: "byte for byte, except timestamp_ns, which the socket stamps from CLOCK_REALTIME at send (doppler §7), a NaN sample rate (any NaN), and the sequence after a refused PUSH of the same socket (whether a refused frame consumes a number is open)",
	Apply: func(c *Context, w, g protoreflect.Message) {
		in, _ := c.Input.(*conformpb.DopplerSequenceInput)
		maskSeq := false
		if in != nil {
			after := c.memoize("after-refusal", func() any { return afterRefusal(in) }).([]bool)
			i := c.Index()
			maskSeq = i >= 0 && i < len(after) && after[i]
		}
		sides(w, g, func(m protoreflect.Message) {
			rewriteList(m, "messages", func(_ int, b []byte) []byte {
				return rewriteHeader(b, func(h *dp.Header) {
					nanCanonical(h)
					h.TimestampNs = 0
					if maskSeq {
						h.Sequence = 0
					}
				})
			})
		})
	},
	Vary: func(c *Context, m protoreflect.Message, r Rand) {
		now := uint64(time.Now().UnixNano())
		rewriteList(m, "messages", func(_ int, b []byte) []byte {
			return rewriteHeader(b, func(h *dp.Header) { h.TimestampNs = now })
		})
	},
}

// ChunkDefined reports whether doppler defines how a frame is cut: its type
// is one of the seven, its payload a whole number of elements, and when it
// must be chunked, max_payload leaves room for one element after the header
// and chunk block (what a PUB does otherwise is doppler/4/no-room-for-one-
// element, INFO).
func ChunkDefined(in *conformpb.DopplerChunkInput) bool {
	return sendDefined(in.GetType(), in.GetPayload(), in.GetMaxPayload(), true)
}

func sendDefined(t conformpb.DopplerFrameType, payload []byte, maxPayload uint64, pub bool) bool {
	typ := dp.Type(t)
	if t == conformpb.DopplerFrameType_DOPPLER_FRAME_TYPE_UNSPECIFIED || !typ.Valid() {
		return false
	}
	elem := uint64(typ.ElemSize())
	if elem == 0 || uint64(len(payload))%elem != 0 {
		return false
	}
	if pub && uint64(dp.HeaderSize)+uint64(len(payload)) > maxPayload {
		return maxPayload >= uint64(dp.HeaderSize+dp.ChunkBlockSize)+elem
	}
	return true
}

// SequenceDefined reports whether doppler defines what a Sequence input's
// sockets send: a known byte order, and every step a PUB or PUSH of one of
// the seven types with a whole number of elements, each socket keeping one
// role and type, and every PUB frame cut as ChunkDefined requires.
func SequenceDefined(in *conformpb.DopplerSequenceInput) bool {
	if in.GetOrder() > conformpb.DopplerByteOrder_DOPPLER_BYTE_ORDER_BIG_ENDIAN {
		return false
	}
	type sock struct {
		role conformpb.DopplerSendRole
		typ  conformpb.DopplerFrameType
	}
	socks := map[uint32]sock{}
	for _, st := range in.GetSteps() {
		role := st.GetRole()
		if role != conformpb.DopplerSendRole_DOPPLER_SEND_ROLE_PUB && role != conformpb.DopplerSendRole_DOPPLER_SEND_ROLE_PUSH {
			return false
		}
		if s, ok := socks[st.GetSocket()]; ok && (s.role != role || s.typ != st.GetType()) {
			return false
		}
		socks[st.GetSocket()] = sock{role, st.GetType()}
		if !sendDefined(st.GetType(), st.GetPayload(), in.GetMaxPayload(), role == conformpb.DopplerSendRole_DOPPLER_SEND_ROLE_PUB) {
			return false
		}
	}
	return true
}

// EncodeHeaderDefined reports whether doppler defines the header an
// EncodeHeader input asks for: a known order and type, and num_samples
// elements whose byte count fits 64 bits.
func EncodeHeaderDefined(in *conformpb.DopplerEncodeInput) bool {
	typ := dp.Type(in.GetType())
	if in.GetOrder() > conformpb.DopplerByteOrder_DOPPLER_BYTE_ORDER_BIG_ENDIAN ||
		in.GetType() == conformpb.DopplerFrameType_DOPPLER_FRAME_TYPE_UNSPECIFIED || !typ.Valid() {
		return false
	}
	hi, _ := bits.Mul64(in.GetNumSamples(), uint64(typ.ElemSize()))
	return hi == 0
}

// CheckDefined reports whether a Check input describes a message: with a
// transport length, the bytes given are no more than it and hold at least
// its first 88 bytes (a header and a chunk block) where it has them, or a
// whole header that sets no CHUNKED.
func CheckDefined(in *conformpb.DopplerCheckInput) bool {
	if in.TransportLength == nil {
		return true
	}
	n, t := uint64(len(in.GetMessage())), in.GetTransportLength()
	switch {
	case n > t:
		return false
	case n >= min(t, uint64(dp.HeaderSize+dp.ChunkBlockSize)):
		return true
	}
	// Fewer bytes than a header and chunk block: the header alone fixes
	// the answer (doppler.proto: "at least the header, when the transport
	// length allows one"; a receiver judges by the transport's length,
	// doppler §3) when it is whole and sets no CHUNKED, read in either
	// byte order, so that no chunk block the input lacks is read.
	m := in.GetMessage()
	return n >= uint64(dp.HeaderSize) && m[12]&byte(dp.FlagChunked) == 0 && m[15]&byte(dp.FlagChunked) == 0
}

func inputCondition(doc string, f func(in proto.Message) (bool, bool)) *Condition {
	return &Condition{Doc: doc, Holds: func(c *Context) bool {
		ok, known := f(c.Input)
		return !known || ok
	}}
}

var (
	chunkDefined = inputCondition("when the frame is one doppler describes how to cut (a whole number of elements of a known type; room for one element in a chunk: doppler/4/no-room-for-one-element is INFO)", func(in proto.Message) (bool, bool) {
		x, ok := in.(*conformpb.DopplerChunkInput)
		return ok && ChunkDefined(x), ok
	})
	sequenceDefined = inputCondition("when every step is a PUB or PUSH of a known type with a whole number of elements, each socket keeping one role and type", func(in proto.Message) (bool, bool) {
		x, ok := in.(*conformpb.DopplerSequenceInput)
		return ok && SequenceDefined(x), ok
	})
	encodeHeaderDefined = inputCondition("when the order and type are known and num_samples elements fit 64 bits", func(in proto.Message) (bool, bool) {
		x, ok := in.(*conformpb.DopplerEncodeInput)
		return ok && EncodeHeaderDefined(x), ok
	})
	checkDefined = inputCondition("when the bytes given are a prefix of the transport length holding the header, and the chunk block when the header sets CHUNKED", func(in proto.Message) (bool, bool) {
		x, ok := in.(*conformpb.DopplerCheckInput)
		return ok && CheckDefined(x), ok
	})
)

var (
	checkAccepted = &Condition{
		Doc:   "when the verdict is ACCEPTED",
		Holds: both(enumIs("verdict", protoreflect.EnumNumber(conformpb.DopplerVerdict_DOPPLER_VERDICT_ACCEPTED))),
	}
	checkChunked = &Condition{
		Doc: "when the verdict is ACCEPTED and the header has CHUNKED set",
		Holds: and(checkAccepted.Holds, both(func(m protoreflect.Message) bool {
			h := sub(m, field(m, "header"))
			return h != nil && get(h, "flags").Uint()&uint64(dp.FlagChunked) != 0
		})),
	}
)

// headerRead are the verdicts of a message whose header a receiver read in
// its own order: the sequence of such a refusal is the header's.
var headerRead = map[protoreflect.EnumNumber]bool{
	protoreflect.EnumNumber(conformpb.DopplerVerdict_DOPPLER_VERDICT_OTHER_MAJOR_VERSION): true,
	protoreflect.EnumNumber(conformpb.DopplerVerdict_DOPPLER_VERDICT_UNKNOWN_FLAGS):       true,
	protoreflect.EnumNumber(conformpb.DopplerVerdict_DOPPLER_VERDICT_SHORT_CHUNK_BLOCK):   true,
	protoreflect.EnumNumber(conformpb.DopplerVerdict_DOPPLER_VERDICT_PAYLOAD_MISMATCH):    true,
	protoreflect.EnumNumber(conformpb.DopplerVerdict_DOPPLER_VERDICT_UNKNOWN_KIND):        true,
	protoreflect.EnumNumber(conformpb.DopplerVerdict_DOPPLER_VERDICT_UNKNOWN_FORMAT):      true,
	protoreflect.EnumNumber(conformpb.DopplerVerdict_DOPPLER_VERDICT_COUNT_MISMATCH):      true,
}

var refusalSequence = &Condition{
	Doc: "when the header check refused a message whose header it read (any verdict but SHORT_MESSAGE, NOT_DOPPLER and CROSS_ENDIAN); which frame another refusal concerns is recorded",
	Holds: both(func(m protoreflect.Message) bool {
		return headerRead[get(m, "verdict").Enum()]
	}),
}

// maxFrameClaim is the largest frame a chunk block may claim before what a
// receiver does with it is its own resource bound, not the protocol.
const maxFrameClaim = 16 << 20

// openFrom returns the index of the first message of a reassembly input
// from which the documents leave the receiver's behaviour open, or -1:
// an empty chunk; a message that fails the header check while a frame is in
// progress (is that frame dropped, and is the drop an event of its own?); a
// chunk block claiming a frame above maxFrameClaim. The receiver's byte
// order is not part of the input entry, so both are tried and the earlier
// wins.
func openFrom(msgs [][]byte) int {
	first := -1
	for _, o := range []dp.Order{dp.LittleEndian, dp.BigEndian} {
		r := &dp.Reassembler{Order: o}
		for i, m := range msgs {
			if first >= 0 && i >= first {
				break
			}
			_, inProgress := r.Pending()
			v := dp.Check(m, o)
			open := v != dp.Accepted && inProgress
			if v == dp.Accepted {
				if h, err := dp.DecodeHeader(m, o); err == nil && h.Chunked() && len(m) >= dp.HeaderSize+dp.ChunkBlockSize {
					cb, _ := dp.DecodeChunkBlock(m[dp.HeaderSize:], o)
					open = open || len(m) == dp.HeaderSize+dp.ChunkBlockSize || cb.TotalBytes > maxFrameClaim
				}
			}
			if open {
				first = i
				break
			}
			r.Add(m)
		}
	}
	return first
}

// ReassemblyOpenFrom returns the index of the first message of in from
// which the documents leave a receiver's behaviour open (docs/findings.md),
// or -1 when they fix it throughout. A harness that plays the messages to a
// live socket, whose events name no message, sends only those before it.
func ReassemblyOpenFrom(in *conformpb.DopplerReassembleInput) int { return openFrom(in.GetMessages()) }

func reassemblyOpenFrom(c *Context) int {
	in, ok := c.Input.(*conformpb.DopplerReassembleInput)
	if !ok {
		return -1
	}
	return c.memoize("reassembly-open", func() any { return openFrom(in.GetMessages()) }).(int)
}

var reassemblyClosed = &Condition{
	Doc:   "unless a message leaves the receiver's behaviour open (an empty chunk; a message failing the header check mid-frame; a frame claimed above 16 MiB: docs/findings.md)",
	Holds: func(c *Context) bool { return reassemblyOpenFrom(c) < 0 },
}

// eventsForm: the events caused by messages up to the first that leaves
// the receiver's behaviour open, and of one message, its deliveries in
// order and its refusals as a set — how many events report one message's
// refusals (a dropped frame as an event of its own, or in the refusal that
// cost it) is the receiver's choice.
var eventsForm = &Form{
	Doc: "per message, the frames delivered in order and the refusals as a set (whether a dropped frame is an event of its own is open); events from a message that leaves the receiver open (docs/findings.md) on are not compared",
	Apply: func(c *Context, w, g protoreflect.Message) {
		cut := reassemblyOpenFrom(c)
		sides(w, g, func(m protoreflect.Message) {
			out, ok := m.Interface().(*conformpb.DopplerReassembleOutput)
			if !ok {
				return
			}
			var kept []*conformpb.DopplerReassembleEvent
			for _, e := range out.Events {
				if cut < 0 || int(e.GetMessage()) < cut {
					kept = append(kept, e)
				}
			}
			out.Events = collapseEvents(kept)
		})
	},
}

// collapseEvents orders the events of each message delivered first, then
// its distinct refusals sorted, keeping the order of messages.
func collapseEvents(evs []*conformpb.DopplerReassembleEvent) []*conformpb.DopplerReassembleEvent {
	var out []*conformpb.DopplerReassembleEvent
	for i := 0; i < len(evs); {
		j := i
		for j < len(evs) && evs[j].GetMessage() == evs[i].GetMessage() {
			j++
		}
		var refusals []*conformpb.DopplerReassembleEvent
		for _, e := range evs[i:j] {
			if e.GetRefused() == nil {
				out = append(out, e)
				continue
			}
			dup := false
			for _, r := range refusals {
				dup = dup || proto.Equal(r, e)
			}
			if !dup {
				refusals = append(refusals, e)
			}
		}
		sort.SliceStable(refusals, func(a, b int) bool {
			x, y := refusals[a].GetRefused(), refusals[b].GetRefused()
			if x.GetCode() != y.GetCode() {
				return x.GetCode() < y.GetCode()
			}
			return x.GetVerdict() < y.GetVerdict()
		})
		out = append(out, refusals...)
		i = j
	}
	return out
}

// liveEventsForm: a SUB socket's events, consecutive repeats of one refusal
// counted once (whether a dropped frame is an event of its own is open).
var liveEventsForm = &Form{
	Doc: "in order, a refusal repeated by the next event counted once (whether a dropped frame is an event of its own is open)",
	Apply: func(c *Context, w, g protoreflect.Message) {
		sides(w, g, func(m protoreflect.Message) {
			out, ok := m.Interface().(*conformpb.DopplerCollectResult)
			if !ok {
				return
			}
			var kept []*conformpb.DopplerLiveEvent
			for _, e := range out.Events {
				if n := len(kept); n > 0 && e.GetRefused() != nil && proto.Equal(kept[n-1], e) {
					continue
				}
				kept = append(kept, e)
			}
			out.Events = kept
		})
	},
}
