package suites_test

import (
	"testing"

	"github.com/conform-suite/conform/suites"
)

// BenchmarkCatalogue measures loading the whole catalogue, which every
// conform process that runs, lists or explains a case pays once.
func BenchmarkCatalogue(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := suites.Default().Catalogue(); err != nil {
			b.Fatal(err)
		}
	}
}
