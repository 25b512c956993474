// Package suites is the list of suites this conform binary carries, and the
// descriptors of the suites conform builds in. Adding a suite means writing
// its own packages and one line in All.
package suites

import (
	"fmt"

	"github.com/conform-suite/conform/suite"
)

// All returns the descriptors of the suites conform builds in, in the order
// conform lists them.
func All() []*suite.Suite {
	return []*suite.Suite{
		Wire(),
		Streams(),
		TLV(),
		Graph(),
		Doppler(),
		Live(),
	}
}

// Default returns the registry of the suites conform builds in.
func Default() *suite.Registry {
	r, err := suite.NewRegistry(All()...)
	if err != nil {
		// The built-in descriptors are fixed at compile time; a registry
		// they cannot form is a conform bug the tests catch first.
		panic(fmt.Sprintf("suites: %v", err))
	}
	return r
}
