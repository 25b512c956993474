package graph

import (
	"github.com/conform-suite/conform/ref/tlv"
)

// The field rules (graph model §Schema and field discipline). A field is
// resolved in this order, and the first refusal answers:
//
//  1. the address: a malformed selector, and [*] on a write, are
//     tr::path::invalid;
//  2. the vertex: missing or retired is tr::path::not_found;
//  3. the shape, caller-independently: a selector naming nothing — the ⚠️
//     liveness and description rows, the seven removed knobs, any
//     :settings.<module>.x, :subscribers[N].<anything> — is
//     tr::schema::not_found, and so is a write of a read-only field;
//  4. the ACL, the right each act needs (ModelRequires): READ for reads,
//     SUBSCRIBE for :subscribers writes, WRITE for app fields (before any app
//     name is resolved), ADMIN for :acl;
//  5. the field itself.

func (g *Graph) readField(c Caller, v *vertex, a Address) (*tlv.Node, error) {
	s := parseSelector(a.Field)
	switch s.kind {
	case selUnknown, selSubsMember:
		return nil, fail("read", a.String(), tlv.StatusSchemaNotFound, "the field names nothing")
	}
	if !g.allowed(c, v, ActRead) {
		return nil, g.denied("read", a.String(), c, ActRead)
	}
	switch s.kind {
	case selSubsAppend, selSubsWildcard:
		kids := make([]*tlv.Node, len(v.slots))
		for i, e := range v.slots {
			kids[i] = slotNode(e)
		}
		return tlv.NewStruct(listType, kids...), nil
	case selSubsIndex:
		if s.index >= len(v.slots) {
			return nil, fail("read", a.String(), tlv.StatusPathInvalid, "no slot %d of %d", s.index, len(v.slots))
		}
		return slotNode(v.slots[s.index]), nil
	case selSettings:
		if len(v.appDecl) == 0 {
			return tlv.SettingsNode(), nil
		}
		return tlv.SettingsNode(tlv.Setting{Key: fieldApp, Value: appContainer(c, v)}), nil
	case selApp:
		return appContainer(c, v), nil
	case selAppField:
		f, ok := v.appDecl[s.name]
		if !ok || (f.Access == WriteOnly && !c.owner) {
			return nil, fail("read", a.String(), tlv.StatusSchemaNotFound, "no readable app field %q", s.name)
		}
		val := v.appVal[s.name]
		if val == nil {
			return nil, fail("read", a.String(), statusUnwritten, "app field %q was never written", s.name)
		}
		return val, nil
	case selSchema:
		return schemaNode(v), nil
	case selACL:
		return effectiveACL(v).Node(), nil
	case selChildren:
		var kids []*tlv.Node
		for _, ch := range liveChildren(v) {
			kids = append(kids, tlv.NameNode(ch.name))
		}
		return tlv.NewStruct(listType, kids...), nil
	case selIdentity:
		return tlv.NewLeaf(tlv.TypePath, []byte(v.key)), nil
	}
	return nil, fail("read", a.String(), tlv.StatusSchemaNotFound, "the field names nothing")
}

// slotNode is a slot as a read serves it: the SUBSCRIBER, or the empty STATUS
// for an empty slot.
func slotNode(e *Edge) *tlv.Node {
	if e == nil {
		return tlv.StatusNode(tlv.StatusOK)
	}
	return e.Record
}

// appContainer is the :settings.app container: every declared field that has
// a value and that c may read, in declaration order.
func appContainer(c Caller, v *vertex) *tlv.Node {
	var pairs []tlv.Setting
	for _, name := range v.appOrder {
		f := v.appDecl[name]
		val := v.appVal[name]
		if val == nil || (f.Access == WriteOnly && !c.owner) {
			continue
		}
		pairs = append(pairs, tlv.Setting{Key: name, Value: val})
	}
	return tlv.SettingsNode(pairs...)
}

// schemaNode is the synthesized :schema (graph model §Definitions, RFC-0022):
// POINT{NAME <vertex name>, SETTINGS{}, [NAME "app", SETTINGS{…}]}, the app
// part being the descriptor table, NAME then VALUE{descriptor} per field.
func schemaNode(v *vertex) *tlv.Node {
	kids := []*tlv.Node{tlv.NameNode(v.name), tlv.SettingsNode()}
	if len(v.appDecl) > 0 {
		pairs := make([]tlv.Setting, 0, len(v.appOrder))
		for _, name := range v.appOrder {
			pairs = append(pairs, tlv.Setting{Key: name, Value: tlv.NewLeaf(tlv.TypeValue, v.appDecl[name].Descriptor)})
		}
		kids = append(kids, tlv.NameNode(fieldApp), tlv.SettingsNode(pairs...))
	}
	return tlv.NewStruct(tlv.TypePoint, kids...)
}

