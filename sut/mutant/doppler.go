package mutant

import (
	"context"
	"encoding/binary"
	"errors"
	"math/bits"

	"github.com/conform-suite/conform/ref/doppler"
	"github.com/conform-suite/conform/ref/doppler/dpnats"
	"github.com/conform-suite/conform/sut/impl"
)

// dopplerMutants are every doppler mutant: the ones issue 6 lists, the
// further failure modes that give each remaining MUST case a bug to catch,
// and the ones only the live cases can see.
var dopplerMutants = append(append(append([]Mutant(nil), dopplerListed...), dopplerFurther...), dopplerLiveMutants...)

// dopplerListed are the failure modes doppler-streaming names (§3, §4, §7)
// and issue 6 lists.
var dopplerListed = []Mutant{
	dpCheckMutant("magic-only-v1", "checks the magic and nothing else, as v1 did, so a header claiming more than its message is accepted (doppler §3)",
		dpBugCheck{magicOnly: true}),
	dpCheckMutant("unknown-flags-ignored", "ignores flag bits outside DP_FLAG_KNOWN instead of refusing them (doppler §3)",
		dpBugCheck{ignoreFlags: true}),
	dpCheckMutant("payload-bytes-unchecked", "never compares payload_bytes with the length the transport reports (doppler §3, check 4)",
		dpBugCheck{noPayload: true}),
	dpCheckMutant("count-unchecked", "never compares num_samples × element size with payload_bytes (doppler §3, check 5)",
		dpBugCheck{noCount: true}),
	{
		Name: "magic-as-char8", Suite: "doppler",
		Bug: "compares and writes the magic as the char[8] \"DPLRSTRM\", which reads the same in either order and detects no endianness (doppler §3)",
		apply: func(im *impl.Impl) {
			im.Doppler.Check = dpBugCheck{char8: true}.check
			im.Doppler.AppendHeader = dpBugEncoder{char8: true}.append
		},
	},
	dpReasmMutant("other-sequence-accepted", "accepts a chunk of another sequence into the frame in progress (doppler §4)",
		dpBugReasm{anySequence: true}),
	dpReasmMutant("repeated-index-appended", "appends a repeated chunk index a second time instead of ignoring it (doppler §4)",
		dpBugReasm{appendRepeats: true}),
	{
		Name: "chunks-split-mid-element", Suite: "doppler",
		Bug: "cuts chunks at max_payload less header and chunk block without rounding down to whole elements (doppler §4)",
		apply: func(im *impl.Impl) {
			c := dpBugChunker{midElement: true}
			im.Doppler.Chunk = c.chunk
			im.Doppler.NewSender = dpSenderWith(dpSenderCfg{chunk: c.chunk})
		},
	},
	dpSenderMutant("sequence-per-chunk", "consumes one sequence number per chunk instead of one per logical frame (doppler §7)",
		dpSenderCfg{perChunk: true}),
}

