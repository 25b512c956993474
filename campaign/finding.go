package campaign

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/conform-suite/conform/reports"
	"github.com/conform-suite/conform/sut/impl"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// FindingVersion is the version of the finding file format. Version 2
// names fields by their conform.v1 JSON names in detail and diff (version 1
// used the proto names and go-cmp's notation) and adds sut_identity.
// ReadFinding reads both; replay needs only the inputs.
const FindingVersion = 2

// Bounds on what ReadFinding accepts, so that a finding file from anywhere
// cannot make conform allocate without limit: a finding conform writes is
// far below them (its inputs come from one request of at most
// cases.MaxBatchBytes, or one seed; answers above maxAnswerBytes are not
// kept).
const (
	MaxFindingBytes  = 64 << 20
	MaxFindingInputs = 4096
	maxAnswerBytes   = 4 << 20
)

// A Finding is one problem a campaign found, as written to
// DIR/findings/<signature>.json: everything needed to understand it and to
// replay it against a SUT.
type Finding struct {
	Version   int    `json:"version"`
	Signature string `json:"signature"`
	Target    string `json:"target"`
	// Kind is diff, error, crash, timeout or protocol.
	Kind string `json:"kind"`
	// Detail is what the signature is made of besides target and kind: the
	// differing field paths of a diff, a crash's exit status.
	Detail string `json:"detail,omitempty"`
	// Op is the op's message type; each input is one in canonical JSON,
	// holding one entry of the op's batched list. The inputs go to the SUT
	// in one request (several only when the problem needs several).
	Op     string            `json:"op"`
	Inputs []json.RawMessage `json:"inputs"`
	// SUTAnswer and ReferenceAnswer are the two answers to the input, in
	// conform.v1's JSON (an answer of more than 4 MiB is replaced by a
	// string saying so).
	SUTAnswer       json.RawMessage `json:"sut_answer,omitempty"`
	ReferenceAnswer json.RawMessage `json:"reference_answer,omitempty"`
	// Diff is the evidence a person reads, in conform.v1's terms: the input
	// in its JSON, then each field where the answers differ, by its JSON
	// path, with both values:
	//
	//	input: {"inputs":[{"chunks":[{"data":"AAAAAA=="}]}]}
	//	end: reference "READ_END_CLOSED", SUT "READ_END_TRUNCATED"
	Diff string `json:"diff,omitempty"`
	// SUTError is what the carrier or the SUT said, for crash, timeout,
	// protocol and error findings.
	SUTError *ErrorInfo `json:"sut_error,omitempty"`
	// Seed and Index say where the campaign met it: input Index of the
	// target under the campaign seed Seed.
	Seed  int64  `json:"seed"`
	Index uint64 `json:"index"`
	// MinimizeSteps is how many SUT executions minimisation took.
	MinimizeSteps int `json:"minimize_steps"`
	// Conform is conform's version; SUT and Carrier how the SUT was reached.
	Conform string `json:"conform"`
	SUT     string `json:"sut"`
	Carrier string `json:"carrier"`
	// SUTIdentity is what the SUT said of itself in its Hello.
	SUTIdentity *SUTIdentity `json:"sut_identity,omitempty"`
	Found       time.Time    `json:"found"`
}

// ErrorInfo is a SUT's failure to answer.
type ErrorInfo struct {
	Kind    string `json:"kind"`
	Message string `json:"message,omitempty"`
	Exit    string `json:"exit,omitempty"`
	Stderr  string `json:"stderr,omitempty"`
}

// newFinding describes an observation on inputs.
func (e *Engine) newFinding(t *Target, inputs []proto.Message, ob Observation, index uint64, steps int) (*Finding, error) {
	f := &Finding{
		Version: FindingVersion, Signature: ob.Signature, Target: t.Name, Kind: ob.Kind, Detail: ob.Detail,
		Op: t.opName(), Seed: e.Seed, Index: index, MinimizeSteps: steps,
		Conform: impl.Version(), SUT: e.Spec, Carrier: e.Client.Carrier(), Found: time.Now().UTC(),
	}
	for _, in := range inputs {
		b, err := protojson.Marshal(in)
		if err != nil {
			return nil, err
		}
		f.Inputs = append(f.Inputs, compact(b))
	}
	f.SUTIdentity = helloIdentity(e.Spec, e.Client.Hello())
	f.SUTAnswer = answerJSON(ob.SUT)
	f.ReferenceAnswer = answerJSON(ob.Ref)
	f.Diff = e.oracle(t).evidence(inputs, ob.entry, ob.SUT, ob.Ref)
	switch {
	case ob.Err != nil:
		f.SUTError = &ErrorInfo{Kind: string(ob.Err.Kind), Message: ob.Err.Error(), Exit: ob.Err.Exit, Stderr: ob.Err.Stderr}
	case ob.SUTText != "":
		f.SUTError = &ErrorInfo{Kind: ob.Kind, Message: ob.SUTText}
	}
	return f, nil
}

