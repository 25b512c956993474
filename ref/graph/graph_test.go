package graph_test

import (
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/conform-suite/conform/ref/graph"
	"github.com/conform-suite/conform/ref/tlv"
)

// §Dispatch keyed on canonical PATH TLV bytes: two spellings of one path reach
// one vertex.
func TestCanonicalKeying(t *testing.T) {
	g := graph.New(graph.Config{})
	must(t, g.Write(graph.Owner(), "sensor/temp", val("a")))
	for _, spelling := range []string{"/sensor/temp", "sensor//temp/", "//sensor/temp"} {
		got, err := g.Read(graph.Owner(), spelling)
		must(t, err)
		if hexOf(got) != hexOf(val("a")) {
			t.Errorf("%q: got %v", spelling, got)
		}
	}
	if diff := cmp.Diff([]string{"/", "/sensor", "/sensor/temp"}, g.Paths()); diff != "" {
		t.Errorf("vertices (-want +got):\n%s", diff)
	}
}

// §Vertex lifecycle: write-creates (mkdir -p, CREATE on the nearest live
// ancestor) and the remote write that creates nothing (RFC-0005 §D amendment 1).
func TestWriteCreates(t *testing.T) {
	tests := []struct {
		name    string
		caller  graph.Caller
		acl     *graph.ACL // installed at /a before the write
		addr    string
		want    tlv.Status
		created bool
	}{
		{"owner creates with ancestors", graph.Owner(), nil, "/a/b/c", tlv.StatusOK, true},
		{"local caller with CREATE", graph.Local("app"), &graph.ACL{Default: graph.RightCreate | graph.RightWrite}, "/a/b/c", tlv.StatusOK, true},
		{"local caller without CREATE", graph.Local("app"), &graph.ACL{Default: graph.RightWrite}, "/a/b/c", tlv.StatusAccessDenied, false},
		{"CREATE judged on nearest live ancestor", graph.Local("app"), &graph.ACL{Default: graph.RightCreate | graph.RightWrite, Grants: map[string]graph.Rights{"app": graph.RightWrite}}, "/a/x", tlv.StatusAccessDenied, false},
		{"remote write to a missing path", graph.Peer("p", "/net/tcp/l0"), nil, "/a/b/c", tlv.StatusPathNotFound, false},
		{"remote write to a missing branch", graph.Peer("p", "/net/tcp/l0"), nil, "/a/zz", tlv.StatusPathNotFound, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := graph.New(graph.Config{})
			must(t, g.Register("/a", nil))
			if tc.acl != nil {
				must(t, g.SetACL("/a", tc.acl))
			}
			before := g.Len()
			wantStatus(t, g.Write(tc.caller, tc.addr, val("v")), tc.want)
			if g.Exists(tc.addr) != tc.created {
				t.Errorf("exists = %v, want %v", g.Exists(tc.addr), tc.created)
			}
			if !tc.created && g.Len() != before {
				t.Errorf("a refused write created %d vertex objects", g.Len()-before)
			}
		})
	}
}

// §Subtree subscriptions: a write at W delivers the written TLV as-is once to
// each subscriber of W and of every ancestor, and to nobody else.
func TestSubtreeDelivery(t *testing.T) {
	g := graph.New(graph.Config{})
	for _, p := range []string{"/", "/a", "/a/b", "/a/b/c", "/x"} {
		must(t, g.Register(p, nil))
	}
	subscribe(t, g, "/", "/s/root")
	subscribe(t, g, "/a", "/s/a")
	subscribe(t, g, "/a", "/s/a2")
	subscribe(t, g, "/a/b/c", "/s/c")
	subscribe(t, g, "/x", "/s/x")
	v := val("hello")
	must(t, g.Write(graph.Owner(), "/a/b", v))
	want := []string{
		"/a#0<-/a/b=" + hexOf(v), "/a#1<-/a/b=" + hexOf(v), "/#0<-/a/b=" + hexOf(v),
	}
	if diff := cmp.Diff(want, brief(g.TakeDeliveries())); diff != "" {
		t.Errorf("deliveries (-want +got):\n%s", diff)
	}
}

// §Assign, propagate, and the coalescing sweep.
func TestCoalescingSweep(t *testing.T) {
	g := graph.New(graph.Config{})
	for _, p := range []string{"/r/a/x", "/r/a/y", "/r/b"} {
		must(t, g.Register(p, nil))
	}
	subscribe(t, g, "/", "/s/top")
	subscribe(t, g, "/r/a/x", "/s/x")

	// k assigns between sweeps flush once, with the latest value.
	for _, s := range []string{"1", "2", "3"} {
		must(t, g.Assign("/r/a/x", val(s)))
	}
	if got := g.TakeDeliveries(); len(got) != 0 {
		t.Fatalf("assign sent %v", brief(got))
	}
	if diff := cmp.Diff([]string{"/r/a/x"}, g.Pending()); diff != "" {
		t.Errorf("pending (-want +got):\n%s", diff)
	}
	must(t, g.Propagate("/r/a", graph.EmitEach))
	want := []string{"/r/a/x#0<-/r/a/x=" + hexOf(val("3")), "/#0<-/r/a/x=" + hexOf(val("3"))}
	if diff := cmp.Diff(want, brief(g.TakeDeliveries())); diff != "" {
		t.Errorf("sweep at /r/a: the root argument selects, every observer receives (-want +got):\n%s", diff)
	}
	// An overlapping sweep neither double-sends nor misses.
	must(t, g.Propagate("/r", graph.EmitEach))
	if got := g.TakeDeliveries(); len(got) != 0 {
		t.Errorf("overlapping sweep re-sent %v", brief(got))
	}
	if len(g.Pending()) != 0 {
		t.Errorf("pending after sweeps: %v", g.Pending())
	}
	// A sweep rooted elsewhere leaves pending vertices outside its range.
	must(t, g.Assign("/r/b", val("b")))
	must(t, g.Propagate("/r/a", graph.EmitEach))
	if diff := cmp.Diff([]string{"/r/b"}, g.Pending()); diff != "" {
		t.Errorf("pending (-want +got):\n%s", diff)
	}
}

