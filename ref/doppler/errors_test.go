package doppler

import (
	"errors"
	"strings"
	"testing"
)

func asError(err error, target **Error) bool { return errors.As(err, target) }

// TestCodes pins the numbers the doppler pins (docs/requirements.md) gives (−5 and −7 from doppler
// §8 and §4) and their C names.
func TestCodes(t *testing.T) {
	for _, tc := range []struct {
		code Code
		n    int
		name string
	}{
		{OK, 0, "DP_OK"}, {ErrGeneric, -1, "DP_ERR"}, {ErrInvalid, -2, "DP_ERR_INVALID"},
		{ErrNoMem, -3, "DP_ERR_NOMEM"}, {ErrClosed, -4, "DP_ERR_CLOSED"},
		{ErrTimeout, -5, "DP_ERR_TIMEOUT"}, {ErrInterrupted, -6, "DP_ERR_INTERRUPTED"},
		{ErrTooLarge, -7, "DP_ERR_TOO_LARGE"},
	} {
		if int(tc.code) != tc.n || tc.code.Error() != tc.name {
			t.Errorf("%s = %d (%q), want %d", tc.name, int(tc.code), tc.code.Error(), tc.n)
		}
	}
	if got := Code(-42).Error(); got != "DP_ERR(-42)" {
		t.Errorf("unknown code prints %q", got)
	}
}

func TestErrorCarriesContext(t *testing.T) {
	err := error(&Error{Code: ErrInvalid, Op: "reassemble", Verdict: CrossEndian, Sequence: 9, HasSequence: true, Detail: "why"})
	if !errors.Is(err, ErrInvalid) || errors.Is(err, ErrTooLarge) {
		t.Errorf("errors.Is does not follow the code")
	}
	msg := err.Error()
	for _, want := range []string{"reassemble", "DP_ERR_INVALID", "cross-endian", "frame 9", "why"} {
		if !strings.Contains(msg, want) {
			t.Errorf("%q lacks %q", msg, want)
		}
	}
}
