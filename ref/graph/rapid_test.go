package graph_test

import (
	"encoding/hex"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/conform-suite/conform/ref/graph"
	"github.com/conform-suite/conform/ref/tlv"
)

// The properties compare the reference against model, a graph written the
// simplest way: string paths, whole-subtree walks, no ordered pending set.
type model struct {
	live  map[string]bool // normalized path ("/a/b"; the root "/") → live
	value map[string]string
	seq   map[string]int
	swept map[string]int
	mode  map[string]graph.DeliveryMode
	subs  map[string][]string // path → the link each slot's edge was admitted over ("-" for an empty slot)
}

func newModel() *model {
	return &model{
		live: map[string]bool{"/": true}, value: map[string]string{}, seq: map[string]int{},
		swept: map[string]int{}, mode: map[string]graph.DeliveryMode{}, subs: map[string][]string{},
	}
}

func parentOf(p string) string {
	if p == "/" {
		return ""
	}
	i := strings.LastIndexByte(p, '/')
	if i == 0 {
		return "/"
	}
	return p[:i]
}

func isUnder(p, root string) bool {
	return root == "/" || p == root || strings.HasPrefix(p, root+"/")
}

func (m *model) mkdir(p string) {
	for q := p; q != ""; q = parentOf(q) {
		m.live[q] = true
	}
}

func (m *model) assign(p, v string) {
	m.value[p] = v
	m.seq[p]++
}

// deliver returns what a delivery of p's value makes: one per edge of p and of
// each ancestor.
func (m *model) deliver(p string) []string {
	var out []string
	for q := p; q != ""; q = parentOf(q) {
		for i, link := range m.subs[q] {
			if link == emptySlot {
				continue
			}
			out = append(out, fmt.Sprintf("%s#%d<-%s=%s", q, i, p, m.value[p]))
		}
	}
	return out
}

// emptySlot marks a slot whose edge was evicted; an append reuses the lowest.
const emptySlot = "-"

// join appends an edge admitted over link at p, in the lowest empty slot.
func (m *model) join(p, link string) {
	for i, l := range m.subs[p] {
		if l == emptySlot {
			m.subs[p][i] = link
			return
		}
	}
	m.subs[p] = append(m.subs[p], link)
}

// evict empties every slot admitted over link and returns how many.
func (m *model) evict(link string) int {
	n := 0
	for p, slots := range m.subs {
		for i, l := range slots {
			if l == link {
				m.subs[p][i] = emptySlot
				n++
			}
		}
	}
	return n
}

func (m *model) propagate(root string) []string {
	var out []string
	var sel []string
	for p := range m.live {
		if !m.live[p] || !isUnder(p, root) {
			continue
		}
		if _, ok := m.value[p]; !ok {
			continue
		}
		if p == root {
			sel = append(sel, p)
			continue
		}
		switch m.mode[p] {
		case graph.IfNewer:
			if m.seq[p] > m.swept[p] {
				sel = append(sel, p)
			}
		case graph.Unconditional:
			sel = append(sel, p)
		}
	}
	for _, p := range sel {
		out = append(out, m.deliver(p)...)
		m.swept[p] = m.seq[p]
	}
	return out
}

func (m *model) retire(root string) {
	for p := range m.live {
		if m.live[p] && isUnder(p, root) {
			m.live[p] = false
			delete(m.value, p)
			delete(m.subs, p)
			delete(m.mode, p)
			m.swept[p] = m.seq[p]
		}
	}
}

func (m *model) hasLiveChild(p string) bool {
	for q, ok := range m.live {
		if ok && q != p && parentOf(q) == p {
			return true
		}
	}
	return false
}

// briefValues renders deliveries as the model does, values as text.
func briefValues(ds []graph.Delivery) []string {
	var out []string
	for _, d := range ds {
		n, err := tlv.Decode(tlv.NewRope(d.TLV))
		v := hex.EncodeToString(d.TLV)
		if err == nil && n.Type() == tlv.TypeValue {
			v = string(n.Payload().Bytes())
		}
		out = append(out, fmt.Sprintf("%s#%d<-%s=%s", d.Vertex, d.Slot, d.Source, v))
	}
	return out
}

