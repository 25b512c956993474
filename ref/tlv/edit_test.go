package tlv_test

import (
	"bytes"
	"testing"

	"github.com/conform-suite/conform/ref/tlv"
)

// The fixed children of the edit tests: decoded from one buffer, so their
// views share a segment, as in the graph model's wire-receive case.
func editChildren(t *testing.T) (*tlv.Node, [][]byte) {
	kids := [][]byte{
		hx("01 00 01 00 2a"),
		hx(`02 00 03 00 "key"`),
		hx("01 02 02 00 00 00 be ef"), // non-minimal LL: kept as received
		withTrailer(hx("01 00 01 00 07"), 4, 1, 9),
	}
	in := tlvBytes(0x0b, true, kids...)
	return mustDecode(t, cut(in, 3, 9, 17)), kids
}

// concat, split and insert do not move bytes, and their serialization equals
// the same edits applied to a fresh buffer (graph model §Spec-level proof
// obligation).
func TestEdits(t *testing.T) {
	c, kids := editChildren(t)
	extra := hx("03 00 08 00 01 02 03 04 05 06 07 08")
	extraNode := mustDecode(t, tlv.NewRope(extra))

	both, err := c.Concat(c)
	if err != nil {
		t.Fatal(err)
	}
	if want := tlvBytes(0x0b, true, append(append([][]byte{}, kids...), kids...)...); !bytes.Equal(both.Bytes(), want) {
		t.Fatalf("concat\n got % x\nwant % x", both.Bytes(), want)
	}
	for k := 0; k <= len(kids); k++ {
		head, tail, err := c.Split(k)
		if err != nil {
			t.Fatal(err)
		}
		if want := tlvBytes(0x0b, true, kids[:k]...); !bytes.Equal(head.Bytes(), want) {
			t.Fatalf("split %d head % x", k, head.Bytes())
		}
		if want := tlvBytes(0x0b, true, kids[k:]...); !bytes.Equal(tail.Bytes(), want) {
			t.Fatalf("split %d tail % x", k, tail.Bytes())
		}
		ins, err := c.Insert(k, extraNode)
		if err != nil {
			t.Fatal(err)
		}
		edited := append(append(append([][]byte{}, kids[:k]...), extra), kids[k:]...)
		if want := tlvBytes(0x0b, true, edited...); !bytes.Equal(ins.Bytes(), want) {
			t.Fatalf("insert at %d\n got % x\nwant % x", k, ins.Bytes(), want)
		}
		// The edited tree is the tree of the fresh buffer.
		if fresh := mustDecode(t, tlv.NewRope(ins.Bytes())); !fresh.Equal(ins) {
			t.Fatalf("insert at %d: tree %s, fresh %s", k, ins, fresh)
		}
	}
}

// An edit keeps payload views: no byte of a child is copied.
func TestEditsShareViews(t *testing.T) {
	in := tlvBytes(0x0b, true, hx("01 00 01 00 2a"), hx("01 00 01 00 2b"))
	c := mustDecode(t, tlv.NewRope(in))
	_, tail, err := c.Split(1)
	if err != nil {
		t.Fatal(err)
	}
	for v := range tail.Payload().Views() {
		if &v[0] != &in[len(in)-5] {
			t.Fatal("split copied the tail's bytes")
		}
	}
}

func TestEditsRefuse(t *testing.T) {
	c, _ := editChildren(t)
	leaf := tlv.NewLeaf(tlv.TypeValue, nil)
	if _, err := leaf.Concat(c); err == nil {
		t.Error("concat onto a leaf")
	}
	if _, _, err := c.Split(5); err == nil {
		t.Error("split past the end")
	}
	if _, err := c.Insert(-1, leaf); err == nil {
		t.Error("insert before the start")
	}
	if _, err := c.Insert(0, nil); err == nil {
		t.Error("insert of nil")
	}
}

// An edit that outgrows 16 bits sets LL in the new header (the TLV pins (docs/requirements.md)).
func TestEditsGrowLL(t *testing.T) {
	big := tlv.NewLeaf(tlv.TypeValue, make([]byte, 0x8000))
	c := tlv.NewStruct(tlv.TypeSettings, big)
	both, err := c.Concat(c)
	if err != nil {
		t.Fatal(err)
	}
	if both.Opt()&tlv.OptLL == 0 || both.Payload().Len() != 2*(0x8000+4) {
		t.Fatalf("concat opt %s, %d bytes", both.Opt(), both.Payload().Len())
	}
	head, _, _ := both.Split(1)
	if head.Opt()&tlv.OptLL != 0 {
		t.Fatalf("split head keeps LL it does not need: %s", head.Opt())
	}
}
