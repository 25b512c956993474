package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/reports"
	"github.com/conform-suite/conform/suites"
	"github.com/conform-suite/conform/sut"
	"github.com/conform-suite/conform/sut/impl"
	"github.com/conform-suite/conform/sut/tcp"
)

// serveTCP serves h on loopback TCP for the test's life and returns its
// --sut value.
func serveTCP(t *testing.T, h sut.Handler) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := tcp.Listen(ctx, "tcp://127.0.0.1:0", h, sut.Binary)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); srv.Close() })
	return srv.URL()
}

// readRecord reads and validates the record a run wrote.
func readRecord(t *testing.T, path string) *reports.Record {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	checkAgainstSchema(t, b)
	r, err := reports.ReadJSON(path)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// partialShim declares wire and implements readFrames alone, like a
// binding that has just begun.
type partialShim struct{ ref *impl.Impl }

func (p partialShim) Hello() *conformpb.Hello {
	return &conformpb.Hello{Implementation: "partial", Profiles: []string{"wire"}}
}

func (p partialShim) Handle(ctx context.Context, req *conformpb.Request) *conformpb.Response {
	if req.GetReadFrames() != nil {
		return p.ref.Handle(ctx, req)
	}
	return &conformpb.Response{Result: &conformpb.Response_Unimplemented{Unimplemented: &conformpb.Unimplemented{Detail: "not yet"}}}
}

// TestVerdictPerDeclaredProfile: a SUT that declares wire and implements a
// part of it is incomplete — exit 1, with --strict too, and no headline
// says conformant — unless --allow-unimplemented or a baseline accepts
// that; the record and every rendering give the profile's verdict.
func TestVerdictPerDeclaredProfile(t *testing.T) {
	t.Parallel()
	spec := serveTCP(t, partialShim{ref: suites.Default().Reference()})
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	code, out, stderr := runMain(t, "run", "--sut", spec, "--profile", "wire", "--strict", "--json", p("r.json"), "--markdown", p("r.md"), "--html", p("r.html"), "--junit", p("r.xml"))
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s%s", code, out, stderr)
	}
	rec := readRecord(t, p("r.json"))
	v := rec.Summary.ByProfile
	if len(v) != 1 || v[0].Status != reports.ProfileIncomplete || v[0].MustJudged == 0 || v[0].MustUnimplemented == 0 || v[0].MustJudged+v[0].MustUnimplemented != v[0].Must {
		t.Fatalf("verdicts %+v", v)
	}
	judged := v[0].String()
	for name, text := range map[string]string{"text": out, "markdown": read(t, p("r.md")), "html": read(t, p("r.html")), "junit": read(t, p("r.xml"))} {
		if strings.Contains(strings.ToLower(text), "conform: conformant") || strings.Contains(text, "verdict: conformant") {
			t.Errorf("%s says conformant", name)
		}
		if !strings.Contains(text, "incomplete") {
			t.Errorf("%s does not say incomplete", name)
		}
	}
	if !strings.Contains(out, "profile "+judged) {
		t.Errorf("the text lacks %q:\n%s", judged, out)
	}

	// Accepted by the flag: exit 0, still not "conformant".
	code, out, _ = runMain(t, "run", "--sut", spec, "--profile", "wire", "--allow-unimplemented")
	if code != 0 || !strings.Contains(out, "verdict: partly judged") || !strings.Contains(out, "(accepted by --allow-unimplemented)") {
		t.Errorf("--allow-unimplemented: exit %d\n%s", code, out)
	}
	// Accepted by a baseline conform baseline wrote.
	code, bl, _ := runMain(t, "baseline", p("r.json"))
	if code != 0 || !strings.Contains(bl, "declared, not implemented") {
		t.Fatalf("conform baseline: exit %d\n%s", code, bl)
	}
	os.WriteFile(p("baseline.txt"), []byte(bl), 0o644)
	code, out, _ = runMain(t, "run", "--sut", spec, "--profile", "wire", "--baseline", p("baseline.txt"), "--json", p("b.json"))
	if code != 0 || readRecord(t, p("b.json")).Summary.ByProfile[0].Accepted != reports.AcceptedByBaseline {
		t.Errorf("under its baseline: exit %d\n%s", code, out)
	}
}

// unimplementedShim declares wire and answers Unimplemented to everything.
type unimplementedShim struct{ partialShim }

func (unimplementedShim) Handle(context.Context, *conformpb.Request) *conformpb.Response {
	return &conformpb.Response{Result: &conformpb.Response_Unimplemented{Unimplemented: &conformpb.Unimplemented{}}}
}

// noProfileShim says Hello without a profile.
type noProfileShim struct{ unimplementedShim }

func (noProfileShim) Hello() *conformpb.Hello { return &conformpb.Hello{Implementation: "anonymous"} }

