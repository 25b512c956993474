// Package mutant holds conform's mutants: the reference with one named bug
// each, drawn from a failure mode the specification names. The suite proves
// its power by catching every one of them with at least one MUST case;
// builtin:mutant/<name> runs one.
package mutant

import (
	"fmt"
	"slices"
	"strings"

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

// New returns a mutant of a suite conform does not build in: apply breaks
// one part (or wraps one op handler) of a fresh reference.
func New(name, suite, profile, bug string, apply func(*impl.Impl)) Mutant {
	return Mutant{Name: name, Suite: suite, Profile: profile, Bug: bug, apply: apply}
}

// Check reports what a mutant lacks: a slug name, a suite, a bug and the
// change that makes it.
func (m Mutant) Check() error {
	if m.Name == "" || strings.ContainsAny(m.Name, " /") || m.Suite == "" || m.Bug == "" || m.apply == nil {
		return fmt.Errorf("mutant %q: a slug name, a suite, a bug and a change are required", m.Name)
	}
	return nil
}

// Apply gives ref, a fresh reference implementation, the mutant's one bug,
// and returns it.
func (m Mutant) Apply(ref *impl.Impl) *impl.Impl {
	ref.Name = "conform mutant " + m.Name
	m.apply(ref)
	return ref
}

// The mutants of each suite conform builds in, for the suites' descriptors.

// Wire returns the wire suite's mutants.
func Wire() []Mutant { return wireMutants }

// Streams returns the streams suite's mutants.
func Streams() []Mutant { return streamsMutants }

// TLV returns the tlv suite's mutants.
func TLV() []Mutant { return tlvMutants }

// Doppler returns the doppler suite's mutants.
func Doppler() []Mutant { return dopplerMutants }

// Live returns the live suite's mutants, data plane and control plane.
func Live() []Mutant { return append(slices.Clone(liveMutants), controlMutants...) }

// Graph returns the graph suite's mutants.
func Graph() []Mutant { return graphMutants }
