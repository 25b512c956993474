package campaign

import (
	"bytes"
	"fmt"
	"math"
	"sort"
	"strings"

	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/testing/protocmp"
)

// diffPaths compares two answers structurally and returns the sorted set of
// field paths where they differ, list positions written [] so that the
// paths name what differed and not where: "yields[].frames[].bytes". NaN
// equals NaN and an absent bytes field equals an empty one, as they do on
// the wire.
func diffPaths(a, b protoreflect.Message) []string {
	set := map[string]bool{}
	diffMsg(a, b, "", set)
	out := make([]string, 0, len(set))
	for p := range set {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

func diffMsg(a, b protoreflect.Message, prefix string, set map[string]bool) {
	if len(set) > 32 {
		return
	}
	fields := a.Descriptor().Fields()
	for i := 0; i < fields.Len(); i++ {
		fd := fields.Get(i)
		p := prefix + string(fd.Name())
		ha, hb := a.Has(fd), b.Has(fd)
		switch {
		case fd.IsList():
			la, lb := a.Get(fd).List(), b.Get(fd).List()
			if la.Len() != lb.Len() {
				set[p+".len"] = true
			}
			for j := 0; j < min(la.Len(), lb.Len()); j++ {
				if fd.Kind() == protoreflect.MessageKind {
					diffMsg(la.Get(j).Message(), lb.Get(j).Message(), p+"[].", set)
				} else if !scalarEqual(fd, la.Get(j), lb.Get(j)) {
					set[p+"[]"] = true
				}
			}
		case fd.IsMap():
			if !proto.Equal(a.Interface(), b.Interface()) {
				set[p] = true
			}
		case fd.Kind() == protoreflect.MessageKind:
			if ha != hb {
				set[p+".presence"] = true
				continue
			}
			if ha {
				diffMsg(a.Get(fd).Message(), b.Get(fd).Message(), p+".", set)
			}
		default:
			if fd.HasPresence() && ha != hb {
				set[p+".presence"] = true
				continue
			}
			if !scalarEqual(fd, a.Get(fd), b.Get(fd)) {
				set[p] = true
			}
		}
	}
}

func scalarEqual(fd protoreflect.FieldDescriptor, a, b protoreflect.Value) bool {
	switch fd.Kind() {
	case protoreflect.BytesKind:
		return bytes.Equal(a.Bytes(), b.Bytes())
	case protoreflect.FloatKind, protoreflect.DoubleKind:
		x, y := a.Float(), b.Float()
		return x == y || math.IsNaN(x) && math.IsNaN(y)
	}
	return a.Equal(b)
}

// textDiff is the evidence a person reads: go-cmp's diff of the two answers,
// "-reference +sut". go-cmp aligns lists by comparing their elements, which
// costs time exponential in how deeply lists nest; a tree of answers as deep
// as a depth-bound bug needs would take hours, so past diffDepth the
// evidence is the differing paths alone (the finding holds both answers in
// full).
func textDiff(ref, got proto.Message) string {
	if ref == nil || got == nil {
		return ""
	}
	if d := max(depth(ref.ProtoReflect()), depth(got.ProtoReflect())); d > diffDepth {
		return fmt.Sprintf("answers nested %d messages deep; they differ at %s",
			d, strings.Join(diffPaths(ref.ProtoReflect(), got.ProtoReflect()), ", "))
	}
	return cmp.Diff(ref, got, protocmp.Transform())
}

// diffDepth is the deepest nesting of messages textDiff renders with go-cmp.
const diffDepth = 8

// depth returns how deeply messages nest in m, m itself counting one.
func depth(m protoreflect.Message) int {
	deepest := 0
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsList() && fd.Kind() == protoreflect.MessageKind:
			for i := range v.List().Len() {
				deepest = max(deepest, depth(v.List().Get(i).Message()))
			}
		case !fd.IsList() && !fd.IsMap() && fd.Kind() == protoreflect.MessageKind:
			deepest = max(deepest, depth(v.Message()))
		}
		return true
	})
	return deepest + 1
}

// normalizers hide what an answer may legitimately vary in between two
// implementations, or two runs of one, before answers are compared.
var normalizers = map[string]func(proto.Message){
	// A publisher stamps monotonic_timestamp_ns from its own host clock
	// (ranvier-streams §4.1): the value differs from run to run, so only
	// its class is compared: absent, the source timestamp the node
	// supplied (which a runtime must not use), or the runtime's own.
	"streams.publish": func(m proto.Message) {
		for _, ev := range m.(*conformpb.PublishOutput).GetEvents() {
			s := ev.GetSample()
			switch {
			case s == nil, s.MonotonicTimestampNs == 0:
			case s.MonotonicTimestampNs == s.SourceTimestampNs:
				s.MonotonicTimestampNs = 2
			default:
				s.MonotonicTimestampNs = 1
			}
		}
	},
}

// compare returns the paths where got and want, two answers to the input
// in of target, differ in what the spec fixes: after canonicalPair and the
// target's normalizer.
func compare(target string, in, got, want proto.Message) []string {
	got, want = canonicalPair(in, got, want)
	if n := normalizers[target]; n != nil {
		n(got)
		n(want)
	}
	return diffPaths(got.ProtoReflect(), want.ProtoReflect())
}

// sameBytes is the fast path of a comparison: two answers that encode to
// the same bytes are equal.
func sameBytes(a, b proto.Message) bool {
	o := proto.MarshalOptions{Deterministic: true}
	x, err1 := o.Marshal(a)
	y, err2 := o.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}