// §Delivery mode: the three modes, "assign is never gated", "a direct
// propagate always delivers its argument".
func TestDeliveryModes(t *testing.T) {
	tests := []struct {
		mode      graph.DeliveryMode
		assigned  bool
		inSweep   bool // included in the ancestor's sweep
		direct    bool // delivered by a direct propagate
		mustStore bool
	}{
		{graph.IfNewer, true, true, true, true},
		{graph.IfNewer, false, false, true, true},
		{graph.Unconditional, true, true, true, true},
		{graph.Unconditional, false, true, true, true},
		{graph.Explicit, true, false, true, true},
		{graph.Explicit, false, false, true, true},
	}
	for _, tc := range tests {
		t.Run(tc.mode.String(), func(t *testing.T) {
			g := graph.New(graph.Config{})
			must(t, g.Write(graph.Owner(), "/p/v", val("old")))
			must(t, g.SetDeliveryMode("/p/v", tc.mode))
			subscribe(t, g, "/p", "/s")
			if tc.assigned {
				must(t, g.Assign("/p/v", val("new")))
			}
			want := "old"
			if tc.assigned {
				want = "new"
			}
			got, err := g.Read(graph.Owner(), "/p/v")
			must(t, err)
			if hexOf(got) != hexOf(val(want)) {
				t.Errorf("assign gated: read %v, want %q", got, want)
			}
			must(t, g.Propagate("/p", graph.EmitEach))
			if n := len(g.TakeDeliveries()); (n == 1) != tc.inSweep || n > 1 {
				t.Errorf("ancestor sweep delivered %d, want included=%v", n, tc.inSweep)
			}
			must(t, g.Propagate("/p/v", graph.EmitEach))
			if n := len(g.TakeDeliveries()); n != 1 {
				t.Errorf("direct propagate delivered %d, want 1", n)
			}
		})
	}
}

// §Assign, propagate… RFC-0008 Amendment 2: assign and propagate refuse at a
// vertex that retains nothing; a write dispatches the seam and delivers
// eagerly; a sweep at a retaining ancestor walks past the handler.
func TestHandlerVertex(t *testing.T) {
	g := graph.New(graph.Config{})
	var got []*tlv.Node
	must(t, g.Register("/h", &graph.Handler{
		OnWrite: func(n *tlv.Node) { got = append(got, n) },
		OnRead:  func() *tlv.Node { return val("composed") },
	}))
	must(t, g.Register("/h/leaf", nil))
	wantStatus(t, g.Assign("/h", val("x")), tlv.StatusSchemaNotFound)
	wantStatus(t, g.Propagate("/h", graph.EmitEach), tlv.StatusSchemaNotFound)
	wantStatus(t, g.Propagate("/h", graph.EmitFold), tlv.StatusSchemaNotFound)
	subscribe(t, g, "/", "/s")
	w, err := g.Await(graph.Owner(), "/h", 0)
	must(t, err)
	must(t, g.Write(graph.Owner(), "/h", val("w")))
	if len(got) != 1 || len(g.TakeDeliveries()) != 1 {
		t.Fatalf("write at a handler: seam got %d, want 1 and one delivery", len(got))
	}
	if v, err := w.Result(); err != nil || hexOf(v) != hexOf(val("composed")) {
		t.Errorf("await at a handler answered %v, %v; want the on_read value", v, err)
	}
	must(t, g.Assign("/h/leaf", val("l")))
	must(t, g.Propagate("/", graph.EmitEach))
	if diff := cmp.Diff([]string{"/#0<-/h/leaf=" + hexOf(val("l"))}, brief(g.TakeDeliveries())); diff != "" {
		t.Errorf("sweep past a handler (-want +got):\n%s", diff)
	}
}

// §Subtree subscriptions… "A branch write decomposes".
func TestBranchWrite(t *testing.T) {
	g := graph.New(graph.Config{})
	must(t, g.Register("/dev", nil))
	subscribe(t, g, "/", "/s/top")
	must(t, g.Write(graph.Owner(), "/dev/m", val("pre"))) // exists, no edge
	g.TakeDeliveries()
	subscribe(t, g, "/dev/m", "/s/m")
	p := point("dev", nil,
		point("m", nil, point("x", val("1")), point("y", nil, point("z", val("2")))),
		point("n", val("3")))
	frame := p.Node()
	must(t, g.Write(graph.Owner(), "/dev", frame))
	for path, want := range map[string]string{"/dev/m/x": "1", "/dev/m/y/z": "2", "/dev/n": "3"} {
		got, err := g.Read(graph.Owner(), path)
		must(t, err)
		if hexOf(got) != hexOf(val(want)) {
			t.Errorf("%s = %v, want VALUE %q", path, got, want)
		}
	}
	subM := p.Children[0].Node()
	want := []string{
		"/#0<-/dev=" + hexOf(frame),       // an ancestor: the frame as-is
		"/dev/m#0<-/dev/m=" + hexOf(subM), // covered point below: its slice
	}
	if diff := cmp.Diff(want, brief(g.TakeDeliveries())); diff != "" {
		t.Errorf("each covered point once (-want +got):\n%s", diff)
	}
	if len(g.Pending()) != 0 {
		t.Errorf("a branch write leaves %v pending", g.Pending())
	}

	// The smallest subview: one value below a point is the VALUE itself.
	must(t, g.Write(graph.Owner(), "/dev", pnode(point("dev", nil, point("m", nil, point("x", val("9")))))))
	got := brief(g.TakeDeliveries())
	if len(got) != 2 || got[1] != "/dev/m#0<-/dev/m/x="+hexOf(val("9")) {
		t.Errorf("single-value slice: %v", got)
	}

	// A remote branch write reaching a missing vertex is refused whole.
	before := g.Len()
	wantStatus(t, g.Write(graph.Peer("p", "/net/tcp/l0"), "/dev", pnode(point("dev", nil, point("n", val("4")), point("new", val("5"))))), tlv.StatusPathNotFound)
	if g.Len() != before {
		t.Error("refused remote branch write created vertices")
	}
	if v, _ := g.Read(graph.Owner(), "/dev/n"); hexOf(v) != hexOf(val("3")) {
		t.Error("refused branch write applied a leaf")
	}
	// Admission is all-or-nothing on the ACL too.
	must(t, g.SetACL("/dev/m", &graph.ACL{Default: graph.RightRead}))
	wantStatus(t, g.Write(graph.Local("app"), "/dev", pnode(point("dev", nil, point("n", val("6")), point("m", nil, point("x", val("7")))))), tlv.StatusAccessDenied)
	if v, _ := g.Read(graph.Owner(), "/dev/n"); hexOf(v) != hexOf(val("3")) {
		t.Error("a denied branch write applied a leaf")
	}
}

