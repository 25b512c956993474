package campaign

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"

	"github.com/conform-suite/conform/campaign/gen"
	"github.com/conform-suite/conform/cases"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/runner"
	"github.com/conform-suite/conform/suite"
	"github.com/conform-suite/conform/sut"
	"github.com/conform-suite/conform/sut/builtin"
	"github.com/conform-suite/conform/sut/impl"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// A Seed is one named starting input of a target.
type Seed struct {
	// Name says where the seed came from: case:<case ID>#<n> for an input
	// the catalogue's cases send, vector:<vector ID> for a corpus vector,
	// file:<path> for a file of a --seed-corpus directory.
	Name  string
	Input proto.Message
}

// Seeds is the seed pool of the targets it was loaded for. It is built once
// per process and read-only afterwards, so campaigns running in parallel
// may share it.
type Seeds struct {
	byTarget map[string][]Seed
	// light lists, per target, the seeds used as mutation bases: all but
	// the heavy ones.
	light map[string][]int
	// loaded holds the names of the targets the pool was loaded for.
	loaded map[string]bool
}

// For returns the seeds of a target, in a fixed order.
func (s *Seeds) For(t *Target) []Seed { return s.byTarget[t.Name] }

// Has reports whether the pool was loaded for t. For of a target it was
// not loaded for returns no seeds, which are not that target's.
func (s *Seeds) Has(t *Target) bool { return s.loaded[t.Name] }

// Bounds on --seed-corpus imports, so that a large directory cannot swamp
// memory or the campaign.
const (
	MaxSeedFileSize = 64 << 10
	MaxSeedFiles    = 1000
)

// LoadSeeds builds the seed pool of targets, fuzz targets of reg: the
// inputs the suites' own cases send for each target (the catalogue's cases
// of every suite that declares a codec target of the target's op, run once
// against the reference with the fixed seed 1), the byte strings each suite declares (its corpus vectors'
// bytes, Suite.FuzzSeeds), and the raw files of each directory in dirs, in
// go-fuzz corpus layout (DIR/corpus/* if that folder exists, else DIR/*,
// and DIR/*/corpus/* for a directory of such directories). logf, if set,
// says what was imported.
//
// A target's seeds are the same whichever other targets are loaded with
// it, so a campaign loads only its own: building the whole pool runs every
// codec case, 16 MiB ones included, and cost each fuzz process about a
// CPU-second before its first input.
func LoadSeeds(ctx context.Context, reg *suite.Registry, targets []*Target, dirs []string, logf func(string, ...any)) (*Seeds, error) {
	if logf == nil {
		logf = func(string, ...any) {}
	}
	cat, err := reg.Catalogue()
	if err != nil {
		return nil, err
	}
	s := &Seeds{byTarget: map[string][]Seed{}, light: map[string][]int{}, loaded: map[string]bool{}}
	for _, t := range targets {
		s.loaded[t.Name] = true
	}
	// Inputs are told apart by their digest: keyed by the bytes themselves
	// the map held a second copy of the pool.
	seen := map[string]map[[sha256.Size]byte]bool{}
	add := func(t *Target, name string, in proto.Message) {
		if in == nil {
			return
		}
		b, err := proto.MarshalOptions{Deterministic: true}.Marshal(in)
		if err != nil || len(b) > maxSeedBytes {
			return
		}
		if seen[t.Name] == nil {
			seen[t.Name] = map[[sha256.Size]byte]bool{}
		}
		k := sha256.Sum256(b)
		if seen[t.Name][k] {
			return
		}
		seen[t.Name][k] = true
		if !gen.Heavy(in) {
			s.light[t.Name] = append(s.light[t.Name], len(s.byTarget[t.Name]))
		}
		s.byTarget[t.Name] = append(s.byTarget[t.Name], Seed{Name: name, Input: in})
	}
	// A target is fed by the cases of every suite that declares a codec
	// target of the same op, since those are the cases that send it:
	// live.subscribe, whose op is read_frames, takes the wire suite's
	// frame-reading cases. A target's seeds so depend on reg alone, never
	// on which other targets are loaded.
	all := Targets(reg)
	feeds := map[*Target]map[string]bool{}
	for _, t := range targets {
		feeds[t] = map[string]bool{}
		for _, c := range all {
			if c.live == nil && slices.Equal(c.path, t.path) {
				feeds[t][c.Suite] = true
			}
		}
	}
	if err := harvest(ctx, cat.Cases, reg.Reference, targets, feeds, add); err != nil {
		return nil, err
	}
	// A suite's byte strings are read once, whichever of its targets asks.
	raws := map[string][]gen.Raw{}
	for _, t := range targets {
		if t.seeds == nil {
			continue
		}
		rs, ok := raws[t.Suite]
		if !ok {
			if rs, err = t.seeds(); err != nil {
				return nil, fmt.Errorf("suite %s: fuzz seeds: %w", t.Suite, err)
			}
			raws[t.Suite] = rs
		}
		for _, rw := range rs {
			add(t, rw.Name, fromRaw(t, rw.Bytes))
		}
	}
	// A target no case or vector feeds (live.publish) starts from inputs of
	// its own generator, fixed by their index.
	for _, t := range targets {
		if len(s.byTarget[t.Name]) > 0 || t.decl.Generate == nil {
			continue
		}
		for i := range uint64(8) {
			g := gen.New(rand.New(rand.NewPCG(i, hashString(t.Name))), t.decl.Format)
			add(t, fmt.Sprintf("gen:%d", i), t.decl.Generate(g))
		}
	}
	for _, dir := range dirs {
		files, err := seedFiles(dir)
		if err != nil {
			return nil, fmt.Errorf("--seed-corpus %s: %w", dir, err)
		}
		logf("seeds: imported %d files from %s", len(files), dir)
		for _, f := range files {
			for _, t := range targets {
				add(t, "file:"+f.name, fromRaw(t, f.b))
			}
		}
	}
	return s, nil
}

