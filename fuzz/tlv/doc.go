// Package tlvfuzz holds the native Go fuzz targets for the TLV reference
// (ref/tlv): the decoder over any rope, path canonicalization and validation,
// and the forward hop. Each target checks a property, not just the absence of a
// panic. Run one with, for example,
//
//	go test ./fuzz/tlv -run '^$' -fuzz FuzzDecode -fuzztime 60s
package tlvfuzz
