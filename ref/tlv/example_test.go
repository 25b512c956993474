package tlv_test

import (
	"fmt"
	"time"

	"github.com/conform-suite/conform/ref/tlv"
)

// The graph model's drawing: a PATH whose header straddles two segments.
func ExampleDecode() {
	r := tlv.NewRope([]byte{0x06, 0x00, 0x06}, []byte{0x00, 0x05, 'a', 'l', 'p', 'h', 'a'})
	n, err := tlv.Decode(r)
	if err != nil {
		fmt.Println(err)
		return
	}
	s, _ := tlv.PathString(n.Payload())
	fmt.Println(n, s)
	// Output: PATH[05616c706861] /alpha
}

func ExampleCanonicalPath() {
	p, _ := tlv.CanonicalPath("sensor//temp/")
	fmt.Printf("% x\n", p)
	_, err := tlv.CanonicalPath("/sensor/../temp")
	fmt.Println(err)
	// Output:
	// 06 73 65 6e 73 6f 72 04 74 65 6d 70
	// tlv: tr::path::invalid: path "/sensor/../temp": segment ".." is not allowed
}

// One hop of a FWD, then egress with a fresh trailer from an injected clock.
func ExampleRouter_Hop() {
	router, _ := tlv.NewRouter("/net/serial/stm", "/net/can/can0/esp")
	dst, _ := tlv.CanonicalPath("/net/can/can0/esp/wheel/left")
	src, _ := tlv.CanonicalPath("/app")
	fwd := tlv.Fwd{Op: tlv.OpWrite, Dst: tlv.NewRope(dst), Src: tlv.NewRope(src),
		Payload: tlv.NewLeaf(tlv.TypeValue, []byte{42})}

	res, _ := router.Hop(fwd.Node(), 0)
	out, _ := tlv.DecodeFwd(res.Frame)
	d, _ := tlv.PathString(out.Dst)
	s, _ := tlv.PathString(out.Src)
	fmt.Println("link", res.Link, "dst", d, "src", s)

	clock := func() time.Time { return time.Unix(0, 0x0102030405060708) }
	wire, _ := tlv.Egress{TSWidth: 4, CRC: tlv.CRC32C, Clock: clock}.AppendTo(nil, res.Frame)
	fmt.Printf("trailer % x\n", wire[len(wire)-8:len(wire)-4])
	// Output:
	// link 1 dst /wheel/left src /net/serial/stm/app
	// trailer 08 07 06 05
}
