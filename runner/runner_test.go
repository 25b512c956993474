package runner

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/conform-suite/conform/cases"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/reports"
	"github.com/conform-suite/conform/sut"
)

// fakeClient answers every op with a fixed response or error.
type fakeClient struct {
	profiles []string
	resp     *conformpb.Response
	err      error
	calls    int
	onCall   func()
}

func (f *fakeClient) Hello() *conformpb.Hello { return &conformpb.Hello{Profiles: f.profiles} }
func (f *fakeClient) Carrier() string         { return "fake" }
func (f *fakeClient) Close() error            { return nil }
func (f *fakeClient) Do(ctx context.Context, req *conformpb.Request) (*conformpb.Response, error) {
	f.calls++
	if f.onCall != nil {
		f.onCall()
	}
	if f.err != nil {
		return nil, f.err
	}
	return f.resp, nil
}

var okResp = &conformpb.Response{Result: &conformpb.Response_Decode{Decode: &conformpb.DecodeResult{}}}

// mk returns a case that sends one op and fails its check when fail is set.
func mk(id string, level reports.Level, fail bool) cases.Case {
	return cases.Case{ID: id, Title: id, Spec: "test", Level: level, Profile: "wire", Run: func(t *cases.T) {
		t.Do(&conformpb.Request{})
		if fail {
			t.Failf("broken")
		}
	}}
}

func TestJudgement(t *testing.T) {
	tests := []struct {
		level  reports.Level
		fail   bool
		strict bool
		want   reports.Outcome
		exit   int
	}{
		{reports.MUST, false, false, reports.Pass, 0},
		{reports.MUST, true, false, reports.Fail, 1},
		{reports.SHOULD, true, false, reports.Warn, 0},
		{reports.SHOULD, true, true, reports.Fail, 1},
		{reports.MAY, true, false, reports.Info, 0},
		{reports.INFO, true, true, reports.Info, 0},
	}
	for _, tt := range tests {
		rec := Run(context.Background(), Config{Spec: "fake", Client: &fakeClient{profiles: []string{"wire"}, resp: okResp},
			Cases: []cases.Case{mk("wire/1/x", tt.level, tt.fail)}, Strict: tt.strict})
		got := rec.Cases[0]
		if got.Outcome != tt.want || rec.ExitCode != tt.exit {
			t.Errorf("%s fail=%v strict=%v: %s exit %d, want %s exit %d", tt.level, tt.fail, tt.strict, got.Outcome, rec.ExitCode, tt.want, tt.exit)
		}
		if (got.Outcome != reports.Pass) != (got.Reproduce != "") {
			t.Errorf("%s: reproduce %q on outcome %s", tt.level, got.Reproduce, got.Outcome)
		}
	}
}

func TestUnimplementedAndUndeclared(t *testing.T) {
	unimpl := &conformpb.Response{Result: &conformpb.Response_Unimplemented{Unimplemented: &conformpb.Unimplemented{}}}
	c := &fakeClient{profiles: []string{"wire"}, resp: unimpl}
	other := mk("streams/1/y", reports.MUST, false)
	other.Profile = "streams"
	rec := Run(context.Background(), Config{Spec: "fake", Client: c, Cases: []cases.Case{mk("wire/1/x", reports.MUST, false), other}})
	if rec.Cases[0].Outcome != reports.Skip || rec.Cases[1].Outcome != reports.Skip {
		t.Fatalf("outcomes %s %s, want skip skip", rec.Cases[0].Outcome, rec.Cases[1].Outcome)
	}
	if !slices.Equal(rec.Unimplemented, []string{"wire/1/x"}) || !slices.Equal(rec.Undeclared, []string{"streams"}) {
		t.Errorf("unimplemented %v undeclared %v", rec.Unimplemented, rec.Undeclared)
	}
	if c.calls != 1 {
		t.Errorf("%d ops sent; a case in an undeclared profile must not reach the SUT", c.calls)
	}
	if rec.ExitCode != 0 {
		t.Errorf("exit %d", rec.ExitCode)
	}
}

