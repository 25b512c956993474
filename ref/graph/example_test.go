package graph_test

import (
	"fmt"

	"github.com/conform-suite/conform/ref/graph"
	"github.com/conform-suite/conform/ref/tlv"
)

// A subtree subscriber at /sensor sees one delivery per sweep, carrying the
// latest of the values assigned since the last one.
func Example() {
	g := graph.New(graph.Config{})
	_ = g.Register("/sensor/temp", nil)
	target, _ := tlv.CanonicalPath("/logger")
	_ = g.Write(graph.Owner(), "/sensor:subscribers[]", tlv.Subscriber{Target: tlv.NewRope(target)}.Node())

	for _, v := range []string{"20", "21", "22"} {
		_ = g.Assign("/sensor/temp", tlv.NewLeaf(tlv.TypeValue, []byte(v)))
	}
	_ = g.Propagate("/sensor", graph.EmitEach)
	for _, d := range g.TakeDeliveries() {
		fmt.Printf("%s slot %d -> %s: % x\n", d.Vertex, d.Slot, d.Target, d.TLV)
	}

	// A remote write to a path nobody created answers not_found.
	err := g.Write(graph.Peer("p", "/net/tcp/l0"), "/sensor/hum", tlv.NewLeaf(tlv.TypeValue, []byte("1")))
	st, _ := graph.StatusOf(err)
	fmt.Println(st, g.Exists("/sensor/hum"))
	// Output:
	// /sensor slot 0 -> /logger: 01 00 02 00 32 32
	// tr::path::not_found false
}
