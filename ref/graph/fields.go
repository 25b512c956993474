package graph

import (
	"sort"
	"strings"

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
//  4. the ACL: READ for reads, SUBSCRIBE for :subscribers writes, WRITE for
//     app fields (before any app name is resolved), ADMIN for :acl;
//  5. the field itself.

func (g *Graph) readField(c Caller, v *vertex, a Address) (*tlv.Node, error) {
	s := parseSelector(a.Field)
	if knob, ok := g.removedKnob(s, a.Field); ok {
		if val := v.knobs[knob]; val != nil {
			return val, nil
		}
		return nil, fail("read", a.String(), statusUnwritten, "knob %q was never written", knob)
	}
	switch s.kind {
	case selUnknown, selSubsMember:
		return nil, fail("read", a.String(), tlv.StatusSchemaNotFound, "the field names nothing")
	}
	if !allowed(c, v, RightRead) {
		return nil, fail("read", a.String(), tlv.StatusAccessDenied, "%s lacks READ", c.Name)
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
		if len(v.appDecl) == 0 && g.dev.SettingsAbsentWhenEmpty {
			return nil, fail("read", a.String(), tlv.StatusSchemaNotFound, "no knobs")
		}
		if len(v.appDecl) == 0 {
			return tlv.SettingsNode(), nil
		}
		return tlv.SettingsNode(tlv.Setting{Key: fieldApp, Value: appContainer(c, v)}), nil
	case selApp:
		return appContainer(c, v), nil
	case selAppField:
		f, ok := v.appDecl[s.name]
		if !ok || (f.Access == WriteOnly && !c.owner && !g.dev.WriteOnlyReadable) {
			return nil, fail("read", a.String(), tlv.StatusSchemaNotFound, "no readable app field %q", s.name)
		}
		val := v.appVal[s.name]
		if val == nil && g.dev.UnwrittenAppFieldSchemaNotFound {
			return nil, fail("read", a.String(), tlv.StatusSchemaNotFound, "app field %q was never written", s.name)
		}
		if val == nil {
			return nil, fail("read", a.String(), statusUnwritten, "app field %q was never written", s.name)
		}
		return val, nil
	case selSchema:
		if val := v.knobs[fieldSchema]; val != nil && g.dev.SchemaWritable {
			return val, nil
		}
		return g.schemaNode(v), nil
	case selACL:
		return effectiveACL(v).Node(), nil
	case selChildren:
		var kids []*tlv.Node
		listed := liveChildren(v)
		if g.dev.RetiredChildListed {
			listed = allChildren(v)
		}
		for _, ch := range listed {
			if g.dev.ChildrenValuedOnly && ch.value == nil {
				continue
			}
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
func slotNode(e *edge) *tlv.Node {
	if e == nil {
		return tlv.StatusNode(tlv.StatusOK)
	}
	return e.record
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
func (g *Graph) schemaNode(v *vertex) *tlv.Node {
	kids := []*tlv.Node{tlv.NameNode(v.name), tlv.SettingsNode()}
	if g.dev.SchemaOmitsEmptySettings {
		kids = kids[:1]
	}
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
	switch {
	case s.kind == selSubsWildcard && g.dev.WildcardWriteAsIndex0:
		s = selector{kind: selSubsIndex}
	case s.kind == selSubsMember && g.dev.SubscriberMemberAsIndex:
		s.kind = selSubsIndex
	}
	if s.kind == selSubsWildcard {
		return fail("write", a.String(), tlv.StatusPathInvalid, "[*] is not a write selector")
	}
	v := g.lookup(string(a.Path))
	if v == nil && g.dev.FieldWriteCreates {
		v = g.ensure(string(a.Path))
	}
	if v == nil {
		return fail("write", a.String(), tlv.StatusPathNotFound, "a field write does not create its vertex")
	}
	if s.kind == selSchema && g.dev.SchemaWritable {
		if v.knobs == nil {
			v.knobs = map[string]*tlv.Node{}
		}
		v.knobs[fieldSchema] = value
		return nil
	}
	if knob, ok := g.removedKnob(s, a.Field); ok {
		if v.knobs == nil {
			v.knobs = map[string]*tlv.Node{}
		}
		v.knobs[knob] = value
		return nil
	}
	switch s.kind {
	case selUnknown, selSubsMember:
		return fail("write", a.String(), tlv.StatusSchemaNotFound, "the field names nothing")
	case selSettings, selApp, selSchema, selChildren, selIdentity:
		return fail("write", a.String(), statusReadOnlyField, "the field is read-only")
	case selSubsAppend:
		gate := RightSubscribe
		if g.dev.AppendThroughWriteGate {
			gate = RightWrite
		}
		if !allowed(c, v, gate) {
			return fail("write", a.String(), tlv.StatusAccessDenied, "%s lacks SUBSCRIBE", c.Name)
		}
		e, err := g.newEdge(c, a, value)
		if err != nil {
			return err
		}
		if g.dev.AppendAtFront {
			v.slots = append([]*edge{nil}, v.slots...)
			g.join(v, 0, e)
			return nil
		}
		slot := -1
		for i, old := range v.slots {
			if old == nil {
				slot = i
				break
			}
		}
		if slot < 0 {
			slot = len(v.slots)
			v.slots = append(v.slots, nil)
		}
		g.join(v, slot, e)
		return nil
	case selSubsIndex:
		gate, gateName := RightSubscribe, "SUBSCRIBE"
		if g.dev.ReplaceThroughWriteGate && value.Type() == tlv.TypeSubscriber {
			gate, gateName = RightWrite, "WRITE"
		}
		if !allowed(c, v, gate) {
			return fail("write", a.String(), tlv.StatusAccessDenied, "%s lacks %s", c.Name, gateName)
		}
		if s.index >= len(v.slots) && g.dev.IndexGrows && s.index < 1<<16 {
			v.slots = append(v.slots, make([]*edge, s.index+1-len(v.slots))...)
		}
		if s.index >= len(v.slots) {
			return fail("write", a.String(), tlv.StatusPathInvalid, "no slot %d of %d", s.index, len(v.slots))
		}
		if g.dev.ClearSlotAnyPayload || value.Type() == tlv.TypeStatus && !value.Opt().PL() && value.Payload().Len() == 0 {
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
		if _, declared := v.appDecl[s.name]; g.dev.AppNameBeforeACL && !declared {
			return fail("write", a.String(), tlv.StatusSchemaNotFound, "no app field %q", s.name)
		}
		if !allowed(c, v, RightWrite) {
			return fail("write", a.String(), tlv.StatusAccessDenied, "%s lacks WRITE", c.Name)
		}
		f, ok := v.appDecl[s.name]
		if !ok || (f.Access == ReadOnly && !c.owner && !g.dev.ReadOnlyAppWritable) {
			return fail("write", a.String(), tlv.StatusSchemaNotFound, "no writable app field %q", s.name)
		}
		if g.dev.AppValueValidated && value.Type() != tlv.TypeValue {
			return fail("write", a.String(), tlv.StatusSchemaTypeMismatch, "app field %q takes a VALUE", s.name)
		}
		v.appVal[s.name] = value
		return nil
	case selACL:
		if !allowed(c, v, RightAdmin) {
			return fail("write", a.String(), tlv.StatusAccessDenied, "%s lacks ADMIN", c.Name)
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
func (g *Graph) newEdge(c Caller, a Address, value *tlv.Node) (*edge, error) {
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
	if g.dev.ReservedPolicyRejected && reservedPolicyBits(sub) {
		return nil, fail("write", a.String(), tlv.StatusMalformed, "delivery policy bits 8-15 set")
	}
	target, err := tlv.PathString(sub.Target)
	if err != nil {
		return nil, wrap("write", a.String(), err)
	}
	return &edge{record: value, target: target, link: c.Link}, nil
}

// join installs e in v's slot and, when the subscription asks for durability,
// delivers v's latched last value to it alone (graph model §Subscriber delivery
// policy, the transient-local latch).
func (g *Graph) join(v *vertex, slot int, e *edge) {
	v.slots[slot] = e
	sub, _ := tlv.DecodeSubscriber(e.record)
	p, _ := sub.Policy()
	if !p.DurabilityRequest || v.handler != nil || v.value == nil || g.dev.DurabilityIgnored {
		return
	}
	g.deliveries = append(g.deliveries, Delivery{
		Vertex: v.path(), Slot: slot, Target: e.target, Link: e.link,
		Source: v.path(), TLV: v.value.Bytes(), Latched: true,
	})
}

// removedKnob reports whether the RemovedKnobsAccepted deviation serves the
// selector as one of the removed flat knobs, and which.
func (g *Graph) removedKnob(s selector, field string) (string, bool) {
	if s.kind != selUnknown {
		return "", false
	}
	knob, ok := strings.CutPrefix(field, fieldSettings+string(selectorStepSep))
	switch {
	case ok && removedKnobs[knob]:
		return field, g.dev.RemovedKnobsAccepted
	case ok && strings.Contains(knob, string(selectorStepSep)):
		return field, g.dev.ModuleFieldsAccepted
	case strings.HasPrefix(field, "liveness.") || field == "description":
		return field, g.dev.UnimplementedRowsServed
	}
	return "", false
}

// allChildren returns every child vertex object of v, live or retired, in
// canonical key order: the RetiredChildListed deviation.
func allChildren(v *vertex) []*vertex {
	var out []*vertex
	for _, c := range v.children {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].key < out[j].key })
	return out
}

// reservedPolicyBits reports whether sub's delivery policy sets any of bits
// 8-15: only the ReservedPolicyRejected deviation asks.
func reservedPolicyBits(sub tlv.Subscriber) bool {
	for _, st := range sub.Settings {
		if st.Key == tlv.KeyDeliveryPolicy && st.Value != nil {
			b := st.Value.Payload().Bytes()
			return len(b) == 2 && b[1] != 0
		}
	}
	return false
}
