package campaign

import (
	"encoding/json"

	"context"
	"errors"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protojson"

	"github.com/conform-suite/conform/internal/hang"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/reports"
	"github.com/conform-suite/conform/suites"
	"github.com/conform-suite/conform/sut"
	"github.com/conform-suite/conform/sut/builtin"
	"google.golang.org/protobuf/proto"
)

// builtinEngine returns an engine on a builtin SUT: the reference, or the
// mutant name.
func builtinEngine(t testing.TB, name string, seed int64) *Engine {
	t.Helper()
	im := suites.Default().Reference()
	spec := "builtin:reference"
	if name != "reference" {
		m, ok := suites.Default().MutantImpl(name)
		if !ok {
			t.Fatalf("no mutant %s", name)
		}
		im, spec = m, "builtin:mutant/"+name
	}
	return NewEngine(builtin.New(spec, im), testRegistry(), spec, testSeeds(t), seed, time.Minute, nil)
}

// TestResumeRefusesAnotherCampaign: --resume continues only the campaign
// the checkpoint describes; another SUT, seed, target list or checkpoint
// format is refused with a message naming what differs.
func TestResumeRefusesAnotherCampaign(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	targets, _ := Select(testTargets(), []string{"tlv.pack-policy"})
	cfg := Config{Targets: targets, Execs: 300, Out: out}
	if _, err := builtinEngine(t, "reference", 1).Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	cfg.Resume, cfg.Execs = true, 600
	other, _ := Select(testTargets(), []string{"tlv.pack-policy", "tlv.read-policy"})
	for _, tc := range []struct {
		name   string
		engine *Engine
		cfg    Config
		want   []string
	}{
		{"another SUT", builtinEngine(t, "encode-length-wraps", 1), cfg, []string{`SUT implementation: "conform mutant encode-length-wraps" here, "conform reference" in the campaign`}},
		{"another seed", builtinEngine(t, "reference", 2), cfg, []string{"seed: 2 here, 1 in the campaign"}},
		{"other targets", builtinEngine(t, "reference", 1), Config{Targets: other, Execs: 600, Out: out, Resume: true}, []string{"targets: tlv.pack-policy,tlv.read-policy here, tlv.pack-policy in the campaign"}},
	} {
		_, err := tc.engine.Run(context.Background(), tc.cfg)
		var mm *MismatchError
		if !errors.As(err, &mm) {
			t.Errorf("%s: %v, want a *MismatchError", tc.name, err)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q does not say %q", tc.name, err, w)
			}
		}
	}
	// The same campaign resumes, over exec or in process alike: the SUT
	// is its Hello, not the spec.
	e := builtinEngine(t, "reference", 1)
	e.Spec = "exec:conform reference"
	if s, err := e.Run(context.Background(), cfg); err != nil || s.Execs < 600 {
		t.Fatalf("resuming the same campaign: %+v, %v", s, err)
	}
	// A checkpoint of another format is refused, naming both formats.
	b, err := os.ReadFile(CheckpointPath(out))
	if err != nil {
		t.Fatal(err)
	}
	old := strings.Replace(string(b), `"version": 2`, `"version": 1`, 1)
	if err := os.WriteFile(CheckpointPath(out), []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = builtinEngine(t, "reference", 1).Run(context.Background(), cfg)
	if err == nil || !strings.Contains(err.Error(), "format 1; this conform resumes format 2") {
		t.Errorf("a checkpoint of format 1: %v", err)
	}
}

// hanging is a SUT that never answers: each op lasts until its context
// ends, as a carrier's does against a SUT that hangs.
type hanging struct {
	ops atomic.Int64
}

func (h *hanging) Hello() *conformpb.Hello { return &conformpb.Hello{Implementation: "hangs"} }
func (h *hanging) Carrier() string         { return "test" }
func (h *hanging) Close() error            { return nil }
func (h *hanging) Do(ctx context.Context, req *conformpb.Request) (*conformpb.Response, error) {
	h.ops.Add(1)
	<-ctx.Done()
	return nil, &sut.Error{Kind: reports.KindTimeout, Detail: "no answer", Err: ctx.Err()}
}

