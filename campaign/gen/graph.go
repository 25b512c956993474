package gen

import (
	"encoding/binary"

	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/ref/graph"
	"github.com/conform-suite/conform/ref/tlv"
	"google.golang.org/protobuf/proto"
)

// The graph target, graph.run, fuzzes the graph suite's one op: a batch of
// scripts, each run on a fresh graph. Its generator writes scripts the way
// the graph model's users do — a few vertices registered under one another,
// callers local and remote, subscriptions, writes that assign and sweep,
// reads of the vertices and their fields, retirements and evictions — so
// that most steps reach past the ACL and the address parser into the graph's
// behaviour. Its mutations know scripts: steps dropped, duplicated, swapped
// or spliced from another script, a step's path or caller swapped for
// another the script uses, and the TLVs a step carries mutated at their
// length fields.

// Bounds of a generated script.
const (
	graphMaxSteps       = 24
	graphMaxSpliceSteps = 64
)

// graphPaths are the paths scripts use: a small tree, so that subscriptions
// and sweeps meet, spelled now and then in a way that canonicalizes to it.
var graphPaths = []string{
	"/", "/a", "/a/b", "/a/b/c", "/a/d", "/s", "/s/t", "/v", "/v/c", "/h",
	"a/b", "//a//b/", "/a/./b", "/a/../a/b", "/net/tcp/l0", "/x/new/leaf",
}

// graphFields are the field selectors an address may carry.
var graphFields = []string{
	"subscribers[]", "subscribers[0]", "subscribers[1]", "subscribers[3]", "subscribers[*]",
	"subscribers[0].x", "subscribers[0].liveness.last_seen_ns", "subscribers",
	"settings.app.g", "settings.app.secret", "settings.app.nope", "settings.app.", "settings",
	"settings.reliability", "settings.priority", "settings.history_keep_last", "settings.durability",
	"settings.transport_tcp.send_buf_kb", "settings.x",
	"schema", "children[]", "children", "acl", "liveness.last_seen_ns", "identity", "description", "nonsense", "",
}

// Callers of a generated script: alice local, bob remote over the link
// l0, mallory local with whatever the script's ACLs leave her, and the
// owner (the empty name).
var graphCallers = []*conformpb.GraphCaller{
	{Name: "alice", Kind: conformpb.GraphCallerKind_GRAPH_CALLER_LOCAL},
	{Name: "bob", Kind: conformpb.GraphCallerKind_GRAPH_CALLER_REMOTE, Link: "/net/tcp/l0"},
	{Name: "mallory", Kind: conformpb.GraphCallerKind_GRAPH_CALLER_LOCAL},
}

var graphLinks = []string{"/net/tcp/l0", "/net/tcp/l1", "/net/bus/n1/p2", "/nope"}

func (g *G) graphCaller() string {
	if g.Chance(0.3) {
		return ""
	}
	if g.Chance(0.01) {
		return "nobody" // a caller the script does not name: the script ends there
	}
	return graphCallers[g.IntN(len(graphCallers))].GetName()
}

// graphPath returns a path, usually canonical, now and then not a path.
func (g *G) graphPath() string {
	switch {
	case g.Chance(0.03):
		return g.Text()
	case len(g.paths) > 0 && g.Chance(0.7):
		return g.Pick(g.paths)
	}
	return g.Pick(graphPaths)
}

func (g *G) graphAddress() string {
	p := g.graphPath()
	if g.Chance(0.4) {
		if p == "/" && g.Chance(0.5) {
			p = ""
		}
		return p + ":" + g.Pick(graphFields)
	}
	return p
}

// graphTLV returns the bytes at rest of a TLV a step writes: a VALUE most of
// the time, else a POINT tree (a branch write), a STATUS, a SUBSCRIBER, a
// TLV with an LL header, or bytes that are not one TLV.
func (g *G) graphTLV() []byte {
	switch g.IntN(12) {
	case 0, 1:
		return g.graphPoint(2).Bytes()
	case 2:
		if g.Chance(0.5) {
			return tlv.NewLeaf(tlv.TypeStatus, nil).Bytes()
		}
		return tlv.NewLeaf(tlv.TypeStatus, binary.LittleEndian.AppendUint16(nil, uint16(g.pick16()))).Bytes()
	case 3:
		return g.graphSubscriber()
	case 4:
		return tlvAppend(nil, &tlvGenNode{typ: byte(tlv.TypeValue), payload: g.Raw(6)}, true)
	case 5:
		return g.TLVFrame()
	case 6:
		return nil
	}
	return tlv.NewLeaf(tlv.TypeValue, []byte{byte('0' + g.IntN(10))}).Bytes()
}

