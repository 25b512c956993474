package gen

import (
	"slices"
	"sync"

	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Inputs tell the SUT, and the reference beside it, how much to allocate in
// a few places: a Blob's fill length, a queue's depth. A generated or
// mutated input keeps those within bounds, so that a campaign never asks
// either side for gigabytes; the seeds that probe the 16 MiB ceiling run as
// they are, once each.
const (
	maxFill    = 4 << 10
	maxDepth   = 4096
	maxPop     = 1 << 16
	maxPayload = 1 << 20 // a doppler connection's max_payload
)

// sizeCaps maps a field that sizes an allocation to its bound.
var sizeCaps = map[protoreflect.FullName]uint64{
	"conform.v1.Fill.length":                      maxFill,
	"conform.v1.QueueInput.depth":                 maxDepth,
	"conform.v1.QueueStep.pop":                    maxPop,
	"conform.v1.DopplerChunkInput.max_payload":    maxPayload,
	"conform.v1.DopplerSequenceInput.max_payload": maxPayload,
}

// Clamp makes m, a generated or mutated input, one a campaign may send: it
// bounds every allocation-sizing field in place, then mends what the
// documents leave undefined in conform.v1's ops (meaning.Defined): a Blob
// given both ways or filled from nothing, a publish on a stream that does
// not exist, a hop over a link that is no mount run, a doppler frame that is
// not whole elements, a TLV tree tlv.proto does not describe. Mending never
// raises a size past its bound. An op conform.v1 does not define (an
// extension) is left as it is: its target's Mend mends it.
func Clamp(m protoreflect.Message) {
	clampSizes(m)
	mend(m)
}

// clampSizes bounds every allocation-sizing field of m in place, and mends
// the few shapes that make the reference refuse a whole request (a fill
// with no pattern, a sink that accepts nothing), which would cost a batch
// its batching.
func clampSizes(m protoreflect.Message) {
	if !needsClamp(m.Descriptor()) {
		return
	}
	if x, ok := m.Interface().(*conformpb.ReadFrames); ok {
		// The hottest target's inputs, without reflection.
		for _, in := range x.Inputs {
			for _, c := range in.Chunks {
				if f := c.GetFill(); f != nil {
					f.Length = min(f.Length, f.Length%(maxFill+1))
					if f.Length > 0 && len(f.Pattern) == 0 {
						f.Pattern = []byte{0}
					}
				}
			}
		}
		return
	}
	switch x := m.Interface().(type) {
	case *conformpb.Fill:
		if x.Length > 0 && len(x.Pattern) == 0 {
			x.Pattern = []byte{0}
		}
	case *conformpb.WriteInput:
		if len(x.PartialWrites) > 0 && !slices.ContainsFunc(x.PartialWrites, func(n uint32) bool { return n > 0 }) {
			x.PartialWrites[0] = 1
		}
	}
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsList() && fd.Kind() == protoreflect.MessageKind:
			if !needsClamp(fd.Message()) {
				return true
			}
			l := v.List()
			for i := 0; i < l.Len(); i++ {
				clampSizes(l.Get(i).Message())
			}
		case fd.IsMap():
		case fd.Kind() == protoreflect.MessageKind:
			clampSizes(v.Message())

		default:
			c, ok := sizeCaps[fd.FullName()]
			if !ok || fd.IsList() {
				return true
			}
			u := v.Uint()
			if u > c {
				u %= c + 1
				if fd.Kind() == protoreflect.Uint32Kind {
					m.Set(fd, protoreflect.ValueOfUint32(uint32(u)))
				} else {
					m.Set(fd, protoreflect.ValueOfUint64(u))
				}
			}
		}
		return true
	})
}

// maxBaseBytes bounds the size of a seed used as a mutation base: every
// mutated input starts as a copy of one, so their size is the campaign's
// speed.
const maxBaseBytes = 4 << 10

// Heavy reports whether an input is too large to mutate often: a fill past
// maxFill or literal bytes past maxBaseBytes. Heavy seeds run once, as
// given, and are not used as mutation bases.
func Heavy(in proto.Message) bool {
	if proto.Size(in) > maxBaseBytes {
		return true
	}
	h := false
	var walk func(m protoreflect.Message)
	walk = func(m protoreflect.Message) {
		m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
			switch {
			case fd.IsList() && fd.Kind() == protoreflect.MessageKind:
				for i := 0; i < v.List().Len(); i++ {
					walk(v.List().Get(i).Message())
				}
			case fd.Kind() == protoreflect.MessageKind && !fd.IsMap():
				walk(v.Message())
			case fd.FullName() == "conform.v1.Fill.length" && v.Uint() > maxFill:
				h = true
			}
			return !h
		})
	}
	walk(in.ProtoReflect())
	return h
}

// clampTypes are the messages clamp mends as a whole.
var clampTypes = map[protoreflect.FullName]bool{"conform.v1.Fill": true, "conform.v1.WriteInput": true}

// needsClamp reports whether a message of type md can hold anything clamp
// changes, so that clamp skips the rest of an input without walking it.
// The answers are computed once per type and never change.
func needsClamp(md protoreflect.MessageDescriptor) bool {
	clampMu.Lock()
	defer clampMu.Unlock()
	return needsClampLocked(md, map[protoreflect.FullName]bool{})
}

var (
	clampMu    sync.Mutex
	clampCache = map[protoreflect.FullName]bool{}
)

func needsClampLocked(md protoreflect.MessageDescriptor, visiting map[protoreflect.FullName]bool) bool {
	name := md.FullName()
	if v, ok := clampCache[name]; ok {
		return v
	}
	if visiting[name] {
		return false
	}
	visiting[name] = true
	need := clampTypes[name]
	fields := md.Fields()
	for i := 0; i < fields.Len() && !need; i++ {
		fd := fields.Get(i)
		switch {
		case sizeCaps[fd.FullName()] > 0:
			need = true
		case fd.Kind() == protoreflect.MessageKind && !fd.IsMap():
			need = needsClampLocked(fd.Message(), visiting)
		}
	}
	clampCache[name] = need
	return need
}
