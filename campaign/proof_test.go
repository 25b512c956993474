package campaign

import (
	"context"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/proto/conform/v1/meaning"
	"github.com/conform-suite/conform/sut"
	"github.com/conform-suite/conform/sut/builtin"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// handleMask is what a varying SUT XORs the handles it answers with: other
// handles, the same sockets.
const handleMask = 0x5A5A

// handles are the answer fields the harness sends back, varied by
// handleMask and restored on the way in; addresses are the harness's to
// dial and keep the one value that works.
var (
	answerHandles = []protoreflect.FullName{
		"conform.v1.LiveSubscribed.subscriber", "conform.v1.LivePublisherListening.publisher",
		"conform.v1.RuntimeStarted.runtime", "conform.v1.DopplerJoinResult.handle",
	}
	kept = append([]protoreflect.FullName{
		"conform.v1.LivePublisherListening.address", "conform.v1.RuntimeStarted.address",
		"conform.v1.LiveSubscribed.local_address", "conform.v1.LiveConnection.local_address",
	}, answerHandles...)
	requestHandles = map[protoreflect.FullName]bool{
		"conform.v1.LiveSubscribe.subscriber": true, "conform.v1.LiveReportOp.subscriber": true,
		"conform.v1.LivePublish.publisher": true, "conform.v1.LiveClose.subscriber": true, "conform.v1.LiveClose.publisher": true,
		"conform.v1.RuntimeReportOp.runtime": true, "conform.v1.StopRuntime.runtime": true,
		"conform.v1.DopplerSend.handle": true, "conform.v1.DopplerCollect.handle": true, "conform.v1.DopplerFlush.handle": true,
		"conform.v1.DopplerDrain.handle": true, "conform.v1.DopplerLeave.handle": true,
	}
)

// varying answers as the SUT it wraps does, with every field the
// declaration leaves open given another value (meaning.Vary): worded
// reasons reworded, identifiers renumbered, JSON re-indented, encodings
// reordered, NaNs with other bits, doppler sends stamped from the real
// clock, a publisher's clock elsewhere, the optional trailing yields entry
// added or dropped. A campaign against it must find nothing.
type varying struct {
	sut.Client
	mu sync.Mutex
	r  *rand.Rand
}

func vary(c sut.Client, seed uint64) *varying {
	return &varying{Client: c, r: rand.New(rand.NewPCG(seed, 0x0A11))}
}

func (v *varying) Do(ctx context.Context, req *conformpb.Request) (*conformpb.Response, error) {
	if tg := codecTarget(req); tg != nil {
		// A codec op names no handle: vary each output by its input.
		resp, err := v.Client.Do(ctx, req)
		if err != nil || resp == nil {
			return resp, err
		}
		v.mu.Lock()
		defer v.mu.Unlock()
		outs, ans, _ := tg.outputs(resp)
		entries := tg.entries(opOf(tg, req))
		if ans == answerOK && len(outs) == entries.Len() && tg.list.Kind() == protoreflect.MessageKind {
			for i, out := range outs {
				meaning.Vary(entries.Get(i).Message().Interface(), out, v.r, kept...)
			}
		}
		return resp, nil
	}
	req = proto.Clone(req).(*conformpb.Request)
	xorHandles(req.ProtoReflect(), func(fd protoreflect.FieldDescriptor) bool { return requestHandles[fd.FullName()] })
	resp, err := v.Client.Do(ctx, req)
	if err != nil || resp == nil {
		return resp, err
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	meaning.Vary(nil, resp, v.r, kept...)
	xorHandles(resp.ProtoReflect(), func(fd protoreflect.FieldDescriptor) bool {
		for _, h := range answerHandles {
			if fd.FullName() == h {
				return true
			}
		}
		return false
	})
	return resp, nil
}

// xorHandles XORs every non-zero handle field pick selects in m with
// handleMask.
func xorHandles(m protoreflect.Message, pick func(protoreflect.FieldDescriptor) bool) {
	eachMessage(m, func(m protoreflect.Message) {
		fields := m.Descriptor().Fields()
		for i := 0; i < fields.Len(); i++ {
			fd := fields.Get(i)
			if !pick(fd) || !m.Has(fd) {
				continue
			}
			switch fd.Kind() {
			case protoreflect.Uint32Kind:
				m.Set(fd, protoreflect.ValueOfUint32(uint32(m.Get(fd).Uint())^handleMask))
			case protoreflect.Uint64Kind:
				m.Set(fd, protoreflect.ValueOfUint64(m.Get(fd).Uint()^handleMask))
			}
		}
	})
}

// codecTargets are the codec targets, built once for the varying SUTs.
var codecTargets = sync.OnceValue(func() []*Target {
	var out []*Target
	for _, tg := range testTargets() {
		if tg.live == nil {
			out = append(out, tg)
		}
	}
	return out
})

// codecTarget returns the codec target whose op req carries, or nil.
func codecTarget(req *conformpb.Request) *Target {
	for _, tg := range codecTargets() {
		if opOf(tg, req) != nil {
			return tg
		}
	}
	return nil
}

// opOf returns the op message of tg that req carries, or nil.
func opOf(tg *Target, req *conformpb.Request) proto.Message {
	if m := tg.opIn(req); m != nil {
		return m.Interface()
	}
	return nil
}

// TestOpenFieldsNeverFound is the proof that the oracle judges exactly what
// the documents fix: every fuzz target, run against the reference wrapped so
// that it varies every field the declaration leaves open on every answer,
// finds nothing. (Its other half, that a judged field is never declared open
// in a way that hides a bug, is TestMutantsFound: every codec mutant is still
// found within its budget, against a mutant that varies its open fields the
// same way.)
func TestOpenFieldsNeverFound(t *testing.T) {
	t.Parallel()
	pool := testSeeds(t)
	for i, tg := range testTargets() {
		t.Run(tg.Name, func(t *testing.T) {
			t.Parallel()
			client := vary(builtin.New("builtin:reference", testRegistry().Reference()), uint64(i))
			e := NewEngine(client, testRegistry(), "varying reference", pool, 5, time.Minute, nil)
			e.Broker = broker.URL
			n := uint64(len(pool.For(tg))) + 192
			if tg.live != nil {
				n = uint64(len(pool.For(tg))) + 4
			}
			err := e.RunRange(context.Background(), tg, 0, n, func(f *Finding) error {
				t.Errorf("an open field made finding %s: %s\n%s", f.Signature, f.Detail, f.Diff)
				return nil
			}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if e.Unsupported(tg) != "" {
				t.Fatalf("%s: %s", tg.Name, e.Unsupported(tg))
			}
		})
	}
}
