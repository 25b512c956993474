//go:build !unix

package lib

// redirectStdio does nothing where descriptors cannot be duplicated onto
// others: a library's output to stdout still cannot reach the framing,
// which travels on the private descriptors.
func redirectStdio() error { return nil }