// TestDurationBoundsAHangingSUT: a campaign's --duration bounds it even
// against a SUT that never answers and an op timeout of an hour: the op in
// flight at the deadline is cancelled. The guard is generous; before the
// fix the campaign waited out the hour.
func TestDurationBoundsAHangingSUT(t *testing.T) {
	t.Parallel()
	h := &hanging{}
	e := NewEngine(h, testRegistry(), "test:hang", testSeeds(t), 1, time.Hour, nil)
	targets, _ := Select(testTargets(), []string{"wire.read-frames", "tlv.decode"})
	out := t.TempDir()
	done := make(chan error, 1)
	go func() {
		// Long enough that an op is surely sent, even on a loaded machine
		// (200 ms once was not), and far shorter than the op timeout.
		_, err := e.Run(context.Background(), Config{Targets: targets, Duration: 2 * time.Second, Out: out})
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(hang.Guard(t, 30*time.Second)):
		t.Fatal("a 2 s campaign against a hanging SUT still runs at the hang guard")
	}
	if h.ops.Load() == 0 {
		t.Error("no op was sent")
	}
	if cp, err := ReadCheckpoint(out); err != nil || cp == nil {
		t.Errorf("no checkpoint after the deadline: %v", err)
	}
}

// slowToMinimize answers the first request as a mutant would; at the
// second (the finding's confirmation) it ends the campaign and then hangs
// until the campaign's context is done: a finding met just as the campaign
// ends, whose confirmation and minimisation the end cuts short.
type slowToMinimize struct {
	sut.Client
	calls atomic.Int64
	end   func()
}

func (s *slowToMinimize) Do(ctx context.Context, req *conformpb.Request) (*conformpb.Response, error) {
	if s.calls.Add(1) == 1 {
		return s.Client.Do(ctx, req)
	}
	s.end()
	<-ctx.Done()
	return nil, &sut.Error{Kind: reports.KindTimeout, Detail: "no answer", Err: ctx.Err()}
}

// TestFindingAtTheEndKept: a finding whose confirmation and minimisation
// the campaign's end cuts short is written as far as it was minimised, not
// dropped. The end comes when the SUT is asked the second time, not at a
// wall-clock deadline: on a loaded machine no deadline short enough for a
// test was sure to fall after the first answer (2 s once did not). That
// --duration is such an end, a cancelled context, is
// TestDurationBoundsAHangingSUT's claim.
func TestFindingAtTheEndKept(t *testing.T) {
	m, _ := suites.Default().MutantImpl("zero-length-is-end")
	spec := "builtin:mutant/zero-length-is-end"
	ctx, end := context.WithCancel(context.Background())
	defer end()
	e := NewEngine(&slowToMinimize{Client: builtin.New(spec, m), end: end}, testRegistry(), spec, testSeeds(t), 1, time.Hour, nil)
	targets, _ := Select(testTargets(), []string{"wire.read-frames"})
	out := t.TempDir()
	done := make(chan error, 1)
	go func() {
		// The first input is the finding.
		_, err := e.Run(ctx, Config{Targets: targets, Execs: 1 << 20, Out: out})
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(hang.Guard(t, 30*time.Second)):
		t.Fatal("the campaign still runs at the hang guard")
	}
	if n := e.Client.(*slowToMinimize).calls.Load(); n < 2 {
		t.Fatalf("the SUT was asked %d times: the campaign ended before the finding's confirmation", n)
	}
	sigs, err := KnownSignatures(out)
	if err != nil || len(sigs) == 0 {
		t.Fatalf("the finding met as the campaign ended was not written: %v, %v", sigs, err)
	}
	f, err := ReadFinding(FindingsDir(out) + "/" + sigs[0] + ".json")
	if err != nil {
		t.Fatal(err)
	}
	if ok, _, err := builtinEngine(t, "zero-length-is-end", 1).Replay(context.Background(), f); err != nil || !ok {
		t.Errorf("the unminimised finding does not replay against the mutant: %v", err)
	}
}

