package cases

import (
	"strings"

	"github.com/conform-suite/conform/proto/conform/v1/meaning"
	"github.com/conform-suite/conform/reports/evidence"
	"google.golang.org/protobuf/proto"
)

// Judge compares got, the SUT's answer to in (the op's input entry it
// answers), with want, the answer the case expects, through the one
// declaration of what every conform.v1 field means (package meaning): a
// field the documents leave open, or that in leaves undefined, is never
// compared, and a field with a form compares in it. It returns the
// differences at level in the fields under paths (JSON paths without list
// positions, such as "end" or "yields.frames"; none means the whole
// answer; a path may be written "-field" to leave that field out: "events",
// "-events.frameJson" judges the events but what a delivered frame decoded
// to). The TLV depth the SUT's Hello declares bounds what a TLV decode
// is judged on.
//
// A case judges at its own level: a MUST case the MUST differences of the
// fields its requirement is about, a SHOULD case the SHOULD ones.
func (t *T) Judge(in, want, got proto.Message, level meaning.Level, paths ...string) meaning.Differences {
	return t.JudgeWith(t.meaningOptions(), in, want, got, level, paths...)
}

// JudgeWith is Judge with the comparison's options given. A case whose
// expected answer is built for the SUT's own declared bounds (a TLV nested
// exactly as deep as its Hello declares) compares with the zero Options:
// the declaration weighs a declared bound against the reference's only for
// an answer built by the reference's.
func (t *T) JudgeWith(opts meaning.Options, in, want, got proto.Message, level meaning.Level, paths ...string) meaning.Differences {
	if proto.Equal(want, got) {
		// Answers equal in every field differ in none the declaration
		// judges; most answers a case reads are, and the declaration's
		// walk copies both.
		return nil
	}
	ds := meaning.Diff(in, want, got, opts).At(level)
	var keep, drop []string
	for _, p := range paths {
		if q, ok := strings.CutPrefix(p, "-"); ok {
			drop = append(drop, q)
		} else {
			keep = append(keep, p)
		}
	}
	if len(keep) > 0 {
		ds = ds.Under(keep...)
	}
	if len(drop) > 0 {
		ds = ds.Without(drop...)
	}
	return ds
}

// FailAnswer records a broken requirement whose evidence is the answer got
// against the answer want, with the differences Judge found, and input as
// the case writes what it sent (hex with read boundaries, a script).
func (t *T) FailAnswer(what, input string, want, got proto.Message, ds meaning.Differences) {
	e := evidence.Judged(what, want, got, ds)
	e.Input = input
	t.Fail(e)
}

// CheckAnswer judges got against want as Judge does and records a failure
// with its evidence when they differ; it reports whether they agree.
func (t *T) CheckAnswer(what, input string, in, want, got proto.Message, level meaning.Level, paths ...string) bool {
	ds := t.Judge(in, want, got, level, paths...)
	if len(ds) == 0 {
		return true
	}
	t.FailAnswer(what, input, want, got, ds)
	return false
}

// FailCompare records a broken requirement that compared two values that
// are not conform.v1 answers (a transcript a case read off a socket, bytes
// it rebuilt): evidence.Compare names every differing field, bytes as hex
// with the offset of the first difference. It reports whether want and got
// agree.
func (t *T) FailCompare(what, input string, want, got any) bool {
	e, differ := evidence.Compare(what, want, got)
	if !differ {
		return true
	}
	e.Input = input
	t.Fail(e)
	return false
}

func (t *T) meaningOptions() meaning.Options {
	var depth uint32
	if h := t.hello; h != nil {
		depth = h.GetBounds().GetTlvMaxDepth()
	}
	return meaning.Options{TLVDepth: int(min(depth, 1<<20))}
}
