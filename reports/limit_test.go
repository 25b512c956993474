package reports

import (
	"strings"
	"testing"
)

// TestClipping: a head keeps its start and a tail its end, each cut on a
// rune boundary and marked with what was dropped; a tail that already
// carries a count (a stderr ring's) adds to it; Visible escapes what could
// act on a terminal and keeps lines.
func TestClipping(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"ok", "ok"},
		{"aé", "a…[2 bytes dropped]"},
		{"abcdef", "ab…[4 bytes dropped]"},
	} {
		if got := Clip(tt.in, 2); got != tt.want {
			t.Errorf("Clip(%q, 2) = %q, want %q", tt.in, got, tt.want)
		}
	}
	for _, tt := range []struct{ in, want string }{
		{"plain\nlines", "plain\nlines"},
		{"[10 bytes dropped]\n0123456789abcdef", "[14 bytes dropped]…456789abcdef"},
		{"[10 bytes dropped]…0123456789abcdef", "[14 bytes dropped]…456789abcdef"},
		{"[10 bytes dropped]\nshort", "[10 bytes dropped]…short"},
		{strings.Repeat("z", 20), "[8 bytes dropped]…zzzzzzzzzzzz"},
		{"é" + strings.Repeat("z", 11), "[2 bytes dropped]…zzzzzzzzzzz"},
	} {
		if got := ClipTail(tt.in, 12); got != tt.want {
			t.Errorf("ClipTail(%q, 12) = %q, want %q", tt.in, got, tt.want)
		}
	}
	for _, tt := range []struct{ in, want string }{
		{"\x1b[31mred\u202e\xff\n", `\x1b[31mred\u{202e}\xff` + "\n"},
		{"tab\tok", "tab\tok"},
		{"\u009b2J", `\u{009b}2J`}, {"\x9b", `\x9b`},
	} {
		if got := Visible(tt.in); got != tt.want {
			t.Errorf("Visible(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if got := Printable("PASS\nFAIL"); got != `PASS\nFAIL` {
		t.Errorf("Printable kept a newline: %q", got)
	}
}