// TestReplayEntriesInOneInput: a finding whose one input holds two entries
// (as a person may write one) replays: against the reference it shows
// nothing, against a mutant it reproduces, with evidence in protocol terms.
// Evaluate takes such an input too, however it came.
func TestReplayEntriesInOneInput(t *testing.T) {
	t.Parallel()
	f := &Finding{Version: FindingVersion, Signature: "", Target: "wire.read-frames", Kind: KindDiff,
		Inputs: []json.RawMessage{json.RawMessage(`{"inputs":[{"chunks":[{"data":"AAAAAQc="}]},{"chunks":[{"data":"AAAAAAAAAAEH"}],"endOfStream":true}]}`)}}
	mut := builtinEngine(t, "zero-length-is-end", 1)
	tg, inputs, err := f.ParseInputs(testTargets())
	if err != nil {
		t.Fatal(err)
	}
	if len(inputs) != 2 {
		t.Fatalf("%d inputs, want the two entries as two inputs", len(inputs))
	}
	whole := tg.New()
	if err := protojson.Unmarshal(f.Inputs[0], whole); err != nil {
		t.Fatal(err)
	}
	obs, err := mut.Evaluate(context.Background(), tg, []proto.Message{whole})
	if err != nil || len(obs) != 1 || obs[0].Index != 0 || obs[0].Kind != KindDiff {
		t.Fatalf("Evaluate of one input with two entries: %+v, %v; want one difference on input 0", obs, err)
	}
	f.Signature = obs[0].Signature
	r, err := mut.Reproduce(context.Background(), f)
	if err != nil || !r.Reproduced {
		t.Fatalf("replay against the mutant: %+v, %v", r, err)
	}
	ev := r.Evidence(r.Observation)
	if !strings.Contains(ev, `input: {"inputs":[{"chunks":[{"data":"AAAAAAAAAAEH"}],"endOfStream":true}]}`) || !strings.Contains(ev, "yields") {
		t.Errorf("evidence of the replay:\n%s", ev)
	}
	if ok, others, err := builtinEngine(t, "reference", 1).Replay(context.Background(), f); err != nil || ok || len(others) > 0 {
		t.Errorf("replay against the reference: %v, %v, %v", ok, others, err)
	}
	f.Inputs = []json.RawMessage{json.RawMessage(`{"inputs":[]}`)}
	if _, _, err := f.ParseInputs(testTargets()); err == nil || !strings.Contains(err.Error(), "no entry") {
		t.Errorf("an input with no entry: %v", err)
	}
}

// TestUnitsNamedByRange: a unit's ID names its input range, so that two
// campaigns cut differently share no unit ID.
func TestUnitsNamedByRange(t *testing.T) {
	targets, _ := Select(testTargets(), []string{"tlv.pack-policy"})
	pool := testSeeds(t)
	ids := func(execs uint64) []string {
		var out []string
		for _, u := range Units(targets, pool, 1, execs, 20) {
			out = append(out, u.ID)
		}
		return out
	}
	if got := strings.Join(ids(50), " "); got != "tlv.pack-policy/0-20 tlv.pack-policy/20-40 tlv.pack-policy/40-50" {
		t.Errorf("units of 50 inputs: %s", got)
	}
	if got := ids(60); got[2] != "tlv.pack-policy/40-60" {
		t.Errorf("units of 60 inputs: %v", got)
	}
	if got := Units(targets, pool, 1, ^uint64(0), ^uint64(0)-1); len(got) != 2 || got[1].End != ^uint64(0) {
		t.Errorf("units at the top of the range: %+v", got)
	}
}

