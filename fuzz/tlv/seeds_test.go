package tlvfuzz

import (
	"testing"

	"github.com/conform-suite/conform/ref/tlv"
)

// The seeds are what they claim: every one is a frame the reference accepts, so
// the fuzzer starts from valid inputs and mutates outward.
func TestSeedsDecode(t *testing.T) {
	for _, s := range seeds {
		if _, err := tlv.Decode(tlv.NewRope(unhex(s))); err != nil {
			t.Errorf("seed %s: %v", s, err)
		}
	}
}
