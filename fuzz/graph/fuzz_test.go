package fuzzgraph

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/ref/graph"
	"github.com/conform-suite/conform/ref/tlv"
	"github.com/conform-suite/conform/suites"
)

// paths is the address universe most operations draw from, small so that
// operations collide; an op may instead carry raw address text.
var paths = []string{"/", "/a", "/a/b", "a//b/", "/a/b/c", "/b", "/b/a", "/a/c", "/c/c/c"}

var fields = []string{
	":subscribers[]", ":subscribers[0]", ":subscribers[1]", ":subscribers[*]", ":subscribers[0].x",
	":settings", ":settings.app", ":settings.app.f", ":settings.app.g", ":settings.priority",
	":settings.m.x", ":schema", ":acl", ":children[]", ":identity", ":liveness.last_seen_ns", ":description",
}

// script reads operations from fuzz input bytes.
type script struct{ b []byte }

func (s *script) byte() byte {
	if len(s.b) == 0 {
		return 0
	}
	c := s.b[0]
	s.b = s.b[1:]
	return c
}

func (s *script) pick(n int) int { return int(s.byte()) % n }

func (s *script) path() string {
	if c := s.byte(); c >= 0xF0 {
		// Raw address text: the length, then the bytes.
		n := int(s.byte()) % 24
		if n > len(s.b) {
			n = len(s.b)
		}
		t := string(s.b[:n])
		s.b = s.b[n:]
		return t
	} else {
		return paths[int(c)%len(paths)]
	}
}

func (s *script) value() *tlv.Node {
	switch s.pick(6) {
	case 0:
		return tlv.StatusNode(tlv.StatusOK)
	case 1:
		p, _ := tlv.CanonicalPath(paths[s.pick(len(paths))])
		sub := tlv.Subscriber{Target: tlv.NewRope(p)}
		if s.byte()&1 == 1 {
			set, _ := tlv.DeliveryPolicy{DurabilityRequest: true}.Setting()
			sub.HasSettings, sub.Settings = true, []tlv.Setting{set}
		}
		return sub.Node()
	case 2:
		pt := tlv.Point{Name: "x", Value: tlv.NewLeaf(tlv.TypeValue, []byte{s.byte()}),
			Children: []tlv.Point{{Name: string('a' + rune(s.pick(3))), Value: tlv.NewLeaf(tlv.TypeValue, []byte{s.byte()})}, {Name: "c"}}}
		return pt.Node()
	case 3:
		// Arbitrary bytes, decoded as a TLV when they are one.
		n := s.pick(16)
		if n > len(s.b) {
			n = len(s.b)
		}
		raw := s.b[:n]
		s.b = s.b[n:]
		if node, err := tlv.Decode(tlv.NewRope(raw)); err == nil {
			return node
		}
	}
	return tlv.NewLeaf(tlv.TypeValue, []byte{s.byte()})
}

func caller(s *script) graph.Caller {
	switch s.pick(4) {
	case 0:
		return graph.Owner()
	case 1:
		return graph.Local("app")
	case 2:
		return graph.Peer("peer", "/net/tcp/l0")
	}
	return graph.Peer("other", "/net/tcp/l1")
}

// norm returns the string form of a vertex address, or "" when s is not one.
func norm(s string) string {
	a, err := graph.ParseAddress(s)
	if err != nil || a.HasField {
		return ""
	}
	return a.String()
}

func under(p, root string) bool {
	return root == "/" || p == root || strings.HasPrefix(p, root+"/")
}

