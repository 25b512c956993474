package corpus_test

import (
	"testing"

	"github.com/conform-suite/conform/corpus"
)

func TestFormatHex(t *testing.T) {
	for _, tc := range []struct {
		in   []byte
		want string
	}{
		{nil, ""},
		{[]byte{0}, "00"},
		{[]byte{0x0f, 0xf0, 0xab}, "0f f0 ab"},
		{[]byte{0, 0, 0, 0x12, 0xff}, "00 00 00 12 ff"},
	} {
		if got := corpus.FormatHex(tc.in); got != tc.want {
			t.Errorf("FormatHex(% x) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