func (g *Graph) writeField(c Caller, a Address, value *tlv.Node) error {
	s := parseSelector(a.Field)
	if s.kind == selSubsWildcard {
		return fail("write", a.String(), tlv.StatusPathInvalid, "[*] is not a write selector")
	}
	v := g.lookup(string(a.Path))
	if v == nil {
		return fail("write", a.String(), tlv.StatusPathNotFound, "a field write does not create its vertex")
	}
	switch s.kind {
	case selUnknown, selSubsMember:
		return fail("write", a.String(), tlv.StatusSchemaNotFound, "the field names nothing")
	case selSettings, selApp, selSchema, selChildren, selIdentity:
		return fail("write", a.String(), statusReadOnlyField, "the field is read-only")
	case selSubsAppend:
		if !g.allowed(c, v, ActAppendEdge) {
			return g.denied("write", a.String(), c, ActAppendEdge)
		}
		e, err := g.newEdge(c, a, value)
		if err != nil {
			return err
		}
		var slot int
		v.slots, slot = g.policy.append(v.slots, e)
		if slot < 0 || slot >= len(v.slots) || v.slots[slot] != e {
			panic("graph: Policy.Append did not place the edge in the slot it returned")
		}
		g.join(v, slot, e)
		return nil
	case selSubsIndex:
		act := ActSlotWrite
		if value.Type() == tlv.TypeSubscriber {
			act = ActReplaceEdge
		}
		if !g.allowed(c, v, act) {
			return g.denied("write", a.String(), c, act)
		}
		if s.index >= len(v.slots) {
			return fail("write", a.String(), tlv.StatusPathInvalid, "no slot %d of %d", s.index, len(v.slots))
		}
		if value.Type() == tlv.TypeStatus && !value.Opt().PL() && value.Payload().Len() == 0 {
			v.slots[s.index] = nil
			return nil
		}
		e, err := g.newEdge(c, a, value)
		if err != nil {
			return err
		}
		g.join(v, s.index, e)
		return nil
	case selAppField:
		if !g.allowed(c, v, ActWrite) {
			return g.denied("write", a.String(), c, ActWrite)
		}
		f, ok := v.appDecl[s.name]
		if !ok || (f.Access == ReadOnly && !c.owner) {
			return fail("write", a.String(), tlv.StatusSchemaNotFound, "no writable app field %q", s.name)
		}
		v.appVal[s.name] = value
		return nil
	case selACL:
		if !g.allowed(c, v, ActAdminister) {
			return g.denied("write", a.String(), c, ActAdminister)
		}
		if value.Type() != tlv.TypeACL {
			return fail("write", a.String(), tlv.StatusSchemaTypeMismatch, "an :acl write takes an ACL, not %s", value.Type())
		}
		acl, err := DecodeACL(value)
		if err != nil {
			return fail("write", a.String(), tlv.StatusMalformed, "%v", err)
		}
		v.acl = &acl
		return nil
	}
	return fail("write", a.String(), tlv.StatusSchemaNotFound, "the field names nothing")
}

// newEdge checks that value is a SUBSCRIBER — anything else is
// tr::schema::type_mismatch — and returns the edge it installs, bound to c's
// link.
func (g *Graph) newEdge(c Caller, a Address, value *tlv.Node) (*Edge, error) {
	if value.Type() != tlv.TypeSubscriber {
		return nil, fail("write", a.String(), tlv.StatusSchemaTypeMismatch, "a :subscribers write takes a SUBSCRIBER or the empty STATUS, not %s", value.Type())
	}
	sub, err := tlv.DecodeSubscriber(value)
	if err != nil {
		return nil, wrap("write", a.String(), err)
	}
	if _, err := sub.Policy(); err != nil {
		return nil, wrap("write", a.String(), err)
	}
	target, err := tlv.PathString(sub.Target)
	if err != nil {
		return nil, wrap("write", a.String(), err)
	}
	return &Edge{Record: value, Target: target, Link: c.Link}, nil
}

// join installs e in v's slot and, when the subscription asks for durability,
// delivers v's latched last value to it alone (graph model §Subscriber delivery
// policy, the transient-local latch).
func (g *Graph) join(v *vertex, slot int, e *Edge) {
	v.slots[slot] = e
	sub, _ := tlv.DecodeSubscriber(e.Record)
	p, _ := sub.Policy()
	if !p.DurabilityRequest || v.handler != nil || v.value == nil {
		return
	}
	g.deliveries = append(g.deliveries, Delivery{
		Vertex: v.path(), Slot: slot, Target: e.Target, Link: e.Link,
		Source: v.path(), TLV: v.value.Bytes(), Latched: true,
	})
}