// §Subtree subscriptions…: the composed branch read (RFC-0016).
func TestComposedRead(t *testing.T) {
	g := graph.New(graph.Config{})
	must(t, g.Write(graph.Owner(), "/b/x", val("1")))
	must(t, g.Write(graph.Owner(), "/b/y/z", val("2")))
	must(t, g.Register("/b/y/empty", nil))
	got, err := g.Read(graph.Owner(), "/b")
	must(t, err)
	want := point("b", nil, point("x", val("1")), point("y", nil, point("z", val("2")), point("empty", nil)))
	if hexOf(got) != hexOf(want.Node()) {
		t.Errorf("composed read\n got %v\nwant %v", got, want.Node())
	}
	// READ-denied subtrees are pruned.
	must(t, g.SetACL("/b/y", &graph.ACL{Default: 0}))
	got, err = g.Read(graph.Local("app"), "/b")
	must(t, err)
	want = point("b", nil, point("x", val("1")))
	if hexOf(got) != hexOf(want.Node()) {
		t.Errorf("pruned read\n got %v\nwant %v", got, want.Node())
	}
	// A names-only topology tree when the branch is value-free.
	g2 := graph.New(graph.Config{})
	must(t, g2.Register("/t/a", nil))
	got, err = g2.Read(graph.Owner(), "/t")
	must(t, err)
	if hexOf(got) != hexOf(pnode(point("t", nil, point("a", nil)))) {
		t.Errorf("topology read %v", got)
	}
	// A leaf never written reads not_found.
	_, err = g2.Read(graph.Owner(), "/t/a")
	wantStatus(t, err, tlv.StatusPathNotFound)
}

// §Wire mapping: the FOLD emission mode and its refusal.
func TestFoldEmission(t *testing.T) {
	g := graph.New(graph.Config{})
	must(t, g.Register("/f/a", nil))
	must(t, g.Register("/f/b/c", nil))
	subscribe(t, g, "/", "/s/top")
	subscribe(t, g, "/f/b/c", "/s/c")
	must(t, g.Assign("/f/a", val("1")))
	must(t, g.Assign("/f/b/c", val("2")))
	must(t, g.Propagate("/f", graph.EmitFold))
	frame := pnode(point("f", nil, point("a", val("1")), point("b", nil, point("c", val("2")))))
	want := []string{"/#0<-/f=" + hexOf(frame), "/f/b/c#0<-/f/b/c=" + hexOf(val("2"))}
	if diff := cmp.Diff(want, brief(g.TakeDeliveries())); diff != "" {
		t.Errorf("fold (-want +got):\n%s", diff)
	}

	// A selected vertex holding a non-VALUE refuses, consuming nothing.
	for _, bad := range []struct {
		name string
		prep func()
	}{
		{"status", func() { must(t, g.Assign("/f/b/c", tlv.StatusNode(tlv.StatusFlowTimeout))) }},
		{"stream", func() {
			must(t, g.SetHistoryDepth("/f/b/c", 4))
			must(t, g.Assign("/f/b/c", val("3")))
		}},
	} {
		t.Run(bad.name, func(t *testing.T) {
			must(t, g.Assign("/f/a", val("5")))
			bad.prep()
			pend := g.Pending()
			wantStatus(t, g.Propagate("/f", graph.EmitFold), tlv.StatusSchemaTypeMismatch)
			if got := g.TakeDeliveries(); len(got) != 0 {
				t.Errorf("refused fold delivered %v", brief(got))
			}
			if diff := cmp.Diff(pend, g.Pending()); diff != "" {
				t.Errorf("refused fold drained marks (-before +after):\n%s", diff)
			}
			must(t, g.Propagate("/f", graph.EmitEach)) // the fallback loses nothing
			if got := g.TakeDeliveries(); len(got) < 2 {
				t.Errorf("fallback delivered %v", brief(got))
			}
			must(t, g.SetHistoryDepth("/f/b/c", 0))
		})
	}
}