// TestIdentityDifferences names each differing field with both values, and
// none for the same campaign.
func TestIdentityDifferences(t *testing.T) {
	pool := testSeeds(t)
	targets, _ := Select(testTargets(), []string{"wire"})
	ref := builtinEngine(t, "reference", 1).SUTOf()
	ref.Profiles = []string{"wire", "streams"}
	a := NewIdentity(pool, 1, targets, ref)
	if d := a.Differences(a); len(d) != 0 {
		t.Errorf("an identity differs from itself: %v", d)
	}
	b := a
	b.Seed, b.Execs, b.Conform = 2, 100, "v9"
	b.SUT = &SUTIdentity{Spec: "tcp://x", Implementation: "other", Version: a.SUT.Version, Language: "go", Profiles: []string{"wire"}}
	d := strings.Join(a.Differences(b), "\n")
	for _, want := range []string{"seed: 1 here, 2 in the campaign", "--execs: 0 here, 100 in the campaign",
		"conform version: " + a.Conform + " here, v9 in the campaign", `SUT implementation: "conform reference" here, "other" in the campaign`,
		`SUT profiles: "streams,wire" here, "wire" in the campaign`} {
		if !strings.Contains(d, want) {
			t.Errorf("differences lack %q:\n%s", want, d)
		}
	}
	if strings.Contains(d, "spec") {
		t.Errorf("the spec is compared although both Hellos name the implementation:\n%s", d)
	}
	b = a
	b.SUT = nil
	if d := a.Differences(b); len(d) != 0 {
		t.Errorf("a campaign that names no SUT yet differs: %v", d)
	}
	anon := &SUTIdentity{Spec: "tcp://a"}
	if d := anon.Differences(&SUTIdentity{Spec: "tcp://b"}, "here", "there"); len(d) != 1 || !strings.Contains(d[0], "spec") {
		t.Errorf("two SUTs that name nothing, at other specs: %v", d)
	}
}

// onceWrong answers its first request as a mutant does and every later one
// as the reference does: a difference that is not seen again, as a live
// answer turning on a loaded machine's timing is not.
type onceWrong struct {
	sut.Client // the reference
	mutant     sut.Client
	calls      atomic.Int64
}

func (o *onceWrong) Do(ctx context.Context, req *conformpb.Request) (*conformpb.Response, error) {
	if o.calls.Add(1) == 1 {
		return o.mutant.Do(ctx, req)
	}
	return o.Client.Do(ctx, req)
}

// TestFindingMustBeSeenAgain: a difference seen once and not when its
// input runs again is no finding, and is counted; the same input against
// the mutant itself, which differs every time, is one.
func TestFindingMustBeSeenAgain(t *testing.T) {
	t.Parallel()
	m, _ := suites.Default().MutantImpl("zero-length-is-end")
	spec := "builtin:mutant/zero-length-is-end"
	tg, _ := Lookup(testTargets(), "wire.read-frames")
	for _, tc := range []struct {
		name   string
		client sut.Client
		want   int
	}{
		{"once", &onceWrong{Client: builtin.New(spec, suites.Default().Reference()), mutant: builtin.New(spec, m)}, 0},
		{"always", builtin.New(spec, m), 1},
	} {
		e := NewEngine(tc.client, testRegistry(), spec, testSeeds(t), 1, time.Minute, nil)
		var found []*Finding
		if err := e.RunRange(context.Background(), tg, 0, 1, func(f *Finding) error { found = append(found, f); return nil }, nil); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if len(found) != tc.want || int(e.Unconfirmed) != 1-tc.want {
			t.Errorf("%s: %d findings and %d unconfirmed, want %d and %d", tc.name, len(found), e.Unconfirmed, tc.want, 1-tc.want)
		}
	}
}

