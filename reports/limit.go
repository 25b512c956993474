package reports

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The bounds on what a record keeps of what a SUT sent. A SUT is untrusted:
// it may answer every request with a 15 MiB error message, log without end
// or fill its answers with terminal escapes. The record keeps a bounded head
// (or, for a standard error, tail) of each such text, marked with how much
// was dropped, so that neither conform's memory nor the record nor a
// terminal grows with what the SUT sends.
const (
	// MaxMessage bounds a case's message, each note and each evidence
	// message.
	MaxMessage = 4 << 10
	// MaxField bounds each evidence field: input, expected, got, diff.
	MaxField = 8 << 10
	// MaxStderr bounds a kept tail of a SUT's standard error.
	MaxStderr = 4 << 10
	// MaxEvidence bounds a case's evidence entries, and MaxNotes its notes;
	// the last kept entry says how many were dropped.
	MaxEvidence = 32
	MaxNotes    = 32
	// MaxCaseText bounds the sum of a case's notes and evidence; the
	// entries past it are dropped, and the last kept says how many.
	MaxCaseText = 64 << 10
)

// Clip returns s cut to at most n bytes on a rune boundary, followed by
// "…[N bytes dropped]" when anything was cut.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := max(n, 0)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("…[%d bytes dropped]", len(s)-cut)
}

// ClipTail returns the last n bytes of s, starting on a rune boundary,
// preceded by "[N bytes dropped]…" when anything was cut: for a standard
// error, whose end says most. A tail that already begins with such a count
// (a process's stderr ring writes one, ending in a newline or "…") has it
// added to, so the count says what the whole text lost.
func ClipTail(s string, n int) string {
	var before int
	if rest, ok := strings.CutPrefix(s, "["); ok {
		if k, tail, ok := strings.Cut(rest, " bytes dropped]"); ok {
			if v, err := strconv.Atoi(k); err == nil && v > 0 {
				if t, ok := strings.CutPrefix(tail, "\n"); ok {
					before, s = v, t
				} else if t, ok := strings.CutPrefix(tail, "…"); ok {
					before, s = v, t
				}
			}
		}
	}
	if len(s) > n {
		start := len(s) - max(n, 0)
		for start < len(s) && !utf8.RuneStart(s[start]) {
			start++
		}
		before += start
		s = s[start:]
	}
	if before == 0 {
		return s
	}
	return fmt.Sprintf("[%d bytes dropped]…", before) + s
}

// Bound caps every text of c that may carry what a SUT sent — its message,
// notes and evidence — to the limits above. The runner bounds each case as
// it ends; a case's own evidence is bounded the same way whatever it
// holds.
func (c *CaseResult) Bound() {
	c.Message = Clip(c.Message, MaxMessage)
	if len(c.Notes) > MaxNotes {
		n := len(c.Notes) - MaxNotes + 1
		c.Notes = append(c.Notes[:MaxNotes-1:MaxNotes-1], fmt.Sprintf("[%d more notes dropped]", n))
	}
	for i := range c.Notes {
		c.Notes[i] = Clip(c.Notes[i], MaxMessage)
	}
	if len(c.Evidence) > MaxEvidence {
		n := len(c.Evidence) - MaxEvidence + 1
		c.Evidence = append(c.Evidence[:MaxEvidence-1:MaxEvidence-1], Evidence{Message: fmt.Sprintf("[%d more evidence entries dropped]", n)})
	}
	total := len(c.Message)
	for i := range c.Notes {
		total += len(c.Notes[i])
		if total > MaxCaseText {
			c.Notes = append(c.Notes[:i:i], fmt.Sprintf("[%d more notes dropped]", len(c.Notes)-i))
			break
		}
	}
	for i := range c.Evidence {
		c.Evidence[i].Bound()
		e := c.Evidence[i]
		total += len(e.Message) + len(e.Input) + len(e.Expected) + len(e.Got) + len(e.Diff) + len(e.Stderr)
		if total > MaxCaseText && i > 0 {
			c.Evidence = append(c.Evidence[:i:i], Evidence{Message: fmt.Sprintf("[%d more evidence entries dropped]", len(c.Evidence)-i)})
			break
		}
	}
}

// Bound caps each field of e to the limits above.
func (e *Evidence) Bound() {
	e.Message = Clip(e.Message, MaxMessage)
	e.Input = Clip(e.Input, MaxField)
	e.Expected = Clip(e.Expected, MaxField)
	e.Got = Clip(e.Got, MaxField)
	e.Diff = Clip(e.Diff, MaxField)
	e.Stderr = ClipTail(e.Stderr, MaxStderr)
}

// Bound caps each text of f to the limits above.
func (f *SUTFailure) Bound() {
	f.Message = Clip(f.Message, MaxMessage)
	f.Exit = Clip(f.Exit, 256)
	f.Stderr = ClipTail(f.Stderr, MaxStderr)
}

// unsafeRune reports whether r must not reach a terminal or a page raw:
// C0 and C1 control characters but tab and newline (ESC starts the
// sequences that clear a screen or move the cursor; CR rewrites a line;
// U+009B is an 8-bit CSI), DEL, and the Unicode controls that reorder or
// hide text (bidirectional overrides and isolates, line and paragraph
// separators).
func unsafeRune(r rune) bool {
	switch {
	case r < 0x20:
		return r != '\t' && r != '\n'
	case r >= 0x7f && r <= 0x9f:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x2028, r == 0x2029, r == 0x200e, r == 0x200f, r == 0x061c:
		return true
	}
	return false
}

// Visible makes unsafe characters (see unsafeRune) and invalid UTF-8 in s
// visible as escapes — \xNN for a byte, \u{NNNN} for a rune — keeping tabs
// and newlines: a SUT's output may hold terminal escapes, which no
// rendering may carry raw.
func Visible(s string) string {
	clean := true
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if unsafeRune(r) || r == utf8.RuneError && n == 1 {
			clean = false
			break
		}
		i += n
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1, unsafeRune(r) && r < 0x80:
			fmt.Fprintf(&b, "\\x%02x", s[i])
		case unsafeRune(r):
			fmt.Fprintf(&b, "\\u{%04x}", r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// visibleLine is visible with newlines escaped too, for text that must stay
// on one line: a message a SUT could otherwise use to start a line of its
// own, such as a forged "PASS".
func visibleLine(s string) string {
	return strings.ReplaceAll(Visible(s), "\n", `\n`)
}

// Printable returns s fit for one line of a terminal: its control
// characters, escape sequences and newlines made visible, so that text a
// SUT wrote can neither rewrite the screen nor start a line of its own.
func Printable(s string) string { return visibleLine(s) }
