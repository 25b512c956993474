package campaign

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"sort"
	"strings"

	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/sut/impl"
	"google.golang.org/protobuf/proto"
)

// A campaign is the same campaign only when what decides its inputs and
// judges its answers is the same: conform's version and formats, the seed
// pool, the campaign seed, the targets, and the SUT. An Identity says all
// of that; it is stored with the campaign (the checkpoint, the queue's
// identity record), and a process whose identity differs is refused rather
// than answered from what the campaign stored.

// IdentityFormat is the version of the campaign layout an Identity
// describes: the checkpoint's fields, the unit IDs and the queue's streams.
// A campaign of another format is never resumed.
const IdentityFormat = 2

// An Identity is what a campaign is.
type Identity struct {
	// Format is IdentityFormat of the conform that made the campaign.
	Format int `json:"format"`
	// Conform is that conform's version: its generators and mutators
	// decide input i of a target.
	Conform string `json:"conform"`
	// Corpus digests the seed pool (the catalogue's inputs, the corpus
	// vectors and every --seed-corpus file): with Seed it fixes the inputs.
	Corpus string `json:"corpus"`
	Seed   int64  `json:"seed"`
	// Targets are the targets' names, sorted.
	Targets []string `json:"targets"`
	// Execs and UnitSize are the input range of a queue campaign: Execs
	// inputs per target, cut into units of UnitSize. A local campaign
	// leaves them 0: its --execs is a total that a resumed run may raise.
	Execs    uint64 `json:"execs,omitempty"`
	UnitSize uint64 `json:"unit_size,omitempty"`
	// SUT is the SUT's identity; nil in a queue campaign whose coordinator
	// was given no --sut until its first worker names it.
	SUT *SUTIdentity `json:"sut,omitempty"`
}

// A SUTIdentity is what a SUT says of itself in its Hello, and how it was
// reached.
type SUTIdentity struct {
	// Spec is the --sut value. It is recorded, not compared when the Hello
	// names the implementation: a rig's device may move to another
	// address, and each rig of a queue campaign reaches its own.
	Spec           string   `json:"spec,omitempty"`
	Implementation string   `json:"implementation"`
	Version        string   `json:"version"`
	Language       string   `json:"language,omitempty"`
	Profiles       []string `json:"profiles,omitempty"`
}

// helloIdentity is the identity of a SUT reached through spec that said
// hello in its Hello.
func helloIdentity(spec string, hello *conformpb.Hello) *SUTIdentity {
	return &SUTIdentity{Spec: spec, Implementation: hello.GetImplementation(), Version: hello.GetVersion(),
		Language: hello.GetLanguage(), Profiles: slices.Clone(hello.GetProfiles())}
}

// SUTOf returns the identity of the SUT the engine reaches, from the Hello
// of its current session.
func (e *Engine) SUTOf() *SUTIdentity { return helloIdentity(e.Spec, e.Client.Hello()) }

// String names the SUT as a person does: "conform reference devel+3f2a (go;
// wire, streams) at builtin:reference".
func (s *SUTIdentity) String() string {
	if s == nil {
		return "no SUT named yet"
	}
	name := strings.TrimSpace(s.Implementation + " " + s.Version)
	if name == "" {
		name = "a SUT that names no implementation"
	}
	var what []string
	if s.Language != "" {
		what = append(what, s.Language)
	}
	if len(s.Profiles) > 0 {
		what = append(what, strings.Join(s.Profiles, ", "))
	}
	if len(what) > 0 {
		name += " (" + strings.Join(what, "; ") + ")"
	}
	if s.Spec != "" {
		name += " at " + s.Spec
	}
	return name
}

// anonymous reports whether the Hello names neither implementation nor
// version: then only the spec tells two SUTs apart.
func (s *SUTIdentity) anonymous() bool { return s.Implementation == "" && s.Version == "" }

// Differences returns what differs between a SUT's identity and other's,
// one phrase per field, naming both values ("version: 1.2 here, 1.1 in the
// campaign"). mine and theirs label the two sides.
func (s *SUTIdentity) Differences(other *SUTIdentity, mine, theirs string) []string {
	var out []string
	diff := func(field, a, b string) {
		if a != b {
			out = append(out, fmt.Sprintf("SUT %s: %q %s, %q %s", field, a, mine, b, theirs))
		}
	}
	diff("implementation", s.Implementation, other.Implementation)
	diff("version", s.Version, other.Version)
	diff("language", s.Language, other.Language)
	a, b := slices.Clone(s.Profiles), slices.Clone(other.Profiles)
	sort.Strings(a)
	sort.Strings(b)
	diff("profiles", strings.Join(a, ","), strings.Join(b, ","))
	if s.anonymous() && other.anonymous() {
		diff("spec (its Hello names no implementation)", s.Spec, other.Spec)
	}
	return out
}

