package cases_test

import (
	"context"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"runtime/metrics"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/conform-suite/conform/cases"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/reports"
	"github.com/conform-suite/conform/runner"
	"github.com/conform-suite/conform/suites"
	"github.com/conform-suite/conform/sut"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// The bounds one case run against an arbitrary SUT must keep. The hang
// guard is generous, for a loaded machine: a case that needs it is stuck,
// not slow.
const (
	hangGuard = 2 * time.Minute
	// maxCaseAlloc bounds what a case may allocate in all while judging
	// answers it did not expect: eight times the most a case allocates
	// against the reference (125 MiB, tlv every-two-segment-split, run
	// with the case's own inputs and the reference's round trips).
	maxCaseAlloc = 1 << 30
	// answerBudget bounds the bytes of strings and bytes one fake answer
	// holds; maxAnswerValue bounds one of them, a few MiB: within what
	// conform.v1 carries, and what a Data reports inline.
	answerBudget   = 6 << 20
	maxAnswerValue = 4 << 20
)

// hostile answers every request with a well-formed Response of the op asked,
// whose contents come from the fuzz input: either built from nothing
// (numbers at their edges, lists of any length, undeclared enum values,
// strings and bytes empty or large, sub-messages missing) or the
// reference's own answer with its fields changed the same way, which
// reaches the checks a case makes after the first ones pass. Requests and
// responses pass through the binary encoding, as over any carrier.
type hostile struct {
	src   *source
	hello *conformpb.Hello
	ref   sut.Handler
	// sent counts the answers given, to stop answering a case that asks
	// without end.
	sent int
}

func (h *hostile) Hello() *conformpb.Hello { return h.hello }
func (h *hostile) Carrier() string         { return "hostile" }
func (h *hostile) Close() error            { return nil }

func (h *hostile) Do(ctx context.Context, req *conformpb.Request) (*conformpb.Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, &sut.Error{Kind: reports.KindTimeout, Detail: "no time left", Err: err}
	}
	h.sent++
	if h.sent > 10000 {
		return nil, &sut.Error{Kind: reports.KindProtocol, Detail: "the case asked more than 10,000 times"}
	}
	in := new(conformpb.Request)
	if err := roundTrip(req, in); err != nil {
		return nil, err
	}
	var resp *conformpb.Response
	if h.src.byte()%2 == 0 {
		resp = h.ref.Handle(ctx, proto.CloneOf(in))
		if resp.GetUnimplemented() == nil && resp.GetError() == nil {
			h.src.mutate(resp.ProtoReflect(), 0)
		}
	}
	if resp.GetResult() == nil || resp.GetUnimplemented() != nil || resp.GetError() != nil {
		resp = &conformpb.Response{}
		h.src.answer(in.ProtoReflect(), resp.ProtoReflect())
	}
	resp.Id = in.Id
	out := new(conformpb.Response)
	if err := roundTrip(resp, out); err != nil {
		return nil, &sut.Error{Kind: reports.KindProtocol, Detail: "the response does not encode", Err: err}
	}
	return out, nil
}

func roundTrip(from, to proto.Message) error {
	b, err := proto.Marshal(from)
	if err != nil {
		return err
	}
	return proto.Unmarshal(b, to)
}

// source draws choices from the fuzz input; once it is spent every choice
// is zero, which gives the smallest answers.
type source struct {
	data   []byte
	budget int
}

func (s *source) byte() byte {
	if len(s.data) == 0 {
		return 0
	}
	b := s.data[0]
	s.data = s.data[1:]
	return b
}

func (s *source) uint64() uint64 {
	var b [8]byte
	for i := range b {
		b[i] = s.byte()
	}
	return binary.LittleEndian.Uint64(b[:])
}

// count draws a list length: mostly small, sometimes at an edge.
func (s *source) count(usual int) int {
	switch c := s.byte(); {
	case c < 160:
		return usual
	case c < 230:
		return int(c % 8)
	case c < 250:
		return int(s.uint64() % 300)
	default:
		return int(s.uint64() % 5000)
	}
}

