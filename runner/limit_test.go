package runner

import (
	"context"
	"strings"
	"testing"

	"github.com/conform-suite/conform/cases"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/reports"
)

// limitedClient is a fakeClient on a carrier that limits a message's size,
// as a NATS broker does.
type limitedClient struct {
	fakeClient
	limit int
}

func (c *limitedClient) MaxMessage() int { return c.limit }

// TestCarrierLimitReachesCases: the runner hands a carrier's message limit
// to the cases, so that an input the carrier cannot carry is skipped with
// the reason rather than sent, and the run still exits 0.
func TestCarrierLimitReachesCases(t *testing.T) {
	big := cases.Case{ID: "wire/8/big", Title: "big", Spec: "test", Level: reports.MUST, Profile: "wire", Run: func(t *cases.T) {
		in := []*conformpb.DecodeInput{{Payload: make([]byte, 4<<20)}}
		cases.Batched(t, "decode", in, func(b []*conformpb.DecodeInput) ([]*conformpb.DecodeOutput, bool) {
			r := t.Do(&conformpb.Request{Op: &conformpb.Request_Decode{Decode: &conformpb.Decode{Inputs: b}}}).GetDecode()
			return make([]*conformpb.DecodeOutput, len(b)), r != nil
		})
	}}
	small := cases.Case{ID: "wire/8/small", Title: "small", Spec: "test", Level: reports.MUST, Profile: "wire", Run: func(t *cases.T) {
		t.Do(&conformpb.Request{Op: &conformpb.Request_Decode{Decode: &conformpb.Decode{}}})
	}}
	plain := &fakeClient{profiles: []string{"wire"}, resp: okResp}
	limited := &limitedClient{fakeClient{profiles: []string{"wire"}, resp: okResp}, 1 << 20}

	rec := Run(context.Background(), Config{Client: plain, Cases: []cases.Case{big}})
	if res := rec.Cases[0]; res.Outcome != reports.Pass || plain.calls != 1 {
		t.Errorf("no limit: outcome %s after %d calls, want pass after 1", res.Outcome, plain.calls)
	}

	// The big case is skipped, nothing of it sent; the small one is judged,
	// so the run judged something and exits 0 (a run that judged nothing
	// would exit 1).
	rec = Run(context.Background(), Config{Client: limited, Cases: []cases.Case{big, small}})
	if res := rec.Cases[0]; res.Outcome != reports.Skip || !strings.Contains(res.Message, "max_payload") {
		t.Errorf("1 MiB: outcome %s %q, want a skip naming max_payload", res.Outcome, res.Message)
	}
	if limited.calls != 1 || rec.ExitCode != ExitOK || len(rec.Unimplemented) != 0 {
		t.Errorf("1 MiB: %d calls, exit %d, unimplemented %v; want only the small case's call, exit 0, none", limited.calls, rec.ExitCode, rec.Unimplemented)
	}
}
