package mutant

import (
	"context"
	"errors"
	"math/bits"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/conform-suite/conform/ref/doppler"
	"github.com/conform-suite/conform/ref/doppler/dpnats"
	"github.com/conform-suite/conform/sut/impl"
)

// dopplerPlanted are the bugs issue 15 planted in the reassembly and the
// chunk block (each caught by a fixed vector, in the codec and on a live
// subscription), and the failure modes of the malformed chunk blocks.
var dopplerPlanted = []Mutant{
	dpReasmMutant("reassembly-totals-wrap", "computes a chunk block's total_samples × element size in 64 bits, so totals whose product wraps to total_bytes are taken (reconstructed§doppler-chunk#7)",
		func(r impl.Reassembler, o doppler.Order) impl.Reassembler { return &totalsWrap{Reassembler: r, o: o} }),
	dpReasmMutant("repeat-at-64-counted", "keeps the chunk indices seen in 64 bits, so a repeat of an index from 64 up counts as a new chunk and the frame is handed over early, a missing chunk zero-filled (doppler §4)",
		func(r impl.Reassembler, o doppler.Order) impl.Reassembler {
			return &countsHighRepeats{parts: parts{Reassembler: r, o: o}}
		}),
	{
		Name: "chunk-block-little-endian", Suite: "doppler",
		Bug: "writes and reads the 24-byte chunk block little-endian whatever the socket's byte order, so a big-endian peer's chunk blocks are byte-swapped (reconstructed§doppler-chunk#2)",
		apply: func(im *impl.Impl) {
			chunk := im.Doppler.Chunk
			im.Doppler.Chunk = func(f doppler.Frame, maxPayload int, o doppler.Order) ([][]byte, error) {
				msgs, err := chunk(f, maxPayload, o)
				for i, m := range msgs {
					msgs[i] = reorderBlock(m, o, o, doppler.LittleEndian)
				}
				return msgs, err
			}
			decode := im.Doppler.DecodeChunkBlock
			im.Doppler.DecodeChunkBlock = func(b []byte, o doppler.Order) (doppler.ChunkBlock, error) {
				return decode(b, doppler.LittleEndian)
			}
			dpWrapReassembler(im, func(r impl.Reassembler, o doppler.Order) impl.Reassembler { return littleBlocks{r, o} })
		},
	},
	dpReasmMutant("unchunked-mid-frame-kept", "hands over an unchunked message arriving mid-frame and keeps assembling the frame in progress, which its later chunks then complete (doppler §4)",
		func(r impl.Reassembler, o doppler.Order) impl.Reassembler { return unchunkedKept{r, o} }),
	dpReasmMutant("chunk-index-taken-modulo-count", "places a chunk whose chunk_index is not below chunk_count at the index modulo the count instead of refusing it (reconstructed§doppler-chunk#8)",
		func(r impl.Reassembler, o doppler.Order) impl.Reassembler { return indexModulo{r, o} }),
}