// §Stream drain semantics.
func TestStreamDrain(t *testing.T) {
	g := graph.New(graph.Config{})
	must(t, g.Register("/s", nil))
	must(t, g.SetHistoryDepth("/s", 3))
	subscribe(t, g, "/", "/obs")
	for _, s := range []string{"1", "2"} {
		must(t, g.Assign("/s", val(s)))
	}
	must(t, g.Propagate("/", graph.EmitEach))
	want := []string{"/#0<-/s=" + hexOf(val("1")), "/#0<-/s=" + hexOf(val("2"))}
	if diff := cmp.Diff(want, brief(g.TakeDeliveries())); diff != "" {
		t.Errorf("drain (-want +got):\n%s", diff)
	}
	for _, s := range []string{"a", "b", "c", "d", "e"} {
		must(t, g.Assign("/s", val(s)))
	}
	must(t, g.Propagate("/s", graph.EmitEach))
	want = []string{"/#0<-/s=" + hexOf(val("c")), "/#0<-/s=" + hexOf(val("d")), "/#0<-/s=" + hexOf(val("e"))}
	if diff := cmp.Diff(want, brief(g.TakeDeliveries())); diff != "" {
		t.Errorf("bounded drain (-want +got):\n%s", diff)
	}
	if g.StreamLost("/s") != 2 {
		t.Errorf("lost = %d, want 2", g.StreamLost("/s"))
	}
	must(t, g.Propagate("/s", graph.EmitEach))
	if got := g.TakeDeliveries(); len(got) != 0 {
		t.Errorf("an empty drain delivered %v", brief(got))
	}
}

// §The payload-discriminating :subscribers[N] write and §A multi-step selector
// under :subscribers.
func TestSubscribersField(t *testing.T) {
	peer := graph.Peer("p", "/net/tcp/l0")
	writer := graph.Peer("w", "/net/tcp/l0") // may WRITE, may not SUBSCRIBE
	acl := &graph.ACL{Default: graph.AllRights, Grants: map[string]graph.Rights{"w": graph.RightRead | graph.RightWrite, "nobody": 0}}
	tests := []struct {
		name     string
		caller   graph.Caller
		addr     string
		value    func(t *testing.T) *tlv.Node
		want     tlv.Status
		wantList []string // targets after, "" for an empty slot
	}{
		{"append", peer, "/v:subscribers[]", func(t *testing.T) *tlv.Node { return sub(t, "/new", false) }, tlv.StatusOK, []string{"/t0", "/t1", "/new"}},
		{"append needs SUBSCRIBE", writer, "/v:subscribers[]", func(t *testing.T) *tlv.Node { return sub(t, "/new", false) }, tlv.StatusAccessDenied, []string{"/t0", "/t1"}},
		{"append of a non-SUBSCRIBER", peer, "/v:subscribers[]", func(*testing.T) *tlv.Node { return val("x") }, tlv.StatusSchemaTypeMismatch, []string{"/t0", "/t1"}},
		{"clear with the empty STATUS", peer, "/v:subscribers[0]", func(*testing.T) *tlv.Node { return tlv.StatusNode(tlv.StatusOK) }, tlv.StatusOK, []string{"", "/t1"}},
		{"replace", peer, "/v:subscribers[1]", func(t *testing.T) *tlv.Node { return sub(t, "/r", false) }, tlv.StatusOK, []string{"/t0", "/r"}},
		{"replace through WRITE alone", writer, "/v:subscribers[1]", func(t *testing.T) *tlv.Node { return sub(t, "/r", false) }, tlv.StatusAccessDenied, []string{"/t0", "/t1"}},
		{"anything else", peer, "/v:subscribers[1]", func(*testing.T) *tlv.Node { return val("x") }, tlv.StatusSchemaTypeMismatch, []string{"/t0", "/t1"}},
		{"a STATUS with a code", peer, "/v:subscribers[1]", func(*testing.T) *tlv.Node { return tlv.StatusNode(tlv.StatusPathNotFound) }, tlv.StatusSchemaTypeMismatch, []string{"/t0", "/t1"}},
		{"no slot N, never grown", peer, "/v:subscribers[2]", func(t *testing.T) *tlv.Node { return sub(t, "/r", false) }, tlv.StatusPathInvalid, []string{"/t0", "/t1"}},
		{"[*] on a write", peer, "/v:subscribers[*]", func(*testing.T) *tlv.Node { return tlv.StatusNode(tlv.StatusOK) }, tlv.StatusPathInvalid, []string{"/t0", "/t1"}},
		{"[N].x names nothing", peer, "/v:subscribers[0].liveness.last_seen_ns", func(*testing.T) *tlv.Node { return tlv.StatusNode(tlv.StatusOK) }, tlv.StatusSchemaNotFound, []string{"/t0", "/t1"}},
		{"[N].x before the ACL", graph.Peer("nobody", "/net/tcp/l0"), "/v:subscribers[0].x", func(*testing.T) *tlv.Node { return tlv.StatusNode(tlv.StatusOK) }, tlv.StatusSchemaNotFound, []string{"/t0", "/t1"}},
		{"malformed index", peer, "/v:subscribers[x]", func(*testing.T) *tlv.Node { return tlv.StatusNode(tlv.StatusOK) }, tlv.StatusPathInvalid, []string{"/t0", "/t1"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := graph.New(graph.Config{})
			must(t, g.Register("/v", nil))
			must(t, g.SetACL("/v", acl))
			subscribe(t, g, "/v", "/t0")
			subscribe(t, g, "/v", "/t1")
			wantStatus(t, g.Write(tc.caller, tc.addr, tc.value(t)), tc.want)
			list, err := g.Read(graph.Owner(), "/v:subscribers[]")
			must(t, err)
			var got []string
			for _, e := range list.Children() {
				if e.Type() == tlv.TypeStatus {
					got = append(got, "")
					continue
				}
				s, err := tlv.DecodeSubscriber(e)
				must(t, err)
				p, _ := tlv.PathString(s.Target)
				got = append(got, p)
			}
			if diff := cmp.Diff(tc.wantList, got); diff != "" {
				t.Errorf("slots (-want +got):\n%s", diff)
			}
		})
	}
}