// fromRaw makes an input of t from raw bytes: the target's generator,
// seeded by the bytes, builds the structure, and the first bytes field it
// finds holds the bytes themselves. A target without a bytes field uses the
// bytes only as entropy.
func fromRaw(t *Target, b []byte) proto.Message {
	sum := sha256.Sum256(b)
	g := gen.New(rand.New(rand.NewPCG(binary.LittleEndian.Uint64(sum[:]), binary.LittleEndian.Uint64(sum[8:]))), t.decl.Format)
	in := t.generate(g)
	gen.PlaceBytes(in, b)
	return in
}

type seedFile struct {
	name string
	b    []byte
}

// seedFiles reads a go-fuzz corpus directory: its corpus/ folder if it has
// one, else its own files, and the corpus/ folders of its subdirectories.
func seedFiles(dir string) ([]seedFile, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return nil, errors.New("not a directory")
	}
	var folders []string
	if isDir(filepath.Join(dir, "corpus")) {
		folders = append(folders, filepath.Join(dir, "corpus"))
	} else {
		folders = append(folders, dir)
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if e.IsDir() && isDir(filepath.Join(dir, e.Name(), "corpus")) {
				folders = append(folders, filepath.Join(dir, e.Name(), "corpus"))
			}
		}
	}
	var out []seedFile
	for _, f := range folders {
		entries, err := os.ReadDir(f)
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			if len(out) >= MaxSeedFiles {
				return out, nil
			}
			if e.Type()&fs.ModeType != 0 {
				continue
			}
			p := filepath.Join(f, e.Name())
			if info, err := e.Info(); err != nil || info.Size() > MaxSeedFileSize {
				continue
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return nil, err
			}
			if len(b) <= MaxSeedFileSize {
				out = append(out, seedFile{p, b})
			}
		}
	}
	return out, nil
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// harvest runs every case that feeds one of targets (feeds names the
// suites whose cases feed each), against a reference (made by reference)
// with a client that splits every request into inputs of the targets the
// case feeds as it passes, and gives each target a spread of each case's
// inputs.
func harvest(ctx context.Context, all []cases.Case, reference func() *impl.Impl, targets []*Target, feeds map[*Target]map[string]bool, add func(*Target, string, proto.Message)) error {
	if len(all) == 0 {
		return nil
	}
	rec := &recorder{Client: builtin.New("builtin:reference", reference()), byTarget: map[*Target][]input{}}
	for _, c := range all {
		rec.targets = slices.DeleteFunc(slices.Clone(targets), func(t *Target) bool { return !feeds[t][c.Suite()] })
		if len(rec.targets) == 0 {
			continue
		}
		runner.Run(ctx, runner.Config{Spec: "builtin:reference", Client: rec, Cases: []cases.Case{c}, Seed: 1})
		for _, t := range rec.targets {
			for _, in := range spread(rec.byTarget[t], maxCaseSeeds) {
				add(t, fmt.Sprintf("case:%s#%d", c.ID, in.n), in.in)
			}
		}
		clear(rec.byTarget)
	}
	return ctx.Err()
}