// size draws the length of a string or bytes value within the budget.
func (s *source) size() int {
	var n int
	switch c := s.byte(); {
	case c < 64:
		n = 0
	case c < 200:
		n = int(c % 24)
	case c < 250:
		n = int(s.uint64() % (64 << 10))
	default:
		n = int(s.uint64() % maxAnswerValue)
	}
	n = min(n, s.budget)
	s.budget -= n
	return n
}

func (s *source) bytes() []byte {
	b := make([]byte, s.size())
	fill := s.byte()
	for i := range b {
		if i < 64 {
			b[i] = s.byte()
		} else {
			b[i] = byte(i) ^ fill
		}
	}
	return b
}

func (s *source) string() string {
	n := s.size()
	var sb strings.Builder
	for sb.Len() < n {
		switch c := s.byte(); {
		case c < 200:
			sb.WriteByte('a' + c%26)
		case c < 240:
			sb.WriteRune('é')
		default:
			sb.WriteString("\x1b[2J")
		}
	}
	out := sb.String()
	for !utf8.ValidString(out) {
		out = out[:len(out)-1]
	}
	return out
}

// edge draws a number of a field's kind: mostly at an edge.
func (s *source) number(fd protoreflect.FieldDescriptor) protoreflect.Value {
	var u uint64
	switch c := s.byte() % 10; c {
	case 0:
		u = 0
	case 1:
		u = 1
	case 2:
		u = math.MaxUint64
	case 3:
		u = math.MaxInt64
	case 4:
		u = math.MaxUint32
	case 5:
		u = math.MaxInt32 + 1
	case 6:
		u = 1 << 24
	default:
		u = s.uint64() >> (s.byte() % 64)
	}
	switch fd.Kind() {
	case protoreflect.BoolKind:
		return protoreflect.ValueOfBool(u&1 != 0)
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return protoreflect.ValueOfInt32(int32(u))
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return protoreflect.ValueOfInt64(int64(u))
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return protoreflect.ValueOfUint32(uint32(u))
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return protoreflect.ValueOfUint64(u)
	case protoreflect.FloatKind:
		return protoreflect.ValueOfFloat32([]float32{0, float32(math.NaN()), float32(math.Inf(1)), -1, float32(u)}[u%5])
	case protoreflect.DoubleKind:
		return protoreflect.ValueOfFloat64([]float64{0, math.NaN(), math.Inf(-1), 1e308, float64(u)}[u%5])
	case protoreflect.EnumKind:
		vals := fd.Enum().Values()
		if c := s.byte(); c < 200 {
			return protoreflect.ValueOfEnum(vals.Get(int(c) % vals.Len()).Number())
		}
		return protoreflect.ValueOfEnum(protoreflect.EnumNumber(int32(u)))
	case protoreflect.StringKind:
		return protoreflect.ValueOfString(s.string())
	case protoreflect.BytesKind:
		return protoreflect.ValueOfBytes(s.bytes())
	}
	return fd.Default()
}

// maxDepth bounds how deep a built answer nests.
const maxDepth = 8

