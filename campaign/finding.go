package campaign

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/conform-suite/conform/sut/impl"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// FindingVersion is the version of the finding file format.
const FindingVersion = 1

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
	// SUTAnswer and ReferenceAnswer are the two answers to the (first)
	// input, in canonical JSON; Diff is go-cmp's "-reference +sut".
	SUTAnswer       json.RawMessage `json:"sut_answer,omitempty"`
	ReferenceAnswer json.RawMessage `json:"reference_answer,omitempty"`
	Diff            string          `json:"diff,omitempty"`
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
	Conform string    `json:"conform"`
	SUT     string    `json:"sut"`
	Carrier string    `json:"carrier"`
	Found   time.Time `json:"found"`
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
	if ob.SUT != nil {
		b, _ := protojson.Marshal(ob.SUT)
		f.SUTAnswer = compact(b)
	}
	if ob.Ref != nil {
		b, _ := protojson.Marshal(ob.Ref)
		f.ReferenceAnswer = compact(b)
	}
	f.Diff = textDiff(ob.Ref, ob.SUT)
	switch {
	case ob.Err != nil:
		f.SUTError = &ErrorInfo{Kind: string(ob.Err.Kind), Message: ob.Err.Error(), Exit: ob.Err.Exit, Stderr: ob.Err.Stderr}
	case ob.SUTText != "":
		f.SUTError = &ErrorInfo{Kind: ob.Kind, Message: ob.SUTText}
	}
	return f, nil
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

// ParseInputs returns a finding's target and inputs.
func (f *Finding) ParseInputs() (*Target, []proto.Message, error) {
	t, ok := Lookup(f.Target)
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
		out = append(out, in)
	}
	return t, out, nil
}

// ReadFinding reads a finding file.
func ReadFinding(path string) (*Finding, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	f := new(Finding)
	if err := json.Unmarshal(b, f); err != nil {
		return nil, fmt.Errorf("%s: not a finding: %w", path, err)
	}
	if f.Signature == "" || f.Target == "" {
		return nil, fmt.Errorf("%s: not a finding: no signature or target", path)
	}
	return f, nil
}

// ReplayRuns is how many times Replay sends a finding's inputs. A finding
// may depend on state the SUT kept from earlier requests of the campaign
// (a counter shared across sockets, say), which a freshly started SUT has
// not built up on the first run but has on the second.
const ReplayRuns = 2

// Replay reruns a finding's inputs against the engine's SUT, up to
// ReplayRuns times until it reproduces, and returns what it showed: whether
// the finding's own signature came back, and any other problem the inputs
// show.
func (e *Engine) Replay(ctx context.Context, f *Finding) (reproduced bool, others []Observation, err error) {
	t, inputs, err := f.ParseInputs()
	if err != nil {
		return false, nil, err
	}
	seen := map[string]bool{}
	for run := 0; run < ReplayRuns && !reproduced; run++ {
		obs, err := e.Evaluate(ctx, t, inputs)
		if errors.Is(err, errUnsupported) {
			return false, nil, fmt.Errorf("the SUT does not implement %s: %s", t.Name, e.unsupported[t.Name])
		}
		if err != nil {
			return false, nil, err
		}
		for _, o := range obs {
			switch {
			case o.Signature == f.Signature:
				reproduced = true
			case !seen[o.Signature]:
				seen[o.Signature] = true
				others = append(others, o)
			}
		}
	}
	return reproduced, others, nil
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
