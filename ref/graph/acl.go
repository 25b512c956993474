package graph

import (
	"fmt"
	"sort"
	"strings"

	"github.com/conform-suite/conform/ref/tlv"
)

// String renders the mask as letters, such as "rwsc--", in the order read,
// write, subscribe, create, delete, admin.
func (r Rights) String() string {
	var b strings.Builder
	for i, c := range "rwscda" {
		if r&(1<<i) != 0 {
			b.WriteRune(c)
		} else {
			b.WriteByte('-')
		}
	}
	return b.String()
}

// An ACL is a vertex's access policy: the rights of each named principal, and
// the rights of every principal it does not name. A vertex without an ACL of
// its own takes its nearest ancestor's (its effective ACL); the root's, when
// the owner installs none, grants everything (see reconstructed.go).
type ACL struct {
	Default Rights            // rights of a principal Grants does not name
	Grants  map[string]Rights // rights by principal name
}

// Rights returns what principal holds under the ACL.
func (a ACL) Rights(principal string) Rights {
	if r, ok := a.Grants[principal]; ok {
		return r
	}
	return a.Default
}

func (a ACL) clone() ACL {
	c := ACL{Default: a.Default}
	if len(a.Grants) > 0 {
		c.Grants = make(map[string]Rights, len(a.Grants))
		for k, v := range a.Grants {
			c.Grants[k] = v
		}
	}
	return c
}

// Node returns the ACL record: pairs NAME principal, VALUE rights (one byte),
// the default first under the principal "*", then the grants by name.
func (a ACL) Node() *tlv.Node {
	names := make([]string, 0, len(a.Grants))
	for k := range a.Grants {
		names = append(names, k)
	}
	sort.Strings(names)
	kids := []*tlv.Node{tlv.NameNode(aclDefaultPrincipal), tlv.NewLeaf(tlv.TypeValue, []byte{byte(a.Default)})}
	for _, k := range names {
		kids = append(kids, tlv.NameNode(k), tlv.NewLeaf(tlv.TypeValue, []byte{byte(a.Grants[k])}))
	}
	return tlv.NewStruct(tlv.TypeACL, kids...)
}

// DecodeACL checks n against the ACL record layout and returns the policy. A
// principal absent from the record is given the default; a record without the
// "*" pair grants nothing by default.
func DecodeACL(n *tlv.Node) (ACL, error) {
	var a ACL
	if n == nil || n.Type() != tlv.TypeACL || !n.Opt().PL() {
		return a, fmt.Errorf("graph: want a structured ACL, got %v", n)
	}
	kids := n.Children()
	if len(kids)%2 != 0 {
		return a, fmt.Errorf("graph: ACL: a principal without rights")
	}
	for i := 0; i < len(kids); i += 2 {
		name, val := kids[i], kids[i+1]
		if name.Type() != tlv.TypeName || name.Opt().PL() {
			return a, fmt.Errorf("graph: ACL: child %d: want a NAME, got %v", i, name)
		}
		if val.Type() != tlv.TypeValue || val.Opt().PL() || val.Payload().Len() != aclRightsSize {
			return a, fmt.Errorf("graph: ACL: child %d: want a VALUE of %d byte, got %v", i+1, aclRightsSize, val)
		}
		r := Rights(val.Payload().Bytes()[0])
		p := string(name.Payload().Bytes())
		if p == aclDefaultPrincipal {
			a.Default = r
			continue
		}
		if a.Grants == nil {
			a.Grants = make(map[string]Rights)
		}
		a.Grants[p] = r
	}
	return a, nil
}