func TestLostAfterConsecutiveTimeouts(t *testing.T) {
	c := &fakeClient{profiles: []string{"wire"}, err: &sut.Error{Kind: sut.KindTimeout, Detail: "slow"}}
	var cs []cases.Case
	for _, id := range []string{"wire/1/a", "wire/1/b", "wire/1/c", "wire/1/d", "wire/1/e"} {
		cs = append(cs, mk(id, reports.MUST, false))
	}
	rec := Run(context.Background(), Config{Spec: "fake", Client: c, Cases: cs, MaxTimeouts: 2})
	kinds := []string{}
	for _, r := range rec.Cases {
		if r.Outcome != reports.Error {
			t.Errorf("%s: %s", r.ID, r.Outcome)
		}
		kinds = append(kinds, r.ErrorKind)
	}
	if want := []string{"timeout", "timeout", "lost", "lost", "lost"}; !slices.Equal(kinds, want) {
		t.Errorf("kinds %v, want %v", kinds, want)
	}
	if c.calls != 2 {
		t.Errorf("%d ops sent to a lost SUT, want 2", c.calls)
	}
}

func TestInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	c := &fakeClient{profiles: []string{"wire"}, resp: okResp}
	c.onCall = func() {
		if c.calls == 2 {
			cancel()
		}
	}
	var cs []cases.Case
	for _, id := range []string{"wire/1/a", "wire/1/b", "wire/1/c"} {
		cs = append(cs, mk(id, reports.MUST, false))
	}
	rec := Run(ctx, Config{Spec: "fake", Client: c, Cases: cs, Timeout: time.Second})
	if !rec.Interrupted || rec.ExitCode != 1 {
		t.Errorf("interrupted %v exit %d", rec.Interrupted, rec.ExitCode)
	}
	if len(rec.Cases) != 2 || rec.Cases[0].Outcome != reports.Pass {
		t.Errorf("cases %+v", rec.Cases)
	}
}

func TestHarnessPanicIsAnError(t *testing.T) {
	c := cases.Case{ID: "wire/1/p", Title: "p", Spec: "t", Level: reports.MUST, Profile: "wire", Run: func(t *cases.T) {
		var m map[string]int
		m["x"] = 1
	}}
	rec := Run(context.Background(), Config{Spec: "fake", Client: &fakeClient{profiles: []string{"wire"}}, Cases: []cases.Case{c}})
	if r := rec.Cases[0]; r.Outcome != reports.Error || r.ErrorKind != "harness" {
		t.Errorf("%s/%s", r.Outcome, r.ErrorKind)
	}
}

func TestSelect(t *testing.T) {
	all := []cases.Case{{ID: "wire/1.3/a", Profile: "wire"}, {ID: "wire/2/b", Profile: "wire"}, {ID: "live/4.1/c", Profile: "ranvier-subscriber"}}
	tests := []struct {
		profiles, globs []string
		want            []string
	}{
		{nil, nil, []string{"wire/1.3/a", "wire/2/b", "live/4.1/c"}},
		{[]string{"wire"}, nil, []string{"wire/1.3/a", "wire/2/b"}},
		{[]string{"live"}, nil, []string{"live/4.1/c"}},
		{[]string{"ranvier-subscriber"}, nil, []string{"live/4.1/c"}},
		{nil, []string{"wire/1.3/*"}, []string{"wire/1.3/a"}},
		{nil, []string{"wire/**"}, []string{"wire/1.3/a", "wire/2/b"}},
		{nil, []string{"*/*/c", "wire/2/b"}, []string{"wire/2/b", "live/4.1/c"}},
		{nil, []string{"wire/*"}, nil},
	}
	for _, tt := range tests {
		got, err := Select(all, tt.profiles, tt.globs)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, c := range got {
			ids = append(ids, c.ID)
		}
		if !slices.Equal(ids, tt.want) {
			t.Errorf("Select(%v, %v) = %v, want %v", tt.profiles, tt.globs, ids, tt.want)
		}
	}
	if _, err := Select(all, nil, []string{"["}); err == nil {
		t.Error("a malformed glob was accepted")
	}
}

func TestReproduceQuotes(t *testing.T) {
	got := Reproduce("exec:python3 shim.py --x 'y'", "wire/1.3/a", 7)
	want := `conform run --sut 'exec:python3 shim.py --x '\''y'\''' --case wire/1.3/a --seed 7`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestReproduceObserved(t *testing.T) {
	cfg := Config{Spec: "peer tcp://10.0.0.7:7000", SUTFlags: []string{"--peer", "tcp://10.0.0.7:7000/cam", "--profile", "ranvier-publisher"}, Seed: 3}
	got := reproduce(cfg, "live/6.3/x")
	want := "conform run --peer tcp://10.0.0.7:7000/cam --profile ranvier-publisher --case live/6.3/x --seed 3"
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	cfg.SUTFlags = nil
	cfg.Spec = "builtin:reference"
	if got := reproduce(cfg, "wire/1.3/a"); got != Reproduce("builtin:reference", "wire/1.3/a", 3) {
		t.Errorf("without SUTFlags: %s", got)
	}
}