func (g *G) pick16() uint64 {
	codes := []uint64{0x10, 0x20, 0x21, 0x30, 0x31, 0x40, 0x51, 0xFFFF, 0}
	return codes[g.IntN(len(codes))]
}

// graphPoint returns POINT{NAME, [VALUE], child POINTs…}.
func (g *G) graphPoint(depth int) *tlv.Node {
	names := []string{"b", "c", "d", "t", "x", "", "a/b"}
	kids := []*tlv.Node{tlv.NameNode(names[g.IntN(len(names))])}
	if g.Chance(0.6) {
		kids = append(kids, tlv.NewLeaf(tlv.TypeValue, []byte{byte('a' + g.IntN(26))}))
	}
	if depth > 0 {
		for n := g.IntN(3); n > 0; n-- {
			kids = append(kids, g.graphPoint(depth-1))
		}
	}
	return tlv.NewStruct(tlv.TypePoint, kids...)
}

// graphPathNode returns a PATH TLV of a canonical path, or of raw records.
func (g *G) graphPathNode() *tlv.Node {
	if n, err := tlv.PathNode(g.Pick(graphPaths)); err == nil && g.Chance(0.9) {
		return n
	}
	return tlv.NewLeaf(tlv.TypePath, g.PathPayload())
}

// graphSubscriber returns SUBSCRIBER{PATH target, [SETTINGS{delivery_policy}]},
// or now and then another TLV.
func (g *G) graphSubscriber() []byte {
	if g.Chance(0.08) {
		return g.graphTLV()
	}
	kids := []*tlv.Node{g.graphPathNode()}
	if g.Chance(0.3) {
		policy := tlv.NewLeaf(tlv.TypeValue, binary.LittleEndian.AppendUint16(nil, uint16(g.Uint32())))
		kids = append(kids, tlv.SettingsNode(tlv.Setting{Key: tlv.KeyDeliveryPolicy, Value: policy}))
	}
	return tlv.NewStruct(tlv.TypeSubscriber, kids...).Bytes()
}

// graphFwd returns a FWD frame a remote caller sends: OP, PATH dst, PATH
// src, payload.
func (g *G) graphFwd() []byte {
	dst, _ := tlv.PathNode(g.Pick(graphPaths))
	if dst == nil {
		dst = tlv.NewLeaf(tlv.TypePath, nil)
	}
	src, _ := tlv.PathNode("/net/tcp/l0/peer")
	ops := []tlv.Op{tlv.OpWrite, tlv.OpRead, tlv.OpAwait, tlv.OpSubscribe, tlv.OpReply, 0, 9}
	op := ops[g.IntN(len(ops))]
	var payload *tlv.Node
	switch op {
	case tlv.OpSubscribe:
		payload, _ = tlv.Decode(tlv.NewRope(g.graphSubscriber()))
	case tlv.OpWrite:
		payload, _ = tlv.Decode(tlv.NewRope(g.graphTLV()))
	}
	if payload == nil {
		payload = tlv.NewLeaf(tlv.TypeStatus, nil)
	}
	return tlv.NewStruct(tlv.TypeFwd, tlv.NewLeaf(tlv.TypeOp, []byte{byte(op)}), dst, src, payload).Bytes()
}