// TestNothingJudgedFails: a SUT declaring wire that answers Unimplemented
// everywhere exits 1, even under --allow-unimplemented (nothing was
// judged); a Hello declaring no profile is refused with exit 3.
func TestNothingJudgedFails(t *testing.T) {
	spec := serveTCP(t, unimplementedShim{})
	for _, extra := range [][]string{nil, {"--allow-unimplemented"}} {
		code, out, _ := runMain(t, append([]string{"run", "--sut", spec, "--profile", "wire"}, extra...)...)
		if code != 1 || strings.Contains(out, "verdict: conformant") || strings.Contains(out, "verdict: nothing judged") && len(extra) == 0 {
			t.Errorf("%v: exit %d\n%s", extra, code, out)
		}
	}
	spec = serveTCP(t, noProfileShim{})
	dir := t.TempDir()
	code, out, _ := runMain(t, "run", "--sut", spec, "--profile", "wire", "--json", filepath.Join(dir, "r.json"))
	if code != 3 || !strings.Contains(out, "declares no profile") {
		t.Errorf("a Hello without profile: exit %d\n%s", code, out)
	}
	if rec := readRecord(t, filepath.Join(dir, "r.json")); rec.StartError == nil || rec.SUT.Carrier == "" {
		t.Errorf("the record lacks why: %+v", rec.StartError)
	}
}

// TestRemoteSUTRunsNoCommand: a SUT reached over tcp:// whose Hello names a
// node command never makes conform run it; its node cases are skipped,
// saying why and how to give a command; --node-cmd still launches one.
func TestRemoteSUTRunsNoCommand(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "pwned")
	ref := suites.Default().Reference()
	ref.SetNodeCommand([]string{"sh", "-c", "touch " + marker})
	spec := serveTCP(t, ref)
	code, out, stderr := runMain(t, "run", "--sut", spec, "--profile", "ranvier-node", "--timeout", "5s", "--json", filepath.Join(dir, "r.json"))
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("conform ran the command a remote SUT's Hello named")
	}
	rec := readRecord(t, filepath.Join(dir, "r.json"))
	if len(rec.Cases) == 0 {
		t.Fatalf("no case: exit %d\n%s%s", code, out, stderr)
	}
	for _, c := range rec.Cases {
		if c.Outcome != reports.Skip || !strings.Contains(c.Message, "tcp://") || !strings.Contains(c.Message, "--node-cmd") {
			t.Errorf("%s: %s %q", c.ID, c.Outcome, c.Message)
		}
	}
	if code != 1 || !strings.Contains(out, "nothing judged") {
		t.Errorf("exit %d: nothing was judged\n%s", code, out)
	}
	// With --node-cmd, that command (and only it) is launched.
	other := filepath.Join(dir, "chosen")
	runMain(t, "run", "--sut", spec, "--case", "live/5.2/node-registers-first", "--timeout", "5s", "--node-cmd", "sh -c 'touch "+other+"'")
	if _, err := os.Stat(other); err != nil {
		t.Errorf("--node-cmd was not launched: %v", err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("conform ran the command a remote SUT's Hello named")
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestLostWhenRestartsHang: a SUT that crashes, then hangs before Hello on
// every restart, is presumed lost after three failed restarts: the run
// costs a bounded time (about 3 × --timeout), the record says why with the
// last attempt's exit, and the remaining cases are recorded at once as
// lost.
func TestLostWhenRestartsHang(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	marker := filepath.Join(dir, "started")
	// First start: Hello (a JSON Hello of 21 bytes), then exit 3 on the
	// first request. Every later start: hang before Hello.
	script := `if [ -e ` + marker + ` ]; then exec sleep 600; fi; touch ` + marker + `; head -c 4 >/dev/null; ` +
		`printf "\000\000\000\025{\"profiles\":[\"wire\"]}"; head -c 4 >/dev/null; exit 3`
	rec := filepath.Join(dir, "r.json")
	code, out, stderr := runMain(t, "run", "--sut", "exec:sh -c '"+script+"'", "--profile", "wire", "--timeout", "1s", "--json", rec)
	if code != 1 {
		t.Fatalf("exit %d\n%s%s", code, out, stderr)
	}
	r := readRecord(t, rec)
	if r.Lost == nil || r.Lost.Last == nil || r.Lost.Last.Kind != reports.KindStart || r.Lost.Last.Exit == "" {
		t.Fatalf("lost %+v", r.Lost)
	}
	ran := len(r.Cases) - r.Lost.NotRun
	if ran != 4 || r.Lost.NotRun != len(r.Cases)-4 {
		t.Errorf("%d cases ran, want 4: a crash and three failed restarts", ran)
	}
	if r.DurationSec > 30 {
		t.Errorf("the run took %.1fs", r.DurationSec)
	}
	if !strings.Contains(out, "case(s) not run, recorded as error (lost)") {
		t.Errorf("the report does not say the SUT was lost:\n%s", out)
	}
}
