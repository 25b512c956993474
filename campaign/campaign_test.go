package campaign

import (
	"bytes"
	"context"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/conform-suite/conform/campaign/gen"
	"github.com/conform-suite/conform/corpus"
	"github.com/conform-suite/conform/fuzz/seeds"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/suites"
	"github.com/conform-suite/conform/sut/builtin"
	"github.com/conform-suite/conform/sut/mutant"
	"google.golang.org/protobuf/proto"
)

var (
	seedOnce sync.Once
	seedPool *Seeds
	seedErr  error
)

// testSeeds builds the seed pool once for every test of the package.
func testSeeds(t testing.TB) *Seeds {
	t.Helper()
	seedOnce.Do(func() {
		seedPool, seedErr = LoadSeeds(context.Background(), testRegistry(), Targets(testRegistry()), nil, nil)
	})
	if seedErr != nil {
		t.Fatal(seedErr)
	}
	return seedPool
}

func TestTargets(t *testing.T) {
	all := testTargets()
	if len(all) < 20 {
		t.Fatalf("%d targets, want one per codec op", len(all))
	}
	perSuite := map[string]int{}
	ref := suites.Default().Reference()
	for _, tg := range all {
		perSuite[tg.Suite]++
		if tg.Doc == "" {
			t.Errorf("%s has no description", tg.Name)
		}
		e := &Engine{Seed: 7, Seeds: &Seeds{}}
		var inputs []proto.Message
		for i := range uint64(50) {
			inputs = append(inputs, e.Input(tg, i))
		}
		for _, in := range inputs {
			if n := tg.entries(in).Len(); n != 1 {
				t.Fatalf("%s: an input holds %d entries, want 1", tg.Name, n)
			}
		}
		// Inputs are a pure function of seed and index.
		if again := e.Input(tg, 17); !proto.Equal(again, inputs[17]) {
			t.Errorf("%s: input 17 differs between two calls", tg.Name)
		}
		for _, in := range inputs[:5] {
			outs, ans, msg := tg.outputs(ref.Handle(context.Background(), tg.request([]proto.Message{in})))
			if ans == answerOK && len(outs) != 1 {
				t.Errorf("%s: the reference answered %d outputs for 1 input", tg.Name, len(outs))
			}
			if ans == answerOtherOp || ans == answerUnimplemented {
				t.Errorf("%s: the reference answered %v: %s", tg.Name, ans, msg)
			}
		}
	}
	for _, s := range testRegistry().Suites() {
		if perSuite[s.Name] != len(s.Targets) {
			t.Errorf("suite %s declares %d targets, %d run", s.Name, len(s.Targets), perSuite[s.Name])
		}
	}
}

func TestSeedPoolCoversTargets(t *testing.T) {
	t.Parallel()
	pool := testSeeds(t)
	for _, tg := range testTargets() {
		if len(pool.For(tg)) == 0 {
			t.Errorf("%s has no seeds from the catalogue or the corpus", tg.Name)
		}
	}
}