// The read half of :subscribers: [N].<anything> names nothing, [*] lists.
func TestSubscribersRead(t *testing.T) {
	g := graph.New(graph.Config{})
	must(t, g.Register("/v", nil))
	subscribe(t, g, "/v", "/t0")
	_, err := g.Read(graph.Owner(), "/v:subscribers[0].x")
	wantStatus(t, err, tlv.StatusSchemaNotFound)
	_, err = g.Read(graph.Owner(), "/v:subscribers[1]")
	wantStatus(t, err, tlv.StatusPathInvalid)
	one, err := g.Read(graph.Owner(), "/v:subscribers[0]")
	must(t, err)
	if hexOf(one) != hexOf(sub(t, "/t0", false)) {
		t.Errorf("slot 0 = %v", one)
	}
	all, err := g.Read(graph.Owner(), "/v:subscribers[*]")
	must(t, err)
	if len(all.Children()) != 1 {
		t.Errorf("[*] read = %v", all)
	}
}

// §Core writable fields: the ⚠️ rows, the removed knobs, module fields, :schema
// and the bare :settings read.
func TestFieldDiscipline(t *testing.T) {
	denied := graph.Peer("nobody", "/net/tcp/l0")
	g := graph.New(graph.Config{})
	must(t, g.Register("/v", nil))
	must(t, g.SetACL("/v", &graph.ACL{Default: graph.AllRights, Grants: map[string]graph.Rights{"nobody": 0}}))
	schemaNotFound := []string{
		":liveness.heartbeat_hz", ":liveness.last_seen_ns", ":liveness.missed_deadlines", ":description",
		":settings.reliability", ":settings.priority", ":settings.durability", ":settings.deadline_ns",
		":settings.queue_max_bytes", ":settings.history_keep_last", ":settings.store_ref_min_bytes",
		":settings.transport_tcp.send_buf_kb", ":settings.x", ":nonsense", ":subscribers", ":settings.app.undeclared",
	}
	for _, f := range schemaNotFound {
		for _, c := range []graph.Caller{graph.Owner(), graph.Peer("p", "/net/tcp/l0"), denied} {
			if f == ":settings.app.undeclared" && c.Name == "nobody" {
				continue // the WRITE right is judged first there
			}
			_, err := g.Read(c, "/v"+f)
			wantStatus(t, err, tlv.StatusSchemaNotFound)
			wantStatus(t, g.Write(c, "/v"+f, val("1")), tlv.StatusSchemaNotFound)
		}
	}
	got, err := g.Read(graph.Owner(), "/v:settings")
	must(t, err)
	if hexOf(got) != hexOf(tlv.SettingsNode()) {
		t.Errorf(":settings = %v, want SETTINGS{}", got)
	}
	got, err = g.Read(graph.Owner(), "/v:schema")
	must(t, err)
	if want := tlv.NewStruct(tlv.TypePoint, tlv.NameNode("v"), tlv.SettingsNode()); hexOf(got) != hexOf(want) {
		t.Errorf(":schema = %v, want %v", got, want)
	}
	wantStatus(t, g.Write(graph.Owner(), "/v:schema", got), tlv.StatusSchemaNotFound)
	// A field on a missing vertex: not_found, and no creation.
	_, err = g.Read(graph.Owner(), "/nope:schema")
	wantStatus(t, err, tlv.StatusPathNotFound)
	wantStatus(t, g.Write(graph.Owner(), "/nope:settings.app.x", val("1")), tlv.StatusPathNotFound)
	if g.Exists("/nope") {
		t.Error("a field write created its vertex")
	}
}