// graphStep returns one step of a script.
func (g *G) graphStep() *conformpb.GraphStep {
	switch g.IntN(20) {
	case 0, 1, 2:
		r := &conformpb.GraphRegister{Path: g.graphPath()}
		if g.Chance(0.15) {
			r.Handler = true
			if g.Chance(0.6) {
				r.OnRead = g.graphTLV()
			}
		}
		return &conformpb.GraphStep{Step: &conformpb.GraphStep_Register{Register: r}}
	case 3, 4, 5:
		return &conformpb.GraphStep{Step: &conformpb.GraphStep_Write{Write: &conformpb.GraphWrite{
			Caller: g.graphCaller(), Address: g.graphAddress(), Value: g.graphTLV()}}}
	case 6, 7:
		return &conformpb.GraphStep{Step: &conformpb.GraphStep_Read{Read: &conformpb.GraphRead{
			Caller: g.graphCaller(), Address: g.graphAddress()}}}
	case 8:
		return &conformpb.GraphStep{Step: &conformpb.GraphStep_Await{Await: &conformpb.GraphAwait{
			Caller: g.graphCaller(), Address: g.graphAddress()}}}
	case 9, 10:
		return &conformpb.GraphStep{Step: &conformpb.GraphStep_Subscribe{Subscribe: &conformpb.GraphSubscribe{
			Caller: g.graphCaller(), Path: g.graphPath(), Subscriber: g.graphSubscriber()}}}
	case 11:
		return &conformpb.GraphStep{Step: &conformpb.GraphStep_Assign{Assign: &conformpb.GraphAssign{
			Path: g.graphPath(), Value: g.graphTLV()}}}
	case 12:
		return &conformpb.GraphStep{Step: &conformpb.GraphStep_Propagate{Propagate: &conformpb.GraphPropagate{
			Path: g.graphPath(), Fold: g.Chance(0.3)}}}
	case 13:
		return &conformpb.GraphStep{Step: &conformpb.GraphStep_Retire{Retire: &conformpb.GraphRetire{
			Caller: g.graphCaller(), Path: g.graphPath()}}}
	case 14:
		return &conformpb.GraphStep{Step: &conformpb.GraphStep_Evict{Evict: &conformpb.GraphEvict{Link: g.Pick(graphLinks)}}}
	case 15:
		return &conformpb.GraphStep{Step: &conformpb.GraphStep_SetMode{SetMode: &conformpb.GraphSetMode{
			Path: g.graphPath(), Mode: conformpb.GraphDeliveryMode(g.IntN(3))}}}
	case 16:
		return &conformpb.GraphStep{Step: &conformpb.GraphStep_SetHistoryDepth{SetHistoryDepth: &conformpb.GraphSetHistoryDepth{
			Path: g.graphPath(), Keep: uint32(g.IntN(4))}}}
	case 17:
		d := &conformpb.GraphDeclareAppFields{Path: g.graphPath()}
		for _, name := range []string{"g", "secret", "w"}[:1+g.IntN(3)] {
			f := &conformpb.GraphAppField{Name: name, Access: conformpb.GraphAppAccess(g.IntN(3)), FieldDescriptor: []byte("d:" + name)}
			if g.Chance(0.5) {
				f.Initial = g.graphTLV()
			}
			d.Fields = append(d.Fields, f)
		}
		return &conformpb.GraphStep{Step: &conformpb.GraphStep_DeclareAppFields{DeclareAppFields: d}}
	case 18:
		a := &conformpb.GraphSetAcl{Path: g.graphPath(), DefaultRights: uint32(g.IntN(64))}
		for _, c := range graphCallers {
			if g.Chance(0.5) {
				a.Grants = append(a.Grants, &conformpb.GraphGrant{Principal: c.GetName(), Rights: g.graphRights()})
			}
		}
		return &conformpb.GraphStep{Step: &conformpb.GraphStep_SetAcl{SetAcl: a}}
	}
	return &conformpb.GraphStep{Step: &conformpb.GraphStep_Fwd{Fwd: &conformpb.GraphFwd{Caller: "bob", Frame: g.graphFwd()}}}
}

// graphRights returns an ACL mask: all rights, or all but one, or one.
func (g *G) graphRights() uint32 {
	all := uint32(graph.AllRights)
	bit := uint32(1) << g.IntN(6)
	switch g.IntN(3) {
	case 0:
		return all
	case 1:
		return all &^ bit
	}
	return bit
}

