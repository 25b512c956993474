package mutant

import (
	"context"
	"errors"
	"math"
	"math/bits"
	"slices"

	dpcases "github.com/conform-suite/conform/cases/doppler"
	"github.com/conform-suite/conform/ref/doppler"
	"github.com/conform-suite/conform/ref/doppler/dpnats"
	"github.com/conform-suite/conform/sut/impl"
)

// dopplerMutants are every doppler mutant: the ones issue 6 lists, the
// further failure modes that give each remaining MUST case a bug to catch,
// the ones only the live cases can see, and the bugs issue 15 planted.
var dopplerMutants = slices.Concat(dopplerListed, dopplerFurther, dopplerLiveMutants, dopplerPlanted, dopplerPlantedLive)

// dopplerListed are the failure modes doppler-streaming names (§3, §4, §7)
// and issue 6 lists.
var dopplerListed = []Mutant{
	dpVerdictMutant("magic-only-v1", "checks the magic and nothing else, as v1 did, so a header claiming more than its message is accepted (doppler §3)",
		func(_ doppler.Header, v doppler.Verdict) doppler.Verdict {
			switch v {
			case doppler.ShortMessage, doppler.NotDoppler, doppler.CrossEndian:
				return v // the magic's own verdicts
			}
			return doppler.Accepted
		}),
	dpHeaderMutant("unknown-flags-ignored", "ignores flag bits outside DP_FLAG_KNOWN instead of refusing them (doppler §3)",
		func(h *doppler.Header) { h.Flags &= doppler.FlagKnown }),
	{
		Name: "payload-bytes-unchecked", Suite: "doppler",
		Bug: "never compares payload_bytes with the length the transport reports (doppler §3, check 4)",
		apply: func(im *impl.Impl) {
			next := im.Doppler.Check
			im.Doppler.Check = func(prefix []byte, msgLen uint64, o doppler.Order) doppler.Verdict {
				// Report the length payload_bytes claims, so that check 4
				// passes whatever it is; the chunk block must still fit.
				// A claim within 88 bytes of 2^64 cannot be reported and
				// is judged as the reference judges it.
				if h, err := doppler.DecodeHeader(prefix, o); err == nil && msgLen >= doppler.HeaderSize {
					overhead := uint64(doppler.HeaderSize)
					if h.Chunked() {
						overhead += doppler.ChunkBlockSize
					}
					if msgLen >= overhead && h.PayloadBytes <= math.MaxUint64-overhead {
						msgLen = h.PayloadBytes + overhead
					}
				}
				return next(prefix, msgLen, o)
			}
		},
	},
	dpVerdictMutant("count-unchecked", "never compares num_samples × element size with payload_bytes (doppler §3, check 5)",
		func(_ doppler.Header, v doppler.Verdict) doppler.Verdict {
			if v == doppler.CountMismatch { // the last check
				return doppler.Accepted
			}
			return v
		}),
	{
		Name: "magic-as-char8", Suite: "doppler",
		Bug: "compares and writes the magic as the char[8] \"DPLRSTRM\", which reads the same in either order and detects no endianness (doppler §3)",
		apply: func(im *impl.Impl) {
			next := im.Doppler.Check
			im.Doppler.Check = func(prefix []byte, msgLen uint64, o doppler.Order) doppler.Verdict {
				if msgLen >= doppler.HeaderSize && len(prefix) >= doppler.HeaderSize {
					if string(prefix[:8]) != magicChars {
						return doppler.NotDoppler
					}
					prefix = withHeader(prefix, o, func(h *doppler.Header) { h.Magic = doppler.Magic })
				}
				return next(prefix, msgLen, o)
			}
			appendHeader := im.Doppler.AppendHeader
			im.Doppler.AppendHeader = func(dst []byte, o doppler.Order, h doppler.Header) []byte {
				n := len(dst)
				dst = appendHeader(dst, o, h)
				copy(dst[n:n+8], magicChars)
				return dst
			}
		},
	},
	dpReasmMutant("other-sequence-accepted", "accepts a chunk of another sequence into the frame in progress (doppler §4)",
		func(r impl.Reassembler, o doppler.Order) impl.Reassembler { return &otherSequenceJoins{r, o} }),
	dpReasmMutant("repeated-index-appended", "appends a repeated chunk index a second time instead of ignoring it (doppler §4)",
		func(r impl.Reassembler, o doppler.Order) impl.Reassembler {
			return &joinsParts{parts: parts{Reassembler: r, o: o}, repeats: true}
		}),
	dpChunkerMutant("chunks-split-mid-element", "cuts chunks at max_payload less header and chunk block without rounding down to whole elements (doppler §4)",
		doppler.Chunker{ChunkSize: func(maxPayload, elem int) (int, error) {
			if _, err := doppler.ChunkSize(maxPayload, elem); err != nil {
				return 0, err
			}
			return doppler.ChunkSize(maxPayload, 1) // what is left, in bytes
		}}),
	dpSenderMutant("sequence-per-chunk", "consumes one sequence number per chunk instead of one per logical frame (doppler §7)",
		func(s impl.DopplerSender, o doppler.Order, _ *uint64) impl.DopplerSender {
			return &numbersMessages{DopplerSender: s, o: o, next: new(uint64), perMessage: true}
		}),
}

