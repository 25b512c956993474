package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
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
	// wire is declared and its MUST case answered Unimplemented: the
	// profile is incomplete, which fails the run unless accepted.
	if rec.ExitCode != 1 {
		t.Errorf("exit %d, want 1: a declared profile is incomplete", rec.ExitCode)
	}
	if v := rec.Summary.ByProfile; len(v) != 1 || v[0].Status != reports.ProfileIncomplete || v[0].MustUnimplemented != 1 || v[0].Accepted != "" {
		t.Errorf("profile verdicts %+v", v)
	}
	// Accepted; another case judged, so the run judged something.
	mixed := &fakeClient{profiles: []string{"wire"}, resp: okResp}
	mixed.onCall = func() {
		if mixed.calls == 1 {
			mixed.resp = unimpl
		} else {
			mixed.resp = okResp
		}
	}
	rec = Run(context.Background(), Config{Spec: "fake", Client: mixed, Cases: []cases.Case{mk("wire/1/x", reports.MUST, false), mk("wire/1/y", reports.MUST, false)}, AllowUnimplemented: true})
	if rec.ExitCode != 0 || rec.Summary.ByProfile[0].Accepted != reports.AcceptedByFlag || !rec.AllowUnimplemented {
		t.Errorf("--allow-unimplemented: exit %d, verdicts %+v", rec.ExitCode, rec.Summary.ByProfile)
	}
}

func TestLostAfterConsecutiveTimeouts(t *testing.T) {
	c := &fakeClient{profiles: []string{"wire"}, err: &sut.Error{Kind: reports.KindTimeout, Detail: "slow"}}
	var cs []cases.Case
	for _, id := range []string{"wire/1/a", "wire/1/b", "wire/1/c", "wire/1/d", "wire/1/e"} {
		cs = append(cs, mk(id, reports.MUST, false))
	}
	rec := Run(context.Background(), Config{Spec: "fake", Client: c, Cases: cs, MaxTimeouts: 2})
	kinds := []reports.ErrorKind{}
	for _, r := range rec.Cases {
		if r.Outcome != reports.Error {
			t.Errorf("%s: %s", r.ID, r.Outcome)
		}
		kinds = append(kinds, r.ErrorKind)
	}
	if want := []reports.ErrorKind{reports.KindTimeout, reports.KindTimeout, reports.KindLost, reports.KindLost, reports.KindLost}; !slices.Equal(kinds, want) {
		t.Errorf("kinds %v, want %v", kinds, want)
	}
	if c.calls != 2 {
		t.Errorf("%d ops sent to a lost SUT, want 2", c.calls)
	}
	if rec.Lost == nil || rec.Lost.After != "wire/1/b" || rec.Lost.NotRun != 3 || rec.Lost.Last == nil || rec.Lost.Last.Kind != reports.KindTimeout {
		t.Errorf("lost %+v", rec.Lost)
	}
}

// scriptClient answers each Do with the next error of a script, then with
// the last one forever.
type scriptClient struct {
	fakeClient
	script []error
}

func (s *scriptClient) Do(ctx context.Context, req *conformpb.Request) (*conformpb.Response, error) {
	s.calls++
	return nil, s.script[min(s.calls, len(s.script))-1]
}

// TestLostAfterFailedRestarts: a SUT that crashes and then never comes
// back — each restart fails or hangs before Hello — is presumed lost after
// MaxTimeouts failed restarts, as after as many timeouts; the record says
// why, with the exit status and standard error of the last attempt.
func TestLostAfterFailedRestarts(t *testing.T) {
	c := &scriptClient{fakeClient: fakeClient{profiles: []string{"wire"}}, script: []error{
		&sut.Error{Kind: reports.KindCrash, Detail: "the SUT's output ended", Exit: "signal: segmentation fault", Stderr: "boom"},
		&sut.Error{Kind: reports.KindStart, Detail: "the SUT never said Hello", Exit: "signal: killed", Stderr: "starting…\nstuck"},
	}}
	var cs []cases.Case
	for i := range 20 {
		cs = append(cs, mk(fmt.Sprintf("wire/1/c%02d", i), reports.MUST, false))
	}
	rec := Run(context.Background(), Config{Spec: "fake", Client: c, Cases: cs, MaxTimeouts: 3})
	if c.calls != 4 {
		t.Errorf("%d ops sent, want 4: a crash, then 3 failed restarts", c.calls)
	}
	if rec.Lost == nil || rec.Lost.After != "wire/1/c03" || rec.Lost.NotRun != 16 {
		t.Fatalf("lost %+v", rec.Lost)
	}
	if l := rec.Lost.Last; l == nil || l.Kind != reports.KindStart || l.Exit != "signal: killed" || l.Stderr != "starting…\nstuck" {
		t.Errorf("the last error lacks why: %+v", rec.Lost.Last)
	}
	restart := rec.Cases[1]
	if restart.ErrorKind != reports.KindStart || !strings.Contains(restart.Message, "signal: killed") ||
		len(restart.Evidence) != 1 || restart.Evidence[0].Stderr != "starting…\nstuck" {
		t.Errorf("a failed restart's case does not carry its exit and stderr: %+v", restart)
	}
	if rec.ExitCode != ExitFailures {
		t.Errorf("exit %d", rec.ExitCode)
	}
}

