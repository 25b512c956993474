package tlv_test

import (
	"bytes"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/conform-suite/conform/ref/tlv"
)

// model is a TLV described independently of the package, with its own encoder:
// the oracle the properties compare the reference against.
type model struct {
	typ     byte
	pl, ll  bool // ll: a non-minimal LL header
	payload []byte
	kids    []*model
	ts, crc int // a child's own trailer
}

func (m *model) encode() []byte {
	body := m.payload
	if m.pl {
		body = nil
		for _, k := range m.kids {
			body = append(body, k.encode()...)
		}
	}
	opt := byte(0)
	if m.pl {
		opt |= 0x01
	}
	if m.ll || len(body) > 0xFFFF {
		opt |= 0x02
	}
	b := append(header(m.typ, opt, len(body)), body...)
	if m.ts != 0 || m.crc != 0 {
		b = withTrailer(b, m.ts, m.crc, 0xA1B2C3D4E5F60718)
	}
	return b
}

// genModel draws a tree up to depth levels below the root. Only children draw
// trailers: a root's trailer is the transport's, drawn by the properties.
func genModel(depth int, child bool) *rapid.Generator[*model] {
	return rapid.Custom(func(t *rapid.T) *model {
		m := &model{typ: rapid.ByteRange(1, 255).Draw(t, "type")}
		m.ll = rapid.IntRange(0, 4).Draw(t, "ll") == 0
		if child && rapid.IntRange(0, 5).Draw(t, "trailer") == 0 {
			m.ts = rapid.SampledFrom([]int{0, 4, 6, 8}).Draw(t, "ts")
			m.crc = rapid.IntRange(0, 2).Draw(t, "crc")
		}
		if depth > 0 && rapid.Bool().Draw(t, "pl") {
			m.pl = true
			m.kids = rapid.SliceOfN(genModel(depth-1, true), 0, 4).Draw(t, "kids")
			return m
		}
		m.payload = rapid.SliceOfN(rapid.Byte(), 0, 24).Draw(t, "payload")
		return m
	})
}

// drawRope draws a rope over b: one byte per segment sometimes, else random cuts.
func drawRope(t *rapid.T, b []byte) tlv.Rope {
	if rapid.IntRange(0, 4).Draw(t, "bytewise") == 0 {
		return bytewise(b)
	}
	cuts := rapid.SliceOfN(rapid.IntRange(0, len(b)), 0, 8).Draw(t, "cuts")
	slices.Sort(cuts)
	return cut(b, cuts...)
}

// matches walks node and model together (recursion is fine in a test).
func matches(n *tlv.Node, m *model) bool {
	if byte(n.Type()) != m.typ || n.Opt().PL() != m.pl || n.Opt().TSWidth() != m.ts || int(n.Opt().CRC()) != m.crc {
		return false
	}
	if !m.pl {
		return n.Payload().EqualBytes(m.payload)
	}
	if len(n.Children()) != len(m.kids) {
		return false
	}
	for i, k := range m.kids {
		if !matches(n.Children()[i], k) {
			return false
		}
	}
	return true
}

// Split invariance: every rope over the same bytes, one byte per segment
// included, decodes to the same tree as the flat bytes (graph model §The two
// compositions: a view boundary may fall anywhere).
func TestPropSplitInvariance(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m := genModel(3, false).Draw(t, "tree")
		rest := m.encode()
		frame := withTrailer(rest, rapid.SampledFrom([]int{0, 4, 6, 8}).Draw(t, "ts"), rapid.IntRange(0, 2).Draw(t, "crc"), 77)
		flat, err := tlv.Decode(tlv.NewRope(frame))
		if err != nil {
			t.Fatalf("flat: %v", err)
		}
		r := drawRope(t, frame)
		n, err := tlv.Decode(r)
		if err != nil {
			t.Fatalf("rope of %d views: %v", r.NumViews(), err)
		}
		if !n.Equal(flat) || !matches(n, m) {
			t.Fatalf("rope tree %s, flat tree %s", n, flat)
		}
		if !bytes.Equal(n.Bytes(), rest) {
			t.Fatalf("at rest % x, want % x", n.Bytes(), rest)
		}
	})
}

// Split invariance holds for refusals too: the same status at the same offset.
func TestPropSplitInvarianceOfErrors(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		b := genModel(3, false).Draw(t, "tree").encode()
		b = b[:rapid.IntRange(0, len(b)).Draw(t, "keep")]
		if len(b) > 0 && rapid.Bool().Draw(t, "flip") {
			b[rapid.IntRange(0, len(b)-1).Draw(t, "at")] ^= rapid.ByteRange(1, 255).Draw(t, "mask")
		}
		d := tlv.Decoder{MaxDepth: rapid.IntRange(1, 5).Draw(t, "max")}
		want, werr := d.Decode(tlv.NewRope(b))
		got, gerr := d.Decode(drawRope(t, b))
		if (werr == nil) != (gerr == nil) {
			t.Fatalf("flat %v, rope %v", werr, gerr)
		}
		if werr != nil {
			if werr.Error() != gerr.Error() {
				t.Fatalf("flat %v, rope %v", werr, gerr)
			}
			return
		}
		if !got.Equal(want) {
			t.Fatalf("rope tree %s, flat tree %s", got, want)
		}
	})
}

