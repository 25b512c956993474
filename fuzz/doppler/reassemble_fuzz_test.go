package dopplerfuzz

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/conform-suite/conform/fuzz/allocs"
	"github.com/conform-suite/conform/ref/doppler"
)

// eager is the allocation a fuzzed Reassembler may make ahead of arrival. It
// is small so that the memory bound below means something.
const eager = 4096

// split cuts fuzz input into messages, each a little-endian u16 length and
// that many bytes; a length running past the end takes what is left.
func split(data []byte) [][]byte {
	var msgs [][]byte
	for len(data) >= 2 {
		n := int(binary.LittleEndian.Uint16(data))
		data = data[2:]
		n = min(n, len(data))
		msgs = append(msgs, data[:n:n])
		data = data[n:]
	}
	return msgs
}

// join is split's inverse, for seeds.
func join(msgs ...[]byte) []byte {
	var out []byte
	for _, m := range msgs {
		out = binary.LittleEndian.AppendUint16(out, uint16(len(m)))
		out = append(out, m...)
	}
	return out
}

// FuzzReassemble feeds arbitrary messages to a Reassembler (doppler §4) and
// checks that it never panics, that every frame it delivers is one a
// receiver would accept whole, and that the memory it holds and allocates
// follows the bytes that arrived, never a total some chunk block claims.
func FuzzReassemble(f *testing.F) {
	for _, o := range orders {
		m, err := doppler.Chunk(frame(f, doppler.TypeCF32, o, 60, 4), 200, o)
		if err != nil {
			f.Fatal(err)
		}
		whole := frame(f, doppler.TypeTLM, o, 2, 9).AppendMessage(nil, o)
		f.Add(join(m...), o == doppler.BigEndian)
		f.Add(join(m[2], m[0], m[1], m[1], m[3]), o == doppler.BigEndian)
		f.Add(join(m[0], whole, m[1]), o == doppler.BigEndian)
		f.Add(join(m[0], m[2], m[3]), o == doppler.BigEndian)
	}
	_, reassemblies := vectorSeeds(f)
	for _, s := range reassemblies {
		f.Add(s.data, s.bigEndian)
	}
	f.Fuzz(func(t *testing.T, data []byte, bigEndian bool) {
		o := doppler.LittleEndian
		if bigEndian {
			o = doppler.BigEndian
		}
		r := &doppler.Reassembler{Order: o, EagerBytes: eager}
		grew := allocs.During(func() {
			arrived := 0
			for _, m := range split(data) {
				arrived += len(m)
				got, ok, _ := r.Add(m)
				if held := r.Buffered(); held > eager+3*arrived {
					t.Fatalf("holding %d bytes after %d arrived", held, arrived)
				}
				if ok {
					deliveredIsWhole(t, got, o)
				}
			}
		})
		// The slack covers the fuzzing engine's own allocations in this
		// process; a claimed total of even a few MiB would exceed it.
		if grew > uint64(eager+4*len(data)+1<<20) {
			t.Fatalf("allocated %d bytes for %d bytes of input", grew, len(data))
		}
	})
}

// deliveredIsWhole fails unless a delivered frame is unchunked and, sent
// again as one message, passes the header check.
func deliveredIsWhole(t *testing.T, f doppler.Frame, o doppler.Order) {
	t.Helper()
	if f.Header.Chunked() {
		t.Fatal("delivered a frame with CHUNKED set")
	}
	if v := doppler.Check(f.AppendMessage(nil, o), o); v != doppler.Accepted {
		t.Fatalf("delivered a frame the header check refuses: %v (%+v, %d bytes)", v, f.Header, len(f.Payload))
	}
}

// FuzzChunkArrivals chunks a valid frame and delivers its chunks as the
// fuzzer chooses: in any order, repeated, lost, or with one byte changed.
// Whatever happens no frame is delivered twice, any delivered frame is
// whole, and when every chunk arrived intact the frame is the one sent.
func FuzzChunkArrivals(f *testing.F) {
	f.Add(uint8(4), uint16(300), uint16(500), false, []byte{0, 1, 2, 3, 4, 5, 6, 7})
	f.Add(uint8(0), uint16(1000), uint16(100), true, []byte{7, 3, 3, 0, 1, 2, 4, 5, 6, 8, 9})
	f.Add(uint8(6), uint16(90), uint16(300), false, []byte{0x81, 0, 1, 2, 3})
	f.Fuzz(func(t *testing.T, typeSel uint8, samples, maxPayload uint16, bigEndian bool, plan []byte) {
		types := doppler.Types()
		typ := types[int(typeSel)%len(types)]
		o := doppler.LittleEndian
		if bigEndian {
			o = doppler.BigEndian
		}
		sent := frame(t, typ, o, int(samples)%4096, 77)
		msgs, err := doppler.Chunk(sent, int(maxPayload), o)
		if err != nil {
			return // a max_payload too small for one element
		}

		// Each plan byte sends one message: the low bits pick the chunk,
		// the top bit changes one of its bytes first.
		r := &doppler.Reassembler{Order: o, EagerBytes: eager}
		sentIntact := make([]bool, len(msgs))
		corrupted, arrived, delivered := false, 0, 0
		for i, p := range plan {
			k := int(p&0x7f) % len(msgs)
			m := msgs[k]
			if p&0x80 != 0 {
				m = bytes.Clone(m)
				m[(i*31)%len(m)] ^= 1 << (i % 8)
				corrupted = true
			} else {
				sentIntact[k] = true
			}
			arrived += len(m)
			got, ok, _ := r.Add(m)
			if held := r.Buffered(); held > eager+3*arrived {
				t.Fatalf("holding %d bytes after %d arrived", held, arrived)
			}
			if !ok {
				continue
			}
			delivered++
			deliveredIsWhole(t, got, o)
			if !corrupted && (got.Header != sent.Header || !bytes.Equal(got.Payload, sent.Payload)) {
				t.Fatalf("delivered %+v, sent %+v", got.Header, sent.Header)
			}
		}
		if corrupted {
			return
		}
		all := true
		for _, s := range sentIntact {
			all = all && s
		}
		switch {
		case len(msgs) > 1 && delivered > 1:
			t.Fatalf("one chunked frame delivered %d times", delivered)
		case all && delivered == 0:
			t.Fatal("every chunk arrived and the frame was not delivered")
		}
	})
}
