// Package fuzzwire holds the native Go fuzz targets for conform's reference
// Ranvier wire implementation (ref/wire). Each target checks properties
// rather than only the absence of a panic:
//
//   - FuzzReader: any chunking of any input yields the frames, terminal
//     error and buffered count that feeding the whole input at once does,
//     and both agree with a direct model of ranvier-wire §1.3 and §2; a
//     prefix is never believed enough to allocate for it.
//   - FuzzDecode: every Ranvier message type decodes any payload without
//     panicking, and an accepted message re-encodes to bytes that decode to
//     an equal message (ranvier-wire §7).
//
// Both are seeded from every golden vector of corpus/wire/v1 and, when it is
// present, from a few folders of the go-fuzz corpus (see package seeds).
// Run one with, for example:
//
//	go test ./fuzz/wire -run '^$' -fuzz FuzzReader -fuzztime 1m
package fuzzwire
