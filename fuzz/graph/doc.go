// Package fuzzgraph holds the native Go fuzz target for the graph reference
// (ref/graph): arbitrary operation scripts decoded from the fuzz input, run
// against the reference with the graph model's invariants checked after every
// operation. Run it with
//
//	go test ./fuzz/graph -run '^$' -fuzz FuzzScript -fuzztime 60s
package fuzzgraph
