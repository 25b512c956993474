package campaign

import (
	"context"
	"testing"
	"time"

	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"google.golang.org/protobuf/proto"
)

// TestMinimizerKeepsOnlyTheFindingsDifference: a smaller candidate of a
// live finding is kept only when it shows the finding's differing fields
// twice; a codec target's answers do not turn on timing, and one showing
// of the signature keeps a candidate.
func TestMinimizerKeepsOnlyTheFindingsDifference(t *testing.T) {
	finding := Observation{Signature: "doppler.live-subscribe.diff-aa70a027", Detail: "events[].delivered.header.flags"}
	same := finding
	loadMade := Observation{Signature: finding.Signature, Detail: "events.len,events[].refused.code"}
	for _, tc := range []struct {
		name string
		live bool
		runs []*Observation // what each play of the candidate shows; nil: not the signature
		kept bool
		runN int // plays the test makes
	}{
		{"live, the same fields twice", true, []*Observation{&same, &same}, true, 2},
		{"live, the same fields once", true, []*Observation{&same, nil}, false, 2},
		{"live, other fields of the same signature", true, []*Observation{&loadMade, &loadMade}, false, 1},
		{"live, not the signature", true, []*Observation{nil}, false, 1},
		{"codec, other fields of the same signature", false, []*Observation{&loadMade}, true, 1},
		{"codec, not the signature", false, []*Observation{nil}, false, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tg := &Target{Name: "target"}
			if tc.live {
				tg.live = &liveEvaluator{}
			}
			n := 0
			mz := &minimizer{ctx: context.Background(), t: tg, sig: finding.Signature, budget: 10, deadline: time.Now().Add(time.Hour), last: finding,
				run: func(_ context.Context, _ []proto.Message, sig string) (Observation, bool) {
					o := tc.runs[n]
					n++
					if o == nil || o.Signature != sig {
						return Observation{}, false
					}
					return *o, true
				}}
			if got := mz.test(nil); got != tc.kept {
				t.Errorf("kept %v, want %v", got, tc.kept)
			}
			if n != tc.runN {
				t.Errorf("%d plays, want %d", n, tc.runN)
			}
			want := finding
			if tc.kept {
				want = *tc.runs[len(tc.runs)-1]
			}
			if mz.last.Detail != want.Detail {
				t.Errorf("last observation %q, want %q", mz.last.Detail, want.Detail)
			}
		})
	}
}

// BenchmarkMinimizeList minimises a list of 1,100 messages of which a
// finding needs 1,025, as a stall after 1,024 samples does, with a run
// that costs nothing: what is measured is the minimiser's own work between
// plays, within its budget of 400.
func BenchmarkMinimizeList(b *testing.B) {
	const n, needed = 1100, 1025
	finding := Observation{Signature: "streams.publish.diff-0"}
	b.ReportAllocs()
	for b.Loop() {
		m := &conformpb.TlvNode{}
		for i := range n {
			m.Children = append(m.Children, &conformpb.TlvNode{Type: uint32(i % 256)})
		}
		mz := &minimizer{ctx: context.Background(), t: &Target{Name: "target"}, sig: finding.Signature,
			budget: minimizeDiffBudget, deadline: time.Now().Add(time.Hour), last: finding,
			run: func(_ context.Context, _ []proto.Message, _ string) (Observation, bool) {
				return finding, len(m.Children) >= needed
			}}
		mz.message([]proto.Message{m}, m.ProtoReflect(), false)
		if len(m.Children) < needed || len(m.Children) == n {
			b.Fatalf("%d children after minimising, want fewer than %d and at least %d", len(m.Children), n, needed)
		}
	}
}
