// Package dopplerfuzz holds the native Go fuzz targets for the doppler
// reference codec (ref/doppler): the receiver's header check and
// reassembly. Each target checks properties, not only the absence of a
// panic: no header whose claims exceed its message is accepted, the check
// agrees with a model built on big integers and reads only the header, and
// reassembly holds memory in proportion to what arrived.
//
// Run one with, for example:
//
//	go test ./fuzz/doppler -run '^$' -fuzz FuzzCheck -fuzztime 2000000x
//
// A count rather than a duration for -fuzztime sidesteps a race in Go 1.26's
// fuzzing coordinator (go.dev/issue/75804) that can fail a duration-bounded
// run with "context deadline exceeded" and no failing input.
package dopplerfuzz