// FuzzScript runs an operation script and checks, after every operation: no
// panic; every refusal carries a status; a remote write refused as not_found
// created nothing; retirement, assign, field writes and evictions deliver
// nothing; every delivery rides a live edge of a vertex at or above its source
// and carries a decodable TLV; every pending vertex is live; and after a
// propagate the only vertices its subtree leaves pending are EXPLICIT ones.
func FuzzScript(f *testing.F) {
	f.Add([]byte{0, 1, 0, 1, 2, 0, 3, 1, 4, 0})
	f.Add([]byte{1, 2, 2, 0, 5, 2, 5, 2, 6, 0, 3, 0, 1, 0, 4, 7, 2})
	f.Add([]byte{9, 1, 8, 2, 1, 1, 0, 3, 3, 0, 4, 0})
	f.Add([]byte{0xF0, 5, '/', 'a', ':', 's', 'c'})
	f.Fuzz(func(t *testing.T, data []byte) {
		s := &script{b: data}
		g := graph.New(graph.Config{})
		must := func(what string, err error) {
			if err != nil {
				if _, ok := graph.StatusOf(err); !ok {
					t.Fatalf("%s: an error without a status: %v", what, err)
				}
			}
		}
		modes := map[string]graph.DeliveryMode{}
		for steps := 0; len(s.b) > 0 && steps < 64; steps++ {
			op := s.pick(12)
			var sweptRoot string
			silent := false
			switch op {
			case 0, 1: // data or field write
				c, p := caller(s), s.path()
				if op == 1 {
					p = strings.TrimSuffix(p, "/") + fields[s.pick(len(fields))]
				}
				before := g.Len()
				err := g.Write(c, p, s.value())
				must("write", err)
				if st, _ := graph.StatusOf(err); c.Remote && st == tlv.StatusPathNotFound && g.Len() != before {
					t.Fatalf("a refused remote write to %q created vertices", p)
				}
				silent = op == 1
				if op == 0 && err == nil {
					sweptRoot = norm(p)
				}
			case 2:
				_, err := g.Read(caller(s), s.path()+fields[s.pick(len(fields))])
				must("read", err)
				_, err = g.Read(caller(s), s.path())
				must("read", err)
			case 3:
				must("assign", g.Assign(s.path(), s.value()))
				silent = true
			case 4:
				p := s.path()
				err := g.Propagate(p, graph.Emission(s.pick(2)))
				must("propagate", err)
				if err == nil {
					sweptRoot = norm(p)
				}
			case 5:
				p, m := s.path(), graph.DeliveryMode(s.pick(3))
				if g.SetDeliveryMode(p, m) == nil {
					modes[norm(p)] = m
				}
			case 6:
				p := s.path()
				must("retire", g.Retire(caller(s), p))
				if q := norm(p); q != "" && !g.Exists(q) {
					for k := range modes {
						if under(k, q) {
							delete(modes, k)
						}
					}
				}
				silent = true
			case 7:
				must("register", g.Register(s.path(), nil))
			case 8:
				must("history", g.SetHistoryDepth(s.path(), s.pick(4)))
			case 9:
				g.EvictLinkEdges([]string{"/net/tcp/l0", "/net/tcp/l1"}[s.pick(2)])
				silent = true
			case 10:
				_, err := g.Await(caller(s), s.path(), 0)
				must("await", err)
			case 11:
				must("declare", g.DeclareAppFields(s.path(), []graph.AppField{{Name: "f", Access: graph.Access(s.pick(3))}, {Name: "g", Access: graph.ReadWrite}}))
			}
			ds := g.TakeDeliveries()
			for _, d := range ds {
				if silent && !d.Latched {
					t.Fatalf("op %d delivered %+v", op, d)
				}
				if !under(d.Source, d.Vertex) || !g.Exists(d.Vertex) {
					t.Fatalf("delivery %+v: not an edge at or above a live source", d)
				}
				if _, err := tlv.Decode(tlv.NewRope(d.TLV)); err != nil {
					t.Fatalf("delivery %+v: %v", d, err)
				}
				slot, err := g.Read(graph.Owner(), strings.TrimSuffix(d.Vertex, "/")+":subscribers["+itoa(d.Slot)+"]")
				if err != nil || slot.Type() != tlv.TypeSubscriber {
					t.Fatalf("delivery %+v rides no edge: %v %v", d, slot, err)
				}
			}
			for _, p := range g.Pending() {
				if !g.Exists(p) {
					t.Fatalf("pending %s is not live", p)
				}
				if sweptRoot != "" && under(p, sweptRoot) && p != sweptRoot && modes[p] != graph.Explicit {
					t.Fatalf("after the sweep at %s, %s (mode %v) is still pending", sweptRoot, p, modes[p])
				}
			}
		}
	})
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}