// maxCaseSeeds bounds the seeds one case gives one target. A case that
// splits one buffer every way it can (tlv's every-two-segment-split, wire's
// every-split-point) sends a thousand inputs that differ only in where the
// cuts fall: as seeds they add almost nothing the mutators do not, and they
// made the pool 44 MB, built and held by every fuzz process and walked
// input by input before the first generated one.
const maxCaseSeeds = 32

// maxSeedBytes bounds one seed's encoding. The cases' largest inputs (a
// 16 MiB frame) would each cost a fuzz process that much to hold, and far
// more to mutate and send, for no structure smaller seeds lack.
const maxSeedBytes = 4 << 20

// spread returns at most n of xs, evenly spaced from the first to the last
// and in order, so that a bounded case still seeds its whole range.
func spread[E any](xs []E, n int) []E {
	if len(xs) <= n {
		return xs
	}
	out := make([]E, 0, n)
	for i := range n {
		out = append(out, xs[i*(len(xs)-1)/(n-1)])
	}
	return out
}

// split returns the inputs of req if it is this target's op, one per entry
// of its batched list. An entry whose encoding alone is above maxSeedBytes
// is returned as nil, uncopied: it keeps its place among the case's inputs
// but cannot become a seed.
func (t *Target) split(req *conformpb.Request) []proto.Message {
	op := t.opIn(req)
	if op == nil {
		return nil
	}
	l := op.Get(t.list).List()
	// The op-level fields alone, cloned once: cloning the whole batch per
	// entry would cost the batch's size squared.
	bare := t.New().ProtoReflect()
	op.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if fd != t.list {
			bare.Set(fd, v)
		}
		return true
	})
	bare = proto.Clone(bare.Interface()).ProtoReflect()
	var out []proto.Message
	for i := 0; i < l.Len(); i++ {
		if entrySize(t.list, l.Get(i)) > maxSeedBytes {
			out = append(out, nil)
			continue
		}
		in := proto.Clone(bare.Interface())
		in.ProtoReflect().Mutable(t.list).List().Append(cloneValue(t.list, l.Get(i)))
		out = append(out, in)
	}
	return out
}

// entrySize is the size of a list entry's own encoding, without its tag.
func entrySize(fd protoreflect.FieldDescriptor, v protoreflect.Value) int {
	switch fd.Kind() {
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return proto.Size(v.Message().Interface())
	case protoreflect.BytesKind:
		return len(v.Bytes())
	case protoreflect.StringKind:
		return len(v.String())
	}
	return 0
}

func cloneValue(fd protoreflect.FieldDescriptor, v protoreflect.Value) protoreflect.Value {
	switch fd.Kind() {
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return protoreflect.ValueOfMessage(proto.Clone(v.Message().Interface()).ProtoReflect())
	case protoreflect.BytesKind:
		return protoreflect.ValueOfBytes(append([]byte(nil), v.Bytes()...))
	}
	return v
}

// recorder is a client that splits every request it passes on into inputs
// of the targets, numbered in the order the case sent them. It splits the
// request before the reference sees it, so nothing the reference does to it
// can change the inputs, and keeps no copy of the whole request: a case's
// 16 MiB input was cloned whole only to be split and dropped.
type recorder struct {
	sut.Client
	// targets are those the case's inputs are recorded for: the loaded
	// targets the case feeds.
	targets  []*Target
	byTarget map[*Target][]input
}

// input is one input a case sent, and its index among the case's inputs of
// its target.
type input struct {
	n  int
	in proto.Message // nil when too large to be a seed
}

func (r *recorder) Do(ctx context.Context, req *conformpb.Request) (*conformpb.Response, error) {
	for _, t := range r.targets {
		for _, in := range t.split(req) {
			r.byTarget[t] = append(r.byTarget[t], input{len(r.byTarget[t]), in})
		}
	}
	return r.Client.Do(ctx, req)
}

// names returns the seed names, for a work unit's corpus slice.
func names(seeds []Seed, start, end uint64) []string {
	var out []string
	for i := start; i < end && i < uint64(len(seeds)); i++ {
		out = append(out, seeds[i].Name)
	}
	return out
}

func hashString(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}
