package wire

import (
	"strings"

	"github.com/conform-suite/conform/cases"
	"github.com/conform-suite/conform/corpus"
	conformpb "github.com/conform-suite/conform/proto/conform/v1"
	"github.com/conform-suite/conform/proto/conform/v1/meaning"
	"github.com/conform-suite/conform/reports/evidence"
	"google.golang.org/protobuf/proto"
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
	for _, y := range out.GetYields() {
		fs = append(fs, y.GetFrames()...)
	}
	return fs
}

// answer is the ReadOutput a conforming reader gives, its frames in one
// yields entry (empty when it yields none): the read cases take the frames in order across all entries
// (conform.proto: "Cases read the frames in order across all entries"), and
// compare an answer so flattened (flat).
func (w readWant) answer() *conformpb.ReadOutput {
	y := &conformpb.ChunkYield{}
	for _, f := range w.frames {
		y.Frames = append(y.Frames, dataOf(f))
	}
	return &conformpb.ReadOutput{Yields: []*conformpb.ChunkYield{y}, End: w.end, Claimed: w.claimed}
}

// flat returns out with every frame it yielded in one yields entry, in
// order, as answer writes the expected one: the frames' count, never the
// entries', differs.
func flat(out *conformpb.ReadOutput) *conformpb.ReadOutput {
	f := proto.CloneOf(out)
	f.Yields = []*conformpb.ChunkYield{{Frames: frames(out)}}
	return f
}

// flatInput is the input a flattened answer answers: one read, ended as in
// ended. Only the count of reads and the end of the stream reach the
// declaration of a ReadOutput (the optional trailing yields entry), so the
// bytes are not copied.
func flatInput(in *conformpb.ReadInput) *conformpb.ReadInput {
	return &conformpb.ReadInput{Chunks: []*conformpb.Blob{{}}, EndOfStream: in.GetEndOfStream()}
}

// readFields are what the read cases judge: the frames, the end, and the
// length a refused prefix claimed; what a reader holds (buffered, a SHOULD)
// is wire/1.3/holds-one-incomplete-frame's alone.
var readFields = []string{"yields.frames", "end", "claimed"}

// readDiffs returns where out, the answer to in, differs from w in what the
// read cases judge, its frames taken in order across its yields entries.
func readDiffs(t *cases.T, in *conformpb.ReadInput, out *conformpb.ReadOutput, w readWant) meaning.Differences {
	return t.Judge(flatInput(in), w.answer(), flat(out), meaning.MUST, readFields...)
}

// checkRead records a failure when out is not what w requires.
func checkRead(t *cases.T, what string, in *conformpb.ReadInput, out *conformpb.ReadOutput, w readWant) bool {
	ds := readDiffs(t, in, out, w)
	if len(ds) == 0 {
		return true
	}
	failRead(t, what, in, out, w, ds)
	return false
}

// failRead records the evidence of a read answered wrongly: the answer as
// the SUT gave it, and the differences with the frames numbered across its
// yields entries ("yields[*].frames[2]").
func failRead(t *cases.T, what string, in *conformpb.ReadInput, out *conformpb.ReadOutput, w readWant, ds meaning.Differences) {
	across := false
	for i := range ds {
		if p, ok := strings.CutPrefix(ds[i].Path, "yields[0].frames"); ok {
			ds[i].Path, across = "yields[*].frames"+p, true
		}
	}
	want := w.answer()
	if len(w.frames) == 0 {
		want.Yields = nil // as a reader that yields nothing may answer
	}
	e := evidence.Judged(what, want, out, ds)
	e.Input = describe(in)
	if across {
		e.Diff += "  (yields[*].frames: the frames in order across every yields entry, as the read cases take them)\n"
	}
	t.Fail(e)
}

// runReads feeds each input to the SUT and checks each against its want,
// reporting at most limit failures so that a broken reader does not bury
// the record in thousands of identical entries.
func runReads(t *cases.T, what string, inputs []*conformpb.ReadInput, wants []readWant) {
	const limit = 5
	outs := readFrames(t, inputs)
	failed := 0
	for i, out := range outs {
		ds := readDiffs(t, inputs[i], out, wants[i])
		if len(ds) == 0 {
			continue
		}
		failed++
		if failed <= limit {
			failRead(t, what, inputs[i], out, wants[i], ds)
		}
	}
	if failed > limit {
		t.Failf("%s: %d more of %d inputs failed the same way", what, failed-limit, len(inputs))
	}
}
