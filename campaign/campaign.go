package campaign

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"
)

// BatchSize is how many inputs a campaign step runs; Evaluate cuts them
// into requests within cases.Batched's bounds.
const BatchSize = 256

// LiveBatchSize is how many inputs a step of a live target runs: one. Each
// is a connection or a subscription of its own, so batching saves nothing,
// and an input the SUT never answers costs a whole wait: a finding is
// minimised and reported as soon as its input has run, not after the wait
// of every input batched with it.
const LiveBatchSize = 1

// batchSize is how many inputs a step of t runs.
func (t *Target) batchSize() uint64 {
	if t.live != nil {
		return LiveBatchSize
	}
	return BatchSize
}

// Report receives each new finding. It returns only once the finding is
// safely stored (on disk, or acknowledged by a queue); an error stops the
// campaign rather than lose a finding.
type Report func(*Finding) error

// RunRange runs inputs [start, end) of target t and reports each new
// finding, minimised. It is the deterministic unit of work: a local
// campaign runs a target's range batch by batch, a queue worker runs a
// unit's range, and both run the same inputs. progress, if set, is called
// after each batch with the next index to run.
func (e *Engine) RunRange(ctx context.Context, t *Target, start, end uint64, report Report, progress func(next uint64)) error {
	// The next batch's inputs are built while the SUT works on this one.
	type batch struct {
		first  uint64
		inputs []proto.Message
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	batches := make(chan batch, 1)
	go func() {
		defer close(batches)
		for i := start; i < end; {
			n := min(end-i, t.batchSize())
			b := batch{first: i, inputs: make([]proto.Message, n)}
			for j := range b.inputs {
				b.inputs[j] = e.Input(t, i+uint64(j))
			}
			select {
			case batches <- b:
			case <-ctx.Done():
				return
			}
			i += n
		}
	}()
	for b := range batches {
		if err := e.runBatch(ctx, t, b.first, b.inputs, report); err != nil {
			return err
		}
		if e.streak >= MaxFailStreak {
			return ErrSUTLost
		}
		if ctx.Err() != nil {
			// The batch was cut short: its inputs are not all run, and the
			// caller's checkpoint must not move past them.
			return ctx.Err()
		}
		if progress != nil {
			progress(b.first + uint64(len(b.inputs)))
		}
	}
	return ctx.Err()
}

// ErrUnsupported is returned by RunRange for a target the SUT answered
// Unimplemented for: nothing about it can be learnt from this SUT.
var ErrUnsupported = errUnsupported

func (e *Engine) runBatch(ctx context.Context, t *Target, first uint64, inputs []proto.Message, report Report) error {
	obs, err := e.Evaluate(ctx, t, inputs)
	if err != nil {
		return err
	}
	for _, ob := range obs {
		if e.known[ob.Signature] {
			continue
		}
		var found []proto.Message
		index := first
		if ob.Index >= 0 {
			found = []proto.Message{inputs[ob.Index]}
			index = first + uint64(ob.Index)
		} else {
			found, ob = e.isolate(ctx, t, inputs, ob)
			if len(found) == 1 {
				for j := range inputs {
					if inputs[j] == found[0] {
						index = first + uint64(j)
					}
				}
			}
		}
		// What was seen once is a finding only if it is seen again: a live
		// input's answer can turn on timing, and on a loaded machine one
		// did, giving a finding that did not replay. A confirmation the
		// campaign's end cuts short keeps the finding, below.
		if _, ok := e.reproduces(ctx, t, found, ob.Signature); !ok && ctx.Err() == nil {
			e.Unconfirmed++
			continue
		}
		found, ob2, steps := e.Minimize(ctx, t, found, ob)
		// A finding met as the campaign ends (its deadline, an interrupt)
		// is reported as far as it was isolated and minimised: every
		// candidate kept reproduced it, and a bug found is never dropped.
		f, err := e.newFinding(t, found, ob2, index, steps)
		if err != nil {
			return err
		}
		if err := report(f); err != nil {
			return fmt.Errorf("storing finding %s: %w", f.Signature, err)
		}
		e.known[ob.Signature] = true
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	return nil
}

// Config is one local campaign.
type Config struct {
	Targets []*Target
	// Execs is how many inputs each target runs; 0 with a Duration means
	// until the duration ends.
	Execs uint64
	// Duration bounds the campaign's wall time from this run's start; 0
	// means until Execs.
	Duration time.Duration
	// Out is the campaign directory: findings/ and checkpoint.json.
	Out string
	// Resume continues from Out's checkpoint.
	Resume bool
	// Progress, if set, is called after each batch.
	Progress func(Status)
	// Logf, if set, receives notes: a target the SUT does not implement,
	// each finding written.
	Logf func(string, ...any)
	// OnFinding, if set, is called with each finding once it is on disk.
	OnFinding func(f *Finding, path string)
}

// Status is a campaign's progress.
type Status struct {
	Execs    uint64
	Findings int
	Restarts int
	// Unconfirmed counts differences seen once and not again (see
	// Engine.Unconfirmed).
	Unconfirmed uint64
	Elapsed     time.Duration
	// Left is the time left, or the inputs left when the campaign is
	// bounded by Execs (then Left is 0 and InputsLeft is set).
	Left       time.Duration
	InputsLeft uint64
}

// CheckpointVersion is the version of the checkpoint format. Version 2
// holds the campaign's Identity; a checkpoint of another version is not
// resumed.
const CheckpointVersion = 2

// MaxCheckpointBytes bounds what ReadCheckpoint reads: a checkpoint conform
// writes is a few KiB.
const MaxCheckpointBytes = 1 << 20

// maxIndex bounds a target's next input index in a checkpoint, far above
// any campaign's and far from wrapping around when a span is added to it.
const maxIndex = 1 << 62

// Checkpoint is DIR/checkpoint.json: what the campaign is and where each
// target stands, so that --resume continues after an interruption of any
// kind, and only the same campaign. Findings are on disk before the
// checkpoint moves past them, so resuming loses none.
type Checkpoint struct {
	Version  int      `json:"version"`
	Identity Identity `json:"identity"`
	// Next is, per target, the index of the first input not yet run.
	Next     map[string]uint64 `json:"next"`
	Execs    uint64            `json:"execs"`
	Restarts int               `json:"restarts"`
	Elapsed  float64           `json:"elapsed_sec"`
	Updated  time.Time         `json:"updated"`
}

// CheckpointPath is the checkpoint's path under a campaign directory.
func CheckpointPath(out string) string { return filepath.Join(out, "checkpoint.json") }

// ReadCheckpoint reads a campaign's checkpoint; a missing one is nil.
func ReadCheckpoint(out string) (*Checkpoint, error) {
	b, err := readBounded(CheckpointPath(out), MaxCheckpointBytes)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	c, err := ParseCheckpoint(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", CheckpointPath(out), err)
	}
	return c, nil
}

// ParseCheckpoint reads a checkpoint from its file's bytes and checks that
// it can be resumed: its version, and indices and counts a campaign can
// have reached.
func ParseCheckpoint(b []byte) (*Checkpoint, error) {
	if len(b) > MaxCheckpointBytes {
		return nil, fmt.Errorf("not a checkpoint: %d bytes, more than %d", len(b), MaxCheckpointBytes)
	}
	c := new(Checkpoint)
	if err := json.Unmarshal(b, c); err != nil {
		return nil, fmt.Errorf("not a checkpoint: %w", err)
	}
	if c.Version != CheckpointVersion {
		return nil, fmt.Errorf("a checkpoint of format %d; this conform resumes format %d only (another conform wrote it: start a new campaign in another --out)", c.Version, CheckpointVersion)
	}
	for name, n := range c.Next {
		if n > maxIndex {
			return nil, fmt.Errorf("checkpoint: target %.64q stands at input %d, beyond any campaign", name, n)
		}
	}
	if c.Restarts < 0 || !(c.Elapsed >= 0 && c.Elapsed < 1e12) {
		return nil, fmt.Errorf("checkpoint: %d restarts over %v s is not a campaign's", c.Restarts, c.Elapsed)
	}
	if c.Next == nil {
		c.Next = map[string]uint64{}
	}
	return c, nil
}

// A MismatchError refuses to resume or join a campaign whose identity
// differs from the one asked for.
type MismatchError struct {
	// Campaign is where the campaign is: its directory, its queue.
	Campaign string
	// Differences name each field that differs, with both values.
	Differences []string
}

func (e *MismatchError) Error() string {
	return fmt.Sprintf("%s holds another campaign: %s", e.Campaign, strings.Join(e.Differences, "; "))
}

func writeCheckpoint(out string, c *Checkpoint) error {
	c.Updated = time.Now().UTC()
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	return WriteFileAtomic(CheckpointPath(out), append(b, '\n'))
}

// checkpointEvery is how often the checkpoint is rewritten.
const checkpointEvery = time.Second

// spanBatches is how many batches of a target run before the next target's
// turn: enough for the input pipeline to pay, few enough that every target
// of a short campaign gets its turns.
const spanBatches = 8

// Run runs a local campaign: each target in turn, a batch at a time, until
// every target has run Execs inputs, the duration ends or ctx is
// cancelled. Findings are written to Out/findings before they are counted
// and the checkpoint is kept in Out. It returns the final status; an
// interruption by ctx is not an error.
func (e *Engine) Run(ctx context.Context, cfg Config) (Status, error) {
	logf := cfg.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	if err := os.MkdirAll(cfg.Out, 0o755); err != nil {
		return Status{}, err
	}
	id := NewIdentity(e.Seeds, e.Seed, cfg.Targets, e.SUTOf())
	cp := &Checkpoint{Version: CheckpointVersion, Identity: id, Next: map[string]uint64{}}
	if cfg.Resume {
		old, err := ReadCheckpoint(cfg.Out)
		if err != nil {
			return Status{}, fmt.Errorf("--resume: %w", err)
		}
		if old != nil {
			if d := id.Differences(old.Identity); len(d) > 0 {
				return Status{}, &MismatchError{Campaign: cfg.Out, Differences: d}
			}
			cp = old
			e.Restarts = cp.Restarts
		}
	} else if old, _ := ReadCheckpoint(cfg.Out); old != nil {
		return Status{}, fmt.Errorf("%s already holds a campaign: pass --resume to continue it, or choose another --out", cfg.Out)
	}
	known, err := KnownSignatures(cfg.Out)
	if err != nil {
		return Status{}, err
	}
	for _, s := range known {
		e.known[s] = true
	}
	findings := len(known)
	start := time.Now()
	prior := time.Duration(cp.Elapsed * float64(time.Second))
	execs0 := e.Execs
	var deadline time.Time
	if cfg.Duration > 0 {
		deadline = start.Add(cfg.Duration)
	}
	report := func(f *Finding) error {
		path, err := WriteFinding(cfg.Out, f)
		if err != nil {
			return err
		}
		findings++
		logf("finding %s (%s) written to %s", f.Signature, f.Kind, path)
		if cfg.OnFinding != nil {
			cfg.OnFinding(f, path)
		}
		return nil
	}
	status := func() Status {
		s := Status{Execs: cp.Execs + e.Execs - execs0, Findings: findings, Restarts: e.Restarts, Unconfirmed: e.Unconfirmed, Elapsed: prior + time.Since(start)}
		if !deadline.IsZero() {
			s.Left = max(0, time.Until(deadline))
		}
		if cfg.Execs > 0 {
			for _, t := range cfg.Targets {
				if e.unsupported[t.Name] == "" && cp.Next[t.Name] < cfg.Execs {
					s.InputsLeft += cfg.Execs - cp.Next[t.Name]
				}
			}
		}
		return s
	}
	save := func() error {
		s := status()
		cp.Restarts, cp.Elapsed = e.Restarts, s.Elapsed.Seconds()
		c := *cp
		c.Execs = s.Execs
		return writeCheckpoint(cfg.Out, &c)
	}
	if err := save(); err != nil {
		return Status{}, err
	}
	lastSave := time.Now()
	// Each target runs a span of batches in turn: within a span RunRange
	// builds the next batch while the SUT works on this one. The duration
	// is a context deadline: at it the request in flight is cancelled (the
	// carrier abandons it, and kills a SUT process that does not answer),
	// minimisation stops, and the campaign ends without starting another
	// request.
	runCtx := ctx
	if !deadline.IsZero() {
		var cancel context.CancelFunc
		runCtx, cancel = context.WithDeadline(ctx, deadline)
		defer cancel()
	}
	stopCtx, stop := context.WithCancel(runCtx)
	defer stop()
	var saveErr error
	for {
		active := 0
		for _, t := range cfg.Targets {
			if stopCtx.Err() != nil {
				return status(), save()
			}
			next := cp.Next[t.Name]
			if e.unsupported[t.Name] != "" || (cfg.Execs > 0 && next >= cfg.Execs) {
				continue
			}
			active++
			end := next + spanBatches*t.batchSize()
			if end < next {
				end = math.MaxUint64
			}
			if cfg.Execs > 0 {
				end = min(end, cfg.Execs)
			}
			err := e.RunRange(stopCtx, t, next, end, report, func(n uint64) {
				cp.Next[t.Name] = n
				if cfg.Progress != nil {
					cfg.Progress(status())
				}
				if time.Since(lastSave) >= checkpointEvery {
					if saveErr = save(); saveErr != nil {
						stop()
					}
					lastSave = time.Now()
				}
			})
			switch {
			case saveErr != nil:
				return status(), saveErr
			case errors.Is(err, errUnsupported):
				logf("target %s skipped: %s", t.Name, e.unsupported[t.Name])
				continue
			case err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded):
				save()
				return status(), err
			case stopCtx.Err() != nil:
				return status(), save()
			}
		}
		if active == 0 {
			return status(), save()
		}
	}
}