// dopplerFurther are failure modes beyond issue 6's list, one or more for
// each MUST case the listed ones leave uncaught.
var dopplerFurther = []Mutant{
	dpCheckMutant("every-mismatch-cross-endian", "reports any magic that does not match as cross-endian, even one that matches in neither order (doppler §3)",
		dpBugCheck{allCrossEndian: true}),
	{
		Name: "format-packed-big-endian", Suite: "doppler",
		Bug: "packs the BLUE code with its first character in the high byte, reading and writing \"CF\" as 0x4346 (doppler §3)",
		apply: func(im *impl.Impl) {
			im.Doppler.Check = dpBugCheck{formatSwapped: true}.check
			im.Doppler.AppendHeader = dpBugEncoder{formatSwapped: true}.append
		},
	},
	dpCheckMutant("raw-bytes-refused", "knows only the five sample formats and refuses the raw-bytes face's \"SB\" (RECONSTRUCTED §3)",
		dpBugCheck{rawRefused: true}),
	dpCheckMutant("telemetry-record-8-bytes", "counts telemetry records as 8 bytes instead of 16 (doppler §3)",
		dpBugCheck{tlmElem: 8}),
	dpCheckMutant("telemetry-any-format", "accepts a telemetry frame whatever its format (doppler §3)",
		dpBugCheck{tlmAnyFormat: true}),
	dpCheckMutant("minor-version-refused", "refuses any version but 2.0, minor versions included (RECONSTRUCTED §3)",
		dpBugCheck{minorZero: true}),
	dpCheckMutant("count-product-wraps", "computes num_samples × element size in 64 bits, so a product that wraps can match (RECONSTRUCTED §3)",
		dpBugCheck{wrapCount: true}),
	dpCheckMutant("unknown-kind-read-as-iq", "reads any kind other than TLM as IQ instead of refusing it (RECONSTRUCTED §3)",
		dpBugCheck{kindAsIQ: true}),
	dpCheckMutant("short-message-not-doppler", "reports a message shorter than a header as not doppler rather than short (RECONSTRUCTED §3)",
		dpBugCheck{shortNotDoppler: true}),
	dpCheckMutant("chunk-block-not-subtracted", "compares payload_bytes with the length less the header alone, forgetting the chunk block of a CHUNKED message (doppler §3, §4)",
		dpBugCheck{noChunkBlock: true}),
	{
		Name: "refusals-coded-dp-err", Suite: "doppler",
		Bug: "reports a refused header as DP_ERR (-1) instead of DP_ERR_INVALID (RECONSTRUCTED §3)",
		apply: func(im *impl.Impl) {
			im.Doppler.CodeOf = func(v doppler.Verdict) doppler.Code {
				if v == doppler.Accepted {
					return doppler.OK
				}
				return doppler.ErrGeneric
			}
		},
	},
	{
		Name: "data-rep-always-eeei", Suite: "doppler",
		Bug:   "writes data_rep \"EEEI\" whatever its byte order (doppler §3)",
		apply: func(im *impl.Impl) { im.Doppler.AppendHeader = dpBugEncoder{dataRepLittle: true}.append },
	},
	dpReasmMutant("frame-totals-not-set", "hands over a reassembled frame with its last chunk's header: CHUNKED set and that chunk's counts (doppler §4)",
		dpBugReasm{lastHeader: true}),
	dpReasmMutant("chunk-count-not-compared", "takes a chunk whose chunk_count disagrees with its frame's as if it agreed (doppler §4)",
		dpBugReasm{noCountCompare: true}),
	dpReasmMutant("chunks-not-checked", "accepts a chunk that fails §3's checks, trusting its length over its header (doppler §4)",
		dpBugReasm{trustChunks: true}),
	dpReasmMutant("complete-on-last-index", "hands a frame over when its last index arrives, holes zero-filled, instead of when every index has (doppler §4)",
		dpBugReasm{completeOnLast: true}),
	dpReasmMutant("chunks-in-arrival-order", "joins a frame's chunks in the order they arrived, not by chunk_index (RECONSTRUCTED §3)",
		dpBugReasm{arrivalOrder: true}),
	dpReasmMutant("frame-redelivered-on-repeat", "hands a frame over again when one of its chunks is redelivered after it completed (doppler §4)",
		dpBugReasm{redeliver: true}),
	dpReasmMutant("chunk-block-stripped-always", "strips a chunk block's 24 bytes from every message, unchunked ones too (doppler §3, §4)",
		dpBugReasm{stripAlways: true}),
	{
		Name: "chunk-counts-are-totals", Suite: "doppler",
		Bug: "writes the frame's totals into every chunk's num_samples and payload_bytes instead of the chunk's own counts (RECONSTRUCTED §3)",
		apply: func(im *impl.Impl) {
			c := dpBugChunker{totalsInChunks: true}
			im.Doppler.Chunk = c.chunk
			im.Doppler.NewSender = dpSenderWith(dpSenderCfg{chunk: c.chunk})
		},
	},
	{
		Name: "chunks-at-max-payload", Suite: "doppler",
		Bug: "chunks a frame whose header and payload exactly fill max_payload (RECONSTRUCTED §3)",
		apply: func(im *impl.Impl) {
			c := dpBugChunker{chunkAtMax: true}
			im.Doppler.Chunk = c.chunk
			im.Doppler.NewSender = dpSenderWith(dpSenderCfg{chunk: c.chunk})
		},
	},
	{
		Name: "push-never-refuses", Suite: "doppler",
		Bug: "lets PUSH send a frame larger than max_payload instead of refusing it with DP_ERR_TOO_LARGE (doppler §4)",
		apply: func(im *impl.Impl) {
			im.Doppler.CheckPush = func(uint64, int) error { return nil }
			im.Doppler.NewSender = dpSenderWith(dpSenderCfg{pushAnySize: true})
		},
	},
	dpSenderMutant("sequence-from-one", "numbers a socket's frames from 1 instead of 0 (doppler §7)",
		dpSenderCfg{fromOne: true}),
	dpSenderMutant("sequence-shared-across-sockets", "keeps one sequence counter for every socket instead of one per socket (doppler §7)",
		dpSenderCfg{shared: true}),
}