// dopplerPlantedLive are the bugs only a socket on a real broker shows:
// issue 15's big-endian socket, REQ timeout, typed SUB and the rules that
// need a slow link, and one for each live rule a case was added for.
var dopplerPlantedLive = []Mutant{
	dpLiveMutant("socket-order-ignored", "opens every socket little-endian whatever byte order the join asks, so a big-endian socket writes and reads little-endian (doppler §3)",
		func(d *impl.DopplerParts) {
			d.SocketOrder = func(doppler.Order) doppler.Order { return doppler.LittleEndian }
		}),
	dpLiveMutant("req-timeout-as-dp-err", "reports a request whose reply does not come in time as DP_ERR (-1) instead of DP_ERR_TIMEOUT (doppler §8)",
		func(d *impl.DopplerParts) {
			next := d.SendError
			d.SendError = func(err error) error {
				if errors.Is(err, doppler.ErrTimeout) {
					return doppler.ErrGeneric
				}
				return next(err)
			}
		}),
	dpLiveMutant("typed-sub-takes-every-type", "subscribes a SUB of one type to <base>.pub.* and delivers frames of every type (reconstructed§doppler-subjects#2)",
		func(d *impl.DopplerParts) {
			d.SubscribeTo = func(doppler.Type) doppler.Type { return dpnats.AnyType }
		}),
	dpLiveMutant("flush-without-round-trip", "answers a flush at once, without the round trip to the server (doppler §6b)",
		func(d *impl.DopplerParts) { d.Wait = withoutWaiting("flush", false) }),
	dpLiveMutant("drain-without-waiting", "starts a drain and answers at once, as the NATS client's own drain does, instead of waiting until the connection is closed (doppler §6b)",
		func(d *impl.DopplerParts) { d.Wait = withoutWaiting("drain", true) }),
	dpLiveMutant("push-without-ack", "answers a PUSH send once the frame is handed to the client, before JetStream acknowledges it (doppler §6b)",
		func(d *impl.DopplerParts) { d.Wait = withoutWaiting("push", true) }),
	dpLiveMutant("join-before-subscribed", "answers a receiving socket's join once it has subscribed, before the subscription reaches the server (conform.v1 DopplerJoin)",
		func(d *impl.DopplerParts) {
			d.Transport.AwaitSubscription = func(context.Context, func(context.Context) error) error { return nil }
		}),
	dpLiveMutant("no-reconnect", "dials the broker with reconnection off, so a socket is lost for good when its connection drops (doppler §8)",
		func(d *impl.DopplerParts) {
			d.Transport.Connect = func(url string, opts ...nats.Option) (*nats.Conn, error) {
				return nats.Connect(url, append(opts, nats.NoReconnect())...)
			}
		}),
	dpLiveMutant("max-payload-fallback-64mib", "assumes 64 MiB, not 1 MiB, when the server reports no max_payload (doppler §8)",
		func(d *impl.DopplerParts) {
			d.Transport.MaxPayload = func(reported int64) int {
				if reported <= 0 {
					return 64 << 20
				}
				return int(reported)
			}
		}),
	dpLiveMutant("endpoint-scheme-unchecked", "accepts an endpoint of any scheme, reading tls:// or ws:// as nats:// (doppler §9)",
		func(d *impl.DopplerParts) {
			next := d.ParseEndpoint
			d.ParseEndpoint = func(s string) (doppler.Endpoint, error) {
				if scheme, rest, ok := strings.Cut(s, "://"); ok && scheme != "nats" {
					s = "nats://" + rest
				}
				return next(s)
			}
		}),
	dpLiveMutant("endpoint-seed-list-accepted", "passes a comma-separated authority to the NATS client, which reads it as a seed list of several servers (doppler §9)",
		func(d *impl.DopplerParts) {
			next := d.ParseEndpoint
			d.ParseEndpoint = func(s string) (doppler.Endpoint, error) {
				rest, ok := strings.CutPrefix(s, "nats://")
				authority, path, _ := strings.Cut(rest, "/")
				first, others, list := strings.Cut(authority, ",")
				if !ok || !list {
					return next(s)
				}
				ep, err := next("nats://" + first + "/" + path)
				if err == nil {
					ep.Server += "," + others
				}
				return ep, err
			}
		}),
	dpLiveMutant("endpoint-credentials-dropped", "drops the credentials an endpoint URL carries before dialling (doppler §9)",
		func(d *impl.DopplerParts) {
			next := d.ParseEndpoint
			d.ParseEndpoint = func(s string) (doppler.Endpoint, error) {
				ep, err := next(s)
				if rest, ok := strings.CutPrefix(ep.Server, "nats://"); ok {
					if _, host, found := strings.Cut(rest, "@"); found {
						ep.Server = "nats://" + host
					}
				}
				return ep, err
			}
		}),
	dpLiveMutant("telemetry-from-any-role", "lets every sending role emit telemetry frames, not only a publisher (doppler §3)",
		func(d *impl.DopplerParts) { d.Transport.EmitsTelemetry = func(string) bool { return true } }),
	dpLiveMutant("work-stream-reconfigured", "reconfigures an existing work-queue stream to its own development default instead of adopting it as it is (doppler §5)",
		func(d *impl.DopplerParts) {
			d.Transport.EnsureStream = func(ctx context.Context, js jetstream.JetStream, cfg jetstream.StreamConfig) error {
				_, err := js.CreateOrUpdateStream(ctx, cfg)
				return err
			}
		}),
	dpLiveMutant("timestamp-in-microseconds", "stamps frames, and reads its clock, in microseconds rather than nanoseconds (doppler §7)",
		func(d *impl.DopplerParts) {
			d.Transport.Now = func() uint64 { return uint64(time.Now().UnixMicro()) }
		}),
	dpLiveMutant("timestamp-override-sticky", "keeps a timestamp override for every later send instead of clearing it after one (doppler §7)",
		func(d *impl.DopplerParts) {
			next, kept := d.Stamp, map[any]uint64{}
			d.Stamp = func(socket any, set func(uint64), ns *uint64) {
				if ns != nil {
					kept[socket] = *ns
				}
				if v, ok := kept[socket]; ok {
					ns = &v
				}
				next(socket, set, ns)
			}
		}),
}

