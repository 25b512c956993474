package campaign

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/conform-suite/conform/suites"
	"github.com/conform-suite/conform/sut/builtin"
)

// The files a campaign reads that it may not have written — a finding given
// to conform replay, a checkpoint given to --resume — are fuzzed here: no
// input may panic, hang or make conform allocate past the files' bounds.
// go test runs the seeds; go test -fuzz explores.

// fileFuzzTimeout is the hang guard of one execution.
const fileFuzzTimeout = 20 * time.Second

// FuzzReplayFinding reads arbitrary bytes as a finding file and replays it,
// as conform replay does, against the reference in process: reading must
// fail cleanly or yield inputs, and the reference replayed against itself
// shows no problem (live targets, which play sockets, are read and not
// played).
func FuzzReplayFinding(f *testing.F) {
	for _, s := range []string{
		`{"version":2,"signature":"wire.read-frames.diff-0123abcd","target":"wire.read-frames","kind":"diff","op":"conform.v1.ReadFrames",` +
			`"inputs":[{"inputs":[{"chunks":[{"data":"AAAAAQc="}]},{"chunks":[{"data":"AAAAAAAAAAEH"}],"endOfStream":true}]}]}`,
		`{"signature":"tlv.decode.diff-00000000","target":"tlv.decode","inputs":[{"inputs":[{"frame":[{"data":"AQID"}]}]}]}`,
		`{"signature":"s","target":"wire.read-frames","inputs":[{"inputs":[{"chunks":[{"fill":{"length":"18446744073709551615","pattern":"AA=="}}]}]}]}`,
		`{"signature":"s","target":"wire.read-frames","inputs":[{"inputs":[]}]}`,
		`{"signature":"s","target":"graph.run","inputs":[{"scripts":[{}]}]}`,
		`{"signature":"s","target":"live.subscribe","inputs":[{"inputs":[{}]}]}`,
		`{"signature":"s","target":"no.such","inputs":[{}]}`,
		`{"version":99,"signature":"s","target":"wire.decode","inputs":[{}]}`,
		`{"signature":"s","target":"wire.decode","op":"conform.v1.Encode","inputs":[{}]}`,
		`[]`, `{`, ``, `null`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		fd, err := ParseFinding(b)
		if err != nil {
			return
		}
		tg, inputs, err := fd.ParseInputs(testTargets())
		if err != nil {
			return
		}
		if len(inputs) == 0 || len(inputs) > MaxFindingInputs {
			t.Fatalf("ParseInputs gave %d inputs", len(inputs))
		}
		for i, in := range inputs {
			if n := tg.entries(in).Len(); n != 1 {
				t.Fatalf("input %d holds %d entries, want 1", i, n)
			}
		}
		if tg.live != nil {
			return
		}
		e := NewEngine(builtin.New("builtin:reference", suites.Default().Reference()), testRegistry(), "builtin:reference", &Seeds{}, fd.Seed, fileFuzzTimeout, nil)
		ctx, cancel := context.WithTimeout(context.Background(), fileFuzzTimeout)
		defer cancel()
		r, err := e.Reproduce(ctx, fd)
		if ctx.Err() != nil {
			t.Fatalf("replay still runs after %v", fileFuzzTimeout)
		}
		if err != nil {
			return // a target the reference does not implement
		}
		if r.Reproduced || len(r.Others) > 0 {
			t.Fatalf("the reference replayed against itself shows %+v %+v", r.Observation, r.Others)
		}
		for _, o := range append(r.Others, r.Observation) {
			_ = r.Evidence(o)
		}
	})
}

// FuzzResumeCheckpoint reads arbitrary bytes as a checkpoint and resumes
// the campaign it describes, as --resume does: a checkpoint is refused with
// a message, or the campaign runs to its bound.
func FuzzResumeCheckpoint(f *testing.F) {
	pool := testSeeds(f)
	targets, _ := Select(testTargets(), []string{"tlv.pack-policy"})
	e := NewEngine(builtin.New("builtin:reference", suites.Default().Reference()), testRegistry(), "builtin:reference", pool, 1, time.Minute, nil)
	id, _ := json.Marshal(NewIdentity(pool, 1, targets, e.SUTOf()))
	ok := `{"version":2,"identity":` + string(id) + `,"next":{"tlv.pack-policy":17},"execs":17,"restarts":0,"elapsed_sec":1.5}`
	for _, s := range []string{
		ok,
		strings.Replace(ok, `17}`, `4611686018427387904}`, 1),
		strings.Replace(ok, `17}`, `18446744073709551615}`, 1),
		strings.Replace(ok, `"restarts":0`, `"restarts":-1`, 1),
		strings.Replace(ok, `1.5`, `1e300`, 1),
		strings.Replace(ok, `"seed":1`, `"seed":2`, 1),
		`{"version":1,"seed":1,"sut":"builtin:reference","next":{"tlv.pack-policy":17}}`,
		`{"version":2}`, `{"version":2,"next":null}`, `{`, ``, `[]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		cp, err := ParseCheckpoint(b)
		if err != nil {
			return
		}
		for name, n := range cp.Next {
			if n > maxIndex {
				t.Fatalf("ParseCheckpoint accepted input %d of %q", n, name)
			}
		}
		out := t.TempDir()
		if err := os.WriteFile(CheckpointPath(out), b, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, cfg := range []Config{
			{Targets: targets, Execs: 64, Out: out, Resume: true},
			{Targets: targets, Duration: 20 * time.Millisecond, Out: out, Resume: true},
		} {
			e := NewEngine(builtin.New("builtin:reference", suites.Default().Reference()), testRegistry(), "builtin:reference", pool, 1, time.Minute, nil)
			ctx, cancel := context.WithTimeout(context.Background(), fileFuzzTimeout)
			_, err := e.Run(ctx, cfg)
			hung := ctx.Err() != nil
			cancel()
			if hung {
				t.Fatalf("resuming still runs after %v", fileFuzzTimeout)
			}
			var mm *MismatchError
			if err != nil && !errors.As(err, &mm) {
				t.Fatalf("resuming a checkpoint that parsed: %v", err)
			}
		}
	})
}