// TestReplayRetriesRunsThatLeftAnInputOut: a run that left an input out
// proved nothing of it, so it neither shows a finding fixed nor counts
// among the runs that must judge every input; it is made again, a bounded
// number of times, and a replay no run of which judged every input says so
// (issue 13: under load, a finding against the payload-bytes-unchecked
// mutant "did not replay" because both runs' reference reports were cut).
func TestReplayRetriesRunsThatLeftAnInputOut(t *testing.T) {
	const sig = "doppler.live-subscribe.diff-00000001"
	found := Observation{Signature: sig}
	other := Observation{Signature: "doppler.live-subscribe.diff-00000002"}
	type run struct {
		obs     []Observation
		leftOut bool
	}
	leftOut := run{leftOut: true}
	for _, tc := range []struct {
		name                  string
		runs                  []run // what each run shows; past the end, a clean run that judged all
		reproduced            bool
		made, judged, leftout int
		others                int
	}{
		{"reproduces at once", []run{{obs: []Observation{found}}}, true, 1, 1, 0, 0},
		{"reproduces on the second judged run", []run{{}, {obs: []Observation{other, found}}}, true, 2, 2, 0, 1},
		{"fixed: two judged runs show nothing", nil, false, 2, 2, 0, 0},
		{"runs that left an input out are made again", []run{leftOut, leftOut, {obs: []Observation{found}}}, true, 3, 1, 2, 0},
		{"left out, then judged clean", []run{leftOut, {}, leftOut}, false, 4, 2, 2, 0},
		{"never judged: bounded, and says so", []run{leftOut, leftOut, leftOut, leftOut, leftOut, leftOut, leftOut}, false, maxReplayAttempts, 0, maxReplayAttempts, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &Replayed{}
			made := 0
			err := r.replay(sig, func() ([]Observation, bool, error) {
				made++
				if made > len(tc.runs) {
					return nil, false, nil
				}
				return tc.runs[made-1].obs, tc.runs[made-1].leftOut, nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if r.Reproduced != tc.reproduced || made != tc.made || r.Judged != tc.judged || r.LeftOut != tc.leftout || len(r.Others) != tc.others {
				t.Errorf("reproduced %v after %d runs (%d judged, %d left an input out, %d other problems), want %v after %d (%d, %d, %d)",
					r.Reproduced, made, r.Judged, r.LeftOut, len(r.Others), tc.reproduced, tc.made, tc.judged, tc.leftout, tc.others)
			}
		})
	}
}

// TestReproduceCountsInputsLeftOut: Reproduce tells a run that left an
// input out from one that judged it. Over a carrier too small for any of
// the finding's inputs every run leaves them out, so the replay is made
// maxReplayAttempts times and judges nothing, rather than calling the
// finding fixed.
func TestReproduceCountsInputsLeftOut(t *testing.T) {
	t.Parallel()
	f := &Finding{Version: FindingVersion, Signature: "wire.read-frames.diff-00000001", Target: "wire.read-frames", Kind: KindDiff,
		Inputs: []json.RawMessage{json.RawMessage(`{"inputs":[{"chunks":[{"data":"AAAAAQc="}]}]}`)}}
	m, ok := suites.Default().MutantImpl("zero-length-is-end")
	if !ok {
		t.Fatal("no mutant zero-length-is-end")
	}
	for _, tc := range []struct {
		name            string
		client          sut.Client
		judged, leftOut int
	}{
		{"a carrier for every input", builtin.New("builtin:mutant", m), ReplayRuns, 0},
		{"a carrier for none", carrierOf{builtin.New("builtin:mutant", m), 1}, 0, maxReplayAttempts},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := NewEngine(tc.client, testRegistry(), "builtin:mutant", testSeeds(t), 1, time.Minute, nil)
			r, err := e.Reproduce(context.Background(), f)
			if err != nil || r.Reproduced || r.Judged != tc.judged || r.LeftOut != tc.leftOut {
				t.Fatalf("replay: %+v, %v; want %d run(s) judged and %d that left the input out", r, err, tc.judged, tc.leftOut)
			}
		})
	}
}

// carrierOf is a client on a carrier that carries messages of at most max
// bytes, as a NATS broker's max_payload limits them.
type carrierOf struct {
	sut.Client
	max int
}

func (c carrierOf) MaxMessage() int { return c.max }