// §Owner-declared application fields (settings.app).
func TestAppFields(t *testing.T) {
	g := graph.New(graph.Config{})
	must(t, g.Register("/v", nil))
	must(t, g.SetACL("/v", &graph.ACL{Default: graph.AllRights, Grants: map[string]graph.Rights{"ro-caller": graph.RightRead}}))
	must(t, g.DeclareAppFields("/v", []graph.AppField{
		{Name: "gain", Access: graph.ReadWrite, Descriptor: []byte("f32")},
		{Name: "serial", Access: graph.ReadOnly, Descriptor: []byte("str"), Initial: val("SN1")},
		{Name: "key", Access: graph.WriteOnly, Descriptor: []byte("bytes")},
	}))
	p := graph.Peer("p", "/net/tcp/l0")
	tests := []struct {
		name   string
		caller graph.Caller
		write  bool
		field  string
		want   tlv.Status
	}{
		{"rw write", p, true, "gain", tlv.StatusOK},
		{"ro write", p, true, "serial", tlv.StatusSchemaNotFound},
		{"ro write by the owner", graph.Owner(), true, "serial", tlv.StatusOK},
		{"wo write", p, true, "key", tlv.StatusOK},
		{"undeclared write", p, true, "nope", tlv.StatusSchemaNotFound},
		{"WRITE checked before the name", graph.Peer("ro-caller", "/net/tcp/l0"), true, "nope", tlv.StatusAccessDenied},
		{"WRITE checked on a declared name", graph.Peer("ro-caller", "/net/tcp/l0"), true, "gain", tlv.StatusAccessDenied},
		{"wo never read back", p, false, "key", tlv.StatusSchemaNotFound},
		{"wo read by the owner", graph.Owner(), false, "key", tlv.StatusOK},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.write {
				wantStatus(t, g.Write(tc.caller, "/v:settings.app."+tc.field, val("x")), tc.want)
				return
			}
			_, err := g.Read(tc.caller, "/v:settings.app."+tc.field)
			wantStatus(t, err, tc.want)
		})
	}
	// A declared field never written reads NOT_FOUND and is left out of
	// container reads; values are stored verbatim.
	g2 := graph.New(graph.Config{})
	must(t, g2.Register("/v", nil))
	must(t, g2.DeclareAppFields("/v", []graph.AppField{{Name: "a", Access: graph.ReadWrite}, {Name: "b", Access: graph.ReadWrite}}))
	_, err := g2.Read(p, "/v:settings.app.a")
	wantStatus(t, err, tlv.StatusPathNotFound)
	odd := tlv.NewStruct(tlv.TypeSettings, tlv.NameNode("k"), tlv.NewLeaf(0x99, []byte{1, 2}))
	must(t, g2.Write(p, "/v:settings.app.b", odd))
	got, err := g2.Read(p, "/v:settings.app.b")
	must(t, err)
	if hexOf(got) != hexOf(odd) {
		t.Errorf("stored %v, read back %v", odd, got)
	}
	app := tlv.SettingsNode(tlv.Setting{Key: "b", Value: odd})
	for addr, want := range map[string]*tlv.Node{
		"/v:settings.app": app,
		"/v:settings":     tlv.SettingsNode(tlv.Setting{Key: "app", Value: app}),
		"/v:schema": tlv.NewStruct(tlv.TypePoint, tlv.NameNode("v"), tlv.SettingsNode(), tlv.NameNode("app"),
			tlv.SettingsNode(tlv.Setting{Key: "a", Value: val("")}, tlv.Setting{Key: "b", Value: val("")})),
	} {
		got, err := g2.Read(p, addr)
		must(t, err)
		if hexOf(got) != hexOf(want) {
			t.Errorf("%s = %v, want %v", addr, got, want)
		}
	}
}

// §Owner-declared application fields, the announce-write convention: a field
// write wakes no await, advances no sequence and propagates nothing; an await
// with a :field selector answers SCHEMA_NOT_FOUND (#585).
func TestFieldWritesAreSilent(t *testing.T) {
	g := graph.New(graph.Config{})
	must(t, g.Write(graph.Owner(), "/v", val("0")))
	must(t, g.DeclareAppFields("/v", []graph.AppField{{Name: "a", Access: graph.ReadWrite}}))
	subscribe(t, g, "/", "/s")
	seq, _ := g.Seq("/v")
	w, err := g.Await(graph.Owner(), "/v", 0)
	must(t, err)
	for _, f := range []struct {
		addr string
		v    *tlv.Node
	}{
		{"/v:settings.app.a", val("1")},
		{"/v:subscribers[]", sub(t, "/x", false)},
		{"/v:acl", graph.ACL{Default: graph.AllRights}.Node()},
	} {
		must(t, g.Write(graph.Owner(), f.addr, f.v))
	}
	if got, _ := g.Seq("/v"); got != seq || w.Done() || len(g.TakeDeliveries()) != 0 || len(g.Pending()) != 0 {
		t.Errorf("a field write moved the state plane: seq %d→%d, woken %v", seq, got, w.Done())
	}
	for _, f := range []string{":settings.app.a", ":subscribers[]", ":acl", ":schema", ":liveness.last_seen_ns"} {
		_, err := g.Await(graph.Owner(), "/v"+f, 0)
		wantStatus(t, err, tlv.StatusSchemaNotFound)
	}
	must(t, g.Write(graph.Owner(), "/v", val("1")))
	if v, err := w.Result(); err != nil || hexOf(v) != hexOf(val("1")) {
		t.Errorf("await after a data write: %v, %v", v, err)
	}
}

// §Subscriber delivery policy: durability_request latches the last value on
// join, to the joining edge alone.
func TestDurabilityLatch(t *testing.T) {
	g := graph.New(graph.Config{})
	must(t, g.Write(graph.Owner(), "/v", val("last")))
	subscribe(t, g, "/v", "/plain")
	must(t, g.Write(graph.Owner(), "/v:subscribers[]", sub(t, "/durable", true)))
	want := []string{"/v#1<-/v=" + hexOf(val("last")) + " latched"}
	if diff := cmp.Diff(want, brief(g.TakeDeliveries())); diff != "" {
		t.Errorf("latch (-want +got):\n%s", diff)
	}
	must(t, g.Register("/empty", nil))
	must(t, g.Write(graph.Owner(), "/empty:subscribers[]", sub(t, "/durable", true)))
	if got := g.TakeDeliveries(); len(got) != 0 {
		t.Errorf("latch of nothing: %v", brief(got))
	}
}