// TestSeedsOfOneSuiteAlone: a pool loaded for some targets gives each the
// seeds the whole pool gives it, names and inputs alike, and nothing to
// the targets it was not loaded for; so a campaign that loads its own
// targets alone runs the inputs, and has the identity, it would with every
// target loaded.
func TestSeedsOfOneSuiteAlone(t *testing.T) {
	t.Parallel()
	whole := testSeeds(t)
	bySuite := map[string][]*Target{}
	for _, tg := range testTargets() {
		bySuite[tg.Suite] = append(bySuite[tg.Suite], tg)
	}
	for suite, targets := range bySuite {
		t.Run(suite, func(t *testing.T) {
			part, err := LoadSeeds(context.Background(), testRegistry(), targets, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, tg := range testTargets() {
				got, want := part.For(tg), whole.For(tg)
				if tg.Suite != suite {
					if len(got) > 0 || part.Has(tg) {
						t.Errorf("%s: %d seeds in a pool not loaded for it", tg.Name, len(got))
					}
					continue
				}
				if !part.Has(tg) {
					t.Errorf("%s: the pool does not say it was loaded for it", tg.Name)
				}
				if len(got) != len(want) {
					t.Errorf("%s: %d seeds alone, %d in the whole pool", tg.Name, len(got), len(want))
					continue
				}
				for i := range got {
					if got[i].Name != want[i].Name || !proto.Equal(got[i].Input, want[i].Input) {
						t.Errorf("%s: seed %d is %s alone, %s in the whole pool", tg.Name, i, got[i].Name, want[i].Name)
						break
					}
				}
			}
		})
	}
}

// TestSplitLeavesOversizedEntries: an entry above maxSeedBytes keeps its
// place among a case's inputs, so the spread and the names of the others
// do not move, but is neither copied nor made a seed.
func TestSplitLeavesOversizedEntries(t *testing.T) {
	tg, ok := Lookup(testTargets(), "wire.read-frames")
	if !ok {
		t.Fatal("no wire.read-frames target")
	}
	var ins []proto.Message
	for i, size := range []int{8, maxSeedBytes + 1, 8} {
		in := tg.generate(gen.New(rand.New(rand.NewPCG(uint64(i), 1)), tg.decl.Format))
		gen.PlaceBytes(in, bytes.Repeat([]byte{byte(i)}, size))
		ins = append(ins, in)
	}
	out := tg.split(tg.request(ins))
	if len(out) != 3 || out[1] != nil || !proto.Equal(out[0], ins[0]) || !proto.Equal(out[2], ins[2]) {
		t.Fatalf("split gave %d inputs (the second nil: %v), want the first and last as sent and the oversized one nil", len(out), len(out) > 1 && out[1] == nil)
	}
}

func TestSeedCorpusDirectory(t *testing.T) {
	dir, ok := seeds.Dir()
	if !ok {
		t.Skipf("no go-fuzz corpus at %q (set %s); --seed-corpus import not exercised on it", dir, seeds.EnvDir)
	}
	files, err := seedFiles(dir + "/protobuf")
	if err != nil {
		t.Skipf("go-fuzz corpus has no protobuf set: %v", err)
	}
	t.Logf("imported %d files from %s/protobuf", len(files), dir)
	if len(files) == 0 {
		t.Error("no files imported from a corpus directory that exists")
	}
}

func TestSeedFilesLayout(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(root+"/a/corpus", 0o755)
	os.WriteFile(root+"/a/corpus/x", []byte{0, 0, 0, 1, 7}, 0o644)
	os.WriteFile(root+"/top", []byte("y"), 0o644)
	os.WriteFile(root+"/big", make([]byte, MaxSeedFileSize+1), 0o644)
	files, err := seedFiles(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2 {
		t.Fatalf("imported %d files, want the top file and a/corpus/x (the big one skipped)", len(files))
	}
	only, err := seedFiles(root + "/a")
	if err != nil || len(only) != 1 {
		t.Fatalf("a directory with a corpus/ folder: %d files, %v", len(only), err)
	}
}

func TestDdmin(t *testing.T) {
	tests := []struct {
		n    int
		need []int
	}{
		{8, []int{3}},
		{8, []int{0, 7}},
		{100, []int{13, 14, 90}},
		{1, []int{0}},
		{5, nil},
	}
	for _, tc := range tests {
		got := ddmin(tc.n, func(k []int) bool {
			have := map[int]bool{}
			for _, i := range k {
				have[i] = true
			}
			for _, i := range tc.need {
				if !have[i] {
					return false
				}
			}
			return true
		})
		if len(got) != len(tc.need) {
			t.Errorf("ddmin(%d, need %v) = %v", tc.n, tc.need, got)
		}
	}
}

func TestReferenceRunsClean(t *testing.T) {
	t.Parallel()
	pool := testSeeds(t)
	client := builtin.New("builtin:reference", suites.Default().Reference())
	e := NewEngine(client, testRegistry(), "builtin:reference", pool, 1, time.Minute, nil)
	e.Broker = broker.URL
	for _, tg := range testTargets() {
		n := uint64(len(pool.For(tg))) + 256
		if tg.live != nil {
			n = uint64(len(pool.For(tg))) + 8 // a connection each
		}
		err := e.RunRange(context.Background(), tg, 0, n, func(f *Finding) error {
			t.Errorf("the reference against itself: finding %s: %s\n%s", f.Signature, f.Detail, f.Diff)
			return nil
		}, nil)
		if err != nil {
			t.Fatalf("%s: %v", tg.Name, err)
		}
	}
	t.Logf("%d inputs, no finding", e.Execs)
}

// codecSuites are the suites that declare a target other than a live one.
func codecSuites() map[string]bool {
	out := map[string]bool{}
	for _, tg := range testTargets() {
		if tg.live == nil {
			out[tg.Suite] = true
		}
	}
	return out
}

// liveOnly reports whether m's bug shows on live ops alone (a socket on a
// real broker), which are not fuzz targets: the one profile whose cases
// catch it is live.
func liveOnly(m mutant.Mutant) bool {
	for _, p := range testRegistry().Profiles() {
		if p.Name == m.Profile && p.Live {
			return true
		}
	}
	return false
}

// TestMutantsFound runs a campaign against every codec mutant: each must
// yield a minimised finding, written to disk, within a bounded budget, and
// the finding must replay against a fresh instance of the mutant and not
// against the reference.
//
// The campaign is run, and resumed with a larger --execs, in stages of
// inputs per target, as an operator may: each target's seeds come before
// the generated inputs of the targets before it in a turn, and the inputs
// run are those of one campaign of the whole budget.
func TestMutantsFound(t *testing.T) {
	t.Parallel()
	pool := testSeeds(t)
	const budget = 2048 // generated inputs per target, after the seeds
	reg := testRegistry()
	for _, m := range reg.Mutants() {
		if !codecSuites()[m.Suite] || liveOnly(m) {
			continue
		}
		t.Run(m.Name, func(t *testing.T) {
			t.Parallel()
			spec := "builtin:mutant/" + m.Name
			e := NewEngine(vary(builtin.New(spec, m.Apply(reg.Reference())), 1), reg, spec, pool, 1, time.Minute, nil)
			targets, _ := Select(testTargets(), []string{m.Suite})
			most := uint64(0)
			for _, tg := range targets {
				most = max(most, uint64(len(pool.For(tg))))
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var found *Finding
			var unreplayed []string
			out := t.TempDir()
			for i, execs := range []uint64{64, 512, most + budget} {
				if found != nil {
					break
				}
				_, err := e.Run(ctx, Config{
					Targets: targets, Execs: min(execs, most+budget), Out: out, Resume: i > 0,
					OnFinding: func(f *Finding, path string) {
						if _, err := ReadFinding(path); err != nil {
							t.Errorf("finding file: %v", err)
						}
						// A finding that depends on state the SUT kept from
						// earlier requests does not replay on a fresh one.
						replay := NewEngine(builtin.New(spec, m.Apply(reg.Reference())), reg, spec, pool, 1, time.Minute, nil)
						if ok, _, err := replay.Replay(context.Background(), f); err != nil || !ok {
							unreplayed = append(unreplayed, f.Signature)
							return
						}
						found = f
						cancel()
					},
				})
				if err != nil {
					t.Fatal(err)
				}
			}
			if found == nil {
				t.Fatalf("no finding that replays after %d inputs (%d that do not: %v)", e.Execs, len(unreplayed), unreplayed)
			}
			tg, _ := Lookup(testTargets(), found.Target)
			_, inputs, err := found.ParseInputs(testTargets())
			if err != nil {
				t.Fatal(err)
			}
			size := 0
			for _, in := range inputs {
				size += proto.Size(in)
			}
			if orig := proto.Size(e.Input(tg, found.Index)); len(inputs) == 1 && size > orig {
				t.Errorf("finding %s: minimised input of %d bytes, larger than the %d-byte input found", found.Signature, size, orig)
			}
			clean := NewEngine(builtin.New("builtin:reference", reg.Reference()), reg, "builtin:reference", pool, 1, time.Minute, nil)
			if ok, others, _ := clean.Replay(context.Background(), found); ok || len(others) > 0 {
				t.Errorf("finding %s reproduces against the reference", found.Signature)
			}
		})
	}
}

// TestMemoryBounded runs 200,000 inputs against the reference, after a
// warm-up, and checks that the heap does not grow with the campaign: by
// less than 8 bytes an input. A campaign runs for hours; a leak of a few
// bytes an input would end it.
func TestMemoryBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("200,000 inputs")
	}
	pool := testSeeds(t)
	// The cheapest target, so that many inputs take seconds: what is
	// measured is the engine's own memory, which every target shares.
	tg, _ := Lookup(testTargets(), "tlv.pack-policy")
	e := NewEngine(builtin.New("builtin:reference", suites.Default().Reference()), testRegistry(), "builtin:reference", pool, 3, time.Minute, nil)
	var before, after runtime.MemStats
	const warm, total, perInput = 20_000, 220_000, 8
	if err := e.RunRange(context.Background(), tg, 0, warm, func(f *Finding) error {
		t.Fatalf("finding against the reference: %s", f.Signature)
		return nil
	}, nil); err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&before)
	if err := e.RunRange(context.Background(), tg, warm, total, func(f *Finding) error {
		t.Fatalf("finding against the reference: %s", f.Signature)
		return nil
	}, nil); err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	t.Logf("%d inputs; heap in use %d KiB before, %d KiB after", e.Execs, before.HeapInuse>>10, after.HeapInuse>>10)
	// A million inputs and a bound of 16 MiB allowed 17 bytes an input;
	// this bound is half that, in a fifth of the time.
	if grow := int64(after.HeapInuse) - int64(before.HeapInuse); grow > perInput*(total-warm) {
		t.Errorf("heap grew by %d KiB over %d inputs, %d bytes an input; want under %d", grow>>10, total-warm, grow/(total-warm), perInput)
	}
}