// TestStartErrorRecorded: a SUT that never started is recorded once with
// why, and every case as error of kind start; the exit code is 3.
func TestStartErrorRecorded(t *testing.T) {
	err := &sut.Error{Kind: reports.KindStart, Detail: "the SUT never said Hello", Exit: "exit status 7", Stderr: strings.Repeat("x", 100<<10) + "the end"}
	rec := Run(context.Background(), Config{Spec: "./nope", StartErr: err, Cases: []cases.Case{mk("wire/1/a", reports.MUST, false), mk("wire/1/b", reports.MUST, false)}})
	f := rec.StartError
	if f == nil || f.Kind != reports.KindStart || f.Exit != "exit status 7" || !strings.HasSuffix(f.Stderr, "the end") || len(f.Stderr) > reports.MaxStderr+64 {
		t.Fatalf("start error %+v", f)
	}
	for _, c := range rec.Cases {
		if c.Outcome != reports.Error || c.ErrorKind != reports.KindStart {
			t.Errorf("%s: %s/%s", c.ID, c.Outcome, c.ErrorKind)
		}
	}
	if rec.ExitCode != ExitNoSUT {
		t.Errorf("exit %d, want 3", rec.ExitCode)
	}
}

// TestHelloWithoutProfileRefused: a Hello that declares no profile is
// refused before any op (exit 3), with a message that says so.
func TestHelloWithoutProfileRefused(t *testing.T) {
	c := &fakeClient{resp: okResp}
	rec := Run(context.Background(), Config{Spec: "fake", Client: c, Cases: []cases.Case{mk("wire/1/a", reports.MUST, false)}})
	if rec.ExitCode != ExitNoSUT || rec.StartError == nil || !strings.Contains(rec.StartError.Message, "declares no profile") {
		t.Errorf("exit %d, start error %+v", rec.ExitCode, rec.StartError)
	}
	if c.calls != 0 {
		t.Errorf("%d ops sent to a SUT declaring no profile", c.calls)
	}
	if rec.SUT.Carrier != "fake" {
		t.Errorf("carrier %q: the SUT was reached, the record says how", rec.SUT.Carrier)
	}
}

// helloClient is a fakeClient with a node command in its Hello.
type helloClient struct {
	fakeClient
	node []string
}

func (h *helloClient) Hello() *conformpb.Hello {
	return &conformpb.Hello{Profiles: h.profiles, NodeCommand: h.node}
}

// TestRemoteHelloCommandWithheld: the cases never see the node_command of
// a SUT conform did not start (a remote SUT must not make conform run a
// command); they see that of a local one. The record keeps the Hello as
// it came.
func TestRemoteHelloCommandWithheld(t *testing.T) {
	for _, remote := range []bool{false, true} {
		var seen []string
		c := cases.Case{ID: "live/5.2/x", Title: "x", Spec: "t", Level: reports.MUST, Profile: "ranvier-node", Run: func(t *cases.T) {
			seen = t.Hello().GetNodeCommand()
		}}
		client := &helloClient{fakeClient: fakeClient{profiles: []string{"ranvier-node"}}, node: []string{"touch", "/tmp/marker"}}
		rec := Run(context.Background(), Config{Spec: "fake", Client: client, Cases: []cases.Case{c}, Remote: remote})
		if got := len(seen) > 0; got == remote {
			t.Errorf("remote=%v: the case saw node_command %q", remote, seen)
		}
		if !strings.Contains(string(rec.SUT.Hello), "/tmp/marker") {
			t.Errorf("remote=%v: the record lost the Hello's node_command: %s", remote, rec.SUT.Hello)
		}
		if len(client.Hello().NodeCommand) == 0 {
			t.Error("the client's Hello was modified")
		}
	}
}

// TestSkipProfiles: a profile conform cannot run is skipped with the
// reason given, without an op.
func TestSkipProfiles(t *testing.T) {
	c := &fakeClient{profiles: []string{"wire", "ranvier-node"}, resp: okResp}
	node := mk("live/5.2/x", reports.MUST, false)
	node.Profile = "ranvier-node"
	rec := Run(context.Background(), Config{Spec: "tcp://x", Client: c, Cases: []cases.Case{node, mk("wire/1/a", reports.MUST, false)},
		SkipProfiles: map[string]string{"ranvier-node": "no node command"}})
	if r := rec.Cases[0]; r.Outcome != reports.Skip || r.Message != "no node command" {
		t.Errorf("%+v", r)
	}
	if c.calls != 1 || rec.Cases[1].Outcome != reports.Pass {
		t.Errorf("%d calls, second case %s", c.calls, rec.Cases[1].Outcome)
	}
	if v := rec.Summary.ByProfile; len(v) != 2 || v[1].Status != reports.ProfileNotJudged {
		t.Errorf("verdicts %+v", v)
	}
}

