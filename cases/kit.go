package cases

import (
	"fmt"
	"slices"

	"github.com/conform-suite/conform/corpus"
	"github.com/conform-suite/conform/reports"
)

// Reconstructed is the tag of a case whose verdict rests on a pin this project
// chose where the documents are silent (the requirements index's entries of
// kind reconstructed), rather than on a source document's own words.
const Reconstructed = "reconstructed"

// A Kit defines the cases of one suite. Its level constructors are the one
// idiom every catalogue writes a case in: a definition function fetches the
// corpus vectors the case uses and returns the case, and the vectors it
// fetched become the case's Vectors. A case therefore names each vector once,
// where it uses it, and "every vector is used by a case" holds by
// construction:
//
//	k.Must(func() cases.Case {
//		empty := vecs.Get("frame-empty")
//		return cases.Case{
//			ID:    "wire/1.2/writer-zero-length",
//			Title: "A writer frames an empty payload as the four bytes 00 00 00 00",
//			Spec:  "ranvier-wire §1.2",
//			Run: func(t *cases.T) { … empty.Input … },
//		}
//	})
//
// A definition runs once, when the catalogue is built; a vector must be
// fetched there, not inside Run (Vectors.Get panics when called outside a
// definition, so a case cannot use a vector it does not declare).
type Kit struct {
	profile  string
	defining bool
	fetched  []string
}

// NewKit returns a kit whose cases belong to profile unless their definition
// names another.
func NewKit(profile string) *Kit { return &Kit{profile: profile} }

// Must defines a case enforcing a MUST or MUST NOT: a broken check fails it.
func (k *Kit) Must(def func() Case) Case { return k.define(reports.MUST, def) }

// Should defines a case enforcing a SHOULD or SHOULD NOT: a broken check
// warns (fails under --strict).
func (k *Kit) Should(def func() Case) Case { return k.define(reports.SHOULD, def) }

// May defines a case recording what an implementation does with a MAY: it
// is never judged, and it says in a note what it saw.
func (k *Kit) May(def func() Case) Case { return k.define(reports.MAY, def) }

// Info defines a case recording behaviour the documents leave open: never
// judged; it says in a note what it saw.
func (k *Kit) Info(def func() Case) Case { return k.define(reports.INFO, def) }

func (k *Kit) define(level reports.Level, def func() Case) Case {
	if k.defining {
		panic("cases: a case definition defines another case")
	}
	k.defining, k.fetched = true, nil
	c := def()
	k.defining = false
	if c.Level != "" && c.Level != level {
		panic(fmt.Sprintf("cases: %s: defined as %s but its literal says %s", c.ID, level, c.Level))
	}
	c.Level = level
	if c.Profile == "" {
		c.Profile = k.profile
	}
	if len(c.Vectors) > 0 {
		panic(fmt.Sprintf("cases: %s: Vectors are derived from what the definition fetches; do not list them", c.ID))
	}
	slices.Sort(k.fetched)
	c.Vectors = slices.Compact(k.fetched)
	k.fetched = nil
	return c
}

// fetch records that the case being defined uses the vector id.
func (k *Kit) fetch(id string) {
	if !k.defining {
		panic(fmt.Sprintf("cases: vector %s fetched outside a case definition: fetch it in the definition, not in Run", id))
	}
	k.fetched = append(k.fetched, id)
}

// Vectors is a suite's corpus as its case definitions fetch from it: every
// vector fetched while a case is being defined is recorded as one that case
// uses.
type Vectors[V corpus.Identified] struct {
	kit *Kit
	set *corpus.Set[V]
}

// UseVectors returns set's vectors as k's case definitions fetch them.
func UseVectors[V corpus.Identified](k *Kit, set *corpus.Set[V]) *Vectors[V] {
	return &Vectors[V]{kit: k, set: set}
}

// Get returns the vector with the short name (its ID without the set's
// version, such as "frame-empty") and records its use. A name that does not
// exist is a conform bug, and panics when the catalogue is built.
func (vs *Vectors[V]) Get(name string) V {
	v := vs.set.Get(vs.set.Version() + "/" + name)
	vs.kit.fetch(v.VectorID())
	return v
}

// List returns the vectors with the short names, in order, and records
// their use.
func (vs *Vectors[V]) List(names ...string) []V {
	out := make([]V, len(names))
	for i, n := range names {
		out[i] = vs.Get(n)
	}
	return out
}

// Where returns every vector keep accepts, sorted by ID, and records their
// use.
func (vs *Vectors[V]) Where(keep func(V) bool) []V {
	var out []V
	for _, v := range vs.set.All() {
		if keep(v) {
			vs.kit.fetch(v.VectorID())
			out = append(out, v)
		}
	}
	return out
}