// dopplerLiveMutants are failure modes only a socket on a real broker
// shows: the names derived from an endpoint, the raw-bytes face, the work
// queue's acks, the state a drain leaves.
var dopplerLiveMutants = []Mutant{
	{
		Name: "names-misderived", Suite: "doppler",
		Bug: "derives <base>.pub.CF32, <base>.rpc, <base>.work.CF32 and the stream DPWORK_<base> instead of RECONSTRUCTED §3's names (doppler §5)",
		apply: func(im *impl.Impl) {
			im.Doppler.Names = func(ep doppler.Endpoint) dpnats.Names { return dpBugNames{ep} }
		},
	},
	{
		Name: "raw-face-as-ci8", Suite: "doppler",
		Bug:   "sends the raw-bytes face of REQ/REP as CI8 samples instead of format \"SB\" bytes, so an odd byte count cannot be sent (doppler §2)",
		apply: func(im *impl.Impl) { im.Doppler.RawType = doppler.TypeCI8 },
	},
	{
		Name: "pull-never-acks", Suite: "doppler",
		Bug: "a PULL worker reports its frames acked without acking them, so the work queue keeps them and redelivers them (doppler §6)",
		apply: func(im *impl.Impl) {
			im.Doppler.Ack = func(context.Context, *dpnats.Delivery) error { return nil }
		},
	},
	{
		Name: "closed-reported-as-transport", Suite: "doppler",
		Bug: "reports a send on a drained socket as a transport failure, DP_ERR, instead of the state DP_ERR_CLOSED (doppler §6b)",
		apply: func(im *impl.Impl) {
			im.Doppler.SendError = func(err error) error {
				if errors.Is(err, doppler.ErrClosed) {
					return doppler.ErrGeneric
				}
				return err
			}
		},
	},
}

// dpBugNames derives an endpoint's names wrongly: the type's name for its
// subject token, another request subject and another stream name. The
// wildcards stay right, so a subscriber of every type still hears.
type dpBugNames struct{ ep doppler.Endpoint }

func (n dpBugNames) PubSubject(t doppler.Type) string  { return n.ep.Base + ".pub." + t.String() }
func (n dpBugNames) PubWildcard() string               { return n.ep.PubWildcard() }
func (n dpBugNames) ReqSubject() string                { return n.ep.Base + ".rpc" }
func (n dpBugNames) WorkSubject(t doppler.Type) string { return n.ep.Base + ".work." + t.String() }
func (n dpBugNames) WorkWildcard() string              { return n.ep.WorkWildcard() }
func (n dpBugNames) StreamName() string                { return "DPWORK_" + n.ep.Base }
func (n dpBugNames) ConsumerName() string              { return n.ep.ConsumerName() }

func dpCheckMutant(name, bug string, b dpBugCheck) Mutant {
	return Mutant{Name: name, Suite: "doppler", Bug: bug, apply: func(im *impl.Impl) { im.Doppler.Check = b.check }}
}

func dpReasmMutant(name, bug string, cfg dpBugReasm) Mutant {
	return Mutant{Name: name, Suite: "doppler", Bug: bug, apply: func(im *impl.Impl) {
		im.Doppler.NewReassembler = func(o doppler.Order, _ func([]byte, doppler.Order) doppler.Verdict) impl.Reassembler {
			r := cfg
			r.ref = &doppler.Reassembler{Order: o}
			r.order = o
			return &r
		}
	}}
}

func dpSenderMutant(name, bug string, cfg dpSenderCfg) Mutant {
	return Mutant{Name: name, Suite: "doppler", Bug: bug, apply: func(im *impl.Impl) { im.Doppler.NewSender = dpSenderWith(cfg) }}
}

// dpBugCheck is the receiver's header check with switchable bugs. With every
// switch off it judges as doppler.CheckLength does.
type dpBugCheck struct {
	magicOnly       bool // v1: accept whatever carries the magic
	ignoreFlags     bool
	noPayload       bool
	noCount         bool
	char8           bool // the magic compared as bytes, in no order
	allCrossEndian  bool
	formatSwapped   bool
	rawRefused      bool
	tlmElem         uint64 // 0: 16
	tlmAnyFormat    bool
	minorZero       bool
	wrapCount       bool
	kindAsIQ        bool
	shortNotDoppler bool
	noChunkBlock    bool
}

