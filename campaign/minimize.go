package campaign

import (
	"context"
	"time"

	"github.com/conform-suite/conform/campaign/gen"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// ddmin is Zeller's delta debugging over n elements: it returns a subset
// (as indices, in order) that still passes test, 1-minimal when the budget
// allows. test is called with candidate subsets; it must not retain them.
func ddmin(n int, test func(keep []int) bool) []int {
	cur := make([]int, n)
	for i := range cur {
		cur[i] = i
	}
	gran := 2
	for len(cur) >= 1 {
		if len(cur) < gran {
			gran = len(cur)
		}
		if gran == 0 {
			break
		}
		size := (len(cur) + gran - 1) / gran
		reduced := false
		// Try each complement: drop one part.
		for start := 0; start < len(cur); start += size {
			end := min(start+size, len(cur))
			cand := append(append([]int(nil), cur[:start]...), cur[end:]...)
			if len(cand) < len(cur) && test(cand) {
				cur = cand
				gran = max(gran-1, 2)
				reduced = true
				break
			}
		}
		if reduced {
			continue
		}
		if gran >= len(cur) {
			break
		}
		gran = min(gran*2, len(cur))
	}
	return cur
}

// minimizer shrinks the inputs of a finding while the same signature
// reproduces, within a budget of SUT executions.
type minimizer struct {
	ctx      context.Context
	t        *Target
	sig      string
	budget   int
	deadline time.Time
	steps    int
	last     Observation
	// run plays inputs once and returns the observation of signature sig,
	// if there is one: Engine.reproduces on the finding's target.
	run func(ctx context.Context, inputs []proto.Message, sig string) (Observation, bool)
}

// test runs inputs and reports whether the finding reproduces.
//
// A live input's answer can turn on timing. On a loaded machine a smaller
// candidate once showed a difference of the finding's signature (which
// names only the top-level field, "events") that the load had made: a
// refusal the other side did not report, where the finding was a
// delivered frame's header. Kept, it made a finding that did not replay.
// So a live candidate is kept only when it shows the same differing
// fields as the finding, and shows them twice, as the campaign asks of a
// finding before it minimises one.
func (mz *minimizer) test(inputs []proto.Message) bool {
	if mz.budget <= 0 || mz.ctx.Err() != nil || time.Now().After(mz.deadline) {
		return false
	}
	mz.budget--
	mz.steps++
	// A test still running at the deadline is cut there: a live input the
	// SUT never answers would otherwise hold minimisation a whole wait
	// past its bound. A test cut short did not reproduce.
	ctx, cancel := context.WithDeadline(mz.ctx, mz.deadline)
	defer cancel()
	live := mz.t.live != nil
	seen := 1
	if live {
		seen = 2
	}
	var o Observation
	for range seen {
		got, ok := mz.run(ctx, inputs, mz.sig)
		if !ok || live && got.Detail != mz.last.Detail {
			return false
		}
		o = got
	}
	mz.last = o
	return true
}

// Minimize shrinks a finding's inputs: first which inputs (delta debugging
// over the list), then each input's structure: list elements and bytes by
// delta debugging, messages and scalars cleared where the signature allows.
// It stops at its budget of SUT executions or after Engine.MinimizeFor,
// whichever comes first, and returns the smallest inputs found by then.
func (e *Engine) Minimize(ctx context.Context, t *Target, inputs []proto.Message, ob Observation) ([]proto.Message, Observation, int) {
	budget := minimizeDiffBudget
	switch ob.Kind {
	case KindTimeout:
		return inputs, ob, 0
	case KindCrash, KindProtocol, KindError:
		budget = minimizeFaultBudget
	}
	limit := e.MinimizeFor
	if limit <= 0 {
		limit = DefaultMinimizeFor
	}
	mz := &minimizer{ctx: ctx, sig: ob.Signature, budget: budget, deadline: time.Now().Add(limit), last: ob, t: t,
		run: func(ctx context.Context, inputs []proto.Message, sig string) (Observation, bool) {
			return e.reproduces(ctx, t, inputs, sig)
		}}
	if len(inputs) > 1 {
		keep := ddmin(len(inputs), func(k []int) bool {
			return mz.test(pick(inputs, k))
		})
		inputs = pick(inputs, keep)
	}
	for i := range inputs {
		cur := proto.Clone(inputs[i])
		inputs[i] = cur
		mz.message(inputs, cur.ProtoReflect(), true)
	}
	return inputs, mz.last, mz.steps
}

func pick(in []proto.Message, keep []int) []proto.Message {
	out := make([]proto.Message, len(keep))
	for i, k := range keep {
		out[i] = in[k]
	}
	return out
}

// message shrinks m, a message inside inputs, in place. top is true for
// an input itself, whose batched list must keep its one entry.
func (mz *minimizer) message(inputs []proto.Message, m protoreflect.Message, top bool) {
	fields := m.Descriptor().Fields()
	for i := 0; i < fields.Len() && mz.budget > 0; i++ {
		fd := fields.Get(i)
		if !m.Has(fd) || fd.IsMap() {
			continue
		}
		switch {
		case fd.IsList():
			l := m.Get(fd).List()
			if l.Len() > 1 && (fd.Kind() == protoreflect.BytesKind || gen.IsBlob(fd)) {
				mz.join(inputs, m, fd)
				l = m.Get(fd).List()
			}
			if !(top && fd == mz.t.list) && l.Len() > 0 {
				vals := make([]protoreflect.Value, l.Len())
				for j := range vals {
					vals[j] = l.Get(j)
				}
				set := func(k []int) {
					nl := m.Mutable(fd).List()
					nl.Truncate(0)
					for _, j := range k {
						nl.Append(vals[j])
					}
				}
				// Each candidate is set before it is tried and the one kept
				// after the last: nothing needs restoring in between.
				keep := ddmin(len(vals), func(k []int) bool {
					set(k)
					return mz.test(inputs)
				})
				set(keep)
				if len(keep) == 0 {
					m.Clear(fd)
				}
			}
			if fd.Kind() == protoreflect.MessageKind && m.Has(fd) {
				l = m.Get(fd).List()
				for j := 0; j < l.Len(); j++ {
					mz.message(inputs, l.Get(j).Message(), false)
				}
			} else if fd.Kind() == protoreflect.BytesKind && m.Has(fd) {
				l = m.Mutable(fd).List()
				for j := 0; j < l.Len(); j++ {
					b := l.Get(j).Bytes()
					l.Set(j, protoreflect.ValueOfBytes(mz.bytes(b, func(c []byte) {
						l.Set(j, protoreflect.ValueOfBytes(c))
					}, inputs)))
				}
			}
		case fd.Kind() == protoreflect.MessageKind:
			old := m.Get(fd)
			m.Clear(fd)
			if mz.test(inputs) {
				continue
			}
			m.Set(fd, old)
			mz.message(inputs, old.Message(), false)
		case fd.Kind() == protoreflect.BytesKind:
			b := m.Get(fd).Bytes()
			m.Set(fd, protoreflect.ValueOfBytes(mz.bytes(b, func(c []byte) {
				m.Set(fd, protoreflect.ValueOfBytes(c))
			}, inputs)))
		default:
			old := m.Get(fd)
			m.Clear(fd)
			if !mz.test(inputs) {
				m.Set(fd, old)
			}
		}
	}
}

// bytes shrinks b by delta debugging over chunks of it (bytes one by one
// when short), calling set to try each candidate in place.
func (mz *minimizer) bytes(b []byte, set func([]byte), inputs []proto.Message) []byte {
	if len(b) == 0 {
		return b
	}
	// Units of 1 byte up to 256 bytes, coarser beyond, so that a long input
	// costs a bounded number of tests.
	unit := max(1, len(b)/256)
	n := (len(b) + unit - 1) / unit
	build := func(k []int) []byte {
		out := make([]byte, 0, len(k)*unit)
		for _, j := range k {
			out = append(out, b[j*unit:min((j+1)*unit, len(b))]...)
		}
		return out
	}
	keep := ddmin(n, func(k []int) bool {
		set(build(k))
		return mz.test(inputs)
	})
	return build(keep)
}

// join tries the bytes of a list of chunks (reads, rope segments) as one
// chunk: the simplest cut of the same bytes.
func (mz *minimizer) join(inputs []proto.Message, m protoreflect.Message, fd protoreflect.FieldDescriptor) {
	l := m.Mutable(fd).List()
	vals := make([]protoreflect.Value, l.Len())
	var all []byte
	for i := range vals {
		vals[i] = l.Get(i)
		if fd.Kind() == protoreflect.BytesKind {
			all = append(all, vals[i].Bytes()...)
			continue
		}
		blob := vals[i].Message()
		if blob.Has(blob.Descriptor().Fields().ByName("fill")) {
			return
		}
		all = append(all, blob.Get(blob.Descriptor().Fields().ByName("data")).Bytes()...)
	}
	l.Truncate(0)
	if fd.Kind() == protoreflect.BytesKind {
		l.Append(protoreflect.ValueOfBytes(all))
	} else {
		e := l.NewElement()
		e.Message().Set(e.Message().Descriptor().Fields().ByName("data"), protoreflect.ValueOfBytes(all))
		l.Append(e)
	}
	if mz.test(inputs) {
		return
	}
	l.Truncate(0)
	for _, v := range vals {
		l.Append(v)
	}
}
