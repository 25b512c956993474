// Package mutant holds conform's mutants: the reference with one named bug
// each, drawn from a failure mode the specification names. The suite proves
// its power by catching every one of them with at least one MUST case;
// builtin:mutant/<name> runs one.
package mutant

import (
	"sort"

	"github.com/conform-suite/conform/sut/impl"
)

// A Mutant is the reference with one bug.
type Mutant struct {
	// Name is a slug, as in builtin:mutant/<name>.
	Name string
	// Suite is the case-ID prefix of the suite whose cases should catch it.
	Suite string
	// Profile, when set, is the one profile of the suite whose cases catch
	// the mutant; a run that only needs to catch it (the mutation table)
	// runs that profile alone. The live suite's profiles take seconds each.
	Profile string
	// Bug says what is wrong, in one line.
	Bug string
	// apply breaks one part of a fresh reference.
	apply func(*impl.Impl)
}

// Impl returns the mutant's implementation.
func (m Mutant) Impl() *impl.Impl {
	im := impl.Reference()
	im.Name = "conform mutant " + m.Name
	m.apply(im)
	return im
}

// All returns every mutant, sorted by suite and name.
func All() []Mutant {
	var all []Mutant
	for _, suite := range [][]Mutant{wireMutants, streamsMutants, tlvMutants, dopplerMutants, liveMutants, controlMutants, graphMutants} {
		all = append(all, suite...)
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].Suite != all[j].Suite {
			return all[i].Suite < all[j].Suite
		}
		return all[i].Name < all[j].Name
	})
	return all
}

// Lookup returns the mutant named name.
func Lookup(name string) (Mutant, bool) {
	for _, m := range All() {
		if m.Name == name {
			return m, true
		}
	}
	return Mutant{}, false
}
