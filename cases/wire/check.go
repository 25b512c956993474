package wire

import (
	"fmt"
	"strings"

	"github.com/conform-suite/conform/cases"
	"github.com/conform-suite/conform/corpus"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/reports"
	"github.com/google/go-cmp/cmp"
)

// readWant is what a conforming reader makes of an input.
type readWant struct {
	frames  [][]byte
	end     conformpb.ReadEnd
	claimed uint64
}

// wantRead returns what a reader must make of v's input, fed with or without
// the end of the stream after it.
func wantRead(v *corpus.Vector, eos bool) readWant {
	w := readWant{claimed: v.Claimed}
	for _, f := range v.Frames {
		w.frames = append(w.frames, f)
	}
	switch {
	case v.End == "too_large":
		w.end = conformpb.ReadEnd_READ_END_TOO_LARGE
	case eos && v.AtEOS == "truncated":
		w.end = conformpb.ReadEnd_READ_END_TRUNCATED
	case eos:
		w.end = conformpb.ReadEnd_READ_END_CLOSED
	case v.End == "waiting":
		w.end = conformpb.ReadEnd_READ_END_WAITING
	default:
		w.end = conformpb.ReadEnd_READ_END_IDLE
	}
	return w
}

// frames returns every frame an output yielded, across its chunks.
func frames(out *conformpb.ReadOutput) []*conformpb.Data {
	var fs []*conformpb.Data
	for _, y := range out.Yields {
		fs = append(fs, y.Frames...)
	}
	return fs
}

// readView is a comparable rendering of a reader's answer, for diffs.
type readView struct {
	Frames  []string
	End     string
	Claimed uint64
}

func viewOut(out *conformpb.ReadOutput) readView {
	v := readView{End: endName(out.End)}
	for _, f := range frames(out) {
		v.Frames = append(v.Frames, showData(f))
	}
	if out.End == conformpb.ReadEnd_READ_END_TOO_LARGE {
		v.Claimed = out.Claimed
	}
	return v
}

func viewWant(w readWant) readView {
	v := readView{End: endName(w.end)}
	for _, f := range w.frames {
		v.Frames = append(v.Frames, showBytes(f))
	}
	if w.end == conformpb.ReadEnd_READ_END_TOO_LARGE {
		v.Claimed = w.claimed
	}
	return v
}

func endName(e conformpb.ReadEnd) string {
	return strings.ToLower(strings.TrimPrefix(e.String(), "READ_END_"))
}

// matchRead reports whether out is what w requires.
func matchRead(out *conformpb.ReadOutput, w readWant) bool {
	fs := frames(out)
	if len(fs) != len(w.frames) || out.End != w.end {
		return false
	}
	for i := range fs {
		if !dataMatches(fs[i], w.frames[i]) {
			return false
		}
	}
	return w.end != conformpb.ReadEnd_READ_END_TOO_LARGE || out.Claimed == w.claimed
}

// checkRead records a failure when out is not what w requires.
func checkRead(t *cases.T, what string, in *conformpb.ReadInput, out *conformpb.ReadOutput, w readWant) bool {
	if matchRead(out, w) {
		return true
	}
	want, got := viewWant(w), viewOut(out)
	t.Fail(reports.Evidence{
		Message:  what,
		Input:    describe(in),
		Expected: fmt.Sprintf("%+v", want),
		Got:      fmt.Sprintf("%+v", got),
		Diff:     cmp.Diff(want, got),
	})
	return false
}

// runReads feeds each input to the SUT and checks each against its want,
// reporting at most limit failures so that a broken reader does not bury
// the record in thousands of identical entries.
func runReads(t *cases.T, what string, inputs []*conformpb.ReadInput, wants []readWant) {
	const limit = 5
	outs := readFrames(t, inputs)
	failed := 0
	for i, out := range outs {
		if matchRead(out, wants[i]) {
			continue
		}
		failed++
		if failed <= limit {
			checkRead(t, what, inputs[i], out, wants[i])
		}
	}
	if failed > limit {
		t.Failf("%s: %d more of %d inputs failed the same way", what, failed-limit, len(inputs))
	}
}