// graphScript returns a script: its callers, a few registrations, then
// random steps.
func (g *G) graphScript() *conformpb.GraphScript {
	s := &conformpb.GraphScript{}
	for _, c := range graphCallers {
		s.Callers = append(s.Callers, proto.Clone(c).(*conformpb.GraphCaller))
	}
	g.paths = g.paths[:0]
	for n := 1 + g.IntN(4); n > 0; n-- {
		p := g.Pick(graphPaths[1:10])
		g.paths = append(g.paths, p)
		s.Steps = append(s.Steps, &conformpb.GraphStep{Step: &conformpb.GraphStep_Register{Register: &conformpb.GraphRegister{Path: p}}})
	}
	if g.Chance(0.7) { // a subscription that the writes below reach
		s.Steps = append(s.Steps, &conformpb.GraphStep{Step: &conformpb.GraphStep_Subscribe{Subscribe: &conformpb.GraphSubscribe{
			Path: g.Pick([]string{"/", g.paths[0]}), Subscriber: tlv.NewStruct(tlv.TypeSubscriber, g.graphPathNode()).Bytes()}}})
	}
	for n := 1 + g.IntN(graphMaxSteps-3); n > 0; n-- {
		s.Steps = append(s.Steps, g.graphStep())
	}
	return s
}

// GraphRun generates an input of graph.run: one script, as the graph
// model's users write them.
func GraphRun(g *G) proto.Message {
	return &conformpb.GraphRun{Scripts: []*conformpb.GraphScript{g.graphScript()}}
}

// MutateGraphRun applies one script-aware mutation: a step dropped,
// duplicated, moved or replaced, steps spliced in from the other input, a
// path or caller of a step swapped for another, or a step's TLV mutated at
// its length fields.
func MutateGraphRun(g *G, in, other proto.Message) bool {
	run, ok := in.(*conformpb.GraphRun)
	if !ok || len(run.GetScripts()) == 0 {
		return false
	}
	s := run.Scripts[0]
	n := len(s.Steps)
	switch k := g.IntN(8); {
	case k == 0 && n > 0: // drop a step
		i := g.IntN(n)
		s.Steps = append(s.Steps[:i], s.Steps[i+1:]...)
	case k == 1 && n > 0 && n < graphMaxSpliceSteps: // duplicate a step in place
		i := g.IntN(n)
		s.Steps = append(s.Steps[:i+1], append([]*conformpb.GraphStep{proto.Clone(s.Steps[i]).(*conformpb.GraphStep)}, s.Steps[i+1:]...)...)
	case k == 2 && n > 1: // move a step
		i, j := g.IntN(n), g.IntN(n)
		st := s.Steps[i]
		s.Steps = append(s.Steps[:i], s.Steps[i+1:]...)
		s.Steps = append(s.Steps[:j], append([]*conformpb.GraphStep{st}, s.Steps[j:]...)...)
	case k == 3 && n < graphMaxSpliceSteps: // insert a fresh step
		i := g.IntN(n + 1)
		s.Steps = append(s.Steps[:i], append([]*conformpb.GraphStep{g.graphStep()}, s.Steps[i:]...)...)
	case k == 4: // splice a run of steps from the other script
		o, ok := other.(*conformpb.GraphRun)
		if !ok || len(o.GetScripts()) == 0 || len(o.Scripts[0].Steps) == 0 {
			return false
		}
		os := o.Scripts[0].Steps
		a := g.IntN(len(os))
		b := a + 1 + g.IntN(min(len(os)-a, 6))
		i := g.IntN(n + 1)
		var spliced []*conformpb.GraphStep
		for _, st := range os[a:b] {
			spliced = append(spliced, proto.Clone(st).(*conformpb.GraphStep))
		}
		s.Steps = append(s.Steps[:i], append(spliced, s.Steps[i:]...)...)
		if len(s.Steps) > graphMaxSpliceSteps {
			s.Steps = s.Steps[:graphMaxSpliceSteps]
		}
		for _, c := range o.Scripts[0].Callers {
			if !hasCaller(s, c.GetName()) {
				s.Callers = append(s.Callers, proto.Clone(c).(*conformpb.GraphCaller))
			}
		}
	case k == 5 && n > 0: // another path or address for a step
		return g.repath(s.Steps[g.IntN(n)], s)
	case k == 6 && n > 0: // another caller for a step
		return g.recall(s.Steps[g.IntN(n)], s)
	case k == 7 && n > 0: // a step's TLV mutated knowing its layout
		b := stepTLV(s.Steps[g.IntN(n)])
		if b == nil || len(*b) == 0 {
			return false
		}
		*b = g.MutateBytes(append([]byte(nil), *b...))
	default:
		return false
	}
	return true
}

