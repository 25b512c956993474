// Package graph holds the libtracer graph-model cases (suite and profile
// "graph").
package graph

import "github.com/conform-suite/conform/cases"

// Catalogue returns the graph cases.
func Catalogue() []cases.Case { return nil }