// §Vertex lifecycle and §Retirement notification.
func TestRetirement(t *testing.T) {
	g := graph.New(graph.Config{})
	must(t, g.Write(graph.Owner(), "/p/c/d", val("1")))
	must(t, g.Write(graph.Owner(), "/p/e", val("2")))
	subscribe(t, g, "/p", "/s")
	subscribe(t, g, "/p/c", "/s2")
	must(t, g.SetACL("/p/c", &graph.ACL{Default: graph.AllRights, Grants: map[string]graph.Rights{"stale": graph.AllRights}}))
	must(t, g.SetACL("/p", &graph.ACL{Default: graph.AllRights, Grants: map[string]graph.Rights{"stale": 0}}))
	w, err := g.Await(graph.Owner(), "/p/c/d", 0)
	must(t, err)

	must(t, g.Retire(graph.Owner(), "/p/c"))
	if got := g.TakeDeliveries(); len(got) != 0 {
		t.Errorf("retirement delivered %v", brief(got))
	}
	for _, p := range []string{"/p/c", "/p/c/d"} {
		_, err := g.Read(graph.Owner(), p)
		wantStatus(t, err, tlv.StatusPathNotFound)
	}
	kids, err := g.Read(graph.Owner(), "/p:children[]")
	must(t, err)
	if want := tlv.NewStruct(tlv.TypeBatch, tlv.NameNode("e")); hexOf(kids) != hexOf(want) {
		t.Errorf(":children[] = %v, want %v", kids, want)
	}
	if _, err := w.Result(); err == nil {
		t.Error("an await on a retired vertex is still pending or succeeded")
	}
	must(t, g.Retire(graph.Owner(), "/p/c"))   // twice: no-op
	must(t, g.Retire(graph.Owner(), "/never")) // unregistered: no-op
	wantStatus(t, g.Retire(graph.Owner(), "/"), tlv.StatusAccessDenied)
	wantStatus(t, g.Retire(graph.Local("x"), "/p/e"), tlv.StatusOK)

	// A remote write does not revive; a local write-create does, fresh.
	wantStatus(t, g.Write(graph.Peer("stale", "/net/tcp/l0"), "/p/c", val("x")), tlv.StatusPathNotFound)
	must(t, g.Write(graph.Owner(), "/p/c/d", val("3")))
	if got := brief(g.TakeDeliveries()); len(got) != 1 || got[0][:3] != "/p#" {
		t.Errorf("revived write delivered %v; want the live ancestor's edge only", got)
	}
	_, err = g.Read(graph.Peer("stale", "/net/tcp/l0"), "/p/c/d")
	wantStatus(t, err, tlv.StatusAccessDenied) // the live ancestor's ACL, not the retired grant
	list, err := g.Read(graph.Owner(), "/p/c:subscribers[]")
	must(t, err)
	if len(list.Children()) != 0 {
		t.Errorf("revived vertex kept edges: %v", list)
	}
}

// §Vertex lifecycle: subscriber-edge eviction.
func TestEvictLinkEdges(t *testing.T) {
	g := graph.New(graph.Config{})
	must(t, g.Write(graph.Owner(), "/a/b", val("1")))
	l0, l1 := graph.Peer("p", "/net/tcp/l0"), graph.Peer("q", "/net/tcp/l1")
	for _, c := range []graph.Caller{l0, l1, l0} {
		must(t, g.Write(c, "/a:subscribers[]", sub(t, "/t", false)))
	}
	must(t, g.Write(l0, "/a/b:subscribers[]", sub(t, "/t", false)))
	subscribe(t, g, "/a", "/local")
	if n := g.EvictLinkEdges("/net/tcp/l0"); n != 3 {
		t.Errorf("evicted %d, want 3", n)
	}
	if !g.Exists("/a/b") {
		t.Error("eviction retired a vertex")
	}
	must(t, g.Write(graph.Owner(), "/a/b", val("2")))
	if diff := cmp.Diff([]string{"/a#1<-/a/b=" + hexOf(val("2")), "/a#3<-/a/b=" + hexOf(val("2"))}, brief(g.TakeDeliveries())); diff != "" {
		t.Errorf("after eviction (-want +got):\n%s", diff)
	}
	must(t, g.Write(l1, "/a:subscribers[]", sub(t, "/t", false)))
	list, _ := g.Read(graph.Owner(), "/a:subscribers[]")
	if list.Children()[0].Type() != tlv.TypeSubscriber {
		t.Error("a freed slot was not reused")
	}
}

// §The shedding rule, at the terminus: FWD{WRITE}, READ, SUBSCRIBE, AWAIT.
func TestApplyFwd(t *testing.T) {
	g := graph.New(graph.Config{})
	must(t, g.Write(graph.Owner(), "/w/l", val("1")))
	peer := graph.Peer("p", "/net/tcp/l0")
	route := func(s string) tlv.Rope {
		var p []byte
		for _, seg := range splitRoute(s) {
			p = append(p, byte(len(seg)))
			p = append(p, seg...)
		}
		return tlv.NewRope(p)
	}
	src := route("net/tcp/l0/stm")
	apply := func(op tlv.Op, dst string, payload *tlv.Node) (tlv.Reply, *graph.Waiter) {
		t.Helper()
		req := tlv.Fwd{Op: op, Dst: route(dst), Src: src, Payload: payload}
		reply, w, err := g.ApplyFwd(peer, req.Node())
		must(t, err)
		if reply == nil {
			return tlv.Reply{}, w
		}
		f, err := tlv.DecodeFwd(reply)
		must(t, err)
		if f.Op != tlv.OpReply || !f.Dst.Equal(src) {
			t.Fatalf("reply %v does not retrace the route", reply)
		}
		r, err := tlv.DecodeReply(f.Payload)
		must(t, err)
		return r, nil
	}
	if r, _ := apply(tlv.OpWrite, "nope", val("x")); r.Status != tlv.StatusPathNotFound || g.Exists("/nope") {
		t.Errorf("remote write to a missing path: %v", r.Status)
	}
	if r, _ := apply(tlv.OpSubscribe, "w", sub(t, "/back", false)); r.Status != tlv.StatusOK {
		t.Errorf("subscribe: %v", r.Status)
	}
	if r, _ := apply(tlv.OpWrite, "w/l", val("2")); r.Status != tlv.StatusOK || r.Answer != nil {
		t.Errorf("write: %+v", r)
	}
	if got := g.TakeDeliveries(); len(got) != 1 || got[0].Link != "/net/tcp/l0" {
		t.Errorf("deliveries %v", got)
	}
	if r, _ := apply(tlv.OpRead, "w/l", tlv.NewStruct(tlv.TypeResult)); r.Status != tlv.StatusOK || hexOf(r.Answer) != hexOf(val("2")) {
		t.Errorf("read: %+v", r)
	}
	if r, _ := apply(tlv.OpRead, "w:schema", tlv.NewStruct(tlv.TypeResult)); r.Status != tlv.StatusOK || r.Answer.Type() != tlv.TypePoint {
		t.Errorf("field read: %+v", r)
	}
	if r, _ := apply(tlv.OpRead, "w:x/l", tlv.NewStruct(tlv.TypeResult)); r.Status != tlv.StatusPathInvalid {
		t.Errorf("selector mid-route: %+v", r)
	}
	if r, _ := apply(tlv.OpAwait, "w/l:schema", tlv.NewStruct(tlv.TypeResult)); r.Status != tlv.StatusSchemaNotFound {
		t.Errorf("await with a field: %+v", r)
	}
	_, w := apply(tlv.OpAwait, "w/l", tlv.NewStruct(tlv.TypeResult))
	if w == nil || w.Done() {
		t.Fatal("await did not wait")
	}
	must(t, g.Write(graph.Owner(), "/w/l", val("3")))
	if v, err := w.Result(); err != nil || hexOf(v) != hexOf(val("3")) {
		t.Errorf("await woke with %v, %v", v, err)
	}
}