func hasCaller(s *conformpb.GraphScript, name string) bool {
	for _, c := range s.GetCallers() {
		if c.GetName() == name {
			return true
		}
	}
	return false
}

// scriptPaths returns the paths and addresses a script's steps name, so
// that a step can be pointed at a vertex the script already touches.
func scriptPaths(s *conformpb.GraphScript) []string {
	var out []string
	for _, st := range s.GetSteps() {
		if p := stepPath(st); p != nil && *p != "" {
			out = append(out, *p)
		}
	}
	return out
}

// repath points a step at another path: one the script uses (with or
// without its field selector), or one from the pool.
func (g *G) repath(st *conformpb.GraphStep, s *conformpb.GraphScript) bool {
	p := stepPath(st)
	if p == nil {
		return false
	}
	used := scriptPaths(s)
	switch {
	case len(used) > 0 && g.Chance(0.5):
		*p = used[g.IntN(len(used))]
	case g.Chance(0.5):
		*p = g.graphAddress()
	default:
		*p = g.graphPath()
	}
	return true
}

// recall has a step performed by another caller.
func (g *G) recall(st *conformpb.GraphStep, s *conformpb.GraphScript) bool {
	c := stepCaller(st)
	if c == nil {
		return false
	}
	names := []string{""}
	for _, cl := range s.GetCallers() {
		names = append(names, cl.GetName())
	}
	*c = names[g.IntN(len(names))]
	return true
}

// stepPath returns the address of the path a step names, or nil.
func stepPath(st *conformpb.GraphStep) *string {
	switch x := st.GetStep().(type) {
	case *conformpb.GraphStep_Register:
		return &x.Register.Path
	case *conformpb.GraphStep_Write:
		return &x.Write.Address
	case *conformpb.GraphStep_Read:
		return &x.Read.Address
	case *conformpb.GraphStep_Await:
		return &x.Await.Address
	case *conformpb.GraphStep_Subscribe:
		return &x.Subscribe.Path
	case *conformpb.GraphStep_Assign:
		return &x.Assign.Path
	case *conformpb.GraphStep_Propagate:
		return &x.Propagate.Path
	case *conformpb.GraphStep_Retire:
		return &x.Retire.Path
	case *conformpb.GraphStep_SetMode:
		return &x.SetMode.Path
	case *conformpb.GraphStep_SetHistoryDepth:
		return &x.SetHistoryDepth.Path
	case *conformpb.GraphStep_DeclareAppFields:
		return &x.DeclareAppFields.Path
	case *conformpb.GraphStep_SetAcl:
		return &x.SetAcl.Path
	}
	return nil
}

// stepCaller returns the address of a step's caller, or nil for a step the
// owner always performs.
func stepCaller(st *conformpb.GraphStep) *string {
	switch x := st.GetStep().(type) {
	case *conformpb.GraphStep_Write:
		return &x.Write.Caller
	case *conformpb.GraphStep_Read:
		return &x.Read.Caller
	case *conformpb.GraphStep_Await:
		return &x.Await.Caller
	case *conformpb.GraphStep_Subscribe:
		return &x.Subscribe.Caller
	case *conformpb.GraphStep_Retire:
		return &x.Retire.Caller
	case *conformpb.GraphStep_Fwd:
		return &x.Fwd.Caller
	}
	return nil
}

// stepTLV returns the address of the TLV bytes a step carries, or nil.
func stepTLV(st *conformpb.GraphStep) *[]byte {
	switch x := st.GetStep().(type) {
	case *conformpb.GraphStep_Register:
		return &x.Register.OnRead
	case *conformpb.GraphStep_Write:
		return &x.Write.Value
	case *conformpb.GraphStep_Subscribe:
		return &x.Subscribe.Subscriber
	case *conformpb.GraphStep_Assign:
		return &x.Assign.Value
	case *conformpb.GraphStep_Fwd:
		return &x.Fwd.Frame
	}
	return nil
}