// fill gives m's fields values drawn from s; outputs, when set, is how many
// entries a conforming "outputs" list would hold.
func (s *source) fill(m protoreflect.Message, depth, outputs int) {
	fields := m.Descriptor().Fields()
	chosen := map[protoreflect.FullName]bool{}
	for i := 0; i < fields.Len(); i++ {
		fd := fields.Get(i)
		if o := fd.ContainingOneof(); o != nil && !o.IsSynthetic() {
			if chosen[o.FullName()] || int(s.byte())%o.Fields().Len() != 0 {
				continue
			}
			chosen[o.FullName()] = true
		} else if s.byte()%4 == 3 {
			continue // absent
		}
		switch {
		case fd.IsMap():
		case fd.IsList():
			usual := 1 + int(s.byte()%4)
			if fd.Name() == "outputs" && outputs >= 0 {
				usual = outputs
			}
			n := s.count(usual)
			l := m.Mutable(fd).List()
			for range n {
				if fd.Kind() == protoreflect.MessageKind {
					e := l.NewElement()
					if depth < maxDepth {
						s.fill(e.Message(), depth+1, -1)
					}
					l.Append(e)
				} else {
					l.Append(s.number(fd))
				}
				if s.budget <= 0 && len(s.data) == 0 {
					break
				}
			}
		case fd.Kind() == protoreflect.MessageKind:
			if depth >= maxDepth {
				continue
			}
			sub := m.Mutable(fd).Message()
			s.fill(sub, depth+1, -1)
		default:
			m.Set(fd, s.number(fd))
		}
	}
}

// answer sets in resp the result of the op req carries, by the same names
// at every level (Request.tlv, TlvOp.decode → Response.tlv,
// TlvResult.decode), its contents drawn from s.
func (s *source) answer(req, resp protoreflect.Message) {
	op, opv := setOneof(req)
	if op == nil {
		return
	}
	rfd := resp.Descriptor().Fields().ByName(op.Name())
	if rfd == nil || rfd.Kind() != protoreflect.MessageKind {
		return
	}
	res := resp.Mutable(rfd).Message()
	if inner, _ := setOneof(opv.Message()); inner != nil && res.Descriptor().Fields().ByName(inner.Name()) != nil {
		s.answer(opv.Message(), res)
		return
	}
	s.fill(res, 0, entriesIn(opv.Message()))
}

// setOneof returns the field set in m's first oneof.
func setOneof(m protoreflect.Message) (protoreflect.FieldDescriptor, protoreflect.Value) {
	oneofs := m.Descriptor().Oneofs()
	for i := 0; i < oneofs.Len(); i++ {
		if fd := m.WhichOneof(oneofs.Get(i)); fd != nil {
			return fd, m.Get(fd)
		}
	}
	return nil, protoreflect.Value{}
}

// entriesIn returns how many input entries an op message carries: the
// length of its repeated message field, or -1.
func entriesIn(op protoreflect.Message) int {
	fields := op.Descriptor().Fields()
	for i := 0; i < fields.Len(); i++ {
		if fd := fields.Get(i); fd.IsList() && fd.Kind() == protoreflect.MessageKind {
			return op.Get(fd).List().Len()
		}
	}
	return -1
}

// mutate changes m in place, field by field as s decides: left alone,
// cleared, given another value, a list cut, grown or emptied.
func (s *source) mutate(m protoreflect.Message, depth int) {
	var fds []protoreflect.FieldDescriptor
	m.Range(func(fd protoreflect.FieldDescriptor, _ protoreflect.Value) bool {
		fds = append(fds, fd)
		return true
	})
	for _, fd := range fds {
		switch c := s.byte(); {
		case c < 170:
			// Left alone, but what it holds may change.
			switch {
			case fd.IsMap():
			case fd.IsList() && fd.Kind() == protoreflect.MessageKind:
				l := m.Mutable(fd).List()
				for j := 0; j < l.Len(); j++ {
					s.mutate(l.Get(j).Message(), depth+1)
				}
			case !fd.IsList() && fd.Kind() == protoreflect.MessageKind:
				s.mutate(m.Mutable(fd).Message(), depth+1)
			}
		case c < 195:
			m.Clear(fd)
		case c < 225:
			switch {
			case fd.IsMap():
			case fd.IsList():
				l := m.Mutable(fd).List()
				switch s.byte() % 3 {
				case 0:
					l.Truncate(l.Len() / 2)
				case 1:
					if l.Len() > 0 {
						l.Append(l.Get(l.Len() - 1))
					}
				default:
					l.Truncate(0)
				}
			case fd.Kind() == protoreflect.MessageKind:
				sub := m.NewField(fd).Message()
				if depth < maxDepth {
					s.fill(sub, depth+1, -1)
				}
				m.Set(fd, protoreflect.ValueOfMessage(sub))
			default:
				m.Set(fd, s.number(fd))
			}
		}
	}
	// A field the answer left unset may be set.
	if s.byte() > 240 && depth < maxDepth {
		s.fill(m, depth+1, -1)
	}
}