func (b dpBugCheck) check(prefix []byte, msgLen uint64, o doppler.Order) doppler.Verdict {
	if msgLen < doppler.HeaderSize || len(prefix) < doppler.HeaderSize {
		if b.shortNotDoppler {
			return doppler.NotDoppler
		}
		return doppler.ShortMessage
	}
	h, _ := doppler.DecodeHeader(prefix, o)
	if b.char8 {
		if string(prefix[:8]) != "DPLRSTRM" {
			return doppler.NotDoppler
		}
	} else {
		switch h.Magic {
		case doppler.Magic:
		case bits.ReverseBytes64(doppler.Magic):
			return doppler.CrossEndian
		default:
			if b.allCrossEndian {
				return doppler.CrossEndian
			}
			return doppler.NotDoppler
		}
	}
	if b.magicOnly {
		return doppler.Accepted
	}
	if h.VersionMajor != doppler.VersionMajor || (b.minorZero && h.VersionMinor != 0) {
		return doppler.OtherMajor
	}
	if !b.ignoreFlags && h.Flags&^doppler.FlagKnown != 0 {
		return doppler.UnknownFlags
	}
	overhead := uint64(doppler.HeaderSize)
	if h.Chunked() && !b.noChunkBlock {
		overhead += doppler.ChunkBlockSize
		if msgLen < overhead {
			return doppler.ShortChunkBlock
		}
	}
	if !b.noPayload && h.PayloadBytes != msgLen-overhead {
		return doppler.PayloadMismatch
	}
	kind := h.Kind
	if b.kindAsIQ && kind != doppler.KindTLM {
		kind = doppler.KindIQ
	}
	if kind != doppler.KindIQ && kind != doppler.KindTLM {
		return doppler.UnknownKind
	}
	format := h.Format
	if b.formatSwapped {
		format = doppler.Format(bits.ReverseBytes16(uint16(format)))
	}
	e, ok := doppler.ElemSize(kind, format)
	elem := uint64(e)
	switch {
	case kind == doppler.KindTLM && (ok || b.tlmAnyFormat):
		elem, ok = 16, true
		if b.tlmElem != 0 {
			elem = b.tlmElem
		}
	case format == doppler.FormatSB && b.rawRefused:
		ok = false
	}
	if !ok {
		return doppler.UnknownFormat
	}
	if b.noCount {
		return doppler.Accepted
	}
	if b.wrapCount {
		if h.NumSamples*elem != h.PayloadBytes {
			return doppler.CountMismatch
		}
		return doppler.Accepted
	}
	if hi, lo := bits.Mul64(h.NumSamples, elem); hi != 0 || lo != h.PayloadBytes {
		return doppler.CountMismatch
	}
	return doppler.Accepted
}

// dpBugEncoder writes headers with switchable bugs.
type dpBugEncoder struct {
	char8         bool
	formatSwapped bool
	dataRepLittle bool
}

func (b dpBugEncoder) append(dst []byte, o doppler.Order, h doppler.Header) []byte {
	if b.formatSwapped {
		h.Format = doppler.Format(bits.ReverseBytes16(uint16(h.Format)))
	}
	if b.dataRepLittle {
		h.DataRep = [4]byte{'E', 'E', 'E', 'I'}
	}
	n := len(dst)
	dst = doppler.AppendHeader(dst, o, h)
	if b.char8 {
		copy(dst[n:n+8], "DPLRSTRM")
	}
	return dst
}

// dpBugReasm wraps the reference reassembly with switchable bugs. With every
// switch off it is the reference.
type dpBugReasm struct {
	anySequence    bool // a chunk of another sequence joins the frame
	appendRepeats  bool // a repeated index is appended again
	lastHeader     bool // the delivered header is the last chunk's
	noCountCompare bool // chunk_count disagreement ignored
	trustChunks    bool // a chunk failing check 4 or 5 is repaired and taken
	completeOnLast bool // the last index completes the frame
	arrivalOrder   bool // chunks joined as they arrived
	redeliver      bool // a repeat after completion delivers the frame again
	stripAlways    bool // 88 bytes stripped from every message

	ref   *doppler.Reassembler
	order doppler.Order

	// The frame in progress as this wrapper sees it.
	active   bool
	seq      uint64
	count    uint32
	size     int
	byIndex  map[uint32][][]byte
	arrivals [][]byte
	last     doppler.Header
	// The frame last delivered from chunks, for redeliver.
	doneSeq uint64
	done    *doppler.Frame
}

