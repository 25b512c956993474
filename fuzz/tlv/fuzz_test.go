package tlvfuzz

import (
	"bytes"
	"encoding/hex"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/conform-suite/conform/corpus"
	"github.com/conform-suite/conform/fuzz/allocs"
	extra "github.com/conform-suite/conform/fuzz/seeds"
	"github.com/conform-suite/conform/ref/tlv"
)

// seeds are frames from the spec and the reference's tests: the printed
// vectors, nesting, trailers, a non-minimal LL header and a FWD.
var seeds = []string{
	"06 00 06 00 05 61 6c 70 68 61",
	"09 00 00 00",
	"06 00 0c 00 06 73 65 6e 73 6f 72 04 74 65 6d 70",
	"07 01 13 00 02 00 01 00 72 07 01 0a 00 02 00 01 00 61 01 00 01 00 2a",
	"01 02 01 00 00 00 2a",
	"09 10 00 00 13 ff c4 13",
	"0b 01 0d 00 01 14 01 00 2a 44 33 22 11 1d c7 e9 3d",
	"0f 01 32 00 0a 00 01 00 01 06 00 1c 00 03 6e 65 74 03 63 61 6e 04 63 61 6e 30 03 65 73 70 05 77 68 65 65 6c 04 6c 65 66 74 06 00 04 00 03 61 70 70 01 00 01 00 2a",
	"0f 01 27 00 0a 00 01 00 01 06 00 11 00 03 6e 65 74 06 73 65 72 69 61 6c 03 73 74 6d 01 78 06 00 04 00 03 61 70 70 01 00 01 00 2a",
}

func unhex(s string) []byte {
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		panic(err)
	}
	return b
}

// addCorpus adds the tlv golden vectors' inputs (frames, FWDs before a hop,
// PATH payloads), then raw inputs from the optional go-fuzz corpus (see
// package fuzz/seeds): ASN.1 BER is tag-length-value, the nearest shape to
// ours.
func addCorpus(f *testing.F, add func([]byte)) {
	set, err := corpus.TLV()
	if err != nil {
		f.Fatal(err)
	}
	for _, v := range set.All() {
		if len(v.Input) > 0 && len(v.Input) <= 4096 {
			add(v.Input)
		}
	}
	for _, b := range extra.GoFuzzCorpus(f, "asn1") {
		add(b)
	}
}

// ropeFrom splits b by a seed: random cuts, or one byte per segment.
func ropeFrom(b []byte, seed uint64) tlv.Rope {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	if seed%5 == 0 {
		segs := make([][]byte, len(b))
		for i := range b {
			segs[i] = b[i : i+1 : i+1]
		}
		return tlv.NewRope(segs...)
	}
	cuts := make([]int, rng.IntN(8))
	for i := range cuts {
		cuts[i] = rng.IntN(len(b) + 1)
	}
	slices.Sort(cuts)
	var segs [][]byte
	prev := 0
	for _, c := range cuts {
		segs = append(segs, b[prev:c:c])
		prev = c
	}
	return tlv.NewRope(append(segs, b[prev:])...)
}

// FuzzDecode: any rope over the input decodes exactly as the flat input (the
// same tree, or the same refusal); no panic; allocation bounded by the input's
// size, never by a length it claims; and a decoded frame re-encodes to its bytes
// at rest.
func FuzzDecode(f *testing.F) {
	for i, s := range seeds {
		f.Add(unhex(s), uint64(i))
	}
	addCorpus(f, func(b []byte) { f.Add(b, uint64(len(b))) })
	f.Fuzz(func(t *testing.T, data []byte, seed uint64) {
		var d tlv.Decoder
		in := tlv.NewRope(data)
		// The fuzzing engine allocates beside us, which only adds: the least
		// of three measures is the decoder's own.
		used := ^uint64(0)
		for range 3 {
			used = min(used, allocs.During(func() { _, _, _ = d.DecodeFrame(in) }))
		}
		if used > 8192+64*uint64(len(data)) {
			t.Fatalf("decoding %d bytes allocated %d", len(data), used)
		}
		flat, tr, err := d.DecodeFrame(in)
		got, gerr := d.Decode(ropeFrom(data, seed))
		if (err == nil) != (gerr == nil) || (err != nil && err.Error() != gerr.Error()) {
			t.Fatalf("flat: %v; rope: %v", err, gerr)
		}
		if err != nil {
			if _, ok := tlv.StatusOf(err); !ok {
				t.Fatalf("refusal without a status: %v", err)
			}
			return
		}
		if !got.Equal(flat) {
			t.Fatalf("rope tree %s, flat tree %s", got, flat)
		}
		trailer := tr.TSWidth
		if tr.CRC == tlv.CRC32C {
			trailer += 4
		} else if tr.CRC == tlv.CRC64XZ {
			trailer += 8
		}
		rest := bytes.Clone(data[:len(data)-trailer])
		rest[1] &^= byte(tlv.OptTS | tlv.OptCRC)
		if !bytes.Equal(flat.Bytes(), rest) {
			t.Fatalf("re-encoded % x, at rest % x", flat.Bytes(), rest)
		}
	})
}