// allowed says whether a case's outcome is one an arbitrary answer may
// lead to: a verdict, a skip, or the SUT's own protocol error — never a
// harness error such as "conform bug: the case panicked".
func allowed(c reports.CaseResult) bool {
	switch c.Outcome {
	case reports.Pass, reports.Fail, reports.Warn, reports.Info, reports.Skip:
		return true
	case reports.Error:
		return c.ErrorKind == reports.KindProtocol
	}
	return false
}

// hostileHello is the Hello of the hostile SUT: every codec profile, and a
// TLV depth bound drawn from the input's first byte (none, the smallest,
// the reference's, an edge).
func hostileHello(b byte) *conformpb.Hello {
	depths := []uint32{64, 0, 1, 2, 64, 200, 1 << 16, 1<<16 + 1, math.MaxUint32}
	return &conformpb.Hello{Implementation: "hostile", Profiles: codecSuites,
		Bounds: &conformpb.Bounds{TlvMaxDepth: depths[int(b)%len(depths)]}}
}

// FuzzCasesAgainstArbitraryAnswers runs a codec case against a SUT whose
// every answer is a well-formed Response of the op asked, with contents
// from the fuzz input, and requires the case to end in bounded time and
// memory as a verdict, a skip or the SUT's protocol error, its evidence in
// protocol terms (evidence.Check). The input's first two bytes choose the
// case, the third the Hello's TLV depth bound; the seed corpus runs every
// codec case four times, twice answered from the reference's answers
// changed, twice from nothing.
func FuzzCasesAgainstArbitraryAnswers(f *testing.F) {
	cs := codecCases(f)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range cs {
		for k := range 4 {
			// Answers built from nothing, then the reference's changed,
			// with choices from a seeded source, under several Hellos.
			seed := []byte{byte(i >> 8), byte(i), byte(r.IntN(9)), byte(k % 2)}
			for range 512 {
				seed = append(seed, byte(r.Uint32()))
			}
			f.Add(seed)
		}
	}
	ref := suites.Default().Reference()
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 3 {
			return
		}
		c := cs[int(binary.BigEndian.Uint16(data))%len(cs)]
		client := &hostile{src: &source{data: data[3:], budget: answerBudget}, hello: hostileHello(data[2]), ref: ref}
		done := make(chan *reports.Record, 1)
		before := allocated()
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
			defer cancel()
			done <- runner.Run(ctx, runner.Config{Spec: "hostile", Client: client, Cases: []cases.Case{c}, Seed: 1, Timeout: time.Minute})
		}()
		var rec *reports.Record
		select {
		case rec = <-done:
		case <-time.After(hangGuard + 30*time.Second):
			t.Fatalf("%s: still running after %s against arbitrary answers", c.ID, hangGuard)
		}
		if n := allocated() - before; n > maxCaseAlloc {
			t.Errorf("%s: allocated %d MiB against arbitrary answers (bound %d MiB)", c.ID, n>>20, maxCaseAlloc>>20)
		}
		for _, r := range rec.Cases {
			if !allowed(r) {
				t.Errorf("%s ended %s (%s): %s", r.ID, r.Outcome, r.ErrorKind, r.Message)
			}
			checkEvidence(t, "arbitrary answers", r)
			if r.ErrorKind == reports.KindInterrupted {
				t.Errorf("%s: interrupted by the hang guard", r.ID)
			}
		}
	})
}

// allocated returns the bytes the process has allocated on the heap so far.
func allocated() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}