// NewIdentity returns the identity of a campaign of targets under seed,
// run against sut (nil when not known), with the engine's seed pool (nil
// for a process that has loaded none yet).
func NewIdentity(pool *Seeds, seed int64, targets []*Target, sut *SUTIdentity) Identity {
	id := Identity{Format: IdentityFormat, Conform: impl.Version(), Corpus: pool.Digest(), Seed: seed, SUT: sut}
	for _, t := range targets {
		id.Targets = append(id.Targets, t.Name)
	}
	sort.Strings(id.Targets)
	return id
}

// Differences returns what differs between the identity of a campaign a
// process was asked to run (id) and the identity stored with the campaign
// (stored), one phrase per field naming both values; none when they are
// the same campaign. A SUT missing on either side is not a difference: it
// is pinned by whoever names it first.
func (id Identity) Differences(stored Identity) []string {
	var out []string
	here, there := "here", "in the campaign"
	if id.Format != stored.Format {
		out = append(out, fmt.Sprintf("format: %d %s, %d %s (another conform made it)", id.Format, here, stored.Format, there))
	}
	if id.Conform != stored.Conform {
		out = append(out, fmt.Sprintf("conform version: %s %s, %s %s (its inputs differ)", id.Conform, here, stored.Conform, there))
	}
	if id.Corpus != stored.Corpus {
		out = append(out, fmt.Sprintf("seed pool: %s %s, %s %s (other --seed-corpus directories, or another conform)",
			short(id.Corpus), here, short(stored.Corpus), there))
	}
	if id.Seed != stored.Seed {
		out = append(out, fmt.Sprintf("seed: %d %s, %d %s", id.Seed, here, stored.Seed, there))
	}
	if !slices.Equal(id.Targets, stored.Targets) {
		out = append(out, fmt.Sprintf("targets: %s %s, %s %s", listOrNone(id.Targets), here, listOrNone(stored.Targets), there))
	}
	if id.Execs != stored.Execs {
		out = append(out, fmt.Sprintf("--execs: %d %s, %d %s", id.Execs, here, stored.Execs, there))
	}
	if id.UnitSize != stored.UnitSize {
		out = append(out, fmt.Sprintf("--unit-size: %d %s, %d %s", id.UnitSize, here, stored.UnitSize, there))
	}
	if id.SUT != nil && stored.SUT != nil {
		out = append(out, id.SUT.Differences(stored.SUT, here, there)...)
	}
	return out
}

func short(digest string) string {
	if len(digest) > 12 {
		return digest[:12]
	}
	return digest
}

func listOrNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	if len(s) > 6 {
		return fmt.Sprintf("%s and %d more", strings.Join(s[:6], ","), len(s)-6)
	}
	return strings.Join(s, ",")
}

// Digest is a digest of the seed pool, target by target: two pools with
// the same digest give every target the same inputs under one conform
// version. A seed of the catalogue or the corpus is named by where it came
// from (its input follows from that and conform's version, which the
// identity holds too); a --seed-corpus file by its content, since its name
// holds its path, which differs between rigs that hold the same files.
func (s *Seeds) Digest() string {
	if s == nil {
		return ""
	}
	h := sha256.New()
	var targets []string
	for name := range s.byTarget {
		targets = append(targets, name)
	}
	sort.Strings(targets)
	o := proto.MarshalOptions{Deterministic: true}
	var buf []byte
	for _, name := range targets {
		fmt.Fprintf(h, "%s %d\n", name, len(s.byTarget[name]))
		for _, sd := range s.byTarget[name] {
			if !strings.HasPrefix(sd.Name, "file:") {
				fmt.Fprintf(h, "%d:%s", len(sd.Name), sd.Name)
				continue
			}
			buf, _ = o.MarshalAppend(buf[:0], sd.Input)
			fmt.Fprintf(h, "%d:", len(buf))
			h.Write(buf)
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}
