package dopplerfuzz

import (
	"math/big"
	"math/bits"
	"testing"

	"github.com/conform-suite/conform/ref/doppler"
)

// FuzzCheck runs the header check on arbitrary messages in both byte orders
// (doppler §3, reconstructed§doppler-checks) and checks that:
//   - an accepted header's claims match the message exactly: 64 bytes of
//     header, 24 of chunk block when CHUNKED, payload_bytes of payload, and
//     num_samples whole elements in it;
//   - the verdict is the one a model written with big integers gives;
//   - the check reads only the header: the first 64 bytes and the length
//     decide it;
//   - reading the same fields written in the other order gives the same
//     verdict in that order.
func FuzzCheck(f *testing.F) {
	for _, s := range headerSeeds(f) {
		f.Add(s)
	}
	checks, _ := vectorSeeds(f)
	for _, s := range checks {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, msg []byte) {
		msg = msg[:len(msg):len(msg)] // any read past the end panics
		for _, o := range orders {
			v := doppler.Check(msg, o)
			if want := model(msg, o); v != want {
				t.Fatalf("%v: verdict %v, the model says %v", o, v, want)
			}
			prefix := msg[:min(len(msg), doppler.HeaderSize):min(len(msg), doppler.HeaderSize)]
			if got := doppler.CheckLength(prefix, uint64(len(msg)), o); got != v {
				t.Fatalf("%v: the header alone gives %v, the whole message %v", o, got, v)
			}
			if len(msg) < doppler.HeaderSize {
				continue
			}
			h, err := doppler.DecodeHeader(msg, o)
			if err != nil {
				t.Fatal(err)
			}
			if v == doppler.Accepted {
				acceptedFits(t, h, len(msg))
			}
			swapped := doppler.AppendHeader(nil, o.Swap(), h)
			swapped = append(swapped, msg[doppler.HeaderSize:]...)
			if got := doppler.Check(swapped, o.Swap()); got != v {
				t.Fatalf("%v gives %v, the same fields in %v give %v", o, v, o.Swap(), got)
			}
		}
	})
}

// acceptedFits fails unless an accepted header claims exactly what its
// message of msgLen bytes holds.
func acceptedFits(t *testing.T, h doppler.Header, msgLen int) {
	t.Helper()
	overhead := doppler.HeaderSize
	if h.Chunked() {
		overhead += doppler.ChunkBlockSize
	}
	elem, ok := doppler.ElemSize(h.Kind, h.Format)
	if !ok || msgLen < overhead || h.PayloadBytes != uint64(msgLen-overhead) {
		t.Fatalf("accepted a header claiming %d payload bytes in a %d-byte message", h.PayloadBytes, msgLen)
	}
	claimed := new(big.Int).Mul(new(big.Int).SetUint64(h.NumSamples), big.NewInt(int64(elem)))
	if claimed.Cmp(new(big.Int).SetUint64(h.PayloadBytes)) != 0 {
		t.Fatalf("accepted %d elements of %d bytes in %d payload bytes", h.NumSamples, elem, h.PayloadBytes)
	}
}

// model is the header check written as plainly as possible, with big
// integers where the reference uses wide multiplication.
func model(msg []byte, o doppler.Order) doppler.Verdict {
	if len(msg) < doppler.HeaderSize {
		return doppler.ShortMessage
	}
	h, _ := doppler.DecodeHeader(msg, o)
	swappedMagic := bits.ReverseBytes64(doppler.Magic)
	switch {
	case h.Magic == swappedMagic:
		return doppler.CrossEndian
	case h.Magic != doppler.Magic:
		return doppler.NotDoppler
	case h.VersionMajor != 2:
		return doppler.OtherMajor
	case h.Flags&^doppler.FlagKnown != 0:
		return doppler.UnknownFlags
	}
	rest := len(msg) - doppler.HeaderSize
	if h.Chunked() {
		rest -= doppler.ChunkBlockSize
		if rest < 0 {
			return doppler.ShortChunkBlock
		}
	}
	if h.PayloadBytes != uint64(rest) {
		return doppler.PayloadMismatch
	}
	if h.Kind != doppler.KindIQ && h.Kind != doppler.KindTLM {
		return doppler.UnknownKind
	}
	elem, ok := doppler.ElemSize(h.Kind, h.Format)
	if !ok {
		return doppler.UnknownFormat
	}
	product := new(big.Int).Mul(new(big.Int).SetUint64(h.NumSamples), big.NewInt(int64(elem)))
	if product.Cmp(big.NewInt(int64(rest))) != 0 {
		return doppler.CountMismatch
	}
	return doppler.Accepted
}