// dpLiveMutant is a mutant of the live sockets alone: only the doppler-nats
// cases can see it.
func dpLiveMutant(name, bug string, change func(d *impl.DopplerParts)) Mutant {
	return Mutant{Name: name, Suite: "doppler", Profile: dopplerLiveProfile, Bug: bug,
		apply: func(im *impl.Impl) { change(&im.Doppler) }}
}

// withoutWaiting is the Wait part of a socket that does not wait for the
// op what: it answers at once, having started the op in the background
// when start is set (bounded by wait's own budget) and skipped it
// otherwise. Every other op waits as the reference does.
func withoutWaiting(what string, start bool) func(ctx context.Context, op string, wait func(context.Context) error) error {
	return func(ctx context.Context, op string, wait func(context.Context) error) error {
		if op != what {
			return wait(ctx)
		}
		if start {
			bg, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			go func() { defer cancel(); _ = wait(bg) }()
		}
		return nil
	}
}

// dpWrapReassembler wraps im's reassembly, as dpReasmMutant's mutants do.
func dpWrapReassembler(im *impl.Impl, wrap func(r impl.Reassembler, o doppler.Order) impl.Reassembler) {
	next := im.Doppler.NewReassembler
	im.Doppler.NewReassembler = func(o doppler.Order, check func([]byte, doppler.Order) doppler.Verdict) impl.Reassembler {
		return wrap(next(o, check), o)
	}
}

// reorderBlock returns msg, a message of a sender of order o, with its chunk
// block read in order from and written in order to; other messages as they
// are.
func reorderBlock(msg []byte, o, from, to doppler.Order) []byte {
	h, err := doppler.DecodeHeader(msg, o)
	if err != nil || !h.Chunked() || len(msg) < doppler.HeaderSize+doppler.ChunkBlockSize || from == to {
		return msg
	}
	c, _ := doppler.DecodeChunkBlock(msg[doppler.HeaderSize:], from)
	cp := slices.Clone(msg)
	doppler.AppendChunkBlock(cp[doppler.HeaderSize:doppler.HeaderSize], to, c)
	return cp
}

// littleBlocks reads every chunk block little-endian: it hands the
// reference, which reads in the receiver's order o, each block rewritten
// as a little-endian reader would have read it.
type littleBlocks struct {
	impl.Reassembler
	o doppler.Order
}

func (r littleBlocks) Add(msg []byte) (doppler.Frame, bool, error) {
	return r.Reassembler.Add(reorderBlock(msg, r.o, doppler.LittleEndian, r.o))
}

// totalsWrap hands the reference totals it accepts in place of totals whose
// product with the element size wraps to total_bytes, and puts the claimed
// total_samples back into a frame it delivers.
type totalsWrap struct {
	impl.Reassembler
	o       doppler.Order
	claimed map[uint64]uint64 // by sequence: the total_samples a wrapped block claimed
}

