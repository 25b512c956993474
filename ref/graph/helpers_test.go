package graph_test

import (
	"encoding/hex"
	"fmt"

	"github.com/conform-suite/conform/ref/graph"
	"github.com/conform-suite/conform/ref/tlv"
)

// tb is what the helpers need of a *testing.T or a *rapid.T.
type tb interface {
	Helper()
	Fatal(args ...any)
	Fatalf(format string, args ...any)
}

func val(s string) *tlv.Node { return tlv.NewLeaf(tlv.TypeValue, []byte(s)) }

func sub(t tb, target string, durable bool) *tlv.Node {
	t.Helper()
	p, err := tlv.CanonicalPath(target)
	if err != nil {
		t.Fatal(err)
	}
	s := tlv.Subscriber{Target: tlv.NewRope(p)}
	if durable {
		set, err := tlv.DeliveryPolicy{DurabilityRequest: true}.Setting()
		if err != nil {
			t.Fatal(err)
		}
		s.HasSettings, s.Settings = true, []tlv.Setting{set}
	}
	return s.Node()
}

// subscribe appends a local subscriber at path targeting target.
func subscribe(t tb, g *graph.Graph, path, target string) {
	t.Helper()
	must(t, g.Write(graph.Owner(), path+":subscribers[]", sub(t, target, false)))
}

func must(t tb, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// wantStatus fails unless err carries st (tlv.StatusOK meaning no error).
func wantStatus(t tb, err error, st tlv.Status) {
	t.Helper()
	if st == tlv.StatusOK {
		if err != nil {
			t.Fatalf("got %v, want success", err)
		}
		return
	}
	got, ok := graph.StatusOf(err)
	if !ok || got != st {
		t.Fatalf("got %v, want %s", err, st)
	}
}

// brief renders deliveries as "vertex#slot<-source=bytes", the form the
// tables compare.
func brief(ds []graph.Delivery) []string {
	var out []string
	for _, d := range ds {
		s := fmt.Sprintf("%s#%d<-%s=%s", d.Vertex, d.Slot, d.Source, hex.EncodeToString(d.TLV))
		if d.Latched {
			s += " latched"
		}
		out = append(out, s)
	}
	return out
}

func hexOf(n *tlv.Node) string { return hex.EncodeToString(n.Bytes()) }

// point builds a POINT tree from nested specs.
func point(name string, value *tlv.Node, kids ...tlv.Point) tlv.Point {
	return tlv.Point{Name: name, Value: value, Children: kids}
}

func pnode(p tlv.Point) *tlv.Node { return p.Node() }