// answerJSON renders an answer for a finding file: conform.v1's JSON, or a
// JSON string saying how large it was when it is too large to keep.
func answerJSON(m proto.Message) json.RawMessage {
	if m == nil {
		return nil
	}
	b, err := protojson.Marshal(m)
	if err != nil {
		q, _ := json.Marshal("(not renderable: " + err.Error() + ")")
		return q
	}
	if len(b) > maxAnswerBytes {
		q, _ := json.Marshal(fmt.Sprintf("(an answer of %d bytes of JSON, not kept)", len(b)))
		return q
	}
	return compact(b)
}

// compact normalises protojson's output (whose spacing varies by design)
// to compact JSON.
func compact(b []byte) json.RawMessage {
	var v any
	if json.Unmarshal(b, &v) != nil {
		return b
	}
	out, _ := json.Marshal(v)
	return out
}

// ParseInputs returns a finding's target, among targets, and its inputs,
// one entry of the op's batched list each, as a campaign's inputs are: an
// input of the file that holds several entries becomes several inputs,
// which travel in the same request as the file's input would.
func (f *Finding) ParseInputs(targets []*Target) (*Target, []proto.Message, error) {
	t, ok := Lookup(targets, f.Target)
	if !ok {
		return nil, nil, fmt.Errorf("finding %s: no fuzz target %q in this conform", f.Signature, f.Target)
	}
	if f.Op != "" && f.Op != t.opName() {
		return nil, nil, fmt.Errorf("finding %s: op %s, but target %s takes %s", f.Signature, f.Op, t.Name, t.opName())
	}
	if len(f.Inputs) == 0 {
		return nil, nil, fmt.Errorf("finding %s: no inputs", f.Signature)
	}
	var out []proto.Message
	for i, raw := range f.Inputs {
		in := t.New()
		if err := protojson.Unmarshal(raw, in); err != nil {
			return nil, nil, fmt.Errorf("finding %s: input %d: %w", f.Signature, i, err)
		}
		l := t.entries(in)
		switch n := l.Len(); {
		case n == 0:
			return nil, nil, fmt.Errorf("finding %s: input %d holds no entry in %s", f.Signature, i, t.list.JSONName())
		case n == 1:
			out = append(out, in)
		default:
			for j := 0; j < n; j++ {
				one := proto.Clone(in)
				ol := t.entries(one)
				ol.Set(0, ol.Get(j))
				ol.Truncate(1)
				out = append(out, one)
			}
		}
		if len(out) > MaxFindingInputs {
			return nil, nil, fmt.Errorf("finding %s: more than %d inputs", f.Signature, MaxFindingInputs)
		}
	}
	return t, out, nil
}