func (r *dpBugReasm) Pending() (uint64, bool) { return r.ref.Pending() }

func (r *dpBugReasm) Add(msg []byte) (doppler.Frame, bool, error) {
	o := r.order
	h, herr := doppler.DecodeHeader(msg, o)
	chunked := herr == nil && h.Chunked() && len(msg) >= doppler.HeaderSize+doppler.ChunkBlockSize
	if chunked && doppler.Check(msg, o) == doppler.Accepted || chunked && r.trustChunks && h.Magic == doppler.Magic {
		c, _ := doppler.DecodeChunkBlock(msg[doppler.HeaderSize:], o)
		own := msg[doppler.HeaderSize+doppler.ChunkBlockSize:]
		cp := append([]byte(nil), msg...)
		changed := false
		if r.trustChunks && doppler.Check(msg, o) != doppler.Accepted {
			elem, _ := doppler.ElemSize(h.Kind, h.Format)
			if elem > 0 {
				dpPutU64(cp[48:], o, uint64(len(own)))
				dpPutU64(cp[40:], o, uint64(len(own)/elem))
				changed = true
			}
		}
		if r.active && h.Sequence != r.seq && r.anySequence {
			dpPutU64(cp[24:], o, r.seq)
			h.Sequence, changed = r.seq, true
		}
		if r.active && h.Sequence == r.seq && c.Count != r.count && r.noCountCompare {
			dpPutU32(cp[doppler.HeaderSize+4:], o, r.count)
			c.Count, changed = r.count, true
		}
		if changed {
			msg = cp
		}
		if r.redeliver && r.done != nil && h.Sequence == r.doneSeq {
			return *r.done, true, nil
		}
		if !r.active || h.Sequence != r.seq {
			r.active, r.seq, r.count, r.size = true, h.Sequence, c.Count, 0
			r.byIndex, r.arrivals = map[uint32][][]byte{}, nil
		}
		if _, seen := r.byIndex[c.Index]; !seen || r.appendRepeats {
			r.byIndex[c.Index] = append(r.byIndex[c.Index], own)
			if !seen {
				r.arrivals = append(r.arrivals, own)
			}
		}
		if c.Index+1 < c.Count && r.size == 0 {
			r.size = len(own)
		}
		r.last = h
		if r.completeOnLast && c.Index+1 == c.Count {
			if _, ok := r.ref.Pending(); ok && len(r.byIndex) < int(c.Count) && r.size > 0 {
				_ = r.ref.Abandon()
				payload := make([]byte, int(c.TotalBytes))
				for i, parts := range r.byIndex {
					copy(payload[int(i)*r.size:], parts[0])
				}
				r.active = false
				hd := h
				hd.Flags &^= doppler.FlagChunked
				hd.NumSamples, hd.PayloadBytes = c.TotalSamples, c.TotalBytes
				return doppler.Frame{Header: hd, Payload: payload}, true, nil
			}
		}
	}
	if r.stripAlways && herr == nil && !h.Chunked() && doppler.Check(msg, o) == doppler.Accepted {
		f, ok, err := r.ref.Add(msg)
		if ok {
			if len(msg) >= doppler.HeaderSize+doppler.ChunkBlockSize {
				f.Payload = msg[doppler.HeaderSize+doppler.ChunkBlockSize:]
			} else {
				f.Payload = nil
			}
		}
		return f, ok, err
	}
	f, ok, err := r.ref.Add(msg)
	if ok && chunked && r.active {
		if r.appendRepeats || r.arrivalOrder {
			var payload []byte
			if r.arrivalOrder {
				for _, p := range r.arrivals {
					payload = append(payload, p...)
				}
			} else {
				for i := uint32(0); i < r.count; i++ {
					for _, p := range r.byIndex[i] {
						payload = append(payload, p...)
					}
				}
			}
			f.Payload = payload
		}
		if r.lastHeader {
			f.Header = r.last
		}
		r.active = false
		done := f
		r.done, r.doneSeq = &done, f.Header.Sequence
	}
	return f, ok, err
}

