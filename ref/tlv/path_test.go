package tlv_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/conform-suite/conform/ref/tlv"
)

// Canonicalization from the string form (reconstructed§tlv-path; graph
// model §Dispatch keyed on canonical PATH TLV bytes: two strings naming one
// vertex give byte-identical payloads).
func TestCanonicalPath(t *testing.T) {
	tests := []struct {
		in, ref string
		want    []byte
	}{
		{"/alpha", "pinned vector", hx(`05 "alpha"`)},
		{"/sensor/temp", "pinned vector", hx(`06 "sensor" 04 "temp"`)},
		{"sensor/temp", "a leading / is optional", hx(`06 "sensor" 04 "temp"`)},
		{"/sensor/temp/", "a trailing / is dropped", hx(`06 "sensor" 04 "temp"`)},
		{"//sensor///temp//", "empty segments are dropped", hx(`06 "sensor" 04 "temp"`)},
		{"/", "the root is the empty payload", nil},
		{"", "the root is the empty payload", nil},
		{"///", "the root is the empty payload", nil},
		{"/a:schema", "a selector is the caller's to split; ':' is text", hx(`08 "a:schema"`)},
		{"/...", "only . and .. are refused", hx(`03 "..."`)},
		{"/café", "UTF-8 segments", hx(`05 "café"`)},
		{"/" + strings.Repeat("x", 255), "255 bytes fit the length byte", append([]byte{255}, strings.Repeat("x", 255)...)},
	}
	for _, tt := range tests {
		got, err := tlv.CanonicalPath(tt.in)
		if err != nil || !bytes.Equal(got, tt.want) {
			t.Errorf("%s: CanonicalPath(%q) = % x, %v; want % x", tt.ref, tt.in, got, err, tt.want)
		}
	}
	n, err := tlv.PathNode("/alpha")
	if err != nil || !bytes.Equal(n.Bytes(), hx(`06 00 06 00 05 "alpha"`)) {
		t.Fatalf("PathNode(/alpha) = %v, %v", n, err)
	}
}

func TestCanonicalPathInvalid(t *testing.T) {
	for _, in := range []string{
		"/a/./b", "/a/../b", ".", "..", "/a/..",
		"/" + strings.Repeat("x", 256),
		"/a\x00b",
		"/a/\xff",
		"/\xc3",
	} {
		_, err := tlv.CanonicalPath(in)
		wantStatus(t, err, tlv.StatusPathInvalid)
		dst := []byte("keep")
		out, err := tlv.AppendCanonicalPath(dst, in)
		if err == nil || !bytes.Equal(out, dst) {
			t.Errorf("AppendCanonicalPath(%q) = %q, %v", in, out, err)
		}
	}
}

// Validation of a received PATH payload (reconstructed§tlv-path): a
// record of length 0, containing 0x2F, not UTF-8, or running past the end is
// invalid — whatever the rope, since a record's length byte may sit in one
// segment and its text in the next (graph model §The two compositions).
func TestValidatePath(t *testing.T) {
	tests := []struct {
		in     []byte
		offset int64 // -1: valid
	}{
		{nil, -1},
		{hx(`05 "alpha"`), -1},
		{hx(`06 "sensor" 04 "temp"`), -1},
		{hx(`01 "."`), -1}, // the received rules do not refuse "." (see the package's notes)
		{hx(`00`), 0},
		{hx(`01 "a" 00`), 2},
		{hx(`03 "a/b"`), 0},
		{hx(`02 "a" ff`), 0},
		{hx(`05 "alph"`), 0},
		{hx(`01 "a" 02 "b"`), 2},
	}
	for _, tt := range tests {
		for name, r := range ropes(tt.in) {
			err := tlv.ValidatePath(r)
			if tt.offset < 0 {
				if err != nil {
					t.Fatalf("% x (%s): %v", tt.in, name, err)
				}
				continue
			}
			de, ok := err.(*tlv.DecodeError)
			if !ok || de.Status != tlv.StatusPathInvalid || de.Offset != tt.offset {
				t.Fatalf("% x (%s): %v, want path invalid at %d", tt.in, name, err, tt.offset)
			}
		}
	}
}

func TestPathStringRoundTrip(t *testing.T) {
	for _, in := range []string{"/", "/alpha", "/sensor/temp", "/a/b/c/d/e/f"} {
		p, err := tlv.CanonicalPath(in)
		if err != nil {
			t.Fatal(err)
		}
		s, err := tlv.PathString(bytewise(p))
		if err != nil || s != in {
			t.Fatalf("PathString = %q, %v; want %q", s, err, in)
		}
	}
}

// Canonicalizing a path allocates nothing beyond the result (issue 5, Performance).
func TestCanonicalPathAllocs(t *testing.T) {
	const six = "/net/can/can0/esp/wheel/left"
	buf := make([]byte, 0, 64)
	if a := testing.AllocsPerRun(100, func() { _, _ = tlv.AppendCanonicalPath(buf[:0], six) }); a != 0 {
		t.Errorf("AppendCanonicalPath: %v allocations", a)
	}
	if a := testing.AllocsPerRun(100, func() { _, _ = tlv.CanonicalPath(six) }); a != 1 {
		t.Errorf("CanonicalPath: %v allocations, want 1 (the result)", a)
	}
	r := bytewise(hx(`03 "net" 03 "can" 04 "can0"`))
	if a := testing.AllocsPerRun(100, func() { _ = tlv.ValidatePath(r) }); a != 0 {
		t.Errorf("ValidatePath: %v allocations", a)
	}
}