// ReadFinding reads a finding file of at most MaxFindingBytes.
func ReadFinding(path string) (*Finding, error) {
	b, err := readBounded(path, MaxFindingBytes)
	if err != nil {
		return nil, err
	}
	f, err := ParseFinding(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return f, nil
}

// ParseFinding reads a finding from its file's bytes. It checks what a
// finding must hold to be replayed, and refuses a version this conform does
// not know.
func ParseFinding(b []byte) (*Finding, error) {
	if len(b) > MaxFindingBytes {
		return nil, fmt.Errorf("not a finding: %d bytes, more than the %d a finding may hold", len(b), MaxFindingBytes)
	}
	f := new(Finding)
	if err := json.Unmarshal(b, f); err != nil {
		return nil, fmt.Errorf("not a finding: %w", err)
	}
	switch {
	case f.Signature == "" || f.Target == "":
		return nil, errors.New("not a finding: no signature or target")
	case f.Version > FindingVersion:
		return nil, fmt.Errorf("finding %s is of format %d; this conform reads up to %d (a newer conform wrote it)", f.Signature, f.Version, FindingVersion)
	case len(f.Inputs) > MaxFindingInputs:
		return nil, fmt.Errorf("finding %s: %d inputs, more than %d", f.Signature, len(f.Inputs), MaxFindingInputs)
	}
	return f, nil
}

// readBounded reads at most limit bytes of a file, and fails on a larger
// one without reading it whole.
func readBounded(path string, limit int64) ([]byte, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	b, err := io.ReadAll(io.LimitReader(fh, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s: larger than the %d bytes conform reads from such a file", path, limit)
	}
	return b, nil
}

// ReplayRuns is how many runs of a finding's inputs Reproduce judges. A
// finding may depend on state the SUT kept from earlier requests of the
// campaign (a counter shared across sockets, say), which a freshly started
// SUT has not built up on the first run but has on the second.
const ReplayRuns = 2

// maxReplayAttempts bounds the runs Reproduce makes in all. A run that left
// an input out judged nothing of it (on a loaded machine, the reference's
// report of a live input cut by its wait), so it does not count among
// ReplayRuns and is made again, up to this many runs.
const maxReplayAttempts = 3 * ReplayRuns

// A Replayed is what replaying a finding showed.
type Replayed struct {
	// Reproduced is set when the finding's signature came back; Observation
	// is then what showed it.
	Reproduced  bool
	Observation Observation
	// Others are the other problems the inputs showed, once per signature.
	Others []Observation
	// Judged counts the runs that judged every input; LeftOut the runs that
	// left one out, proving nothing of it either way. A finding that did
	// not reproduce in no judged run was not shown fixed: it could not be
	// judged.
	Judged, LeftOut int
	// Target and Inputs are the finding's, as sent.
	Target *Target
	Inputs []proto.Message
	// oracle is the judge of the replay's answers.
	oracle oracle
}

// Reproduce reruns a finding's inputs against the engine's SUT until the
// finding reproduces or ReplayRuns runs have judged every input (at most
// maxReplayAttempts runs), and returns what they showed.
func (e *Engine) Reproduce(ctx context.Context, f *Finding) (*Replayed, error) {
	t, inputs, err := f.ParseInputs(e.targets)
	if err != nil {
		return nil, err
	}
	r := &Replayed{Target: t, Inputs: inputs, oracle: e.oracle(t)}
	err = r.replay(f.Signature, func() ([]Observation, bool, error) {
		skipped := e.Skipped
		obs, err := e.Evaluate(ctx, t, inputs)
		if errors.Is(err, errUnsupported) {
			return nil, false, fmt.Errorf("the SUT does not implement %s: %s", t.Name, e.unsupported[t.Name])
		}
		return obs, e.Skipped > skipped, err
	})
	if err != nil {
		return nil, err
	}
	return r, nil
}

// replay makes the runs of Reproduce: run sends the inputs once and
// returns what differed and whether it left an input out.
func (r *Replayed) replay(signature string, run func() (obs []Observation, leftOut bool, err error)) error {
	seen := map[string]bool{}
	for attempt := 0; attempt < maxReplayAttempts && r.Judged < ReplayRuns && !r.Reproduced; attempt++ {
		obs, leftOut, err := run()
		if err != nil {
			return err
		}
		for _, o := range obs {
			switch {
			case o.Signature == signature && !r.Reproduced:
				r.Reproduced, r.Observation = true, o
			case o.Signature != signature && !seen[o.Signature]:
				seen[o.Signature] = true
				r.Others = append(r.Others, o)
			}
		}
		if leftOut {
			r.LeftOut++
		} else {
			r.Judged++
		}
	}
	return nil
}

// Replay is Reproduce reduced to whether the finding came back and the
// other problems the inputs showed.
func (e *Engine) Replay(ctx context.Context, f *Finding) (reproduced bool, others []Observation, err error) {
	r, err := e.Reproduce(ctx, f)
	if err != nil {
		return false, nil, err
	}
	return r.Reproduced, r.Others, nil
}

// Evidence renders an observation of the replay in conform.v1's terms: the
// input it concerns (all of them when the request failed as a whole) and
// each differing field with both values, or what the SUT said.
func (r *Replayed) Evidence(o Observation) string {
	inputs := r.Inputs
	if o.Index >= 0 && o.Index < len(inputs) {
		inputs = inputs[o.Index : o.Index+1]
	}
	s := r.oracle.evidence(inputs, o.entry, o.SUT, o.Ref)
	switch {
	case o.Err != nil:
		s += "SUT: " + o.Err.Error() + "\n"
	case o.SUTText != "":
		s += "SUT: " + reports.Clip(o.SUTText, maxValueBytes) + "\n"
	}
	return s
}

var sigPattern = regexp.MustCompile(`^[a-z]+\.[a-z0-9-]+\.[a-z]+-[0-9a-f]{8}$`)

// FindingsDir is where a campaign's findings are, under its --out.
func FindingsDir(out string) string { return filepath.Join(out, "findings") }

// WriteFinding writes f to DIR/findings/<signature>.json atomically: to a
// temporary file in the same folder, synced, renamed into place, and the
// folder synced, so that a finding on disk is whole and survives a crash of
// conform or of the machine. Only then may the caller count it.
func WriteFinding(out string, f *Finding) (string, error) {
	if !sigPattern.MatchString(f.Signature) {
		return "", fmt.Errorf("finding signature %q is not a file name conform writes", f.Signature)
	}
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return "", err
	}
	dir := FindingsDir(out)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(dir, f.Signature+".json")
	return path, WriteFileAtomic(path, append(b, '\n'))
}

// WriteFileAtomic writes b to path through a synced temporary file in the
// same folder and a rename, then syncs the folder.
func WriteFileAtomic(path string, b []byte) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	_, werr := tmp.Write(b)
	if werr == nil {
		werr = tmp.Sync()
	}
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), path)
	}
	if werr != nil {
		os.Remove(tmp.Name())
		return werr
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// KnownSignatures lists the signatures of the findings already in
// DIR/findings, so that a resumed campaign does not report them again.
// Leftover temporary files of an interrupted write are removed.
func KnownSignatures(out string) ([]string, error) {
	entries, err := os.ReadDir(FindingsDir(out))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var sigs []string
	for _, e := range entries {
		name := e.Name()
		switch {
		case strings.HasPrefix(name, ".") && strings.Contains(name, ".tmp"):
			os.Remove(filepath.Join(FindingsDir(out), name))
		case strings.HasSuffix(name, ".json"):
			sigs = append(sigs, strings.TrimSuffix(name, ".json"))
		}
	}
	sort.Strings(sigs)
	return sigs, nil
}