// Round trip: bytes decode and re-encode to themselves (non-minimal headers and
// child trailers included); trees the package builds encode to what the
// independent encoder writes, and decode back to themselves.
func TestPropRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m := genModel(4, false).Draw(t, "tree")
		b := m.encode()
		n, err := tlv.Decode(tlv.NewRope(b))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(n.Bytes(), b) || !n.Rope().EqualBytes(b) {
			t.Fatalf("re-encoded % x, want % x", n.Bytes(), b)
		}

		minimal := minimize(m)
		built := build(minimal)
		if want := minimal.encode(); !bytes.Equal(built.Bytes(), want) {
			t.Fatalf("built % x, want % x", built.Bytes(), want)
		}
		back, err := tlv.Decode(built.Rope())
		if err != nil || !back.Equal(built) {
			t.Fatalf("built tree %s decoded %s, %v", built, back, err)
		}
	})
}

// minimize drops what the constructors never originate: non-minimal headers
// and child trailers.
func minimize(m *model) *model {
	out := &model{typ: m.typ, pl: m.pl, payload: m.payload}
	for _, k := range m.kids {
		out.kids = append(out.kids, minimize(k))
	}
	return out
}

func build(m *model) *tlv.Node {
	if !m.pl {
		return tlv.NewLeaf(tlv.Type(m.typ), m.payload)
	}
	kids := make([]*tlv.Node, len(m.kids))
	for i, k := range m.kids {
		kids[i] = build(k)
	}
	return tlv.NewStruct(tlv.Type(m.typ), kids...)
}

// The mutation proof obligation (graph model §Spec-level proof obligation): any
// sequence of concat, split and insert on view trees, then serialization, gives
// the bytes of the same edits applied to a fresh buffer. The fresh buffer here is
// the list of each container's children's bytes, edited as plain slices.
func TestPropEditsMatchFreshBuffer(t *testing.T) {
	type tracked struct {
		n    *tlv.Node
		typ  byte
		kids [][]byte
	}
	fresh := func(c tracked) []byte { return tlvBytes(c.typ, true, c.kids...) }
	rapid.Check(t, func(t *rapid.T) {
		var pool []tracked
		for range rapid.IntRange(1, 3).Draw(t, "containers") {
			m := genModel(2, true).Draw(t, "container")
			m.pl, m.ts, m.crc, m.ll = true, 0, 0, false
			var kids [][]byte
			for _, k := range m.kids {
				kids = append(kids, k.encode())
			}
			b := m.encode()
			pool = append(pool, tracked{mustDecode(t, drawRope(t, b)), m.typ, kids})
		}
		for range rapid.IntRange(0, 12).Draw(t, "edits") {
			c := pool[rapid.IntRange(0, len(pool)-1).Draw(t, "c")]
			switch rapid.IntRange(0, 2).Draw(t, "op") {
			case 0:
				d := pool[rapid.IntRange(0, len(pool)-1).Draw(t, "d")]
				n, err := c.n.Concat(d.n)
				if err != nil {
					t.Fatal(err)
				}
				pool = append(pool, tracked{n, c.typ, append(slices.Clone(c.kids), d.kids...)})
			case 1:
				k := rapid.IntRange(0, len(c.kids)).Draw(t, "k")
				h, tl, err := c.n.Split(k)
				if err != nil {
					t.Fatal(err)
				}
				pool = append(pool, tracked{h, c.typ, slices.Clone(c.kids[:k])}, tracked{tl, c.typ, slices.Clone(c.kids[k:])})
			case 2:
				k := rapid.IntRange(0, len(c.kids)).Draw(t, "k")
				var child *tlv.Node
				var cb []byte
				if rapid.Bool().Draw(t, "nest") {
					d := pool[rapid.IntRange(0, len(pool)-1).Draw(t, "d")]
					child, cb = d.n, fresh(d)
				} else {
					cb = genModel(1, true).Draw(t, "leaf").encode()
					child = mustDecode(t, drawRope(t, cb))
					cb = child.Bytes() // a child's own trailer is kept; a root's is stripped
				}
				n, err := c.n.Insert(k, child)
				if err != nil {
					t.Fatal(err)
				}
				pool = append(pool, tracked{n, c.typ, slices.Insert(slices.Clone(c.kids), k, cb)})
			}
		}
		for i, c := range pool {
			if got, want := c.n.Bytes(), fresh(c); !bytes.Equal(got, want) {
				t.Fatalf("container %d\n got % x\nwant % x", i, got, want)
			}
		}
	})
}