func (r *totalsWrap) Add(msg []byte) (doppler.Frame, bool, error) {
	h, c, _, chunk := acceptedChunk(msg, r.o)
	if chunk {
		if elem, ok := doppler.ElemSize(h.Kind, h.Format); ok {
			if hi, lo := bits.Mul64(c.TotalSamples, uint64(elem)); hi != 0 && lo == c.TotalBytes {
				if r.claimed == nil {
					r.claimed = map[uint64]uint64{}
				}
				r.claimed[h.Sequence] = c.TotalSamples
				fixed := c
				fixed.TotalSamples = c.TotalBytes / uint64(elem)
				msg = slices.Clone(msg)
				doppler.AppendChunkBlock(msg[doppler.HeaderSize:doppler.HeaderSize], r.o, fixed)
			}
		}
	}
	f, ok, err := r.Reassembler.Add(msg)
	if ok && chunk {
		if n, wrapped := r.claimed[h.Sequence]; wrapped {
			f.Header.NumSamples = n
			delete(r.claimed, h.Sequence)
		}
	}
	return f, ok, err
}

// countsHighRepeats counts a repeat of an index from 64 up as one more
// chunk, and when the count reaches chunk_count hands the reference a chunk
// of zeros for each index still missing, completing the frame early.
type countsHighRepeats struct {
	parts
	extra int
}

func (r *countsHighRepeats) Add(msg []byte) (doppler.Frame, bool, error) {
	h, c, _, chunk := acceptedChunk(msg, r.o)
	current := chunk && !r.stale && r.byIndex != nil && h.Sequence == r.seq
	if !current {
		r.extra = 0
	} else if c.Index >= 64 && len(r.byIndex[c.Index]) > 0 {
		r.extra++
	}
	f, ok, _, err := r.pass(msg)
	if ok || err != nil || !chunk || r.stale || r.byIndex == nil || r.extra == 0 || len(r.byIndex)+r.extra < int(r.count) || r.size == 0 {
		return f, ok, err
	}
	elem, _ := doppler.ElemSize(h.Kind, h.Format)
	for i := range r.count {
		if len(r.byIndex[i]) > 0 {
			continue
		}
		size := uint64(r.size)
		if i == r.count-1 {
			size = c.TotalBytes - uint64(r.count-1)*size
		}
		zero := h
		zero.NumSamples, zero.PayloadBytes = size/uint64(elem), size
		block := c
		block.Index = i
		m := doppler.AppendChunkBlock(doppler.AppendHeader(nil, r.o, zero), r.o, block)
		if f, ok, _, err = r.pass(append(m, make([]byte, size)...)); ok || err != nil {
			break
		}
	}
	r.extra = 0
	return f, ok, err
}

// unchunkedKept delivers an unchunked message that arrives while a frame is
// in progress without handing it to the reference, so the frame in
// progress is not dropped.
type unchunkedKept struct {
	impl.Reassembler
	o doppler.Order
}

func (r unchunkedKept) Add(msg []byte) (doppler.Frame, bool, error) {
	if _, active := r.Pending(); active && doppler.Check(msg, r.o) == doppler.Accepted {
		if h, err := doppler.DecodeHeader(msg, r.o); err == nil && !h.Chunked() {
			return doppler.Frame{Header: h, Payload: msg[doppler.HeaderSize:]}, true, nil
		}
	}
	return r.Reassembler.Add(msg)
}

// indexModulo gives a chunk whose index is not below its count the index
// modulo the count.
type indexModulo struct {
	impl.Reassembler
	o doppler.Order
}

func (r indexModulo) Add(msg []byte) (doppler.Frame, bool, error) {
	if _, c, _, chunk := acceptedChunk(msg, r.o); chunk && c.Count > 0 && c.Index >= c.Count {
		c.Index %= c.Count
		msg = slices.Clone(msg)
		doppler.AppendChunkBlock(msg[doppler.HeaderSize:doppler.HeaderSize], r.o, c)
	}
	return r.Reassembler.Add(msg)
}