// dopplerFurther are failure modes beyond issue 6's list, one or more for
// each MUST case the listed ones leave uncaught.
var dopplerFurther = []Mutant{
	dpVerdictMutant("every-mismatch-cross-endian", "reports any magic that does not match as cross-endian, even one that matches in neither order (doppler §3)",
		func(_ doppler.Header, v doppler.Verdict) doppler.Verdict {
			if v == doppler.NotDoppler {
				return doppler.CrossEndian
			}
			return v
		}),
	{
		Name: "format-packed-big-endian", Suite: "doppler",
		Bug: "packs the BLUE code with its first character in the high byte, reading and writing \"CF\" as 0x4346 (doppler §3)",
		apply: func(im *impl.Impl) {
			swap := func(h *doppler.Header) { h.Format = doppler.Format(bits.ReverseBytes16(uint16(h.Format))) }
			dpReadHeaderAs(im, swap)
			appendHeader := im.Doppler.AppendHeader
			im.Doppler.AppendHeader = func(dst []byte, o doppler.Order, h doppler.Header) []byte {
				swap(&h)
				return appendHeader(dst, o, h)
			}
		},
	},
	dpVerdictMutant("raw-bytes-refused", "knows only the five sample formats and refuses the raw-bytes face's \"SB\" (reconstructed§doppler-formats#2)",
		func(h doppler.Header, v doppler.Verdict) doppler.Verdict {
			// Past the format check, which precedes only the count's.
			if (v == doppler.Accepted || v == doppler.CountMismatch) && h.Kind != doppler.KindTLM && h.Format == doppler.FormatSB {
				return doppler.UnknownFormat
			}
			return v
		}),
	dpVerdictMutant("telemetry-record-8-bytes", "counts telemetry records as 8 bytes instead of 16 (doppler §3)",
		func(h doppler.Header, v doppler.Verdict) doppler.Verdict {
			// Past the format check, the count is compared with 8-byte
			// records.
			if (v == doppler.Accepted || v == doppler.CountMismatch) && h.Kind == doppler.KindTLM {
				if hi, lo := bits.Mul64(h.NumSamples, 8); hi != 0 || lo != h.PayloadBytes {
					return doppler.CountMismatch
				}
				return doppler.Accepted
			}
			return v
		}),
	dpHeaderMutant("telemetry-any-format", "accepts a telemetry frame whatever its format (doppler §3)",
		func(h *doppler.Header) {
			if h.Kind == doppler.KindTLM {
				h.Format = doppler.TypeTLM.Format()
			}
		}),
	dpVerdictMutant("minor-version-refused", "refuses any version but 2.0, minor versions included (reconstructed§doppler-header#3)",
		func(h doppler.Header, v doppler.Verdict) doppler.Verdict {
			switch v {
			case doppler.ShortMessage, doppler.NotDoppler, doppler.CrossEndian, doppler.OtherMajor:
				return v // refused before the version is compared
			}
			if h.VersionMinor != 0 {
				return doppler.OtherMajor
			}
			return v
		}),
	dpVerdictMutant("count-product-wraps", "computes num_samples × element size in 64 bits, so a product that wraps can match (reconstructed§doppler-checks#3)",
		func(h doppler.Header, v doppler.Verdict) doppler.Verdict {
			if elem, ok := doppler.ElemSize(h.Kind, h.Format); v == doppler.CountMismatch && ok && h.NumSamples*uint64(elem) == h.PayloadBytes {
				return doppler.Accepted
			}
			return v
		}),
	dpHeaderMutant("unknown-kind-read-as-iq", "reads any kind other than TLM as IQ instead of refusing it (reconstructed§doppler-header#5)",
		func(h *doppler.Header) {
			if h.Kind != doppler.KindTLM {
				h.Kind = doppler.KindIQ
			}
		}),
	dpVerdictMutant("short-message-not-doppler", "reports a message shorter than a header as not doppler rather than short (reconstructed§doppler-checks#2)",
		func(_ doppler.Header, v doppler.Verdict) doppler.Verdict {
			if v == doppler.ShortMessage {
				return doppler.NotDoppler
			}
			return v
		}),
	dpHeaderMutant("chunk-block-not-subtracted", "compares payload_bytes with the length less the header alone, forgetting the chunk block of a CHUNKED message (doppler §3, §4)",
		func(h *doppler.Header) { h.Flags &^= doppler.FlagChunked }), // CHUNKED counts only in check 4
	{
		Name: "refusals-coded-dp-err", Suite: "doppler",
		Bug: "reports a refused header as DP_ERR (-1) instead of DP_ERR_INVALID (reconstructed§doppler-checks#1)",
		apply: func(im *impl.Impl) {
			next := im.Doppler.CodeOf
			im.Doppler.CodeOf = func(v doppler.Verdict) doppler.Code {
				if c := next(v); c != doppler.OK {
					return doppler.ErrGeneric
				}
				return doppler.OK
			}
		},
	},
	{
		Name: "data-rep-always-eeei", Suite: "doppler",
		Bug: "writes data_rep \"EEEI\" whatever its byte order (doppler §3)",
		apply: func(im *impl.Impl) {
			next := im.Doppler.AppendHeader
			im.Doppler.AppendHeader = func(dst []byte, o doppler.Order, h doppler.Header) []byte {
				h.DataRep = [4]byte{'E', 'E', 'E', 'I'}
				return next(dst, o, h)
			}
		},
	},
	dpReasmMutant("frame-totals-not-set", "hands over a reassembled frame with its last chunk's header: CHUNKED set and that chunk's counts (doppler §4)",
		func(r impl.Reassembler, o doppler.Order) impl.Reassembler { return lastChunkHeader{r, o} }),
	dpReasmMutant("chunk-count-not-compared", "takes a chunk whose chunk_count disagrees with its frame's as if it agreed (doppler §4)",
		func(r impl.Reassembler, o doppler.Order) impl.Reassembler {
			return &countUncompared{parts: parts{Reassembler: r, o: o}}
		}),
	dpReasmMutant("chunks-not-checked", "accepts a chunk that fails §3's checks, trusting its length over its header (doppler §4)",
		func(r impl.Reassembler, o doppler.Order) impl.Reassembler { return chunksTrusted{r, o} }),
	dpReasmMutant("complete-on-last-index", "hands a frame over when its last index arrives, holes zero-filled, instead of when every index has (doppler §4)",
		func(r impl.Reassembler, o doppler.Order) impl.Reassembler {
			return &completesOnLast{parts: parts{Reassembler: r, o: o}}
		}),
	dpReasmMutant("chunks-in-arrival-order", "joins a frame's chunks in the order they arrived, not by chunk_index (reconstructed§doppler-chunk#6)",
		func(r impl.Reassembler, o doppler.Order) impl.Reassembler {
			return &joinsParts{parts: parts{Reassembler: r, o: o}, arrival: true}
		}),
	dpReasmMutant("frame-redelivered-on-repeat", "hands a frame over again when one of its chunks is redelivered after it completed (doppler §4)",
		func(r impl.Reassembler, o doppler.Order) impl.Reassembler { return &redelivers{Reassembler: r, o: o} }),
	dpReasmMutant("chunk-block-stripped-always", "strips a chunk block's 24 bytes from every message, unchunked ones too (doppler §3, §4)",
		func(r impl.Reassembler, o doppler.Order) impl.Reassembler { return stripsChunkBlock{r, o} }),
	{
		Name: "chunk-counts-are-totals", Suite: "doppler",
		Bug: "writes the frame's totals into every chunk's num_samples and payload_bytes instead of the chunk's own counts (reconstructed§doppler-chunk#3)",
		apply: func(im *impl.Impl) {
			next := im.Doppler.Chunk
			im.Doppler.Chunk = func(f doppler.Frame, maxPayload int, o doppler.Order) ([][]byte, error) {
				msgs, err := next(f, maxPayload, o)
				if len(msgs) > 1 {
					for i, m := range msgs {
						msgs[i] = withHeader(m, o, func(h *doppler.Header) {
							h.NumSamples, h.PayloadBytes = f.Header.NumSamples, f.Header.PayloadBytes
						})
					}
				}
				return msgs, err
			}
		},
	},
	dpChunkerMutant("chunks-at-max-payload", "chunks a frame whose header and payload exactly fill max_payload (reconstructed§doppler-chunk#4)",
		doppler.Chunker{NeedsChunking: func(payloadBytes uint64, maxPayload int) bool {
			return doppler.NeedsChunking(payloadBytes, maxPayload) || doppler.HeaderSize+payloadBytes == uint64(maxPayload)
		}}),
	{
		Name: "push-never-refuses", Suite: "doppler",
		Bug: "lets PUSH send a frame larger than max_payload instead of refusing it with DP_ERR_TOO_LARGE (doppler §4)",
		apply: func(im *impl.Impl) {
			im.Doppler.CheckPush = func(uint64, int) error { return nil } // the sender sends with it
		},
	},
	dpSenderMutant("sequence-from-one", "numbers a socket's frames from 1 instead of 0 (doppler §7)",
		func(s impl.DopplerSender, o doppler.Order, _ *uint64) impl.DopplerSender {
			one := uint64(1)
			return &numbersMessages{DopplerSender: s, o: o, next: &one}
		}),
	dpSenderMutant("sequence-shared-across-sockets", "keeps one sequence counter for every socket instead of one per socket (doppler §7)",
		func(s impl.DopplerSender, o doppler.Order, shared *uint64) impl.DopplerSender {
			return &numbersMessages{DopplerSender: s, o: o, next: shared}
		}),
}