func splitRoute(s string) []string {
	var out []string
	for _, seg := range slices.Collect(func(yield func(string) bool) {
		start := 0
		for i := 0; i <= len(s); i++ {
			if i == len(s) || s[i] == '/' {
				if !yield(s[start:i]) {
					return
				}
				start = i + 1
			}
		}
	}) {
		if seg != "" {
			out = append(out, seg)
		}
	}
	return out
}

// An await times out on the injected clock, never on the wall clock.
func TestAwaitTimeout(t *testing.T) {
	now := time.Unix(1000, 0)
	g := graph.New(graph.Config{Now: func() time.Time { return now }})
	must(t, g.Register("/v", nil))
	w, err := g.Await(graph.Owner(), "/v", time.Second)
	must(t, err)
	if g.Expire() != 0 || w.Done() {
		t.Fatal("expired before its deadline")
	}
	now = now.Add(time.Second)
	if g.Expire() != 1 {
		t.Fatal("did not expire at its deadline")
	}
	_, err = w.Result()
	wantStatus(t, err, tlv.StatusFlowTimeout)
}

// :acl is writable with permission (ADMIN, reconstructed) and reads the
// effective policy.
func TestACLField(t *testing.T) {
	g := graph.New(graph.Config{})
	must(t, g.Register("/v", nil))
	must(t, g.SetACL("/v", &graph.ACL{Default: graph.AllRights &^ graph.RightAdmin}))
	a := graph.ACL{Default: graph.RightRead, Grants: map[string]graph.Rights{"boss": graph.AllRights}}
	wantStatus(t, g.Write(graph.Local("x"), "/v:acl", a.Node()), tlv.StatusAccessDenied)
	must(t, g.Write(graph.Owner(), "/v:acl", a.Node()))
	wantStatus(t, g.Write(graph.Owner(), "/v:acl", val("x")), tlv.StatusSchemaTypeMismatch)
	got, err := g.Read(graph.Owner(), "/v:acl")
	must(t, err)
	back, err := graph.DecodeACL(got)
	must(t, err)
	if diff := cmp.Diff(a, back); diff != "" {
		t.Errorf("acl round trip (-want +got):\n%s", diff)
	}
	id, err := g.Read(graph.Owner(), "/v:identity")
	must(t, err)
	if hexOf(id) != hexOf(tlv.NewLeaf(tlv.TypePath, []byte("\x01v"))) {
		t.Errorf(":identity = %v", id)
	}
}

// §Subtree subscriptions…: branch-write admission checks the shape, all or
// nothing, before anything lands; a malformed SUBSCRIBER is refused with the
// layout's status.
func TestBranchWriteShape(t *testing.T) {
	tests := []struct {
		name  string
		frame *tlv.Node
		want  tlv.Status
	}{
		{"POINT without a NAME", tlv.NewStruct(tlv.TypePoint, val("1")), tlv.StatusMalformed},
		{"child name with a separator", pnode(point("r", nil, point("a/b", val("1")))), tlv.StatusPathInvalid},
		{"child name with a selector", pnode(point("r", nil, point("a:schema", val("1")))), tlv.StatusPathInvalid},
		{"dot segment", pnode(point("r", nil, point("..", val("1")))), tlv.StatusPathInvalid},
		{"duplicate siblings", pnode(point("r", nil, point("a", val("1")), point("a", val("2")))), tlv.StatusMalformed},
		{"opaque POINT", tlv.NewLeaf(tlv.TypePoint, []byte{1}), tlv.StatusMalformed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := graph.New(graph.Config{})
			must(t, g.Register("/r", nil))
			subscribe(t, g, "/", "/s")
			wantStatus(t, g.Write(graph.Owner(), "/r", tc.frame), tc.want)
			if len(g.Paths()) != 2 || len(g.TakeDeliveries()) != 0 {
				t.Errorf("a refused branch write changed the graph: %v", g.Paths())
			}
		})
	}
	g := graph.New(graph.Config{})
	must(t, g.Register("/v", nil))
	bad := tlv.NewStruct(tlv.TypeSubscriber, tlv.NewLeaf(tlv.TypePath, []byte{0}))
	wantStatus(t, g.Write(graph.Owner(), "/v:subscribers[]", bad), tlv.StatusPathInvalid)
	wantStatus(t, g.Write(graph.Owner(), "/v:subscribers[]", tlv.NewStruct(tlv.TypeSubscriber)), tlv.StatusMalformed)
}
