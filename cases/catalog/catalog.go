// Package catalog assembles every suite's cases into the one catalogue that
// conform run, list and explain use, and keeps the list of retired IDs.
package catalog

import (
	"fmt"

	"github.com/conform-suite/conform/cases"
	"github.com/conform-suite/conform/cases/wire"
	"github.com/conform-suite/conform/corpus"
)

// Catalogue is every case conform has, with the corpus they use.
type Catalogue struct {
	Cases []cases.Case
	// Corpus names the vector sets and their digests, for the record.
	Corpus string
	Wire   *corpus.Set
}

// Load builds the catalogue. An error means conform itself is broken (a
// malformed vector, a duplicated ID); the catalogue tests catch it first.
func Load() (*Catalogue, error) {
	ws, err := corpus.Wire()
	if err != nil {
		return nil, err
	}
	all := wire.Catalogue(ws)
	if err := cases.Check(all); err != nil {
		return nil, err
	}
	return &Catalogue{
		Cases:  cases.Sorted(all),
		Corpus: fmt.Sprintf("%s sha256:%s", corpus.WireVersion, ws.Digest()),
		Wire:   ws,
	}, nil
}

// Lookup returns the case with the given ID.
func (c *Catalogue) Lookup(id string) (cases.Case, bool) {
	for _, k := range c.Cases {
		if k.ID == id {
			return k, true
		}
	}
	return cases.Case{}, false
}

// Retired lists case IDs that existed in a release and were withdrawn, with
// the reason. A retired ID is never reused.
var Retired = map[string]string{}