// FuzzGraphOp feeds arbitrary bytes, read as a conform.v1 graph run, to the
// reference's op handler, as a corrupt or hostile harness request would
// arrive: the handler must answer (a result with one output per script, or
// an Error), never panic or hang, and every reply must carry decodable TLVs.
func FuzzGraphOp(f *testing.F) {
	seed := &conformpb.GraphRun{Scripts: []*conformpb.GraphScript{{
		Callers: []*conformpb.GraphCaller{{Name: "peer", Kind: conformpb.GraphCallerKind_GRAPH_CALLER_REMOTE, Link: "/net/tcp/l0"}},
		Steps: []*conformpb.GraphStep{
			{Step: &conformpb.GraphStep_Subscribe{Subscribe: &conformpb.GraphSubscribe{Path: "/", Subscriber: []byte{0x04, 0x01, 0x06, 0x00, 0x06, 0x00, 0x02, 0x00, 0x01, 'o'}}}},
			{Step: &conformpb.GraphStep_Write{Write: &conformpb.GraphWrite{Caller: "peer", Address: "/a", Value: []byte{0x01, 0x00, 0x01, 0x00, 'x'}}}},
			{Step: &conformpb.GraphStep_Write{Write: &conformpb.GraphWrite{Address: "/a/b", Value: []byte{0x01, 0x00, 0x01, 0x00, 'y'}}}},
			{Step: &conformpb.GraphStep_Await{Await: &conformpb.GraphAwait{Address: "/a/b"}}},
			{Step: &conformpb.GraphStep_Assign{Assign: &conformpb.GraphAssign{Path: "/a/b", Value: []byte{0x01, 0x00, 0x00, 0x00}}}},
			{Step: &conformpb.GraphStep_Propagate{Propagate: &conformpb.GraphPropagate{Path: "/", Fold: true}}},
			{Step: &conformpb.GraphStep_Read{Read: &conformpb.GraphRead{Address: "/a"}}},
		},
	}}}
	b, err := proto.Marshal(seed)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	ref := suites.Default().Reference()
	f.Fuzz(func(t *testing.T, data []byte) {
		var run conformpb.GraphRun
		if proto.Unmarshal(data, &run) != nil || len(run.Scripts) > 8 {
			return
		}
		resp := ref.Handle(context.Background(), &conformpb.Request{Op: &conformpb.Request_Graph{Graph: &conformpb.GraphOp{Op: &conformpb.GraphOp_Run{Run: &run}}}})
		if e := resp.GetError(); e != nil {
			if strings.HasPrefix(e.GetMessage(), "panic") {
				t.Fatalf("the handler panicked: %s", e.GetMessage())
			}
			return
		}
		outs := resp.GetGraph().GetRun().GetOutputs()
		if len(outs) != len(run.Scripts) {
			t.Fatalf("%d scripts, %d outputs", len(run.Scripts), len(outs))
		}
		for _, o := range outs {
			for _, r := range o.GetReplies() {
				for _, d := range r.GetDeliveries() {
					if _, err := tlv.Decode(tlv.NewRope(d.GetTlv())); err != nil {
						t.Fatalf("delivery %v: %v", d, err)
					}
				}
				if len(r.GetValue()) > 0 {
					if _, err := tlv.Decode(tlv.NewRope(r.GetValue())); err != nil {
						t.Fatalf("reply value %x: %v", r.GetValue(), err)
					}
				}
			}
		}
	})
}
