// Package allocs measures how many bytes a piece of code allocates, cheaply
// enough to run on every execution of a fuzz target.
//
// runtime.ReadMemStats stops the world; called around every execution it
// cost the frame reader's target four fifths of its speed. runtime/metrics
// reads the same cumulative count without stopping anything. Small
// allocations are counted when their span is taken, so the figure is exact
// to a few KiB: the bounds the targets check are in MiB.
package allocs

import "runtime/metrics"

const name = "/gc/heap/allocs:bytes"

// During returns the bytes allocated on the heap, by any goroutine, while f
// ran.
func During(f func()) uint64 {
	s := []metrics.Sample{{Name: name}}
	metrics.Read(s)
	before := s[0].Value.Uint64()
	f()
	metrics.Read(s)
	return s[0].Value.Uint64() - before
}