var segs = []string{"a", "b", "c"}

// links are the links remote subscriptions are admitted over.
var links = []string{"/net/tcp/l0", "/net/tcp/l1"}

// genPath draws a normalized path of depth 1–3 over a small alphabet, so that
// operations collide.
func genPath() *rapid.Generator[string] {
	return rapid.Custom(func(t *rapid.T) string {
		n := rapid.IntRange(1, 3).Draw(t, "depth")
		var parts []string
		for range n {
			parts = append(parts, rapid.SampledFrom(segs).Draw(t, "seg"))
		}
		return "/" + strings.Join(parts, "/")
	})
}

// spell draws one of the many string spellings of a normalized path.
func spell(t *rapid.T, p string) string {
	parts := strings.Split(strings.TrimPrefix(p, "/"), "/")
	var b strings.Builder
	if rapid.Bool().Draw(t, "lead") {
		b.WriteString("/")
	}
	for i, s := range parts {
		if i > 0 {
			b.WriteString(strings.Repeat("/", rapid.IntRange(1, 3).Draw(t, "sep")))
		}
		b.WriteString(s)
	}
	if rapid.Bool().Draw(t, "trail") {
		b.WriteString("/")
	}
	return b.String()
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	sort.Strings(s)
	return s
}

// TestStateMachine drives random scripts through the reference and the model:
// every subscriber sees exactly one delivery per covering write or sweep that
// selects the vertex; k assigns and one sweep deliver once, with the latest
// value; overlapping sweeps never double-send; a remote write to an unknown
// path never creates; retirement never delivers; a read never returns older
// than the last delivery on that path. (graph model §Subtree subscriptions…,
// §Assign, propagate, and the coalescing sweep, §Delivery mode, §Vertex
// lifecycle, §Retirement notification.)
func TestStateMachine(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		g := graph.New(graph.Config{})
		m := newModel()
		lastDelivered := map[string]string{}
		check := func(op string, want []string) {
			got := g.TakeDeliveries()
			for _, d := range got {
				n, err := tlv.Decode(tlv.NewRope(d.TLV))
				if err == nil {
					lastDelivered[d.Source] = string(n.Payload().Bytes())
				}
			}
			gb := briefValues(got)
			if !slices.Equal(sorted(gb), sorted(want)) {
				t.Fatalf("%s: deliveries\n got %v\nwant %v", op, gb, want)
			}
		}
		counter := 0
		nextValue := func() string { counter++; return fmt.Sprint(counter) }
		// awaits holds the outstanding awaits by path: an await completes on
		// the next assign at its vertex, with that value, and on nothing else.
		awaits := map[string][]*graph.Waiter{}
		woken := func(p, v string) {
			for _, w := range awaits[p] {
				got, err := w.Result()
				if err != nil || string(got.Payload().Bytes()) != v {
					t.Fatalf("an await on %s completed with %v, %v after the assign of %q", p, got, err, v)
				}
			}
			delete(awaits, p)
			for q, ws := range awaits {
				for _, w := range ws {
					if w.Done() {
						t.Fatalf("an await on %s completed on an assign at %s", q, p)
					}
				}
			}
		}
		t.Repeat(map[string]func(*rapid.T){
			"localWrite": func(t *rapid.T) {
				p := genPath().Draw(t, "path")
				v := nextValue()
				must(t, g.Write(graph.Local("app"), spell(t, p), val(v)))
				m.mkdir(p)
				m.assign(p, v)
				woken(p, v)
				check("write "+p, m.propagate(p))
			},
			"remoteWrite": func(t *rapid.T) {
				p := genPath().Draw(t, "path")
				v := nextValue()
				before := g.Len()
				err := g.Write(graph.Peer("peer", "/net/tcp/l0"), spell(t, p), val(v))
				if !m.live[p] {
					wantStatus(t, err, tlv.StatusPathNotFound)
					if g.Len() != before || g.Exists(p) {
						t.Fatalf("remote write to unknown %s created a vertex", p)
					}
					check("remote write "+p, nil)
					return
				}
				must(t, err)
				m.assign(p, v)
				woken(p, v)
				check("remote write "+p, m.propagate(p))
			},
			"assign": func(t *rapid.T) {
				p := genPath().Draw(t, "path")
				v := nextValue()
				err := g.Assign(spell(t, p), val(v))
				if !m.live[p] {
					wantStatus(t, err, tlv.StatusPathNotFound)
					return
				}
				must(t, err)
				m.assign(p, v)
				woken(p, v)
				check("assign "+p, nil)
			},
			"propagate": func(t *rapid.T) {
				p := rapid.SampledFrom([]string{"/", "/a", "/b", "/a/b", "/a/a/c"}).Draw(t, "root")
				err := g.Propagate(p, graph.EmitEach)
				if !m.live[p] {
					wantStatus(t, err, tlv.StatusPathNotFound)
					return
				}
				must(t, err)
				check("propagate "+p, m.propagate(p))
			},
			"subscribe": func(t *rapid.T) {
				p := rapid.SampledFrom([]string{"/", "/a", "/b", "/a/b", "/c/c"}).Draw(t, "at")
				err := g.Write(graph.Owner(), p+":subscribers[]", sub(t, "/obs", false))
				if !m.live[p] {
					wantStatus(t, err, tlv.StatusPathNotFound)
					return
				}
				must(t, err)
				m.join(p, "")
				check("subscribe "+p, nil)
			},
			"remoteSubscribe": func(t *rapid.T) {
				p := rapid.SampledFrom([]string{"/", "/a", "/b", "/a/b"}).Draw(t, "at")
				link := rapid.SampledFrom(links).Draw(t, "link")
				err := g.Write(graph.Peer("peer", link), p+":subscribers[]", sub(t, "/remote", false))
				if !m.live[p] {
					wantStatus(t, err, tlv.StatusPathNotFound)
					return
				}
				must(t, err)
				m.join(p, link)
				check("remote subscribe "+p, nil)
			},
			"evict": func(t *rapid.T) {
				link := rapid.SampledFrom(links).Draw(t, "link")
				if got, want := g.EvictLinkEdges(link), m.evict(link); got != want {
					t.Fatalf("evict %s: %d edges, want %d", link, got, want)
				}
				check("evict "+link, nil) // eviction never delivers
			},
			"await": func(t *rapid.T) {
				p := genPath().Draw(t, "path")
				w, err := g.Await(graph.Owner(), spell(t, p), 0)
				if !m.live[p] {
					wantStatus(t, err, tlv.StatusPathNotFound)
					return
				}
				must(t, err)
				awaits[p] = append(awaits[p], w)
			},
			"fieldWrite": func(t *rapid.T) {
				// A field write wakes no await, advances no sequence and
				// propagates nothing (§Owner-declared application fields).
				p := genPath().Draw(t, "path")
				if !m.live[p] {
					return
				}
				must(t, g.DeclareAppFields(p, []graph.AppField{{Name: "f", Access: graph.ReadWrite}}))
				before, _ := g.Seq(p)
				must(t, g.Write(graph.Local("app"), p+":settings.app.f", val(nextValue())))
				if after, _ := g.Seq(p); after != before {
					t.Fatalf("a field write at %s advanced the sequence %d -> %d", p, before, after)
				}
				check("field write "+p, nil)
			},
			"setMode": func(t *rapid.T) {
				p := genPath().Draw(t, "path")
				mode := graph.DeliveryMode(rapid.IntRange(0, 2).Draw(t, "mode"))
				err := g.SetDeliveryMode(p, mode)
				if !m.live[p] {
					wantStatus(t, err, tlv.StatusPathNotFound)
					return
				}
				must(t, err)
				m.mode[p] = mode
			},
			"retire": func(t *rapid.T) {
				p := genPath().Draw(t, "path")
				must(t, g.Retire(graph.Owner(), spell(t, p)))
				m.retire(p)
				for q := range awaits {
					if isUnder(q, p) {
						delete(awaits, q) // completed with not_found
					}
				}
				check("retire "+p, nil) // retirement never delivers
			},
			"read": func(t *rapid.T) {
				p := genPath().Draw(t, "path")
				got, err := g.Read(graph.Owner(), spell(t, p))
				switch {
				case !m.live[p]:
					wantStatus(t, err, tlv.StatusPathNotFound)
				case m.hasLiveChild(p):
					must(t, err)
					if got.Type() != tlv.TypePoint {
						t.Fatalf("branch read of %s: %v", p, got)
					}
				default:
					v, ok := m.value[p]
					if !ok {
						wantStatus(t, err, tlv.StatusPathNotFound)
						return
					}
					must(t, err)
					if string(got.Payload().Bytes()) != v {
						t.Fatalf("read %s = %v, want %q", p, got, v)
					}
					if d, ok := lastDelivered[p]; ok && atoi(v) < atoi(d) {
						t.Fatalf("read %s = %s, older than delivered %s", p, v, d)
					}
				}
			},
		})
	})
}

