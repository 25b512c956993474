package allocs

import "testing"

var sink []byte

// TestDuring: a large allocation is counted, and nothing is counted for
// code that allocates nothing (within a span's worth of slack).
func TestDuring(t *testing.T) {
	for _, tc := range []struct {
		name     string
		f        func()
		min, max uint64
	}{
		{"16 MiB", func() { sink = make([]byte, 16<<20) }, 16 << 20, 17 << 20},
		{"nothing", func() {}, 0, 64 << 10},
	} {
		if n := During(tc.f); n < tc.min || n > tc.max {
			t.Errorf("%s: During = %d, want within [%d, %d]", tc.name, n, tc.min, tc.max)
		}
	}
}