func dpPutU64(b []byte, o doppler.Order, v uint64) {
	if o == doppler.BigEndian {
		binary.BigEndian.PutUint64(b, v)
		return
	}
	binary.LittleEndian.PutUint64(b, v)
}

func dpPutU32(b []byte, o doppler.Order, v uint32) {
	if o == doppler.BigEndian {
		binary.BigEndian.PutUint32(b, v)
		return
	}
	binary.LittleEndian.PutUint32(b, v)
}

// dpBugChunker cuts frames with switchable bugs. With every switch off it
// cuts as doppler.Chunk does.
type dpBugChunker struct {
	midElement     bool // chunk size not rounded down to whole elements
	totalsInChunks bool // each chunk's header carries the frame's totals
	chunkAtMax     bool // a frame exactly filling max_payload is chunked
}

func (b dpBugChunker) chunk(f doppler.Frame, maxPayload int, o doppler.Order) ([][]byte, error) {
	total := len(f.Payload)
	fits := doppler.HeaderSize+total <= maxPayload
	if b.chunkAtMax {
		fits = doppler.HeaderSize+total < maxPayload
	}
	elem, ok := doppler.ElemSize(f.Header.Kind, f.Header.Format)
	room := maxPayload - doppler.HeaderSize - doppler.ChunkBlockSize
	if fits || !ok || room < elem {
		return doppler.Chunk(f, maxPayload, o)
	}
	size := room / elem * elem
	if b.midElement {
		size = room
	}
	count := (total + size - 1) / size
	var msgs [][]byte
	for i := range count {
		part := f.Payload[i*size : min((i+1)*size, total)]
		h := f.Header
		h.Flags |= doppler.FlagChunked
		h.NumSamples, h.PayloadBytes = uint64(len(part)/elem), uint64(len(part))
		if b.totalsInChunks {
			h.NumSamples, h.PayloadBytes = f.Header.NumSamples, f.Header.PayloadBytes
		}
		m := doppler.AppendHeader(nil, o, h)
		m = doppler.AppendChunkBlock(m, o, doppler.ChunkBlock{Index: uint32(i), Count: uint32(count),
			TotalSamples: f.Header.NumSamples, TotalBytes: f.Header.PayloadBytes})
		msgs = append(msgs, append(m, part...))
	}
	return msgs, nil
}

// dpSenderCfg configures a socket's sender with switchable bugs. With every
// switch off and chunk nil it sends as doppler.Sender does.
type dpSenderCfg struct {
	chunk       func(doppler.Frame, int, doppler.Order) ([][]byte, error)
	perChunk    bool
	fromOne     bool
	shared      bool
	pushAnySize bool
}

func dpSenderWith(cfg dpSenderCfg) func(doppler.Order, int) impl.DopplerSender {
	if cfg.chunk == nil {
		cfg.chunk = doppler.Chunk
	}
	shared := new(uint64) // per Impl: one counter every socket of it shares
	return func(o doppler.Order, maxPayload int) impl.DopplerSender {
		if maxPayload <= 0 {
			maxPayload = doppler.DefaultMaxPayload
		}
		s := &dpBugSender{cfg: cfg, order: o, maxPayload: maxPayload, next: new(uint64)}
		if cfg.shared {
			s.next = shared
		}
		if cfg.fromOne {
			*s.next = 1
		}
		return s
	}
}

type dpBugSender struct {
	cfg        dpSenderCfg
	order      doppler.Order
	maxPayload int
	next       *uint64
}

func (s *dpBugSender) Publish(f doppler.Frame) ([][]byte, error) {
	f.Header.Sequence = *s.next
	msgs, err := s.cfg.chunk(f, s.maxPayload, s.order)
	if err != nil {
		return nil, err
	}
	if s.cfg.perChunk {
		for i, m := range msgs {
			dpPutU64(m[24:], s.order, *s.next+uint64(i))
		}
		*s.next += uint64(len(msgs))
		return msgs, nil
	}
	*s.next++
	return msgs, nil
}

func (s *dpBugSender) NextSequence() uint64 { return *s.next }

func (s *dpBugSender) Send(f doppler.Frame) ([]byte, error) {
	if !s.cfg.pushAnySize {
		if err := doppler.CheckPush(f.Header.PayloadBytes, s.maxPayload); err != nil {
			return nil, err
		}
	}
	f.Header.Sequence = *s.next
	*s.next++
	return f.AppendMessage(nil, s.order), nil
}