func atoi(s string) int {
	n := 0
	fmt.Sscan(s, &n)
	return n
}

// Two spellings of one path always reach one vertex (§Dispatch keyed on
// canonical PATH TLV bytes).
func TestPropSpellingsReachOneVertex(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		g := graph.New(graph.Config{})
		p := genPath().Draw(t, "path")
		must(t, g.Write(graph.Owner(), spell(t, p), val("x")))
		must(t, g.Write(graph.Owner(), spell(t, p), val("y")))
		if seq, ok := g.Seq(spell(t, p)); !ok || seq != 2 {
			t.Fatalf("two spellings of %s: seq %d, live %v", p, seq, ok)
		}
		if len(g.Paths()) != strings.Count(p, "/")+1 {
			t.Fatalf("vertices %v for %s", g.Paths(), p)
		}
	})
}

// k assigns between sweeps flush once with the latest value, whatever k, and
// a second overlapping sweep sends nothing (§Assign, propagate, and the
// coalescing sweep).
func TestPropCoalescing(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		g := graph.New(graph.Config{})
		leaves := rapid.SliceOfNDistinct(genPath(), 1, 6, func(s string) string { return s }).Draw(t, "leaves")
		for _, l := range leaves {
			must(t, g.Register(l+"/leaf", nil))
		}
		subscribe(t, g, "/", "/top")
		latest := map[string]string{}
		for i, k := 0, rapid.IntRange(1, 30).Draw(t, "k"); i < k; i++ {
			l := rapid.SampledFrom(leaves).Draw(t, "which") + "/leaf"
			v := fmt.Sprint(i)
			must(t, g.Assign(l, val(v)))
			latest[l] = v
		}
		root := rapid.SampledFrom(append([]string{"/"}, leaves...)).Draw(t, "root")
		must(t, g.Propagate(root, graph.EmitEach))
		first := g.TakeDeliveries()
		must(t, g.Propagate("/", graph.EmitEach))
		second := g.TakeDeliveries()
		seen := map[string]int{}
		for _, d := range append(first, second...) {
			seen[d.Source]++
			n, _ := tlv.Decode(tlv.NewRope(d.TLV))
			if string(n.Payload().Bytes()) != latest[d.Source] {
				t.Fatalf("%s delivered %v, latest %q", d.Source, n, latest[d.Source])
			}
		}
		for l := range latest {
			if seen[l] != 1 {
				t.Fatalf("%s delivered %d times over two overlapping sweeps", l, seen[l])
			}
		}
	})
}
