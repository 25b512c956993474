package campaign

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/reports"
	"github.com/conform-suite/conform/sut"
	"github.com/conform-suite/conform/sut/builtin"
	"google.golang.org/protobuf/proto"
)

// limited is a SUT on a carrier that limits a message's size, as a NATS
// broker's max_payload does: a request above the limit never reaches the
// SUT, and the carrier says so.
type limited struct {
	sut.Client
	limit        int
	sent, larger atomic.Int64
}

func (l *limited) MaxMessage() int { return l.limit }

func (l *limited) Do(ctx context.Context, req *conformpb.Request) (*conformpb.Response, error) {
	if n := proto.Size(req); n > l.limit {
		l.larger.Add(1)
		return nil, &sut.Error{Kind: reports.KindProtocol, Detail: fmt.Sprintf("a request of %d bytes exceeds the maximum payload %d", n, l.limit)}
	}
	l.sent.Add(1)
	return l.Client.Do(ctx, req)
}

// TestCarrierLimitBatches: over a carrier whose messages are limited (a
// NATS broker with a small max_payload), the engine cuts its batches to
// the carrier's limit as the cases do (cases.BatchBytes), and leaves out
// an input too large to go even alone, so that the reference runs clean
// rather than meet the carrier's refusals as findings.
func TestCarrierLimitBatches(t *testing.T) {
	t.Parallel()
	pool := testSeeds(t)
	const limit = 16 << 10
	for _, name := range []string{"wire.read-frames", "tlv.decode"} {
		tg, _ := Lookup(testTargets(), name)
		c := &limited{Client: builtin.New("builtin:reference", testRegistry().Reference()), limit: limit}
		e := NewEngine(c, testRegistry(), "limited", pool, 1, time.Minute, nil)
		n := uint64(len(pool.For(tg))) + 512
		err := e.RunRange(context.Background(), tg, 0, n, func(f *Finding) error {
			t.Errorf("%s: the reference over a %d-byte carrier: finding %s: %s", name, limit, f.Signature, f.Detail)
			return nil
		}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if c.larger.Load() > 0 || c.sent.Load() == 0 {
			t.Errorf("%s: %d requests past the carrier's limit, %d within it", name, c.larger.Load(), c.sent.Load())
		}
		// Batches are still batches: several inputs a request.
		if c.sent.Load()*4 > int64(e.Judged) {
			t.Errorf("%s: %d requests for %d inputs judged", name, c.sent.Load(), e.Judged)
		}
		t.Logf("%s: %d inputs, %d judged, %d left out in %d requests", name, e.Execs, e.Judged, e.Skipped, c.sent.Load())
	}
}