// dopplerLiveProfile is the profile of the doppler cases that drive a
// socket on a real broker: the only cases that can catch a mutant of the
// sockets alone.
const dopplerLiveProfile = dpcases.LiveProfile

// dopplerLiveMutants are failure modes only a socket on a real broker
// shows: the names derived from an endpoint, the raw-bytes face, the work
// queue's acks, the state a drain leaves.
var dopplerLiveMutants = []Mutant{
	{
		Name: "names-misderived", Suite: "doppler", Profile: dopplerLiveProfile,
		Bug: "derives <base>.pub.CF32, <base>.rpc, <base>.work.CF32 and the stream DPWORK_<base> instead of the pinned names (doppler §5, reconstructed§doppler-subjects)",
		apply: func(im *impl.Impl) {
			im.Doppler.Names = func(ep doppler.Endpoint) dpnats.Names { return dpBugNames{ep} }
		},
	},
	{
		Name: "raw-face-as-ci8", Suite: "doppler", Profile: dopplerLiveProfile,
		Bug:   "sends the raw-bytes face of REQ/REP as CI8 samples instead of format \"SB\" bytes, so an odd byte count cannot be sent (doppler §2)",
		apply: func(im *impl.Impl) { im.Doppler.RawType = doppler.TypeCI8 },
	},
	{
		Name: "pull-never-acks", Suite: "doppler", Profile: dopplerLiveProfile,
		Bug: "a PULL worker reports its frames acked without acking them, so the work queue keeps them and redelivers them (doppler §6)",
		apply: func(im *impl.Impl) {
			im.Doppler.Ack = func(context.Context, *dpnats.Delivery) error { return nil }
		},
	},
	{
		Name: "closed-reported-as-transport", Suite: "doppler", Profile: dopplerLiveProfile,
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

// magicChars is the magic as the char[8] a v1 peer compared: the bytes
// Magic has in little-endian order.
const magicChars = "DPLRSTRM"

// dpVerdictMutant is the mutant whose header check is the reference's with
// its verdict changed by change, given the header as read.
func dpVerdictMutant(name, bug string, change func(h doppler.Header, v doppler.Verdict) doppler.Verdict) Mutant {
	return Mutant{Name: name, Suite: "doppler", Bug: bug, apply: func(im *impl.Impl) {
		next := im.Doppler.Check
		im.Doppler.Check = func(prefix []byte, msgLen uint64, o doppler.Order) doppler.Verdict {
			h, _ := doppler.DecodeHeader(prefix, o) // the zero header when short
			return change(h, next(prefix, msgLen, o))
		}
	}}
}

// dpHeaderMutant is the mutant whose header check is the reference's
// reading a header changed by edit.
func dpHeaderMutant(name, bug string, edit func(*doppler.Header)) Mutant {
	return Mutant{Name: name, Suite: "doppler", Bug: bug, apply: func(im *impl.Impl) { dpReadHeaderAs(im, edit) }}
}

// dpReadHeaderAs makes im's header check judge each header as edit changes
// it.
func dpReadHeaderAs(im *impl.Impl, edit func(*doppler.Header)) {
	next := im.Doppler.Check
	im.Doppler.Check = func(prefix []byte, msgLen uint64, o doppler.Order) doppler.Verdict {
		if len(prefix) >= doppler.HeaderSize {
			prefix = withHeader(prefix, o, edit)
		}
		return next(prefix, msgLen, o)
	}
}

// withHeader returns a copy of msg, at least a header long, whose header is
// edit's change of msg's.
func withHeader(msg []byte, o doppler.Order, edit func(*doppler.Header)) []byte {
	cp := slices.Clone(msg)
	h, _ := doppler.DecodeHeader(cp, o)
	edit(&h)
	doppler.AppendHeader(cp[:0], o, h)
	return cp
}

// dpChunkerMutant is the mutant that cuts frames with c; its senders cut
// with it too.
func dpChunkerMutant(name, bug string, c doppler.Chunker) Mutant {
	return Mutant{Name: name, Suite: "doppler", Bug: bug, apply: func(im *impl.Impl) { im.Doppler.Chunk = c.Chunk }}
}

// dpSenderMutant is the mutant whose senders are the reference's wrapped by
// wrap; shared is one counter for every sender of the Impl.
func dpSenderMutant(name, bug string, wrap func(s impl.DopplerSender, o doppler.Order, shared *uint64) impl.DopplerSender) Mutant {
	return Mutant{Name: name, Suite: "doppler", Bug: bug, apply: func(im *impl.Impl) {
		next, shared := im.Doppler.NewSender, new(uint64)
		im.Doppler.NewSender = func(o doppler.Order, maxPayload int) impl.DopplerSender {
			return wrap(next(o, maxPayload), o, shared)
		}
	}}
}

// numbersMessages renumbers what the reference sender sends from the
// counter next: one number per frame, or with perMessage one per message.
type numbersMessages struct {
	impl.DopplerSender
	o          doppler.Order
	next       *uint64
	perMessage bool
}

func (s *numbersMessages) counter() *uint64 { return s.next }

func (s *numbersMessages) Publish(f doppler.Frame) ([][]byte, error) {
	next := s.counter()
	msgs, err := s.DopplerSender.Publish(f)
	if err != nil {
		return nil, renumbered(err, *next)
	}
	for i, m := range msgs {
		seq := *next
		if s.perMessage {
			seq += uint64(i)
		}
		msgs[i] = withHeader(m, s.o, func(h *doppler.Header) { h.Sequence = seq })
	}
	if s.perMessage {
		*next += uint64(len(msgs))
	} else {
		*next++
	}
	return msgs, nil
}

func (s *numbersMessages) Send(f doppler.Frame) ([]byte, error) {
	next := s.counter()
	m, err := s.DopplerSender.Send(f)
	if err != nil {
		return nil, renumbered(err, *next)
	}
	seq := *next
	*next++
	return withHeader(m, s.o, func(h *doppler.Header) { h.Sequence = seq }), nil
}

func (s *numbersMessages) NextSequence() uint64 { return *s.counter() }

// renumbered returns err naming the frame seq where it names one.
func renumbered(err error, seq uint64) error {
	var e *doppler.Error
	if !errors.As(err, &e) || !e.HasSequence {
		return err
	}
	cp := *e
	cp.Sequence = seq
	return &cp
}

// dpReasmMutant is the mutant whose reassembly is the reference's wrapped
// by wrap.
func dpReasmMutant(name, bug string, wrap func(r impl.Reassembler, o doppler.Order) impl.Reassembler) Mutant {
	return Mutant{Name: name, Suite: "doppler", Bug: bug, apply: func(im *impl.Impl) {
		next := im.Doppler.NewReassembler
		im.Doppler.NewReassembler = func(o doppler.Order, check func([]byte, doppler.Order) doppler.Verdict) impl.Reassembler {
			return wrap(next(o, check), o)
		}
	}}
}

// acceptedChunk returns msg's header, chunk block and payload when the
// reference's check accepts msg and it is a chunk.
func acceptedChunk(msg []byte, o doppler.Order) (doppler.Header, doppler.ChunkBlock, []byte, bool) {
	if doppler.Check(msg, o) != doppler.Accepted {
		return doppler.Header{}, doppler.ChunkBlock{}, nil, false
	}
	h, _ := doppler.DecodeHeader(msg, o)
	if !h.Chunked() {
		return doppler.Header{}, doppler.ChunkBlock{}, nil, false
	}
	c, _ := doppler.DecodeChunkBlock(msg[doppler.HeaderSize:], o)
	return h, c, msg[doppler.HeaderSize+doppler.ChunkBlockSize:], true
}

// otherSequenceJoins gives a chunk of another sequence the sequence of the
// frame in progress.
type otherSequenceJoins struct {
	impl.Reassembler
	o doppler.Order
}

func (r *otherSequenceJoins) Add(msg []byte) (doppler.Frame, bool, error) {
	if h, _, _, ok := acceptedChunk(msg, r.o); ok {
		if seq, active := r.Pending(); active && h.Sequence != seq {
			msg = withHeader(msg, r.o, func(h *doppler.Header) { h.Sequence = seq })
		}
	}
	return r.Reassembler.Add(msg)
}

// parts keeps a copy of every chunk the reference reassembly took for the
// frame in progress, repeats included, for the mutants that join or
// complete frames otherwise.
type parts struct {
	impl.Reassembler
	o doppler.Order

	seq      uint64
	count    uint32
	size     int                 // payload bytes of a chunk that is not the last, once one arrived
	byIndex  map[uint32][][]byte // nil when no frame is in progress
	arrivals [][]byte            // the first part of each index, in arrival order
	stale    bool                // the frame was completed or dropped
}

// pass hands msg to the reference and keeps its part when the reference
// took it for the frame in progress or completed the frame with it, which
// joined reports.
func (p *parts) pass(msg []byte) (f doppler.Frame, ok, joined bool, err error) {
	if p.stale {
		p.byIndex, p.arrivals, p.size, p.stale = nil, nil, 0, false
	}
	h, c, own, chunk := acceptedChunk(msg, p.o)
	f, ok, err = p.Reassembler.Add(msg)
	seq, active := p.Pending()
	if chunk && (ok || active && seq == h.Sequence) {
		if p.byIndex == nil || p.seq != h.Sequence {
			p.seq, p.count, p.size = h.Sequence, c.Count, 0
			p.byIndex, p.arrivals = map[uint32][][]byte{}, nil
		}
		part := slices.Clone(own)
		if len(p.byIndex[c.Index]) == 0 {
			p.arrivals = append(p.arrivals, part)
		}
		p.byIndex[c.Index] = append(p.byIndex[c.Index], part)
		if c.Index+1 < c.Count && p.size == 0 {
			p.size = len(own)
		}
	}
	p.stale = ok || !active
	return f, ok, ok && chunk, err
}

// joinsParts delivers a frame joined from the parts it kept: by index with
// every repeat appended, or in arrival order.
type joinsParts struct {
	parts
	repeats, arrival bool
}

func (r *joinsParts) Add(msg []byte) (doppler.Frame, bool, error) {
	f, ok, joined, err := r.pass(msg)
	if joined {
		var payload []byte
		if r.arrival {
			for _, p := range r.arrivals {
				payload = append(payload, p...)
			}
		} else {
			for i := range r.count {
				for _, p := range r.byIndex[i] {
					payload = append(payload, p...)
				}
			}
		}
		f.Payload = payload
	}
	return f, ok, err
}

// countUncompared gives a chunk of the frame in progress the frame's
// chunk_count.
type countUncompared struct{ parts }

func (r *countUncompared) Add(msg []byte) (doppler.Frame, bool, error) {
	if h, c, _, ok := acceptedChunk(msg, r.o); ok && !r.stale && r.byIndex != nil && h.Sequence == r.seq && c.Count != r.count {
		msg = slices.Clone(msg)
		c.Count = r.count
		doppler.AppendChunkBlock(msg[doppler.HeaderSize:doppler.HeaderSize], r.o, c)
	}
	f, ok, _, err := r.pass(msg)
	return f, ok, err
}

// completesOnLast, when the last index of the frame in progress arrives
// with others missing, hands the reference a chunk of zeros for each
// missing one first.
type completesOnLast struct{ parts }

func (r *completesOnLast) Add(msg []byte) (doppler.Frame, bool, error) {
	h, c, _, ok := acceptedChunk(msg, r.o)
	if ok && c.Index+1 == c.Count && c.Count == r.count && !r.stale && r.byIndex != nil && h.Sequence == r.seq && r.size > 0 {
		elem, _ := doppler.ElemSize(h.Kind, h.Format)
		for i := range c.Count - 1 {
			if len(r.byIndex[i]) > 0 {
				continue
			}
			zero := h
			zero.NumSamples, zero.PayloadBytes = uint64(r.size/elem), uint64(r.size)
			block := c
			block.Index = i
			m := doppler.AppendChunkBlock(doppler.AppendHeader(nil, r.o, zero), r.o, block)
			if _, _, _, err := r.pass(append(m, make([]byte, r.size)...)); err != nil {
				break
			}
		}
	}
	f, ok, _, err := r.pass(msg)
	return f, ok, err
}

// lastChunkHeader delivers a reassembled frame with the header of the chunk
// that completed it.
type lastChunkHeader struct {
	impl.Reassembler
	o doppler.Order
}

func (r lastChunkHeader) Add(msg []byte) (doppler.Frame, bool, error) {
	h, _, _, chunk := acceptedChunk(msg, r.o)
	f, ok, err := r.Reassembler.Add(msg)
	if ok && chunk {
		f.Header = h
	}
	return f, ok, err
}

// chunksTrusted repairs a chunk that carries the magic and fails the
// check, taking its counts from its length.
type chunksTrusted struct {
	impl.Reassembler
	o doppler.Order
}

func (r chunksTrusted) Add(msg []byte) (doppler.Frame, bool, error) {
	h, err := doppler.DecodeHeader(msg, r.o)
	if err == nil && h.Chunked() && h.Magic == doppler.Magic && len(msg) >= doppler.HeaderSize+doppler.ChunkBlockSize &&
		doppler.Check(msg, r.o) != doppler.Accepted {
		if elem, ok := doppler.ElemSize(h.Kind, h.Format); ok {
			own := uint64(len(msg) - doppler.HeaderSize - doppler.ChunkBlockSize)
			msg = withHeader(msg, r.o, func(h *doppler.Header) { h.PayloadBytes, h.NumSamples = own, own/uint64(elem) })
		}
	}
	return r.Reassembler.Add(msg)
}

// redelivers hands the last frame reassembled over again when the
// reference takes one of its chunks, arriving late, for a repeat.
type redelivers struct {
	impl.Reassembler
	o       doppler.Order
	done    *doppler.Frame
	doneSeq uint64
}

func (r *redelivers) Add(msg []byte) (doppler.Frame, bool, error) {
	h, _, _, chunk := acceptedChunk(msg, r.o)
	f, ok, err := r.Reassembler.Add(msg)
	switch seq, active := r.Pending(); {
	case !chunk:
	case ok:
		done := f
		done.Payload = slices.Clone(f.Payload)
		r.done, r.doneSeq = &done, h.Sequence
	case err == nil && r.done != nil && h.Sequence == r.doneSeq && !(active && seq == h.Sequence):
		again := *r.done
		again.Payload = slices.Clone(r.done.Payload)
		return again, true, nil
	}
	return f, ok, err
}

// stripsChunkBlock delivers an unchunked message's payload without the 24
// bytes a chunk block would take.
type stripsChunkBlock struct {
	impl.Reassembler
	o doppler.Order
}

func (r stripsChunkBlock) Add(msg []byte) (doppler.Frame, bool, error) {
	f, ok, err := r.Reassembler.Add(msg)
	if h, herr := doppler.DecodeHeader(msg, r.o); ok && herr == nil && !h.Chunked() {
		f.Payload = nil
		if len(msg) >= doppler.HeaderSize+doppler.ChunkBlockSize {
			f.Payload = msg[doppler.HeaderSize+doppler.ChunkBlockSize:]
		}
	}
	return f, ok, err
}