// TestPromote turns a finding of each promotable target into a vector and
// reads the vector back, strictly, as its suite's corpus type.
func TestPromote(t *testing.T) {
	t.Parallel()
	pool := testSeeds(t)
	e := NewEngine(builtin.New("builtin:reference", suites.Default().Reference()), testRegistry(), "builtin:reference", pool, 1, time.Minute, nil)
	for _, tc := range []struct {
		target string
		into   any
	}{
		{"wire.read-frames", new(corpus.Vector)},
		{"tlv.decode", new(corpus.TLVVector)},
		{"tlv.canonicalize", new(corpus.TLVVector)},
		{"tlv.validate-path", new(corpus.TLVVector)},
		{"doppler.check", new(corpus.DopplerVector)},
	} {
		tg, _ := Lookup(testTargets(), tc.target)
		seeds := pool.For(tg)
		in := seeds[len(seeds)/2].Input
		f, err := e.newFinding(tg, []proto.Message{in}, Observation{Signature: Signature(tg.Name, KindDiff, "x"), Kind: KindDiff}, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		b, err := Promote(f, testRegistry(), "spec §1", "", "")
		if err != nil {
			t.Errorf("%s: %v", tc.target, err)
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(tc.into); err != nil {
			t.Errorf("%s: the vector does not read back: %v\n%s", tc.target, err, b)
		}
		if !strings.Contains(string(b), `"spec": "spec §1"`) || !strings.Contains(string(b), `"id": "`+tg.Suite+`/v1/fuzz-`) {
			t.Errorf("%s: vector without its spec or id:\n%s", tc.target, b)
		}
	}
	// A graph script promotes when every step has a vector spelling; one
	// that installs an ACL does not.
	gt, _ := Lookup(testTargets(), "graph.run")
	promoted, refused := 0, 0
	for _, sd := range pool.For(gt) {
		f, err := e.newFinding(gt, []proto.Message{sd.Input}, Observation{Signature: Signature(gt.Name, KindDiff, "x"), Kind: KindDiff}, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		b, err := Promote(f, testRegistry(), "graph model §x", "", "")
		if err != nil {
			refused++
			continue
		}
		promoted++
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		var gv corpus.GraphVector
		if err := dec.Decode(&gv); err != nil {
			t.Fatalf("graph.run: the vector does not read back: %v\n%s", err, b)
		}
		script, err := gv.Script()
		if err != nil || !proto.Equal(script, sd.Input.(*conformpb.GraphRun).Scripts[0]) {
			t.Fatalf("graph.run: the vector's script %v differs from the finding's %v (%v)", script, sd.Input, err)
		}
	}
	if promoted == 0 || refused == 0 {
		t.Errorf("graph.run: %d seeds promoted, %d refused; want some of each", promoted, refused)
	}
	tg, _ := Lookup(testTargets(), "streams.track")
	f, _ := e.newFinding(tg, []proto.Message{pool.For(tg)[0].Input}, Observation{Signature: Signature(tg.Name, KindDiff, "x"), Kind: KindDiff}, 0, 0)
	if _, err := Promote(f, testRegistry(), "spec", "", ""); err == nil {
		t.Error("promoted a target that has no vector format")
	}
}

func TestWriteFindingAtomic(t *testing.T) {
	out := t.TempDir()
	f := &Finding{Signature: "wire.read-frames.diff-0123abcd", Target: "wire.read-frames", Kind: KindDiff}
	path, err := WriteFinding(out, f)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := ReadFinding(path); err != nil || got.Signature != f.Signature {
		t.Fatalf("read back %v, %v", got, err)
	}
	os.WriteFile(filepath.Join(FindingsDir(out), ".x.json.tmp123"), []byte("{"), 0o644)
	sigs, err := KnownSignatures(out)
	if err != nil || len(sigs) != 1 || sigs[0] != f.Signature {
		t.Errorf("known signatures %v, %v", sigs, err)
	}
	if _, err := os.Stat(filepath.Join(FindingsDir(out), ".x.json.tmp123")); err == nil {
		t.Error("a leftover temporary file was kept")
	}
	if _, err := WriteFinding(out, &Finding{Signature: "../../etc/passwd", Target: "x"}); err == nil {
		t.Error("wrote a finding whose signature is a path")
	}
}

// TestTargetsDocumented: docs/fuzzing.md names every target the built-in
// suites declare, so that the page a rig operator reads lists what
// conform fuzz --list prints.
func TestTargetsDocumented(t *testing.T) {
	b, err := os.ReadFile("../docs/fuzzing.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, tg := range testTargets() {
		if !strings.Contains(string(b), "`"+tg.Name+"`") {
			t.Errorf("docs/fuzzing.md does not name %s", tg.Name)
		}
	}
}
