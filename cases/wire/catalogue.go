// Package wire is the catalogue of the wire suite: the Ranvier wire format
// (the document ranvier-wire) at codec level — framing, limits, the
// messages and how they decode, and what a subscriber does with each frame.
package wire

import (
	"math/rand/v2"

	"github.com/conform-suite/conform/cases"
	"github.com/conform-suite/conform/corpus"
)

// Profile is the profile of every wire case.
const Profile = "wire"

// vectors are the wire corpus as the case definitions fetch from it.
type vectors = cases.Vectors[*corpus.Vector]

// Catalogue returns the wire cases, sorted by ID. The vectors come from set.
func Catalogue(set *corpus.Set[*corpus.Vector]) []cases.Case {
	k := cases.NewKit(Profile)
	vecs := cases.UseVectors(k, set)
	var all []cases.Case
	for _, group := range []func(*cases.Kit, *vectors) []cases.Case{framing, limits, messages, controlMessages, errorHandling, versioning} {
		all = append(all, group(k, vecs)...)
	}
	return cases.Sorted(all)
}

// streamVectors are the vectors whose input is a well-formed sequence of
// complete frames: any chunking of them must yield the same frames.
var streamVectors = []string{
	"frame-sample", "request-gaze", "frame-empty", "alive-default", "alive-seven",
	"three-frames", "zero-length-then-frame", "undecodable-then-sample",
	"truncated-mid-field", "unknown-variant", "frame-unknown-fields",
	"streaminfo-all-fields", "sample-fixed64-little-endian", "register", "bind",
}

// verdictVectors end in a reader verdict other than idle.
var verdictVectors = []string{
	"prefix-at-ceiling", "prefix-above-ceiling", "prefix-max-u32",
	"short-prefix", "partial-payload", "too-large-then-valid", "valid-then-too-large",
}

// splits returns b cut at every point into two chunks.
func splits(b []byte) [][][]byte {
	var out [][][]byte
	for i := 0; i <= len(b); i++ {
		out = append(out, [][]byte{b[:i], b[i:]})
	}
	return out
}

// bytewise returns b as one chunk per byte.
func bytewise(b []byte) [][]byte {
	out := make([][]byte, len(b))
	for i := range b {
		out[i] = b[i : i+1]
	}
	return out
}

// randomChunks cuts b at random points, with chunk sizes spread over
// several orders of magnitude so that prefixes and payloads both split.
func randomChunks(r *rand.Rand, b []byte) [][]byte {
	var out [][]byte
	for len(b) > 0 {
		n := 1 + r.IntN(min(len(b), 1<<r.IntN(8)))
		out = append(out, b[:n])
		b = b[n:]
	}
	return out
}
