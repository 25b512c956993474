package campaign

import "testing"

// FuzzTrivial does nothing with its input: it is the yardstick the native
// fuzz targets' execs/s are compared with (docs/fuzzing.md).
func FuzzTrivial(f *testing.F) {
	f.Add([]byte{0})
	f.Fuzz(func(t *testing.T, b []byte) {})
}
