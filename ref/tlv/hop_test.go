package tlv_test

import (
	"bytes"
	"testing"

	"github.com/conform-suite/conform/ref/tlv"
)

// The forwarding node of the hop tests: link 0 a point-to-point serial link to
// the client, link 1 a CAN bus link to the peer "esp".
func testRouter(t testing.TB) *tlv.Router {
	t.Helper()
	r, err := tlv.NewRouter("/net/serial/stm", "/net/can/can0/esp")
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// The worked sequence with whole mount runs (graph model §The shedding rule and
// §A worked sequence; reconstructed§tlv-forward-hop and §4: the whole run is
// stripped from dst and the inbound run prepended to src, not one segment).
var (
	fwdBefore = hx(`0f 01 32 00  0a 00 01 00 01` +
		` 06 00 1c 00 03 "net" 03 "can" 04 "can0" 03 "esp" 05 "wheel" 04 "left"` +
		` 06 00 04 00 03 "app"` +
		` 01 00 01 00 2a`)
	fwdAfter = hx(`0f 01 30 00  0a 00 01 00 01` +
		` 06 00 0b 00 05 "wheel" 04 "left"` +
		` 06 00 13 00 03 "net" 06 "serial" 03 "stm" 03 "app"` +
		` 01 00 01 00 2a`)
)

func TestHopWorkedSequence(t *testing.T) {
	r := testRouter(t)
	for name, rope := range ropes(withTrailer(fwdBefore, 8, 1, 1)) {
		in := mustDecode(t, rope)
		res, err := r.Hop(in, 0)
		if err != nil {
			t.Fatalf("rope %s: %v", name, err)
		}
		if res.Terminus || res.Link != 1 {
			t.Fatalf("rope %s: %+v, want forward on link 1", name, res)
		}
		if got := res.Frame.Bytes(); !bytes.Equal(got, fwdAfter) {
			t.Fatalf("rope %s: after the hop\n got % x\nwant % x", name, got, fwdAfter)
		}
		// The OP and payload are re-emitted as the same views, never copied.
		if !sameViews(in.Children()[3].Payload(), res.Frame.Children()[3].Payload()) {
			t.Fatalf("rope %s: the payload was not re-emitted as its own views", name)
		}
		// A fresh trailer at egress; the next hop's ingress strips it.
		out, err := tlv.Egress{TSWidth: 4, CRC: tlv.CRC64XZ, Clock: fixedClock(42)}.Rope(res.Frame)
		if err != nil {
			t.Fatal(err)
		}
		if want := withTrailer(fwdAfter, 4, 2, 42); !out.EqualBytes(want) {
			t.Fatalf("rope %s: egress % x", name, out.Bytes())
		}
	}
	// At the next node the dst names a local vertex: the terminus.
	next, err := tlv.NewRouter("/net/can/can0/lb")
	if err != nil {
		t.Fatal(err)
	}
	res, err := next.Hop(mustDecode(t, tlv.NewRope(fwdAfter)), 0)
	if err != nil || !res.Terminus {
		t.Fatalf("at the terminus: %+v %v", res, err)
	}
}

func sameViews(a, b tlv.Rope) bool {
	var x, y [][]byte
	for v := range a.Views() {
		x = append(x, v)
	}
	for v := range b.Views() {
		y = append(y, v)
	}
	if len(x) != len(y) {
		return false
	}
	for i := range x {
		if len(x[i]) != len(y[i]) || &x[i][0] != &y[i][0] {
			return false
		}
	}
	return true
}

// Terminus detection (reconstructed§tlv-forward-hop): a dst that is a mount
// run with nothing after it is the connection's identity vertex; a dst that
// begins with no run is local.
func TestHopTerminus(t *testing.T) {
	r := testRouter(t)
	tests := []struct {
		dst      string
		terminus bool
		link     int
		rest     string
	}{
		{"/net/can/can0/esp", true, 0, ""},
		{"/net/serial/stm", true, 0, ""},
		{"/wheel/left", true, 0, ""},
		{"/", true, 0, ""},
		{"/net/can/can0", true, 0, ""},          // a prefix of a run is not a run
		{"/net/can/can0/esp2/x", true, 0, ""},   // segments compare whole
		{"/net/can/can0/esp/x", false, 1, "/x"}, // the whole run, not one segment
		{"/net/serial/stm/a/b", false, 0, "/a/b"},
	}
	for _, tt := range tests {
		f := tlv.Fwd{Op: tlv.OpWrite, Dst: mustPath(t, tt.dst), Src: mustPath(t, "/"), Payload: tlv.NewLeaf(tlv.TypeValue, nil)}
		res, err := r.Hop(f.Node(), 1)
		if err != nil {
			t.Fatalf("%s: %v", tt.dst, err)
		}
		if res.Terminus != tt.terminus {
			t.Fatalf("%s: terminus %v", tt.dst, res.Terminus)
		}
		if tt.terminus {
			continue
		}
		got, err := tlv.DecodeFwd(res.Frame)
		if err != nil {
			t.Fatal(err)
		}
		dst, _ := tlv.PathString(got.Dst)
		src, _ := tlv.PathString(got.Src)
		if res.Link != tt.link || dst != tt.rest || src != "/net/can/can0/esp" {
			t.Fatalf("%s: link %d dst %s src %s", tt.dst, res.Link, dst, src)
		}
	}
}

// The longer of two matching runs wins: a bus link's peer run is more specific.
func TestHopLongestRun(t *testing.T) {
	r, err := tlv.NewRouter("/net/can/can0", "/net/can/can0/7")
	if err != nil {
		t.Fatal(err)
	}
	f := tlv.Fwd{Op: tlv.OpWrite, Dst: mustPath(t, "/net/can/can0/7/x"), Src: mustPath(t, "/"), Payload: tlv.NewLeaf(tlv.TypeValue, nil)}
	res, err := r.Hop(f.Node(), 0)
	if err != nil || res.Link != 1 {
		t.Fatalf("%+v %v", res, err)
	}
}

// A forwarder re-emits what it received, minimal or not (the TLV pins (docs/requirements.md)):
// non-minimal LL headers on the FWD, its routes and its payload stay LL.
func TestHopKeepsNonMinimalHeaders(t *testing.T) {
	op := hx("0a 02 01 00 00 00 01")
	dstPayload := hx(`03 "net" 06 "serial" 03 "stm" 01 "x"`)
	dstTLV := append(header(0x06, 0x02, len(dstPayload)), dstPayload...)
	src := hx("06 02 00 00 00 00")
	val := hx("01 02 01 00 00 00 2a")
	body := bytes.Join([][]byte{op, dstTLV, src, val}, nil)
	in := append(header(0x0f, 0x03, len(body)), body...)
	res, err := testRouter(t).Hop(mustDecode(t, tlv.NewRope(in)), 0)
	if err != nil {
		t.Fatal(err)
	}
	runPayload := hx(`03 "net" 06 "serial" 03 "stm"`)
	wantBody := bytes.Join([][]byte{op, append(header(0x06, 0x02, 2), hx(`01 "x"`)...),
		append(header(0x06, 0x02, len(runPayload)), runPayload...), val}, nil)
	want := append(header(0x0f, 0x03, len(wantBody)), wantBody...)
	if got := res.Frame.Bytes(); !bytes.Equal(got, want) {
		t.Fatalf("\n got % x\nwant % x", got, want)
	}
}

func TestHopRefuses(t *testing.T) {
	r := testRouter(t)
	v := tlv.NewLeaf(tlv.TypeValue, nil)
	if _, err := r.Hop(v, 0); err == nil {
		t.Error("hop of a VALUE")
	}
	if _, err := r.Hop(mustDecode(t, tlv.NewRope(fwdBefore)), 2); err == nil {
		t.Error("hop from an unknown link")
	}
	bad := tlv.NewStruct(tlv.TypeFwd, tlv.NewLeaf(tlv.TypeOp, []byte{1}), tlv.NewLeaf(tlv.TypePath, hx("00")), tlv.NewLeaf(tlv.TypePath, nil), v)
	_, err := r.Hop(bad, 0)
	wantStatus(t, err, tlv.StatusPathInvalid)
	for _, run := range []string{"/can/can0/x", "/net/can", "/net/a/b/c/d", "/net/./x"} {
		if _, err := tlv.NewRouter(run); err == nil {
			t.Errorf("NewRouter(%q) accepted", run)
		}
	}
}