// FuzzCanonicalPath: canonicalization is idempotent, insensitive to leading
// and trailing separators, and its bytes re-parse to themselves from any rope.
func FuzzCanonicalPath(f *testing.F) {
	for _, s := range []string{"/alpha", "/sensor/temp", "sensor//temp/", "/", "", "/a/./b", "/a/..", "/\x00", "/\xff", "/café/ü", "/" + strings.Repeat("x", 256)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := tlv.CanonicalPath(s)
		if err != nil {
			if st, _ := tlv.StatusOf(err); st != tlv.StatusPathInvalid {
				t.Fatalf("%q: %v", s, err)
			}
			if _, aerr := tlv.AppendCanonicalPath(nil, s); aerr == nil {
				t.Fatalf("%q: Append accepts what CanonicalPath refuses", s)
			}
			return
		}
		if err := tlv.ValidatePath(ropeFrom(p, uint64(len(s)))); err != nil {
			t.Fatalf("%q: canonical % x is not a valid PATH payload: %v", s, p, err)
		}
		str, err := tlv.PathString(tlv.NewRope(p))
		if err != nil {
			t.Fatal(err)
		}
		again, err := tlv.CanonicalPath(str)
		if err != nil || !bytes.Equal(again, p) {
			t.Fatalf("%q: canonical % x, its string %q gives % x, %v", s, p, str, again, err)
		}
		for _, variant := range []string{"/" + s, s + "/", "//" + s + "//"} {
			if v, err := tlv.CanonicalPath(variant); err != nil || !bytes.Equal(v, p) {
				t.Fatalf("%q: variant %q gives % x, %v", s, variant, v, err)
			}
		}
	})
}

// FuzzPathPayload: validation of a received PATH payload gives one verdict
// whatever the rope, and a valid payload's segments re-pack to its bytes.
func FuzzPathPayload(f *testing.F) {
	for _, s := range []string{"05 61 6c 70 68 61", "06 73 65 6e 73 6f 72 04 74 65 6d 70", "", "00", "03 61 2f 62", "02 61 ff", "05 61"} {
		f.Add(unhex(s), uint64(1))
	}
	f.Fuzz(func(t *testing.T, data []byte, seed uint64) {
		err := tlv.ValidatePath(tlv.NewRope(data))
		rerr := tlv.ValidatePath(ropeFrom(data, seed))
		if (err == nil) != (rerr == nil) || (err != nil && err.Error() != rerr.Error()) {
			t.Fatalf("flat: %v; rope: %v", err, rerr)
		}
		if err != nil {
			return
		}
		segs, err := tlv.PathSegments(ropeFrom(data, seed))
		if err != nil {
			t.Fatal(err)
		}
		var packed []byte
		for _, s := range segs {
			packed = append(append(packed, byte(len(s))), s...)
		}
		if !bytes.Equal(packed, data) {
			t.Fatalf("segments %q re-pack to % x", segs, packed)
		}
	})
}

// FuzzHop: a hop either finds the terminus or re-emits the FWD with the whole
// leading dst run stripped, the inbound run prepended to src, and every other
// byte unchanged; the result decodes to itself, through a fresh trailer too.
func FuzzHop(f *testing.F) {
	for i, s := range seeds {
		f.Add(unhex(s), uint8(i))
	}
	runs := []string{"/net/serial/stm", "/net/can/can0/esp", "/net/can/can0"}
	f.Fuzz(func(t *testing.T, data []byte, inbound uint8) {
		r, err := tlv.NewRouter(runs...)
		if err != nil {
			t.Fatal(err)
		}
		in, err := tlv.Decode(tlv.NewRope(data))
		if err != nil {
			return
		}
		from := int(inbound) % len(runs)
		res, err := r.Hop(in, from)
		if err != nil {
			if _, ok := tlv.StatusOf(err); !ok {
				t.Fatalf("refusal without a status: %v", err)
			}
			return
		}
		dst := in.Children()[1].Payload().Bytes()
		if res.Terminus {
			for _, run := range r.Links() {
				if len(dst) > len(run) && bytes.HasPrefix(dst, run) {
					t.Fatalf("terminus, but dst % x continues past run % x", dst, run)
				}
			}
			return
		}
		run, back := r.Links()[res.Link], r.Links()[from]
		out := res.Frame.Children()
		if !bytes.Equal(dst, append(bytes.Clone(run), out[1].Payload().Bytes()...)) {
			t.Fatalf("dst % x became % x on link % x", dst, out[1].Payload().Bytes(), run)
		}
		src := in.Children()[2].Payload().Bytes()
		if !bytes.Equal(out[2].Payload().Bytes(), append(bytes.Clone(back), src...)) {
			t.Fatalf("src % x became % x", src, out[2].Payload().Bytes())
		}
		for _, i := range []int{0, 3} {
			if !bytes.Equal(out[i].Bytes(), in.Children()[i].Bytes()) {
				t.Fatalf("child %d changed: % x to % x", i, in.Children()[i].Bytes(), out[i].Bytes())
			}
		}
		if res.Frame.Opt().LL() != (in.Opt().LL() || res.Frame.Payload().Len() > 0xFFFF) {
			t.Fatalf("FWD header form changed: %s to %s", in.Opt(), res.Frame.Opt())
		}
		e := tlv.Egress{TSWidth: 6, CRC: tlv.CRC32C, Clock: func() time.Time { return time.Unix(0, int64(len(data))) }}
		wire, err := e.AppendTo(nil, res.Frame)
		if err != nil {
			t.Fatal(err)
		}
		again, err := tlv.Decode(ropeFrom(wire, uint64(inbound)))
		if err != nil || !again.Equal(res.Frame) {
			t.Fatalf("re-emitted frame decodes to %s, %v; want %s", again, err, res.Frame)
		}
	})
}
