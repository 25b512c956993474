package dopplerfuzz

import (
	"math/bits"
	"testing"

	"github.com/conform-suite/conform/corpus"
	"github.com/conform-suite/conform/ref/doppler"
)

var orders = []doppler.Order{doppler.LittleEndian, doppler.BigEndian}

// frame returns an n-element frame of type typ with a recognisable payload.
func frame(tb testing.TB, typ doppler.Type, o doppler.Order, n int, seq uint64) doppler.Frame {
	tb.Helper()
	p := make([]byte, n*typ.ElemSize())
	for i := range p {
		p[i] = byte(i*13 + 5)
	}
	f, err := doppler.NewFrame(typ, o, p)
	if err != nil {
		tb.Fatal(err)
	}
	f.Header.Sequence = seq
	return f
}

// headerSeeds returns messages covering every verdict of the check: a valid
// frame of each type in each order, one refusal per check, short messages,
// and a chunk.
func headerSeeds(tb testing.TB) [][]byte {
	var seeds [][]byte
	for _, o := range orders {
		for _, typ := range doppler.Types() {
			seeds = append(seeds, frame(tb, typ, o, 3, 1).AppendMessage(nil, o))
		}
		edits := []func(*doppler.Header){
			func(h *doppler.Header) { h.Magic = 1 },
			func(h *doppler.Header) { h.Magic = bits.ReverseBytes64(doppler.Magic) },
			func(h *doppler.Header) { h.VersionMajor = 1 },
			func(h *doppler.Header) { h.Flags = 2 },
			func(h *doppler.Header) { h.PayloadBytes++ },
			func(h *doppler.Header) { h.Kind = 2 },
			func(h *doppler.Header) { h.Format = 0 },
			func(h *doppler.Header) { h.NumSamples = 1<<60 + 3 },
		}
		for _, edit := range edits {
			f := frame(tb, doppler.TypeCF64, o, 3, 1)
			edit(&f.Header)
			seeds = append(seeds, f.AppendMessage(nil, o))
		}
		msgs, err := doppler.Chunk(frame(tb, doppler.TypeCI16, o, 100, 2), 200, o)
		if err != nil {
			tb.Fatal(err)
		}
		seeds = append(seeds, msgs[0], msgs[len(msgs)-1], msgs[0][:80])
	}
	return append(seeds, nil, make([]byte, 63))
}

// vectorSeeds returns the golden vectors' inputs as seeds: each check
// message, and each reassembly input's messages with its byte order, so that
// the paths the corpus pins (an overflowing chunk block, a repeat at index
// 64, a big-endian chunk block, an unchunked message mid-frame) are where
// fuzzing starts.
func vectorSeeds(tb testing.TB) (checks [][]byte, reassemblies []reassemblySeed) {
	tb.Helper()
	set, err := corpus.Doppler()
	if err != nil {
		tb.Fatal(err)
	}
	for _, v := range set.All() {
		if v.IsCheck() && v.TransportLength == nil {
			checks = append(checks, v.Message)
		}
		if v.IsReassembly() {
			var msgs [][]byte
			for _, m := range v.Messages {
				msgs = append(msgs, m)
			}
			reassemblies = append(reassemblies, reassemblySeed{join(msgs...), v.BigEndian()})
		}
	}
	if len(checks) == 0 || len(reassemblies) == 0 {
		tb.Fatal("the doppler corpus gave no seeds")
	}
	return checks, reassemblies
}

// reassemblySeed is one FuzzReassemble input.
type reassemblySeed struct {
	data      []byte
	bigEndian bool
}