// TestSUTTextBounded: what a SUT says — an Error message, an Unimplemented
// detail, its standard error, a case's evidence of it — is bounded in the
// record.
func TestSUTTextBounded(t *testing.T) {
	big := strings.Repeat("x", 1<<20) + "\x1b[2J"
	errResp := &conformpb.Response{Result: &conformpb.Response_Error{Error: &conformpb.Error{Message: big}}}
	unimpl := &conformpb.Response{Result: &conformpb.Response_Unimplemented{Unimplemented: &conformpb.Unimplemented{Detail: big}}}
	noisy := cases.Case{ID: "wire/1/n", Title: "n", Spec: "t", Level: reports.MUST, Profile: "wire", Run: func(t *cases.T) {
		for range 100 {
			t.Fail(reports.Evidence{Message: big, Got: big, Stderr: big})
			t.Note("%s", big)
		}
	}}
	for _, tc := range []struct {
		name string
		c    sut.Client
		cs   cases.Case
	}{
		{"error", &fakeClient{profiles: []string{"wire"}, resp: errResp}, mk("wire/1/a", reports.MUST, false)},
		{"unimplemented", &fakeClient{profiles: []string{"wire"}, resp: unimpl}, mk("wire/1/a", reports.MUST, false)},
		{"stderr", &fakeClient{profiles: []string{"wire"}, err: &sut.Error{Kind: reports.KindCrash, Detail: big, Stderr: big}}, mk("wire/1/a", reports.MUST, false)},
		{"evidence", &fakeClient{profiles: []string{"wire"}, resp: okResp}, noisy},
	} {
		rec := Run(context.Background(), Config{Spec: "fake", Client: tc.c, Cases: []cases.Case{tc.cs}})
		b, err := json.Marshal(rec)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) > 128<<10 {
			t.Errorf("%s: a %d-byte record", tc.name, len(b))
		}
		if !strings.Contains(string(b), "bytes dropped]") {
			t.Errorf("%s: the record does not say what it dropped", tc.name)
		}
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
	if r := rec.Cases[0]; r.Outcome != reports.Error || r.ErrorKind != reports.KindHarness {
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

// TestSelectProfileBeforeSuite: a name that is a profile selects that
// profile even where a suite has the same name; a suite that is no profile
// selects the suite; an unknown name is an error naming the valid ones.
func TestSelectProfileBeforeSuite(t *testing.T) {
	all := []cases.Case{
		{ID: "doppler/3/a", Profile: "doppler"}, {ID: "doppler/7/live", Profile: "doppler-nats"},
		{ID: "live/4.1/c", Profile: "ranvier-subscriber"}, {ID: "wire/1/w", Profile: "wire"},
	}
	for _, tt := range []struct {
		profiles, globs []string
		want            []string
	}{
		{[]string{"doppler"}, nil, []string{"doppler/3/a"}},
		{[]string{"doppler-nats"}, nil, []string{"doppler/7/live"}},
		{[]string{"doppler", "doppler-nats"}, nil, []string{"doppler/3/a", "doppler/7/live"}},
		{nil, []string{"doppler/**"}, []string{"doppler/3/a", "doppler/7/live"}},
		{[]string{"live"}, nil, []string{"live/4.1/c"}},
	} {
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
	_, err := Select(all, []string{"wire", "bogus"}, nil)
	var se *SelectError
	if !errors.As(err, &se) || !slices.Equal(se.Names, []string{"bogus"}) {
		t.Fatalf("unknown profile: %v", err)
	}
	for _, want := range []string{"--profile bogus", "doppler, doppler-nats, ranvier-subscriber, wire", "suites (each selecting all its profiles) are live"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q lacks %q", err, want)
		}
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

// TestInterruptedStartIsNoStartFailure: a run interrupted while its SUT was
// starting exits 1, as any interrupted run, and not 3 — nothing says the SUT
// could not start — and its text says it was interrupted.
func TestInterruptedStartIsNoStartFailure(t *testing.T) {
	for _, tt := range []struct {
		kind reports.ErrorKind
		exit int
		say  string
	}{
		{reports.KindInterrupted, ExitFailures, "the run was interrupted while the SUT was starting"},
		{reports.KindStart, ExitNoSUT, "the SUT could not be started"},
	} {
		r := &reports.Record{Interrupted: tt.kind == reports.KindInterrupted, StartError: &reports.SUTFailure{Kind: tt.kind, Message: "sut start: waiting for Hello"}}
		r.Summarize()
		if got := ExitCode(r); got != tt.exit {
			t.Errorf("%s: exit %d, want %d", tt.kind, got, tt.exit)
		}
		r.ExitCode = ExitCode(r)
		var b strings.Builder
		reports.WriteText(&b, r, false)
		if !strings.Contains(b.String(), "ERROR  "+tt.say+":") {
			t.Errorf("%s: the text does not say %q:\n%s", tt.kind, tt.say, b.String())
		}
	}
}
